r"""Regression quantiles (Koenker & Bassett 1978): the check function, and the covariance
estimators of the coefficients that R quantreg's ``summary.rq`` offers as ``se="iid"`` and
``se="nid"``, with its bandwidths (written from Koenker, *Quantile Regression*, 2005, sections 3.2
and 3.4, and the formulas quantreg documents; no code of quantreg is used).

The check function of the level :math:`\tau \in (0, 1)` is

.. math::

    \rho_\tau(r) = r\,(\tau - 1\{r < 0\}) = \tau r^+ + (1 - \tau) r^- ,

and the :math:`\tau`-th regression quantile minimises :math:`\sum_i s_i \rho_\tau(y_i - x_i\beta)`
(sample weights :math:`s_i \ge 0`). Least absolute deviations is written here with
``tau=None``: :math:`\sum_i s_i |r_i| = 2 \sum_i s_i \rho_{1/2}(r_i)`, twice the scale of
:math:`\tau = 1/2`. Both are the loss :math:`a r^+ + b r^-` with the slopes ``(a, b)`` of
:func:`slopes`: (1, 1) for LAD, :math:`(\tau, 1 - \tau)` for a quantile. The dual of the LP is
:math:`\max y'u` s.t. :math:`X'u = 0`, :math:`-b s_i \le u_i \le a s_i`.

Sample weights count as frequencies in the inference: a weight k is the row repeated k times,
so the sample size is :math:`n = \sum_i s_i` and every sum over rows is weighted by :math:`s_i`.
(R's ``rq(weights=)`` summary multiplies the rows by the weights instead; with unit weights the
two agree.)
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import linalg, stats

__all__ = ["slopes", "check_loss", "hall_sheather", "bofinger", "BANDWIDTHS", "gram",
           "iid_sparsity", "median_line", "iid_covariance", "vertex", "nid_density", "nid_covariance",
           "coefficient_tests"]

#: rows per block of the weighted Gram matrices (no n x m temporary)
_BLOCK = 1 << 16


def slopes(tau: float | None) -> tuple[float, float]:
    r"""``(a, b)``: the weight of a positive and of a negative residual in the loss
    :math:`a r^+ + b r^-`: ``(1, 1)`` for LAD (``tau=None``), :math:`(\tau, 1 - \tau)` for the
    check function :math:`\rho_\tau`. The dual box of row i is :math:`[-b s_i, a s_i]`."""
    return (1.0, 1.0) if tau is None else (float(tau), 1.0 - float(tau))


def check_loss(residual, weights, tau: float | None) -> float:
    r""":math:`\sum_i s_i \rho_\tau(r_i)`, or :math:`\sum_i s_i |r_i|` for ``tau=None`` (LAD).

    Parameters
    ----------
    residual : ndarray (n,)
        :math:`r_i = y_i - x_i\beta`.
    weights : ndarray (n,)
        :math:`s_i \ge 0`.
    tau : float or None
    """
    r = np.asarray(residual, dtype=float)
    if tau is None:
        return float(np.dot(weights, np.abs(r)))
    return float(np.dot(weights, r * (tau - (r < 0))))


def _normal_terms(tau: float) -> tuple[float, float]:
    x = float(stats.norm.ppf(tau))
    return x, float(stats.norm.pdf(x))


def hall_sheather(tau: float, n: float, alpha: float = 0.05) -> float:
    r"""Hall & Sheather's (1988) bandwidth for the sparsity at :math:`\tau` (quantreg's default):

    .. math::

        h = n^{-1/3}\, z_{1-\alpha/2}^{2/3}
            \left(\frac{1.5\, \phi(\Phi^{-1}(\tau))^2}{2 \Phi^{-1}(\tau)^2 + 1}\right)^{1/3} ,

    with :math:`\phi, \Phi` the standard normal density and distribution function."""
    x, f = _normal_terms(tau)
    return n ** (-1 / 3) * stats.norm.ppf(1 - alpha / 2) ** (2 / 3) * (
        1.5 * f ** 2 / (2 * x ** 2 + 1)) ** (1 / 3)


def bofinger(tau: float, n: float) -> float:
    r"""Bofinger's (1975) bandwidth:
    :math:`h = n^{-1/5} \left(4.5\, \phi(\Phi^{-1}(\tau))^4 / (2 \Phi^{-1}(\tau)^2 + 1)^2\right)^{1/5}`."""
    x, f = _normal_terms(tau)
    return n ** -0.2 * (4.5 * f ** 4 / (2 * x ** 2 + 1) ** 2) ** 0.2


#: the bandwidth rules by name
BANDWIDTHS = {"hall-sheather": hall_sheather, "bofinger": bofinger}


def gram(X, weights) -> np.ndarray:
    r""":math:`X' \operatorname{diag}(w) X` for :math:`w \ge 0`, as :math:`Z'Z` with
    :math:`Z = \operatorname{diag}(\sqrt w) X` in row blocks (no n x m temporary; numpy computes
    :math:`Z'Z` by a symmetric rank-k update, several times faster than a general product)."""
    m = X.shape[1]
    root = np.sqrt(np.asarray(weights, dtype=float))
    total = np.zeros((m, m))
    for start in range(0, X.shape[0], _BLOCK):
        Z = X[start:start + _BLOCK] * root[start:start + _BLOCK, None]
        total += Z.T @ Z
    return 0.5 * (total + total.T)


def iid_sparsity(residual, weights, n_params: int, h: float, zero_tol: float) -> tuple[float, dict]:
    r"""The sparsity :math:`s(\tau) = 1 / f(F^{-1}(\tau))` of i.i.d. errors, from the residuals
    (Koenker 2005, section 3.4.1; quantreg's ``summary.rq(se="iid")``).

    With :math:`n = \sum_i s_i` rows (weights count as repeated rows) and :math:`p` coefficients:
    :math:`n_0` is the number of residuals that are zero (within ``zero_tol``: the rows the fit
    interpolates), :math:`k = \max(p + 1, \lceil n h \rceil)`; the residuals ranked
    :math:`n_0 + 1, \dots, n_0 + k + 1` by absolute value (the :math:`k + 1` nearest to zero
    that are not zero) are sorted by value, :math:`e_{(1)} \le \dots \le e_{(k+1)}`, and set
    against the probabilities :math:`t_j = (n_0 + j) / (n - p)`. The slope of the median (LAD)
    regression of :math:`e_{(j)}` on :math:`(1, t_j)` estimates :math:`dF^{-1}/d\tau`, the
    sparsity: the residuals near zero are the sample quantiles of the errors around their
    :math:`\tau`-th quantile, spaced :math:`1/(n - p)` in probability.

    Returns
    -------
    sparsity : float
    details : dict
        ``zeros`` (:math:`n_0`), ``points`` (:math:`k + 1`).
    """
    r = np.asarray(residual, dtype=float)
    s = np.asarray(weights, dtype=float)
    n = float(s.sum())
    zeros = float(s[np.abs(r) < zero_tol].sum())
    k = max(n_params + 1, math.ceil(n * h))
    ranks = zeros + np.arange(1, k + 2)  # 1-based ranks in the sample with repeated rows
    if ranks[-1] > n:
        raise ValueError(f"se='iid' needs {k + 1} nonzero residuals beyond the {zeros:g} zero ones, "
                         f"the data have {n:g} rows: too few rows")
    order = np.argsort(np.abs(r), kind="stable")
    upto = np.cumsum(s[order])  # row order[j] holds the ranks (upto[j-1], upto[j]]
    picked = np.sort(r[order[np.searchsorted(upto, ranks - 1e-9 * max(1.0, n), side="left")]])
    t = ranks / (n - n_params)
    return median_line(t, picked)[1], {"zeros": zeros, "points": k + 1}


def median_line(x, y) -> np.ndarray:
    r"""``(intercept, slope)`` of the least-absolute-deviation line through the points
    :math:`(x_j, y_j)`: a vertex, as quantreg's ``rq`` (method "br") returns one. Solved as the
    dual LP :math:`\max y'u` s.t. :math:`\sum_j u_j = \sum_j x_j u_j = 0`, :math:`|u_j| \le 1`
    (two rows; HiGHS's dual simplex through SciPy), whose row multipliers are the line."""
    from scipy.optimize import linprog

    y = np.asarray(y, dtype=float)
    unit = max(float(np.abs(y).max()), np.finfo(float).tiny)  # HiGHS's tolerances are absolute
    rows = np.vstack([np.ones(len(y)), np.asarray(x, dtype=float)])
    res = linprog(-y / unit, A_eq=rows, b_eq=np.zeros(2), bounds=(-1.0, 1.0), method="highs-ds")
    if res.status != 0:
        raise RuntimeError(f"the median line of {len(y)} points: {res.message}")
    return -unit * np.asarray(res.eqlin.marginals)


def iid_covariance(X, weights, tau: float, sparsity: float) -> np.ndarray:
    r""":math:`\tau (1 - \tau)\, \hat s^2\, (X'SX)^{-1}`: the covariance of
    :math:`\hat\beta(\tau)` for i.i.d. errors with sparsity :math:`\hat s` (:func:`iid_sparsity`);
    :math:`S = \operatorname{diag}(s_i)`."""
    J = gram(X, np.asarray(weights, dtype=float))
    return tau * (1 - tau) * sparsity ** 2 * _inverse(J, "X'X")


def vertex(X, y, weights, tau: float, beta, box_tol: float = 1e-9,
           max_pivots: int | None = None):
    r"""The optimal vertex of the regression quantile LP found from a near-optimal ``beta`` (a
    certified fit), proven optimal by its dual, or None.

    R quantreg's ``rq`` (method "br", the default, also for the refits of ``summary.rq``) returns
    a vertex: a :math:`\beta` that interpolates p rows h, :math:`X_h\beta = y_h`. A fit certified
    to a relative gap is near the optimum, not at it (often at a neighbouring vertex), and the
    local densities of ``nid`` divide by the difference of two fits. So this finishes the way
    Barrodale & Roberts' simplex does, from a start near the end:

    1. h: p linearly independent rows of positive weight nearest the hyperplane of ``beta``
       (nearest first); :math:`\beta_h = X_h^{-1} y_h`.
    2. The dual: every other row has :math:`u_i = \tau s_i` (:math:`r_i > 0`) or
       :math:`(\tau - 1) s_i` (:math:`r_i \le 0`), and :math:`X_h'u_h = -X_N'u_N` (then
       :math:`X'u = 0`). When every :math:`u_j, j \in h`, is in its box
       :math:`[(\tau - 1)s_j, \tau s_j]` (to ``box_tol`` :math:`\max_i s_i`), :math:`\beta_h` is
       optimal: :math:`y'u` equals its objective (complementary slackness by construction).
    3. Otherwise the most violated :math:`u_j` gives a descent edge: leave row j's hyperplane in
       the direction d with :math:`x_k d = 0` (:math:`k \in h, k \ne j`) and
       :math:`x_j d = \mp 1`, along which the objective falls at the rate of the violation; go
       to the minimum along the edge (the breakpoint where the slope, raised by
       :math:`s_i |x_i d|` at each row crossed, turns nonnegative), whose row replaces j in h.
       Back to 2, at most ``max_pivots`` times (default 10 p). A pivot updates
       :math:`\beta_h`, the residuals and :math:`X_N'u_N` (one product with X); the proof in 2
       is made on them computed afresh from the rows h.

    A unique optimum is this vertex, and R's is the same.

    Parameters
    ----------
    X : ndarray or sparse matrix (n, p)
    y, weights : ndarray (n,)
    tau : float
    beta : ndarray (p,)
    box_tol : float, default 1e-9
    max_pivots : int, optional

    Returns
    -------
    (beta, u) : tuple of ndarrays (p,), (n,), or None
        None: the p rows nearest the hyperplane are linearly dependent (also after a pivot), or
        no proof within ``max_pivots``.
    """
    s = np.asarray(weights, dtype=float)
    y = np.asarray(y, dtype=float)
    p = np.asarray(beta).size
    if np.count_nonzero(s > 0) <= p:
        return None
    h = _nearest_basis(X, np.abs(y - X @ beta), s, p)
    if h is None:
        return None
    slack = box_tol * float(s.max())
    state, exact = _basis_state(X, y, s, tau, h), True
    for _ in range(10 * p if max_pivots is None else max_pivots + 1):
        if state is None:
            return None  # the rows h are (nearly) linearly dependent: not a basis
        factor, beta_h, residual, u, g = state
        u_h = linalg.lu_solve(factor, -g, trans=1)  # X_h'u_h = -X_N'u_N
        above = u_h - tau * s[h]  # > 0: row j leaves below (x_j d = -1)
        below = (tau - 1) * s[h] - u_h  # > 0: row j leaves above (x_j d = +1)
        violation = np.maximum(above, below)
        j = int(np.argmax(violation))
        if violation[j] <= slack:
            if exact:  # the proof, on a state computed afresh from the rows h
                u[h] = u_h
                return beta_h, u
            state, exact = _basis_state(X, y, s, tau, h), True  # the updates drift: recompute
            continue
        sign = -1.0 if above[j] > below[j] else 1.0
        unit = np.zeros(p)
        unit[j] = sign
        d = linalg.lu_solve(factor, unit)
        z = X @ d  # x_i d: along the edge the residuals move by -t z_i
        # a nonbasic row's kink is ahead when its residual moves towards the other side
        ahead = np.flatnonzero((s > 0) & np.where(u > 0, z > 0, z < 0))
        ahead = ahead[~np.isin(ahead, h)]
        if ahead.size == 0:
            return None  # unbounded along the edge: cannot happen for a bounded LP
        t = np.maximum(residual[ahead] / z[ahead], 0.0)
        nearest = min(ahead.size, 4 * p + 64)  # the breakpoints nearest first, more if needed
        while True:
            first = (np.arange(ahead.size) if nearest == ahead.size else
                     np.argpartition(t, nearest - 1)[:nearest])
            first = first[np.argsort(t[first], kind="stable")]
            rise = np.cumsum(s[ahead[first]] * np.abs(z[ahead[first]]))
            stop = int(np.searchsorted(rise, violation[j], side="left"))
            if stop < first.size:
                break
            if nearest == ahead.size:
                return None
            nearest = min(ahead.size, 8 * nearest)
        step, enter, crossed = float(t[first[stop]]), ahead[first[stop]], ahead[first[:stop]]
        # move to the breakpoint: the rows crossed change sides, `enter` joins the basis and
        # row j leaves it on the side it moves to
        beta_h = beta_h + step * d
        residual = residual - step * z
        flipped = np.where(u[crossed] > 0, (tau - 1) * s[crossed], tau * s[crossed])
        g = g + _rows(X, crossed).T @ (flipped - u[crossed])
        u[crossed] = flipped
        g = g - _rows(X, [enter])[0] * u[enter]
        u[enter] = 0.0
        leave = h[j]
        u[leave] = (tau - 1) * s[leave] if sign > 0 else tau * s[leave]
        g = g + _rows(X, [leave])[0] * u[leave]
        h = h.copy()
        h[j] = enter
        factor = _factor(_rows(X, h))
        state, exact = (None if factor is None else (factor, beta_h, residual, u, g)), False
    return None


def _rows(X, index) -> np.ndarray:
    """The rows ``index`` of X as a dense array."""
    import scipy.sparse as sp

    return X[index].toarray() if sp.issparse(X) else np.asarray(X[index], dtype=float)


def _factor(Xh):
    """The LU factors of the p x p matrix of a basis's rows, or None when it is (nearly)
    singular."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", linalg.LinAlgWarning)
        factor = linalg.lu_factor(Xh, check_finite=True)
    if not np.all(np.isfinite(factor[0])) or np.min(np.abs(np.diag(factor[0]))) <= (
            1e-12 * max(float(np.abs(Xh).max()), np.finfo(float).tiny)):
        return None
    return factor


def _basis_state(X, y, s, tau: float, h):
    """The vertex of the basis rows h computed afresh: ``(factor, beta_h, residual, u, g)`` with
    u the nonbasic rows' duals (0 on h) and :math:`g = X'u`; None when X_h is singular."""
    factor = _factor(_rows(X, h))
    if factor is None:
        return None
    beta_h = linalg.lu_solve(factor, y[h])
    residual = y - X @ beta_h
    u = np.where(residual > 0, tau * s, (tau - 1) * s)
    u[h] = 0.0
    return factor, beta_h, residual, u, np.asarray(X.T @ u, dtype=float).ravel()


def _nearest_basis(X, distance, s, p: int):
    """p linearly independent rows of positive weight, taken in the order of ``distance`` (the
    nearest first; a row in the span of those taken is passed over), or None."""
    distance = distance.copy()
    distance[s <= 0] = np.inf
    count = min(int(np.count_nonzero(s > 0)), 8 * p + 64)
    near = np.argpartition(distance, count - 1)[:count] if count < distance.size else np.arange(
        distance.size)
    near = near[np.argsort(distance[near], kind="stable")][:count]
    rows = _rows(X, near)
    basis, taken = np.zeros((0, p)), []
    for k, row in enumerate(rows):  # Gram-Schmidt on the candidates, twice for stability
        rest = row - basis.T @ (basis @ row)
        rest -= basis.T @ (basis @ rest)
        norm = float(np.linalg.norm(rest))
        if norm > 1e-10 * max(float(np.linalg.norm(row)), np.finfo(float).tiny):
            basis = np.vstack([basis, rest / norm])
            taken.append(near[k])
            if len(taken) == p:
                return np.asarray(taken)
    return None


def nid_density(fitted_difference, h: float) -> tuple[np.ndarray, int]:
    r"""Hendricks & Koenker's (1991) local densities
    :math:`\hat f_i = \max\bigl(0,\ 2h / (x_i(\hat\beta(\tau + h) - \hat\beta(\tau - h)) - \delta)\bigr)`,
    the difference quotient of the fitted conditional quantile function, with
    :math:`\delta = \sqrt{\epsilon_{mach}} \max_i |x_i(\hat\beta(\tau+h) - \hat\beta(\tau-h))|`
    (quantreg subtracts an absolute :math:`\sqrt{\epsilon_{mach}}`; scaled here so that the units
    of y do not matter).

    Returns
    -------
    f : ndarray (n,)
    crossing : int
        The rows where the two fitted quantiles cross (difference <= 0; their :math:`\hat f_i`
        is 0).
    """
    d = np.asarray(fitted_difference, dtype=float)
    delta = math.sqrt(np.finfo(float).eps) * max(float(np.abs(d).max()), np.finfo(float).tiny)
    with np.errstate(divide="ignore"):
        f = np.where(d - delta > 0, 2.0 * h / (d - delta), 0.0)
    return f, int(np.count_nonzero(d <= 0))


def nid_covariance(X, weights, tau: float, density) -> np.ndarray:
    r"""Koenker's sandwich :math:`\tau(1 - \tau)\, H^{-1} J H^{-1}` with
    :math:`H = X' S F X`, :math:`J = X' S X`, :math:`F = \operatorname{diag}(\hat f_i)`
    (:func:`nid_density`): the covariance of :math:`\hat\beta(\tau)` for errors whose density at
    the conditional quantile varies with x."""
    s = np.asarray(weights, dtype=float)
    H = _inverse(gram(X, s * density), "X'FX (the local densities vanish on too many rows)")
    return tau * (1 - tau) * (H @ gram(X, s) @ H)


def _inverse(A, what: str) -> np.ndarray:
    try:
        factor = linalg.cho_factor(A, lower=True, check_finite=True)
    except (linalg.LinAlgError, ValueError) as exc:
        raise ValueError(f"{what} is singular: no standard errors of this kind") from exc
    inv = linalg.cho_solve(factor, np.eye(A.shape[0]))
    return 0.5 * (inv + inv.T)


def coefficient_tests(estimate, std_error, rdf: float, alpha: float = 0.05) -> dict[str, np.ndarray]:
    r"""t values :math:`\hat\beta_j / \mathrm{se}_j`, two-sided p-values
    :math:`2 P(T_{rdf} > |t_j|)` and the intervals :math:`\hat\beta_j \pm t_{rdf, 1-\alpha/2}\,
    \mathrm{se}_j` of Student's t with ``rdf`` (= n - p) degrees of freedom; NaN when
    ``rdf <= 0``."""
    estimate = np.asarray(estimate, dtype=float)
    std_error = np.asarray(std_error, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = estimate / std_error
    if rdf > 0:
        p = 2 * stats.t.sf(np.abs(t), rdf)
        q = float(stats.t.ppf(1 - alpha / 2, rdf))
    else:
        p, q = np.full_like(t, np.nan), math.nan
    return {"t": t, "p": p, "lower": estimate - q * std_error, "upper": estimate + q * std_error}
