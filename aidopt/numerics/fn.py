r"""Frisch–Newton: a primal-dual interior point for weighted LAD and regression quantiles with
dense normal equations.

The method of Portnoy & Koenker (1997) that R quantreg's ``rq.fit.fnb`` implements, written here
for the weighted LAD / quantile dual that AID solves at every iteration (``models.lad``, dual
form):

.. math::

    \max_v\ y'v \quad \text{s.t.}\quad X'v = 0,\quad -b w \le v \le a w ,

with the slopes ``(a, b)`` of :func:`aidopt.numerics.rq.slopes`: (1, 1) for LAD,
:math:`(\tau, 1 - \tau)` for the :math:`\tau`-th regression quantile. With
:math:`z = v + b w \in [0, u]`, :math:`u = (a + b) w`, it is the bounded LP
:math:`\min c'z` s.t. :math:`Az = b_{rhs}`, :math:`0 \le z \le u` with :math:`c = -y`,
:math:`A = X'` (m x K) and :math:`b_{rhs} = X'(b w)`. Its primal-dual central path (slacks
:math:`p = u - z`, multipliers :math:`\beta` of :math:`Az = b_{rhs}`, :math:`t \ge 0` of
:math:`z \ge 0`, :math:`s \ge 0` of :math:`z \le u`) is followed by Mehrotra's
predictor-corrector steps. Each step solves the m x m normal equations
:math:`A D A' \Delta\beta = r` with :math:`D = (t/z + s/p)^{-1}` by a dense Cholesky
factorisation: :math:`O(K m^2)` flops through BLAS and no K x K matrix, which is why it beats a
general sparse LP code on these dense, tall LPs (m rows, K columns).

At the optimum, :math:`s - t = y - X\beta_{fit}` with :math:`\beta_{fit} = -\beta`: the
coefficients are (minus) the multipliers of the balance rows, and :math:`v = z - b w` is the
dual vector that AID lifts into its certificate. The start is primal feasible
(:math:`z = b w`, i.e. :math:`v = 0`, so :math:`Az = b_{rhs}` exactly, as quantreg starts at
:math:`1 - \tau`) with :math:`\beta` from weighted least squares.

The answer is an interior point: residuals of the rows the fit interpolates are tiny but not 0,
and the certificate of the caller (``decomposition.lad``) checks the duals on the full data
independently of this method.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy import linalg, sparse

from aidopt.numerics.normal import NormalEquations
from aidopt.numerics.rq import check_loss, slopes

__all__ = ["FNResult", "frisch_newton", "max_step"]

#: fraction of the step to the boundary (quantreg: 0.99995)
STEP = 0.99995


@dataclass
class FNResult:
    """Outcome of :func:`frisch_newton`.

    Attributes
    ----------
    beta : ndarray (m,)
        LAD (or regression quantile) coefficients.
    v : ndarray (K,)
        The dual vector, :math:`-b w_k \\le v_k \\le a w_k` (:math:`|v_k| \\le w_k` for LAD),
        :math:`X'v \\approx 0`.
    objective : float
        :math:`\\sum_k w_k |y_k - x_k\\beta|` (LAD) or :math:`\\sum_k w_k \\rho_\\tau(y_k - x_k\\beta)`
        at ``beta``.
    dual : float
        :math:`y'v` (a lower bound up to the residual ``infeasibility`` of :math:`X'v = 0`).
    gap : float
        ``(objective - dual) / max(floor, |objective|)``.
    infeasibility : float
        :math:`\\|X'v\\|_\\infty / \\max_j \\sum_k w_k |x_{kj}|`.
    iterations : int
    status : str
        ``"optimal"`` (gap and infeasibility within the tolerances), ``"iteration_limit"``,
        ``"time_limit"`` or ``"error"`` (a singular system).
    """

    beta: np.ndarray
    v: np.ndarray
    objective: float
    dual: float
    gap: float
    infeasibility: float
    iterations: int
    status: str


def frisch_newton(X, y, w=None, *, quantile: float | None = None, tol: float = 1e-9,
                  feasibility_tol: float = 1e-9, max_iter: int = 100,
                  time_limit: float | None = None, floor: float = 0.0) -> FNResult:
    r"""Weighted LAD :math:`\min_\beta \sum_k w_k |y_k - x_k\beta|`, or the regression quantile
    :math:`\min_\beta \sum_k w_k \rho_\tau(y_k - x_k\beta)`, by Frisch–Newton.

    Parameters
    ----------
    X : ndarray (K, m)
    y : ndarray (K,)
    w : ndarray (K,), optional
        Positive weights (default 1).
    quantile : float, optional
        :math:`\tau \in (0, 1)`; None (default): LAD.
    tol : float
        Relative duality gap ``(E - y'v) / max(floor, |E|)`` to stop at.
    feasibility_tol : float
        Scaled residual of :math:`X'v = 0` to stop at.
    max_iter : int
    time_limit : float, optional
        Seconds. A step is not begun when the previous one's time would take the run past it
        (a factorization cannot be interrupted).
    floor : float
        Floor of the gap's denominator (the caller's scale-invariant floor).

    Returns
    -------
    FNResult
    """
    start = time.perf_counter()
    X = sparse.csr_matrix(X, dtype=float) if sparse.issparse(X) else np.ascontiguousarray(
        X, dtype=float)
    y = np.asarray(y, dtype=float)
    K, m = X.shape
    w = np.ones(K) if w is None else np.asarray(w, dtype=float)
    if y.shape != (K,) or w.shape != (K,) or np.any(w <= 0):
        raise ValueError("frisch_newton: y and w must have one entry per row, w > 0")
    colscale = np.maximum(abs(X).T @ w, np.finfo(float).tiny)
    normal = NormalEquations(X)
    above, below = slopes(quantile)
    low = below * w  # v = z - low: the dual box [-b w, a w] shifted to [0, (a + b) w]
    u = (above + below) * w
    c = -y
    # start: z = b w (v = 0: primal feasible), beta from weighted least squares, t and s from
    # the signs
    z = low.copy()
    p = u - z
    beta_ls = _least_squares(X, y, w, normal)
    beta = -beta_ls
    e = y - X @ beta_ls
    delta = max(float(np.mean(np.abs(e))), 1e-12 * max(1.0, float(np.abs(y).max())))
    s = np.maximum(e, 0.0) + delta
    t = np.maximum(-e, 0.0) + delta
    b = X.T @ low

    status, iterations = "iteration_limit", 0
    step_seconds = 0.0  # the last step's time: a step that would end past the limit is not begun
    for iterations in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        begun = time.perf_counter()
        if time_limit is not None and begun - start + step_seconds > time_limit:
            status = "time_limit"
            break
        r_b = b - X.T @ z                       # A z = b
        r_c = c - X @ beta - t + s              # c - A'beta - t + s, A'beta = X beta
        # the certificate's quantities at the current point
        result = _evaluate(X, y, w, quantile, -beta, z - low, colscale, floor)
        if result[2] <= tol and result[3] <= feasibility_tol:
            status = "optimal"
            break
        d = 1.0 / (t / z + s / p)
        try:
            normal.factor(d)
        except np.linalg.LinAlgError:
            status = "error"
            break

        point = (z, p, t, s, d, r_b, r_c)
        # predictor (affine scaling)
        dz, dbeta, dt, ds = _direction(X, normal, point, -z * t, -p * s)
        ap = min(1.0, max_step(z, dz, p, -dz))
        ad = min(1.0, max_step(t, dt, s, ds))
        mu = (z @ t + p @ s) / (2 * K)
        mu_aff = ((z + ap * dz) @ (t + ad * dt) + (p - ap * dz) @ (s + ad * ds)) / (2 * K)
        sigma = (mu_aff / mu) ** 3 if mu > 0 else 0.0
        # corrector (Mehrotra): centring and the second-order terms of the affine step
        dz, dbeta, dt, ds = _direction(X, normal, point, sigma * mu - z * t - dz * dt,
                                       sigma * mu - p * s + dz * ds)
        ap = min(1.0, STEP * max_step(z, dz, p, -dz))
        ad = min(1.0, STEP * max_step(t, dt, s, ds))
        z = z + ap * dz
        stepped = p - ap * dz
        p = u - z
        # where z is within rounding of its bound u, u - z loses the slack (0 or below; seen on
        # quantile LPs, whose upper bound is tau w): keep the slack the step itself gives
        lost = p <= 0
        if np.any(lost):
            p[lost] = stepped[lost]
        beta = beta + ad * dbeta
        t = t + ad * dt
        s = s + ad * ds
        if not (np.all(z > 0) and np.all(p > 0)):
            status = "error"
            break
        step_seconds = time.perf_counter() - begun
    beta_fit, v = -beta, z - low
    objective, dual, gap, infeasibility = _evaluate(X, y, w, quantile, beta_fit, v, colscale, floor)
    return FNResult(beta_fit, v, objective, dual, gap, infeasibility, iterations, status)


def _least_squares(X, y, w, normal: NormalEquations) -> np.ndarray:
    """The weighted least-squares coefficients of the start: LAPACK's ``gelsy`` on a dense X
    (rank-revealing), the normal equations on a sparse one."""
    if not normal.sparse:
        root = np.sqrt(w)
        return linalg.lstsq(X * root[:, None], y * root, lapack_driver="gelsy")[0]
    normal.factor(w)
    return normal.solve(X.T @ (w * y))


def _direction(X, normal, point, r_zt, r_ps):
    """The Newton direction ``(dz, dbeta, dt, ds)`` for complementarity right-hand sides
    ``r_zt`` (of z t) and ``r_ps`` (of p s): ``dz = D (X dbeta + rho)`` from the dual rows,
    ``X' dz = r_b`` gives the normal equations ``X' D X dbeta = r_b - X' D rho``."""
    z, p, t, s, d, r_b, r_c = point
    rho = -r_c + r_zt / z - r_ps / p
    dbeta = normal.solve(r_b - X.T @ (d * rho))
    dz = d * (X @ dbeta + rho)
    return dz, dbeta, (r_zt - t * dz) / z, (r_ps + s * dz) / p


def _evaluate(X, y, w, quantile, beta, v, colscale, floor):
    """``(E(beta), y'v, relative gap, scaled |X'v|)`` of an iterate."""
    objective = check_loss(y - X @ beta, w, quantile)
    dual = float(y @ v)
    gap = (objective - dual) / max(floor, abs(objective), np.finfo(float).tiny)
    infeasibility = float(np.max(np.abs(X.T @ v) / colscale))
    return objective, dual, gap, infeasibility


def max_step(x1, dx1, x2, dx2) -> float:
    """Largest alpha (capped at 1e300) keeping ``x1 + alpha dx1`` and ``x2 + alpha dx2`` >= 0."""
    alpha = math.inf
    for x, dx in ((x1, dx1), (x2, dx2)):
        neg = dx < 0
        if np.any(neg):
            alpha = min(alpha, float(np.min(-x[neg] / dx[neg])))
    return min(alpha, 1e300)
