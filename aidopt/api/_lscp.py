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
* **LSCP-B** (Hogan & ReVelle 1986; spopt's ``LSCPB``): first the LSCP's least number of sites
  :math:`p^*` (certified), then, among covers with :math:`p^*` sites, the one covering the most
  weight (``demand``, default 1 per point) at least twice. Points with equal coverage sets merge
  with their summed weight (all of them are covered the same number of times by any choice of
  sites); no row is dropped.
"""

from __future__ import annotations

import numpy as np

from aidopt.api import _front
from aidopt.data.coverage import CoverageTimeLimit, aggregate_rows, coverage_sets, drop_dominated
from aidopt.data.facility import _vector
from aidopt.decomposition.plugins.covering import CoveringData, CoveringProblem

__all__ = ["solve_lscp_variant"]


def solve_lscp_variant(kind, arr, *, radius, p, fixed_costs, demand, capacity, open0, config,
                       mip_gap, start, less_time):
    """The capacitated LSCP (``kind="lscp"``, ``capacity`` given) or LSCP-B (``kind="lscp-b"``)
    on the checked cost matrix or oracle ``arr``; ``config`` is the run's (``aid=False``),
    ``start`` the door's clock and ``less_time(config, start)`` the config with the time left
    (the door's). Every input is checked before anything is solved."""
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
    coverage, rows, stopped = None, None, ""
    try:
        coverage = coverage_sets(arr, radius, deadline=deadline)
        needy = coverage.sizes() == 0
        if cap is not None:
            needy &= weight > 0  # points of demand 0 impose nothing
        _refuse_uncoverable(np.flatnonzero(needy), radius)
        keep = weight > 0 if cap is not None else None
        rows = aggregate_rows(coverage, weight, keep, deadline=deadline)
        if cap is not None:
            _check_capacity_feasible(rows, cap)
    except CoverageTimeLimit as exc:
        coverage, rows, stopped = None, None, str(exc)

    def run(kind_, data):
        return _front.run_problem(CoveringProblem(kind_, mip_gap=mip_gap), data,
                                  less_time(config, start))

    if cap is not None:
        data = CoveringData("lscp", coverage, rows, weight, None, fixed, open0, n, s, 0, stopped,
                            capacity=cap)
        result = run("lscp", data)
        return _noted(result, n, rows, "capacitated: equal sets merged with summed demand, "
                      "which may be split")
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
    return _noted(result, n, rows, "backup: equal sets merged with summed weight")


def _refuse_uncoverable(lonely: np.ndarray, radius: float) -> None:
    if lonely.size:
        shown = ", ".join(str(int(i)) for i in lonely[:10])
        more = f" and {lonely.size - 10} more" if lonely.size > 10 else ""
        raise ValueError(f"LSCP is infeasible: demand point(s) {shown}{more} have no "
                         f"candidate site within radius {radius:g}")


def _check_capacity_feasible(rows, cap: np.ndarray) -> None:
    """Refuse a capacitated LSCP that is infeasible even with every site open: each row alone
    (its demand above its sites' capacity), then all together (the largest demand every open
    site can serve, a transportation LP; opening more sites never hurts, so this decides
    feasibility)."""
    from scipy import sparse
    from scipy.optimize import linprog

    lengths = np.diff(rows.indptr)
    row_of = np.repeat(np.arange(rows.n_rows), lengths)
    reach = np.add.reduceat(np.append(cap[rows.sites], 0.0), rows.indptr[:-1])
    short = np.flatnonzero(rows.weight > reach * (1 + 1e-9) + 1e-12)
    if short.size:
        r = int(short[0])
        point = int(np.flatnonzero(rows.members == r)[0])
        raise ValueError(f"the capacitated LSCP is infeasible: the demand {rows.weight[r]:g} of "
                         f"point {point} (and of the points with its coverage set) exceeds the "
                         f"total capacity {reach[r]:g} of the sites within the radius")
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

