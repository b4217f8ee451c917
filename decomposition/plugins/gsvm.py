r"""The GSVM linear program (1.12) as a plug-in of the run framework, solved directly (every row
its own cluster), with a certificate from the solved model's duals.

The data is the kernel matrix :math:`K = K(A, A')` (rows as ``data.X``) and the labels ``data.y``.
Aggregating rows of (1.12) would also aggregate the columns of K (the variables w), so AID is not
offered: ``aidopt.solve_gsvm`` always solves it directly (``solve_direct``).

Certificate: with the model's duals :math:`u \ge 0` (margin rows) and :math:`p, q \ge 0` (the rows
:math:`\pm K_i w \le s_i`), the LP dual of :mod:`aidopt.models.gsvm` asks
:math:`K'(Du - p + q) = 0`, :math:`d'u = 0`, :math:`u \le \nu`, :math:`p + q \le 1`; its objective
:math:`e'u` is then a lower bound. The residuals of these conditions are checked against
``feasibility_tol`` (scaled by :math:`\max(1, \nu)` and the largest :math:`|K_{ij}|`), the
stationarity residual also against :data:`STATIONARITY_TOL` (an unbounded optimal face makes a
merely small residual meaningless), and the gap
:math:`(\text{primal} - e'u) / \max(1, |\text{primal}|)` against ``tol``. HiGHS's simplex (the
default) returns vertex solutions whose duals meet it.
"""

from __future__ import annotations

import numpy as np
from aidopt.decomposition.protocol import AIDProblem, Lifted, Split
from aidopt.models import gsvm

from aidopt.results import Certificate
from aidopt.solvers import ProblemClass, SolverError

__all__ = ["GSVMKuProblem", "STATIONARITY_TOL"]

STATIONARITY_TOL = 1e-12
"""The (scaled) stationarity residual a certificate of (1.12) needs. A singular or ill-conditioned
K leaves w free along (nearly) null directions, so the optimal face is unbounded and a small
residual is not enough: on a 30-point RBF problem HiGHS's interior point (no crossover) and
Clarabel returned objectives 25.28 and 26.07 with residuals 5e-8 and 6e-7 where the optimum is
24.00 (simplex, Gurobi: residual 1e-15). Vertex solutions (simplex) meet this tolerance."""


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
        u, p, q = (best.lifted.state[k] for k in ("u", "p", "q"))
        K, d = data.X, data.y
        scale_K = max(1.0, float(np.abs(K).max(initial=0.0)))
        scale_nu = max(1.0, self.nu)
        residuals = {
            "stationarity |K'(Du - p + q)|_inf": float(np.abs(K.T @ (d * u - p + q)).max(
                initial=0.0)) / (scale_K * scale_nu),
            "balance |d'u|": abs(float(d @ u)) / scale_nu,
            "bounds 0 <= u <= nu": float(max(np.maximum(-u, u - self.nu).max(initial=0.0), 0.0))
            / scale_nu,
            "bounds p, q >= 0, p + q <= 1": float(max(np.maximum(-p, -q).max(initial=0.0),
                                                      (p + q - 1.0).max(initial=0.0), 0.0)),
        }
        primal, dual = best.E_t, float(u.sum())
        rel = max(0.0, primal - dual) / max(1.0, abs(primal))
        stationarity = residuals["stationarity |K'(Du - p + q)|_inf"]
        feasible = (all(v <= feasibility_tol for v in residuals.values())
                    and stationarity <= STATIONARITY_TOL)
        return Certificate(
            method="solver_duals", certified=bool(feasible and rel <= tol),
            primal_objective=primal, dual_objective=dual if feasible else -np.inf,
            relative_gap=float(rel) if feasible else np.inf, residuals=residuals, tol=tol,
            feasibility_tol=feasibility_tol, checked=list(residuals),
            note="the LP dual of (1.12) checked with the solved model's duals (stationarity "
                 f"within {STATIONARITY_TOL:g}: an interior solution may not reach it)",
        )
