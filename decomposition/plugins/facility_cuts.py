r"""The LP relaxation of the radius formulation by per-customer cuts (a Benders projection).

For open-site fractions :math:`y`, customer :math:`i`'s cost in the LP relaxation of the radius
formulation (García, Labbé & Marín 2011; Elloumi 2010) is

.. math:: \varphi_i(y) = \max_{D \in \{D_i^0, D_i^1, \dots\}} \Big( D - \sum_{j:\, c_{ij} < D}
          (D - c_{ij})\, y_j \Big),

a concave piecewise-linear function whose maximum is at the first level :math:`D` where the
fractions of the sites cheaper than or as cheap as :math:`D` reach 1. Each term is a valid
inequality :math:`\theta_i + \sum_{c_{ij} < D} (D - c_{ij}) y_j \ge D` (a Benders cut), and the
one at the maximizing level is tight at :math:`y`. So the LP

.. math:: \min \; \textstyle\sum_i w_i \theta_i + f'y \quad \text{s.t.} \quad \text{cuts},\;
          \textstyle\sum_j y_j = p \text{ (or } \ge 1),\; 0 \le y \le 1,\; \theta_i \ge D_i^0

solved by adding, round after round, the most violated cut of every customer (Kelley's
cutting planes, each round a warm dual-simplex re-solve in one HiGHS instance) reaches the LP
relaxation of the full radius formulation without ever building its :math:`\sum_i G_i` rows.
Separation is one pass over each customer's sorted sites. :func:`radii_by_cuts` turns the final
:math:`y` into the radii at which every customer is covered within its radius, the start of the
MIP phase (:class:`~aidopt.decomposition.plugins.facility_radius.FacilityRadiusProblem`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

__all__ = ["CutLP", "NearestSites", "critical_positions", "lp_by_cuts", "radii_by_cuts", "separate"]

#: a cut is added when it is violated by more than this, relative to the customer's cost scale
VIOLATION_TOL = 1e-9

#: a cut slack (zero dual) in this many consecutive master LPs is deleted, in the first
#: PURGE_ROUNDS rounds (deleting only zero-dual rows keeps each master's optimum, so the LP
#: value never decreases; stopping after PURGE_ROUNDS rules out cycling)
PURGE_AFTER = 2
PURGE_ROUNDS = 50

#: a round adds at most this many nonzeros (the cuts of largest weighted violation first), so
#: one round cannot add more than a few hundred MB to the master LP. Not binding on the
#: measured instances (10,000 nodes, p = 10: 10^7 in the first round); a cap of 2^22 there
#: made the LP phase faster (127 s against 155 s) but the run's peak memory larger
#: (4.6 GB against 2.8 GB: SCIP then separated 14,474 more cuts), docs/benchmarks.md
ROUND_NONZEROS = 1 << 24


@dataclass
class CutLP:
    """What :func:`lp_by_cuts` ends with.

    Attributes
    ----------
    y : ndarray (s,)
        Open-site fractions of the last master LP.
    value : float
        Its objective: the LP relaxation's optimum when ``status == "optimal"`` (within
        :data:`VIOLATION_TOL`), else a value of a relaxation of it.
    status : str
        ``"optimal"`` (no violated cut), ``"time_limit"``, ``"round_limit"`` or HiGHS's status.
    rounds, cuts : int
        Master LPs solved and cuts added.
    binding : (ndarray, ndarray, ndarray)
        ``(customer, level value D, width)`` of the cuts with a nonzero dual in the last master
        LP (``width``: its sites, the customer's first sorted positions): a starting cut set
        for :func:`~.facility_benders.solve_benders`.
    """

    y: np.ndarray
    value: float
    status: str
    rounds: int
    cuts: int
    binding: tuple = (np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64))
    reduced: np.ndarray | None = None


class NearestSites:
    """Each model customer's sites in non-decreasing cost: the cheapest ``width`` of them,
    grown on demand (:meth:`ensure`), so that costs given by coordinates
    (:class:`~aidopt.data.facility.EuclideanCosts`) never make an n x s matrix. For a cost
    matrix every site is sorted at once.

    Attributes
    ----------
    customers : ndarray of int64 (n,)
        The customers in the model (positive demand), indices into the data.
    order : ndarray of int32 (n, width)
        ``order[i, q]``: the site at sorted position ``q`` of customer ``i``.
    sorted_costs : ndarray (n, width)
        Their costs, non-decreasing along each row.
    n_sites : int
    """

    def __init__(self, data, width: int = 64):
        self.data = data
        self.customers = np.flatnonzero(data.demand > 0)
        self.n_sites = int(data.n_sites)
        if data.dense:
            costs = data.costs[self.customers]
            self.order = np.argsort(costs, axis=1, kind="stable").astype(np.int32)
            self.sorted_costs = np.take_along_axis(costs, self.order, axis=1)
        else:
            self.order, self.sorted_costs = data.costs.nearest(self.customers,
                                                               min(width, self.n_sites))

    @classmethod
    def of(cls, data) -> NearestSites:
        """The data's (computed once, kept with it like the radius plug-in's cost levels)."""
        cached = getattr(data, "_nearest_sites", None)
        if cached is None:
            cached = data._nearest_sites = cls(data)
        return cached

    @property
    def n(self) -> int:
        return int(self.customers.size)

    @property
    def width(self) -> int:
        return int(self.order.shape[1])

    def ensure(self, width: int) -> None:
        """At least ``width`` sorted sites per customer (at least doubling when it grows)."""
        if width > self.width:
            new = min(self.n_sites, max(int(width), 2 * self.width))
            self.order, self.sorted_costs = self.data.costs.nearest(self.customers, new)


#: entries of a customers x sorted-sites block that :func:`critical_positions` and :func:`separate` handle at a time
BLOCK_ENTRIES = 1 << 22


def critical_positions(levels, y: np.ndarray) -> np.ndarray:
    """Per customer, the first sorted position where the fractions ``y`` of its sites reach 1
    (the last position when they never do). Reads only as many sorted positions as needed: a
    prefix that grows fourfold for the customers not yet covered (``levels.ensure``)."""
    n, s = levels.n, levels.n_sites
    q = np.full(n, s - 1, dtype=np.int64)
    rows = np.arange(n)
    width, done = min(s, 32), 0
    carried = np.zeros(n)
    while rows.size:
        levels.ensure(width)
        reached = np.zeros(rows.size, dtype=bool)
        step = max(1, BLOCK_ENTRIES // (width - done))
        for start in range(0, rows.size, step):  # row blocks bound the temporaries
            part = rows[start:start + step]
            cum = carried[part, None] + np.cumsum(y[levels.order[part, done:width]], axis=1)
            hit = cum[:, -1] >= 1.0 - 1e-12
            first = np.argmax(cum >= 1.0 - 1e-12, axis=1)
            q[part[hit]] = done + first[hit]
            carried[part] = cum[:, -1]
            reached[start:start + step] = hit
        if width == s:
            break
        rows = rows[~reached]
        done, width = width, min(s, 4 * width)
    return q


def separate(levels, y: np.ndarray):
    """The most violated cut of each customer at ``y``: ``(D, width, phi)``.

    ``D[i]`` is the cut's level (the cost at the first sorted position where the fractions of
    customer ``i``'s cheaper-or-equal sites reach 1), the cut's sites are its sorted positions
    ``0 .. width[i] - 1`` (those cheaper than ``D[i]``) with coefficients ``D[i] - c``, and
    ``phi[i]`` is the cut's right-hand side minus its ``y`` part: the customer's cost
    :math:`\\varphi_i(y)` in the LP relaxation at ``y``. Row blocks bound the memory used.
    """
    q = critical_positions(levels, y)
    n = levels.n
    D = levels.sorted_costs[np.arange(n), q]
    width = np.empty(n, dtype=np.int64)
    phi = np.empty(n)
    step = max(1, BLOCK_ENTRIES // (int(q.max()) + 1))
    for start in range(0, n, step):
        rows = slice(start, min(n, start + step))
        span = int(q[rows].max()) + 1
        prefix = levels.sorted_costs[rows, :span]
        Dr = D[rows, None]
        below = prefix < Dr
        width[rows] = below.sum(axis=1)
        phi[rows] = D[rows] - ((Dr - prefix) * y[levels.order[rows, :span]] * below).sum(axis=1)
    return D, width, phi


def cut_values(levels, D: np.ndarray, width: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each customer's cut ``(D[i], width[i])`` (of :func:`separate`) evaluated at ``y``: its
    right-hand side minus its ``y`` part, the bound it puts on :math:`\\theta_i` there."""
    n = levels.n
    out = np.empty(n)
    step = max(1, BLOCK_ENTRIES // (int(width.max(initial=0)) + 1))
    for start in range(0, n, step):
        rows = slice(start, min(n, start + step))
        span = int(width[rows].max(initial=0))
        inside = np.arange(span)[None, :] < width[rows, None]
        prefix = levels.sorted_costs[rows, :span]
        out[rows] = D[rows] - ((D[rows, None] - prefix) * y[levels.order[rows, :span]]
                               * inside).sum(axis=1)
    return out


def lp_by_cuts(levels, w, fixed, p, *, time_limit: float | None = None, max_rounds: int = 1000,
               threads: int | None = None) -> CutLP:
    """The LP relaxation of the radius formulation by cutting planes (module docstring).

    Parameters
    ----------
    levels : NearestSites or CostLevels
        The customers' sorted sites (:class:`NearestSites`, or the radius plug-in's
        :class:`~.facility_radius.CostLevels`).
    w : ndarray (n,)
        Demands of the model customers.
    fixed : ndarray (s,) or None
        Opening costs (UFL), or None (p-median).
    p : int or None
        Sites to open (p-median), or None (UFL).
    time_limit : float, optional
        Seconds for all rounds.
    max_rounds : int
        Master LPs at most.
    threads : int, optional
        HiGHS threads.
    """
    import highspy

    from aidopt.solvers.highs import new_highs

    start = time.perf_counter()
    n, s = levels.n, levels.n_sites
    h = new_highs(threads=threads)
    inf = highspy.kHighsInf
    site_cost = np.zeros(s) if fixed is None else np.asarray(fixed, dtype=float)
    h.addVars(s, np.zeros(s), np.ones(s))
    h.addVars(n, levels.sorted_costs[:, 0].astype(float), np.full(n, inf))
    h.changeColsCost(s + n, np.arange(s + n, dtype=np.int32),
                     np.concatenate([site_cost, np.asarray(w, dtype=float)]))
    # p-median: exactly p (as good as at most p when no site costs to open); with opening
    # costs, between 1 and p; UFL: at least 1
    if p is None:
        lower, upper = 1.0, inf
    else:
        lower, upper = (float(p) if fixed is None else 1.0), float(p)
    h.addRow(lower, upper, s, np.arange(s, dtype=np.int32), np.ones(s))
    y = np.full(s, (p if p is not None else 1.0) / s)
    theta = levels.sorted_costs[:, 0].astype(float)
    rounds = cuts = 0
    # the cuts in the LP, row by row after the count row: customer, level, width, and the
    # rounds each has been slack (zero dual) in a row
    pool = [np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64)]
    status, value = "round_limit", -math.inf
    center = y.copy()  # the stability centre of the in-out separation (interior: all p / s)
    for rounds in range(1, max_rounds + 1):
        # in-out (Ben-Ameur & Neto 2007): cuts separated half-way between the LP point and a
        # centre, kept when they cut the LP point off; else Kelley's cuts at the LP point
        tiny = np.finfo(float).tiny
        point = 0.5 * (y + center) if rounds > 1 else y
        D, width, _ = separate(levels, point)
        excess = cut_values(levels, D, width, y) - theta
        violated = np.flatnonzero(excess > VIOLATION_TOL * np.maximum(np.abs(D), tiny))
        center = point
        if violated.size == 0 and rounds > 1:
            D, width, phi = separate(levels, y)
            excess = phi - theta
            violated = np.flatnonzero(excess > VIOLATION_TOL * np.maximum(np.abs(D), tiny))
            if violated.size == 0:
                status = "optimal"
                break
        if int(width[violated].sum()) > ROUND_NONZEROS:  # the most violated cuts first
            gap = excess[violated] * np.asarray(w, dtype=float)[violated]
            by_gap = violated[np.argsort(-gap, kind="stable")]
            room = np.cumsum(width[by_gap] + 1) <= ROUND_NONZEROS
            room[0] = True
            violated = np.sort(by_gap[room])
        starts, index, value_of = [0], [], []
        for i in violated:  # theta_i + sum_{c_ij < D} (D - c_ij) y_j >= D
            q = int(width[i])
            index.append(levels.order[i, :q])
            index.append(np.array([s + i]))
            value_of.append(D[i] - levels.sorted_costs[i, :q])
            value_of.append(np.ones(1))
            starts.append(starts[-1] + q + 1)
        if violated.size:
            h.addRows(violated.size, D[violated], np.full(violated.size, inf),
                      starts[-1], np.asarray(starts[:-1], dtype=np.int32),
                      np.concatenate(index).astype(np.int32), np.concatenate(value_of))
            cuts += violated.size
            pool = [np.concatenate([a, b]) for a, b in
                    zip(pool, (violated, D[violated], width[violated],
                               np.zeros(violated.size, dtype=np.int64)), strict=True)]
        if time_limit is not None:
            left = time_limit - (time.perf_counter() - start)
            if left <= 0:
                status = "time_limit"
                break
            h.setOptionValue("time_limit", float(left))
        h.run()
        model_status = h.getModelStatus()
        if model_status != highspy.HighsModelStatus.kOptimal:
            status = ("time_limit" if model_status == highspy.HighsModelStatus.kTimeLimit
                      else h.modelStatusToString(model_status))
            break
        sol = h.getSolution()
        col = np.asarray(sol.col_value)
        y, theta = np.clip(col[:s], 0.0, 1.0), col[s:]
        value = float(h.getInfo().objective_function_value)
        slack = np.abs(np.asarray(sol.row_dual)[1:]) <= 1e-12  # row 0 is the number of sites
        pool[3] = np.where(slack, pool[3] + 1, 0)
        if rounds <= PURGE_ROUNDS:  # drop cuts slack for PURGE_AFTER rounds: the LP stays small
            drop = np.flatnonzero(pool[3] >= PURGE_AFTER)
            if drop.size:
                h.deleteRows(drop.size, (drop + 1).astype(np.int32))
                keep = np.ones(pool[3].size, dtype=bool)
                keep[drop] = False
                pool = [part[keep] for part in pool]
    binding = (np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64))
    reduced = np.asarray(h.getSolution().col_dual)[:s].copy() if value > -math.inf else None
    if pool[0].size and value > -math.inf:
        dual = np.asarray(h.getSolution().row_dual)[1:]
        keep = (np.flatnonzero(np.abs(dual) > 1e-12) if dual.size == pool[0].size
                else np.arange(pool[0].size))
        binding = tuple(part[keep] for part in pool[:3])
    return CutLP(y, value, status, rounds, cuts, binding, reduced)


def radii_by_cuts(levels, y: np.ndarray) -> np.ndarray:
    """The radius at which each customer is covered by ``y`` within its radius: one level past
    the level where its fractions reach 1 (the far price is then above the LP's level)."""
    ys = y[levels.order]
    cum = np.cumsum(ys, axis=1)
    q = np.argmax(cum >= 1.0 - 1e-7, axis=1)
    q[cum[:, -1] < 1.0 - 1e-7] = cum.shape[1] - 1
    k = levels.level[np.arange(levels.n), q].astype(np.int64) + 1
    return np.minimum(k, levels.n_levels - 1)
