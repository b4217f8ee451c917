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
"""

from __future__ import annotations

import numpy as np
from aidopt.decomposition.protocol import AIDProblem, Lifted, Split
from aidopt.models import gsvm

from aidopt.results import Certificate
from aidopt.solvers import ProblemClass, SolverError

__all__ = ["GSVMKuProblem", "SVD_MAX", "rigorous_bound"]


class GSVMKuProblem(AIDProblem):
    """(1.12): ``min nu e'y + ||K D u||_1`` with ``D(K D u - e gamma) + y >= e``, ``y >= 0``.

    Parameters
    ----------
    nu : float
        Weight of the error :math:`e'y`.
    """

    name = "gsvm_lp_Ku"
    needs_duals = True
    problem_class = ProblemClass.LP

    def __init__(self, nu: float = 1.0):
        self.nu = float(nu)

    def default_r0(self, size: int, data) -> float:
        return 1.0

    def initial_partition(self, data, n_clusters, rng, solve):
        return self.trivial_partition(data)

    def aggregate(self, data, partition, previous=None):
        if partition.n_clusters != data.n:
            raise ValueError("(1.12) is solved directly: its rows are not aggregated")
        return data

    def build(self, aggregated, form=None):
        return gsvm.create_instance(aggregated.X, aggregated.y, self.nu)

    def lift(self, model, outcome, partition, aggregated, data) -> Lifted:
        w, gamma = gsvm.solution_from(model)
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
        sol = lifted.solution
        hinge = np.maximum(1.0 - data.y * sol["decision"], 0.0)
        return self.nu * float(hinge.sum()) + float(np.abs(data.X @ sol["w"]).sum())

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
        lower, upper, how = rigorous_bound(K, d, nu, u, z, E, sol["w"], sol["gamma"])
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


def rigorous_bound(K, d, nu, u, z, E, w, gamma) -> tuple[float, float, str]:
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
    weak, never wrong.

    Returns
    -------
    (bound, upper, how)
        ``bound`` is ``-inf`` when no finite bound follows; ``upper`` the objective the gap is
        measured from (E, or ``max(E, E_tau)`` in case 3).
    """
    eps = np.finfo(float).eps
    E = float(E)
    if not np.isfinite(E):
        return -np.inf, E, "no finite upper bound"

    def charged(z_term, upper):
        upper = upper * (1.0 + 1e-12) + np.finfo(float).tiny  # evaluated: allow its rounding
        return float(u.sum()) - z_term * upper - abs(float(d @ u)) * upper * (1.0 + 1.0 / nu)

    rows, group = np.unique(K, axis=0, return_inverse=True)
    group = group.ravel()
    z_sum = np.bincount(group, weights=z, minlength=rows.shape[0])
    best = (charged(float(np.abs(z_sum).max(initial=0.0)), E), E, "|z~|_inf E, K as stored")
    if E - best[0] <= 1e-12 * max(1.0, abs(E)) or rows.shape[0] > SVD_MAX:
        return best
    U, sigma, Vt = np.linalg.svd(rows, full_matrices=False)
    tau = max(rows.shape) * eps * float(sigma[0]) if sigma.size else 0.0
    r = int(np.count_nonzero(sigma > tau))
    if r == min(rows.shape):
        safe = float(sigma[-1]) - tau
        if safe > 0:
            bound = charged(float(np.linalg.norm(rows.T @ z_sum)) / safe, E)
            if bound > best[0]:
                best = (bound, E, f"|K~'z~|_2 E / (sigma_min - tau), K as stored (sigma_min "
                                  f"{sigma[-1]:.3g})")
        return best
    f_tau = (U[:, :r] * sigma[:r]) @ (Vt[:r] @ w)
    f = f_tau[group]
    E_tau = nu * float(np.maximum(1.0 - d * (f - gamma), 0.0).sum()) + float(np.abs(f).sum())
    upper = max(E, E_tau)
    bound = charged(float(np.linalg.norm(U[:, :r].T @ z_sum)), upper)
    if bound > best[0]:
        best = (bound, upper, f"|U_r'z~|_2 E_tau for K with the {len(sigma) - r} singular values "
                              f"below tau = {tau:.3g} set to 0 (numerical rank {r} of "
                              f"{rows.shape[0]} distinct rows)")
    return best


#: the largest K whose singular values the certificate computes (O(n^3)) for the second bound
SVD_MAX = 4000
