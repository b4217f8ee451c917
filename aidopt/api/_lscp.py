r"""The LSCP variants of :func:`aidopt.api.facility.solve_facility_location` (docs/facility.md):
the capacitated LSCP (``model="lscp"`` with ``capacity``) and LSCP-B, backup coverage
(``model="lscp-b"``). Both reuse the covering plug-in
(:class:`aidopt.decomposition.plugins.covering.CoveringProblem`) and its model
(:mod:`aidopt.models.covering`); this module checks their inputs and aggregates their rows.

* **Capacitated LSCP** (Current & Storbeck 1988; PySAL spopt's CLSCP-SO): site j serves at most
  :math:`Q_j`, point i's demand :math:`a_i` is split among the open sites of :math:`N_i`. Points
  with equal coverage sets merge into one row with their summed demand (exact *because* demand
  may be split: a row's shares, given to each of its points, load every site as the row does).
  Dominated rows are **not** dropped (a contained row still needs capacity) and points covered
  by a forced site stay (they still load it). Points of demand 0 impose nothing (as in spopt's
  formulation, where ``a_i z_ij <= Q_j y_j`` does not bind them) and are left out.
* **Single-sourcing capacitated LSCP** (``single_source=True``): each point is served wholly by
  one open site of :math:`N_i`. A site whose capacity is below a point's demand can never serve
  it, so that pair is left out first (a point left with no site is refused, named). Points with
  equal remaining sets merge only when their demand is equal too: a row is then a *class* of
  :math:`c_r` interchangeable points, and the model counts how many of them each site serves
  (an integer; exact, docs/facility.md). The certificate reads every point's site.
* **LSCP-B** (Hogan & ReVelle 1986; spopt's ``LSCPB``): first the LSCP's least number of sites
  :math:`p^*` (certified), then, among covers with :math:`p^*` sites, the one covering the most
  weight (``demand``, default 1 per point) at least twice. Points with equal coverage sets merge
  with their summed weight (all of them are covered the same number of times by any choice of
  sites); no row is dropped.
"""

from __future__ import annotations

import numpy as np

from aidopt.api import _front
from aidopt.data.coverage import Coverage, CoverageTimeLimit, CoverRows, aggregate_rows, coverage_sets, drop_dominated
from aidopt.data.facility import _vector
from aidopt.decomposition.plugins.covering import CoveringData, CoveringProblem

__all__ = ["solve_lscp_variant", "single_source_rows"]

#: relative slack of "a point's demand fits a site's capacity" (a pair is kept when
#: ``a_i <= Q_j (1 + FIT)``: generous, so rounding never removes a usable pair)
FIT = 1e-9


def solve_lscp_variant(kind, arr, *, radius, p, fixed_costs, demand, capacity, open0, config,
                       mip_gap, start, less_time, single_source=False):
    """The capacitated LSCP (``kind="lscp"``, ``capacity`` given; single-sourcing with
    ``single_source``) or LSCP-B (``kind="lscp-b"``) on the checked cost matrix or oracle
    ``arr``; ``config`` is the run's (``aid=False``), ``start`` the door's clock and
    ``less_time(config, start)`` the config with the time left (the door's). Every input is
    checked before anything is solved."""
    n, s = (int(v) for v in arr.shape)
    if p is not None:
        raise ValueError(f"model={kind!r} finds the least number of sites itself and takes no p")
    if kind == "lscp-b":
        if capacity is not None:
            raise ValueError("model='lscp-b' takes no capacity (the capacitated LSCP is "
                             "model='lscp' with capacity)")
        if fixed_costs is not None:
            raise ValueError("model='lscp-b' minimises the number of sites and takes no "
                             "fixed_costs")
        weight = np.ones(n) if demand is None else _vector(demand, "demand", n)
        cap = None
    else:
        cap = _vector(capacity, "capacity", s)
        weight = np.ones(n) if demand is None else _vector(demand, "demand", n)
        if weight.sum() <= 0:
            raise ValueError("total demand is 0: nothing to serve")
        if weight.sum() > cap.sum():
            raise ValueError(f"the capacitated LSCP is infeasible: total demand "
                             f"{weight.sum():g} exceeds total capacity {cap.sum():g}")
    fixed = _vector(fixed_costs, "fixed_costs", s)
    deadline = None if config.time_limit is None else start + config.time_limit
    coverage, rows, count, stopped = None, None, None, ""
    try:
        coverage = coverage_sets(arr, radius, deadline=deadline)
        needy = coverage.sizes() == 0
        if cap is not None:
            needy &= weight > 0  # points of demand 0 impose nothing
        _refuse_uncoverable(np.flatnonzero(needy), radius)
        if single_source:
            rows, count = single_source_rows(coverage, weight, cap, deadline=deadline)
            # split demand relaxes single-sourcing: its infeasibility is also this one's
            _check_capacity_feasible(CoverRows(rows.indptr, rows.sites, rows.weight * count,
                                               rows.members), cap,
                                     reach="the sites within the radius that can hold it")
        else:
            keep = weight > 0 if cap is not None else None
            rows = aggregate_rows(coverage, weight, keep, deadline=deadline)
            if cap is not None:
                _check_capacity_feasible(rows, cap)
    except CoverageTimeLimit as exc:
        coverage, rows, count, stopped = None, None, None, str(exc)

    def run(kind_, data, what=None, why=None):
        """The covering run; a model the solver proves infeasible (the aggregation is exact, so
        the problem is) raises ``ValueError`` naming ``what`` and saying ``why``, or keeps
        termination ``infeasible`` with ``raise_on_failure=False``. The capacitated LSCP with
        split demand gets the capacity bound and an LP dive before its MIP (with HiGHS)."""
        split = data.capacity is not None and data.count is None
        result = _front.run_problem(CoveringProblem(kind_, mip_gap=mip_gap, capacity_bound=split),
                                    data, less_time(config, start))
        if result.termination.value == "infeasible":
            text = f"the {what or kind_.upper()} is infeasible: {why or result.message}"
            if config.raise_on_failure:
                raise ValueError(text)
            result.message = text
        return result

    if cap is not None:
        data = CoveringData("lscp", coverage, rows, weight, None, fixed, open0, n, s, 0, stopped,
                            capacity=cap, count=count)
        # single-sourcing is bin packing: only the MIP can tell that whole points do not fit
        result = run("lscp", data, *(("single-sourcing capacitated LSCP", (
            "the MIP solver proved that no assignment of whole points to sites within the "
            "radius fits the capacities (split demand fits: model='lscp' with capacity and "
            "single_source=False)")) if single_source else ("capacitated LSCP", None)))
        if result.solution:
            result.solution["capacity"] = cap
            result.solution["single_source"] = bool(single_source)
        _for_map(result.solution, coverage, radius)
        how = ("single-sourcing: points with equal usable sites and equal demand are one class, "
               "its points counted per site" if single_source else
               "capacitated: equal sets merged with summed demand, which may be split")
        return _noted(result, n, rows, how)
    # LSCP-B, stage 1: the least number of sites (the LSCP on its reduced rows)
    first = None
    if rows is not None:
        keep = ~coverage.covered(open0) if open0.size else None
        lrows, dropped = drop_dominated(aggregate_rows(coverage, None, keep))
        first = run("lscp", CoveringData("lscp", coverage, lrows, np.ones(n), None, None, open0,
                                         n, s, dropped))
        if not first.certified:
            first.message = (f"{first.message}; LSCP-B stage 1 (the least number of sites) not "
                             "certified: the backup stage was not run")
            return first
    p_star = None if first is None else int(round(first.objective))
    data = CoveringData("lscp-b", coverage, rows, weight, p_star, None, open0, n, s, 0, stopped)
    result = run("lscp-b", data)
    if first is not None:
        result.message = (f"{result.message}; stage 1: the LSCP's least number of sites "
                          f"{p_star}, certified (bound {first.lower_bound:g})")
        if result.solution:
            result.solution["backup"] = float(weight.sum()) - float(result.objective)
            result.solution["lscp_sites"] = p_star
    _for_map(result.solution, coverage, radius, backup=True)
    return _noted(result, n, rows, "backup: equal sets merged with summed weight")


def single_source_rows(coverage: Coverage, demand: np.ndarray, cap: np.ndarray, *,
                       deadline: float | None = None) -> tuple[CoverRows, np.ndarray]:
    r"""The rows of the single-sourcing capacitated LSCP: classes of interchangeable points.

    First every pair :math:`(i, j)` with :math:`a_i > Q_j` is left out (site j can never serve
    point i whole); a point of positive demand left with no site is refused. Then the points of
    positive demand with equal remaining sets (:func:`~aidopt.data.coverage.aggregate_rows`)
    *and* equal demand are one class (docs/facility.md proves the merge exact).

    Parameters
    ----------
    coverage : Coverage
        The points' coverage sets :math:`N_i`.
    demand, cap : ndarray
        The points' demand :math:`a_i` and the sites' capacities :math:`Q_j`.
    deadline : float, optional
        As in :func:`~aidopt.data.coverage.aggregate_rows`.

    Returns
    -------
    (rows, count) : (CoverRows, ndarray of int64)
        ``rows.weight[r]`` is the demand of *one* point of class r, ``count[r]`` its number of
        points, ``rows.members`` every point's class (-1: demand 0, left out); classes in order
        of their first point.

    Raises
    ------
    ValueError
        A point of positive demand whose demand exceeds the capacity of every site covering it
        (the first ten named, with the largest such capacity).
    """
    n = coverage.n_points
    point_of = np.repeat(np.arange(n), coverage.sizes())
    usable = demand[point_of] <= cap[coverage.sites] * (1 + FIT)
    fits = np.bincount(point_of[usable], minlength=n)
    lonely = np.flatnonzero((demand > 0) & (coverage.sizes() > 0) & (fits == 0))
    if lonely.size:
        largest = np.maximum.reduceat(np.append(cap[coverage.sites], 0.0),
                                      coverage.indptr[:-1])[lonely]
        shown = ", ".join(f"{int(i)} (demand {demand[i]:g}, largest capacity {q:g})"
                          for i, q in zip(lonely[:10], largest[:10], strict=True))
        more = f" and {lonely.size - 10} more" if lonely.size > 10 else ""
        raise ValueError("the single-sourcing capacitated LSCP is infeasible: the demand of "
                         f"point(s) {shown}{more} exceeds the capacity of every site within "
                         "the radius (a point is served whole by one site)")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(point_of[usable], minlength=n), out=indptr[1:])
    pruned = Coverage(indptr, coverage.sites[usable], coverage.n_sites)
    sets = aggregate_rows(pruned, None, demand > 0, deadline=deadline)
    inside = np.flatnonzero(sets.members >= 0)
    # classes: equal (set, demand), numbered in order of their first point
    keys = np.column_stack([sets.members[inside].astype(float), demand[inside]])
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    cls = rank[inverse.reshape(-1)]
    leaders = inside[np.sort(first)]  # the first point of every class, in class order
    group = sets.members[leaders]
    sizes = np.diff(sets.indptr)[group]
    row_ptr = np.zeros(group.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=row_ptr[1:])
    take = np.repeat(sets.indptr[group] - row_ptr[:-1], sizes) + np.arange(int(sizes.sum()))
    members = np.full(n, -1, dtype=np.int64)
    members[inside] = cls
    count = np.bincount(cls, minlength=group.size).astype(np.int64)
    return CoverRows(row_ptr, sets.sites[take], demand[leaders].copy(), members), count


def _for_map(solution, coverage, radius, backup: bool = False) -> None:
    """What the map of a variant's answer draws: the ``radius``, which points the open sites
    cover (on the costs) and, for LSCP-B, which they cover at least twice."""
    from aidopt.decomposition.plugins.covering import times_covered

    if not solution:
        return
    solution["coverage_radius"] = radius
    if coverage is not None and "open" in solution:
        times = times_covered(coverage, np.asarray(solution["open"], dtype=np.int64))
        solution["covered_points"] = times >= 1
        if backup:
            solution["backup_points"] = times >= 2


def _refuse_uncoverable(lonely: np.ndarray, radius: float) -> None:
    if lonely.size:
        shown = ", ".join(str(int(i)) for i in lonely[:10])
        more = f" and {lonely.size - 10} more" if lonely.size > 10 else ""
        raise ValueError(f"LSCP is infeasible: demand point(s) {shown}{more} have no "
                         f"candidate site within radius {radius:g}")


def _check_capacity_feasible(rows, cap: np.ndarray, reach: str = "the sites within the radius"
                             ) -> None:
    """Refuse a capacitated LSCP that is infeasible even with every site open: each row alone
    (its demand above its sites' capacity), then all together (the largest demand every open
    site can serve, a transportation LP; opening more sites never hurts, so this decides
    feasibility of split demand, and is necessary for single-sourcing). ``reach`` names the
    rows' sites in the message."""
    from scipy import sparse
    from scipy.optimize import linprog

    lengths = np.diff(rows.indptr)
    row_of = np.repeat(np.arange(rows.n_rows), lengths)
    total = np.add.reduceat(np.append(cap[rows.sites], 0.0), rows.indptr[:-1])
    short = np.flatnonzero(rows.weight > total * (1 + 1e-9) + 1e-12)
    if short.size:
        r = int(short[0])
        point = int(np.flatnonzero(rows.members == r)[0])
        raise ValueError(f"the capacitated LSCP is infeasible: the demand {rows.weight[r]:g} of "
                         f"point {point} (summed with the points merged with it) exceeds the "
                         f"total capacity {total[r]:g} of {reach}")
    k = rows.sites.size
    A = sparse.vstack([sparse.csr_matrix((np.ones(k), (row_of, np.arange(k))),
                                         shape=(rows.n_rows, k)),
                       sparse.csr_matrix((np.ones(k), (rows.sites, np.arange(k))),
                                         shape=(cap.size, k))]).tocsr()
    res = linprog(-np.ones(k), A_ub=A, b_ub=np.concatenate([rows.weight, cap]),
                  bounds=(0, None), method="highs")
    total = float(rows.weight.sum())
    if res.status == 0 and -res.fun < total * (1 - 1e-9):
        raise ValueError(f"the capacitated LSCP is infeasible: even with every site open, at "
                         f"most {-res.fun:g} of the total demand {total:g} can be served "
                         "within the radius and the capacities")


def _noted(result, n, rows, how: str):
    if rows is not None:
        note = f"{n} demand points aggregated into {rows.n_rows} rows ({how}: exact)"
        result.message = f"{result.message}; {note}" if result.message else note
        if result.solution:
            result.solution["rows"] = rows.n_rows
    return result

