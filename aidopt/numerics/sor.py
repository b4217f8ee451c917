"""Successive overrelaxation (SOR) for support vector machines.

Bradley, Mangasarian & Musicant, *Optimization methods in massive datasets*, section 5
(Mangasarian & Musicant, "Successive overrelaxation for support vector machines"). Notation of the
paper: ``A`` is the ``m x n`` data (one point per row), ``D = diag(d)`` with labels
``d in {-1, +1}^m``, ``e`` a vector of ones, ``nu > 0``, ``u`` the dual variable.

The modified SVM (1.35) regularizes the offset ``gamma`` together with ``w``::

    min_{w, gamma, y}  nu e'y + 1/2 (w'w + gamma^2)   s.t.  D(Aw - e gamma) + y >= e,  y >= 0,   (1.35)

so its dual has bound constraints only (no ``e'Du = 0``)::

    min_u 1/2 u'Mu - e'u   s.t.  0 <= u <= nu e                                                   (1.45)

with ``M = D(K + ee')D`` (1.42) or ``M = D(KK' + ee')D`` (1.43), and ``w = A'Du``,
``gamma = -e'Du`` (1.37). SOR (Algorithm 8, (1.53)) updates one component of ``u`` at a time, in
order of increasing index (Remark 9)::

    u_j <- ( u_j - omega E_jj^{-1} (M_j u - 1) )_#,   0 < omega < 2,                             (1.53)

where ``M_j u`` uses the components already updated in this sweep, ``E = diag(M)`` and ``#`` is the
projection onto ``[0, nu]`` (1.48). For the linear kernel, Remark 11 / (1.55) never forms ``M``:
with ``H = D[A  -e]`` (so ``M = HH'``) it keeps ``v = H'u`` (``n + 1`` numbers, ``v = [w; gamma]``)
and reads one row ``H_j`` at a time.

Functions
---------
:func:`sor_solve`
    Algorithm 8 on a dense symmetric ``M`` (kernel problems (1.42), (1.43), any bound vector).
:func:`sor_linear`
    Remark 11 / (1.55): the linear kernel on an array, a memmap, a ``.npy`` path, a Parquet file or
    any :class:`aidopt.data.rowblocks.RowSource`, streamed block by block.
:func:`kernel_dual_matrix`, :func:`kernel_dual_matrix_KK`
    ``M`` of (1.42) and (1.43).
:func:`sor_objective`, :func:`primal_objective`, :func:`kernel_primal_dual`, :func:`gamma_from_dual`
    Objective values for duality gaps.
:func:`solve_svm_sor`
    ``solve_svm(method="sor")``: :func:`sor_linear` on (1.35) stopped on the relative duality gap,
    returned as an :class:`~aidopt.results.AIDResult` with a dual certificate.

Stopping rule
-------------
The natural residual of the optimality condition (1.47) (taken with ``omega E^{-1} = I``)::

    residual(u) = || u - (u - (Mu - e))_# ||_inf / max(1, ||e||_inf)

The scale is the infinity norm of the constant vector ``q = -e`` of the linear complementarity
problem, i.e. 1: the residual is absolute, in the units of the margin (``(Mu)_i`` is
``d_i`` times the decision value of point ``i``, and the margin is 1). A run is *converged* when
``residual <= tol`` at the returned ``u`` (recomputed exactly from ``u`` after the last sweep); this
says that ``u`` satisfies (1.47) to ``tol``, nothing more. See ``docs/sor.md``.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass

import numba
import numba.extending
import numpy as np
from scipy import sparse

from aidopt.data.rowblocks import row_source

__all__ = ["SORResult", "SORLinearResult", "kernel_dual_matrix", "kernel_dual_matrix_KK", "sor_objective",
           "kernel_primal_dual", "primal_objective", "gamma_from_dual", "sor_solve", "sor_linear"]

#: scale of the residual: ``max(1, ||e||_inf)`` with ``e`` the ones of (1.45), i.e. 1
RESIDUAL_SCALE = 1.0
#: sweeps between exact recomputations of the maintained gradient / ``v`` (removes round-off drift)
_REFRESH = 200
#: relative asymmetry tolerated in ``M`` (and in ``K`` for (1.42)); the matrix is symmetrized
_SYM_RTOL = 1e-10
#: rows per block when streaming a memmap, ``.npy`` or Parquet source in :func:`sor_linear`
BLOCK_ROWS = 65_536


# ----------------------------------------------------------------------------------------------
# results


@dataclass
class SORResult:
    """Outcome of an SOR run.

    Attributes
    ----------
    u : ndarray, shape (m,)
        The last iterate (always in the box ``0 <= u <= upper``).
    sweeps : int
        Completed sweeps of (1.53) (one sweep updates every component once, in index order).
    residual : float
        ``|| u - (u - (Mu - e))_# ||_inf / RESIDUAL_SCALE`` at ``u``, computed exactly from ``u``
        (not from values maintained during the sweeps).
    objective : float
        ``f(u) = 1/2 u'Mu - e'u``, the objective of (1.45) that SOR minimizes (``= -dual``).
    converged : bool
        ``residual <= tol``. Means "satisfies (1.47) to ``tol``", not "optimal".
    seconds : float
        Wall time of the call (includes numba compilation on the very first call in a fresh cache).
    primal : float
        Objective of the primal (1.35) at ``[w; gamma] = H'u`` (feature space for a kernel) with
        the best slack ``y = (e - Mu)_+``: ``1/2 u'Mu + upper'(e - Mu)_+``. An upper bound on the
        optimum when ``M`` is positive semidefinite.
    dual : float
        ``e'u - 1/2 u'Mu``, the Wolfe dual (1.37): a lower bound on the optimum of (1.35).
    gap : float
        ``primal - dual`` (``>= 0`` up to round-off for positive semidefinite ``M``).
    """

    u: np.ndarray
    sweeps: int
    residual: float
    objective: float
    converged: bool
    seconds: float
    primal: float
    dual: float
    gap: float

    @property
    def rel_gap(self) -> float:
        """``gap / primal`` (``primal > 0`` always: at ``v = 0`` every slack is 1)."""
        return self.gap / max(abs(self.primal), np.finfo(float).tiny)


@dataclass
class SORLinearResult(SORResult):
    """:class:`SORResult` of :func:`sor_linear`, with the plane ``x'w = gamma`` (1.33).

    Attributes
    ----------
    w : ndarray, shape (n,)
        ``A'Du`` (the first ``n`` entries of ``v = H'u``).
    gamma : float
        ``-e'Du`` (the last entry of ``v``), as in (1.37) and (1.42).
    time_limited : bool
        The run stopped at ``time_limit`` (before ``tol``, ``gap_tol`` or ``max_sweeps``).
    """

    w: np.ndarray = None  # type: ignore[assignment]
    gamma: float = 0.0
    time_limited: bool = False
    """``True`` when the run stopped because ``time_limit`` was reached (see :func:`sor_linear`)."""
    interrupted: bool = False
    """``True`` when Ctrl-C stopped the sweeps (``interruptible=True``, see :func:`sor_linear`)."""
    polished: int = 0
    """Polishing steps kept (``polish=True``, see :func:`sor_linear`)."""

    def decision_function(self, X) -> np.ndarray:
        """``X w - gamma``: positive on the class ``+1`` side of the plane (1.33)."""
        X = X if sparse.issparse(X) else np.asarray(X, dtype=float)
        return X @ self.w - self.gamma

    def predict(self, X) -> np.ndarray:
        """``sign(X w - gamma)`` with 0 mapped to ``+1``."""
        return np.where(self.decision_function(X) >= 0, 1.0, -1.0)


# ----------------------------------------------------------------------------------------------
# validation


def _check_nu(nu) -> float:
    if isinstance(nu, bool) or not isinstance(nu, numbers.Real) or not np.isfinite(nu) or nu <= 0:
        raise ValueError(f"nu must be a finite number > 0, got {nu!r}")
    return float(nu)


def _check_omega(omega) -> float:
    if (isinstance(omega, bool) or not isinstance(omega, numbers.Real) or not np.isfinite(omega)
            or not 0 < omega < 2):
        raise ValueError(f"omega must be in the open interval (0, 2) (Algorithm 8), got {omega!r}")
    return float(omega)


def _check_tol(tol) -> float:
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not np.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must be a finite number >= 0, got {tol!r}")
    return float(tol)


def _check_sweeps(max_sweeps) -> int:
    if isinstance(max_sweeps, bool) or not isinstance(max_sweeps, numbers.Integral) or max_sweeps < 0:
        raise ValueError(f"max_sweeps must be an integer >= 0, got {max_sweeps!r}")
    return int(max_sweeps)


def _check_labels(d, m: int, name: str = "d") -> np.ndarray:
    d = np.asarray(d)
    if d.ndim != 1 or d.shape[0] != m:
        raise ValueError(f"{name} must be 1-D with {m} entries, got shape {d.shape}")
    if not (np.issubdtype(d.dtype, np.number)):
        raise ValueError(f"{name} must be numeric labels -1/+1, got dtype {d.dtype}")
    d = d.astype(float)
    if not np.all((d == 1.0) | (d == -1.0)):
        bad = int(np.flatnonzero((d != 1.0) & (d != -1.0))[0])
        raise ValueError(f"{name} must hold only -1 and +1 (the diagonal of D); entry {bad} is {d[bad]!r}")
    return d


def _check_vector(x, m: int, name: str, *, positive: bool) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.ndim != 1 or x.shape[0] != m:
        raise ValueError(f"{name} must be 1-D with {m} entries, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} has a NaN or infinite entry")
    if positive and not np.all(x > 0):
        raise ValueError(f"{name} must be > 0 everywhere")
    return np.ascontiguousarray(x)


def _check_square(K, name: str) -> np.ndarray:
    K = np.asarray(K)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"{name} must be a square m x m matrix, got shape {K.shape}")
    if K.shape[0] == 0:
        raise ValueError(f"{name} is empty")
    if not np.issubdtype(K.dtype, np.number):
        raise ValueError(f"{name} must be numeric, got dtype {K.dtype}")
    K = np.asarray(K, dtype=float)
    if not np.all(np.isfinite(K)):
        raise ValueError(f"{name} has a NaN or infinite entry")
    return K


def _symmetrized(K: np.ndarray, name: str) -> np.ndarray:
    asym = float(np.max(np.abs(K - K.T)))
    if asym > _SYM_RTOL * max(1.0, float(np.max(np.abs(K)))):
        raise ValueError(f"{name} must be symmetric (max |{name} - {name}'| = {asym:.3g}); for an "
                         "arbitrary kernel use kernel_dual_matrix_KK (1.43)")
    return np.ascontiguousarray(0.5 * (K + K.T))


# ----------------------------------------------------------------------------------------------
# builders and objectives


def kernel_dual_matrix(K, d) -> np.ndarray:
    """``M = D(K + ee')D`` of (1.42).

    Parameters
    ----------
    K : array_like, shape (m, m)
        The kernel ``K(A, A')``; must be symmetric (to ``1e-10`` relative; it is symmetrized).
        It is *not* checked for positive semidefiniteness, which (1.42) assumes (Theorem 10 and
        the optimality condition (1.47) need ``M`` positive semidefinite).
    d : array_like, shape (m,)
        Labels in ``{-1, +1}`` (the diagonal of ``D``).

    Returns
    -------
    ndarray, shape (m, m), C-contiguous float64.
    """
    K = _check_square(K, "K")
    d = _check_labels(d, K.shape[0])
    K = _symmetrized(K, "K")
    return np.ascontiguousarray(d[:, None] * (K + 1.0) * d[None, :])


def kernel_dual_matrix_KK(K, d) -> np.ndarray:
    """``M = D(KK' + ee')D`` of (1.43): positive semidefinite for *any* ``K``.

    Parameters
    ----------
    K : array_like, shape (m, m)
        The kernel ``K(A, A')``; arbitrary (need not be symmetric nor positive semidefinite).
        The separating surface is then (1.44): ``K(x', A') K(A, A')' D u = gamma``.
    d : array_like, shape (m,)
        Labels in ``{-1, +1}``.

    Returns
    -------
    ndarray, shape (m, m), C-contiguous float64 (exactly symmetric).
    """
    K = _check_square(K, "K")
    d = _check_labels(d, K.shape[0])
    G = K @ K.T
    G = 0.5 * (G + G.T)
    return np.ascontiguousarray(d[:, None] * (G + 1.0) * d[None, :])


def sor_objective(M, u) -> float:
    """``f(u) = 1/2 u'Mu - e'u``, the objective of (1.42), (1.43), (1.45)."""
    u = np.asarray(u, dtype=float)
    return float(0.5 * u @ (np.asarray(M, dtype=float) @ u) - u.sum())


def kernel_primal_dual(M, u, upper) -> tuple[float, float]:
    """``(primal, dual)`` of (1.35)/(1.37) at ``u`` for ``M = HH'`` (kernel in feature space).

    ``primal = 1/2 u'Mu + upper'(e - Mu)_+`` is (1.35) at ``[w; gamma] = H'u`` with the best slack
    ``y = (e - D(Aw - e gamma))_+ = (e - Mu)_+``; ``dual = e'u - 1/2 u'Mu`` is (1.37). Weak
    duality (``primal >= dual``) needs ``M`` positive semidefinite. ``upper`` is ``nu e`` (or the
    weighted bounds); a scalar is broadcast.
    """
    M = np.asarray(M, dtype=float)
    u = np.asarray(u, dtype=float)
    Mu = M @ u
    quad = float(u @ Mu)
    ub = np.broadcast_to(np.asarray(upper, dtype=float), u.shape)
    hinge = float(ub @ np.maximum(0.0, 1.0 - Mu))
    return 0.5 * quad + hinge, float(u.sum()) - 0.5 * quad


def primal_objective(A, d, w, gamma, nu, *, weights=None) -> float:
    """Objective of (1.35) at ``(w, gamma)`` with the best slack ``y = (e - D(Aw - e gamma))_+``.

    ``nu sum_i s_i max(0, 1 - d_i (A_i w - gamma)) + 1/2 (w'w + gamma^2)`` with ``s = weights``
    (default ones). Note the ``gamma^2``: (1.35) regularizes the offset, unlike the standard SVM
    (1.32) (LIBSVM's problem).
    """
    A = np.asarray(A, dtype=float)
    if A.ndim != 2:
        raise ValueError(f"A must be 2-D, got shape {A.shape}")
    d = _check_labels(d, A.shape[0])
    nu = _check_nu(nu)
    w = np.asarray(w, dtype=float)
    s = np.ones(A.shape[0]) if weights is None else _check_vector(weights, A.shape[0], "weights", positive=True)
    y = np.maximum(0.0, 1.0 - d * (A @ w - gamma))
    return float(nu * (s @ y) + 0.5 * (w @ w + gamma * gamma))


def gamma_from_dual(u, d) -> float:
    """``gamma = -e'Du`` (1.37), (1.42), (1.43)."""
    return float(-(np.asarray(d, dtype=float) @ np.asarray(u, dtype=float)))


# ----------------------------------------------------------------------------------------------
# numba kernels


@numba.njit(cache=True, inline="always")
def _box(t, upper):  # pragma: no cover - compiled
    """The projection ``(t)_#`` onto ``[0, upper]`` (1.48)."""
    if t < 0.0:
        return 0.0
    if t > upper:
        return upper
    return t


@numba.njit(cache=True)
def _sweep_dense(M, u, g, upper, omega):  # pragma: no cover - compiled
    """One sweep of (1.53) in increasing index order, maintaining ``g = Mu - e``.

    When component ``j`` is reached, ``g[j] = M_j (u_1^{i+1}, ..., u_{j-1}^{i+1}, u_j^i, ..., u_m^i)
    - 1``, exactly the quantity ``M u^i - e + L(u^{i+1} - u^i)`` of (1.53) (Remark 9). After a
    change ``delta`` of ``u_j``, ``g += delta M[:, j]`` (= row ``j``, ``M`` symmetric); a component
    that stays put (e.g. at a bound) costs O(1).
    """
    m = u.shape[0]
    for j in range(m):
        old = u[j]
        t = _box(old - omega * g[j] / M[j, j], upper[j])
        delta = t - old
        if delta != 0.0:
            u[j] = t
            for l in range(m):
                g[l] += delta * M[j, l]


@numba.njit(cache=True)
def _natural_residual(u, g, upper):  # pragma: no cover - compiled
    """``|| u - (u - g)_# ||_inf`` with ``#`` the projection onto ``[0, upper]`` (1.48)."""
    r = 0.0
    for i in range(u.shape[0]):
        a = abs(u[i] - _box(u[i] - g[i], upper[i]))
        if a > r:
            r = a
    return r


def _row_sums(X, v, i):  # pragma: no cover - replaced by the compiled overloads below
    """``(x_i v[:n], ||x_i||^2)`` for row ``i`` of ``X``: a 2-d array, or CSR as the tuple
    ``(indptr, indices, data)`` (:func:`_compiled`); ``n = len(v) - 1``."""
    raise NotImplementedError


def _row_add(X, v, i, c):  # pragma: no cover - replaced by the compiled overloads below
    """``v[:n] += c x_i`` for row ``i`` of ``X`` (as :func:`_row_sums`)."""
    raise NotImplementedError


@numba.extending.overload(_row_sums, inline="always")
def _row_sums_impl(X, v, i):  # pragma: no cover - compiled
    if isinstance(X, numba.types.Array):
        def dense(X, v, i):
            s = 0.0
            e2 = 0.0
            for k in range(X.shape[1]):
                x = X[i, k]
                s += x * v[k]
                e2 += x * x
            return s, e2
        return dense

    def csr(X, v, i):  # the stored entries of row i only
        indptr, indices, data = X
        s = 0.0
        e2 = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            x = data[p]
            s += x * v[indices[p]]
            e2 += x * x
        return s, e2
    return csr


@numba.extending.overload(_row_add, inline="always")
def _row_add_impl(X, v, i, c):  # pragma: no cover - compiled
    if isinstance(X, numba.types.Array):
        def dense(X, v, i, c):
            for k in range(X.shape[1]):
                v[k] += c * X[i, k]
        return dense

    def csr(X, v, i, c):
        indptr, indices, data = X
        for p in range(indptr[i], indptr[i + 1]):
            v[indices[p]] += c * data[p]
    return csr


def _compiled(X):
    """``X`` as the compiled sweeps take it: a dense array as it is, a scipy CSR matrix as
    ``(indptr, indices, data)`` (one sweep code for both: the row operations :func:`_row_sums`
    and :func:`_row_add` are specialised on the type)."""
    if sparse.issparse(X):
        return X.indptr, X.indices, X.data
    return X


@numba.njit(cache=True, inline="always")
def _gradient(X, d, v, i):  # pragma: no cover - compiled
    """``(g_i, E_ii)``: ``g_i = H_i v - 1 = d_i (X_i w - gamma) - 1`` and ``E_ii = ||X_i||^2 + 1``."""
    s, e2 = _row_sums(X, v, i)
    return d[i] * (s - v[v.shape[0] - 1]) - 1.0, e2 + 1.0


@numba.njit(cache=True, inline="always")
def _step(X, d, u, upper, v, omega, i, g, e2):  # pragma: no cover - compiled
    """The projected step (1.55) of component ``i``, ``v += H_i' delta``; returns ``delta``."""
    old = u[i]
    t = _box(old - omega * g / e2, upper[i])
    delta = t - old
    if delta != 0.0:
        u[i] = t
        c = delta * d[i]
        _row_add(X, v, i, c)
        v[v.shape[0] - 1] -= c
    return delta


@numba.njit(cache=True)
def _sweep_rows(X, d, u, upper, v, omega):  # pragma: no cover - compiled
    """One pass of (1.55) over the rows of a block, in order; returns an estimate of the residual.

    Row ``j`` of ``H = D[A  -e]`` is ``d_j [X_j, -1]``; ``E_jj = ||H_j||^2 = ||X_j||^2 + 1``. The
    step is ``u_j <- (u_j - omega (H_j v - 1) / E_jj)_#`` and ``v += H_j' (u_j^new - u_j^old)``,
    where ``v = sum_l H_l' u_l`` holds the latest ``u_l`` (the two sums of (1.55)).

    The returned estimate is ``max_j |u_j^new - u_j^old| max(1, E_jj / omega)``: the step of
    Algorithm 8's own stopping rule (``||u^{i+1} - u^i||``), scaled so that it bounds the natural
    residual ``|u_j - (u_j - g_j)_#|`` of component ``j`` at the point where it was updated (the
    projected step ``|u - (u - alpha g)_#|`` is nondecreasing in ``alpha`` and divided by ``alpha``
    nonincreasing; here ``alpha = omega / E_jj``). It is only used to decide when to compute the
    exact residual, which needs a pass over the data.
    """
    est = 0.0
    for i in range(u.shape[0]):
        g, e2 = _gradient(X, d, v, i)
        delta = _step(X, d, u, upper, v, omega, i, g, e2)
        if delta != 0.0:
            a = abs(delta) * (e2 / omega if e2 > omega else 1.0)
            if a > est:
                est = a
    return est


@numba.njit(cache=True)
def _seed_numba(seed):  # pragma: no cover - compiled
    np.random.seed(seed)  # noqa: NPY002 - numba's own generator state inside compiled code


@numba.njit(cache=True)
def _sweep_active(X, d, u, upper, v, omega, active, n_active, pg_hi, pg_lo, shrink,
                  shuffle):  # pragma: no cover - compiled
    """One pass of (1.55) over the rows ``active[:n_active]`` (shuffled first when ``shuffle``).

    Returns ``(n_active, max PG, min PG)`` with ``PG`` the projected gradient of each visited
    component before its update (``g_j`` when free, ``min(g_j, 0)`` at 0, ``max(g_j, 0)`` at the
    upper bound). With ``shrink``, a component at 0 with ``g_j > pg_hi`` or at its upper bound
    with ``g_j < pg_lo`` (the extremes of the previous pass) leaves the active set: it is swapped
    behind ``active[:n_active]`` and not visited again until the caller resets ``n_active``
    (LIBLINEAR's shrinking, Hsieh et al. 2008).
    """
    if shuffle:
        np.random.shuffle(active[:n_active])  # noqa: NPY002 - numba's generator (seeded above)
    hi = -np.inf
    lo = np.inf
    k = 0
    while k < n_active:
        i = active[k]
        g, e2 = _gradient(X, d, v, i)
        ui = u[i]
        pg = g
        if ui <= 0.0:
            if shrink and g > pg_hi:
                n_active -= 1
                active[k] = active[n_active]
                active[n_active] = i
                continue
            if g > 0.0:
                pg = 0.0
        elif ui >= upper[i]:
            if shrink and g < pg_lo:
                n_active -= 1
                active[k] = active[n_active]
                active[n_active] = i
                continue
            if g < 0.0:
                pg = 0.0
        if pg > hi:
            hi = pg
        if pg < lo:
            lo = pg
        if pg != 0.0:
            _step(X, d, u, upper, v, omega, i, g, e2)
        k += 1
    return n_active, hi, lo


def _sweep_rows_numpy(X, d, u, upper, v, omega):
    """Reference implementation of :func:`_sweep_rows`: a Python loop with numpy row operations.

    Used by the tests (same iterates as the numba kernel) and for the timing in ``docs/sor.md``.
    """
    n = X.shape[1]
    est = 0.0
    for i in range(X.shape[0]):
        h = d[i] * np.append(X[i], -1.0)
        e2 = float(h @ h)
        gi = float(h @ v) - 1.0
        t = min(max(u[i] - omega * gi / e2, 0.0), upper[i])
        delta = t - u[i]
        if delta != 0.0:
            u[i] = t
            v += delta * h
            est = max(est, abs(delta) * max(1.0, e2 / omega))
    assert v.shape[0] == n + 1
    return est


# ----------------------------------------------------------------------------------------------
# Algorithm 8 on a dense M


def sor_solve(M, nu, *, omega=1.0, tol=1e-6, max_sweeps=10_000, u0=None, upper=None) -> SORResult:
    """Algorithm 8 (SOR, (1.53)) for ``min 1/2 u'Mu - e'u  s.t.  0 <= u <= upper`` (1.45).

    Parameters
    ----------
    M : array_like, shape (m, m)
        Symmetric (to ``1e-10`` relative; it is symmetrized) with a positive diagonal ``E``
        (1.46), e.g. from :func:`kernel_dual_matrix` (1.42) or :func:`kernel_dual_matrix_KK`
        (1.43). Positive semidefiniteness is assumed (Theorem 10, (1.47)) but not checked.
    nu : float
        ``nu > 0`` of (1.35). The bounds are ``upper = nu e`` unless ``upper`` is given.
    omega : float, default 1.0
        Relaxation factor in the open interval ``(0, 2)`` (1.50); ``1`` is projected Gauss-Seidel.
    tol : float, default 1e-6
        Stop when the natural residual ``|| u - (u - (Mu - e))_# ||_inf / RESIDUAL_SCALE``
        (see the module docstring) is ``<= tol``.
    max_sweeps : int, default 10_000
        Maximum number of sweeps; ``0`` only evaluates ``u0``.
    u0 : array_like, shape (m,), optional
        Starting point (Algorithm 8 allows any ``u^0``; it is projected onto the box first).
        Default ``0``.
    upper : array_like, shape (m,), optional
        Upper bounds replacing ``nu e`` (all ``> 0``), e.g. ``nu * s`` for a problem whose point
        ``i`` stands for ``s_i`` points (the slack of (1.35) weighted by ``nu s_i``). ``nu`` is then
        only validated.

    Returns
    -------
    SORResult

    Notes
    -----
    The sweep keeps ``g = Mu - e`` up to date (``g += delta M_j`` after each change) instead of
    recomputing ``M_j u`` row by row: this is the same iteration (1.53) in the same order, and
    gives the residual at the end of each sweep in O(m). ``g`` is recomputed exactly every 200
    sweeps, before declaring convergence and at the end, so round-off drift never reaches the
    reported residual.
    """
    t0 = time.perf_counter()
    M = _check_square(M, "M")
    m = M.shape[0]
    nu = _check_nu(nu)
    omega = _check_omega(omega)
    tol = _check_tol(tol)
    max_sweeps = _check_sweeps(max_sweeps)
    M = _symmetrized(M, "M")
    diag = np.diag(M)
    if not np.all(diag > 0):
        j = int(np.flatnonzero(diag <= 0)[0])
        raise ValueError(f"M must have a positive diagonal E (1.46); M[{j},{j}] = {diag[j]!r}")
    ub = np.full(m, nu) if upper is None else _check_vector(upper, m, "upper", positive=True)
    u = np.zeros(m) if u0 is None else np.clip(_check_vector(u0, m, "u0", positive=False), 0.0, ub)
    u = np.ascontiguousarray(u)

    g = M @ u - 1.0
    residual = _natural_residual(u, g, ub) / RESIDUAL_SCALE
    sweeps = 0
    while residual > tol and sweeps < max_sweeps:
        _sweep_dense(M, u, g, ub, omega)
        sweeps += 1
        if sweeps % _REFRESH == 0:
            g = M @ u - 1.0
        residual = _natural_residual(u, g, ub) / RESIDUAL_SCALE
        if residual <= tol:  # confirm with an exact gradient (no drift)
            g = M @ u - 1.0
            residual = _natural_residual(u, g, ub) / RESIDUAL_SCALE

    g = M @ u - 1.0
    residual = float(_natural_residual(u, g, ub) / RESIDUAL_SCALE)
    quad = float(u @ (g + 1.0))
    esum = float(u.sum())
    primal = 0.5 * quad + float(ub @ np.maximum(0.0, -g))
    dual = esum - 0.5 * quad
    return SORResult(u=u, sweeps=sweeps, residual=residual, objective=0.5 * quad - esum,
                     converged=bool(residual <= tol), seconds=time.perf_counter() - t0,
                     primal=primal, dual=dual, gap=primal - dual)


# ----------------------------------------------------------------------------------------------
# Remark 11 / (1.55): the linear kernel, rows streamed


class _Rows:
    """The rows ``[A d]`` for :func:`sor_linear`: one in-memory block, or blocks of a RowSource."""

    def __init__(self, A, d, columns, block_rows):
        if sparse.issparse(A):  # CSR rows in memory, swept on their stored entries
            if A.ndim != 2:
                raise ValueError(f"A must be 2-D, got {A.ndim} dimensions")
            if A.dtype.kind not in "biuf":
                raise TypeError(f"A must be numeric, got dtype {A.dtype}")
            canonical = A.format == "csr" and A.dtype == np.float64 and A.has_canonical_format
            self.X = A if canonical else sparse.csr_matrix(A, dtype=np.float64)
            self.X.sum_duplicates()
            self.d = np.ascontiguousarray(_check_labels(d, self.X.shape[0]), dtype=float)
            self.source = None
            self.m, self.n = self.X.shape
            self.ranges = [(0, self.m)] if self.m else []
        elif isinstance(A, np.ndarray) and not isinstance(A, np.memmap):
            source = row_source(A, d, matrix_name="A", vector_name="d")
            self.X = np.ascontiguousarray(source.M, dtype=float)
            self.d = np.ascontiguousarray(source.v, dtype=float)
            self.source = None
            self.m, self.n = self.X.shape
            self.ranges = [(0, self.m)] if self.m else []
        else:
            source = row_source(A, d, vector="d", columns=columns, matrix_name="A", vector_name="d")
            self.source = source
            self.m, self.n = source.n_rows, source.n_cols
            self.ranges = [(s, min(self.m, s + block_rows)) for s in range(0, self.m, block_rows)]
        if self.m == 0:
            raise ValueError("A has no rows")
        if self.n == 0:
            raise ValueError("A has no columns")

    @property
    def compiled(self):
        """The in-memory rows as the compiled sweeps take them (:func:`_compiled`)."""
        return _compiled(self.X)

    def blocks(self):
        """Yield ``(start, stop, X, d)`` in row order; ``X`` C-contiguous float64."""
        if self.source is None:
            yield 0, self.m, self.X, self.d
            return
        for start, stop in self.ranges:
            X, d = self.source.read(start, stop)
            yield start, stop, np.ascontiguousarray(X, dtype=float), np.ascontiguousarray(d, dtype=float)


def _check_block(start, X, d):
    if sparse.issparse(X):  # the stored entries only
        bad = np.flatnonzero(~np.isfinite(X.data))
        if bad.size:
            row = start + int(np.searchsorted(X.indptr, bad[0], side="right")) - 1
            raise ValueError(f"A has a NaN or infinite entry in row {row}")
    elif not np.all(np.isfinite(X)):
        row = start + int(np.flatnonzero(~np.all(np.isfinite(X), axis=1))[0])
        raise ValueError(f"A has a NaN or infinite entry in row {row}")
    ok = (d == 1.0) | (d == -1.0)
    if not np.all(ok):
        row = int(np.flatnonzero(~ok)[0])
        raise ValueError(f"d must hold only -1 and +1 (the diagonal of D); entry {start + row} is {d[row]!r}")


def _v_pass(rows: _Rows, u, n) -> np.ndarray:
    """``v = H'u = [A'Du; -e'Du]`` in one pass over the rows."""
    v = np.zeros(n + 1)
    for start, stop, X, d in rows.blocks():
        du = d * u[start:stop]
        v[:n] += X.T @ du
        v[n] -= du.sum()
    return v


def _g_pass(rows: _Rows, u, ub, v, n) -> tuple[float, float]:
    """``(residual, upper'(e - Hv)_+)`` in one pass: ``g = Hv - e = D(Aw - e gamma) - e``."""
    res = 0.0
    hinge = 0.0
    for start, stop, X, d in rows.blocks():
        g = d * (X @ v[:n] - v[n]) - 1.0
        us, bs = u[start:stop], ub[start:stop]
        res = max(res, float(np.max(np.abs(us - np.clip(us - g, 0.0, bs)))))
        hinge += float(bs @ np.maximum(0.0, -g))
    return res / RESIDUAL_SCALE, hinge


#: most free components :func:`_polish` solves for (a thin SVD of ``|free| x (n + 1)``)
POLISH_MAX = 200_000


def _polish(rows: _Rows, u, ub, v):
    """A point of the box that satisfies stationarity on the free components of ``u``.

    With ``F`` the components strictly inside ``(0, ub)`` and ``v = H'u``, the bound components
    fixed: ``H_F (v_B + H_F' u_F) = e_F`` with ``v_B = v - H_F' u_F``, i.e.
    ``(H_F H_F') u_F = e_F - H_F v_B``, solved in the least-squares sense (minimum norm: the rows
    of ``H_F`` are dependent when more than ``n + 1`` are free) and projected onto the box.
    ``None`` when nothing is free or too much is.
    """
    free = np.flatnonzero((u > 0.0) & (u < ub))
    if free.size == 0 or free.size > POLISH_MAX or rows.source is not None:
        return None
    Xf = rows.X[free]
    if sparse.issparse(Xf):  # the free rows densified: only while no larger than X's entries
        if free.size * (rows.n + 1) > max(rows.X.nnz, 1):
            return None
        Xf = Xf.toarray()
    H = rows.d[free, None] * np.hstack([Xf, -np.ones((free.size, 1))])
    v_bound = v - H.T @ u[free]
    rhs = 1.0 - H @ v_bound
    # minimum-norm solution of (H H') u_F = rhs from the thin SVD H = U S W' (|free| x (n+1)):
    # (H H')^+ = U S^-2 U', O(|free| n^2) instead of a |free| x |free| factorization
    U, S, _ = np.linalg.svd(H, full_matrices=False)
    keep = S > S[0] * 1e-10 if S.size else S > 0
    if not keep.any():
        return None
    U, S = U[:, keep], S[keep]
    sol = U @ ((U.T @ rhs) / (S * S))
    if not np.all(np.isfinite(sol)):
        return None
    trial = u.copy()
    trial[free] = np.clip(sol, 0.0, ub[free])
    return trial


def _check_linear_args(nu, omega, tol, max_sweeps, block_rows, gap_tol, time_limit, callback,
                       order, shrinking, polish):
    """The scalar arguments of :func:`sor_linear`, checked: ``(nu, omega, tol, max_sweeps,
    gap_tol)`` normalised."""
    nu = _check_nu(nu)
    omega = _check_omega(omega)
    tol = _check_tol(tol)
    max_sweeps = _check_sweeps(max_sweeps)
    if isinstance(block_rows, bool) or not isinstance(block_rows, numbers.Integral) or block_rows < 1:
        raise ValueError(f"block_rows must be a positive integer, got {block_rows!r}")
    if gap_tol is not None:
        gap_tol = _check_tol(gap_tol)
    if time_limit is not None and (isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real)
                                   or not time_limit > 0):
        raise ValueError(f"time_limit must be a number of seconds > 0 or None, got {time_limit!r}")
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be callable or None, got {callback!r}")
    if order not in ("cyclic", "random"):
        raise ValueError(f"order must be 'cyclic' or 'random', got {order!r}")
    if not isinstance(shrinking, bool | np.bool_):
        raise ValueError(f"shrinking must be True or False, got {shrinking!r}")
    if not isinstance(polish, bool | np.bool_):
        raise ValueError(f"polish must be True or False, got {polish!r}")
    return nu, omega, tol, max_sweeps, gap_tol


def _validated_v(rows: _Rows, u, n: int) -> np.ndarray:
    """The validation pass over the rows (finite, labels +-1), combined with ``v = H'u``."""
    v = np.zeros(n + 1)
    for start, stop, X, dd in rows.blocks():
        _check_block(start, X, dd)
        du = dd * u[start:stop]
        v[:n] += X.T @ du
        v[n] -= du.sum()
    return v


def _exact(rows: _Rows, u, ub, n: int):
    """``(v, residual, hinge)`` at ``u``, computed exactly (two passes over the rows)."""
    v = _v_pass(rows, u, n)
    res, hinge = _g_pass(rows, u, ub, v, n)
    return v, res, hinge


def _values(u, v, hinge) -> tuple[float, float]:
    """``(primal, dual)`` of (1.35) / (1.37) at ``u`` with ``v = H'u`` and the hinge sum."""
    quad = float(v @ v)
    return 0.5 * quad + hinge, float(u.sum()) - 0.5 * quad


def _sweep_blocks(rows: _Rows, u, ub, v, omega, out_of_time) -> tuple[float, bool]:
    """One cyclic sweep, block by block: ``(largest step estimate, stopped by the clock)``; a
    streamed source stops between blocks when ``out_of_time()``."""
    est = 0.0
    for start, stop, X, dd in rows.blocks():
        est = max(est, _sweep_rows(_compiled(X), dd, u[start:stop], ub[start:stop], v, omega))
        if stop < rows.m and out_of_time():
            return est, True
    return est, False


def _try_polish(rows: _Rows, u, ub, v, n: int, gap: float, dual: float):
    """Move ``u`` to the polished point (:func:`_polish`) when its duality gap is below ``gap``
    and its dual value not below ``dual``: ``(v, residual, hinge, primal, dual)`` there, else
    ``None`` with ``u`` unchanged.

    The dual value must not drop: SOR ascends the dual (1.37), and a polished point with a smaller
    gap but a lower dual (a minimum-norm solution of a singular stationarity system: identical
    rows) sends the sweeps back where they started, over and over (found on 30 identical rows:
    no progress until the time limit)."""
    trial = _polish(rows, u, ub, v)
    if trial is None:
        return None
    kept = u.copy()
    u[:] = trial
    v2, res2, hinge2 = _exact(rows, u, ub, n)
    primal2, dual2 = _values(u, v2, hinge2)
    if primal2 - dual2 < gap and dual2 >= dual:
        return v2, res2, hinge2, primal2, dual2
    u[:] = kept
    return None


def sor_linear(A, d, nu, *, omega=1.0, tol=1e-6, max_sweeps=10_000, weights=None, u0=None,
               columns=None, block_rows=BLOCK_ROWS, gap_tol=None, gap_scale=1.0, time_limit=None,
               callback=None, order="cyclic", shrinking=False, seed=0,
               polish=False, interruptible=False) -> SORLinearResult:
    """SOR for the linear SVM (1.35)/(1.37) by Remark 11 / (1.55), never forming ``M = HH'``.

    ``H = D[A  -e]``; the sweep keeps ``v = H'u = [A'Du; -e'Du] = [w; gamma]`` (``n + 1``
    numbers) and updates ``u_j`` from ``H_j v`` with ``E_jj = ||H_j||^2 = ||A_j||^2 + 1``, then
    ``v += H_j'(u_j^new - u_j^old)``, rows in increasing index order (Remark 9). It is the same
    iteration as :func:`sor_solve` on ``D(AA' + ee')D`` (1.42 with ``K = AA'``).

    Parameters
    ----------
    A : ndarray, scipy sparse matrix, numpy.memmap, path (``.npy`` or ``.parquet``) or RowSource
        The data, ``m x n``. An in-memory array is swept in one numba call; anything else is read
        with :mod:`aidopt.data.rowblocks` ``block_rows`` rows at a time, in order, so a memmap or Parquet
        file larger than memory works (memory: one block plus O(m) for ``u`` and the bounds).
        A scipy sparse matrix (any format; converted to CSR once unless it is canonical CSR
        float64 already) is swept in memory on its stored entries, by the same compiled sweep
        (:func:`_row_sums` / :func:`_row_add` read a CSR row): a step costs O(nnz of the row),
        and nothing of size ``m x n`` is made. Polishing densifies the free rows only, and only
        while they hold no more entries than X stores.
    d : array_like, memmap, ``.npy`` path, str or None
        Labels ``-1``/``+1``. For an array/memmap ``A``: an array of ``m`` labels. For a Parquet
        ``A``: the name of the label column (``None`` means ``"d"``); the other columns (or
        ``columns``) are ``A``. For a RowSource: ``None`` (its vector holds the labels).
    nu : float
        ``nu > 0``; the bounds are ``0 <= u <= nu * weights``.
    omega, tol, max_sweeps, u0
        As in :func:`sor_solve`.
    weights : array_like, shape (m,), optional
        Positive weights ``s``: upper bounds ``nu s`` (slack of point ``i`` weighted by ``nu s_i``).
    columns : list of str, optional
        Parquet columns of ``A`` (default: every column but the label column).
    block_rows : int
        Rows per block when streaming.
    gap_tol : float, optional
        Also stop when the relative duality gap ``(primal - dual) / max(1, |primal|)`` of
        (1.35)/(1.37) at ``u`` is ``<= gap_tol`` (``converged`` still reports the residual test
        only). The gap needs the exact passes, which are then made after sweeps 1, 2, ..., and
        from then on every ``min(50, max(1, sweeps // 10))`` sweeps (about 10-20% extra work).
        ``None`` (default): the residual test only.
    gap_scale : float, default 1.0
        The gap is relative to ``max(gap_scale, |primal|)``: AID's aggregated solves pass the
        objective of the original problem at the last iterate, the scale their gap matters on.
    time_limit : float, optional
        Seconds from the start of the call; checked after every sweep and, for a streamed source,
        after every block (the partial sweep is kept, any ``u`` in the box is a valid iterate, but
        not counted in ``sweeps``). The final exact passes that give the reported numbers run
        after the limit. ``time_limited`` says whether it stopped the run.
    callback : callable, optional
        ``callback(sweeps, residual, primal, dual)`` after every exact evaluation at the current
        ``u`` (at the start, at each exact check and at the end), e.g. to print progress.
    order : {"cyclic", "random"}, default "cyclic"
        ``"cyclic"``: increasing row index, as Algorithm 8 / Remark 9 prescribe. ``"random"``: a
        fresh random permutation of the rows before each sweep (an array in memory only), which
        converged several times faster on overlapping classes (docs/sor.md).
    shrinking : bool, default False
        Skip the components that sit at a bound with a gradient pushing them further out than the
        extremes of the previous sweep (LIBLINEAR's shrinking, Hsieh et al. 2008; an array in
        memory only). A sweep then visits the active rows only; when their projected gradients
        agree to ``pg_tol`` (0.1, divided by 10 after every failed exact check) every row is
        visited again before the exact check, so the reported numbers are never those of a
        shrunk problem.
    seed : int, default 0
        Seed of the random order.
    polish : bool, default False
        With ``shrinking`` (an array in memory): when the active rows have settled but the exact
        check fails, solve the stationarity equations of the components strictly inside their box
        with the others fixed (the minimum-norm solution through a thin SVD of the free rows,
        O(|free| n^2), skipped above ``POLISH_MAX`` free components), project onto the box, and
        keep the point only if its exact duality gap is smaller. Any point of the box is a valid
        iterate, so this changes speed, never the bound argument. SOR's last digits converge slowly on ill-conditioned
        duals (AID's weighted centroids); once the bounds are identified, this step is exact.
    interruptible : bool, default False
        Ctrl-C ends the sweeps and the current ``u`` (in the box, as after any sweep: a valid
        iterate) is evaluated and returned with ``interrupted=True``, instead of the
        ``KeyboardInterrupt`` reaching the caller (which a run framework of its own catches).

    Returns
    -------
    SORLinearResult
        With ``w = A'Du``, ``gamma = -e'Du`` (sign of (1.37): the plane is ``x'w = gamma`` and the
        decision function ``x'w - gamma``), and ``primal``/``dual``/``gap`` of (1.35)/(1.37).

    Notes
    -----
    *Stopping rule.* The exact residual needs ``g = Mu - e = Hv - e`` at the end of a sweep,
    which costs a pass over the data. Each sweep instead returns, for free, an estimate: the largest
    step ``|u_j^new - u_j^old|`` (Algorithm 8's own criterion ``||u^{i+1} - u^i||``) times
    ``max(1, E_jj / omega)``, which bounds component ``j``'s natural residual at the point where it
    was updated (but not at the end of the sweep); only when the estimate is ``<= theta * tol``
    are two exact passes made (``v = H'u`` from scratch, removing round-off drift, then
    ``g = Hv - e``). ``theta`` starts at 1 and halves (down to 1/16) each time the exact check
    fails. ``v`` is also recomputed exactly every 200 sweeps. The reported
    residual, objective and gap are always exact at the returned ``u``.
    """
    t0 = time.perf_counter()
    nu, omega, tol, max_sweeps, gap_tol = _check_linear_args(
        nu, omega, tol, max_sweeps, block_rows, gap_tol, time_limit, callback, order, shrinking,
        polish)
    rows = _Rows(A, d, columns, int(block_rows))
    m, n = rows.m, rows.n
    active_set = order == "random" or bool(shrinking)
    polish = bool(polish) and bool(shrinking)
    if active_set and rows.source is not None:
        raise ValueError("order='random' and shrinking=True need A in memory (a NumPy array); a "
                         "streamed source is swept in row order")
    ub = np.full(m, nu) if weights is None else nu * _check_vector(weights, m, "weights", positive=True)
    u = np.zeros(m) if u0 is None else np.clip(_check_vector(u0, m, "u0", positive=False), 0.0, ub)
    u = np.ascontiguousarray(u)
    v = _validated_v(rows, u, n)

    def stop_now(res, primal, dual):
        return res <= tol or (gap_tol is not None
                              and primal - dual <= gap_tol * max(gap_scale, abs(primal)))

    def out_of_time():
        return time_limit is not None and time.perf_counter() - t0 >= time_limit

    res, hinge = _g_pass(rows, u, ub, v, n)
    primal, dual = _values(u, v, hinge)
    if callback is not None:
        callback(0, float(res), primal, dual)
    done = stop_now(res, primal, dual)
    sweeps = 0
    theta = 1.0
    fresh = True  # (v, res, hinge) were computed exactly at the current u
    next_gap = 1  # sweep count of the next scheduled exact check (gap_tol only)
    time_limited = False
    if active_set:
        _seed_numba(int(seed))
        active = np.arange(m, dtype=np.int64)
    n_active, pg_hi, pg_lo, pg_tol = m, np.inf, -np.inf, 0.1
    passes = 0.0  # rows visited / m: the work done, which schedules the exact checks
    polished = 0  # polishing steps kept
    interrupted = False
    try:  # u stays in the box whenever Ctrl-C strikes: numba's sweeps and polish's copies are whole
        while not done and sweeps < max_sweeps:
            est = 0.0
            settled = False  # the active rows' projected gradients agree to pg_tol
            if active_set:
                visited = n_active
                passes += visited / m
                n_active, hi, lo = _sweep_active(rows.compiled, rows.d, u, ub, v, omega, active, n_active,
                                                 pg_hi, pg_lo, bool(shrinking), order == "random")
                fresh = False
                settled = hi - lo <= pg_tol or n_active == 0
                if settled and visited < m:  # shrunk: visit every row before any conclusion
                    n_active, pg_hi, pg_lo = m, np.inf, -np.inf
                    sweeps += 1
                    if out_of_time():
                        time_limited = True
                        break
                    continue
                est = max(hi, -lo, 0.0) if visited == m else np.inf
                pg_hi = hi if hi > 0 else np.inf
                pg_lo = lo if lo < 0 else -np.inf
            else:
                est, time_limited = _sweep_blocks(rows, u, ub, v, omega, out_of_time)
                fresh = False
                if time_limited:
                    break
            sweeps += 1
            if not active_set:
                passes = float(sweeps)
            by_residual = est / RESIDUAL_SCALE <= theta * tol
            if by_residual or settled or (gap_tol is not None and passes >= next_gap):
                if settled:
                    pg_tol = max(pg_tol / 10.0, 1e-12)
                v, res, hinge = _exact(rows, u, ub, n)
                fresh = True
                primal, dual = _values(u, v, hinge)
                if callback is not None:
                    callback(sweeps, float(res), primal, dual)
                done = stop_now(res, primal, dual)
                better = _try_polish(rows, u, ub, v, n, primal - dual, dual) if (
                    not done and settled and polish) else None
                if better is not None:  # a better point of the box: kept
                    v, res, hinge, primal, dual = better
                    polished += 1
                    if callback is not None:
                        callback(sweeps, float(res), primal, dual)
                    done = stop_now(res, primal, dual)
                if by_residual and res > tol:
                    theta = max(theta / 2.0, 1.0 / 16.0)
                next_gap = passes + min(50, max(1, int(passes) // 10))
            elif sweeps % _REFRESH == 0:
                v = _v_pass(rows, u, n)
            if not done and sweeps < max_sweeps and out_of_time():
                time_limited = True
                break
    except KeyboardInterrupt:
        if not interruptible:
            raise
        interrupted, fresh = True, False
    if not fresh:
        v, res, hinge = _exact(rows, u, ub, n)
        if callback is not None:
            callback(sweeps, float(res), *_values(u, v, hinge))
    primal, dual = _values(u, v, hinge)
    return SORLinearResult(u=u, sweeps=sweeps, residual=float(res),
                           objective=0.5 * float(v @ v) - float(u.sum()),
                           converged=bool(res <= tol), seconds=time.perf_counter() - t0,
                           primal=primal, dual=dual, gap=primal - dual,
                           w=v[:n].copy(), gamma=float(v[n]), time_limited=time_limited,
                           interrupted=interrupted, polished=polished)
