r"""AID plug-in for facility location over each customer's cost levels (the radius aggregation).

The elements partitioned are the **customer-site pairs** :math:`(i, j)`. Customer :math:`i`'s
pairs are grouped by its cost levels :math:`D_i^0 < D_i^1 < \dots` (the distinct values of
:math:`c_{i\cdot}`): each level :math:`g < k_i` is a cluster of its own, and every pair at a level
:math:`\ge k_i` falls in one *far* cluster, priced at its cheapest cost :math:`D_i^{k_i}` (the
cluster minimum, as in the site aggregation of :mod:`aidopt.decomposition.plugins.facility`). ``k_i`` is
the customer's *radius*. Sites are never merged: every site keeps its own ``y``.

* **Aggregate**: the radius model (:mod:`aidopt.models.facility_radius`) with each customer's
  levels below its radius. A customer whose nearest open site lies beyond its radius pays
  :math:`D_i^{k_i}`, at most its true cost, so every solution of the original problem costs at
  least as much as in the aggregated model: the aggregated optimum, and the MIP's dual bound on
  it, bound the original optimum from below (docs/facility.md).
* **Lift**: the aggregated model's open sites, every customer served by its nearest one; then the
  alternating improvement (and, for the p-median, a greedy fill to p) of
  :class:`~aidopt.decomposition.plugins.facility.FacilityBase`. An upper bound ``E_t``.
* **Optimality condition**: every customer's nearest open site (in the aggregated solution)
  lies within its radius or exactly at :math:`D_i^{k_i}`. Then the aggregated objective equals the
  original cost of that solution, which is therefore optimal.
* **Split**: a customer that violates the condition gets a larger radius: at least one more level,
  the far price at least ``grow`` times larger, at least its lifted solution's cost, and never
  beyond its cost in the aggregated solution (which is then priced exactly). Every split adds a
  level, so AID ends, at the latest with every level its own cluster: the full radius
  formulation, as strong as the textbook model.
* **Start**: the LP relaxation of the original problem by per-customer cuts
  (:mod:`~aidopt.decomposition.plugins.facility_cuts`, at most ``lp_rounds`` rounds): its value is
  a bound reported with every iteration's, and the radii start where each customer is covered by
  its solution (without it, where a greedy solution is priced exactly).
* **In-tree separation** instead of this outer loop: the same cuts separated inside one branch
  and cut, :mod:`~aidopt.decomposition.plugins.facility_benders` (``solver="benders"``, the
  default of :func:`~aidopt.api.facility.solve_facility_location`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from aidopt.decomposition.partition import Partition
from aidopt.decomposition.plugins.facility import FacilityBase, _greedy, keep_clock
from aidopt.decomposition.plugins.facility_cuts import lp_by_cuts, radii_by_cuts
from aidopt.decomposition.protocol import Iterate, Lifted, Split
from aidopt.models import facility_radius as rmodel

from aidopt.solvers import SolverError

__all__ = ["FacilityRadiusProblem", "CostLevels", "RadiusState", "check_grow"]

logger = logging.getLogger("aidopt.facility")



def check_grow(grow) -> None:
    """``grow`` must be a number >= 1 (checked by every facility method, used by this one)."""
    if not (isinstance(grow, float | int) and not isinstance(grow, bool) and grow >= 1):
        raise ValueError(f"grow must be a number >= 1, got {grow!r}")


@dataclass
class CostLevels:
    """Every model customer's sites sorted by cost, and their levels (computed once per data set).

    Attributes
    ----------
    customers : ndarray of int64 (n,)
        The customers in the model (positive demand), indices into the data.
    order : ndarray of int32 (n, s)
        ``order[i, q]``: the site at sorted position ``q`` of customer ``i``.
    sorted_costs : ndarray (n, s)
        ``costs[customers[i], order[i, q]]``, non-decreasing in ``q``.
    level : ndarray of int32 (n, s)
        Level (index of the distinct value) of sorted position ``q``.
    site_level : ndarray of int32 (n, s)
        Level of site ``j`` for customer ``i`` (``level`` in site order).
    n_levels : ndarray of int64 (n,)
        :math:`G_i`, the number of distinct costs of customer ``i``.
    first : ndarray of bool (n, s)
        Sorted position ``q`` is the first of its level (it holds :math:`D_i^g`).
    data : FacilityData
        The data they were computed from (the cutting-plane LP prices sites through it).
    """

    customers: np.ndarray
    order: np.ndarray
    sorted_costs: np.ndarray
    level: np.ndarray
    site_level: np.ndarray
    n_levels: np.ndarray
    first: np.ndarray
    data: object = None

    @classmethod
    def of(cls, data) -> CostLevels:
        cached = getattr(data, "_cost_levels", None)
        if cached is not None:
            return cached
        customers = np.flatnonzero(data.demand > 0)
        costs = data.costs[customers]
        order = np.argsort(costs, axis=1, kind="stable").astype(np.int32)
        sorted_costs = np.take_along_axis(costs, order, axis=1)
        new = np.ones(sorted_costs.shape, dtype=bool)
        new[:, 1:] = sorted_costs[:, 1:] > sorted_costs[:, :-1]
        level = (np.cumsum(new, axis=1, dtype=np.int32) - 1).astype(np.int32)
        site_level = np.empty_like(level)
        np.put_along_axis(site_level, order, level, axis=1)
        out = cls(customers, order, sorted_costs, level, site_level,
                  level[:, -1].astype(np.int64) + 1, new, data)
        data._cost_levels = out
        return out

    @property
    def n(self) -> int:
        return int(self.customers.size)

    @property
    def n_sites(self) -> int:
        return int(self.sorted_costs.shape[1])

    width = n_sites

    def ensure(self, width: int) -> None:
        """Every site is sorted already (the interface of
        :class:`~aidopt.decomposition.plugins.facility_cuts.NearestSites`)."""

    def level_of(self, values: np.ndarray) -> np.ndarray:
        """For each customer, the number of its distinct costs below ``values[i]``: the radius at
        which a site at cost ``values[i]`` is priced exactly."""
        pos = np.count_nonzero(self.sorted_costs < values[:, None], axis=1)
        inside = pos < self.sorted_costs.shape[1]
        out = self.n_levels.copy()
        rows = np.flatnonzero(inside)
        out[rows] = self.level[rows, pos[rows]]
        return out

    def price(self, k: np.ndarray) -> np.ndarray:
        """:math:`D_i^{k_i}`: the cost of customer ``i``'s far cluster at radius ``k_i``."""
        pos = np.count_nonzero(self.level < k[:, None], axis=1)
        return self.sorted_costs[np.arange(self.n), pos]

    def partition(self, k: np.ndarray) -> Partition:
        """The partition of the pairs at radii ``k`` (clusters numbered customer by customer)."""
        k = np.minimum(k, self.n_levels - 1)
        per = k + 1
        offsets = np.concatenate(([0], np.cumsum(per)[:-1])).astype(np.int64)
        labels = (offsets[:, None] + np.minimum(self.site_level, k[:, None])).ravel()
        return Partition(labels, np.bincount(labels, minlength=int(per.sum())).astype(np.int64))

    def radii(self, partition: Partition) -> np.ndarray:
        """The radii of a partition of the pairs: a customer with ``c`` clusters has radius
        ``c - 1`` (capped at its last level). This reads :meth:`partition`'s output back, and the
        trivial partition (every pair alone) as the full formulation."""
        s = self.sorted_costs.shape[1]
        if partition.n != self.n * s:
            raise ValueError(f"the partition covers {partition.n} pairs, the problem has {self.n * s}")
        owner = np.repeat(np.arange(self.n, dtype=np.int64), s)
        customer_of = np.empty(partition.n_clusters, dtype=np.int64)
        customer_of[partition.labels] = owner
        if not np.array_equal(customer_of[partition.labels], owner):
            raise ValueError("every cluster of a radius partition must hold pairs of one customer")
        clusters = np.bincount(customer_of, minlength=self.n)
        return np.minimum(clusters - 1, self.n_levels - 1).astype(np.int64)


@dataclass
class AggregatedRadius:
    """One aggregated problem: the radii, the far prices and the model's arrays."""

    k: np.ndarray
    price: np.ndarray
    model: rmodel.RadiusModelData


@dataclass
class RadiusState:
    """What a lifted solution carries to ``split``: the radii it was solved at, each customer's
    cost in the aggregated solution (``nearest``) and in the lifted one (``lifted``), and the
    customers that violate the condition."""

    k: np.ndarray
    nearest: np.ndarray
    lifted: np.ndarray
    violating: np.ndarray


class FacilityRadiusProblem(FacilityBase):
    """p-median / UFL under AID over each customer's cost levels (module docstring).

    Parameters
    ----------
    mip_gap, improve
        See :class:`~aidopt.decomposition.plugins.facility.FacilityBase`.
    grow : float
        A violating customer's far price grows at least this many times (>= 1; 1: one level).
    lp_rounds : int
        At most this many rounds of the cutting-plane LP (:mod:`.facility_cuts`) before the
        first MIP (0: no LP phase: the greedy solution's radii).
    """

    name = "facility-radius"
    element = "customer-site pairs"

    def __init__(self, mip_gap: float = 1e-7, improve: int = 3, grow: float = 2.0,
                 lp_rounds: int = 200):
        super().__init__(mip_gap=mip_gap, improve=improve)
        check_grow(grow)
        if not (isinstance(lp_rounds, int) and not isinstance(lp_rounds, bool) and lp_rounds >= 0):
            raise ValueError(f"lp_rounds must be a non-negative integer, got {lp_rounds!r}")
        self.grow = float(grow)
        self.lp_rounds = int(lp_rounds)

    # ----------------------------------------------------------------- contract
    def size(self, data) -> int:
        return int(np.count_nonzero(data.demand > 0)) * data.n_sites

    def default_r0(self, size: int, data) -> float:
        """One cluster per customer to start with; the greedy and LP phases set the radii."""
        return 1.0 / data.n_sites

    def min_clusters(self, data) -> int:
        return int(np.count_nonzero(data.demand > 0))

    def initial_partition(self, data, n_clusters, rng, solve) -> tuple[Partition, Lifted]:
        """Radii at which a greedy solution is priced exactly (at least ``n_clusters / n - 1``
        levels each), or where the cutting-plane LP's solution covers each customer when that LP
        finishes (``lp_rounds``, within the phase's share of the clock); and the greedy
        solution, improved (the run's answer if it stops before its first iterate)."""
        keep_clock(data, solve)
        if data.capacity is not None:
            raise SolverError("capacitated facility location is solved directly (aid=False); "
                              "AID's lift does not handle capacities (docs/facility.md)")
        levels = CostLevels.of(data)
        w = data.demand[levels.customers]
        costs = data.costs[levels.customers]
        start = _greedy(costs, w, data.fixed, data.p)
        k = levels.level_of(costs[:, start].min(axis=1))
        floor = max(0, int(n_clusters) // max(1, levels.n) - 1)
        lp = None
        if self.lp_rounds:
            lp = lp_by_cuts(levels, w, data.fixed, data.p, max_rounds=self.lp_rounds,
                            time_limit=solve.remaining())  # the phase's share of the clock
            logger.info("cutting-plane LP: %s after %d rounds, %d cuts, %d of %d sites, "
                        "LP bound %.10g", lp.status, lp.rounds, lp.cuts, lp.columns,
                        levels.n_sites, lp.value)
            if lp.status == "optimal":  # radii that cover the LP optimum (else the greedy's)
                k = radii_by_cuts(levels, lp.y)
        k = np.minimum(np.maximum(k, floor), levels.n_levels - 1)
        # any master LP solved to optimality relaxes the full LP: a bound of the data, kept
        # with the cost levels (lower_bound reports it with each iteration's)
        data._radius_lp_bound = None if lp is None else lp.value
        return levels.partition(k), self.greedy_point(data, start)

    def lower_bound(self, outcome, partition, data, lifted=None) -> float | None:
        """The larger of the aggregated MIP's dual bound and the cutting-plane LP's optimum
        (the LP relaxation of the original problem, or a relaxation of it)."""
        bounds = [b for b in (super().lower_bound(outcome, partition, data, lifted),
                              self._proven(data, getattr(data, "_radius_lp_bound", None)))
                  if b is not None]
        return max(bounds) if bounds else None

    def aggregate(self, data, partition: Partition, previous: Iterate | None = None):
        levels = CostLevels.of(data)
        k = levels.radii(partition)
        w = data.demand[levels.customers]
        return AggregatedRadius(k, levels.price(k), self.model_data(levels, k, w, data))

    @staticmethod
    def model_data(levels: CostLevels, k: np.ndarray, w: np.ndarray, data) -> rmodel.RadiusModelData:
        """The radius model's arrays at radii ``k`` (vectorised over customers)."""
        inside = levels.level < k[:, None]  # sorted positions below the radius
        site_index = levels.order[inside].astype(np.int64)
        row_offset = np.concatenate(([0], np.cumsum(k)[:-1])).astype(np.int64)
        rows_of_pairs = np.repeat(row_offset, inside.sum(axis=1)) + levels.level[inside]
        n_rows = int(k.sum())
        site_ptr = np.concatenate(([0], np.cumsum(np.bincount(rows_of_pairs, minlength=n_rows))))
        # D_i^0 .. D_i^{k_i}: first positions of the levels up to the radius
        upto = levels.first & (levels.level <= k[:, None])
        values = levels.sorted_costs[upto]  # k_i + 1 values per customer, customer by customer
        ends = np.cumsum(k + 1)
        step = np.diff(values)
        keep = np.ones(step.size, dtype=bool)
        keep[ends[:-1] - 1] = False  # the difference across two customers
        row_customer = np.repeat(np.arange(levels.n, dtype=np.int64), k)
        row_cost = w[row_customer] * step[keep]
        constant = float(w @ levels.sorted_costs[:, 0])
        return rmodel.RadiusModelData(row_customer, row_cost, np.ones(n_rows), site_ptr, site_index,
                                      data.n_sites, constant, fixed=data.fixed, p=data.p)

    def build(self, aggregated: AggregatedRadius, form=None):
        return rmodel.create_instance(aggregated.model)

    def lift(self, model, outcome, partition, aggregated: AggregatedRadius, data) -> Lifted:
        levels = CostLevels.of(data)
        y = rmodel.solution_from(model)[0]
        open_sites = np.flatnonzero(y > 0.5)
        if open_sites.size == 0:
            raise SolverError("the aggregated MIP opened no site")
        nearest = data.costs[np.ix_(levels.customers, open_sites)].min(axis=1)
        violating = levels.level_of(nearest) > aggregated.k  # beyond the far price (exact)
        final_open, assign = self._improve(data, open_sites)
        lifted = data.costs[levels.customers, assign[levels.customers]]
        mip_gap = self._mip_gap(outcome, data)
        d = aggregated.model
        info = {"mip_gap": mip_gap, "rows": float(d.n_rows), "nonzeros": float(d.nnz),
                "open_sites": float(final_open.size), "violating": float(violating.sum())}
        state = RadiusState(aggregated.k, nearest, lifted, violating)
        return Lifted({"open": final_open, "assign": assign}, state, info)

    def split(self, partition: Partition, data, lifted: Lifted) -> Split:
        st: RadiusState = lifted.state
        if not st.violating.any():
            return Split(None, 0)
        levels = CostLevels.of(data)
        k = st.k
        exact_lift = levels.level_of(st.lifted)
        grown = np.minimum(levels.level_of(st.nearest),
                           np.maximum(self._grown(levels, k), exact_lift))
        new_k = np.where(st.violating, grown, np.maximum(k, exact_lift))
        new_k = np.minimum(new_k, levels.n_levels - 1)
        return Split(levels.partition(new_k), int(st.violating.sum()))

    # ----------------------------------------------------------------- helpers
    def _grown(self, levels: CostLevels, k: np.ndarray) -> np.ndarray:
        """At least one more level and a far price at least ``grow`` times the current one."""
        price = levels.price(k)
        return np.minimum(np.maximum(k + 1, levels.level_of(self.grow * price)),
                          levels.n_levels - 1)
