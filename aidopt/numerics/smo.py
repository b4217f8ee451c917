r"""Sequential minimal optimization for the dense SVM dual, warm-started, in double precision.

The problem is the one :func:`aidopt.numerics.fm.ferris_munson_kernel` solves,

.. math:: \min_\alpha \tfrac12 \alpha^\top Q \alpha - e^\top\alpha
          \quad\text{s.t.}\quad y^\top\alpha = 0,\; 0 \le \alpha \le u,

with :math:`Q = D_y \bar K D_y` held in memory (kernel AID's aggregated duals, a few thousand
clusters). Each step moves two coordinates of :math:`\alpha` along the equality: the pair is the
maximal-violating index i and the j that, with i, decreases the objective most in the second-order
model (working set selection 2 of Fan, Chen & Lin, JMLR 6, 2005), clipped to the box; the gradient
:math:`Q\alpha - e` is updated with the two columns. Unlike LIBSVM (the paper's choice, through
scikit-learn), it starts from a given feasible :math:`\alpha` — between AID iterations the
children of a split cluster inherit its :math:`\bar\alpha` in proportion to their weights — and
it keeps :math:`Q` in double precision, so its gap goes as low as :mod:`aidopt.numerics.fm`'s.

It stops on the same rigorous gap as :func:`aidopt.numerics.fm.gap_of` (the plane's exact hinge against the
dual value of :math:`\alpha` clipped and balanced), checked every ``chunk`` steps.
"""

from __future__ import annotations

import time

import numpy as np

from aidopt.numerics._smo_pairs import pairs as _pairs
from aidopt.numerics.fm import FMResult, balanced, gap_of

__all__ = ["smo"]


def smo(Q, y, u, alpha0=None, *, tol: float = 1e-9, max_iter: int | None = None,
        time_limit: float | None = None, floor: float = 0.0) -> FMResult:
    """Solve the dense SVM dual by SMO from ``alpha0``.

    Parameters
    ----------
    Q : ndarray (K, K)
        :math:`D_y \\bar K D_y`, symmetric positive semidefinite.
    y : ndarray (K,)
        Labels in {-1, +1}, both present.
    u : ndarray (K,)
        Upper bounds, positive.
    alpha0 : ndarray (K,), optional
        Start; clipped to the box and balanced (:func:`aidopt.numerics.fm.balanced`). Zero by default.
    tol : float
        Relative gap at which to stop (:func:`aidopt.numerics.fm.gap_of`).
    max_iter : int, optional
        Pair updates; ``max(10^5, 200 K)`` by default.
    time_limit : float, optional
        Seconds.
    floor : float
        Lower limit of the gap's denominator.

    Returns
    -------
    FMResult
        ``alpha`` (clipped and balanced), ``b`` (the better of SMO's offset and the best offset
        for ``alpha``), primal and dual values, their relative gap, the pair updates done and the
        status: ``"optimal"`` (gap within ``tol``), ``"stalled"`` (no pair violates optimality
        by more than rounding, gap above ``tol``), ``"iteration_limit"`` (also when thirty gap
        checks did not lower a gap above ``1000 tol`` by a tenth: SMO crawls on badly scaled
        kernels) or ``"time_limit"``.
    """
    Q = np.ascontiguousarray(Q, dtype=float)
    y = np.asarray(y, dtype=float)
    u = np.asarray(u, dtype=float)
    K = y.size
    if Q.shape != (K, K) or u.shape != (K,) or not np.all(np.abs(y) == 1) or not np.all(u > 0):
        raise ValueError("smo: Q must be K x K, y in {-1, +1} and u > 0 with one entry per row")
    if np.all(y > 0) or np.all(y < 0):
        raise ValueError("smo: both classes are needed")
    alpha = np.zeros(K) if alpha0 is None else balanced(np.clip(np.asarray(alpha0, float), 0, u), y)
    max_iter = max(100_000, 200 * K) if max_iter is None else int(max_iter)
    start = time.perf_counter()
    grad = Q @ alpha - 1.0
    res = best = gap_of(Q, y, u, alpha, _offset(y, u, alpha, grad), floor)
    # a maximal violation delta costs at most delta * sum(u) in the gap: aim at a quarter of
    # tol * |P| that way, check the true gap, and aim lower while it is above tol
    target = 0.25 * tol * max(floor, abs(res.objective)) / float(u.sum())
    chunk = max(1000, K)
    done, status, history = 0, "iteration_limit", []
    while res.gap > tol and done < max_iter:
        steps, violation = _pairs(Q, y, u, alpha, grad, min(chunk, max_iter - done),
                                  min(200, K), target)
        done += steps
        grad = Q @ alpha - 1.0  # exact again (shrunk variables' entries were stale)
        res = gap_of(Q, y, u, alpha, _offset(y, u, alpha, grad), floor)
        if res.gap < best.gap:
            best = res
        if res.gap <= tol:
            break
        scale = max(1.0, float(np.abs(grad).max()))
        if violation <= 1e-15 * scale * max(1.0, K ** 0.5):
            status = "stalled"
            break
        if time_limit is not None and time.perf_counter() - start > time_limit:
            status = "time_limit"
            break
        if violation <= target:
            target *= 0.25
        elif steps == 0:  # the selected pair cannot move (rounding): nothing will change
            status = "stalled"
            break
        # crawling (tiny steps on a badly scaled Q): give up when thirty checks did not lower a
        # gap still far above tol by a tenth, and let the caller hand it to an interior point
        history.append(res.gap)
        if len(history) > 30 and res.gap > 1e3 * tol and res.gap > 0.9 * history[-31]:
            break
    if best.gap <= tol:
        status = "optimal"
    return FMResult(None, best.b, best.alpha, best.objective, best.dual, best.gap, done, status)


def _offset(y, u, alpha, grad) -> float:
    """SMO's b: minus the mean of :math:`y_k \\nabla_k` over the free :math:`\\alpha_k`, else the
    midpoint of the feasible interval."""
    yg = y * grad
    free = (alpha > 0) & (alpha < u)
    if free.any():
        return float(-yg[free].mean())
    up = ((y > 0) & (alpha < u)) | ((y < 0) & (alpha > 0))
    low = ((y < 0) & (alpha < u)) | ((y > 0) & (alpha > 0))
    hi = (-yg[up]).max() if up.any() else 0.0
    lo = (-yg[low]).min() if low.any() else 0.0
    return float(0.5 * (hi + lo))
