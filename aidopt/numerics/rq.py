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

import numpy as np
from scipy import linalg, stats

__all__ = ["slopes", "check_loss", "hall_sheather", "bofinger", "BANDWIDTHS", "gram",
           "iid_sparsity", "median_line", "iid_covariance", "nid_density", "nid_covariance", "coefficient_tests"]

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
