r"""MCLP on its aggregated rows by the LP relaxation, a primal heuristic and reduced-cost fixing,
then the MIP on the sites left (docs/facility.md, "Reduced-cost fixing for the MCLP").

On the aggregated rows (:mod:`aidopt.models.covering`: rows r with sites :math:`N_r` and weights
:math:`W_r`, p sites), the MCLP written as the least uncovered weight

.. math:: \min \textstyle\sum_r W_r u_r \quad \text{s.t.} \quad
          u_r + \sum_{j \in N_r} x_j \ge 1,\quad \textstyle\sum_j x_j = p,\quad
          0 \le u \le 1,\quad x \in \{0, 1\}^s

has a tight LP relaxation on the benchmark instances (docs/benchmarks/facility.md) but HiGHS's
branch and bound spends minutes in the dual simplex of its root LP. :func:`solve_mclp` instead

1. solves the LP relaxation by HiGHS's interior point method (:func:`relaxation`) and takes its
   row duals :math:`\pi`;
2. bounds every solution from :math:`\pi` alone (:func:`lagrangian_bounds`): relaxing the cover
   rows with multipliers :math:`\pi \ge 0` and keeping :math:`\sum_j x_j = p`,

   .. math:: L(\pi) = \textstyle\sum_r \pi_r + \sum_r \min(0, W_r - \pi_r)
             + \min_{|S| = p} \sum_{j \in S} g_j,\qquad g_j = -\sum_{r \ni j} \pi_r,

   a lower bound for *any* :math:`\pi \ge 0` (weak duality; it equals the LP's value at the LP's
   duals), computed here in numpy, so it does not rest on the LP solver's tolerances. The same
   formula with :math:`x_j = 1` (or 0) imposed bounds every solution that opens (or closes) site
   j;
3. finds a good solution (:func:`greedy_swap`: greedy, then best-improvement 1-swaps, from
   nothing and from the LP's p largest sites; a MIP, time-limited, on the LP's support sites and
   the :data:`SUPPORT_PER_SITE` x p sites of the least bound when open; the swaps again);
4. fixes every site whose bound with it open (closed) exceeds the incumbent (by more than 1 less
   a margin when every weight is an integer: such solutions are then no better than the
   incumbent) closed (open) — reduced-cost fixing, exact. When the heuristic's MIP stopped at
   its time, it runs again (up to :data:`HEURISTIC_ROUNDS` rounds, twice the time each) from the
   incumbent on the sites those fixings leave: on a loaded machine a first MIP cut short no
   longer decides alone how much is fixed;
5. re-aggregates the rows on the sites left (:func:`restrict`: rows of a site fixed open are
   covered and leave; sites fixed closed leave every row; rows left without a site are a
   constant; equal rows merge), and solves that MIP with HiGHS from the incumbent.

The proven bound is :math:`\min(\text{incumbent}, \text{the restricted MIP's dual bound} +
\text{constant})`: a solution that breaks a fixing is no better than the incumbent, every other
one is a solution of the restricted MIP. The answer is the better of the incumbent and the MIP's
solution, both priced on the rows; the covering plug-in then checks it on the original points.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field

import numpy as np

from aidopt.data.coverage import Coverage, CoverRows, aggregate_rows

__all__ = ["FixingResult", "greedy_swap", "lagrangian_bounds", "relaxation", "restrict",
           "rows_uncovered", "solve_mclp"]

#: the heuristic's MIP runs on the LP's support sites and the ``SUPPORT_PER_SITE * p`` sites of
#: the least Lagrangian bound when open (:func:`lagrangian_bounds`) ...
SUPPORT_PER_SITE = 6

#: ... for at most this many seconds ...
SUPPORT_SECONDS = 15.0

#: ... and at most this share of the time left
SUPPORT_SHARE = 0.2

#: rounds of the heuristic at most: a round whose MIP reached its time cap is followed by one
#: with twice the time, on the sites its fixings leave
HEURISTIC_ROUNDS = 3

#: best-improvement swaps of :func:`greedy_swap` at most
MAX_SWAPS = 500

#: an LP value of a site at or below this counts as 0 (outside the LP's support)
SUPPORT_TOL = 1e-6


@dataclass
class FixingResult:
    r"""What :func:`solve_mclp` ends with (objectives are uncovered weight on the rows).

    Attributes
    ----------
    open : ndarray of int64
        The best solution's open sites (the forced ones included).
    objective : float
        Its uncovered weight on the rows.
    bound : float
        A proven lower bound on the rows' optimum (``-inf``: none).
    status : {"optimal", "time_limit", "interrupted", "error"}
        How the last MIP ended (``"optimal"`` also when the bound meets the incumbent).
    stats : dict
        ``lp`` (value), ``lagrangian`` (:math:`L(\pi)`), ``heuristic`` (incumbent before the MIP),
        ``fixed_closed``, ``fixed_open``, ``free_sites``, ``rows`` (of the restricted MIP),
        ``nodes``, and seconds of each step.
    """

    open: np.ndarray
    objective: float
    bound: float
    status: str
    stats: dict = field(default_factory=dict)


# ----------------------------------------------------------------------------- rows helpers
def rows_uncovered(rows: CoverRows, open_sites, n_sites: int) -> float:
    """The weight of the rows no site of ``open_sites`` covers."""
    if rows.n_rows == 0:
        return 0.0
    is_open = np.zeros(n_sites, dtype=bool)
    is_open[np.asarray(open_sites, dtype=np.int64)] = True
    hit = np.add.reduceat(is_open[rows.sites].astype(np.int64), rows.indptr[:-1]) > 0
    return float(rows.weight[~hit].sum())


def restrict(rows: CoverRows, n_sites: int, free, forced) -> tuple[CoverRows, float]:
    """The rows of the MCLP with the sites ``forced`` open and every site outside ``free`` and
    ``forced`` closed, on the free sites' local numbers ``0 .. len(free) - 1``.

    A row with a forced site is covered and leaves; the closed sites leave every row; a row left
    without a site can no longer be covered (its weight is returned as a constant); rows with
    equal site sets then merge (:func:`~aidopt.data.coverage.aggregate_rows`).

    Returns
    -------
    (CoverRows, float)
        The restricted rows (``members``: the restricted row of every original row, -1 if it
        left) and the weight of the rows left without a site.
    """
    free = np.asarray(free, dtype=np.int64)
    n_rows = rows.n_rows
    row_of = np.repeat(np.arange(n_rows), np.diff(rows.indptr))
    is_forced = np.zeros(n_sites, dtype=bool)
    is_forced[np.asarray(forced, dtype=np.int64)] = True
    covered = np.zeros(n_rows, dtype=bool)
    covered[row_of[is_forced[rows.sites]]] = True
    local = np.full(n_sites, -1, dtype=np.int64)
    local[free] = np.arange(free.size)
    pair = (local[rows.sites] >= 0) & ~covered[row_of]
    count = np.bincount(row_of[pair], minlength=n_rows)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(count, out=indptr[1:])
    cov = Coverage(indptr, local[rows.sites[pair]], int(free.size))
    constant = float(rows.weight[(count == 0) & ~covered].sum())
    return aggregate_rows(cov, rows.weight, ~covered), constant


# ----------------------------------------------------------------------------- the heuristic
def _greedy_swap_kernel(indptr, sites, W, sptr, srows, p, start, max_swaps):
    """Greedy from ``start`` to p open sites, then best-improvement 1-swaps (numba)."""
    n_rows = indptr.size - 1
    s = sptr.size - 1
    is_open = np.zeros(s, np.bool_)
    c = np.zeros(n_rows, np.int64)  # open sites covering each row
    n_open = 0
    for j in start:
        if not is_open[j]:
            is_open[j] = True
            n_open += 1
            for k in range(sptr[j], sptr[j + 1]):
                c[srows[k]] += 1
    gain = np.zeros(s)  # weight of the uncovered rows a site covers
    for j in range(s):
        for k in range(sptr[j], sptr[j + 1]):
            if c[srows[k]] == 0:
                gain[j] += W[srows[k]]
    while n_open < p:
        best, top = -1, -1.0
        for j in range(s):
            if not is_open[j] and gain[j] > top:
                top, best = gain[j], j
        is_open[best] = True
        n_open += 1
        for k in range(sptr[best], sptr[best + 1]):
            r = srows[k]
            c[r] += 1
            if c[r] == 1:
                for q in range(indptr[r], indptr[r + 1]):
                    gain[sites[q]] -= W[r]
    if n_open == 0 or n_open == s:
        return is_open
    opens = np.empty(n_open, np.int64)
    slot = np.full(s, -1, np.int64)
    for _ in range(max_swaps):
        m = 0
        for j in range(s):
            if is_open[j]:
                opens[m] = j
                slot[j] = m
                m += 1
        # loss[a]: the rows only opens[a] covers; extra[a, k]: those of them site k covers
        loss = np.zeros(n_open)
        extra = np.zeros((n_open, s))
        for r in range(n_rows):
            if c[r] == 1:
                only = -1
                for q in range(indptr[r], indptr[r + 1]):
                    if is_open[sites[q]]:
                        only = sites[q]
                        break
                a = slot[only]
                loss[a] += W[r]
                for q in range(indptr[r], indptr[r + 1]):
                    extra[a, sites[q]] += W[r]
        top, out, into = 1e-9 * (1.0 + W.sum()), -1, -1
        for a in range(n_open):
            for k in range(s):
                if not is_open[k]:
                    delta = gain[k] - loss[a] + extra[a, k]
                    if delta > top:
                        top, out, into = delta, opens[a], k
        if out < 0:
            break
        is_open[out] = False
        for k in range(sptr[out], sptr[out + 1]):
            r = srows[k]
            c[r] -= 1
            if c[r] == 0:
                for q in range(indptr[r], indptr[r + 1]):
                    gain[sites[q]] += W[r]
        is_open[into] = True
        for k in range(sptr[into], sptr[into + 1]):
            r = srows[k]
            c[r] += 1
            if c[r] == 1:
                for q in range(indptr[r], indptr[r + 1]):
                    gain[sites[q]] -= W[r]
    return is_open


@functools.cache
def _kernel():
    import numba

    return numba.njit(cache=True)(_greedy_swap_kernel)


def greedy_swap(rows: CoverRows, n_sites: int, p: int, start=(), max_swaps: int = MAX_SWAPS):
    """p open sites for the MCLP on ``rows``: the sites of ``start`` (kept only if
    ``len(start) <= p``), then greedily the site covering the most uncovered weight, then
    best-improvement swaps of one open site for one closed site while one lowers the uncovered
    weight (at most ``max_swaps``). Returns the open sites (sorted int64)."""
    from scipy import sparse

    if not (0 <= p <= n_sites):
        raise ValueError(f"p must be in [0, {n_sites}], got {p!r}")
    start = np.unique(np.asarray(start, dtype=np.int64))
    if start.size > p:
        start = start[:0]
    M = sparse.csr_matrix((np.ones(rows.sites.size), rows.sites, rows.indptr),
                          shape=(rows.n_rows, n_sites)).tocsc()  # each site's rows
    M.sort_indices()
    is_open = _kernel()(rows.indptr.astype(np.int64), rows.sites.astype(np.int64),
                        np.asarray(rows.weight, dtype=float), M.indptr.astype(np.int64),
                        M.indices.astype(np.int64), int(p), start, int(max_swaps))
    return np.flatnonzero(is_open).astype(np.int64)


# ----------------------------------------------------------------------------- LP and bounds
def _highs_model(rows: CoverRows, n_sites: int, p: int, *, integer: bool, offset: float = 0.0):
    """The MCLP of ``rows`` (module docstring) as a ``highspy.HighsLp``: columns x (sites), then
    u (rows); rows: the cover rows, then the count."""
    import highspy

    n_rows = rows.n_rows
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n_sites + n_rows, n_rows + 1
    lp.col_cost_ = np.concatenate([np.zeros(n_sites), np.asarray(rows.weight, dtype=float)])
    lp.offset_ = float(offset)
    lp.col_lower_ = np.zeros(n_sites + n_rows)
    lp.col_upper_ = np.ones(n_sites + n_rows)
    lp.row_lower_ = np.append(np.ones(n_rows), float(p))
    lp.row_upper_ = np.append(np.full(n_rows, highspy.kHighsInf), float(p))
    size = np.diff(rows.indptr) + 1  # a row's sites and its u
    start = np.zeros(n_rows + 2, dtype=np.int64)
    np.cumsum(size, out=start[1:n_rows + 1])
    start[-1] = start[n_rows] + n_sites
    row_of = np.repeat(np.arange(n_rows), np.diff(rows.indptr))
    index = np.empty(start[-1], dtype=np.int32)
    index[start[row_of] + np.arange(rows.sites.size) - rows.indptr[row_of]] = rows.sites
    index[start[1:n_rows + 1] - 1] = n_sites + np.arange(n_rows)
    index[start[n_rows]:] = np.arange(n_sites)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = start
    lp.a_matrix_.index_ = index
    lp.a_matrix_.value_ = np.ones(index.size)
    if integer:
        lp.integrality_ = ([highspy.HighsVarType.kInteger] * n_sites
                           + [highspy.HighsVarType.kContinuous] * n_rows)
    return lp


class _Interrupted(Exception):
    """Ctrl-C stopped a HiGHS solve of :func:`solve_mclp` (it returns its best so far)."""


def _run(lp, options: dict, seconds: float | None, start_x=None):
    """Solve ``lp`` with a fresh single-purpose ``Highs`` (aidopt's HiGHS driver: Ctrl-C stops it,
    raising :class:`_Interrupted`); returns the ``Highs`` object and the model status (the time
    limit also when the driver cancelled the solve at ``seconds``)."""
    import highspy

    from aidopt.solvers.errors import SolverError
    from aidopt.solvers.highs import new_highs, run_for

    h = new_highs(options=options)
    if h.passModel(lp) == highspy.HighsStatus.kError:
        raise SolverError("HiGHS rejected the covering model")
    if start_x is not None:
        sol = highspy.HighsSolution()
        sol.col_value = list(start_x)
        h.setSolution(sol)
    return h, run_for(h, seconds, _Interrupted)


def relaxation(rows: CoverRows, n_sites: int, p: int, seconds: float | None = None,
               options: dict | None = None):
    """The LP relaxation of the MCLP on ``rows`` by HiGHS's interior point method (with its
    crossover). Returns ``(x, pi)``: the sites' LP values and the cover rows' duals clipped at 0,
    or ``None`` when HiGHS did not end optimal."""
    import highspy

    h, status = _run(_highs_model(rows, n_sites, p, integer=False),
                     {**(options or {}), "solver": "ipm"}, seconds)
    if status != highspy.HighsModelStatus.kOptimal:
        return None
    sol = h.getSolution()
    if not sol.dual_valid:
        return None
    x = np.asarray(sol.col_value[:n_sites], dtype=float)
    pi = np.maximum(np.asarray(sol.row_dual[:rows.n_rows], dtype=float), 0.0)
    return x, pi


def lagrangian_bounds(rows: CoverRows, n_sites: int, p: int, pi):
    r"""The Lagrangian bound :math:`L(\pi)` of the module docstring, and the same bound for the
    solutions that open site j (``with_open[j]``) and that close it (``with_closed[j]``).

    Valid for any ``pi >= 0`` (negative entries are taken as 0); ``with_closed[j]`` is ``inf``
    when closing j leaves fewer than p sites.

    Returns
    -------
    (float, ndarray, ndarray)
    """
    pi = np.maximum(np.asarray(pi, dtype=float), 0.0)
    W = np.asarray(rows.weight, dtype=float)
    g = -np.bincount(rows.sites, weights=np.repeat(pi, np.diff(rows.indptr)), minlength=n_sites)
    base = float(pi.sum() + np.minimum(0.0, W - pi).sum())
    if p == 0:
        return base, np.full(n_sites, math.inf), np.full(n_sites, base)
    order = np.sort(g)
    bound = base + float(order[:p].sum())
    last = order[p - 1]  # the p-th smallest g
    following = order[p] if p < n_sites else math.inf
    inside = g <= last  # j can be among the p smallest
    with_open = np.where(inside, bound, bound - last + g)
    with_closed = np.where(inside, bound - g + following, bound)
    return bound, with_open, with_closed


# ----------------------------------------------------------------------------- the method
def _mip(rows: CoverRows, n_sites: int, p: int, *, offset: float, seconds, mip_gap: float,
         options: dict, start=None):
    """The MCLP MIP of ``rows`` in HiGHS (from the open sites ``start``). Returns
    ``(open sites or None, bound, status, nodes)``; the bound includes ``offset``."""
    import highspy

    x0 = None
    if start is not None:
        x = np.zeros(n_sites)
        x[start] = 1.0
        hit = (np.add.reduceat(x[rows.sites], rows.indptr[:-1]) > 0 if rows.n_rows
               else np.zeros(0, dtype=bool))
        x0 = np.concatenate([x, (~hit).astype(float)])
    h, status = _run(_highs_model(rows, n_sites, p, integer=True, offset=offset),
                     {"mip_rel_gap": mip_gap, **options}, seconds, x0)
    info = h.getInfo()
    sol = h.getSolution()
    chosen = (np.flatnonzero(np.asarray(sol.col_value[:n_sites]) > 0.5)
              if sol.value_valid else None)
    bound = float(info.mip_dual_bound)
    name = {highspy.HighsModelStatus.kOptimal: "optimal",
            highspy.HighsModelStatus.kTimeLimit: "time_limit",
            highspy.HighsModelStatus.kInterrupt: "interrupted"}.get(status, "error")
    return chosen, bound if math.isfinite(bound) else -math.inf, name, int(info.mip_node_count)


def _restricted_mip(rows: CoverRows, n_sites: int, p: int, sites, forced, incumbent, *,
                    offset: float, seconds, mip_gap: float, options: dict):
    """The heuristic's MIP: the MCLP of ``rows`` on the sites ``sites`` only (``forced`` among
    them open, the others closed), from ``incumbent`` when it lies within them. Returns ``(open
    sites or None, status)`` on the sites' own numbers."""
    free = np.setdiff1d(sites, forced)
    sub, sub_constant = restrict(rows, n_sites, free, forced)
    start = None
    if np.all(np.isin(incumbent, sites)) and np.all(np.isin(forced, incumbent)):
        start = np.searchsorted(free, incumbent[np.isin(incumbent, free)])
    chosen, _, status, _ = _mip(sub, free.size, p - forced.size, offset=sub_constant + offset,
                                seconds=seconds, mip_gap=mip_gap, options=options, start=start)
    return (None if chosen is None else np.union1d(forced, free[chosen])), status


def _margin(upper: float, integral: bool) -> float:
    """How far above ``upper`` a bound must be to fix: just below -1 when every objective value
    is an integer (a solution above ``upper - 1`` is at least ``upper``), 0 otherwise; less a
    relative 1e-9 of ``upper`` for the rounding of the bound's sums."""
    hair = 1e-9 * max(1.0, abs(upper))
    return (-1.0 + 1e-6 if integral else 0.0) + hair


def solve_mclp(rows: CoverRows, n_sites: int, p: int, *, fixed_open=(), integral: bool,
               time_limit: float | None = None, mip_gap: float = 1e-7,
               options: dict | None = None) -> FixingResult:
    """The MCLP on ``rows`` with ``p`` open sites, ``fixed_open`` among them, by the steps of the
    module docstring.

    Parameters
    ----------
    rows : CoverRows
        The aggregated rows (none containing a site of ``fixed_open``).
    n_sites, p : int
    fixed_open : array of int
        Sites forced open.
    integral : bool
        Every row weight is an integer (so is every objective value).
    time_limit : float, optional
        Seconds for the whole method.
    mip_gap : float
        The restricted MIP's relative gap.
    options : dict, optional
        HiGHS options for every solve (the user's ``solver_options``).
    """
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + float(time_limit)
    left = (lambda: None) if deadline is None else (lambda: max(deadline - time.perf_counter(), 0.0))
    options = dict(options or {})
    fixed_open = np.unique(np.asarray(fixed_open, dtype=np.int64))
    stats: dict = {}
    # the sites the model may still choose, on local numbers
    choose = np.setdiff1d(np.arange(n_sites), fixed_open)
    k = int(p - fixed_open.size)
    if not (0 <= k <= choose.size):
        raise ValueError(f"p = {p} with {fixed_open.size} forced sites among {n_sites}")
    base, constant = restrict(rows, n_sites, choose, fixed_open)
    s = int(choose.size)

    def answer(local, value, bound, status):
        open_ = np.union1d(fixed_open, choose[np.asarray(local, dtype=np.int64)])
        stats["seconds"] = time.perf_counter() - t0
        return FixingResult(open_.astype(np.int64), float(value), float(bound), status, stats)

    incumbent = greedy_swap(base, s, k)
    upper = constant + rows_uncovered(base, incumbent, s)
    stats["greedy"] = upper
    if base.n_rows == 0 or k == 0 or k == s:
        return answer(incumbent, upper, upper, "optimal")
    lower = -math.inf
    try:
        tic = time.perf_counter()
        lp = relaxation(base, s, k, left(), options)
        stats["lp_seconds"] = time.perf_counter() - tic
        if lp is None:  # no LP: the MIP on every site, from the heuristic's solution
            chosen, bound, status, nodes = _mip(base, s, k, offset=constant, seconds=left(),
                                                mip_gap=mip_gap, options=options, start=incumbent)
            stats.update(nodes=nodes, free_sites=s, rows=base.n_rows)
            if chosen is not None and constant + rows_uncovered(base, chosen, s) < upper:
                incumbent, upper = chosen, constant + rows_uncovered(base, chosen, s)
            return answer(incumbent, upper, min(bound, upper), status)
        x, pi = lp
        lower, with_open, with_closed = lagrangian_bounds(base, s, k, pi)
        lower += constant
        with_open, with_closed = with_open + constant, with_closed + constant
        stats["lagrangian"] = lower
        # the heuristic: the swaps from the LP's p largest sites; a MIP on the LP's support sites,
        # the incumbent's and the sites of the least bound when open; the swaps again
        tic = time.perf_counter()
        rounded = greedy_swap(base, s, k, np.argsort(-x, kind="stable")[:k])
        value = constant + rows_uncovered(base, rounded, s)
        if value < upper:
            incumbent, upper = rounded, value
        promising = np.argsort(with_open, kind="stable")[:SUPPORT_PER_SITE * k]
        support = np.union1d(np.union1d(np.flatnonzero(x > SUPPORT_TOL), incumbent), promising)
        closed = opened = np.zeros(s, dtype=bool)
        seconds = SUPPORT_SECONDS
        for round_ in range(1, HEURISTIC_ROUNDS + 1):
            # round 1 on the support; each later round on what the last fixings left of it
            sites = np.union1d(support[~closed[support]], np.flatnonzero(opened))
            status = "optimal"
            if k <= sites.size < s and opened.sum() <= k:
                cap = seconds if deadline is None else min(seconds, SUPPORT_SHARE * left())
                chosen, status = _restricted_mip(base, s, k, sites, np.flatnonzero(opened),
                                                 incumbent, offset=constant, seconds=cap,
                                                 mip_gap=mip_gap, options=options)
                if chosen is not None:
                    polished = greedy_swap(base, s, k, chosen)
                    value = constant + rows_uncovered(base, polished, s)
                    if value < upper:
                        incumbent, upper = polished, value
            stats["heuristic_rounds"] = round_
            # reduced-cost fixing at the incumbent so far
            margin = _margin(upper, integral)
            if lower >= upper + margin:  # the LP bound meets the incumbent
                break
            closed = with_open > upper + margin
            opened = (with_closed > upper + margin) & ~closed  # (both: closing is as good)
            # another round, with twice the time, only when this one's MIP was stopped by its
            # time (on a loaded machine the cap is reached earlier in the search); it runs on
            # the sites the fixings leave, which the better incumbent may have made fewer
            if status != "time_limit":
                break
            seconds *= 2
        stats["heuristic"] = upper
        stats["heuristic_seconds"] = time.perf_counter() - tic
        if lower >= upper + _margin(upper, integral):  # the LP bound meets the incumbent
            return answer(incumbent, upper, min(lower, upper), "optimal")
        free = np.flatnonzero(~closed & ~opened)
        forced = np.flatnonzero(opened)
        stats.update(fixed_closed=int(closed.sum()), fixed_open=int(forced.size),
                     free_sites=int(free.size))
        k_free = k - int(forced.size)
        if not (0 <= k_free <= free.size):  # every solution breaks a fixing: none beats the incumbent
            return answer(incumbent, upper, upper, "optimal")
        if k_free in (0, free.size):  # the fixings leave one solution
            only = np.union1d(forced, free if k_free else free[:0])
            value = constant + rows_uncovered(base, only, s)
            if value < upper:
                incumbent, upper = only, value
            return answer(incumbent, upper, upper, "optimal")
        sub, sub_constant = restrict(base, s, free, forced)
        stats["rows"] = sub.n_rows
        start = None
        if np.all(np.isin(incumbent, np.union1d(free, forced))) and np.all(np.isin(forced, incumbent)):
            start = np.searchsorted(free, incumbent[np.isin(incumbent, free)])
        tic = time.perf_counter()
        chosen, bound, status, nodes = _mip(sub, free.size, k_free, offset=sub_constant + constant,
                                            seconds=left(), mip_gap=mip_gap, options=options,
                                            start=start)
        stats["mip_seconds"] = time.perf_counter() - tic
        stats["nodes"] = nodes
        if chosen is not None:
            candidate = np.union1d(forced, free[chosen])
            value = constant + rows_uncovered(base, candidate, s)
            if candidate.size == k and value < upper:
                incumbent, upper = candidate, value
        proven = min(upper, max(bound, lower))
        if status != "optimal" and proven >= upper + _margin(upper, integral):
            status = "optimal"
        return answer(incumbent, upper, proven, status)
    except _Interrupted:  # Ctrl-C: the best so far, with the bound proven so far
        return answer(incumbent, upper, min(lower, upper), "interrupted")
