r"""The GSVM linear program (1.12) as a plug-in of the run framework, solved directly (every row
its own cluster), with a certificate from the solved model's duals.

The data is the kernel matrix :math:`K = K(A, A')` (rows as ``data.X``) and the labels ``data.y``.
Aggregating rows of (1.12) would also aggregate the columns of K (the variables w), so AID is not
offered: ``aidopt.solve_gsvm`` always solves it directly (``solve_direct``).

Certificate: with the model's duals :math:`u \ge 0` (margin rows) and :math:`p, q \ge 0` (the rows
:math:`\pm K_i w \le s_i`), the LP dual of :mod:`aidopt.models.gsvm` asks
:math:`K'(Du - p + q) = 0`, :math:`d'u = 0`, :math:`u \le \nu`, :math:`p + q \le 1`; its objective
:math:`e'u` is then a lower bound. A solver meets the equalities only to rounding, and on an
ill-conditioned K (condition 1e11-1e13) a residual of 1e-13 times an optimal :math:`\|w\|` of
1e7 moved e'u above the optimum. So the bound is made rigorous (:func:`rigorous_bound`): the dual
point is moved into its box exactly, and the residuals of the equalities are charged at bounds on
the optimal point that follow from the upper bound E (the evaluated objective of the answer).
The gap :math:`(E - \text{bound}) / \max(1, |E|)` is checked against ``tol``; when the charges
are too large the run is not certified (its bound stays valid).

Factored form (``form="svd"``, and ``"auto"`` when K has at most :data:`SVD_MAX` rows and is
numerically singular): a kernel of low rank (the checkerboard's degree-6 polynomial in the
plane: rank 28) leaves w free along K's null space, so the LP on K has an unbounded optimal
face and is slow and badly conditioned for the solvers. With the SVD of K's distinct rows,
:math:`\tilde K_\tau = U_r \Sigma_r V_r'` (the singular values below NumPy's rank tolerance
``tau`` set to zero: :func:`factor_kernel`), every :math:`f = \tilde K_\tau w` is
:math:`U_r t` with :math:`t = \Sigma_r V_r' w` free in :math:`\mathbb{R}^r`, so (1.12) for
:math:`K_\tau` is the same LP with the m x r matrix :math:`U_r` (orthonormal columns; its rows
repeated as K's are) in place of K and t in place of w — the same rows, hence the same duals
and the same certificate — and w is recovered with r nonzeros
(:meth:`KernelFactor.coefficients`) or as the least-norm :math:`V_r \Sigma_r^{-1} t`, whichever
has the lower objective on K as stored (the sparse one within :data:`SPARSE_SLACK`). The answer
is evaluated, and the gap measured, on K as stored.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np
from aidopt.decomposition.protocol import AIDProblem, Lifted, Split
from aidopt.models import gsvm
from aidopt.models._data import deadline_in_force

from aidopt.results import Certificate
from aidopt.solvers import ProblemClass, SolverError, TimeLimitReached

__all__ = ["FORMS", "GSVMKuProblem", "KernelFactor", "SVD_MAX", "factor_kernel", "rigorous_bound"]

#: the LP forms of (1.12): on K itself, on the SVD factor of K, or the factor when K is singular
FORMS = ("auto", "kernel", "svd")


class GSVMKuProblem(AIDProblem):
    """(1.12): ``min nu e'y + ||K D u||_1`` with ``D(K D u - e gamma) + y >= e``, ``y >= 0``.

    Parameters
    ----------
    nu : float
        Weight of the error :math:`e'y`.
    form : {"auto", "kernel", "svd"}
        The LP on K (``"kernel"``), on the factor :math:`U_r` of K's SVD (``"svd"``: the module
        docstring), or ``"auto"`` (default): the SVD when K has at most :data:`SVD_MAX` rows and
        fewer singular values above the rank tolerance than columns (w is then not
        determined by f = K w: repeated points, a low-rank kernel), else K.
    """

    name = "gsvm_lp_Ku"
    needs_duals = True
    problem_class = ProblemClass.LP

    def __init__(self, nu: float = 1.0, form: str = "auto"):
        if form not in FORMS:
            raise ValueError(f"form must be one of {FORMS}, got {form!r}")
        self.nu = float(nu)
        self.form = form
        self._factor: tuple[np.ndarray, KernelFactor | None] | None = None  # (K, its factor)

    def factor(self, K) -> KernelFactor | None:
        """The SVD factor of ``K`` (:func:`factor_kernel`, computed once per K), or ``None`` for
        ``form="kernel"`` and, with ``form="auto"``, when K has more than :data:`SVD_MAX` rows
        (the certificate then computes what it needs itself).

        Raises
        ------
        TimeLimitReached
            The build deadline in force passed before the factorisation ended
            (:func:`_by_deadline`).
        """
        if self._factor is None or self._factor[0] is not K:
            skip = self.form == "kernel" or (self.form == "auto" and K.shape[0] > SVD_MAX)
            self._factor = (K, None if skip else _by_deadline(factor_kernel, K))
        return self._factor[1]

    def default_r0(self, size: int, data) -> float:
        return 1.0

    def initial_partition(self, data, n_clusters, rng, solve):
        return self.trivial_partition(data)

    def aggregate(self, data, partition, previous=None):
        if partition.n_clusters != data.n:
            raise ValueError("(1.12) is solved directly: its rows are not aggregated")
        return data

    def lp_factor(self, K) -> KernelFactor | None:
        r"""The factor the LP is built on (``None``: the LP on K itself). ``"auto"`` uses it when
        w (one entry per column of K) is not determined by :math:`f = K_\tau w`."""
        factor = self.factor(K)
        if factor is not None and (self.form == "svd" or factor.rank < K.shape[1]):
            return factor
        return None

    def build(self, aggregated, form=None):
        factor = self.lp_factor(aggregated.X)
        matrix = aggregated.X if factor is None else factor.U[factor.group]
        return gsvm.create_instance(matrix, aggregated.y, self.nu)

    def lift(self, model, outcome, partition, aggregated, data) -> Lifted:
        w, gamma = gsvm.solution_from(model)
        factor = self.lp_factor(aggregated.X)
        if factor is not None:  # the model's "w" is t: both candidates have K_tau w = U_r t
            sparse, least = factor.coefficients(w), factor.Vt.T @ (w / factor.sigma[:factor.rank])
            E_sparse, E_least = (self._objective(data, v, gamma) for v in (sparse, least))
            # the sparse w unless its objective is worse by more than rounding (1e-8 relative)
            w = sparse if E_sparse <= E_least + SPARSE_SLACK * max(1.0, abs(E_least)) else least
        duals = outcome.duals
        if not duals:
            raise SolverError("(1.12)'s certificate needs the LP duals; the solver gave none")
        u = np.array([duals[model.margin[i]] for i in model.K], dtype=float)
        p = -np.array([duals[model.upper[i]] for i in model.K], dtype=float)
        q = -np.array([duals[model.lower[i]] for i in model.K], dtype=float)
        f = data.X @ w - gamma
        solution = {"w": w, "gamma": gamma, "u": data.y * w, "decision": f}
        return Lifted(solution, {"u": u, "p": p, "q": q})

    def evaluate(self, data, lifted: Lifted) -> float:
        return self._objective(data, lifted.solution["w"], lifted.solution["gamma"])

    def _objective(self, data, w, gamma) -> float:
        """(1.12)'s objective at ``(w, gamma)`` on K as stored."""
        f = data.X @ w
        hinge = np.maximum(1.0 - data.y * (f - gamma), 0.0)
        return self.nu * float(hinge.sum()) + float(np.abs(f).sum())

    def split(self, partition, data, lifted: Lifted) -> Split:
        return Split(None, 0)

    def lower_bound(self, outcome, partition, data, lifted=None):
        return None  # the certificate computes e'u from the duals and checks them

    def certify(self, data, best, *, bound, solve, tol, feasibility_tol=1e-6,
                history=()) -> Certificate:
        K, d, nu = data.X, data.y, self.nu
        u, p, q = _box_feasible(*(best.lifted.state[k] for k in ("u", "p", "q")), nu)
        z = d * u - p + q
        Kz = K.T @ z
        E = best.E_t
        scale_K = max(1.0, float(np.abs(K).max(initial=0.0)))
        residuals = {
            "stationarity |K'(Du - p + q)|_inf": float(np.abs(Kz).max(initial=0.0))
            / (scale_K * max(1.0, nu)),
            "balance |d'u|": abs(float(d @ u)) / max(1.0, nu),
        }
        dual = float(u.sum())
        sol = best.lifted.solution
        lower, upper, how = rigorous_bound(K, d, nu, u, z, E, sol["w"], sol["gamma"],
                                           factor=self.factor(K))
        rel = max(0.0, upper - lower) / max(1.0, abs(upper))
        return Certificate(
            method="solver_duals", certified=bool(np.isfinite(lower) and rel <= tol),
            primal_objective=E, dual_objective=lower, relative_gap=float(rel),
            residuals=residuals, tol=tol, feasibility_tol=feasibility_tol, checked=list(residuals),
            note=f"the LP dual of (1.12) at the solver's duals (e'u = {dual:.12g}) made exactly "
                 f"box-feasible; the bound is e'u less its residuals times bounds on the optimal "
                 f"point ({how})",
        )


def _box_feasible(u, p, q, nu):
    """The dual point moved into its box exactly: ``0 <= u <= nu``, ``p, q >= 0``,
    ``p + q <= 1`` (a solver's duals are inside only to its tolerance)."""
    u = np.clip(u, 0.0, nu)
    p, q = np.maximum(p, 0.0), np.maximum(q, 0.0)
    over = p + q > 1.0
    if over.any():
        t = (p + q)[over] * (1.0 + 4 * np.finfo(float).eps)
        p[over] /= t
        q[over] /= t
    return u, p, q


@dataclass(frozen=True, eq=False)
class KernelFactor:
    r"""The SVD of the distinct rows :math:`\tilde K` of a kernel matrix K, truncated at NumPy's
    rank tolerance: :math:`\tilde K_\tau = U \operatorname{diag}(\sigma_{1..r}) V'`.

    Attributes
    ----------
    group : ndarray of int, shape (rows of K,)
        Row i of K is row ``group[i]`` of :math:`\tilde K` (k distinct rows, n columns).
    U : ndarray, shape (k, r)
        The left singular vectors of the r singular values above ``tau``.
    sigma : ndarray, shape (min(k, n),)
        Every singular value, largest first.
    Vt : ndarray, shape (r, n)
        The right singular vectors of the r singular values above ``tau``.
    tau : float
        ``max(k, n) eps sigma_max`` (``numpy.linalg.matrix_rank``'s tolerance).
    """

    group: np.ndarray
    U: np.ndarray
    sigma: np.ndarray
    Vt: np.ndarray
    tau: float

    @property
    def rank(self) -> int:
        """r, the number of singular values above ``tau``."""
        return int(self.U.shape[1])

    @property
    def full_rank(self) -> bool:
        r"""Whether :math:`\tilde K` has full numerical rank."""
        return self.rank == self.sigma.size

    def coefficients(self, t) -> np.ndarray:
        r"""A w with at most r nonzeros and :math:`\tilde K_\tau w = U t`: on the r columns P
        that a QR factorisation of :math:`V'` with column pivoting picks first (the best
        conditioned r x r block it finds), :math:`\Sigma_r V'_P w_P = t`. The kernel expansion
        then needs r training points, as a vertex of the LP on K would (the least-norm
        :math:`V \Sigma_r^{-1} t` needs all of them). On a K with singular values just above
        ``tau`` the block can be ill-conditioned: :class:`GSVMKuProblem` keeps whichever of the
        two has the lower objective on K as stored (the sparse one within
        :data:`SPARSE_SLACK`)."""
        from scipy.linalg import qr, solve

        w = np.zeros(self.Vt.shape[1])
        if self.rank:
            _, pivots = qr(self.Vt, mode="r", pivoting=True)
            P = np.sort(pivots[:self.rank])
            w[P] = solve(self.Vt[:, P], np.asarray(t, dtype=float) / self.sigma[:self.rank])
        return w


def _by_deadline(func, *args):
    """``func(*args)``, given up at the build deadline in force
    (:func:`aidopt.models._data.deadline_in_force`): an O(n^3) factorisation is one LAPACK call
    that cannot be stopped, so it runs in a thread that is abandoned at the deadline (it ends in
    the background, as an abandoned solver does). Without a deadline it is a plain call.

    Raises
    ------
    TimeLimitReached
        The deadline passed before ``func`` returned (or had passed before it started).
    """
    deadline = deadline_in_force()
    if deadline is None:
        return func(*args)
    if time.perf_counter() >= deadline:
        raise TimeLimitReached("time limit reached before the factorisation of K started")
    box = {}

    def work():
        try:
            box["value"] = func(*args)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=work, name="aidopt-gsvm-factor", daemon=True)
    thread.start()
    thread.join(max(0.0, deadline - time.perf_counter()))
    if thread.is_alive():
        raise TimeLimitReached("time limit reached while factoring K (its eigendecomposition is "
                               "abandoned and ends in the background)")
    if "error" in box:
        raise box["error"]
    return box["value"]


def factor_kernel(K) -> KernelFactor:
    r"""The truncated SVD of K's distinct rows (:class:`KernelFactor`); a symmetric K without
    repeated rows by ``numpy.linalg.eigh`` (about 3x faster than the SVD: singular values
    :math:`|\lambda|`, :math:`V = U \operatorname{sign}(\lambda)`)."""
    K = np.asarray(K, dtype=float)
    rows, group = np.unique(K, axis=0, return_inverse=True)
    group = group.ravel()
    if rows.shape[0] == K.shape[0] and K.shape[0] == K.shape[1] and np.array_equal(K, K.T):
        lam, Q = np.linalg.eigh(K)  # K symmetric, its rows distinct: keep K's own row order
        order = np.argsort(-np.abs(lam), kind="stable")
        sigma, U = np.abs(lam[order]), Q[:, order]
        Vt = (U * np.where(lam[order] < 0, -1.0, 1.0)).T
        group = np.arange(K.shape[0])
    else:
        U, sigma, Vt = np.linalg.svd(rows, full_matrices=False)
    tau = max(rows.shape) * np.finfo(float).eps * float(sigma[0]) if sigma.size else 0.0
    r = int(np.count_nonzero(sigma > tau))
    return KernelFactor(group, np.ascontiguousarray(U[:, :r]), sigma,
                        np.ascontiguousarray(Vt[:r]), tau)


def rigorous_bound(K, d, nu, u, z, E, w, gamma, factor: KernelFactor | None = None
                   ) -> tuple[float, float, str]:
    r"""A lower bound on the optimum of (1.12) from a box-feasible dual point.

    For every feasible :math:`(w, \gamma, y, s)` and box-feasible :math:`(u, p, q)`, with
    :math:`z = Du - p + q` and :math:`f = Kw`,

    .. math:: \nu e'y + e's \ge e'u - z'f + \gamma\, d'u

    (weak duality with the residuals left in). At an optimum :math:`\|f^*\|_1 \le e's^* \le
    \mathrm{OPT} \le E` and :math:`|\gamma^*| \le E (1 + 1/\nu)` (one row of each class bounds
    it). Identical rows of K (repeated points) have equal :math:`f_i`: with :math:`\tilde z` the
    sums of ``z`` over identical rows and :math:`\tilde K` the distinct rows,
    :math:`z'f = \tilde z'\tilde K w`. Then, in turn:

    1. :math:`|z'f^*| \le \|\tilde z\|_\infty E`: exact for K as stored.
    2. :math:`\tilde K` of full numerical rank (every singular value above
       ``tau = max(k, n) eps sigma_max``, the rank tolerance of ``numpy.linalg.matrix_rank``):
       :math:`|z'f^*| = |(\tilde K'\tilde z)'w^*| \le \|\tilde K'\tilde z\|_2 E / (\sigma_{min} - \tau)`
       for the optimal :math:`w^*` of least norm: exact for K as stored.
    3. Otherwise the bound is for :math:`K_\tau`, K with its singular values below ``tau`` set
       to zero (a change of K within the rounding of its entries; a low-rank kernel such as the
       linear one is exactly of this kind): :math:`f` lies in the span :math:`U_r` of the other
       left singular vectors, :math:`|z'f^*| \le \|U_r'\tilde z\|_2 E_\tau`, and ``E_tau`` is the
       answer's objective with :math:`K_\tau` (returned: the gap is taken from the larger of E
       and ``E_tau``).

    The best valid bound is used; an ill-conditioned K makes the charges large and the bound
    weak, never wrong. ``factor``: :func:`factor_kernel` of K when already computed (else it is
    computed here for at most :data:`SVD_MAX` distinct rows).

    Returns
    -------
    (bound, upper, how)
        ``bound`` is ``-inf`` when no finite bound follows; ``upper`` the objective the gap is
        measured from (E, or ``max(E, E_tau)`` in case 3).
    """
    E = float(E)
    if not np.isfinite(E):
        return -np.inf, E, "no finite upper bound"

    def charged(z_term, upper):
        upper = upper * (1.0 + 1e-12) + np.finfo(float).tiny  # evaluated: allow its rounding
        return float(u.sum()) - z_term * upper - abs(float(d @ u)) * upper * (1.0 + 1.0 / nu)

    if factor is None:
        rows, group = np.unique(K, axis=0, return_inverse=True)
        group, k = group.ravel(), rows.shape[0]
    else:
        group, k = factor.group, int(factor.group.max(initial=-1)) + 1
    z_sum = np.bincount(group, weights=z, minlength=k)
    best = (charged(float(np.abs(z_sum).max(initial=0.0)), E), E, "|z~|_inf E, K as stored")
    if E - best[0] <= 1e-12 * max(1.0, abs(E)):
        return best
    if factor is None:
        if k > SVD_MAX:
            return best
        factor = factor_kernel(K)  # its rows may be ordered otherwise than np.unique's
        group = factor.group
        z_sum = np.bincount(group, weights=z, minlength=k)
    U, sigma, Vt, tau, r = factor.U, factor.sigma, factor.Vt, factor.tau, factor.rank
    if factor.full_rank:
        safe = float(sigma[-1]) - tau
        if safe > 0:
            # K~'z~ = K' z: the columns of K~ are those of K
            bound = charged(float(np.linalg.norm(K.T @ z)) / safe, E)
            if bound > best[0]:
                best = (bound, E, f"|K~'z~|_2 E / (sigma_min - tau), K as stored (sigma_min "
                                  f"{sigma[-1]:.3g})")
        return best
    f_tau = (U * sigma[:r]) @ (Vt @ w)
    f = f_tau[group]
    E_tau = nu * float(np.maximum(1.0 - d * (f - gamma), 0.0).sum()) + float(np.abs(f).sum())
    upper = max(E, E_tau)
    bound = charged(float(np.linalg.norm(U.T @ z_sum)), upper)
    if bound > best[0]:
        best = (bound, upper, f"|U_r'z~|_2 E_tau for K with the {len(sigma) - r} singular values "
                              f"below tau = {tau:.3g} set to 0 (numerical rank {r} of "
                              f"{k} distinct rows)")
    return best


#: how much higher (relative) the objective of the sparse w may be than the least-norm w's
#: for the sparse one to be kept (differences of rounding; far below any gap tolerance)
SPARSE_SLACK = 1e-8

#: the largest K whose singular values the certificate computes (O(n^3)) for the second bound
SVD_MAX = 8000
