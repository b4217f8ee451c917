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
Separation is one pass over each customer's sorted sites.

The sites are generated like the cuts (column generation): the first master holds a few sites
spread over the customers (:func:`initial_sites`), each cut's row holds only the master's sites,
and after each solve every site's reduced cost
:math:`\bar f_j = f_j - \mu - \sum_r \pi_r (D_r - c_{i_r j})^+` (cut duals :math:`\pi \ge 0`,
count-row dual :math:`\mu`) prices the rest in, most negative first. A cut's row then has a
few master sites instead of every site cheaper than its level (docs/benchmarks.md has the
master's size with and without). The same duals give a Lagrangian bound on the
full LP, valid at every round whatever their accuracy,

.. math:: \sum_r \pi_r D_r + \mu\, p + \sum_i \min\big(\bar w_i D_i^0,\ \bar w_i D_i^{\max}\big)
          + \sum_j \min(0, \bar f_j), \qquad \bar w_i = w_i - \textstyle\sum_{r:\, i_r = i} \pi_r

(:math:`\mu\, p` becomes :math:`\mu` times the count row's active side with opening costs),
which :func:`lp_by_cuts` reports as the LP's value (the master is a :class:`MasterLP`, its cuts
found by :class:`InOutSeparation`); a solution that opens site :math:`j` costs at least this
bound plus :math:`\max(0, \bar f_j)`, which is what the branch and cut's reduced-cost fixing
uses (:func:`~.facility_benders.kept_sites`). :func:`radii_by_cuts` turns the final :math:`y`
into the radii at which every customer is covered within its radius, the start of the MIP phase
(:class:`~aidopt.decomposition.plugins.facility_radius.FacilityRadiusProblem`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

__all__ = ["CutLP", "CutPool", "InOutSeparation", "MasterLP", "NearestSites", "branching_ball",
           "critical_positions", "lp_by_cuts", "radii_by_cuts", "separate"]

#: a cut is added when it is violated by more than this, relative to the customer's cost scale
VIOLATION_TOL = 1e-9

#: a cut slack (zero dual) in this many consecutive master LPs is deleted, in the first
#: PURGE_ROUNDS rounds (deleting only zero-dual rows keeps each master's optimum; stopping
#: after PURGE_ROUNDS rules out cycling)
PURGE_AFTER = 2
PURGE_ROUNDS = 50

#: a round adds cuts of at most this many sites in all (counted over every site cheaper than
#: their levels, the cuts of largest weighted violation first): a guard against one round
#: adding more than a few hundred MB to the master LP (docs/benchmarks.md: a tighter cap was
#: measured and not kept)
ROUND_NONZEROS = 1 << 24

#: the first master LP holds FIRST_SITES_PER_P sites per site to open plus FIRST_SITES
#: (:func:`initial_sites`); each round then adds at most max(SITES_PER_ROUND, 2p) of the sites
#: of negative reduced cost (column generation: a cut's row holds only the LP's sites)
FIRST_SITES_PER_P = 4
FIRST_SITES = 32
SITES_PER_ROUND = 64


@dataclass
class CutLP:
    """What :func:`lp_by_cuts` ends with.

    Attributes
    ----------
    y : ndarray (s,)
        Open-site fractions of the last master LP.
    value : float
        The last master's Lagrangian bound on the LP relaxation (module docstring): its
        optimum when ``status == "optimal"`` (within :data:`VIOLATION_TOL`), else below it.
    status : str
        ``"optimal"`` (no violated cut), ``"time_limit"``, ``"round_limit"`` or HiGHS's status.
    rounds, cuts : int
        Master LPs solved and cuts added.
    binding : (ndarray, ndarray, ndarray)
        ``(customer, level value D, width)`` of the cuts with a nonzero dual in the last master
        LP (``width``: its sites, the customer's first sorted positions): a starting cut set
        for :func:`~.facility_benders.solve_benders`.
    reduced : ndarray (s,) or None
        Every site's reduced cost at the last master's duals (None before the first solve).
    columns : int
        Sites in the last master LP.
    """

    y: np.ndarray
    value: float
    status: str
    rounds: int
    cuts: int
    binding: tuple = (np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64))
    reduced: np.ndarray | None = None
    columns: int = 0


class NearestSites:
    """Each model customer's sites in non-decreasing cost: the cheapest ``width`` of them,
    grown on demand (:meth:`ensure`), so that costs given by coordinates
    (:class:`~aidopt.data.facility.EuclideanCosts`) never make an n x s matrix. For a cost
    matrix every site is sorted at once.

    Attributes
    ----------
    customers : ndarray of int64 (n,)
        The customers in the model (positive demand), indices into the data.
    order : ndarray of int16 or int32 (n, width)
        ``order[i, q]``: the site at sorted position ``q`` of customer ``i`` (int16 when the
        sites fit).
    sorted_costs : ndarray of float32 or float64 (n, width)
        Their costs, non-decreasing along each row (float32 when every cost is an integer
        below 2^24, so exactly).
    n_sites : int
    """

    def __init__(self, data, width: int = 64):
        self.data = data
        self.customers = np.flatnonzero(data.demand > 0)
        self.n_sites = int(data.n_sites)
        if data.dense:
            costs = data.costs[self.customers]
            order = np.argsort(costs, axis=1, kind="stable")
            self._keep(order, np.take_along_axis(costs, order, axis=1))
        else:
            self._keep(*data.costs.nearest(self.customers, min(width, self.n_sites)))

    def _keep(self, order: np.ndarray, sorted_costs: np.ndarray) -> None:
        """Store the sorted sites compactly: int16 indices when the sites fit, float32 costs
        when every cost is an integer below 2^24 (both exact)."""
        self.order = order.astype(np.int16 if self.n_sites <= np.iinfo(np.int16).max
                                  else np.int32)
        exact = (self.data.integral and float(np.max(sorted_costs, initial=0.0)) < 2.0 ** 24
                 and getattr(self, "sorted_costs", np.zeros(0, np.float32)).dtype == np.float32)
        self.sorted_costs = sorted_costs.astype(np.float32 if exact else np.float64)

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
            self._keep(*self.data.costs.nearest(self.customers, new))


#: entries of a customers x sorted-sites block that :func:`critical_positions` and :func:`separate` handle at a time
BLOCK_ENTRIES = 1 << 22


def critical_positions(levels, y: np.ndarray) -> np.ndarray:
    """Per customer, the first sorted position where the fractions ``y`` of its sites reach 1
    (the last position when they never do). Reads only as many sorted positions as needed: a
    prefix that doubles for the customers not yet covered (``levels.ensure``)."""
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
        done, width = width, min(s, 2 * width)
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
    D = levels.sorted_costs[np.arange(n), q].astype(float)
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


def branching_ball(levels, y: np.ndarray, w: np.ndarray) -> np.ndarray | None:
    r"""The ball to branch on at the fractional sites ``y``: the sorted positions ``0 .. k`` of
    one customer, or None when no ball is fractional.

    A ball of customer :math:`i` is its sites cheaper than one of its cost levels (ties kept
    together). Among the balls inside the customer's LP radius (before its critical position,
    :func:`critical_positions`) whose fractions sum to :math:`c \in (0, 1)`, the one with
    :math:`\min(c, 1 - c)` largest (to 0.01) is taken, ties broken by :math:`w_i` times the
    step to the customer's next level (what closing the ball costs it at least). Branching
    "every site of the ball closed" / "at least one open" cuts the LP point off in both
    children, and the two children cover every solution."""
    y = np.asarray(y, dtype=float)
    q = critical_positions(levels, y)
    span = min(int(q.max()) + 1, levels.n_sites - 1)
    if span <= 0:
        return None
    levels.ensure(span + 1)
    best, pick = -1.0, None
    norm = 1.0 + float(np.max(w)) * float(np.max(levels.sorted_costs[:, span]))
    step = max(1, BLOCK_ENTRIES // (span + 1))
    for start in range(0, levels.n, step):  # row blocks bound the temporaries
        rows = slice(start, min(levels.n, start + step))
        costs = levels.sorted_costs[rows, :span + 1].astype(float)
        cum = np.cumsum(y[levels.order[rows, :span]], axis=1)
        inside = ((np.arange(span)[None, :] < q[rows, None]) & (costs[:, :span] < costs[:, 1:])
                  & (cum > 1e-6) & (cum < 1.0 - 1e-6))
        if not inside.any():
            continue
        rise = w[rows, None] * (costs[:, 1:] - costs[:, :span])
        score = np.where(inside, np.round(np.minimum(cum, 1.0 - cum), 2)
                         + 1e-3 * rise / norm, -1.0)
        at = int(np.argmax(score))
        if score.flat[at] > best:
            best, pick = float(score.flat[at]), (start + at // span, at % span)
    if pick is None:
        return None
    return levels.order[pick[0], :pick[1] + 1].astype(np.int64)


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


def initial_sites(levels, count: int) -> np.ndarray:
    """``count`` sites spread over the customers, farthest first (Gonzalez 1985): each next site
    is the nearest unchosen one of the customer farthest from the sites chosen so far. The
    first columns of :func:`lp_by_cuts` (every site when ``count >= n_sites``)."""
    n, s = levels.n, levels.n_sites
    if count >= s:
        return np.arange(s)
    chosen = np.zeros(s, dtype=bool)
    far = np.full(n, np.inf)
    rows = np.arange(n)
    for _ in range(count):
        i = int(np.argmax(far))
        free = np.flatnonzero(~chosen[levels.order[i]])
        j = int(levels.order[i, free[0]]) if free.size else int(np.flatnonzero(~chosen)[0])
        chosen[j] = True
        far = np.minimum(far, pair_costs(levels, rows, np.full(n, j)))
    return np.flatnonzero(chosen)


def pair_costs(levels, rows, sites) -> np.ndarray:
    """``costs[customers[rows], sites]`` (broadcast) of the levels' data."""
    return levels.data.cost_pairs(levels.customers[np.asarray(rows, dtype=np.int64)], sites)


def _cut_rows(levels, cut_i, D, width, col_of):
    """The cuts ``(customer, level, width)`` as rows over the LP's columns (theta ``i`` is
    column ``i``; site ``j`` column ``col_of[j]``, -1 when not in the LP): CSR arrays
    ``(starts, index, value)``, built in blocks of at most :data:`BLOCK_ENTRIES` entries."""
    counts, index, value = [], [], []
    step = max(1, BLOCK_ENTRIES // (int(width.max(initial=0)) + 1))
    for start in range(0, cut_i.size, step):
        part = slice(start, start + step)
        rows, span = cut_i[part], int(width[part].max(initial=0))
        cols = col_of[levels.order[rows, :span]]
        take = np.concatenate([np.ones((rows.size, 1), dtype=bool),
                               (np.arange(span)[None, :] < width[part, None]) & (cols >= 0)],
                              axis=1)
        index.append(np.concatenate([rows[:, None], cols], axis=1)[take])
        value.append(np.concatenate([np.ones((rows.size, 1)),
                                     D[part, None] - levels.sorted_costs[rows, :span]],
                                    axis=1)[take])
        counts.append(take.sum(axis=1))
    starts = np.concatenate([[0], np.cumsum(np.concatenate(counts))]) if counts else np.zeros(1)
    return (starts.astype(np.int32), np.concatenate(index).astype(np.int32),
            np.concatenate(value))


def _site_coverage(levels, cut_i, D, width, pi) -> np.ndarray:
    """``sum_r pi_r (D_r - c_{i_r j})^+`` for every site ``j``: what the cuts' duals pay a
    site for covering their customers (the cuts' part of its reduced cost)."""
    total = np.zeros(levels.n_sites)
    use = np.flatnonzero(pi > 0)
    cut_i, D, width, pi = cut_i[use], D[use], width[use], pi[use]
    step = max(1, BLOCK_ENTRIES // (int(width.max(initial=0)) + 1))
    for start in range(0, cut_i.size, step):
        part = slice(start, start + step)
        rows, span = cut_i[part], int(width[part].max(initial=0))
        inside = np.arange(span)[None, :] < width[part, None]
        pay = (D[part, None] - levels.sorted_costs[rows, :span]) * pi[part, None]
        total += np.bincount(levels.order[rows, :span][inside], weights=pay[inside],
                             minlength=total.size)
    return total


class CutPool:
    """The cuts in a :class:`MasterLP`, in the order of its rows after the count row.

    Attributes
    ----------
    customer, level, width : ndarray (cuts,)
        Each cut's customer (int64), level value :math:`D` and width (its sites, the customer's
        first sorted positions; int64).
    slack : ndarray of int64 (cuts,)
        The master LPs in a row, up to the last, in which the cut was slack (zero dual).
    """

    def __init__(self):
        self.customer = np.zeros(0, dtype=np.int64)
        self.level = np.zeros(0)
        self.width = np.zeros(0, dtype=np.int64)
        self.slack = np.zeros(0, dtype=np.int64)

    @property
    def size(self) -> int:
        """Cuts in the pool."""
        return int(self.customer.size)

    def cuts(self, rows=slice(None)) -> tuple:
        """``(customer, level, width)`` of the cuts at ``rows`` (default: all, not copied)."""
        return self.customer[rows], self.level[rows], self.width[rows]

    def add(self, customer: np.ndarray, level: np.ndarray, width: np.ndarray) -> None:
        """Append cuts, none of them slack yet."""
        self.customer, self.level, self.width, self.slack = (
            np.concatenate([old, new]) for old, new in
            zip((self.customer, self.level, self.width, self.slack),
                (customer, level, width, np.zeros(customer.size, dtype=np.int64)), strict=True))

    def keep(self, mask: np.ndarray) -> None:
        """Keep the cuts where ``mask`` is True."""
        self.customer, self.level, self.width, self.slack = (
            self.customer[mask], self.level[mask], self.width[mask], self.slack[mask])


class MasterLP:
    r"""The master LP of :func:`lp_by_cuts` in one HiGHS instance (module docstring):
    :math:`\min \sum_i w_i \theta_i + f'y` over the cuts of its :class:`CutPool` and the sites
    added as columns so far, re-solved warm after each change.

    Columns: :math:`\theta_i` is column ``i``, then the sites in the order they were added. Rows:
    the count row, then the cuts.

    Parameters
    ----------
    levels, w, fixed, p, threads
        As in :func:`lp_by_cuts`.

    Attributes
    ----------
    highs : highspy.Highs
    pool : CutPool
    lower, upper : float
        The count row's sides.
    theta_lo, theta_hi : ndarray (n,)
        Each customer's cheapest and dearest cost (:math:`D_i^0`, :math:`D_i^{\max}`).
    col_of : ndarray of int64 (s,)
        Each site's column, -1 when it is not in the LP.
    y, theta : ndarray (s,), (n,)
        The current point: the first point (:meth:`start`) until the first solve, then the
        last optimal master's (``y`` clipped to [0, 1], 0 off the LP's sites).
    row_dual : ndarray or None
        The last optimal master's row duals (count row first), kept aligned with the pool when
        cuts are deleted; None before.
    cuts_added : int
    """

    def __init__(self, levels, w, fixed, p, *, threads: int | None = None):
        import highspy

        from aidopt.solvers.highs import new_highs

        self.levels = levels
        n, s = levels.n, levels.n_sites
        self.w = np.asarray(w, dtype=float)
        h = self.highs = new_highs(threads=threads)
        inf = self._inf = highspy.kHighsInf
        self.site_cost = np.zeros(s) if fixed is None else np.asarray(fixed, dtype=float)
        self.theta_lo = levels.sorted_costs[:, 0].astype(float)
        self.theta_hi = levels.data.cost_row_extremes()[1][levels.customers].astype(float)
        h.addVars(n, self.theta_lo, np.full(n, inf))
        h.changeColsCost(n, np.arange(n, dtype=np.int32), self.w)
        # p-median: exactly p (as good as at most p when no site costs to open); with opening
        # costs, between 1 and p; UFL: at least 1
        if p is None:
            self.lower, self.upper = 1.0, inf
        else:
            self.lower, self.upper = (float(p) if fixed is None else 1.0), float(p)
        h.addRow(self.lower, self.upper, 0, np.zeros(0, dtype=np.int32), np.zeros(0))
        self.pool = CutPool()
        self.col_of = np.full(s, -1, dtype=np.int64)
        self.y, self.theta = np.zeros(s), self.theta_lo.copy()
        self.row_dual = None
        self.cuts_added = 0

    @property
    def columns(self) -> int:
        """Sites in the LP."""
        return int(np.count_nonzero(self.col_of >= 0))

    def start(self, sites: np.ndarray, p: int | None) -> None:
        """The first columns, ``sites``, and the first point: ``p`` (UFL: 1) spread evenly
        over them (every :math:`\\theta_i` stays at its lower bound)."""
        self.add_sites(sites)
        self.y = np.zeros(self.levels.n_sites)
        self.y[sites] = min(1.0, (p if p is not None else 1.0) / sites.size)

    def add_sites(self, sites: np.ndarray) -> None:
        """Columns for ``sites``, with their coefficients in the count row and every cut."""
        pool = self.pool
        # column k: row 0 (the count), then every cut r with c_{i_r j} < D_r; sites in
        # blocks of at most BLOCK_ENTRIES / 4 pairs with the cuts
        step = max(1, (BLOCK_ENTRIES // 4) // max(1, pool.size))
        for start in range(0, sites.size, step):
            part = sites[start:start + step]
            c = pair_costs(self.levels, pool.customer[None, :], part[:, None])  # sites x cuts
            take = np.concatenate([np.ones((part.size, 1), dtype=bool), c < pool.level[None, :]],
                                  axis=1)
            index = np.broadcast_to(np.arange(pool.size + 1), take.shape)[take]
            value = np.concatenate([np.ones((part.size, 1)), pool.level[None, :] - c],
                                   axis=1)[take]
            counts = take.sum(axis=1)
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int32)
            self.highs.addCols(part.size, self.site_cost[part], np.zeros(part.size),
                               np.ones(part.size), int(counts.sum()), starts,
                               index.astype(np.int32), value)
        self.col_of[sites] = self.levels.n + np.arange(sites.size) + self.columns

    def add_cuts(self, customers: np.ndarray, D: np.ndarray, width: np.ndarray) -> None:
        r"""Rows :math:`\theta_i + \sum_{c_{ij} < D} (D - c_{ij})\, y_j \ge D` over the LP's
        sites, one per ``(customers[r], D[r], width[r])``, pooled."""
        if not customers.size:
            return
        starts, index, values = _cut_rows(self.levels, customers, D, width, self.col_of)
        self.highs.addRows(customers.size, D, np.full(customers.size, self._inf),
                           index.size, starts[:-1], index, values)
        self.cuts_added += customers.size
        self.pool.add(customers, D, width)

    def solve(self, time_limit: float | None = None) -> str:
        """Re-solve (warm), within ``time_limit`` seconds when given; when optimal, read the
        point and the duals.

        Returns
        -------
        str
            ``"optimal"``, ``"time_limit"`` or HiGHS's model status.
        """
        import highspy

        h = self.highs
        if time_limit is not None:
            h.setOptionValue("time_limit", float(time_limit))
        h.run()
        status = h.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            return ("time_limit" if status == highspy.HighsModelStatus.kTimeLimit
                    else h.modelStatusToString(status))
        sol = h.getSolution()
        col = np.asarray(sol.col_value)
        self.theta = col[:self.levels.n]
        self.y = np.zeros(self.levels.n_sites)
        in_lp = np.flatnonzero(self.col_of >= 0)
        self.y[in_lp] = np.clip(col[self.col_of[in_lp]], 0.0, 1.0)
        self.row_dual = np.asarray(sol.row_dual)
        return "optimal"

    def duals(self) -> tuple[np.ndarray, float]:
        r"""The last optimal master's duals as a Lagrangian multiplier: ``(pi, mu)``, the cuts'
        clipped at 0 and the count row's (clipped at 0 when the row has no upper side)."""
        pi, mu = np.maximum(self.row_dual[1:], 0.0), float(self.row_dual[0])
        if self.upper == self._inf:
            mu = max(mu, 0.0)
        return pi, mu

    def bound(self) -> tuple[float, np.ndarray]:
        """The Lagrangian bound of :meth:`duals` on the full LP (every cut and every site;
        module docstring), valid whatever their accuracy, and every site's reduced cost.

        Returns
        -------
        value : float
        reduced : ndarray (s,)
        """
        pi, mu = self.duals()
        pool = self.pool
        reduced = self.site_cost - mu - _site_coverage(self.levels, *pool.cuts(), pi)
        theta_cost = self.w - np.bincount(pool.customer, weights=pi, minlength=self.levels.n)
        value = float(pi @ pool.level + (mu * self.lower if mu >= 0 else mu * self.upper)
                      + np.minimum(theta_cost * self.theta_lo, theta_cost * self.theta_hi).sum()
                      + np.minimum(reduced, 0.0).sum())
        return value, reduced

    def price_sites(self, reduced: np.ndarray, most: int) -> bool:
        """Add the sites outside the LP whose reduced cost is negative (below
        :data:`VIOLATION_TOL` of the master's objective), at most ``most`` of them, most
        negative first; True when any was added."""
        objective = float(self.highs.getInfo().objective_function_value)
        priced = np.flatnonzero((self.col_of < 0)
                                & (reduced < -VIOLATION_TOL * max(1.0, abs(objective))))
        if not priced.size:
            return False
        self.add_sites(np.sort(priced[np.argsort(reduced[priced], kind="stable")][:most]))
        return True

    def age_cuts(self) -> None:
        """Count, per cut, the optimal masters in a row in which it was slack (zero dual)."""
        self.pool.slack = np.where(np.abs(self.row_dual[1:]) <= 1e-12, self.pool.slack + 1, 0)

    def drop_slack_cuts(self, after: int) -> None:
        """Delete the cuts slack in ``after`` masters in a row (their rows and duals)."""
        drop = np.flatnonzero(self.pool.slack >= after)
        if not drop.size:
            return
        self.highs.deleteRows(drop.size, (drop + 1).astype(np.int32))
        keep = np.ones(self.pool.size, dtype=bool)
        keep[drop] = False
        self.pool.keep(keep)
        self.row_dual = np.concatenate([self.row_dual[:1], self.row_dual[1:][keep]])

    def binding(self) -> tuple:
        """``(customer, level, width)`` of the cuts with a nonzero dual in the last optimal
        master (every cut when rows were added since; none before the first solve)."""
        if self.row_dual is None:
            rows = np.zeros(0, dtype=np.int64)
        elif self.row_dual.size - 1 == self.pool.size:
            rows = np.flatnonzero(np.abs(self.row_dual[1:]) > 1e-12)
        else:
            rows = np.arange(self.pool.size)
        return self.pool.cuts(rows)


class InOutSeparation:
    """In-out separation (Ben-Ameur & Neto 2007): each customer's most violated cut at a point
    half-way between the master's point and a stability centre (the last such point), kept
    when it cuts the master's point off; when none does, Kelley's cuts at the master's point.
    The first call separates at the master's point itself, which becomes the first centre.

    Parameters
    ----------
    levels : NearestSites or CostLevels
    """

    def __init__(self, levels):
        self.levels = levels
        self.center = None

    def violated(self, y: np.ndarray, theta: np.ndarray):
        r"""The cuts that the master's point ``(y, theta)`` violates.

        Returns
        -------
        violated : ndarray of int64
            The customers whose cut is violated (by more than :data:`VIOLATION_TOL` of
            :math:`|D|`).
        D, width, excess : ndarray (n,)
            Every customer's cut (as :func:`separate` gives it) and by how much ``(y, theta)``
            violates it.
        """
        first = self.center is None
        point = y if first else 0.5 * (y + self.center)
        self.center = point
        D, width, _ = separate(self.levels, point)
        excess = cut_values(self.levels, D, width, y) - theta
        violated = _violated(excess, D)
        if violated.size == 0 and not first:
            D, width, phi = separate(self.levels, y)
            excess = phi - theta
            violated = _violated(excess, D)
        return violated, D, width, excess


def _violated(excess: np.ndarray, D: np.ndarray) -> np.ndarray:
    """The customers whose cut is violated by more than :data:`VIOLATION_TOL` of its level."""
    return np.flatnonzero(excess > VIOLATION_TOL * np.maximum(np.abs(D), np.finfo(float).tiny))


def _within_budget(violated: np.ndarray, excess: np.ndarray, width: np.ndarray,
                   w: np.ndarray) -> np.ndarray:
    """The violated cuts to add in one round: all of them when their sites number at most
    :data:`ROUND_NONZEROS`, else the cuts of largest weighted violation up to it (at least
    one), in customer order."""
    if int(width[violated].sum()) <= ROUND_NONZEROS:
        return violated
    gap = excess[violated] * w[violated]
    by_gap = violated[np.argsort(-gap, kind="stable")]
    room = np.cumsum(width[by_gap] + 1) <= ROUND_NONZEROS
    room[0] = True
    return np.sort(by_gap[room])


def lp_by_cuts(levels, w, fixed, p, *, time_limit: float | None = None, max_rounds: int = 1000,
               threads: int | None = None, first_sites: int | None = None) -> CutLP:
    """The LP relaxation of the radius formulation by cutting planes and site columns (module
    docstring).

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
    first_sites : int, optional
        Sites in the first master LP (:func:`initial_sites`); default
        :data:`FIRST_SITES_PER_P` per site to open plus :data:`FIRST_SITES`.
    """
    start = time.perf_counter()
    master = MasterLP(levels, w, fixed, p, threads=threads)
    master.start(initial_sites(levels, first_sites if first_sites is not None else
                               FIRST_SITES_PER_P * (p or 0) + FIRST_SITES), p)
    separation = InOutSeparation(levels)
    status, rounds, value, reduced = "round_limit", 0, -math.inf, None
    new_sites = True  # the master has columns it was not solved with
    for rounds in range(1, max_rounds + 1):
        violated, D, width, excess = separation.violated(master.y, master.theta)
        if violated.size == 0 and not new_sites:  # the full LP's optimum
            status = "optimal"
            break
        violated = _within_budget(violated, excess, width, master.w)
        master.add_cuts(violated, D[violated], width[violated])
        left = None if time_limit is None else time_limit - (time.perf_counter() - start)
        if left is not None and left <= 0:
            status = "time_limit"
            break
        solved = master.solve(left)
        if solved != "optimal":
            status = solved
            break
        value, reduced = master.bound()
        new_sites = master.price_sites(reduced, max(SITES_PER_ROUND, 2 * (p or 0)))
        master.age_cuts()
        if rounds <= PURGE_ROUNDS:  # drop cuts slack for PURGE_AFTER rounds: the LP stays small
            master.drop_slack_cuts(PURGE_AFTER)
    return CutLP(master.y, value, status, rounds, master.cuts_added, master.binding(), reduced,
                 master.columns)


def radii_by_cuts(levels, y: np.ndarray) -> np.ndarray:
    """The radius at which each customer is covered by ``y`` within its radius: one level past
    the level where its fractions reach 1 (the far price is then above the LP's level)."""
    ys = y[levels.order]
    cum = np.cumsum(ys, axis=1)
    q = np.argmax(cum >= 1.0 - 1e-7, axis=1)
    q[cum[:, -1] < 1.0 - 1e-7] = cum.shape[1] - 1
    k = levels.level[np.arange(levels.n), q].astype(np.int64) + 1
    return np.minimum(k, levels.n_levels - 1)
