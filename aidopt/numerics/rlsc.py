r"""Semi- and unsupervised regularized least-squares classification by recurrent local search
(S²RLSC; Gieseke, Kramer, Airola & Pahikkala 2012), with an exact MIQP for small problems.

Notation of the paper. ``n = l + u`` points, the first kind labelled (:math:`y'_i`), the second
unlabelled; labels :math:`y \in \{-1, +1\}^n`; kernel matrix K; diagonal
:math:`D` with :math:`D_{ii} = \sqrt{1/l}` on labelled and :math:`\sqrt{\lambda'/u}` on unlabelled
points (problem (10)), or :math:`\sqrt{1/u}` everywhere in the unsupervised case (problem (7),
maximum margin clustering). For fixed labels

.. math:: J_2(c, y) = (Dy - DKc)'(Dy - DKc) + \lambda c'Kc

is minimised by :math:`c^* = DGDy`, :math:`G = (DKD + \lambda I)^{-1}` (eq. 12), and with the
eigendecomposition :math:`\bar K = DKD = V \Lambda V'`, :math:`\tilde\Lambda = (\Lambda + \lambda
I)^{-1}` the fitness is (eq. 13)

.. math:: F(y) = \min_c J_2(c, y) = y'D D y - y'DV \Lambda\tilde\Lambda V'Dy
          = (1 + \lambda') - s' \Omega s, \qquad s = V'Dy, \quad \Omega = \Lambda\tilde\Lambda,

(``1`` instead of :math:`1 + \lambda'` in the unsupervised case, eq. 16). Flipping coordinate j
changes ``s`` by :math:`-2 y_j D_{jj} V_{j\cdot}'`, so every fitness evaluation of the search costs
O(r) with r the number of kept eigenvalues: O(n) for the full kernel (Theorem 1) and O(r) for the
Nyström approximation :math:`\tilde K = K_R' K_{R,R}^{-1} K_R` with r landmarks (eq. 14,
Theorem 2, Appendix 1).

The labels must satisfy the balance band :math:`|\frac1u \sum_{i \in U} \max(0, y_i) - b_c| <
\varepsilon` (:class:`Band`). The searches are the :math:`(\mu+\nu)`-EA of Algorithm 2 and the
(1+1)-EA with round-robin coordinates (section 4.2.1.2), restarted and the best kept
(:func:`local_search`); their inner loops are numba kernels. Beyond the paper:

* :func:`solve_miqp` -- after eliminating c, :math:`F(y) = y'My` with M positive definite, so the
  labelling problem is a convex MIQP (:mod:`aidopt.models.s2rlsc`), solved exactly for small u;
* :func:`aggregated_start` -- an AID-style warm start: the unlabelled points clustered, the
  clusters sharing a label, a weighted RLSC fitness on the cluster representatives searched in
  O(l + k) per flip, its labels lifted to the points.

Public entry points: :func:`solve_s2rlsc` (returns :class:`S2RLSCResult`), the estimator
:class:`aidopt.api.s2rlsc.S2RLSCClassifier`, the CLI ``aidopt s2rlsc``; docs/s2rlsc.md.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numba
import numpy as np

__all__ = ["SEARCHES", "RANK_TOL", "Band", "RLSCFitness", "NaiveFitness",
           "nystrom_fitness", "SearchOutcome", "local_search", "aggregated_start"]

SEARCHES = ("mu+nu", "1+1")
"""``"mu+nu"``: the (μ+ν)-EA of Algorithm 2; ``"1+1"``: the (1+1)-EA with round-robin flips."""
RANK_TOL = 1e-12
"""Eigenvalues of :math:`\\bar K` below ``RANK_TOL`` times the largest are dropped (below the
rounding noise of the eigensolver); the fitness then changes by at most
``RANK_TOL * max(eig) / lam * (1 + lam')``."""
PSD_TOL = 1e-8
"""A kernel matrix with an eigenvalue below ``-PSD_TOL`` times the largest is refused (not a
Mercer kernel on these points); smaller negative values are rounding and are set to 0."""
_SYM_BLOCK_ENTRIES = 1 << 20  # entries per row block of K(X, X) when it is built and symmetrised
_BAND_TOL = 1e-9  # band decisions on counts: |k - u b_c| < u eps - _BAND_TOL max(1, u)
_NO_MOVE = -2  # _mutate: no valid mutation of this coordinate
_ACCEPT_RTOL = 1e-12  # a move must lower F by more than this times (1 + lam') to count


# ----------------------------------------------------------------------------------------------
# the balance band


@dataclass(frozen=True)
class Band:
    """The balance constraint :math:`|\\frac1u \\sum_{i \\in U} \\max(0, y_i) - b_c| <
    \\varepsilon` of (5), (7), (8), (10), as the integer range of the count k of +1 labels.

    The inequality is strict as in the paper and decided with a tolerance that keeps decimal
    boundaries out (u = 10, b_c = 0.5, ε = 0.1: k = 4 has :math:`|0.4 - 0.5| = 0.1`, not
    < 0.1, although the floating-point difference is 0.0999...).

    Attributes
    ----------
    u : int
        Number of unlabelled points.
    b_c, eps : float
    k_lo, k_hi : int
        Every admissible count k satisfies ``k_lo <= k <= k_hi`` and every such k is admissible.
    """

    u: int
    b_c: float
    eps: float
    k_lo: int
    k_hi: int

    @classmethod
    def of(cls, u: int, b_c: float, eps: float) -> Band:
        """The band for ``u`` unlabelled points; ``ValueError`` when no count is admissible."""
        k = np.arange(u + 1)
        inside = np.abs(k - u * b_c) < u * eps - _BAND_TOL * max(1, u)
        if not inside.any():
            raise ValueError(
                f"the balance band |k/u - b_c| < eps admits no count k of +1 labels for u={u}, "
                f"b_c={b_c:g}, eps={eps:g} (k/u moves in steps of 1/u = {1 / u:.3g}); widen eps")
        return cls(int(u), float(b_c), float(eps), int(k[inside].min()), int(k[inside].max()))

    def contains(self, count: float) -> bool:
        return self.k_lo - _BAND_TOL <= count <= self.k_hi + _BAND_TOL

    def to_dict(self) -> dict:
        return {"u": self.u, "b_c": self.b_c, "eps": self.eps, "k_lo": self.k_lo, "k_hi": self.k_hi}


# ----------------------------------------------------------------------------------------------
# the fitness (11)-(13) and its Nyström variant (14)


class RLSCFitness:
    r"""The closed-form fitness :math:`F(y) = \min_c J(c, y) = \|Dy\|^2 - s'\Omega s`,
    :math:`s = V'Dy` (eq. 13 / 16), for a fixed kernel matrix (or its Nyström approximation).

    Parameters
    ----------
    V : ndarray (n, r)
        Orthonormal eigenvectors of :math:`\bar K = DKD` with positive eigenvalues ``eig``.
    eig : ndarray (r,)
        The eigenvalues :math:`\Lambda` (descending).
    d : ndarray (n,)
        Diagonal of D.
    lam : float
        :math:`\lambda > 0`.

    Use :meth:`from_kernel` (full K, Theorem 1) or :meth:`from_factor` (``K = L L'``, e.g. the
    Nyström factor, Theorem 2).
    """

    def __init__(self, V, eig, d, lam: float):
        self.V = np.ascontiguousarray(V, dtype=float)
        self.eig = np.asarray(eig, dtype=float)
        self.d = np.asarray(d, dtype=float)
        self.lam = float(lam)
        self.omega = self.eig / (self.eig + self.lam)
        self.const = float(self.d @ self.d)

    @property
    def n(self) -> int:
        return self.V.shape[0]

    @property
    def r(self) -> int:
        return self.V.shape[1]

    @classmethod
    def from_kernel(cls, K, d, lam: float, rank_tol: float = RANK_TOL, *,
                    overwrite: bool = False) -> RLSCFitness:
        """Eigendecomposition of :math:`DKD` (O(n³), Theorem 1).

        ``K`` must be symmetric: only its lower triangle is read. ``overwrite=True`` scales a
        float64 ``K`` into :math:`\\bar K = DKD` in place (its values are lost) instead of
        copying it: the n x n arrays alive at once are then K and the eigenvectors.
        """
        d = np.asarray(d, dtype=float)
        Kbar = np.asarray(K, dtype=float) if overwrite else np.array(K, dtype=float)
        if not Kbar.flags.writeable:
            Kbar = Kbar.copy()
        Kbar *= d[:, None]
        Kbar *= d[None, :]
        eig, V = np.linalg.eigh(Kbar, UPLO="L")
        del Kbar  # (a caller's K with overwrite=True stays alive in the caller)
        top = max(float(np.abs(eig).max(initial=0.0)), np.finfo(float).tiny)
        if eig.min(initial=0.0) < -PSD_TOL * top:
            raise ValueError(
                f"the kernel matrix is not positive semidefinite on these points (eigenvalue "
                f"{eig.min():.3g} of DKD against a largest {top:.3g}): S2RLSC needs a Mercer kernel")
        kept = int((eig > rank_tol * top).sum())  # the largest (eigh sorts ascending)
        V = np.ascontiguousarray(V[:, ::-1][:, :kept])  # descending; one copy, C order
        return cls(V, eig[::-1][:kept].copy(), d, lam)

    @classmethod
    def from_factor(cls, L, d, lam: float, rank_tol: float = RANK_TOL) -> RLSCFitness:
        """For ``K = L L'`` (L n x r): the thin SVD of ``DL`` gives the eigenpairs of
        :math:`\\bar K` in O(n r²) (Appendix 1 with ``L = K_R' B``)."""
        d = np.asarray(d, dtype=float)
        U, sv, _ = np.linalg.svd(d[:, None] * np.asarray(L, dtype=float), full_matrices=False)
        eig = sv * sv
        keep = eig > rank_tol * max(float(eig.max(initial=0.0)), np.finfo(float).tiny)
        return cls(U[:, keep], eig[keep], d, lam)

    def with_lam(self, lam: float) -> RLSCFitness:
        """The same kernel and D with another :math:`\\lambda` (no new decomposition)."""
        return type(self)(self.V, self.eig, self.d, lam)

    def s(self, y) -> np.ndarray:
        """:math:`s = V'Dy`, the auxiliary vector the flips update (eq. 13)."""
        return self.V.T @ (self.d * np.asarray(y, dtype=float))

    def __call__(self, y) -> float:
        """F(y), eq. (13) / (16)."""
        s = self.s(y)
        return float(self.const - self.omega @ (s * s))

    def coefficients(self, y) -> np.ndarray:
        r""":math:`c^* = DGDy` (eq. 12), computed as :math:`\frac1\lambda D(Dy - V\Omega s)`."""
        ybar = self.d * np.asarray(y, dtype=float)
        s = self.V.T @ ybar
        return self.d * (ybar - self.V @ (self.omega * s)) / self.lam

    def decision(self, y) -> np.ndarray:
        r"""The training decision values :math:`Kc^* = D^{-1} V \Omega s` (the kernel as used:
        :math:`\tilde K` under Nyström)."""
        return (self.V @ (self.omega * self.s(y))) / self.d

    def matrix(self) -> np.ndarray:
        r""":math:`M = D(I - V\Omega V')D = \lambda D G D` with :math:`F(y) = y'My` (n x n)."""
        VW = self.V * self.omega
        M = -(VW @ self.V.T)
        M[np.diag_indices_from(M)] += 1.0
        M *= self.d[:, None]
        M *= self.d[None, :]
        return 0.5 * (M + M.T)

    def factor(self) -> np.ndarray:
        """``L`` (n x r) with ``K = L L'`` for the kept eigenpairs: :math:`D^{-1} V \\Lambda^{1/2}`."""
        return (self.V * np.sqrt(self.eig)) / self.d[:, None]


class NaiveFitness(RLSCFitness):
    r"""The direct way of section 3.1.1 (the baseline of Fig. 8): :math:`G = (DKD + \lambda
    I)^{-1}` by one O(n³) inverse, then :math:`F(y) = \lambda y'DGDy = y'My` in O(n²) per
    evaluation, with no eigendecomposition. :func:`local_search` evaluates every candidate as
    ``y'My`` with it (``naive`` is implied)."""

    def __init__(self, K, d, lam: float):
        d = np.asarray(d, dtype=float)
        n = d.size
        G = np.linalg.inv(d[:, None] * np.asarray(K, dtype=float) * d[None, :] + lam * np.eye(n))
        self._K = np.asarray(K, dtype=float)
        self._M = lam * d[:, None] * (0.5 * (G + G.T)) * d[None, :]
        super().__init__(np.zeros((n, 0)), np.zeros(0), d, lam)

    def with_lam(self, lam: float) -> NaiveFitness:
        return type(self)(self._K, self.d, lam)

    def __call__(self, y) -> float:
        y = np.asarray(y, dtype=float)
        return float(y @ self._M @ y)

    def coefficients(self, y) -> np.ndarray:
        return self._M @ np.asarray(y, dtype=float) / self.lam  # D G D y

    def decision(self, y) -> np.ndarray:
        return self._K @ self.coefficients(y)

    def matrix(self) -> np.ndarray:
        return self._M

    def factor(self) -> np.ndarray:
        raise NotImplementedError("NaiveFitness keeps no factor of K; use RLSCFitness")


# ----------------------------------------------------------------------------------------------
# kernels



def _symmetric_kernel(kfun, A) -> np.ndarray:
    """K(A, A), computed and checked (shape, real, finite: :func:`aidopt.numerics.kernels.kernel_matrix`) in
    row blocks, then checked symmetric (1e-10 relative) and symmetrised in place, block by block:
    the only n x n array is K itself (scratch: a few blocks of ``_SYM_BLOCK_ENTRIES``)."""
    from aidopt.numerics.kernels import kernel_matrix

    n = A.shape[0]
    step = max(1, _SYM_BLOCK_ENTRIES // max(1, n))
    K = np.empty((n, n))
    for a in range(0, n, step):
        try:
            K[a:a + step] = kernel_matrix(kfun, A[a:a + step], A)
        except ValueError as exc:
            if step >= n:
                raise
            raise ValueError(f"{exc} (K(X, X) computed in row blocks: this is the block of rows "
                             f"{a}..{min(n, a + step) - 1}, its indices count from row {a})") from exc
    scale = max(float(K.max(initial=0.0)), -float(K.min(initial=0.0)), np.finfo(float).tiny)
    for a in range(0, n, step):
        rows = slice(a, min(n, a + step))
        upper = K[rows, a:]  # the block row from the diagonal on, and its mirror block column
        mirror = K[a:, rows].T
        if np.abs(upper - mirror).max(initial=0.0) > 1e-10 * scale:
            raise ValueError("the kernel matrix K(X, X) is not symmetric: S2RLSC needs a Mercer "
                             "kernel")
        upper += mirror
        upper *= 0.5
        K[a:, rows] = upper.T
    return K


def nystrom_fitness(kfun, X, d, lam: float, landmarks, rank_tol: float = RANK_TOL):
    r"""The Nyström fitness (eq. 14, Appendix 1) on the landmarks R.

    :math:`K_{R,R} = Q \Theta Q'` (eigenvalues below ``rank_tol`` of the largest dropped: the
    pseudo-inverse, so duplicate or dependent landmarks are harmless), :math:`B = Q
    \Theta^{-1/2}` (:math:`BB' = K_{R,R}^+`), :math:`L = K_R' B` (n x r) with
    :math:`\tilde K = LL'`.

    Returns
    -------
    fitness : RLSCFitness
    B : ndarray (r, r')
        Prediction: :math:`f(x) = k_R(x)' B L' c`.
    L : ndarray (n, r')
    """
    from aidopt.numerics.kernels import kernel_matrix

    landmarks = np.asarray(landmarks, dtype=np.int64)
    K_nR = kernel_matrix(kfun, X, X[landmarks])
    K_RR = K_nR[landmarks]
    if np.abs(K_RR - K_RR.T).max(initial=0.0) > 1e-10 * max(float(np.abs(K_RR).max()), 1e-300):
        raise ValueError("the kernel matrix on the landmarks is not symmetric: S2RLSC needs a "
                         "Mercer kernel")
    theta, Q = np.linalg.eigh(0.5 * (K_RR + K_RR.T))
    top = max(float(np.abs(theta).max(initial=0.0)), np.finfo(float).tiny)
    if theta.min() < -PSD_TOL * top:
        raise ValueError(f"the kernel matrix on the landmarks is not positive semidefinite "
                         f"(eigenvalue {theta.min():.3g} against {top:.3g})")
    keep = theta > rank_tol * top
    B = Q[:, keep] / np.sqrt(theta[keep])
    L = K_nR @ B
    return RLSCFitness.from_factor(L, d, lam, rank_tol), B, L


# ----------------------------------------------------------------------------------------------
# numba kernels of the searches


@numba.njit(cache=True)
def _seed(seed):  # pragma: no cover - compiled
    np.random.seed(seed)  # noqa: NPY002 - numba has its own generator, seeded this way


@numba.njit(cache=True)
def _mutate(y, free, cw, j, count, nplus, k_lo, k_hi):  # pragma: no cover - compiled
    """The valid mutation that flips free position ``j``: ``(q, count', nplus')``.

    ``q = -1``: flip j alone. When that leaves the band, flip j and a uniformly random free
    position q of the opposite label (a swap: the count of +1 labels changes by the difference of
    the two weights, 0 for points). ``q = _NO_MOVE``: no valid mutation (no such partner, or a
    weighted swap that still leaves the band).

    The partner is drawn by rejection: u / a expected draws, a the free positions labelled
    ``-y_j``. A swap is needed only at a band edge (unit weights): at the upper edge a = k_hi
    :math:`\\approx u (b_c + \\varepsilon)`, at the lower edge a = u - k_lo
    :math:`\\approx u (1 - b_c + \\varepsilon)`, so about :math:`1 / (b_c + \\varepsilon)` draws of a
    few ns each against the O(r) evaluation of the move. Per-label index lists (O(1) per draw,
    an O(u) copy per individual) would pay only for bands with :math:`b_c + \\varepsilon` below
    about 1 / r.
    """
    u = free.shape[0]
    yj = y[free[j]]
    c1 = count - yj * cw[j]
    n1 = nplus - 1 if yj > 0 else nplus + 1
    if c1 >= k_lo - 1e-9 and c1 <= k_hi + 1e-9:
        return -1, c1, n1
    available = nplus if yj < 0 else u - nplus  # free positions labelled -yj
    if available <= 0:
        return _NO_MOVE, count, nplus
    while True:
        q = np.random.randint(0, u)  # noqa: NPY002 - numba
        if y[free[q]] == -yj:
            break
    c2 = c1 + yj * cw[q]  # y_q = -yj flips to yj
    n2 = n1 + 1 if yj > 0 else n1 - 1
    if c2 >= k_lo - 1e-9 and c2 <= k_hi + 1e-9:
        return q, c2, n2
    return _NO_MOVE, count, nplus


@numba.njit(cache=True)
def _delta(V, omega, d, y, s, i, p, naive, M, F, tmp):  # pragma: no cover - compiled
    """F(y with i (and p >= 0) flipped) - F(y).

    Closed form (Theorem 1 / 2): with :math:`t = -2 y_i d_i V_i (- 2 y_p d_p V_p)`,
    :math:`F' - F = -\\sum_k \\omega_k t_k (2 s_k + t_k)`, O(r). ``naive``: the paper's
    baseline of Fig. 8, :math:`F' = y'My` recomputed from the stored n x n matrix, O(n²).
    """
    if naive:
        n = y.shape[0]
        for k in range(n):
            tmp[k] = y[k]
        tmp[i] = -tmp[i]
        if p >= 0:
            tmp[p] = -tmp[p]
        total = 0.0
        for a in range(n):
            row = 0.0
            for b in range(n):
                row += M[a, b] * tmp[b]
            total += tmp[a] * row
        return total - F
    r = V.shape[1]
    ai = -2.0 * y[i] * d[i]
    ap = -2.0 * y[p] * d[p] if p >= 0 else 0.0
    total = 0.0
    if p >= 0:
        for k in range(r):
            t = ai * V[i, k] + ap * V[p, k]
            total += omega[k] * t * (2.0 * s[k] + t)
    else:
        for k in range(r):
            t = ai * V[i, k]
            total += omega[k] * t * (2.0 * s[k] + t)
    return -total


@numba.njit(cache=True)
def _apply(V, d, y, s, i, p):  # pragma: no cover - compiled
    """Flip i (and p >= 0) and update :math:`s = V'Dy` in O(r)."""
    r = V.shape[1]
    ai = -2.0 * y[i] * d[i]
    for k in range(r):
        s[k] += ai * V[i, k]
    y[i] = -y[i]
    if p >= 0:
        ap = -2.0 * y[p] * d[p]
        for k in range(r):
            s[k] += ap * V[p, k]
        y[p] = -y[p]


@numba.njit(cache=True)
def _one_plus_one(V, omega, d, free, cw, k_lo, k_hi, y, s, state, patience, max_steps, budget,
                  thr, naive, M, tmp):  # pragma: no cover - compiled
    """The (1+1)-EA with round-robin coordinates, at most ``budget`` steps per call.

    ``state = [F, count, nplus, position, steps since the last improvement, steps, evaluations]``
    is read and written back, so a run continues across calls (the caller checks the clock in
    between). A step mutates the next free coordinate (:func:`_mutate`) and keeps the result when
    F decreases by more than ``thr``. Returns True when the run is over (``patience``
    non-improving steps in a row, or ``max_steps``).
    """
    F = state[0]
    count = state[1]
    nplus = np.int64(state[2])
    pos = np.int64(state[3])
    since = np.int64(state[4])
    steps = np.int64(state[5])
    evals = np.int64(state[6])
    u = free.shape[0]
    done = 0
    while since < patience and steps < max_steps and done < budget:
        j = pos
        pos += 1
        if pos == u:
            pos = 0
        steps += 1
        done += 1
        q, c2, n2 = _mutate(y, free, cw, j, count, nplus, k_lo, k_hi)
        if q == _NO_MOVE:
            since += 1
            continue
        i = free[j]
        p = free[q] if q >= 0 else -1
        delta = _delta(V, omega, d, y, s, i, p, naive, M, F, tmp)
        evals += 1
        if delta < -thr:
            _apply(V, d, y, s, i, p)
            F += delta
            count = c2
            nplus = n2
            since = 0
        else:
            since += 1
    state[0] = F
    state[1] = count
    state[2] = nplus
    state[3] = pos
    state[4] = since
    state[5] = steps
    state[6] = evals
    return since >= patience or steps >= max_steps


@numba.njit(cache=True)
def _mu_plus_nu(V, omega, d, free, cw, k_lo, k_hi, Y, S, Fp, CNT, NPL, state, nu, patience,
                max_gens, budget, thr, naive, M, tmp):  # pragma: no cover - compiled
    """The (μ+ν)-EA of Algorithm 2 on the population ``Y`` (μ x n) with ``S`` (μ x r), ``Fp``,
    ``CNT`` (counts), ``NPL`` (number of free +1 labels), at most ``budget`` generations per call.

    A generation makes ν offspring, each from a uniformly random parent by the mutation of a
    uniformly random free coordinate (:func:`_mutate`), evaluated in O(r) without copying the
    parent (steps 5-9), and keeps the μ best of parents and offspring (steps 10-11): a stable
    sort with the parents first, so an offspring must be strictly better to displace a parent,
    and an offspring whose F is within ``thr`` of one already kept is a duplicate and skipped.
    Only offspring that enter the population are built (O(n + r) each). ``state = [generations
    without change, generations, evaluations]``. Returns True when the run is over
    (``patience`` generations in a row without change, or ``max_gens``).
    """
    mu = Y.shape[0]
    u = free.shape[0]
    since = np.int64(state[0])
    gens = np.int64(state[1])
    evals = np.int64(state[2])
    off_par = np.empty(nu, np.int64)
    off_i = np.empty(nu, np.int64)
    off_p = np.empty(nu, np.int64)
    off_F = np.empty(nu)
    off_c = np.empty(nu)
    off_n = np.empty(nu, np.int64)
    allF = np.empty(mu + nu)
    chosen = np.empty(mu, np.int64)
    Y2 = np.empty_like(Y)
    S2 = np.empty_like(S)
    F2 = np.empty(mu)
    C2 = np.empty(mu)
    N2 = np.empty(mu, np.int64)
    done = 0
    while since < patience and gens < max_gens and done < budget:
        m = 0
        for _ in range(nu):
            par = np.random.randint(0, mu)  # noqa: NPY002 - numba
            j = np.random.randint(0, u)  # noqa: NPY002 - numba
            q, c2, n2 = _mutate(Y[par], free, cw, j, CNT[par], NPL[par], k_lo, k_hi)
            if q == _NO_MOVE:
                continue
            i = free[j]
            p = free[q] if q >= 0 else -1
            off_F[m] = Fp[par] + _delta(V, omega, d, Y[par], S[par], i, p, naive, M, Fp[par], tmp)
            off_par[m] = par
            off_i[m] = i
            off_p[m] = p
            off_c[m] = c2
            off_n[m] = n2
            m += 1
            evals += 1
        gens += 1
        done += 1
        for a in range(mu):
            allF[a] = Fp[a]
        for o in range(m):
            allF[mu + o] = off_F[o]
        order = np.argsort(allF[: mu + m], kind="mergesort")
        kept = 0
        changed = False
        last = np.inf
        for idx in order:
            if kept == mu:
                break
            if idx >= mu:
                if np.abs(allF[idx] - last) <= thr:
                    continue
                changed = True
            chosen[kept] = idx
            kept += 1
            last = allF[idx]
        if not changed:
            since += 1
            continue
        since = 0
        for a in range(mu):
            idx = chosen[a]
            src = idx if idx < mu else off_par[idx - mu]
            Y2[a] = Y[src]
            S2[a] = S[src]
            if idx < mu:
                F2[a] = Fp[idx]
                C2[a] = CNT[idx]
                N2[a] = NPL[idx]
            else:
                o = idx - mu
                _apply(V, d, Y2[a], S2[a], off_i[o], off_p[o])
                F2[a] = off_F[o]
                C2[a] = off_c[o]
                N2[a] = off_n[o]
        Y[:] = Y2
        S[:] = S2
        Fp[:] = F2
        CNT[:] = C2
        NPL[:] = N2
    state[0] = since
    state[1] = gens
    state[2] = evals
    return since >= patience or gens >= max_gens


# ----------------------------------------------------------------------------------------------
# the search driver


class _NoStart(ValueError):
    """No random initial labelling in the band was found (weighted counts only)."""


@dataclass
class SearchOutcome:
    """The best labelling of a restarted local search.

    Attributes
    ----------
    y : ndarray (n,)
        Best labels found (fixed coordinates unchanged).
    fitness : float
        F(y) recomputed in closed form from ``y`` (not the accumulated updates).
    restart_fitness : list of float
        F of the best labelling of each restart that ran.
    evaluations : int
        Fitness evaluations (O(r) each; O(n²) with ``naive``).
    seconds : float
    stop : str
        ``"patience"`` (every restart ended by its rule), ``"max_iter"``, ``"time_limit"`` or
        ``"interrupted"``.
    """

    y: np.ndarray
    fitness: float
    restart_fitness: list
    evaluations: int
    seconds: float
    stop: str


def _initial(rng, y, free, cw, b_c: float, band: Band, attempts: int = 20) -> np.ndarray | None:
    """Random labels inside the band (footnote 3): :math:`y_i = +1` with probability b_c, then
    random coordinates of the excess label flipped, never past the band, until the count is in
    it. With unit weights this projects an outside count onto the nearest edge of the band (not
    a draw conditioned on the band: the edge counts are more likely than under conditioning).
    With count weights (clusters) a flip that would jump over the band is not taken; a draw that
    gets stuck is repeated, ``None`` after ``attempts`` draws."""
    lo, hi = band.k_lo - _BAND_TOL, band.k_hi + _BAND_TOL
    for _ in range(attempts):
        z = np.where(rng.random(free.size) < b_c, 1.0, -1.0)
        count = float(cw[z > 0].sum())
        while not lo <= count <= hi:
            sign = 1.0 if count > hi else -1.0  # flip a +1 (too many) or a -1 (too few)
            room = count - band.k_lo if sign > 0 else band.k_hi - count
            movable = np.flatnonzero((z == sign) & (cw <= room + _BAND_TOL))
            if movable.size == 0:
                break
            j = rng.choice(movable)
            z[j] = -sign
            count -= sign * cw[j]
        else:
            out = np.array(y, dtype=float)
            out[free] = z
            return out
    return None


def _count(y, free, cw) -> tuple[float, int]:
    plus = y[free] > 0
    return float(cw[plus].sum()), int(plus.sum())


def local_search(fitness: RLSCFitness, y, free, band: Band, *, search: str = "mu+nu", mu: int = 5,
                 nu: int = 25, restarts: int = 10, patience: int | None = None,
                 max_iter: int | None = None, seed=0, time_limit: float | None = None,
                 starts=(), weights=None, naive: bool | None = None) -> SearchOutcome:
    """Restarted (μ+ν)-EA (Algorithm 2) or (1+1)-EA on the fitness; the best labelling wins.

    Parameters
    ----------
    fitness : RLSCFitness
    y : ndarray (n,)
        Labels of the fixed (labelled) coordinates; the entries at ``free`` are ignored.
    free : ndarray of int (u,)
        The coordinates the search may flip.
    band : Band
        Admissible (weighted) counts of +1 labels among ``free``.
    search : {"mu+nu", "1+1"}
    mu, nu : int
        Population and offspring sizes of the (μ+ν)-EA (the paper's 5 and 25).
    restarts : int
        Independent runs; the best is returned (the paper takes the best of 10 or 50).
    patience : int, optional
        A run stops after this many generations (μ+ν) or steps (1+1) without change (default n,
        the paper's rule).
    max_iter : int, optional
        Cap on generations / steps per run.
    seed : int
    time_limit : float, optional
        Seconds for all restarts; the best labelling so far is returned when it runs out.
    starts : sequence of ndarray (n,)
        Initial labellings (in the band): restart k starts from ``starts[k]`` (the first member of
        its population for the (μ+ν)-EA); the other runs start at random (:func:`_initial`).
    weights : ndarray (u,), optional
        Count weight of each free coordinate (cluster sizes for an aggregated problem; 1).
    naive : bool, optional
        Evaluate every candidate as ``y'My`` in O(n²) (the baseline of the paper's Fig. 8);
        default: only for a :class:`NaiveFitness`.
    """
    if search not in SEARCHES:
        raise ValueError(f"search must be one of {SEARCHES}, got {search!r}")
    t0 = time.perf_counter()
    free = np.ascontiguousarray(free, dtype=np.int64)
    y = np.array(y, dtype=float)
    cw = np.ones(free.size) if weights is None else np.ascontiguousarray(weights, dtype=float)
    if naive is None:
        naive = isinstance(fitness, NaiveFitness)
    elif not naive and isinstance(fitness, NaiveFitness):
        raise ValueError("a NaiveFitness has no eigenpairs for the O(r) update: use naive=True")
    n, r = fitness.n, fitness.r
    V, omega, d = fitness.V, np.ascontiguousarray(fitness.omega), fitness.d
    patience = n if patience is None else int(patience)
    limit = np.iinfo(np.int64).max if max_iter is None else int(max_iter)
    M = fitness.matrix() if naive else np.zeros((1, 1))
    tmp = np.empty(n if naive else 1)
    thr = _ACCEPT_RTOL * max(fitness.const, 1.0)
    cost = n * n if naive else r + 8
    rng = np.random.default_rng(seed)
    best_y, best_F, per_restart, evals, stop = None, math.inf, [], 0, "patience"
    for start in starts:
        start = np.asarray(start, dtype=float)
        fixed = np.setdiff1d(np.arange(n), free)
        if (start.shape != (n,) or not np.isin(start, (-1.0, 1.0)).all()
                or not np.array_equal(start[fixed], y[fixed])
                or not band.contains(_count(start, free, cw)[0])):
            raise ValueError("a start must be a -1 / +1 labelling of all n points that keeps the "
                             "fixed labels and meets the band")

    def fresh():
        out = _initial(rng, y, free, cw, band.b_c, band)
        if out is None:
            raise _NoStart("no random labelling found that meets the band with these count "
                           "weights")
        return out

    try:
        for k in range(restarts):
            if time_limit is not None and time.perf_counter() - t0 >= time_limit and best_y is not None:
                stop = "time_limit"
                break
            _seed(int(rng.integers(2**31 - 1)))
            first = np.array(starts[k], dtype=float) if k < len(starts) else None
            if search == "1+1":
                yk = first if first is not None else fresh()
                sk = fitness.s(yk)
                count, nplus = _count(yk, free, cw)
                state = np.array([fitness(yk), count, nplus, 0, 0, 0, 0], dtype=float)
                budget = max(16, int(2e7 // cost))
                while True:
                    finished = _one_plus_one(V, omega, d, free, cw, float(band.k_lo),
                                             float(band.k_hi), yk, sk, state, patience, limit,
                                             budget, thr, naive, M, tmp)
                    if finished:
                        if state[5] >= limit and state[4] < patience:
                            stop = "max_iter"
                        break
                    if time_limit is not None and time.perf_counter() - t0 >= time_limit:
                        stop = "time_limit"
                        break
                evals += int(state[6])
                winner = yk
            else:
                Y = np.empty((mu, n))
                for a in range(mu):
                    Y[a] = first if (a == 0 and first is not None) else fresh()
                S = np.ascontiguousarray((Y * d) @ V)
                Fp = np.array([fitness(row) for row in Y])
                counts = [_count(Y[a], free, cw) for a in range(mu)]
                CNT = np.array([c for c, _ in counts], dtype=float)
                NPL = np.array([p for _, p in counts], dtype=np.int64)
                state = np.zeros(3)
                budget = max(1, int(2e7 // (cost * nu)))
                while True:
                    finished = _mu_plus_nu(V, omega, d, free, cw, float(band.k_lo),
                                           float(band.k_hi), Y, S, Fp, CNT, NPL, state, nu,
                                           patience, limit, budget, thr, naive, M, tmp)
                    if finished:
                        if state[1] >= limit and state[0] < patience:
                            stop = "max_iter"
                        break
                    if time_limit is not None and time.perf_counter() - t0 >= time_limit:
                        stop = "time_limit"
                        break
                evals += int(state[2]) + mu
                winner = Y[int(np.argmin(Fp))].copy()
            Fk = fitness(winner)  # exact, not the accumulated updates
            per_restart.append(Fk)
            if Fk < best_F:
                best_y, best_F = winner.copy(), Fk
            if stop == "time_limit":
                break
    except KeyboardInterrupt:
        if best_y is None:
            raise
        stop = "interrupted"
    return SearchOutcome(best_y, best_F, per_restart, evals, time.perf_counter() - t0, stop)


# ----------------------------------------------------------------------------------------------
# AID-style aggregation: a warm start


def aggregated_start(fitness: RLSCFitness, y, free, band: Band, n_clusters: int, *,
                     unlabelled_weight: float, lam: float, search: str = "mu+nu", mu: int = 5,
                     nu: int = 25, restarts: int = 10, seed=0, time_limit=None) -> dict:
    r"""Labels constant on clusters of the unlabelled points, from a search on the aggregated
    problem; a warm start for the search on all points.

    The unlabelled points are clustered by k-means in the kernel's feature space (the rows of a
    factor L with :math:`K = LL'`, :meth:`RLSCFitness.factor`). Every cluster :math:`C_q` is
    replaced by its representative, the mean :math:`\bar\phi_q` of its points' features, with
    weight :math:`|C_q|`: the aggregated problem is J of (10) on the l labelled points and the k
    representatives, with :math:`D_{qq}^2 = |C_q| \lambda'/u` (``unlabelled_weight`` =
    :math:`\lambda'/u`, or 1/u for clustering) — a weighted RLSC fitness, O(l + k) per flip,
    searched under the band on the weighted count :math:`\sum_q |C_q| \max(0, z_q)`. Its best
    labels are lifted (every point takes its cluster's label), which keeps the count, so the
    lifted labelling is in the band.

    Returns
    -------
    dict
        ``y`` (the lifted labels, or None when no aggregated labelling meets the band),
        ``clusters`` (k), ``fitness_aggregated`` (F on the representatives) and ``fitness``
        (F of the lifted labels on all points), ``seconds``, ``stop`` (the aggregated search's
        stop reason, :class:`SearchOutcome`; ``"interrupted"`` after Ctrl-C: the caller should
        not go on searching).
    """
    from scipy.cluster.vq import kmeans2

    t0 = time.perf_counter()
    free = np.asarray(free, dtype=np.int64)
    fixed = np.setdiff1d(np.arange(fitness.n), free)
    L = fitness.factor()
    rng = np.random.default_rng(seed)
    k = int(min(max(1, n_clusters), free.size))
    _, labels = kmeans2(L[free], k, minit="++", seed=rng)
    used, labels = np.unique(labels, return_inverse=True)
    sizes = np.bincount(labels).astype(float)
    k = used.size
    reps = np.zeros((k, L.shape[1]))
    np.add.at(reps, labels, L[free])
    reps /= sizes[:, None]
    L_agg = np.vstack([L[fixed], reps])
    d_agg = np.concatenate([fitness.d[fixed], np.sqrt(sizes * unlabelled_weight)])
    agg = RLSCFitness.from_factor(L_agg, d_agg, lam)
    y_agg = np.concatenate([np.asarray(y, dtype=float)[fixed], np.ones(k)])
    free_agg = np.arange(fixed.size, fixed.size + k)
    out = {"clusters": int(k), "y": None, "fitness_aggregated": math.nan, "fitness": math.nan,
           "stop": None}
    try:
        res = local_search(agg, y_agg, free_agg, band, search=search, mu=mu, nu=nu,
                           restarts=restarts, seed=int(rng.integers(2**31 - 1)),
                           time_limit=time_limit, weights=sizes)
    except _NoStart:  # no labelling of the clusters found in the band: no warm start
        out["seconds"] = time.perf_counter() - t0
        return out
    lifted = np.array(y, dtype=float)
    lifted[free] = res.y[free_agg][labels]
    out.update(y=lifted, fitness_aggregated=res.fitness, fitness=fitness(lifted),
               seconds=time.perf_counter() - t0, stop=res.stop)
    return out
