r"""Branch-and-Benders-cut for the p-median and the UFL: the per-customer cuts of
:mod:`~aidopt.decomposition.plugins.facility_cuts`, separated lazily inside SCIP's branch and cut.

The master problem has one binary :math:`y_j` per site and one continuous :math:`\theta_i` per
customer (its cost):

.. math:: \min \textstyle\sum_i w_i \theta_i + f'y \quad \text{s.t.} \quad
          \textstyle\sum_j y_j = p \text{ (UFL: } \ge 1;\ \text{both: } 1 \le \cdot \le p),\quad
          y \in \{0, 1\}^s,\quad
          \theta_i \ge D_i^0,

and the cuts :math:`\theta_i + \sum_{j:\, c_{ij} < D} (D - c_{ij})\, y_j \ge D` for every level
:math:`D` of customer :math:`i` (the Benders cuts of the radius formulation, Durán-Mateluna, Alès
& Elloumi 2023; García, Labbé & Marín 2011). There are :math:`\sum_i G_i` of them; none is
written out. A SCIP constraint handler separates, at every LP solution (fractional or not) and
every candidate solution, each customer's most violated cut in one pass over its sorted sites
(:func:`separate`), so SCIP's own branching, bounding, reduced-cost fixing and heuristics run
on a model that holds only the cuts found so far. For an integral :math:`y` the tight cut is at
the customer's nearest open site, so a candidate that violates no cut is priced exactly:
SCIP's optimum is the original optimum, and its dual bound a bound on it.

Before the branch and cut, reduced-cost fixing (:func:`kept_sites`) leaves out every site that
no solution cheaper than the start can open: the cutting-plane LP's duals bound every solution
that opens site :math:`j` by the LP bound plus :math:`j`'s reduced cost, so when that exceeds the
start's objective (less one when every objective value is an integer) the branch and cut runs on
the other sites only — its sorted sites, cuts and LPs shrink with them — and its bound, capped at
the start's objective, is a bound on the original problem.

The plug-in :class:`FacilityBendersProblem` puts it on the AID contract: its elements are the
customers, its partition the trivial one (the separation inside the tree replaces AID's outer
loop over radii, :mod:`~aidopt.decomposition.plugins.facility_radius`), its start the
cutting-plane LP (:func:`~aidopt.decomposition.plugins.facility_cuts.lp_by_cuts`: the binding
cuts are the first LP's rows) and a feasible solution (SCIP keeps the better of it and its
own), its one iterate SCIP's incumbent, lifted and improved, with SCIP's bound. The customers'
sorted sites come from :class:`~aidopt.decomposition.plugins.facility_cuts.NearestSites`, so
costs given by coordinates are never held as a matrix.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import numpy as np
from aidopt.decomposition.partition import Partition
from aidopt.decomposition.plugins.facility import (
    FacilityBase,
    _greedy,
    keep_clock,
    local_reoptimization,
    perturbed_swaps,
)
from aidopt.decomposition.plugins.facility_cuts import (
    BLOCK_ENTRIES,
    CutLP,
    NearestSites,
    lp_by_cuts,
)
from aidopt.decomposition.protocol import Iterate, Lifted, Split

from aidopt.solvers import SolveOutcome, SolverError, SolveStatus

__all__ = ["BendersResult", "FacilityBendersProblem", "solve_benders"]

logger = logging.getLogger("aidopt.facility")

#: the start's swap search works on a customers x candidate-sites cost matrix of at most this
#: many entries (every site when they fit; else the LP's best sites)
SWAP_ENTRIES = 1 << 24

#: the share of the start phase's time left after the LP that the swap search may use
SWAP_SHARE = 0.5

#: at most this share of the time left goes to the support MIP
#: (``FacilityBendersProblem._support_mip``)
SUPPORT_SHARE = 0.25

#: the support MIP runs only on at most this share of the sites (else it is the full problem)
SUPPORT_SITES = 0.25

#: the branch and cut branches on balls (:func:`branching_rule`) when the p-median has at least
#: this many customers per open site
BALL_CUSTOMERS_PER_SITE = 40

#: the p-median start's re-optimization by parts (:func:`local_reoptimization`): open sites per
#: part (each size until no part improves, then the next), candidate sites per customer of a
#: part, seconds per part at most, and the share of the time left that all parts may use
PART_SIZES = (10, 20)
PART_CANDIDATES = 8
PART_SECONDS = 10.0
PARTS_SHARE = 0.5


@dataclass
class BendersResult:
    """What :func:`solve_benders` ends with.

    Attributes
    ----------
    y : ndarray (s,) or None
        The best solution's open sites (0/1), ``None`` when SCIP has none.
    objective, bound : float
        Its objective and SCIP's dual bound on the optimum.
    status : str
        ``"optimal"``, ``"time_limit"``, ``"interrupted"`` or SCIP's own status.
    nodes, calls, cuts : int
        Branch-and-bound nodes, separation calls and cuts added.
    separation_seconds : float
        Time spent in :func:`separate` and in adding its cuts.
    width : int
        Sorted sites per customer at the end.
    branching : str
        ``"sites"`` or ``"balls"`` (:func:`solve_benders`).
    ball_branchings : int
        Branchings on balls.
    """

    y: np.ndarray | None
    objective: float
    bound: float
    status: str
    nodes: int
    calls: int
    cuts: int
    separation_seconds: float
    width: int = 0
    branching: str = "sites"
    ball_branchings: int = 0


def solve_benders(levels, w: np.ndarray, fixed: np.ndarray | None, p: int | None, *,
                  cost_scale: float, root_cuts=None, start: np.ndarray | None = None,
                  time_limit: float | None = None, mip_gap: float = 1e-7,
                  log: bool = False, branching: str = "sites") -> BendersResult:
    """Solve the master of the module docstring by branch and cut in SCIP.

    Parameters
    ----------
    levels : NearestSites
        The model customers' sorted sites.
    w : ndarray (n,)
        Their demands.
    fixed : ndarray (s,) or None
        Opening costs (UFL), or None (p-median).
    p : int or None
        Sites to open (p-median; at most p with opening costs), or None (UFL).
    cost_scale : float
        The largest cost: SCIP sees every cost divided by it.
    root_cuts : (ndarray, ndarray, ndarray), optional
        ``(customer, level D, width)`` of cuts to put in the first LP (the cutting-plane LP's
        binding cuts).
    start : ndarray of int, optional
        Open sites of a feasible solution, given to SCIP as its first incumbent.
    time_limit : float, optional
        Seconds.
    mip_gap : float
        SCIP's relative gap limit.
    log : bool
        Show SCIP's log.
    branching : {"sites", "balls"}
        ``"sites"``: SCIP's own branching on the :math:`y_j`; ``"balls"``: on a customer's
        ball of cheapest sites (:func:`branching_ball`), all closed or at least one open, SCIP's
        own where no ball is fractional.
    """
    from aidopt.decomposition.plugins.facility_master import BallBranching, Master, PerCustomerCuts

    if branching not in ("sites", "balls"):
        raise ValueError(f"branching must be 'sites' or 'balls', got {branching!r}")
    # SCIP sees costs divided by the largest one (its tolerances are absolute below 1): the
    # same answer at any unit of cost
    scale = float(cost_scale)
    if fixed is not None:
        scale = max(scale, float(np.max(fixed, initial=0.0)))
    scale = scale if scale > 0 and math.isfinite(scale) else 1.0
    w = np.asarray(w, dtype=float)
    deadline = (None if time_limit is None or not math.isfinite(time_limit)
                else time.perf_counter() + max(0.0, float(time_limit)))
    master = Master(levels, w, fixed, p, scale=scale, mip_gap=mip_gap, time_limit=time_limit,
                    log=log)
    m = master.model
    handler = PerCustomerCuts(master, root_cuts, deadline)
    m.includeConshdlr(handler, "percustomer", "per-customer Benders cuts of the radius formulation",
                      sepapriority=1_000_000, enfopriority=-1_000_000, chckpriority=-1_000_000,
                      sepafreq=1, needscons=True)
    cons = m.createCons(handler, "cuts", initial=True, separate=True, enforce=True, check=True,
                        propagate=False, local=False, modifiable=False, dynamic=False,
                        removable=False, stickingatnode=False)
    m.addPyCons(cons)
    balls = BallBranching(master, w)
    if branching == "balls":
        m.includeBranchrule(balls, "balls", "a customer's ball of sites: closed or not",
                            priority=1_000_000, maxdepth=-1, maxbounddist=1.0)
    if start is not None and len(start):
        master.add_start(start)
    m.optimize()
    status = str(m.getStatus())
    status = {"optimal": "optimal", "timelimit": "time_limit", "userinterrupt": "interrupted",
              "gaplimit": "optimal"}.get(status, status)
    if status == "interrupted" and handler.out_of_time:  # the handler stopped SCIP at the deadline
        status = "time_limit"
    best = m.getBestSol() if m.getNSols() else None
    values = None
    objective = math.inf
    if best is not None:
        values = np.array([m.getSolVal(best, v) for v in master.y]) > 0.5
        objective = float(m.getSolObjVal(best)) * scale
    bound = float(m.getDualbound()) * scale
    result = BendersResult(values.astype(float) if values is not None else None, objective, bound,
                           status, int(m.getNNodes()), handler.calls, handler.cuts,
                           handler.seconds, branching=branching, ball_branchings=balls.calls)
    m.freeProb()
    return result


@dataclass
class BendersStart:
    """What the start phase found, kept with the data for the iteration (like its sorted
    sites): the cutting-plane LP (its value bounds the optimum; its binding cuts seed the branch
    and cut) and the best feasible solution (improved, so not improved again)."""

    lp: CutLP | None
    point: Lifted


@dataclass
class AggregatedBenders:
    """The problem the branch and cut solves: the original one (the partition is trivial), a
    feasible start and its objective."""

    data: object
    start: np.ndarray
    upper: float = math.inf


class FacilityBendersProblem(FacilityBase):
    """p-median / UFL by branch-and-Benders-cut on the AID contract (module docstring).

    Parameters
    ----------
    mip_gap, improve
        See :class:`~aidopt.decomposition.plugins.facility.FacilityBase`.
    lp_rounds : int
        At most this many rounds of the cutting-plane LP before the branch and cut (0: none).
    support_mip : bool
        p-median: before the branch and cut, solve the problem restricted to the sites the LP
        opens fractionally and the start's (``_support_mip``): a better start, and with it
        fewer sites left by reduced-cost fixing (default True).
    parts : bool
        p-median: before the support MIP, re-optimize the start part by part (``_by_parts``:
        POPMUSIC, each part an r-median of :data:`PART_SIZES` sites solved exactly); default
        True.
    branching : {"auto", "sites", "balls"}
        :func:`solve_benders`'s branching: ``"auto"`` (default) chooses by
        :func:`branching_rule` for the branch and cut and the parts, and branches on balls in
        the support MIP; ``"sites"`` / ``"balls"`` everywhere.
    """

    name = "facility-benders"
    element = "customers"
    native_methods = ("benders",)
    method_name = "branch and cut (SCIP) with per-customer Benders cuts, no aggregation"

    def __init__(self, mip_gap: float = 1e-7, improve: int = 3, lp_rounds: int = 200,
                 support_mip: bool = True, parts: bool = True, branching: str = "auto"):
        super().__init__(mip_gap=mip_gap, improve=improve)
        if branching not in ("auto", "sites", "balls"):
            raise ValueError(f"branching must be 'auto', 'sites' or 'balls', got {branching!r}")
        self.branching = branching
        if not (isinstance(lp_rounds, int) and not isinstance(lp_rounds, bool) and lp_rounds >= 0):
            raise ValueError(f"lp_rounds must be a non-negative integer, got {lp_rounds!r}")
        self.lp_rounds = int(lp_rounds)
        self.support_mip = bool(support_mip)
        self.parts = bool(parts)

    # ----------------------------------------------------------------- contract
    def size(self, data) -> int:
        return int(data.n_customers)

    def default_r0(self, size: int, data) -> float:
        return 1.0

    def min_clusters(self, data) -> int:
        return int(data.n_customers)

    def fallbacks(self, solver: str) -> list[tuple[str, str | None]]:
        """None: a failed branch and cut is reported (with its incumbent and bound when it
        has them), not re-solved as a full MIP that costs given by coordinates cannot build."""
        return []

    def initial_partition(self, data, n_clusters, rng, solve) -> tuple[Partition, Lifted]:
        """The trivial partition; the cutting-plane LP (``lp_rounds``, within the phase's share
        of the clock) and the better of the greedy solution (cost matrices) and the LP's
        rounding, each improved (the run's answer if it stops before the branch and cut)."""
        keep_clock(data, solve)
        if data.capacity is not None:
            raise SolverError("solver='benders' solves uncapacitated problems; capacitated "
                              "facility location is solved directly (aid=False, a MIP solver)")
        levels = NearestSites.of(data)
        lp = None
        if self.lp_rounds:
            lp = lp_by_cuts(levels, data.demand[levels.customers], data.fixed, data.p,
                            max_rounds=self.lp_rounds, time_limit=solve.remaining())
            logger.info("cutting-plane LP: %s after %d rounds, %d cuts, %d of %d sites, "
                        "LP bound %.10g", lp.status, lp.rounds, lp.cuts, lp.columns,
                        levels.n_sites, lp.value)
        left = solve.remaining()
        point = self._start(data, lp, None if left is None else SWAP_SHARE * left)
        if self.parts:
            left = solve.remaining()
            point = self._by_parts(data, lp, point, None if left is None else PARTS_SHARE * left)
        if self.support_mip:
            left = solve.remaining()
            point = self._support_mip(data, lp, point, None if left is None else SUPPORT_SHARE * left)
        data._benders_start = BendersStart(lp, point)
        return self.trivial_partition(data), point

    def aggregate(self, data, partition: Partition, previous: Iterate | None = None):
        if partition.n_clusters != partition.n:
            raise ValueError("the branch and cut solves the original problem: its partition is "
                             "the trivial one (every customer its own cluster)")
        if previous is not None:
            point = self.greedy_point(data, np.asarray(previous.lifted.solution["open"]))
        else:  # the start phase's point, improved there (on graphs a round costs every row)
            kept = getattr(data, "_benders_start", None)
            point = kept.point if kept is not None else self._start(data, None)
        return AggregatedBenders(data, np.asarray(point.solution["open"]),
                                 data.objective(point.solution["open"], point.solution["assign"]))

    def build(self, aggregated: AggregatedBenders, form=None):
        """The radius formulation at every level (the problem the branch and cut solves, with
        all its cuts written out): what ``write_models`` writes. Cost matrices only."""
        from aidopt.decomposition.plugins.facility_radius import CostLevels, FacilityRadiusProblem
        from aidopt.models import facility_radius as rmodel

        data = aggregated.data
        if not data.dense:
            raise SolverError("no Pyomo model is built from coordinates (EuclideanCosts): the "
                              "full radius formulation would hold every customer-site pair")
        levels = CostLevels.of(data)
        return rmodel.create_instance(FacilityRadiusProblem.model_data(
            levels, levels.n_levels - 1, data.demand[levels.customers], data))

    def solve_native(self, method, aggregated: AggregatedBenders, previous, partition, *, tol,
                     time_limit, options):
        """``"benders"``: :func:`solve_benders` from the cutting-plane LP's binding cuts and the
        best solution so far. ``options``: ``log`` (SCIP's output)."""
        unknown = set(options) - {"log"}
        if unknown:
            raise ValueError(f"solver='benders' takes the option 'log' only, got {sorted(unknown)}")
        data = aggregated.data
        kept = getattr(data, "_benders_start", None)
        res, sites = fixed_branch_and_cut(data, kept.lp if kept is not None else None,
                                          aggregated.start, aggregated.upper,
                                          time_limit=time_limit, mip_gap=self.mip_gap,
                                          log=bool(options.get("log", False)),
                                          branching=self.branching)
        if sites.size < data.n_sites:
            logger.info("reduced-cost fixing: the branch and cut saw the %d of %d sites a "
                        "solution below %.10g can open", sites.size, data.n_sites,
                        aggregated.upper)
        logger.info("branch and cut: %d nodes, %s", res.nodes,
                    f"{res.ball_branchings} branchings on balls (SCIP's own on sites elsewhere)"
                    if res.branching == "balls" else "SCIP's branching on sites")
        status = {"optimal": SolveStatus.OPTIMAL, "time_limit": SolveStatus.TIME_LIMIT,
                  "interrupted": SolveStatus.INTERRUPTED}.get(res.status, SolveStatus.ERROR)
        has = res.y is not None
        outcome = SolveOutcome(status, res.objective if has else None, None, has, "benders", "",
                               0.0, message=res.status,
                               extra={"nodes": res.nodes, "separations": res.calls,
                                      "cuts": res.cuts, "sorted_sites": res.width,
                                      "sites_kept": sites.size,
                                      "separation_seconds": res.separation_seconds,
                                      "ball_branchings": res.ball_branchings},
                               bound=res.bound if math.isfinite(res.bound) else None)
        return res.y, outcome

    def lift(self, model, outcome, partition, aggregated: AggregatedBenders, data) -> Lifted:
        open_sites = np.flatnonzero(np.asarray(model) > 0.5)
        if open_sites.size == 0:
            raise SolverError("the branch and cut opened no site")
        final_open, assign = self._improve(data, open_sites)
        if data.objective(final_open, assign) > aggregated.upper:
            # SCIP's answer is dearer than the start it was given (possible where SCIP's costs,
            # divided by the largest one, fall below its tolerances): keep the start
            final_open, assign = self._improve(data, aggregated.start)
        mip_gap = self._mip_gap(outcome, data)
        info = {"mip_gap": mip_gap, "open_sites": float(final_open.size)}
        info.update({k: float(v) for k, v in outcome.extra.items()})
        return Lifted({"open": final_open, "assign": assign}, None, info)

    def lower_bound(self, outcome, partition, data, lifted=None) -> float | None:
        """The larger of SCIP's dual bound and the cutting-plane LP's value."""
        kept = getattr(data, "_benders_start", None)
        lp_value = kept.lp.value if kept is not None and kept.lp is not None else None
        bounds = [b for b in (super().lower_bound(outcome, partition, data, lifted),
                              self._proven(data, lp_value)) if b is not None]
        return max(bounds) if bounds else None

    def split(self, partition: Partition, data, lifted: Lifted) -> Split:
        """Nothing is aggregated: the branch and cut's bound is on the original problem."""
        return Split(None, 0)

    # ----------------------------------------------------------------- helpers
    def _start(self, data, lp: CutLP | None, seconds: float | None = None) -> Lifted:
        """The cheapest of the improved greedy solution (cost matrices) and the improved
        rounding of the LP's ``y`` (the p largest; UFL: those at 1/2 or more, at least one);
        for the p-median then improved by swaps and perturbed swaps
        (:func:`~aidopt.decomposition.plugins.facility.perturbed_swaps`, within ``seconds``)
        among the candidate sites of :func:`swap_candidates`."""
        candidates = []
        if data.dense:
            served = data.demand > 0
            candidates.append(_greedy(data.costs[served], data.demand[served], data.fixed, data.p))
        if lp is not None and np.isfinite(lp.value):
            candidates.append(_rounded(lp.y, data.p, data.fixed))
        if not candidates:  # coordinates and no LP: p (UFL: one) sites spread over the indices
            k = data.p if data.p is not None and data.fixed is None else 1
            candidates.append(np.unique(np.linspace(0, data.n_sites - 1, k).astype(np.int64)))
        points = [self.greedy_point(data, c) for c in candidates]
        best = min(points, key=lambda pt: data.objective(pt.solution["open"],
                                                         pt.solution["assign"]))
        if data.p is None or data.fixed is not None or data.p < 2:
            return best
        served = np.flatnonzero(data.demand > 0)
        sites = swap_candidates(data, lp, best.solution["open"])
        if sites.size <= data.p:
            return best
        deadline = None if seconds is None else time.perf_counter() + max(0.0, seconds)
        weights = lp.y[sites] if lp is not None and np.isfinite(lp.value) else None
        cols = perturbed_swaps(data.cost_columns(sites)[served], data.demand[served],
                               np.searchsorted(sites, best.solution["open"]), weights=weights,
                               deadline=deadline)
        swapped = self.greedy_point(data, sites[cols])
        return min((best, swapped), key=lambda pt: data.objective(pt.solution["open"],
                                                                  pt.solution["assign"]))


    def _by_parts(self, data, lp: CutLP | None, point: Lifted, seconds: float | None) -> Lifted:
        """The p-median start re-optimized part by part (:func:`local_reoptimization`, parts
        of ``r`` open sites solved exactly by :meth:`_solve_part`; each ``r`` of
        :data:`PART_SIZES` below p in turn, the next from where no part of the last improves)
        within ``seconds``. Run when the swap search could not take every site
        (:func:`swap_candidates`: more than :data:`SWAP_ENTRIES` customer-site pairs; below
        that the swaps and the branch and cut find the optimum sooner, measured in
        docs/benchmarks.md) and the start is above the LP's bound (by more than the rounding of
        an integral objective); else ``point``."""
        if data.p is None or data.fixed is not None:
            return point
        sizes = [r for r in PART_SIZES if r < data.p]
        n_served = int(np.count_nonzero(data.demand > 0))
        upper = data.objective(point.solution["open"], point.solution["assign"])
        if (not sizes or n_served * data.n_sites <= SWAP_ENTRIES
                or (lp is not None and np.isfinite(lp.value)
                    and at_bound(upper, lp.value, data.integral))):
            return point
        levels = NearestSites.of(data)
        near = levels.order[:, :PART_CANDIDATES].astype(np.int64)
        t0 = time.perf_counter()
        deadline = None if seconds is None else t0 + max(0.0, seconds)
        open_sites = point.solution["open"]
        for r in sizes:
            if deadline is not None and time.perf_counter() >= deadline:
                break
            open_sites = local_reoptimization(data, levels.customers, near, open_sites,
                                              self._solve_part, r=r, deadline=deadline)
            logger.info("re-optimization by parts of %d sites: %.10g after %.1f s", r,
                        float(data.demand @ data.cost_columns(open_sites).min(axis=1)),
                        time.perf_counter() - t0)
        found = self.greedy_point(data, open_sites)
        value = data.objective(found.solution["open"], found.solution["assign"])
        return found if value < upper else point

    def _solve_part(self, part, start: np.ndarray, deadline: float | None) -> np.ndarray | None:
        """One part of :meth:`_by_parts` solved as this plug-in solves a p-median: the
        cutting-plane LP, then (unless its bound shows ``start`` optimal) reduced-cost fixing
        and the branch and cut, within :data:`PART_SECONDS` and ``deadline``."""
        now = time.perf_counter()
        seconds = PART_SECONDS if deadline is None else min(PART_SECONDS, deadline - now)
        if seconds <= 0:
            return None
        levels = NearestSites.of(part)
        w = part.demand[levels.customers]
        lp = lp_by_cuts(levels, w, None, part.p, time_limit=seconds)
        upper = float(part.demand @ part.costs[:, start].min(axis=1))
        if at_bound(upper, lp.value, part.integral):
            return start
        left = seconds - (time.perf_counter() - now)
        if left <= 0:
            return None
        res, _ = fixed_branch_and_cut(part, lp, start, upper, time_limit=left,
                                      mip_gap=self.mip_gap, branching=self.branching)
        return None if res.y is None else np.flatnonzero(res.y > 0.5)

    def _support_mip(self, data, lp: CutLP | None, point: Lifted, seconds: float | None) -> Lifted:
        """The p-median restricted to the sites S the cutting-plane LP opens (``y > 0``) and
        the start's open sites, solved by :func:`solve_benders` on those sites only within
        ``seconds`` (the start as its first incumbent): its best solution is feasible for the
        original problem, and often better than the swaps' (they move one site at a time; the
        LP's fractional sites come in groups). Run when the start is above the LP's bound (by
        more than the rounding of an integral objective) and S holds at most
        :data:`SUPPORT_SITES` of the sites; else, or if nothing better is found, ``point``."""
        if (data.p is None or data.fixed is not None or lp is None or lp.reduced is None
                or not np.isfinite(lp.value)):
            return point
        upper = data.objective(point.solution["open"], point.solution["assign"])
        if at_bound(upper, lp.value, data.integral):
            return point
        sites = np.union1d(np.flatnonzero(lp.y > 1e-9), point.solution["open"])
        if sites.size > SUPPORT_SITES * data.n_sites or sites.size <= data.p:
            return point
        levels = NearestSites.of(data)
        restricted = NearestSites(data.with_sites(sites))
        root = lp.binding
        if root is not None:
            root = (root[0], root[1], kept_widths(levels, root, sites))
        t0 = time.perf_counter()
        res = solve_benders(restricted, data.demand[restricted.customers], None, data.p,
                            cost_scale=float(np.max(data.cost_row_extremes()[1])),
                            root_cuts=root, start=np.searchsorted(sites, point.solution["open"]),
                            time_limit=seconds, mip_gap=self.mip_gap,
                            branching="balls" if self.branching == "auto" else self.branching)
        if res.y is None:
            return point
        found = self.greedy_point(data, sites[np.flatnonzero(res.y > 0.5)])
        value = data.objective(found.solution["open"], found.solution["assign"])
        logger.info("support MIP on %d sites: %s, %.10g (start %.10g) in %.1f s", sites.size,
                    res.status, value, upper, time.perf_counter() - t0)
        return found if value < upper else point


def at_bound(upper: float, bound: float, integral: bool) -> bool:
    """A solution of objective ``upper`` is optimal by ``bound``: every objective value an
    integer and ``bound`` above ``upper - 1`` (by more than 1e-9 relative, so rounding never
    decides); else ``upper`` within 1e-9 relative of ``bound``."""
    tol = 1e-9 * max(1.0, abs(upper))
    return upper - bound < 1.0 - tol if integral else upper - bound <= tol


def branching_rule(data) -> str:
    """:func:`solve_benders`'s branching for the (whole or part) problem ``data``: on balls for a
    p-median without opening costs with at least :data:`BALL_CUSTOMERS_PER_SITE` customers per
    open site (a ball then holds many sites, and closing one site alone changes little: its
    neighbours take its customers), else SCIP's own on the sites (docs/benchmarks.md, "Branching
    on balls")."""
    many = np.count_nonzero(data.demand > 0) >= BALL_CUSTOMERS_PER_SITE * (data.p or 0)
    return "balls" if data.p is not None and data.fixed is None and many else "sites"


def fixed_branch_and_cut(data, lp: CutLP | None, start: np.ndarray, upper: float, *,
                         time_limit: float | None, mip_gap: float, log: bool = False,
                         branching: str = "auto") -> tuple[BendersResult, np.ndarray]:
    """Reduced-cost fixing (:func:`kept_sites`), then :func:`solve_benders` on the kept sites
    from ``lp``'s binding cuts and the solution ``start`` (open sites, objective ``upper``),
    branching as :func:`branching_rule` says (``branching="auto"``) or as given.

    Returns the result, with ``y`` over all sites, ``bound`` capped at ``upper`` (a solution
    opening a removed site costs at least that) and ``width`` set to the sorted sites per
    customer, and the kept sites."""
    levels = NearestSites.of(data)
    root = lp.binding if lp is not None else None
    sites = kept_sites(lp, upper, data.integral, start, data.n_sites)
    if sites.size < data.n_sites:  # the branch and cut sees the kept sites only
        if root is not None:
            root = (root[0], root[1], kept_widths(levels, root, sites))
        levels = NearestSites(data.with_sites(sites))
        start = np.searchsorted(sites, start)
    res = solve_benders(levels, data.demand[levels.customers],
                        None if data.fixed is None else data.fixed[sites], data.p,
                        cost_scale=float(np.max(data.cost_row_extremes()[1])),
                        root_cuts=root, start=start, time_limit=time_limit,
                        mip_gap=mip_gap, log=log,
                        branching=branching_rule(data) if branching == "auto" else branching)
    if res.y is not None:
        res.y = _on_sites(res.y, sites, data.n_sites)
    res.bound = min(res.bound, upper)
    res.width = levels.width
    return res, sites


def swap_candidates(data, lp: CutLP | None, open_sites: np.ndarray) -> np.ndarray:
    """The sites :func:`swap_search` may open: every site when the customers x sites matrix has
    at most :data:`SWAP_ENTRIES` entries; else the open ones and the LP's best (zero reduced
    cost and largest fraction first; without an LP, the open ones only), as many as fit."""
    n_served = int(np.count_nonzero(data.demand > 0))
    room = max(int(data.p) + 1, SWAP_ENTRIES // max(1, n_served))
    if data.n_sites <= room:
        return np.arange(data.n_sites)
    chosen = np.asarray(open_sites, dtype=np.int64)
    if lp is not None and lp.reduced is not None and np.isfinite(lp.value):
        order = np.lexsort((-lp.y, lp.reduced))
        want = min(room, max(2 * int(np.count_nonzero(lp.y > 1e-9)), 4 * int(data.p)))
        chosen = np.concatenate([chosen, order[:max(0, want - chosen.size)]])
    return np.unique(chosen)


def kept_sites(lp: CutLP | None, upper: float, integral: bool, open_sites: np.ndarray,
               n_sites: int) -> np.ndarray:
    """The sites a solution cheaper than ``upper`` may open (reduced-cost fixing): a solution
    opening site ``j`` costs at least the LP's bound plus ``j``'s reduced cost (both from the
    same duals: a Lagrangian bound), so sites where that exceeds ``upper`` (``upper - 1``
    when every objective value is an integer) are left out. ``open_sites`` (the start's) are
    always kept; every site without a finished LP."""
    if lp is None or lp.reduced is None or not (np.isfinite(lp.value) and np.isfinite(upper)):
        return np.arange(n_sites)
    better = upper - 1.0 if integral else upper  # the most a better solution costs
    keep = lp.value + np.maximum(lp.reduced, 0.0) <= better + 1e-9 * max(1.0, abs(upper))
    keep[np.asarray(open_sites, dtype=np.int64)] = True
    return np.flatnonzero(keep)


def kept_widths(levels, cuts, sites: np.ndarray) -> np.ndarray:
    """The widths of ``cuts`` ``(customer, level, width)`` over the kept ``sites`` only: how
    many of each cut's sites are kept (the cut's sites when the others are left out)."""
    keep = np.zeros(levels.n_sites, dtype=bool)
    keep[sites] = True
    cut_i, width = cuts[0], cuts[2]
    out = np.zeros(cut_i.size, dtype=np.int64)
    step = max(1, BLOCK_ENTRIES // (int(width.max(initial=0)) + 1))
    for start in range(0, cut_i.size, step):
        part = slice(start, start + step)
        span = int(width[part].max(initial=0))
        inside = np.arange(span)[None, :] < width[part, None]
        out[part] = (keep[levels.order[cut_i[part], :span]] & inside).sum(axis=1)
    return out


def _on_sites(y: np.ndarray, sites: np.ndarray, n_sites: int) -> np.ndarray:
    """``y`` over the kept ``sites`` as a vector over all sites (0 elsewhere)."""
    out = np.zeros(n_sites)
    out[sites] = y
    return out


def _rounded(y: np.ndarray, p: int | None, fixed) -> np.ndarray:
    """Open sites from LP fractions: the ``p`` largest (p-median); with opening costs those at
    1/2 or more (at most ``p``, at least the largest)."""
    order = np.argsort(-y, kind="stable")
    if p is not None and fixed is None:
        return np.sort(order[:p])
    keep = order[y[order] >= 0.5]
    if p is not None:
        keep = keep[:p]
    return np.sort(keep if keep.size else order[:1])
