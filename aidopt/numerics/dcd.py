r"""Dual coordinate descent for the linear 2-norm SVM, free or regularized offset, on sparse rows (CSR).

The problem is the one of :func:`aidopt.numerics.fm.ferris_munson` (``bias="free"``): rows
:math:`x_i`, labels :math:`y_i \in \{-1, +1\}`, bounds :math:`u_i = C s_i`,

.. math::

    \min_{w, b}\ \tfrac12\|w\|^2 + \sum_i u_i \max(0, 1 - y_i(w x_i + b)),
    \qquad
    \min_\alpha\ \tfrac12\|w(\alpha)\|^2 - e'\alpha
    \quad\text{s.t.}\quad y'\alpha = 0,\; 0 \le \alpha \le u,

with :math:`w(\alpha) = \sum_i \alpha_i y_i x_i`. The coordinate steps are those of Hsieh et al.
("A dual coordinate descent method for large-scale linear SVM", ICML 2008): one
:math:`\alpha_i` at a time, its exact minimiser clipped to :math:`[0, u_i]`, with :math:`w` kept
as :math:`\sum_i \alpha_i y_i x_i` and updated on the nonzeros of :math:`x_i` only, so a step
costs :math:`O(\mathrm{nnz}(x_i))`; rows that sit at a bound with a gradient pushing them out
further than every other row's are shrunk (not visited) until the active rows settle, as in
LIBLINEAR. Their method has no equality constraint: it solves the SVM whose offset is
regularized (a constant feature). Here the equality is kept by the method of multipliers
(Hestenes 1969; Powell 1969) on :math:`y'\alpha = 0`: with a multiplier :math:`\lambda` and a
penalty :math:`\rho > 0` the passes minimise over the box

.. math:: \tfrac12\|w(\alpha)\|^2 - e'\alpha + \lambda\sigma + \tfrac{\rho}{2}\sigma^2,
    \qquad \sigma = y'\alpha,

whose coordinate gradient is :math:`y_i(w x_i + \lambda + \rho\sigma) - 1`: a coordinate step
sees the offset :math:`b = \lambda + \rho\sigma` (curvature :math:`\|x_i\|^2 + \rho`), and after
every pass :math:`\lambda \leftarrow \lambda + \rho\sigma`. In the primal this is the proximal
point method on the offset (Rockafellar 1976): each pass works on the SVM with
:math:`\frac{1}{2\rho}(b - \lambda)^2` added, whose minimiser moves :math:`\lambda` to the
optimal :math:`b`. At each exact evaluation (below) the multiplier restarts where the passes'
offset :math:`\lambda + \rho\sigma` is the best offset for the current :math:`w`: the
multiplier alone moves by :math:`\rho\sigma` per pass, far too slowly when the optimal offset
is far from it and :math:`\sigma` is small (a small C: every :math:`\alpha_i \le C s_i`; on
such data it stalled at a gap of 3e-3). The iterates are in the box but not balanced until the
end, which costs nothing: the bound is taken at the balanced :math:`\alpha` (below).

Nothing is trusted but the exact duality gap. When the active rows' projected gradients agree
to ``pg_tol`` (every row visited again first), and also at doubling intervals of passes and of
rows visited (:data:`CHECK_PASSES`, :data:`CHECK_WORK`), one exact evaluation recomputes
:math:`w = X'(\alpha \circ y)` (removing round-off drift), the decision values :math:`Xw`, the best
offset for that :math:`w` (:func:`aidopt.numerics.fm.best_offset`: the primal objective is then
the best for the plane's direction) and the dual value of :math:`\alpha` with the heavier class
scaled down so that :math:`y'\alpha = 0` holds exactly (:func:`aidopt.numerics.fm.balanced`: in
the box and balanced, so its value is a lower bound); the run stops when the relative gap
:math:`(P - D) / \max(\phi, |P|)` is within ``tol``; when it is not, ``pg_tol`` shrinks with
the gap still to close (:func:`next_pg_tol`: the gap falls about in proportion to the spread of
the projected gradients, so one step aims just below ``tol``, by one to three decades). The
best primal point and the best dual point met are returned (weak duality needs no common
iterate). ``time_limit`` and Ctrl-C are honoured between passes (a pass is never cut):
both return the best points met so far, evaluated exactly.

**Regularized offset** (``bias="regularized"``: the modified SVM (1.35),
:math:`\tfrac12(\|w\|^2 + b^2)` plus the hinge terms, :mod:`aidopt.numerics.sor`'s problem).
This is exactly LIBLINEAR's problem with a constant feature 1 appended to every row:
:math:`b = \sum_i \alpha_i y_i = \sigma` is that feature's weight, so the dual has bounds only
(no equality). The same pass runs it with :math:`\lambda = 0` and :math:`\rho = 1` (the
gradient :math:`y_i(w x_i + \sigma) - 1`, the curvature :math:`\|x_i\|^2 + 1`: the appended
column's entry) and no multiplier update, without ever building the extra column. The exact
evaluation takes :math:`b = \sigma` and the dual value
:math:`e'\alpha - \tfrac12(\|w\|^2 + \sigma^2)`, a lower bound for every :math:`\alpha`
in the box (nothing to balance).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from aidopt.numerics._dcd_pass import one_pass
from aidopt.numerics.fm import FMResult, balanced, best_offset

__all__ = ["DCDResult", "dcd", "MAX_WORK", "RHO"]

#: when ``max_iter`` is None, the passes stop once this many times n rows have been visited (a
#: pass over a few hundred shrunk rows is cheap: a count of passes would stop far too early)
MAX_WORK = 10_000
#: the penalty rho as a share of the mean squared row norm: 0.01-0.1 took the fewest passes on
#: text-like and wide Gaussian data (docs/svm.md, "Sparse and wide data"); 1 (LIBLINEAR's
#: constant feature 1 on unit rows) took twice as many, 10 ten times as many
RHO = 0.03
#: an exact evaluation also comes after CHECK_PASSES passes or CHECK_WORK times n rows visited,
#: then at twice the passes and rows of the last one plus these, whatever ``pg_tol`` says: the
#: best points (what a time limit or Ctrl-C returns) and the multiplier's restart stay recent in
#: a run whose projected gradients hover above ``pg_tol``, at a cost logarithmic in the run
CHECK_PASSES, CHECK_WORK = 100, 2.0
#: ``pg_tol`` of the first exact evaluation (the projected gradients are in units of the margin)
FIRST_PG_TOL = 1.0
#: after an exact evaluation that fails, the next ``pg_tol`` is the spread of the projected
#: gradients times ``PG_SAFETY * tol / gap``, kept between ``PG_STEP_MIN`` and 0.1 times it: the
#: gap fell in proportion to the spread (about 0.02 times it over five decades on the text-like
#: and dense Gaussian sets), so one step aims just below ``tol``, never more than three decades
PG_SAFETY, PG_STEP_MIN = 0.3, 1e-3
#: "stalled": this many exact evaluations in a row without lowering the best gap by a tenth,
#: once ``pg_tol`` is down to rounding (:data:`STALL_PG`): nothing more will come of the passes
STALL_CHECKS, STALL_PG = 8, 1e-13


@dataclass
class DCDResult(FMResult):
    """:class:`~aidopt.numerics.fm.FMResult` of :func:`dcd` (``iterations`` are passes over the
    active rows), with the number of exact evaluations (``checks``) and the rows visited over all
    passes divided by n (``work``)."""

    checks: int = 0
    work: float = 0.0


def _pass(indptr, indices, data, y, u, sq, alpha, w, active, n_active, lam, rho, sigma, shrink,
          pg_hi, pg_lo, rng):
    """One pass of coordinate steps over ``active[:n_active]`` in a fresh random order
    (:func:`aidopt.numerics._dcd_pass.one_pass`): ``(n_active, max PG, min PG, sigma)``."""
    rng.shuffle(active[:n_active])
    return one_pass(indptr, indices, data, y, u, sq, alpha, w, active, n_active, lam, rho, sigma,
                    shrink, pg_hi, pg_lo)


class _Best:
    """The best primal point ``(w, b, P)`` and the best dual point ``(alpha, D)`` met so far."""

    def __init__(self, regularized: bool = False):
        self.regularized = regularized
        self.offset = 0.0  # the best offset of the last w evaluated
        self.w, self.b, self.primal = None, 0.0, math.inf
        self.alpha, self.dual = None, -math.inf

    def evaluate(self, X, y, u, alpha):
        """Exact values at ``alpha``: returns the refreshed ``w = X'(alpha y)`` and keeps the
        primal point (``w`` with its best offset; regularized: ``b = y'alpha``) and the dual
        point (``alpha`` balanced; regularized: ``alpha`` itself) when they are the best so far."""
        w = X.T @ (alpha * y)
        margin = y * (X @ w)
        if self.regularized:  # b is the weight of the constant feature: y'alpha, regularized
            b = self.offset = float(alpha @ y)
            quad = float(w @ w) + b * b
            primal = 0.5 * quad + float(u @ np.maximum(0.0, 1.0 - margin - y * b))
        else:
            b = self.offset = best_offset(margin, y, u)
            primal = 0.5 * float(w @ w) + float(u @ np.maximum(0.0, 1.0 - margin - y * b))
        if primal < self.primal:
            self.w, self.b, self.primal = w.copy(), b, primal
        if self.regularized:
            even, dual = alpha.copy(), float(alpha.sum()) - 0.5 * quad
        else:
            even = balanced(alpha, y)
            w_even = X.T @ (even * y)
            dual = float(even.sum()) - 0.5 * float(w_even @ w_even)
        if dual > self.dual:
            self.alpha, self.dual = even, dual
        return w

    def gap(self, floor: float) -> float:
        return (self.primal - self.dual) / max(floor, abs(self.primal))


def next_pg_tol(spread: float, gap: float, tol: float) -> float:
    """The projected-gradient tolerance after an exact evaluation at ``spread`` (the active rows'
    largest minus smallest projected gradient) found the relative ``gap`` above ``tol``
    (:data:`PG_SAFETY`, :data:`PG_STEP_MIN`)."""
    step = min(0.1, max(PG_STEP_MIN, PG_SAFETY * tol / gap)) if gap > 0 else 0.1
    return spread * step


def dcd(X, y, u, *, tol: float = 1e-6, max_iter: int | None = None,
        time_limit: float | None = None, floor: float = 0.0, seed: int = 0,
        rho: float | None = None, shrinking: bool = True, bias: str = "free") -> DCDResult:
    """Solve the weighted linear 2-norm SVM (free or regularized offset) by dual coordinate
    descent.

    Parameters
    ----------
    X : scipy.sparse CSR matrix of shape (n, m)
        float64 values; int32 or int64 indices. Dense rows are passed as a CSR matrix too.
    y : ndarray (n,)
        Labels in {-1, +1}, both present (``bias="free"``).
    u : ndarray (n,)
        Upper bounds ``C s_i``, positive.
    tol : float
        Relative gap ``(P - D) / max(floor, |P|)`` at which to stop.
    max_iter : int, optional
        Passes over the active rows; default: until :data:`MAX_WORK` times n rows have been
        visited.
    time_limit : float, optional
        Seconds, checked after every pass.
    floor : float
        Lower limit of the gap's denominator.
    seed : int
        Seed of the random order of the rows in each pass.
    rho : float, optional
        Penalty of the method of multipliers; default :data:`RHO` times the mean of
        :math:`\\|x_i\\|^2` (1 for rows without entries). Not used with
        ``bias="regularized"`` (its "penalty" is the constant feature's 1).
    shrinking : bool, default True
    bias : {"free", "regularized"}, default "free"
        ``"regularized"``: the modified SVM (1.35), :math:`\\tfrac12 b^2` added to the
        objective (LIBLINEAR's constant feature; module docstring).

    Returns
    -------
    DCDResult
        ``w`` and ``b`` of the best primal point, ``alpha`` (in the box, balanced) of the best
        dual point, their values ``objective`` and ``dual`` and relative ``gap``; ``status``
        ``"optimal"`` (gap within ``tol``), ``"stalled"`` (the projected gradients agree to
        rounding but the gap stays above ``tol``), ``"iteration_limit"``, ``"time_limit"`` or
        ``"interrupted"`` (Ctrl-C, between two passes).
    """
    start = time.perf_counter()
    y = np.ascontiguousarray(y, dtype=float)
    u = np.ascontiguousarray(u, dtype=float)
    n, m = X.shape
    if y.shape != (n,) or u.shape != (n,) or not np.all(np.abs(y) == 1) or not np.all(u > 0):
        raise ValueError("dcd: y in {-1, +1} and u > 0 need one entry per row")
    if bias not in ("free", "regularized"):
        raise ValueError(f"dcd: bias must be 'free' or 'regularized', got {bias!r}")
    regularized = bias == "regularized"
    if not regularized and (np.all(y > 0) or np.all(y < 0)):
        raise ValueError("dcd: both classes are needed")
    indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
    indices = X.indices if X.indices.dtype in (np.int32, np.int64) else X.indices.astype(np.int64)
    indices, data = np.ascontiguousarray(indices), np.ascontiguousarray(X.data, dtype=float)
    sq = np.bincount(np.repeat(np.arange(n), np.diff(indptr)), weights=data * data, minlength=n)
    if regularized:  # the constant feature: offset sigma, curvature ||x_i||^2 + 1, lam stays 0
        rho = 1.0
    elif rho is None:
        mean = float(sq.mean())
        rho = RHO * (mean if mean > 0 else 1.0)
    max_passes = math.inf if max_iter is None else int(max_iter)
    alpha, w = np.zeros(n), np.zeros(m)
    active = np.arange(n, dtype=np.int64)
    n_active, pg_hi, pg_lo, pg_tol = n, np.inf, -np.inf, FIRST_PG_TOL
    lam = sigma = 0.0
    best = _Best(regularized)
    passes = checks = 0
    work = 0.0
    next_pass, next_work = CHECK_PASSES, CHECK_WORK  # the exact evaluations not waiting for pg_tol
    status = "iteration_limit"
    history: list[float] = []
    rng = np.random.default_rng(seed)
    try:
        while passes < max_passes and (max_iter is not None or work < MAX_WORK):
            visited = n_active
            n_active, hi, lo, sigma = _pass(indptr, indices, data, y, u, sq, alpha, w, active,
                                            n_active, lam, rho, sigma, bool(shrinking), pg_hi,
                                            pg_lo, rng)
            passes += 1
            work += visited / n
            if not regularized:
                lam += rho * sigma
            settled = hi - lo <= pg_tol
            if settled and visited < n:  # shrunk: visit every row before any conclusion
                n_active, pg_hi, pg_lo = n, np.inf, -np.inf
            else:
                pg_hi = hi if shrinking and hi > 0 else np.inf
                pg_lo = lo if shrinking and lo < 0 else -np.inf
                if settled or passes >= next_pass or work >= next_work:
                    checks += 1
                    next_pass, next_work = 2 * passes + CHECK_PASSES, 2 * work + CHECK_WORK
                    w = best.evaluate(X, y, u, alpha)
                    sigma = float(alpha @ y)
                    gap = best.gap(floor)
                    if gap <= tol:
                        status = "optimal"
                        break
                    if not regularized:  # the passes' offset: the best for this w
                        lam = best.offset - rho * sigma
                    history.append(gap)
                    if (pg_tol <= STALL_PG and len(history) > STALL_CHECKS
                            and gap > 0.9 * history[-1 - STALL_CHECKS]):
                        status = "stalled"
                        break
                    if settled:
                        pg_tol = max(next_pg_tol(hi - lo, gap, tol), STALL_PG / 10.0)
            if time_limit is not None and time.perf_counter() - start > time_limit:
                status = "time_limit"
                break
    except KeyboardInterrupt:
        status = "interrupted"
    if status != "optimal":
        best.evaluate(X, y, u, alpha)
        if best.gap(floor) <= tol:
            status = "optimal"
    return DCDResult(best.w, best.b, best.alpha, best.primal, best.dual, best.gap(floor), passes,
                     status, checks=checks, work=work)
