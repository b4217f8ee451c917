r"""Sequential minimal optimization for the dense SVM dual, warm-started, in double precision.

The problem is the one :func:`aidopt.fm.ferris_munson_kernel` solves,

.. math:: \min_\alpha \tfrac12 \alpha^\top Q \alpha - e^\top\alpha
          \quad\text{s.t.}\quad y^\top\alpha = 0,\; 0 \le \alpha \le u,

with :math:`Q = D_y \bar K D_y` held in memory (kernel AID's aggregated duals, a few thousand
clusters). Each step moves two coordinates of :math:`\alpha` along the equality: the pair is the
maximal-violating index i and the j that, with i, decreases the objective most in the second-order
model (working set selection 2 of Fan, Chen & Lin, JMLR 6, 2005), clipped to the box; the gradient
:math:`Q\alpha - e` is updated with the two columns. Unlike LIBSVM (the paper's choice, through
scikit-learn), it starts from a given feasible :math:`\alpha` — between AID iterations the
children of a split cluster inherit its :math:`\bar\alpha` in proportion to their weights — and
it keeps :math:`Q` in double precision, so its gap goes as low as :mod:`aidopt.fm`'s.

It stops on the same rigorous gap as :func:`aidopt.fm.gap_of` (the plane's exact hinge against the
dual value of :math:`\alpha` clipped and balanced), checked every ``chunk`` steps.
"""

from __future__ import annotations

import time

import numba
import numpy as np

from aidopt.fm import FMResult, balanced, gap_of

__all__ = ["smo"]

_TAU = 1e-12  # curvature floor of a pair (a flat direction is moved as if slightly curved)


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
        Start; clipped to the box and balanced (:func:`aidopt.fm.balanced`). Zero by default.
    tol : float
        Relative gap at which to stop (:func:`aidopt.fm.gap_of`).
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


@numba.njit(cache=True)
def _pairs(Q, y, u, alpha, grad, steps, shrink_every, target):  # pragma: no cover - compiled
    """Up to ``steps`` pair updates in place; returns ``(updates done, last violation)``. The
    loop ends early when the maximal violation is at most ``target``.

    Shrinking: every ``shrink_every`` updates, a variable at a bound that can move only in the
    direction that does not violate optimality, and whose gradient lies beyond the current
    violating range, leaves the selection and the gradient updates (its gradient goes stale;
    the caller recomputes the full gradient after the call, and every variable is back at the
    next call)."""
    K = y.size
    QD = np.empty(K)
    for t in range(K):
        QD[t] = Q[t, t]
    active = np.arange(K)
    n_act = K
    violation = 0.0
    for it in range(steps):
        # i: the largest -y_t grad_t over I_up (alpha_t can move up along y_t)
        gmax, i = -np.inf, -1
        for q in range(n_act):
            t = active[q]
            if (y[t] > 0 and alpha[t] < u[t]) or (y[t] < 0 and alpha[t] > 0):
                v = -y[t] * grad[t]
                if v > gmax:
                    gmax, i = v, t
        # j over I_low: the largest second-order decrease b^2 / a with b = gmax + y_t grad_t > 0
        gmin, j, best = np.inf, -1, 0.0
        for q in range(n_act):
            t = active[q]
            if (y[t] > 0 and alpha[t] > 0) or (y[t] < 0 and alpha[t] < u[t]):
                v = -y[t] * grad[t]
                if v < gmin:
                    gmin = v
                b = gmax - v
                if b > 0.0:
                    a = QD[i] + QD[t] - 2.0 * y[i] * y[t] * Q[i, t]
                    if a <= 0.0:
                        a = _TAU
                    if b * b / a > best:
                        best, j = b * b / a, t
        violation = gmax - gmin
        if i < 0 or j < 0 or violation <= 0.0:
            return it, max(violation, 0.0)
        if violation <= target:
            return it, violation
        old_i, old_j = alpha[i], alpha[j]
        a = QD[i] + QD[j] - 2.0 * y[i] * y[j] * Q[i, j]
        if a <= 0.0:
            a = _TAU
        # move alpha_i by y_i * d and alpha_j by -y_j * d (keeps y'alpha), d from the model,
        # clipped so that both stay in their boxes
        d = (gmax + y[j] * grad[j]) / a
        d = _clip_step(d, y[i], alpha[i], u[i])
        d = _clip_step(d, -y[j], alpha[j], u[j])
        alpha[i] = min(max(old_i + y[i] * d, 0.0), u[i])
        alpha[j] = min(max(old_j - y[j] * d, 0.0), u[j])
        di, dj = alpha[i] - old_i, alpha[j] - old_j
        if di == 0.0 and dj == 0.0:
            return it, violation
        for q in range(n_act):  # Q is symmetric: rows i and j, read contiguously
            t = active[q]
            grad[t] += Q[i, t] * di + Q[j, t] * dj
        if (it + 1) % shrink_every == 0:
            kept = 0
            for q in range(n_act):
                t = active[q]
                v = -y[t] * grad[t]
                up = (y[t] > 0 and alpha[t] < u[t]) or (y[t] < 0 and alpha[t] > 0)
                low = (y[t] > 0 and alpha[t] > 0) or (y[t] < 0 and alpha[t] < u[t])
                if (up and not low and v < gmin) or (low and not up and v > gmax):
                    continue  # stuck at its bound for now
                active[kept] = t
                kept += 1
            n_act = kept
    return steps, violation


@numba.njit(cache=True)
def _clip_step(d, direction, a, ub):  # pragma: no cover - compiled
    """The largest step ``<= d`` (d >= 0) with ``0 <= a + direction * d <= ub``."""
    if direction > 0:
        return min(d, ub - a)
    return min(d, a)
