r"""Confidence intervals for regression quantile coefficients by inverting the regression
rankscore test (Gutenbrunner, Jurečková, Koenker & Portnoy 1993; Koenker 1994, "Confidence
intervals for regression quantiles"), the intervals of R quantreg's ``summary.rq(se="rank")``.
Written from the papers and from quantreg's documented output; no code of quantreg is used.

**The test.** For the coefficient :math:`j` and a value :math:`b`, let :math:`X_{-j}` be the other
columns and :math:`z(b) = y - b\,x_j`. The regression rankscores of :math:`z(b)` on
:math:`X_{-j}` at :math:`\tau` are the solution of the dual of the restricted quantile LP
(Gutenbrunner & Jurečková 1992; GJKP 1993, eq. (2.4) with the score
:math:`\varphi_\tau(t) = \tau - 1\{t < \tau\}`), written here with the box shifted to zero,

.. math::

    \hat u(b) = \arg\max_u\ z(b)^\top u \quad\text{s.t.}\quad X_{-j}^\top u = 0,\quad
    s_i(\tau - 1) \le u_i \le s_i\tau

(:math:`\hat u_i = \hat a_i(\tau) - (1 - \tau)`, :math:`\hat a` the rankscores in [0, 1]; the
same box as the fit's dual, :mod:`aidopt.numerics.rq`). The rankscore statistic of
:math:`H_0: \beta_j = b` (Koenker 1994, section 3; GJKP eq. (3.3)) is

.. math::

    T_j(b) = \frac{x_j^\top \hat u(b)}{\sqrt{\tau(1-\tau)\, q_j}} ,

with :math:`q_j = \|x_j - \hat x_j\|^2_S`, the squared residual of :math:`x_j` projected on
:math:`X_{-j}` (``scale="iid"``: :math:`q_j = 1/[(X^\top SX)^{-1}]_{jj}`; ``scale="nid"``: the
projection weighted by the local densities :math:`\hat f_i`, Koenker 1994, section 4, as quantreg's
``iid=FALSE``). Since :math:`X_{-j}^\top\hat u = 0`, :math:`x_j^\top\hat u = (x_j - \hat
x_j)^\top \hat u` for either projection. The interval is :math:`\{b : |T_j(b)| \le c\}` with
:math:`c = t_{n-p,\,1-\alpha/2}` (quantreg's ``tcrit=TRUE``).

**Pieces.** The restricted objective :math:`R(b) = \min_\gamma \sum_i s_i\rho_\tau(z_i(b) -
x_{i,-j}\gamma) = \max_u z(b)^\top u` is convex and piecewise linear in :math:`b` with slope
:math:`-x_j^\top\hat u(b)`; so :math:`T_j` is a nonincreasing step function, constant on the
linear pieces of :math:`R` and zero at :math:`\hat\beta_j` (where :math:`R` is least). Given one
dual vertex :math:`\hat u` at :math:`b`, the piece on which it stays optimal is exact: its interior
rows :math:`E` (:math:`\hat u_i` strictly inside the box) keep zero residuals, which fixes
:math:`\gamma(b')` as a linear function, and the piece ends where the first other residual changes
the sign its :math:`\hat u_i` requires (a ratio test: the parametric step of Koenker 1994,
section 2, in :math:`b` rather than in :math:`\tau`). Where :math:`E` does not determine
:math:`\gamma` (a degenerate vertex), the ends are two small LPs in :math:`(b', \gamma)` instead.

**The search.** On each side of :math:`\hat\beta_j` the pieces are bracketed (steps outward that
double) and bisected until the last piece inside (:math:`|T| \le c`) and the first outside are
adjacent, to within :data:`ADJACENT` relative to the coefficient's scale; each trial is one LP
(HiGHS's dual simplex through SciPy, a vertex) and a ratio test. Every piece is computed exactly up
to rounding, so the bounds do not depend on a step size: the only tolerance is that pieces
narrower than :data:`ADJACENT` (relative) may be passed over.

**The reported bound** is quantreg's interpolated one (``interp=TRUE``): with the last piece
inside, from :math:`b_{in}` (its end nearer :math:`\hat\beta_j`) to :math:`b_{out}` (the crossing),
statistic :math:`T_{in}`, and :math:`T_{out}` the statistic of the next piece out,

.. math::

    \text{bound} = b_{in} + (b_{out} - b_{in})\,\frac{c - |T_{in}|}{|T_{out}| - |T_{in}|} ,

a linear interpolation of :math:`|T|` between the two ends of the last piece inside. When the first
piece beyond :math:`\hat\beta_j` is already outside, the bound is :math:`\hat\beta_j`; when
:math:`|T|` never exceeds :math:`c` on a side, the bound is infinite (quantreg prints
:math:`\pm` ``.Machine$double.xmax`` there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import linalg, stats

__all__ = ["ADJACENT", "iid_scale", "nid_scale", "rank_statistic_path", "rank_interval",
           "rank_intervals", "Piece"]

#: two pieces are adjacent when their ends differ by at most this, relative to the coefficient's
#: scale (|estimate| + the initial step): the tolerance of the search
ADJACENT = 1e-11

#: a dual value is interior when it is farther than this (times its s_i) from its box's ends
_INTERIOR = 1e-9

#: trials per side (bracketing and bisection together) before the search gives up
_MAX_TRIALS = 400


def iid_scale(X, weights) -> np.ndarray:
    r""":math:`q_j = 1/[(X^\top SX)^{-1}]_{jj}`, the squared :math:`S`-norm of :math:`x_j`'s
    residual on the other columns (quantreg's ``iid=TRUE``)."""
    X = np.asarray(X, dtype=float)
    s = np.asarray(weights, dtype=float)
    J = (X * s[:, None]).T @ X
    try:
        inverse = linalg.inv(0.5 * (J + J.T))
    except linalg.LinAlgError as exc:
        raise ValueError("X'X is singular: no rank-inversion intervals") from exc
    return 1.0 / np.diag(inverse)


def nid_scale(X, weights, density) -> np.ndarray:
    r""":math:`q_j = \sum_i s_i e_{ij}^2`, :math:`e_j` the residual of the least-squares fit of
    :math:`x_j` on :math:`X_{-j}` weighted by :math:`s_i \hat f_i` (the local densities of
    :func:`aidopt.numerics.rq.nid_density`; quantreg's ``iid=FALSE``)."""
    X = np.asarray(X, dtype=float)
    s = np.asarray(weights, dtype=float)
    root = np.sqrt(s * np.asarray(density, dtype=float))
    q = np.empty(X.shape[1])
    for j in range(X.shape[1]):
        others = np.delete(X, j, axis=1)
        if others.shape[1]:
            coef, *_ = linalg.lstsq(others * root[:, None], X[:, j] * root)
            e = X[:, j] - others @ coef
        else:
            e = X[:, j]
        q[j] = float(s @ e ** 2)
    return q


@dataclass(frozen=True)
class Piece:
    """A linear piece ``[lo, hi]`` of the restricted objective in b, and the rankscore statistic
    ``t`` on it."""

    t: float
    lo: float
    hi: float


class rank_statistic_path:
    r""":math:`T_j(b)` of one coefficient and the piece of :math:`b` on which it is constant.

    Parameters
    ----------
    X : ndarray (n, p)
        Rows of positive weight only.
    y, weights : ndarray (n,)
    tau : float
    j : int
    q : float
        :math:`q_j` (:func:`iid_scale` or :func:`nid_scale`).
    """

    def __init__(self, X, y, weights, tau: float, j: int, q: float):
        self.x = np.asarray(X[:, j], dtype=float)
        self.others = np.delete(np.asarray(X, dtype=float), j, axis=1)
        self.y = np.asarray(y, dtype=float)
        self.s = np.asarray(weights, dtype=float)
        self.tau = float(tau)
        self.norm = math.sqrt(self.tau * (1 - self.tau) * q)
        self.lower, self.upper = self.s * (self.tau - 1), self.s * self.tau
        self.solves = 0

    def __call__(self, b: float) -> Piece:
        """The piece holding ``b`` (one of the two when b is where two meet)."""
        u = self._rankscores(b)
        t = float(self.x @ u) / self.norm
        margin = _INTERIOR * self.s
        interior = (u > self.lower + margin) & (u < self.upper - margin)
        sign = np.where(u >= self.upper - margin, 1.0, -1.0)  # the sign r_i must keep off E
        ends = self._ratio_test(b, interior, sign)
        if ends is None:
            ends = self._end_lps(interior, sign)
        return Piece(t, *ends)

    def _rankscores(self, b: float) -> np.ndarray:
        from scipy.optimize import linprog

        z = self.y - b * self.x
        unit = max(float(np.abs(z).max()), np.finfo(float).tiny)  # HiGHS's tolerances are absolute
        k = self.others.shape[1]
        res = linprog(-z / unit, A_eq=self.others.T if k else None, b_eq=np.zeros(k) if k else None,
                      bounds=np.column_stack([self.lower, self.upper]), method="highs-ds")
        self.solves += 1
        if res.status != 0:
            raise RuntimeError(f"the rankscore LP at b = {b:.17g}: {res.message}")
        return np.clip(res.x, self.lower, self.upper)

    def _ratio_test(self, b: float, interior, sign):
        """The piece's ends when the interior rows fix gamma (p - 1 independent rows), else
        None."""
        k = self.others.shape[1]
        rows = self.others[interior]
        if k and (rows.shape[0] < k or np.linalg.matrix_rank(rows) < k):
            return None
        z = self.y - b * self.x
        if k:
            gamma, *_ = linalg.lstsq(rows, z[interior])
            slope, *_ = linalg.lstsq(rows, -self.x[interior])
            r = z - self.others @ gamma
            d = -self.x - self.others @ slope  # dr/db'
        else:
            r, d = z, -self.x
        off = ~interior
        held = np.maximum(sign[off] * r[off], 0.0)  # >= 0 at an optimum; rounding clipped
        moves = sign[off] * d[off]
        tiny = 1e-13 * max(float(np.abs(self.x).max()), 1.0)
        up = moves < -tiny  # sign * r shrinks as b' grows: an upper end
        down = moves > tiny
        hi = b + float(np.min(held[up] / -moves[up])) if up.any() else math.inf
        lo = b - float(np.min(held[down] / moves[down])) if down.any() else -math.inf
        return lo, hi

    def _end_lps(self, interior, sign):
        """The piece's ends from two LPs in (b', gamma): interior rows on their hyperplane, the
        others on the side their rankscore requires."""
        from scipy.optimize import linprog

        A = np.column_stack([self.x, self.others])  # b' x_j + x_{-j} gamma = y_i, or <= / >=
        unit = max(float(np.abs(self.y).max()), 1.0)
        off = ~interior
        A_ub = sign[off, None] * A[off]  # sign_i (y_i - A_i v) >= 0
        b_ub = sign[off] * self.y[off] / unit
        A_eq = A[interior] if interior.any() else None
        b_eq = self.y[interior] / unit if interior.any() else None
        ends = []
        for direction in (1.0, -1.0):
            c = np.zeros(A.shape[1])
            c[0] = direction
            res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq,
                          bounds=(None, None), method="highs-ds")
            self.solves += 1
            if res.status == 3:
                ends.append(-direction * math.inf)
            elif res.status == 0:
                ends.append(res.x[0] * unit)
            else:
                raise RuntimeError(f"the rankscore piece's end: {res.message}")
        return ends[0], ends[1]


def rank_interval(path: rank_statistic_path, estimate: float, cutoff: float, side: int,
                  step: float) -> float:
    r"""One end of :math:`\{b : |T_j(b)| \le c\}`: ``side`` -1 the lower, +1 the upper, searched
    from ``estimate`` with first step ``step`` (see the module's text)."""
    def out(piece: Piece) -> float:  # how far out: nondecreasing along the side
        return -side * piece.t

    def inner(piece: Piece) -> float:
        return piece.hi if side < 0 else piece.lo

    def outer(piece: Piece) -> float:
        return piece.lo if side < 0 else piece.hi

    scale = abs(estimate) + step
    start = path(estimate)
    trials = 1
    if out(start) < 0 or out(start) > cutoff:  # the piece beyond the estimate on the other side,
        point = inner(start) if out(start) > cutoff else estimate  # or already outside
        inside = Piece(0.0, point, point)
        outside = start if out(start) > cutoff else None
    else:
        inside, outside = start, None
    k = 0
    while outside is None:  # bracket: jump beyond the last piece inside, doubling the step
        if math.isinf(outer(inside)):
            return side * math.inf
        piece = path(outer(inside) + side * step * 2.0 ** k)
        trials += 1
        k += 1
        if out(piece) > cutoff:
            outside = piece
        else:
            inside = piece
        if trials > _MAX_TRIALS:
            raise RuntimeError("rank interval: no bracket found")
    while side * (inner(outside) - outer(inside)) > ADJACENT * scale:  # bisect the gap
        a, z = outer(inside), inner(outside)
        for fraction in (0.5, 0.3, 0.7, 0.1, 0.9):  # off a breakpoint: a piece of width > 0
            piece = path(a + fraction * (z - a))
            trials += 1
            if piece.hi - piece.lo > ADJACENT * scale:
                break
        if out(piece) > cutoff:
            outside = piece
        else:
            inside = piece
        if trials > _MAX_TRIALS:
            raise RuntimeError("rank interval: the bisection did not close")
    t_in, t_out = abs(inside.t), abs(outside.t)
    b_in, b_out = inner(inside), outer(inside)
    if b_in == b_out or t_out <= t_in:
        return b_out
    return b_in + (b_out - b_in) * (cutoff - t_in) / (t_out - t_in)


def rank_intervals(X, y, weights, tau: float, estimate, alpha: float = 0.05, q=None,
                   residuals=None) -> tuple[np.ndarray, np.ndarray, dict]:
    r"""The rank-inversion interval of every coefficient (the module's text).

    Parameters
    ----------
    X : ndarray (n, p)
    y, weights : ndarray (n,)
        Rows of weight 0 are left out; weights count as repeated rows.
    tau : float
    estimate : ndarray (p,)
        :math:`\hat\beta(\tau)`, where each search starts.
    alpha : float
        The level is :math:`1 - \alpha`; :math:`c = t_{n-p,\,1-\alpha/2}`, :math:`n = \sum_i s_i`.
    q : ndarray (p,), optional
        :math:`q_j`; default :func:`iid_scale`.
    residuals : ndarray (n,), optional
        Of the fit: their spread sets the first step of each search (default: from ``estimate``).

    Returns
    -------
    lower, upper : ndarray (p,)
    details : dict
        ``cutoff`` (c) and ``solves`` (LPs solved).
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    s = np.asarray(weights, dtype=float)
    keep = s > 0
    X, y, s = X[keep], y[keep], s[keep]
    estimate = np.asarray(estimate, dtype=float)
    n, p = float(s.sum()), X.shape[1]
    if n - p <= 0:
        raise ValueError(f"rank-inversion intervals need more rows than coefficients "
                         f"(n = {n:g}, p = {p})")
    q = iid_scale(X, s) if q is None else np.asarray(q, dtype=float)
    cutoff = float(stats.t.ppf(1 - alpha / 2, n - p))
    r = y - X @ estimate if residuals is None else np.asarray(residuals, dtype=float)[keep]
    spread = float(np.median(np.abs(r))) or float(np.abs(r).max()) or 1.0
    lower, upper = np.empty(p), np.empty(p)
    solves = 0
    for j in range(p):
        path = rank_statistic_path(X, y, s, tau, j, q[j])
        step = cutoff * spread * math.sqrt(tau * (1 - tau) / q[j]) / 4  # a quarter of a guess
        lower[j] = rank_interval(path, estimate[j], cutoff, -1, step)
        upper[j] = rank_interval(path, estimate[j], cutoff, +1, step)
        solves += path.solves
    return lower, upper, {"cutoff": cutoff, "solves": solves}
