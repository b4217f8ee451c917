r"""An interior point for weighted 2-norm SVMs: dense (m+1) x (m+1) normal equations (linear).

The method of Ferris & Munson, "Interior-point methods for massive support vector machines"
(SIAM J. Optim. 13(3), 2002), written for the weighted 2-norm SVM that AID solves at every
iteration: centroids :math:`x_k`, labels :math:`y_k \in \{-1, +1\}`, bounds :math:`u_k = C W_k`.
With :math:`h_k = y_k x_k` (rows of H, K x p) its dual is

.. math::

    \min_\alpha\ \tfrac12 \|H'\alpha\|^2 - e'\alpha
    \quad\text{s.t.}\quad y'\alpha = 0,\quad 0 \le \alpha \le u,

and at the optimum :math:`w = H'\alpha` and :math:`b = -\beta`, :math:`\beta` the multiplier of
:math:`y'\alpha = 0` (Park & Klabjan eq. (9) and its dual). With ``bias="regularized"`` (the
modified SVM (1.35) of Bradley, Mangasarian & Musicant, whose dual (1.37) has bounds only) the rows
are :math:`h_k = y_k [x_k, 1]`, :math:`[w; b] = H'\alpha` and there is no equality.

Mehrotra's predictor-corrector steps follow the primal-dual central path (multipliers
:math:`\pi \ge 0` of :math:`\alpha \ge 0` and :math:`\rho \ge 0` of :math:`\alpha \le u`; at the
optimum :math:`\rho_k` is the hinge slack :math:`\xi_k`). Each step eliminates
:math:`\Delta\alpha = D^{-1}(g - \tilde H\zeta)` with the diagonal
:math:`D = \pi/\alpha + \rho/(u - \alpha)` and solves for :math:`\zeta = (\Delta w, \Delta\beta)`

.. math::

    \bigl(\tilde H' D^{-1} \tilde H + \operatorname{diag}(I_p, 0)\bigr)\,\zeta
    = \tilde H' D^{-1} g + (0, -y'\alpha),\qquad \tilde H = [H,\ -y],

a dense (p+1) x (p+1) Cholesky factorisation: :math:`O(K p^2)` flops through BLAS and no K x K
matrix, where a general QP code (Clarabel, HiGHS) meets the dense rank-p Hessian
:math:`HH'`. As in Frisch–Newton (:mod:`aidopt.numerics.fn`), the rows with huge :math:`D^{-1}` are the few
(at most about p + 1) free support vectors on the margin.

Stopping is on a rigorous gap: the primal objective of :math:`(w, b)` with its exact hinge, and
the dual objective of :math:`\alpha` after the heavier class is scaled down so that
:math:`y'\alpha = 0` holds exactly (:math:`\alpha` stays in the box), so the dual value is a lower
bound on the aggregated optimum. Near the end double precision can keep that gap above a tight
``tol`` (a hard margin with large bounds u: a margin rounded by 1e-14 costs u 1e-14); a gap that
stops halving is reported as ``"stalled"`` with the best iterate.

:func:`ferris_munson_kernel` runs the same iteration on a dense Hessian (kernel AID's
:math:`Q = D_y \bar K D_y`): each step factors :math:`Q + D` (K x K Cholesky) and solves the
equality by its Schur complement.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy import linalg

from aidopt.numerics.fn import max_step

__all__ = ["FMResult", "ferris_munson", "ferris_munson_kernel", "gap_of", "best_offset", "balanced"]

#: fraction of the step to the boundary (as in aidopt.numerics.fn)
STEP = 0.99995
#: the start: alpha = min(u / 2, START / median diag Q) (balanced)
START = 1.0
#: "stalled": near the end (smallest gap below STALL_GAP) the smallest gap has not dropped by
#: the factor STALL in STALL_ITERATIONS steps (rounding, e.g. on badly scaled data)
STALL, STALL_ITERATIONS, STALL_GAP = 0.5, 6, 1e-6


@dataclass
class FMResult:
    """Outcome of :func:`ferris_munson` and :func:`ferris_munson_kernel`.

    Attributes
    ----------
    w : ndarray (m,) or None
        None from :func:`ferris_munson_kernel` (the plane lives in feature space).
    b : float
    alpha : ndarray (K,)
        The dual vector, in the box and balanced (:func:`balanced`) for ``bias="free"``.
    objective : float
        Primal objective of ``(w, b)`` (exact hinge).
    dual : float
        Dual objective of ``alpha``: a lower bound on the optimum.
    gap : float
        ``(objective - dual) / max(floor, |objective|)``.
    iterations : int
    status : str
        ``"optimal"`` (gap within ``tol``), ``"stalled"`` (rounding keeps the gap above ``tol``:
        below 1e-6 but no halving in 6 steps), ``"iteration_limit"``, ``"time_limit"`` or ``"error"`` (a
        singular system or a non-finite iterate). The values are those of the iterate with the
        smallest gap.
    """

    w: np.ndarray | None
    b: float
    alpha: np.ndarray
    objective: float
    dual: float
    gap: float
    iterations: int
    status: str


def balanced(alpha, y) -> np.ndarray:
    """Scale down the class with the larger total of ``alpha`` so that ``y'alpha = 0`` exactly.

    An unbalanced alpha gives no lower bound at all (the Lagrangian is unbounded in b); scaling
    one class keeps the box, keeps alpha proportional to s within every (label-pure) cluster, and
    lowers the bound by no more than the imbalance. Used by every SVM certificate too.
    """
    positive = y > 0
    pos, neg = float(alpha[positive].sum()), float(alpha[~positive].sum())
    if pos > neg:
        return np.where(positive, alpha * (neg / pos), alpha)
    if neg > pos:
        return np.where(positive, alpha, alpha * (pos / neg))
    return alpha


def ferris_munson(X, y, u, *, bias: str = "free", tol: float = 1e-9, max_iter: int = 100,
                  time_limit: float | None = None, floor: float = 0.0) -> FMResult:
    r"""The weighted linear 2-norm SVM :math:`\min \tfrac12\|w\|^2 [+ \tfrac12 b^2] + \sum_k u_k
    \max(0, 1 - y_k(x_k w + b))` by a primal-dual interior point on its dual.

    Parameters
    ----------
    X : ndarray (K, m)
    y : ndarray (K,)
        Labels in {-1, +1}; with ``bias="free"`` both classes must be present.
    u : ndarray (K,)
        Positive bounds :math:`C W_k`.
    bias : {"free", "regularized"}
        ``"regularized"`` adds :math:`\tfrac12 b^2` (the modified SVM (1.35)).
    tol : float
        Relative gap ``(P - D) / max(floor, |P|)`` to stop at.
    max_iter : int
    time_limit : float, optional
        Seconds.
    floor : float
        Floor of the gap's denominator.

    Returns
    -------
    FMResult
    """
    X = np.asarray(X, dtype=float)
    if bias not in ("free", "regularized"):
        raise ValueError(f"bias must be 'free' or 'regularized', got {bias!r}")
    K, m = X.shape
    y, u = _check(y, u, K, bias == "free")
    H = y[:, None] * (X if bias == "free" else np.column_stack([X, np.ones(K)]))
    alpha, beta, values, iterations, status = _mehrotra(
        _LowRank(H, y if bias == "free" else None), y, u, tol=tol, max_iter=max_iter,
        time_limit=time_limit, floor=floor)
    v = H.T @ alpha  # the plane of the iterate (alpha before balancing)
    w, b = (v, -beta) if bias == "free" else (v[:m], v[m])
    return FMResult(w, float(b), *values, iterations, status)


def ferris_munson_kernel(Q, y, u, *, tol: float = 1e-9, max_iter: int = 100,
                         time_limit: float | None = None, floor: float = 0.0) -> FMResult:
    r"""The same interior point on a dense dual Hessian ``Q`` (K x K, positive semidefinite):
    :math:`\min \tfrac12\alpha'Q\alpha - e'\alpha` s.t. :math:`y'\alpha = 0`,
    :math:`0 \le \alpha \le u`; for the kernel SVM :math:`Q = D_y \bar K D_y`. Each step
    factors :math:`Q + D` (K x K Cholesky) and solves the one equality by its Schur complement.
    The result's ``w`` is ``None`` (it lives in feature space); ``b = -beta``; the primal
    objective is :math:`\tfrac12\alpha'Q\alpha + \sum_k u_k \max(0, 1 - (Q\alpha)_k - y_k b)`.
    """
    Q = np.asarray(Q, dtype=float)
    K = Q.shape[0]
    if Q.shape != (K, K):
        raise ValueError(f"ferris_munson_kernel: Q must be square, got shape {Q.shape}")
    y, u = _check(y, u, K, True)
    _, beta, values, iterations, status = _mehrotra(
        _Dense(Q, y), y, u, tol=tol, max_iter=max_iter, time_limit=time_limit, floor=floor)
    return FMResult(None, -float(beta), *values, iterations, status)


def gap_of(Q, y, u, alpha, b, floor: float = 0.0, columns=None) -> FMResult:
    """Any solver's ``(alpha, b)`` for the dense dual (``Q`` as in :func:`ferris_munson_kernel`)
    judged as this method judges its own iterates: the primal objective of the plane, the dual
    value of ``alpha`` clipped and balanced (a lower bound), and their relative gap.

    With ``columns`` (indices), ``alpha`` must be zero outside them (a working set's solution)
    and ``Q`` holds only those columns of the Hessian (K x len(columns)), or is a function
    ``Q(alpha[columns])`` returning the product of those columns with it."""
    y, u = _check(y, u, len(y), True)
    alpha = np.asarray(alpha, dtype=float)
    if columns is None:
        system = _Dense(np.asarray(Q, dtype=float), y)
    else:
        columns = np.asarray(columns)
        if np.any(np.delete(alpha, columns)):
            raise ValueError("gap_of: alpha must be zero outside columns")
        system = _Columns(Q if callable(Q) else np.asarray(Q, dtype=float), columns)
    Qa = system.product(alpha)
    best = None
    for offset in (float(b), best_offset(Qa, y, u)):  # the given b, and the best b for alpha
        values = _evaluate(system, y, u, alpha, Qa, -offset, floor)
        if best is None or values[1] < best[1][1]:
            best = (offset, values)
    offset, values = best
    return FMResult(None, offset, *values, 0, "optimal" if np.isfinite(values[3]) else "error")


def best_offset(margin, y, u) -> float:
    r"""The offset b minimising :math:`\sum_k u_k \max(0, 1 - m_k - y_k b)` (``margin`` m
    without b): a weighted median of the breakpoints :math:`y_k (1 - m_k)`, where the slope
    :math:`-\sum_{y_k > 0, b < b_k} u_k + \sum_{y_k < 0, b > b_k} u_k` turns nonnegative."""
    breaks = y * (1.0 - margin)
    order = np.argsort(breaks, kind="stable")
    slope = np.cumsum(u[order]) - float(u[y > 0].sum())
    return float(breaks[order][min(int(np.searchsorted(slope, 0.0)), y.size - 1)])


def _check(y, u, K, free):
    y = np.asarray(y, dtype=float)
    u = np.asarray(u, dtype=float)
    if y.shape != (K,) or u.shape != (K,) or not np.all(np.abs(y) == 1) or not np.all(u > 0):
        raise ValueError("ferris_munson: y in {-1, +1} and u > 0 need one entry per row")
    if free and (np.all(y > 0) or np.all(y < 0)):
        raise ValueError("ferris_munson: bias='free' needs both classes")
    return y, u


class _LowRank:
    """Newton systems of ``Q = HH'`` through the (p+1) x (p+1) normal equations in
    ``zeta = (H'dalpha, dbeta)`` (``a``: the equality's row y, or None)."""

    def __init__(self, H, a):
        self.H, self.free = H, a is not None
        self.Ht = np.column_stack([H, -a]) if self.free else H
        self.ridge = np.r_[np.ones(H.shape[1]), 0.0] if self.free else np.ones(H.shape[1])

    def product(self, alpha):
        return self.H @ (self.H.T @ alpha)

    def diagonal(self):
        return np.einsum("ij,ij->i", self.H, self.H)

    def factor(self, d):
        self.dinv = 1.0 / d
        self.cho = linalg.cho_factor((self.Ht * self.dinv[:, None]).T @ self.Ht
                                     + np.diag(self.ridge), lower=True, check_finite=False)

    def solve(self, g, r_p):
        rhs = self.Ht.T @ (self.dinv * g)
        if self.free:
            rhs[-1] -= r_p
        zeta = linalg.cho_solve(self.cho, rhs, check_finite=False)
        return self.dinv * (g - self.Ht @ zeta), float(zeta[-1]) if self.free else 0.0


class _Columns:
    """Products with a Hessian of which only the columns ``columns`` are known (``alpha`` is
    zero elsewhere)."""

    def __init__(self, Q, columns):
        self.Q, self.columns, self.free = Q, columns, True

    def product(self, alpha):
        return self.Q(alpha[self.columns]) if callable(self.Q) else self.Q @ alpha[self.columns]


class _Dense:
    """Newton systems of a dense ``Q``: Cholesky of ``Q + D``, the equality y'dalpha = -r_p by
    its Schur complement."""

    def __init__(self, Q, y):
        self.Q, self.y, self.free = Q, y, True

    def product(self, alpha):
        return self.Q @ alpha

    def diagonal(self):
        return np.diag(self.Q)

    def factor(self, d):
        M = self.Q + np.diag(d)
        self.cho = linalg.cho_factor(M, lower=True, check_finite=False, overwrite_a=True)
        self.My = linalg.cho_solve(self.cho, self.y, check_finite=False)
        self.yMy = float(self.y @ self.My)

    def solve(self, g, r_p):
        Mg = linalg.cho_solve(self.cho, g, check_finite=False)
        dbeta = (-r_p - float(self.y @ Mg)) / self.yMy
        return Mg + dbeta * self.My, dbeta


def _mehrotra(system, y, u, *, tol, max_iter, time_limit, floor):
    """Mehrotra's predictor-corrector on ``min 1/2 alpha'Q alpha - e'alpha`` over the box, with
    ``y'alpha = 0`` when ``system.free``. Returns ``(alpha, beta, (P, D, alpha balanced, gap),
    iterations, status)``: the last iterate (whose ``alpha`` and ``b = -beta`` define the plane)
    and the values :func:`_evaluate` gives it."""
    start = time.perf_counter()
    K, free = y.size, system.free
    # start: alpha at a balanced half of the box, beta = 0, multipliers from the dual residual;
    # the upper slack is a variable of its own (u - alpha loses all digits when alpha ~ u)
    alpha = np.minimum(0.5 * u, START / max(float(np.median(system.diagonal())), 1e-300))
    alpha = balanced(alpha, y) if free else alpha
    slack = u - alpha
    beta = 0.0
    q = system.product(alpha) - 1.0
    delta = max(1.0, float(np.abs(q).max()))
    pi = np.maximum(q, 0.0) + delta
    rho = np.maximum(-q, 0.0) + delta

    status, iterations, best, since = "iteration_limit", 0, None, 0
    for iterations in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        Qa = system.product(alpha)
        values = _evaluate(system, y, u, alpha, Qa, beta, floor)
        since += 1
        if best is None or values[3] < best[2][3]:  # the iterate with the smallest gap so far
            since = 0 if best is None or values[3] < STALL * best[2][3] else since
            best = (alpha, beta, values)
        if values[3] <= tol:
            status = "optimal"
            break
        if since >= STALL_ITERATIONS and best[2][3] <= STALL_GAP:  # rounding limits the gap
            status = "stalled"
            break
        if time_limit is not None and time.perf_counter() - start > time_limit:
            status = "time_limit"
            break
        r_d = Qa - 1.0 - beta * y - pi + rho          # stationarity residual
        r_p = float(y @ alpha) if free else 0.0       # y'alpha = 0
        r_u = u - alpha - slack                       # alpha + slack = u (rounding only)
        try:
            system.factor(pi / alpha + rho / slack)
        except (linalg.LinAlgError, ValueError):
            status = "error"
            break
        point = (system, alpha, slack, pi, rho, r_d, r_p, r_u)
        # predictor (affine scaling)
        da, ds, dpi, drho, dbeta = _direction(point, -alpha * pi, -slack * rho)
        ap = min(1.0, max_step(alpha, da, slack, ds))
        ad = min(1.0, max_step(pi, dpi, rho, drho))
        mu = (alpha @ pi + slack @ rho) / (2 * K)
        mu_aff = ((alpha + ap * da) @ (pi + ad * dpi) + (slack + ap * ds) @ (rho + ad * drho)) / (2 * K)
        sigma = (mu_aff / mu) ** 3 if mu > 0 else 0.0
        # corrector (Mehrotra): centring and the second-order terms of the affine step
        da, ds, dpi, drho, dbeta = _direction(point, sigma * mu - alpha * pi - da * dpi,
                                              sigma * mu - slack * rho - ds * drho)
        # one step length for primal and dual: the Hessian couples them in the stationarity rows
        step = min(1.0, STEP * max_step(alpha, da, slack, ds), STEP * max_step(pi, dpi, rho, drho))
        alpha = alpha + step * da
        slack = slack + step * ds
        beta = beta + step * dbeta
        pi = pi + step * dpi
        rho = rho + step * drho
        if not (np.all(np.isfinite(alpha)) and np.isfinite(beta)):
            status = "error"
            break
    alpha, beta, values = best
    if status == "error" and values[3] <= STALL_GAP:  # a breakdown at the end: as a stall
        status = "stalled"
    return alpha, beta, values, iterations, status


def _direction(point, r_api, r_srho):
    """The Newton direction ``(dalpha, dslack, dpi, drho, dbeta)`` for complementarity
    right-hand sides ``r_api`` (of alpha pi) and ``r_srho`` (of slack rho), with
    ``dslack = r_u - dalpha``."""
    system, alpha, slack, pi, rho, r_d, r_p, r_u = point
    r_srho = r_srho - rho * r_u
    da, dbeta = system.solve(-r_d + r_api / alpha - r_srho / slack, r_p)
    return da, r_u - da, (r_api - pi * da) / alpha, (r_srho + rho * da) / slack, dbeta


def _evaluate(system, y, u, alpha, Qa, beta, floor):
    r"""``(alpha feasible, P, D, relative gap)``: P of the plane that ``alpha`` and
    ``b = -beta`` define (:math:`\tfrac12\alpha'Q\alpha` plus the exact hinge, whose margins are
    :math:`(Q\alpha)_k - y_k\beta`); D, a lower bound, of ``alpha`` clipped to the box and
    balanced."""
    margin = Qa - (beta * y if system.free else 0.0)
    objective = 0.5 * float(alpha @ Qa) + float(u @ np.maximum(1.0 - margin, 0.0))
    a = np.clip(alpha, 0.0, u)  # alpha + slack = u holds to rounding only
    a = balanced(a, y) if system.free else a
    dual = float(a.sum()) - 0.5 * float(a @ system.product(a))
    gap = (objective - dual) / max(floor, abs(objective), np.finfo(float).tiny)
    return a, objective, dual, gap
