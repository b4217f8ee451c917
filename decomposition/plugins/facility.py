r"""AID plug-in for facility location over candidate sites: p-median and UFL (docs/facility.md).

The elements partitioned are the **candidate sites**. For a partition of the sites into clusters,

* **Aggregate**: cluster K opens at :math:`\bar f_K = \min_{j \in K} f_j` and serves customer i at
  :math:`\bar c_{iK} = \min_{j \in K} c_{ij}` (column minima per cluster, one
  ``numpy.minimum.reduceat`` over the sites sorted by cluster). Every solution of the original
  problem maps to one of the aggregated problem at no greater cost (a cluster is open when one of
  its sites is; "at most p open" survives), so the aggregated optimum, and the MIP solver's dual
  bound on it, bound the original optimum from below.
* **Model size**: pairs (i, K) that can never serve in an optimal aggregated solution are left
  out (UFL: :math:`w_i \bar c_{iK} > \min_L (\bar f_L + w_i \bar c_{iL})`; p-median without opening
  costs: K beyond customer i's :math:`(|K| - p + 1)`-th nearest cluster). Both keep the
  aggregated optimum unchanged (proofs in docs/facility.md); no n x |J| model is ever built
  unless every site is its own cluster.
* **Lift**: every customer goes to its cheapest open cluster; in every open cluster K the real
  site :math:`j_K` minimising :math:`f_j + \sum_{i \in S_K} w_i c_{ij}` over K is opened, and every
  customer is served by its cheapest open site: a feasible solution, an upper bound ``E_t``. A
  few rounds of the alternating (Cooper) improvement, and for the p-median a greedy fill to p
  sites, lower it further without touching the optimality test.
* **Optimality condition**: in every open cluster, :math:`j_K` attains :math:`\bar f_K` and
  :math:`\bar c_{iK}` for every customer it serves. Then the lifted cost is at most the
  aggregated objective, itself at most the optimum: the lifted solution is optimal.
* **Split**: a cluster that violates it is cut into Voronoi cells around :math:`j_K` and the
  sites that attain the minima :math:`j_K` misses (the cheapest-to-open site, the cheapest site
  of each customer it serves wrongly), in site coordinates when known, else in the served
  customers' cost profiles. Every cut makes at least two children, so AID ends after at most
  |J| - |K_0| splits, in the worst case with every site its own cluster: the original model.
* **Bound and certificate**: the bound of an iteration is the MIP solver's dual bound of the
  aggregated MIP (also for a MIP stopped at its time limit), rounded up when every cost is an
  integer; the certificate (method ``mip_bound``) checks the best lifted solution's feasibility
  and its gap to the best bound.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np
from aidopt.decomposition.partition import Partition
from aidopt.decomposition.protocol import GAP_FLOOR, AIDProblem, Iterate, Lifted, Split
from aidopt.models import facility as fmodel

from aidopt.data.facility import bound_costs
from aidopt.results import Certificate
from aidopt.solvers import ProblemClass, SolverError

__all__ = ["FacilityBase", "FacilityProblem", "AggregatedFacility", "FacilityState", "bounded",
           "cluster_minima"]

REL_TOL = 1e-9

#: entries of a customers x candidates block that :func:`swap_search` handles at a time
SWAP_BLOCK = 1 << 22
PROFILE_DIM = 32


def cluster_minima(values: np.ndarray, labels: np.ndarray, n_clusters: int) -> np.ndarray:
    """Column-wise minima per cluster: ``out[..., K] = min_{j: labels[j] = K} values[..., j]``."""
    order = np.argsort(labels, kind="stable")
    starts = np.searchsorted(labels[order], np.arange(n_clusters))
    return np.minimum.reduceat(values[..., order], starts, axis=-1)


@dataclass
class AggregatedFacility:
    """One aggregated problem: the customers in the model (positive demand), the cluster minima
    ``cbar`` (n_model x K) and ``fbar`` (K,) and the model's arrays."""

    customers: np.ndarray
    cbar: np.ndarray
    fbar: np.ndarray | None
    model: fmodel.FacilityModelData | None
    pruned: int
    safe: np.ndarray | None = None
    """Pairs the safe rules keep (``None``: all)."""
    near: np.ndarray | None = None
    """Pairs within each customer's near set (``None``: no far columns)."""


@dataclass
class FacilityState:
    """What a lifted solution carries to ``split`` / ``certify``: the open clusters, the site
    picked in each, every model customer's cluster (``served``), each open cluster's excess
    (lifted cost minus aggregated cost of its customers, >= 0) and the tolerance."""

    open_clusters: np.ndarray
    picks: np.ndarray
    served: np.ndarray
    excess: np.ndarray
    eps: float
    capped: np.ndarray | None = None
    """Model customers whose far column stood in for less than their cheapest open cluster."""
    uncapped: np.ndarray | None = None
    """Model customers to keep every pair for from now on (their far column once bound)."""


class FacilityBase(AIDProblem):
    """What every facility-location plug-in shares (:class:`FacilityProblem` over site clusters,
    :class:`aidopt.decomposition.plugins.facility_radius.FacilityRadiusProblem` over each customer's
    cost levels): aggregated MIPs solved to ``mip_gap``, the MIP dual bound as the lower bound,
    the lifted solution's cost, the ``mip_bound`` certificate and the improvement of a lifted set
    of open sites.

    Parameters
    ----------
    mip_gap : float
        Relative gap the aggregated MIPs are solved to (HiGHS ``mip_rel_gap`` and the others'
        equivalents); keep it well below the run's ``tol``.
    improve : int
        Rounds of the alternating improvement of each lifted solution (0: none).
    """

    problem_class = ProblemClass.MILP
    needs_duals = False

    def __init__(self, mip_gap: float = 1e-7, improve: int = 3):
        if not (isinstance(mip_gap, float | int) and not isinstance(mip_gap, bool) and 0 <= mip_gap < 1):
            raise ValueError(f"mip_gap must be in [0, 1), got {mip_gap!r}")
        if not (isinstance(improve, int) and not isinstance(improve, bool) and improve >= 0):
            raise ValueError(f"improve must be a non-negative integer, got {improve!r}")
        self.mip_gap = float(mip_gap)
        self.improve = int(improve)

    def solver_defaults(self, solver: str) -> dict:
        """Aggregated MIPs to a relative gap of ``mip_gap`` (the solvers' defaults are 1e-4)."""
        g = self.mip_gap
        return {"gurobi": {"MIPGap": g}, "highs": {"mip_rel_gap": g}, "scip": {"limits/gap": g},
                "cplex": {"mip_tolerances_mipgap": g}, "xpress": {"miprelstop": g}}.get(solver, {})

    def fallbacks(self, solver: str) -> list[tuple[str, str | None]]:
        """HiGHS when another MIP solver fails on an aggregated MIP (e.g. SCIP's "error in LP
        solver" on costs of 1e9); none for HiGHS itself."""
        return [] if solver == "highs" else [("highs", None)]

    def dimensions(self, data) -> dict[str, int]:
        dims = {"customers": data.n_customers, "sites": data.n_sites}
        if data.p is not None:
            dims["p"] = int(data.p)
        return dims

    def on_nonoptimal(self, outcome) -> bool:
        """A MIP stopped at its time limit or by Ctrl-C with an incumbent: any open set lifts
        to a feasible solution."""
        return outcome.stopped and outcome.has_solution

    def lower_bound(self, outcome, partition, data, lifted=None) -> float | None:
        """The aggregated MIP's dual bound (never its incumbent), rounded up when every objective
        value is an integer."""
        return self._proven(data, outcome.bound)

    @staticmethod
    def _proven(data, b) -> float | None:
        """A solver's bound as reported: rounded up when every objective value is an integer
        (None when there is none)."""
        if b is None or not math.isfinite(b):
            return None
        if data.integral:
            b = float(math.ceil(b - 1e-6 * max(1.0, abs(b))))
        return float(b)

    def evaluate(self, data, lifted: Lifted) -> float:
        sol = lifted.solution
        if "shares" in sol:  # at the user's costs (also where the solver saw bounded ones)
            costs = data.costs if data.raw_costs is None else data.raw_costs
            fixed = data.fixed if data.raw_fixed is None else data.raw_fixed
            total = float((data.demand[:, None] * costs * sol["shares"]).sum())
            if fixed is not None:
                total += float(fixed[sol["open"]].sum())
            return total
        return data.objective(sol["open"], sol["assign"])

    def gap_floor(self, data) -> float:
        """:data:`~.protocol.GAP_FLOOR` times the data's own lower bound
        (:meth:`initial_bound`), the smallest positive float when that is 0: scale-invariant,
        and never above any solution's cost, so the gap stays relative to the objective. (The
        cost of serving every customer from its dearest site, the earlier floor, let one huge
        cost, a forbidden pair, certify answers 1 % above the optimum.)"""
        return max(GAP_FLOOR * self.initial_bound(data), np.finfo(float).tiny)

    def certify(self, data, best: Iterate, *, bound: Iterate, solve, tol, feasibility_tol=1e-6,
                history=()) -> Certificate:
        E = best.E_t
        sol = best.lifted.solution
        open_sites = np.asarray(sol["open"])
        over_p = 0.0 if data.p is None else float(max(0, open_sites.size - data.p))
        assign = np.asarray(sol["assign"])
        closed = float(np.count_nonzero(~np.isin(assign, open_sites)))
        residuals = {"sites open beyond p": over_p, "customers at a closed site": closed}
        gaps = [r.info.get("mip_gap", math.nan) for r in history]
        residuals["largest aggregated MIP gap"] = max((g for g in gaps if math.isfinite(g)),
                                                      default=math.nan)
        # the data's own bound is proven too (an optimum of 0 is certified by it)
        lower = (-math.inf if bound is None or bound.bound is None
                 else min(max(bound.bound, self.initial_bound(data)), E))
        rel = (E - lower) / max(self.gap_floor(data), abs(E)) if math.isfinite(lower) else math.inf
        feasible = over_p == 0 and closed == 0
        holds = None if best.split is None else best.split.holds
        return Certificate(
            method="mip_bound", certified=bool(feasible and rel <= tol), primal_objective=E,
            dual_objective=lower, relative_gap=float(rel), residuals=residuals, tol=tol,
            feasibility_tol=feasibility_tol, sign_condition=holds,
            checked=["sites open beyond p", "customers at a closed site"],
            note="bound = the best dual (branch-and-bound) bound of an aggregated MIP, a "
                 "relaxation of the original problem (docs/facility.md)"
                 + ("; rounded up: every cost is an integer" if data.integral else ""),
        )

    def initial_bound(self, data) -> float:
        """Every customer served at its cheapest site, plus the cheapest opening cost when
        sites cost to open (at least one opens): a bound from the data alone."""
        bound = float(np.dot(data.demand, data.cost_row_minima()))
        if data.fixed is not None:
            bound += float(data.fixed.min())
        return bound

    def greedy_point(self, data, start: np.ndarray | None = None) -> Lifted:
        """A feasible solution before any solve: the greedy open set (``start`` if given),
        improved (:meth:`_improve`); the run returns it if it stops before its first iterate."""
        if start is None:
            served = data.demand > 0
            start = _greedy(data.costs[served], data.demand[served], data.fixed, data.p)
        final_open, assign = self._improve(data, start)
        return Lifted({"open": final_open, "assign": assign}, None, {})

    def public_solution(self, best: Iterate, certificate) -> dict:
        sol = dict(best.lifted.solution)
        sol["open"] = np.asarray(sol["open"], dtype=np.int64)
        sol["assign"] = np.asarray(sol["assign"], dtype=np.int64)
        return sol

    def _mip_gap(self, outcome, data) -> float:
        """The solve's own relative gap (incumbent vs its dual bound; NaN when unknown)."""
        if outcome.objective is None or outcome.bound is None or not math.isfinite(outcome.bound):
            return math.nan
        return max(0.0, outcome.objective - outcome.bound) / max(self.gap_floor(data),
                                                                 abs(outcome.objective))

    def _improve(self, data, open_sites: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Assign every customer to its cheapest open site; for the p-median add sites greedily
        up to p; then ``improve`` rounds of the alternating heuristic (move each open site to the
        best site for the customers it serves), each within the run's clock (a round the clock
        ends is dropped: with costs from coordinates a round prices every customer at every
        site). Never increases the cost."""
        w = data.demand
        deadline = _deadline(data)
        open_sites = np.asarray(open_sites, dtype=np.int64)
        if (data.p is not None and data.fixed is None and open_sites.size < data.p
                and data.dense):  # (costs from coordinates: fewer than p stay feasible)
            open_sites = _greedy_fill(data.costs, w, open_sites, data.p)
        assign = open_sites[np.argmin(data.cost_columns(open_sites), axis=1)]
        cost = data.objective(open_sites, assign)
        for _ in range(self.improve):
            moved = np.empty_like(open_sites)
            for r, j in enumerate(open_sites):
                if deadline is not None and time.perf_counter() > deadline:
                    return np.sort(open_sites), assign
                mine = np.flatnonzero(assign == j)
                total = w[mine] @ data.cost_rows(mine)
                if data.fixed is not None:
                    total = total + data.fixed
                moved[r] = int(np.argmin(total)) if total[j] > total.min() else j
            moved = np.unique(moved)
            new_assign = moved[np.argmin(data.cost_columns(moved), axis=1)]
            new_cost = data.objective(moved, new_assign)
            if not new_cost < cost - REL_TOL * abs(cost):
                break
            open_sites, assign, cost = moved, new_assign, new_cost
        return np.sort(open_sites), assign


def keep_clock(data, solve) -> None:
    """Let the heuristics of later steps (:meth:`FacilityBase._improve` in a lift) see the
    run's clock: ``solve.remaining()`` (:class:`~aidopt.decomposition.run.PluginSolve`), kept
    with the data like the plug-ins' other per-data caches."""
    data._clock = solve


def _deadline(data) -> float | None:
    """``time.perf_counter()`` value at which the run's time (or the current phase's share)
    ends, when :func:`keep_clock` gave one."""
    clock = getattr(data, "_clock", None)
    left = None if clock is None else clock.remaining()
    return None if left is None else time.perf_counter() + left


class FacilityProblem(FacilityBase):
    """p-median / UFL under AID over the candidate sites.

    Parameters
    ----------
    mip_gap, improve
        See :class:`FacilityBase`.
    max_children : int
        At most this many Voronoi cells per violating cluster (the picked site and the sites that
        carry the largest missed minima); at least 2.
    prune : bool
        Leave out pairs that provably never serve (docs/facility.md); False builds every pair.
    """

    name = "facility"
    element = "sites"

    def __init__(self, mip_gap: float = 1e-7, max_children: int = 8, improve: int = 3,
                 prune: bool = True, far: bool = False, far_factor: float = 1.5, far_min: int = 4):
        super().__init__(mip_gap=mip_gap, improve=improve)
        if not (isinstance(max_children, int) and max_children >= 2):
            raise ValueError(f"max_children must be an integer >= 2, got {max_children!r}")
        self.max_children = int(max_children)
        self.prune = bool(prune)
        if not (isinstance(far_factor, float | int) and far_factor >= 1):
            raise ValueError(f"far_factor must be >= 1, got {far_factor!r}")
        if not (isinstance(far_min, int) and far_min >= 1):
            raise ValueError(f"far_min must be a positive integer, got {far_min!r}")
        self.far = bool(far)
        self.far_factor = float(far_factor)
        self.far_min = int(far_min)

    # ----------------------------------------------------------------- contract

    def size(self, data) -> int:
        return data.n_sites

    def default_r0(self, size: int, data) -> float:
        """|K_0| = max(2p, sqrt(n_sites) * 3) clusters, capped at the sites (docs/facility.md)."""
        k = 3.0 * math.sqrt(size)
        if data.p is not None:
            k = max(k, 2.0 * data.p)
        return min(1.0, k / size)

    def min_clusters(self, data) -> int:
        return min(data.n_sites, data.p + 1) if data.p is not None else 1

    def initial_partition(self, data, n_clusters, rng, solve) -> tuple[Partition, Lifted]:
        keep_clock(data, solve)
        if data.capacity is not None:
            raise SolverError("capacitated facility location is solved directly (aid=False); "
                              "AID's lift does not handle capacities (docs/facility.md)")
        if n_clusters >= data.n_sites:
            return self.trivial_partition(data), self.greedy_point(data)
        from scipy.cluster.vq import kmeans2

        features = site_features(data, rng)
        with warnings.catch_warnings():  # empty clusters disappear in from_labels
            warnings.simplefilter("ignore")
            labels = kmeans2(features, n_clusters, iter=10, minit="++", seed=rng)[1]
        return Partition.from_labels(labels), self.greedy_point(data)

    def aggregate(self, data, partition: Partition, previous: Iterate | None = None):
        customers = np.flatnonzero(data.demand > 0)
        K = partition.n_clusters
        trivial = K == data.n_sites and np.array_equal(partition.labels, np.arange(K))
        costs = data.costs[customers]
        cbar = costs if trivial else cluster_minima(costs, partition.labels, K)
        fbar = None
        if data.fixed is not None:
            fbar = data.fixed.copy() if trivial else cluster_minima(data.fixed, partition.labels, K)
        w = data.demand[customers]
        safe = self._keep(cbar, fbar, w, data.p, data.capacity) if self.prune else None
        near = uncapped = None
        if self.far and not trivial and data.capacity is None:
            uncapped = np.zeros(customers.size, dtype=bool)
            if previous is not None:
                st = previous.lifted.state
                uncapped |= st.uncapped
                assign = previous.lifted.solution["assign"][customers]
                reference = data.costs[customers, assign]
            else:
                reference = cbar[:, _greedy(cbar, w, fbar, data.p)].min(axis=1)
            near = self._near(cbar, reference)
        aggregated = AggregatedFacility(customers, cbar, fbar, None, 0, safe, near)
        capacity = None
        if data.capacity is not None:
            capacity = np.bincount(partition.labels, weights=data.capacity, minlength=K)
        aggregated.model = self.model_data(aggregated, w, data.p, capacity, uncapped)
        return aggregated

    @staticmethod
    def _keep(cbar, fbar, w, p, capacity):
        """Pairs that can serve in some optimal aggregated solution (docs/facility.md): UFL
        without p: :math:`w_i \\bar c_{iK} \\le \\min_L (\\bar f_L + w_i \\bar c_{iL})`; p-median
        without opening costs: :math:`\\bar c_{iK}` at most customer i's (K - p + 1)-th smallest."""
        n, K = cbar.shape
        if capacity is not None:
            return None
        if p is None and fbar is not None:
            alone = (fbar[None, :] / w[:, None] + cbar).min(axis=1)
            slack = REL_TOL * np.maximum(1.0, alone)
            return cbar <= (alone + slack)[:, None]
        if p is not None and (fbar is None or not np.any(fbar > 0)) and p < K:
            rank = K - p  # 0-based index of the (K - p + 1)-th smallest
            limit = np.partition(cbar, rank, axis=1)[:, rank]
            return cbar <= limit[:, None]
        return None

    def _near(self, cbar, reference) -> np.ndarray:
        """Clusters within ``far_factor`` times the reference cost of each customer, and at least
        its ``far_min`` cheapest."""
        K = cbar.shape[1]
        kth = min(self.far_min, K) - 1
        floor = np.partition(cbar, kth, axis=1)[:, kth]
        limit = np.maximum(self.far_factor * reference, floor)
        return cbar <= limit[:, None] * (1.0 + REL_TOL)

    def model_data(self, aggregated, demand, p, capacity, uncapped) -> fmodel.FacilityModelData:
        """The MIP's arrays: the pairs kept by the safe rule and (unless ``uncapped``) within
        each customer's near set; customers with pairs left out by the near set get a far column
        at the cheapest left-out cost (a relaxation: docs/facility.md)."""
        cbar, safe, near = aggregated.cbar, aggregated.safe, aggregated.near
        keep = safe
        far = None
        if near is not None:
            near = near | uncapped[:, None]
            keep = near if safe is None else (near & safe)
            dropped = np.where(near, np.inf, cbar).min(axis=1)
            far = np.where(uncapped, np.inf, dropped)
        cust, site, cost = fmodel.pairs_from_dense(cbar, keep)
        model = fmodel.FacilityModelData(cust, site, cost, demand, cbar.shape[1],
                                         fixed=aggregated.fbar, p=p, capacity=capacity, far=far)
        model.uncapped = uncapped
        aggregated.pruned = int(cbar.size - cust.size)
        return model

    def build(self, aggregated: AggregatedFacility, form=None):
        return fmodel.create_instance(aggregated.model)

    def rebuild(self, model, outcome, aggregated: AggregatedFacility):
        """When a far column stood in for a cheaper cost than the customer's cheapest open
        cluster really has (a cap that binds), solve once more with those customers' pairs all
        kept: if no cap binds then, the relaxation is exact at its solution."""
        d = model.data.value
        if d.far is None:
            return None
        binding = _binding(model, aggregated.cbar)
        if not binding.any():
            return None
        uncapped = d.uncapped | binding
        data = self.model_data(aggregated, d.demand, d.p, d.capacity, uncapped)
        return fmodel.create_instance(data)

    def lift(self, model, outcome, partition, aggregated: AggregatedFacility, data) -> Lifted:
        y, x = fmodel.solution_from(model)
        mip_gap = self._mip_gap(outcome, data)
        d = model.data.value
        info = {"mip_gap": mip_gap, "pairs": float(d.n_pairs),
                "pruned": float(aggregated.cbar.size - d.n_pairs)}
        if data.capacity is not None:
            return self._lift_capacitated(model, x, y, aggregated, data, info)
        open_k = np.flatnonzero(y)
        cbar = aggregated.cbar
        customers = aggregated.customers
        w = data.demand[customers]
        if open_k.size == 0:
            # a UFL whose far columns undercut every opening cost: the relaxation serves everyone
            # "far" and opens nothing (its bound stays valid); the lift opens the cluster that is
            # cheapest for everyone, and the far customers are capped, so the next model keeps
            # their pairs
            total = w @ np.where(np.isfinite(cbar), cbar, np.inf)
            if aggregated.fbar is not None:
                total = total + aggregated.fbar
            open_k = np.array([int(np.argmin(total))])
        served = open_k[np.argmin(cbar[:, open_k], axis=1)]  # cheapest open cluster
        picks = np.empty(open_k.size, dtype=np.int64)
        excess = np.zeros(open_k.size)
        members = _members(partition)
        agg_total = 0.0
        for r, K in enumerate(open_k):
            sites = members[K]
            mine = customers[served == K]
            wm = data.demand[mine]
            total = wm @ data.costs[np.ix_(mine, sites)] if mine.size else np.zeros(sites.size)
            if data.fixed is not None:
                total = total + data.fixed[sites]
            best = int(np.argmin(total))
            picks[r] = sites[best]
            agg = float(wm @ cbar[served == K, K]) if mine.size else 0.0
            if aggregated.fbar is not None:
                agg += float(aggregated.fbar[K])
            excess[r] = max(0.0, float(total[best]) - agg)
            agg_total += agg
        eps = REL_TOL * abs(agg_total)
        open_sites, assign = self._improve(data, np.unique(picks))
        capped = _binding(model, cbar) if d.far is not None else np.zeros(customers.size, dtype=bool)
        uncapped = capped if d.far is None else (d.uncapped | capped)
        info.update(open_sites=float(open_sites.size), violating=float((excess > eps).sum()),
                    capped=float(capped.sum()), far=float(np.isfinite(d.far).sum()) if d.far is not None else 0.0)
        state = FacilityState(open_k, picks, served, excess, eps, capped, uncapped)
        del w
        return Lifted({"open": open_sites, "assign": assign}, state, info)

    def _lift_capacitated(self, model, x, y, aggregated, data, info) -> Lifted:
        """CFL on the trivial partition (direct solve): the solver's open sites and shares."""
        d = aggregated.model
        shares = np.zeros(data.costs.shape)
        shares[aggregated.customers[d.cust], d.site] = x
        open_sites = np.flatnonzero(y)
        assign = np.argmax(shares, axis=1)
        # customers outside the model (zero demand) go to their cheapest open site, all of them
        idle = np.flatnonzero(shares.sum(axis=1) == 0)
        if idle.size and open_sites.size:
            assign[idle] = open_sites[np.argmin(data.costs[np.ix_(idle, open_sites)], axis=1)]
            shares[idle, assign[idle]] = 1.0
        state = FacilityState(open_sites, open_sites, assign, np.zeros(open_sites.size), 0.0,
                              np.zeros(aggregated.customers.size, dtype=bool),
                              np.zeros(aggregated.customers.size, dtype=bool))
        return Lifted({"open": open_sites, "assign": assign, "shares": shares}, state, info)

    def split(self, partition: Partition, data, lifted: Lifted) -> Split:
        st: FacilityState = lifted.state
        if data.capacity is not None:
            return Split(None, 0)
        bad = np.flatnonzero(st.excess > st.eps)
        members = _members(partition)
        group = np.zeros(partition.n, dtype=np.int64)
        n_split = 0
        customers_all = np.flatnonzero(data.demand > 0)
        for r in bad:
            K = int(st.open_clusters[r])
            sites = members[K]
            if sites.size < 2:
                continue
            mine = customers_all[st.served == K]
            cells = self._cells(data, sites, int(st.picks[r]), mine)
            if cells.max() > 0:
                group[sites] = cells
                n_split += 1
        if n_split == 0 and st.capped is not None and st.capped.any():
            n_split = self._split_for_caps(partition, data, st, members, group)
        if n_split == 0:
            return Split(None, 0)
        return Split(partition.refine(group), n_split)

    def _split_for_caps(self, partition, data, st, members, group) -> int:
        """Every cluster meets the condition but a far column bound (the next aggregated model
        keeps those customers' pairs): go on by halving, for each such customer, the nearest
        cluster of several sites (any strict refinement keeps AID finite)."""
        customers_all = np.flatnonzero(data.demand > 0)
        big = partition.counts > 1
        if not big.any():
            return 0
        done = set()
        for i in customers_all[st.capped]:
            cand = np.flatnonzero(big)
            sites_cost = data.costs[i]
            mins = np.array([sites_cost[members[K]].min() for K in cand])
            K = int(cand[np.argmin(mins)])
            if K in done:
                continue
            done.add(K)
            sites = members[K]
            a = int(np.argmin(sites_cost[sites]))
            feats = data.site_xy[sites] if data.site_xy is not None else data.costs[:, sites].T
            far_one = int(np.argmax(((feats - feats[a]) ** 2).sum(axis=1)))
            d2 = ((feats[:, None, :] - feats[None, [a, far_one], :]) ** 2).sum(axis=2)
            cells = np.argmin(d2, axis=1).astype(np.int64)
            cells[a], cells[far_one] = 0, 1
            group[sites] = cells
        return len(done)

    def _cells(self, data, sites, pick, mine) -> np.ndarray:
        """Voronoi cells of ``sites`` (one violating cluster) around the pick and the sites that
        attain the minima the pick misses, at most ``max_children`` of them."""
        sub = data.costs[np.ix_(mine, sites)]  # served customers x cluster sites
        at = int(np.flatnonzero(sites == pick)[0])
        best = sub.argmin(axis=1)
        loss = data.demand[mine] * (sub[:, at] - sub[np.arange(mine.size), best])
        weight = np.bincount(best, weights=loss, minlength=sites.size)
        if data.fixed is not None:
            cheapest = int(np.argmin(data.fixed[sites]))
            weight[cheapest] += data.fixed[sites[at]] - data.fixed[sites[cheapest]]
        weight[at] = 0.0
        order = np.argsort(-weight, kind="stable")
        reps = [at] + [int(k) for k in order[: self.max_children - 1] if weight[k] > 0]
        if len(reps) < 2:
            return np.zeros(sites.size, dtype=np.int64)
        if data.site_xy is not None:
            feats = data.site_xy[sites]
        else:
            feats = sub.T if mine.size else data.costs[:, sites].T
        d2 = ((feats[:, None, :] - feats[None, reps, :]) ** 2).sum(axis=2)
        cells = np.argmin(d2, axis=1).astype(np.int64)
        cells[reps] = np.arange(len(reps))  # each rep in its own cell (strict refinement)
        return cells

    # ----------------------------------------------------------------- helpers


def _binding(model, cbar) -> np.ndarray:
    """Model customers whose far column carries demand at a cost below their cheapest open
    cluster's: where the capped model undercuts the aggregated one."""
    d = model.data.value
    n = d.n_customers
    out = np.zeros(n, dtype=bool)
    if d.far is None or len(model.F) == 0:
        return out
    y = np.array([v.value or 0.0 for v in model.y.values()]) > 0.5
    # nothing open (far columns undercut every opening cost): every far customer binds
    nearest = cbar[:, y].min(axis=1) if y.any() else np.full(n, np.inf)
    far_ids = np.fromiter(model.F, dtype=np.int64, count=len(model.F))
    z = np.array([model.z[i].value or 0.0 for i in far_ids])
    used = far_ids[z > 1e-9]
    tol = REL_TOL * np.abs(np.where(np.isfinite(nearest[used]), nearest[used], 0.0))
    out[used] = nearest[used] > d.far[used] + tol
    return out


def bounded(data):
    """``data`` with the costs no solution as cheap as the greedy one can pay lowered
    (:func:`aidopt.data.facility.bound_costs`: same optimal solutions and value, bounds valid for
    both): one huge cost, e.g. a pair meant as forbidden, no longer sets the scale the solvers
    see, so their absolute tolerances stay small beside the objective."""
    served = data.demand > 0
    start = _greedy(data.costs[served], data.demand[served], data.fixed, data.p)
    assign = start[np.argmin(data.costs[:, start], axis=1)]
    # with capacities this solution may be infeasible: its cost only sets the scale, and the
    # door checks that the answer uses no lowered cost
    return bound_costs(data, data.objective(start, assign))


def _greedy(cbar, w, fbar, p) -> np.ndarray:
    """Columns of ``cbar`` a greedy heuristic opens: p of them (p-median), or while a column's
    saving exceeds its opening cost (UFL; with opening costs and p, at most p)."""
    n, K = cbar.shape
    fixed = np.zeros(K) if fbar is None else fbar
    first = int(np.argmin(w @ cbar + fixed))
    chosen = [first]
    current = cbar[:, first].copy()
    limit = K if p is None else min(p, K)
    while len(chosen) < limit:
        gain = w @ np.maximum(current[:, None] - cbar, 0.0) - fixed
        gain[chosen] = -np.inf
        j = int(np.argmax(gain))
        if (p is None or fbar is not None) and gain[j] <= 0:  # opening it would cost more
            break
        chosen.append(j)
        current = np.minimum(current, cbar[:, j])
    return np.asarray(chosen, dtype=np.int64)


def _members(partition: Partition) -> list[np.ndarray]:
    order = np.argsort(partition.labels, kind="stable")
    bounds = np.cumsum(partition.counts)[:-1]
    return np.split(order, bounds)


def _greedy_fill(costs, w, open_sites, p) -> np.ndarray:
    """Add the site that lowers the p-median cost most until p are open."""
    current = costs[:, open_sites].min(axis=1) if open_sites.size else np.full(costs.shape[0], np.inf)
    chosen = list(open_sites.tolist())
    is_open = np.zeros(costs.shape[1], dtype=bool)
    is_open[open_sites] = True
    while len(chosen) < p:
        gain = w @ np.maximum(current[:, None] - costs, 0.0) if np.isfinite(current).all() else -(w @ costs)
        gain[is_open] = -np.inf
        j = int(np.argmax(gain))
        chosen.append(j)
        is_open[j] = True
        current = np.minimum(current, costs[:, j])
    return np.asarray(chosen, dtype=np.int64)


def site_features(data, rng: np.random.Generator) -> np.ndarray:
    """What the initial k-means clusters the sites on: their coordinates when known, else their
    cost profiles (columns of the cost matrix; two sites d apart in a metric differ by at most
    d in every entry) reduced to 32 dimensions by a Gaussian random projection."""
    if data.site_xy is not None:
        return np.asarray(data.site_xy, dtype=float)
    profiles = data.costs.T  # sites x customers
    if profiles.shape[1] <= PROFILE_DIM:
        return np.ascontiguousarray(profiles, dtype=float)
    R = rng.standard_normal((profiles.shape[1], PROFILE_DIM)) / math.sqrt(PROFILE_DIM)
    return profiles @ R


def swap_search(C: np.ndarray, w: np.ndarray, open_cols, *, max_swaps: int = 10_000,
                deadline: float | None = None) -> np.ndarray:
    """Best-improvement vertex substitution for the p-median on the columns of ``C``
    (Teitz & Bart 1968, with the swap values of Whitaker's fast interchange): each step makes the
    swap (close one open column, open one closed column) that lowers
    :math:`\\sum_i w_i \\min_{j \\text{ open}} C_{ij}` most, until no swap lowers it.

    The value of every swap comes from one pass over ``C``: closing ``r`` and opening ``c``
    changes customer i's cost to ``min(d1_i, C_ic)`` when its nearest open column is not ``r``,
    else to ``min(d2_i, C_ic)`` (``d1``, ``d2``: its nearest and second-nearest open costs), so

    .. math:: \\Delta(c, r) = -\\sum_i w_i (d1_i - C_{ic})^+
              + \\sum_{i:\\, r_i = r} w_i \\big(\\min(d2_i, C_{ic}) - \\min(d1_i, C_{ic})\\big).

    Parameters
    ----------
    C : ndarray (n, m)
        Costs of the customers at the candidate columns.
    w : ndarray (n,)
        Demands.
    open_cols : array of int
        The starting open columns (at least 2; their number is kept).
    max_swaps : int
        Swaps at most.
    deadline : float, optional
        ``time.perf_counter()`` value after which no further swap is searched.

    Returns
    -------
    ndarray of int64
        The open columns at the end, sorted; never costlier than the start.
    """
    import time

    import scipy.sparse as sp

    n, m = C.shape
    S = np.unique(np.asarray(open_cols, dtype=np.int64))
    if S.size < 2 or S.size >= m:
        return S
    w = np.asarray(w, dtype=float)
    for _ in range(max_swaps):
        if deadline is not None and time.perf_counter() > deadline:
            break
        sub = C[:, S]
        two = np.argpartition(sub, 1, axis=1)[:, :2]
        first = np.take_along_axis(sub, two, axis=1)
        swap = first[:, 1] < first[:, 0]
        r1 = np.where(swap, two[:, 1], two[:, 0])
        d1 = np.where(swap, first[:, 1], first[:, 0])
        d2 = np.where(swap, first[:, 0], first[:, 1])
        cost = float(w @ d1)
        owner = sp.csr_matrix((np.ones(n), (r1, np.arange(n))), shape=(S.size, n))
        best, c, r = np.inf, -1, -1
        step = max(1, SWAP_BLOCK // max(n, 1))
        for start in range(0, m, step):  # column blocks bound the temporaries
            block = C[:, start:start + step]
            gain = w @ np.maximum(d1[:, None] - block, 0.0)
            A = np.minimum(d2[:, None], block)
            A -= np.minimum(d1[:, None], block)
            A *= w[:, None]
            delta = np.asarray((owner @ A).T) - gain[:, None]  # open start + k, close S[r]
            delta[S[(S >= start) & (S < start + step)] - start] = np.inf
            k, rr = np.unravel_index(int(np.argmin(delta)), delta.shape)
            if delta[k, rr] < best:
                best, c, r = float(delta[k, rr]), start + int(k), int(rr)
        if not best < -REL_TOL * max(abs(cost), 1.0):
            break
        S = np.sort(np.append(np.delete(S, r), c))
    return S


def perturbed_swaps(C: np.ndarray, w: np.ndarray, open_cols, *, weights=None, rounds: int = 20,
                    patience: int = 5, seed: int = 0, deadline: float | None = None) -> np.ndarray:
    """Iterated local search around :func:`swap_search` (Lourenço, Martin & Stützle 2003): from
    the best local optimum so far, close ``q = max(2, p // 10)`` random open columns, open ``q``
    closed ones (drawn in proportion to ``weights`` plus a small floor: the LP's fractions),
    run the swap search again, and keep the result when it is cheaper; ``rounds`` times at most,
    stopping after ``patience`` rounds without improvement or at ``deadline``.

    Returns the open columns of the cheapest local optimum found, sorted; never costlier than the
    swap search's own result from ``open_cols``.
    """
    import time

    w = np.asarray(w, dtype=float)
    best = swap_search(C, w, open_cols, deadline=deadline)
    m = C.shape[1]
    if best.size < 2 or best.size >= m:
        return best
    best_cost = float(w @ C[:, best].min(axis=1))
    rng = np.random.default_rng(seed)
    prior = np.full(m, 1.0) if weights is None else np.asarray(weights, dtype=float) + 1e-3
    q = min(max(2, best.size // 10), best.size - 1, m - best.size)
    idle = 0
    for _ in range(rounds):
        if idle >= patience or (deadline is not None and time.perf_counter() > deadline):
            break
        closed = np.setdiff1d(np.arange(m), best)
        chance = prior[closed] / prior[closed].sum()
        start = np.concatenate([np.setdiff1d(best, rng.choice(best, q, replace=False)),
                                rng.choice(closed, q, replace=False, p=chance)])
        found = swap_search(C, w, start, deadline=deadline)
        cost = float(w @ C[:, found].min(axis=1))
        if cost < best_cost - REL_TOL * max(abs(best_cost), 1.0):
            best, best_cost, idle = found, cost, 0
        else:
            idle += 1
    return best


def local_reoptimization(data, customers: np.ndarray, near: np.ndarray, open_sites, solve_part, *,
                         r: int = 10, deadline: float | None = None, seed: int = 0) -> np.ndarray:
    """POPMUSIC for the p-median (Taillard & Voß 2002; Taillard 2003 on large clustering
    problems): re-optimize the solution part by part, each part a p-median of its own.

    A *part* is a seed open site and the ``r - 1`` open sites cheapest for the seed's customers
    (by :math:`\\sum_i w_i c_{ik}` over the customers the seed serves: the open sites around
    it), with the customers they serve and, as candidate sites, those customers' rows of
    ``near`` plus the part's open sites. ``solve_part`` solves that r-median; when its solution
    serves the part's customers more cheaply than the part's sites do, it replaces them (every
    customer outside the part keeps a site at most as costly, so the whole objective falls by
    at least as much) and the new sites become seeds again; a seed whose part is not improved
    is done. The search ends when no seed is left or at ``deadline``. Unlike the swaps, which
    move one site at a time, a part moves up to ``r`` sites at once.

    Parameters
    ----------
    data : FacilityData
        A p-median (``p`` set, no opening costs).
    customers : ndarray of int (n,)
        The customers served (positive demand).
    near : ndarray of int (n, k)
        Each of those customers' cheapest sites (the parts' candidates).
    open_sites : array of int
        The starting solution's p open sites.
    solve_part : callable
        ``solve_part(part, start, deadline)`` with ``part`` a :class:`FacilityData` r-median and
        ``start`` the positions of the part's current sites among its sites; returns the
        positions of the sites of a solution (or None). The result is checked here, so a
        heuristic answer is safe.
    r : int
        Open sites per part (at least 2).
    deadline : float, optional
        ``time.perf_counter()`` value after which no part is started.
    seed : int
        The order in which seeds are drawn.

    Returns
    -------
    ndarray of int64
        The open sites at the end, sorted; never costlier than ``open_sites``.
    """
    import time

    from aidopt.data.facility import FacilityData

    S = np.unique(np.asarray(open_sites, dtype=np.int64))
    r = int(r)
    if r < 2 or S.size <= r:
        return S
    w = data.demand[customers]
    rng = np.random.default_rng(seed)
    D = data.cost_pairs(customers[:, None], S[None, :])  # customers x open sites
    first = np.argmin(D, axis=1)
    todo = set(S.tolist())
    while todo and (deadline is None or time.perf_counter() < deadline):
        j = int(rng.choice(sorted(todo)))
        k = int(np.searchsorted(S, j))
        mine = first == k
        # (a seed serving nobody: the open sites cheapest for its nearest customer)
        closeness = w[mine] @ D[mine] if mine.any() else D[int(np.argmin(D[:, k]))].copy()
        closeness[k] = -np.inf  # the seed first
        part = np.sort(np.argsort(closeness, kind="stable")[:r])
        inside = np.isin(first, part)
        cust = np.flatnonzero(inside)
        if cust.size == 0:  # the part serves nobody (ties): nothing to re-optimize
            todo.discard(j)
            continue
        sites = np.union1d(np.setdiff1d(np.unique(near[cust]), np.delete(S, part)), S[part])
        costs = data.cost_pairs(customers[cust][:, None], sites[None, :])
        current = float(w[cust] @ D[cust][np.arange(cust.size), first[cust]])
        found = solve_part(FacilityData(costs, w[cust], None, r),
                           np.searchsorted(sites, S[part]), deadline)
        value = np.inf
        found = None if found is None else np.asarray(found, dtype=np.int64)
        if (found is not None and found.shape == (r,) and np.unique(found).size == r
                and found.min() >= 0 and found.max() < sites.size):  # r sites of the part
            value = float(w[cust] @ costs[:, found].min(axis=1))
        if value < current - REL_TOL * max(abs(current), 1.0):
            old, new = S[part], sites[found]
            S = np.concatenate([np.delete(S, part), new])
            # only the new sites' columns are computed; the others are kept
            D = np.hstack([np.delete(D, part, axis=1),
                           data.cost_pairs(customers[:, None], new[None, :])])
            order = np.argsort(S)
            S, D = S[order], D[:, order]
            first = np.argmin(D, axis=1)
            todo = (todo - set(old.tolist())) | set(new.tolist())
        else:
            todo.discard(j)
    return S
