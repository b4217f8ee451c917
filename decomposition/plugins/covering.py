r"""The covering models of facility location, MCLP, LSCP (also capacitated) and LSCP-B's backup
stage (docs/facility.md), solved exactly on their aggregated rows and certified by the MIP
solver's bound.

The aggregation (:mod:`aidopt.data.coverage`) is exact, so there is nothing to disaggregate:
the run is one solve of the aggregated MIP (:mod:`aidopt.models.covering`) on the trivial
partition (``solve_direct``). Its optimum is the original optimum and its open sites an optimal
solution of the original problem; the certificate (method ``mip_bound``) checks the open sites
on the original points (uncovered weight, every point covered, p sites, the forced sites open)
and their gap to the solver's dual bound, rounded up when every objective value is an integer.

With HiGHS (the default solver) the MCLP is solved by
:mod:`~aidopt.decomposition.plugins.covering_fixing` instead of one plain MIP solve (``fixing``):
its LP relaxation by interior point, a Lagrangian bound from the LP's duals, a heuristic
incumbent, reduced-cost fixing, and the MIP on the sites left from the incumbent; the bound it
reports is proven for the aggregated MIP (that module's docstring), so the certificate is the
same.

MCLP is reported as a minimisation of the uncovered weight (``objective`` and ``lower_bound``
are uncovered weight; ``solution["covered"]`` is the covered weight). LSCP-B's backup stage
likewise minimises the weight of points not covered twice with the LSCP's least number of sites
``p`` (the door solves that LSCP first). The capacitated LSCP's certificate also checks the
returned shares on the original points: every point's demand served in full by open sites of its
coverage set, and no site's load above its capacity. With single-sourcing its rows are classes
of interchangeable points (equal usable sites, equal demand) and the MIP counts how many of a
class each site serves; :func:`point_sites` hands a class's points out to its sites by those
counts, and the certificate checks each original point's one site (open, in :math:`N_i`) and the
loads.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from aidopt.decomposition.protocol import GAP_FLOOR, AIDProblem, Iterate, Lifted, Split
from aidopt.models import covering as cmodel

from aidopt.data.coverage import Coverage, CoverRows
from aidopt.results import Certificate
from aidopt.solvers import ProblemClass, SolveOutcome, SolveStatus, TimeLimitReached

__all__ = ["CoveringData", "CoveringProblem", "mip_gap_options"]


def mip_gap_options(solver: str, gap: float) -> dict:
    """The relative MIP gap ``gap`` in ``solver``'s own option name (nothing for others)."""
    return {"gurobi": {"MIPGap": gap}, "highs": {"mip_rel_gap": gap}, "scip": {"limits/gap": gap},
            "cplex": {"mip_tolerances_mipgap": gap}, "xpress": {"miprelstop": gap}}.get(solver, {})


@dataclass
class CoveringData:
    """A validated covering problem with its coverage sets and aggregated rows.

    Attributes
    ----------
    kind : {"mclp", "lscp", "lscp-b"}
    coverage : Coverage, StreamedCoverage or None
        Every point's coverage set (``None`` when the time limit stopped its computation); a
        :class:`~aidopt.data.coverage.StreamedCoverage` for points read chunk by chunk (the
        dask engine, MCLP and the LSCP without capacities), which evaluates open sites on them
        pass by pass.
    rows : CoverRows or None
        The aggregated rows of the model.
    weight : ndarray (n_points,) or None
        MCLP, LSCP-B: the points' weights; capacitated LSCP: the points' demand; 1 each for the
        LSCP; ``None`` with a ``StreamedCoverage``, which reads them with the points.
    p : int or None
        MCLP: sites to open; LSCP-B: the LSCP's least number of sites.
    fixed : ndarray (n_sites,) or None
        LSCP: opening costs (``None``: 1 each).
    fixed_open : ndarray of int64
        Sites forced open (sorted, distinct).
    n_points, n_sites : int
    dropped : int
        LSCP: rows left out as dominated.
    stopped : str
        Why the coverage computation stopped (empty: it finished).
    capacity : ndarray (n_sites,) or None
        LSCP: the sites' capacities (the capacitated LSCP).
    count : ndarray of int64 (n_rows,) or None
        Single-sourcing capacitated LSCP: the number of points of each row (a class of points
        with equal usable sites and equal demand ``rows.weight[r]`` each); ``None``: split
        demand.
    """

    kind: str
    coverage: Coverage | None
    rows: CoverRows | None
    weight: np.ndarray | None
    p: int | None
    fixed: np.ndarray | None
    fixed_open: np.ndarray
    n_points: int
    n_sites: int
    dropped: int = 0
    stopped: str = ""
    capacity: np.ndarray | None = None
    count: np.ndarray | None = None

    @property
    def integral(self) -> bool:
        """Every objective value is an integer (integer weights / opening costs)."""
        if self.kind != "lscp" and self.weight is None:
            return bool(self.coverage is not None and self.coverage.integral)
        values = self.fixed if self.kind == "lscp" else self.weight
        return values is None or bool(np.array_equal(values, np.round(values)))

    def total_weight(self) -> float:
        """The points' total weight."""
        if self.weight is None:
            return float(self.coverage.total_weight) if self.coverage is not None else 0.0
        return float(self.weight.sum())

    def site_cost(self) -> np.ndarray:
        return np.ones(self.n_sites) if self.fixed is None else self.fixed


class CoveringProblem(AIDProblem):
    """MCLP, LSCP (capacitated when the data has capacities) or LSCP-B's backup stage on exactly
    aggregated rows, one MIP solve (run with ``aid=False``).

    Parameters
    ----------
    kind : {"mclp", "lscp", "lscp-b"}
    mip_gap : float
        Relative gap the MIP is solved to (keep it well below the run's ``tol``).
    fixing : bool
        MCLP with HiGHS: solve by :func:`~aidopt.decomposition.plugins.covering_fixing.solve_mclp`
        (LP by interior point, reduced-cost fixing, then the MIP on the sites left) rather than
        one plain MIP solve. Other kinds and solvers: the plain MIP.
    """

    problem_class = ProblemClass.MILP
    needs_duals = False
    element = "sites"
    infeasible_proves = True  # the aggregation is exact: an infeasible MIP is an infeasible problem

    def __init__(self, kind: str, mip_gap: float = 1e-7, fixing: bool = True,
                 capacity_bound: bool = False):
        if kind not in cmodel.KINDS:
            raise ValueError(f"kind must be one of {cmodel.KINDS}, got {kind!r}")
        if not (isinstance(mip_gap, float | int) and not isinstance(mip_gap, bool) and 0 <= mip_gap < 1):
            raise ValueError(f"mip_gap must be in [0, 1), got {mip_gap!r}")
        self.kind = kind
        self.name = kind
        self.mip_gap = float(mip_gap)
        self.fixing = bool(fixing)
        # HiGHS runs the MCLP's fixing method through solve_native (no Pyomo model), and the
        # capacitated LSCP's capacity bound and LP dive before its MIP (covering_capacity)
        self.capacity_bound = bool(capacity_bound) and kind == "lscp"
        self.native_methods = (("highs",) if (self.fixing and kind == "mclp")
                               or self.capacity_bound else ())

    # ------------------------------------------------------------------ setup
    def solver_defaults(self, solver: str) -> dict:
        return mip_gap_options(solver, self.mip_gap)

    def fallbacks(self, solver: str) -> list[tuple[str, str | None]]:
        return [] if solver == "highs" else [("highs", None)]

    def size(self, data: CoveringData) -> int:
        return data.n_sites

    def dimensions(self, data: CoveringData) -> dict[str, int]:
        dims = {"points": data.n_points, "sites": data.n_sites}
        if data.rows is not None:
            dims["rows"] = data.rows.n_rows
        if data.p is not None:
            dims["p"] = data.p
        if data.fixed_open.size:
            dims["fixed_open"] = int(data.fixed_open.size)
        return dims

    def gap_floor(self, data: CoveringData) -> float:
        """:data:`~.protocol.GAP_FLOOR` times the objective of a trivial solution (MCLP: nothing
        covered; LSCP-B: nothing covered twice; LSCP: every site open)."""
        trivial = (float(data.site_cost().sum()) if self.kind == "lscp"
                   else data.total_weight())
        return max(GAP_FLOOR * trivial, np.finfo(float).tiny)

    def initial_bound(self, data: CoveringData) -> float:
        """MCLP: the weight of the points no site covers; LSCP-B: of the points fewer than two
        sites cover; LSCP: the forced sites' cost."""
        if data.coverage is None:
            return 0.0
        if self.kind == "mclp":
            return data.coverage.uncoverable(data.weight)
        if self.kind != "lscp":
            return float(data.weight[data.coverage.sizes() < _need(self.kind)].sum())
        return float(data.site_cost()[data.fixed_open].sum())

    def default_r0(self, size: int, data) -> float:
        return 1.0

    def initial_partition(self, data, n_clusters, rng, solve):
        return self.trivial_partition(data)

    # ------------------------------------------------------------------ the solve
    def aggregate(self, data: CoveringData, partition, previous):
        """The data itself: its rows are already exactly aggregated."""
        if data.stopped:
            raise TimeLimitReached(data.stopped)
        return data

    def build(self, data: CoveringData, form=None):
        rows = data.rows
        return cmodel.create_instance(cmodel.CoveringModelData(
            self.kind, rows.indptr, rows.sites, data.n_sites, weight=rows.weight, p=data.p,
            fixed=data.fixed, fixed_open=data.fixed_open, capacity=data.capacity,
            count=data.count))

    def solve_native(self, method, data: CoveringData, previous, partition, *, tol, time_limit,
                     options):
        """MCLP with HiGHS: :func:`~aidopt.decomposition.plugins.covering_fixing.solve_mclp` on
        the aggregated rows; the capacitated LSCP with split demand (``capacity_bound``):
        :func:`~aidopt.decomposition.plugins.covering_capacity.solve_capacitated` on its Pyomo
        model (``options``: HiGHS options for each of their solves; the run's ``threads``
        unless they set it)."""
        from aidopt.decomposition.plugins.covering_fixing import solve_mclp
        from aidopt.decomposition.threads import budget

        from aidopt.solvers.highs import highs_version

        t0 = time.perf_counter()
        options = dict(options)
        if budget() is not None:  # the run's ``threads``, as the Pyomo path gives HiGHS
            options.setdefault("threads", int(budget()))
        if self.capacity_bound:
            return self._solve_capacitated(data, time_limit, options)
        integral = bool(np.array_equal(data.rows.weight, np.round(data.rows.weight)))
        res = solve_mclp(data.rows, data.n_sites, data.p, fixed_open=data.fixed_open,
                         integral=integral, time_limit=time_limit, mip_gap=self.mip_gap,
                         options=options)
        status = {"optimal": SolveStatus.OPTIMAL, "time_limit": SolveStatus.TIME_LIMIT,
                  "interrupted": SolveStatus.INTERRUPTED}.get(res.status, SolveStatus.ERROR)
        extra = {k: float(v) for k, v in res.stats.items()}
        outcome = SolveOutcome(status, res.objective, None, True, "highs", highs_version(),
                               time.perf_counter() - t0, message=f"reduced-cost fixing: "
                               f"{res.stats.get('free_sites', data.n_sites)} of {data.n_sites} "
                               "sites left to the MIP", extra=extra,
                               bound=res.bound if math.isfinite(res.bound) else None)
        return res, outcome

    def _solve_capacitated(self, data: CoveringData, time_limit, options):
        """The capacitated LSCP (split demand) by its capacity bound, an LP dive and the MIP
        from the dive's cover (:mod:`~aidopt.decomposition.plugins.covering_capacity`); the
        model's build counts against ``time_limit``, as on the framework's Pyomo path."""
        from aidopt.decomposition.plugins.covering_capacity import solve_capacitated
        from aidopt.models._data import build_deadline

        from aidopt.solvers import TimeLimitReached

        if data.capacity is None or data.count is not None:
            raise ValueError("capacity_bound applies to the capacitated LSCP with split demand")
        deadline = None if time_limit is None else time.perf_counter() + time_limit
        with build_deadline(deadline):
            model = self.build(data)
        if deadline is not None and time.perf_counter() > deadline:
            raise TimeLimitReached("time limit reached while building the capacitated LSCP's "
                                   "model: no solve started")
        rows = data.rows
        reach = np.bincount(rows.sites, weights=np.repeat(rows.weight, np.diff(rows.indptr)),
                            minlength=data.n_sites)  # the demand each site can reach
        outcome = solve_capacitated(
            model, cost=data.site_cost(), capacity=data.capacity, reach=reach,
            demand=float(rows.weight.sum()), forced=data.fixed_open, integral=data.integral,
            time_limit=None if deadline is None else deadline - time.perf_counter(),
            options=options, mip_gap=self.mip_gap)
        return model, outcome

    def on_nonoptimal(self, outcome) -> bool:
        """A MIP stopped with an incumbent: its open sites are a feasible answer."""
        return outcome.stopped and outcome.has_solution

    def lift(self, model, outcome, partition, data: CoveringData, original) -> Lifted:
        from aidopt.decomposition.plugins.covering_fixing import FixingResult

        info = {"rows": float(data.rows.n_rows), "mip_gap": _relative(outcome, self.gap_floor(data))}
        for key in ("capacity_bound", "mip"):  # the capacitated LSCP's native method
            if key in (outcome.extra or {}):
                info[key] = float(outcome.extra[key])
        if isinstance(model, FixingResult):  # solve_native
            info.update({k: float(v) for k, v in model.stats.items()})
            return Lifted({"open": np.asarray(model.open, dtype=np.int64)}, None, info)
        open_ = cmodel.open_sites(model)
        solution = {"open": open_}
        if data.count is not None:
            assign = point_sites(data.rows, data.count, cmodel.counts(model))
            solution["assign"] = _serve_zero_demand(data.coverage, assign, open_)
            solution["load"] = site_loads(data, assign=solution["assign"])
        elif data.capacity is not None:
            solution["shares"] = point_shares(data.rows, cmodel.shares(model), data.n_sites)
            solution["load"] = site_loads(data, shares=solution["shares"])
        return Lifted(solution, None, info)

    def lower_bound(self, outcome, partition, data: CoveringData, lifted=None) -> float | None:
        """The MIP's dual bound (never its incumbent) plus what the model leaves out (MCLP: the
        uncoverable points' weight), rounded up when every objective value is an integer."""
        b = outcome.bound
        if b is None or not math.isfinite(b):
            return None
        if self.kind == "mclp":
            b += self.initial_bound(data)
        if data.integral:
            b = float(math.ceil(b - 1e-6 * max(1.0, abs(b))))
        return float(b)

    def evaluate(self, data: CoveringData, lifted: Lifted) -> float:
        """MCLP: the weight of the original points no open site covers; LSCP-B: of those fewer
        than two open sites cover; LSCP: the open sites' cost."""
        open_ = lifted.solution["open"]
        if self.kind == "mclp":
            return data.coverage.uncovered(open_, data.weight)[1]
        if self.kind != "lscp":
            return float(data.weight[times_covered(data.coverage, open_) < _need(self.kind)].sum())
        return float(data.site_cost()[open_].sum())

    def split(self, partition, data, lifted) -> Split:
        return Split(None)  # the aggregation is exact: nothing to split

    # ------------------------------------------------------------------ the end
    def certify(self, data: CoveringData, best: Iterate, *, bound: Iterate, solve, tol,
                feasibility_tol=1e-6, history=()) -> Certificate:
        E = best.E_t
        open_ = np.asarray(best.lifted.solution["open"], dtype=np.int64)
        residuals = {"forced sites not open": float(np.setdiff1d(data.fixed_open, open_).size)}
        if self.kind != "lscp":
            residuals["open sites other than p"] = float(abs(open_.size - data.p))
        if self.kind == "lscp-b" or (self.kind == "lscp" and data.capacity is None):
            residuals["points not covered"] = float(data.coverage.uncovered(open_)[0])
        if data.count is not None:
            residuals.update(assignment_residuals(data, open_, best.lifted.solution["assign"]))
        elif data.capacity is not None:
            residuals.update(capacity_residuals(data, open_, best.lifted.solution["shares"]))
        checked = list(residuals)
        lower = (-math.inf if bound is None or bound.bound is None
                 else min(max(bound.bound, self.initial_bound(data)), E))
        rel = (E - lower) / max(self.gap_floor(data), abs(E)) if math.isfinite(lower) else math.inf
        feasible = all(v <= feasibility_tol for v in residuals.values())
        return Certificate(
            method="mip_bound", certified=bool(feasible and rel <= tol), primal_objective=E,
            dual_objective=lower, relative_gap=float(rel), residuals=residuals, tol=tol,
            feasibility_tol=feasibility_tol, sign_condition=True, checked=checked,
            condition_name="exact aggregation",
            condition="the aggregated MIP has the original's optimum (docs/facility.md)",
            note=("bound = the larger of the MIP solver's dual bound and the capacity bound "
                  "(the least cost of sites whose capacities hold the total demand; no MIP ran "
                  "when the LP dive's cover met it) on the exactly aggregated "
                  if "capacity_bound" in best.lifted.info
                  else "bound = the MIP solver's dual bound on the exactly aggregated ")
                 + {"mclp": "MCLP (uncovered weight)",
                    "lscp-b": f"LSCP-B backup stage (weight not covered twice, p = {data.p})",
                    "lscp": ("LSCP" if data.capacity is None else "capacitated LSCP"
                             if data.count is None else
                             "single-sourcing capacitated LSCP (classes counted per site)")
                    }[self.kind]
                 + ("; rounded up: every objective value is an integer" if data.integral else ""),
        )

    def public_solution(self, best: Iterate, certificate) -> dict:
        open_ = [int(j) for j in best.lifted.solution["open"]]
        sol = {"open": open_, "kind": self.kind}
        if self.kind == "mclp":
            sol["uncovered"] = float(best.E_t)
        elif self.kind == "lscp-b":
            sol["n_open"] = len(open_)
            sol["not_backed_up"] = float(best.E_t)
        else:
            sol["n_open"] = len(open_)
            sol["cost"] = float(best.E_t)
        for key in ("shares", "assign", "load"):
            if key in best.lifted.solution:
                sol[key] = best.lifted.solution[key]
        return sol


def _relative(outcome, floor: float) -> float:
    if outcome.objective is None or outcome.bound is None or not math.isfinite(outcome.bound):
        return math.nan
    return max(0.0, outcome.objective - outcome.bound) / max(floor, abs(outcome.objective))


def _need(kind: str) -> int:
    """How many open sites cover a point in ``kind``'s objective (2: LSCP-B's backup)."""
    return 2 if kind == "lscp-b" else 1


def times_covered(coverage: Coverage, open_sites) -> np.ndarray:
    """How many sites of ``open_sites`` cover each point (int64 per point)."""
    is_open = np.zeros(coverage.n_sites, dtype=np.int64)
    is_open[np.asarray(open_sites, dtype=np.int64)] = 1
    hits = np.append(is_open[coverage.sites], 0)
    return np.add.reduceat(hits, coverage.indptr[:-1]) * (coverage.sizes() > 0)


def point_shares(rows: CoverRows, z: np.ndarray, n_sites: int):
    """The share of every point's demand each site serves, as an ``n_points x n_sites`` CSR
    matrix, from the shares ``z`` of the aggregated rows' pairs (every point of a row gets the
    row's shares; points outside the model get none)."""
    from scipy import sparse

    members = rows.members
    inside = np.flatnonzero(members >= 0)
    r = members[inside]
    lengths = np.diff(rows.indptr)[r]
    indptr = np.zeros(members.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(inside, weights=lengths, minlength=members.size).astype(np.int64),
              out=indptr[1:])
    pos = np.repeat(rows.indptr[r] - np.cumsum(np.append(0, lengths[:-1])), lengths) + \
        np.arange(int(lengths.sum()))
    return sparse.csr_matrix((z[pos], rows.sites[pos], indptr), shape=(members.size, n_sites))


def point_sites(rows: CoverRows, count: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Every point's site from the single-sourcing MIP's counts: the points of class r, in point
    order, go ``n[k]`` to the site of each pair ``k`` of the row, in the row's site order
    (docs/facility.md: any such hand-out of interchangeable points is an optimal assignment).

    Parameters
    ----------
    rows : CoverRows
        The classes (``rows.members``: every point's class, -1 outside the model).
    count : ndarray of int64 (n_rows,)
        The classes' sizes.
    n : ndarray of int64 (nnz,)
        The MIP's number of each class's points per pair.

    Returns
    -------
    ndarray of int64 (n_points,)
        The site of every point; -1 for the points outside the model, and for the points of a
        class whose counts sum to fewer than its size (never for a feasible MIP solution; the
        certificate then fails).
    """
    members = rows.members
    inside = np.flatnonzero(members >= 0)
    order = inside[np.argsort(members[inside], kind="stable")]  # by class, then point
    r = members[order]
    start = np.zeros(count.size + 1, dtype=np.int64)
    np.cumsum(count, out=start[1:])
    t = np.arange(order.size) - start[r]  # the point's place in its class
    handed = np.zeros(n.size + 1, dtype=np.int64)
    np.cumsum(n, out=handed[1:])
    k = np.searchsorted(handed, handed[rows.indptr[r]] + t, side="right") - 1
    ok = k < rows.indptr[r + 1]
    out = np.full(members.size, -1, dtype=np.int64)
    out[order[ok]] = rows.sites[k[ok]]
    return out


def _serve_zero_demand(coverage: Coverage, assign: np.ndarray, open_) -> np.ndarray:
    """``assign`` with the points outside the model (demand 0) given their first open site of
    :math:`N_i`, where they have one (they load nothing)."""
    out = assign.copy()
    is_open = np.zeros(coverage.n_sites, dtype=bool)
    is_open[np.asarray(open_, dtype=np.int64)] = True
    at = np.flatnonzero(is_open[coverage.sites])
    point = np.searchsorted(coverage.indptr, at, side="right") - 1
    point, first = np.unique(point, return_index=True)
    free = out[point] < 0
    out[point[free]] = coverage.sites[at[first[free]]]
    return out


def site_loads(data: CoveringData, *, shares=None, assign=None) -> np.ndarray:
    """Every site's load on the original points: the demand its ``shares`` (split) or the
    points ``assign``-ed to it (single-sourcing) make."""
    if assign is not None:
        ok = assign >= 0
        return np.bincount(assign[ok], weights=data.weight[ok], minlength=data.n_sites)
    coo = shares.tocoo()
    return np.bincount(coo.col, weights=data.weight[coo.row] * coo.data, minlength=data.n_sites)


def assignment_residuals(data: CoveringData, open_, assign) -> dict[str, float]:
    """The single-sourcing capacitated LSCP's residuals of ``assign`` (a site per point, -1
    none) on the original points: the points of positive demand with no site, the points whose
    site is closed or outside their :math:`N_i`, and each site's load above its capacity
    (relative to ``max(1, Q_j)``; the largest)."""
    assign = np.asarray(assign, dtype=np.int64)
    cov = data.coverage
    if assign.shape != (cov.n_points,):
        raise ValueError(f"assign must have one site per point ({cov.n_points}), got shape "
                         f"{assign.shape}")
    given = np.flatnonzero(assign >= 0)
    j = assign[given]
    is_open = np.zeros(data.n_sites, dtype=bool)
    is_open[np.asarray(open_, dtype=np.int64)] = True
    bad = (j >= data.n_sites)
    j = np.where(bad, 0, j)
    bad |= ~(is_open[j] & _in_sets(cov, given, j))
    load = np.bincount(j[~bad], weights=data.weight[given[~bad]], minlength=data.n_sites)
    excess = np.maximum(load - data.capacity, 0.0) / np.maximum(1.0, data.capacity)
    return {"points of positive demand with no site": float(np.sum((assign < 0)
                                                                   & (data.weight > 0))),
            "points served by a closed site or outside N_i": float(bad.sum()),
            "largest load above capacity (relative)": float(excess.max(initial=0.0))}


def _in_sets(cov: Coverage, points: np.ndarray, sites: np.ndarray) -> np.ndarray:
    """Whether ``sites[k]`` is in point ``points[k]``'s coverage set (sorted sites: a binary
    search in each)."""
    lo, hi = cov.indptr[points], cov.indptr[points + 1]
    at = np.minimum(lo + _search_rows(cov.sites, lo, hi, sites), max(cov.sites.size - 1, 0))
    return (at < hi) & (cov.sites[at] == sites) if cov.sites.size else np.zeros(points.size, bool)


def capacity_residuals(data: CoveringData, open_, shares) -> dict[str, float]:
    """The capacitated LSCP's residuals of ``shares`` (:func:`point_shares`) on the original
    points: each point's unserved share (points of positive demand), the share served by closed
    sites or by sites outside the point's coverage set, and each site's load above its capacity
    (relative to ``max(1, Q_j)``); the largest of each."""
    cov = data.coverage
    positive = data.weight > 0
    served = np.asarray(shares.sum(axis=1)).ravel()
    unserved = np.abs(1.0 - served[positive])
    coo = shares.tocoo()
    is_open = np.zeros(data.n_sites, dtype=bool)
    is_open[np.asarray(open_, dtype=np.int64)] = True
    astray = coo.data * ~(is_open[coo.col] & _in_sets(cov, coo.row, coo.col))
    load = site_loads(data, shares=shares)
    excess = np.maximum(load - data.capacity, 0.0) / np.maximum(1.0, data.capacity)
    return {"largest unserved share of a point": float(unserved.max(initial=0.0)),
            "largest share served outside N_i or by a closed site": float(astray.max(initial=0.0)),
            "largest load above capacity (relative)": float(excess.max(initial=0.0))}


def _search_rows(sites: np.ndarray, lo: np.ndarray, hi: np.ndarray, col: np.ndarray) -> np.ndarray:
    """For every k, the offset from ``lo[k]`` of ``col[k]``'s place in the sorted
    ``sites[lo[k]:hi[k]]`` (a vectorised binary search)."""
    left, right = lo.copy(), hi.copy()
    while np.any(left < right):
        mid = (left + right) // 2
        go = (left < right) & (sites[np.minimum(mid, sites.size - 1)] < col)
        left = np.where(go, mid + 1, left)
        right = np.where((left < right) & ~go, mid, right)
    return left - lo
