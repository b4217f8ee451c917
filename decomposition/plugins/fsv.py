r"""Feature selection concave (FSV) by successive linearization (Bradley, Mangasarian & Musicant
§3.1, (1.21)-(1.23), Algorithm 2), each linear program solved directly or by AID.

One step solves (1.22) at :math:`v^i` with weights :math:`t = \alpha \exp(-\alpha v^i)`:

* **direct**: one instance of :mod:`aidopt.models.fsv` is built once and kept in a persistent
  solver (``Run.persistent``); a step changes its mutable weights ``t`` and re-solves warm;
* **AID**: (1.22) is the weighted 1-norm LP SVM ``min nu sum s_i y_i + sum_j t_j |w_j|``, solved by
  the SVM plug-in (``SVMProblem(C=nu, norm="l1", feature_weights=t)``) with its full-data
  certificate; each step starts from the previous step's final partition.

Weights are floored at ``WEIGHT_FLOOR`` (a feature whose weight would be smaller is penalized by
at most that much per unit of :math:`|w_j|`) so that both paths solve the same LP and the AID
certificate's dual-norm test :math:`|g_j| \le t_j` stays meaningful.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from aidopt.decomposition.plugins.svm import SVMProblem
from aidopt.decomposition.sla import SLAStep, StepResult
from aidopt.models import fsv

from aidopt.solvers import ProblemClass, SolverError, TimeLimitReached

__all__ = ["FSVStep", "FSVPoint", "WEIGHT_FLOOR"]

WEIGHT_FLOOR = 1e-9


@dataclass
class FSVPoint:
    """A point of FSV's feasible set, represented by the plane: ``w``, ``gamma``; ``v = |w|`` and
    the weighted error ``sum_i s_i (1 - d_i (A_i w - gamma))_+`` follow from them."""

    w: np.ndarray
    gamma: float
    v: np.ndarray
    error: float


class FSVStep(SLAStep):
    """The SLA step of FSV on ``data`` (a :class:`~aidopt.data.validate.ClassificationData`).

    Parameters
    ----------
    nu, alpha : float
        Error weight and the exponent of the concave approximation (1.20) (the paper: alpha = 5).
    start : {"random", "rlp"}
        The paper's random start (w^0 standard normal, gamma^0 = 0, seeded) or the RLP (1.17)
        solution.
    aid : bool
        Solve each LP by AID (large n) instead of directly with a warm persistent solver.
    support_tol : float
        |w_j| > support_tol * max(1, max |w|) counts as a selected feature.
    """

    name = "fsv"
    problem_class = ProblemClass.LP

    def __init__(self, data, *, nu: float, alpha: float, start: str = "random", aid: bool = False,
                 support_tol: float = 1e-6):
        self.data, self.nu, self.alpha = data, float(nu), float(alpha)
        self.start_rule, self.aid, self.support_tol = start, aid, float(support_tol)
        self.handle = self.model = self.partition = None
        self.steps = 0

    # ------------------------------------------------------------------ the SLA step
    def point(self, w, gamma) -> FSVPoint:
        w = np.asarray(w, dtype=float)
        margin = self.data.y * (self.data.X @ w - gamma)
        error = float(self.data.s @ np.maximum(1.0 - margin, 0.0))
        return FSVPoint(w, float(gamma), np.abs(w), error)

    def weights(self, point: FSVPoint) -> np.ndarray:
        """The linearization weights t = alpha exp(-alpha v) of (1.22), floored."""
        return np.maximum(self.alpha * np.exp(-self.alpha * point.v), WEIGHT_FLOOR)

    def start(self, run) -> FSVPoint:
        if self.start_rule == "random":
            rng = np.random.default_rng(run.config.seed)
            return self.point(rng.standard_normal(self.data.m), 0.0)
        from aidopt.decomposition import aid

        inner = dataclasses.replace(run.config, log=False, time_limit=run.remaining(),
                                    write_models=None)
        problem = SVMProblem(C=self.nu, norm="none")
        res = (aid.solve if self.aid else aid.solve_direct)(problem, self.data, inner)
        if not res.solution:
            raise SolverError(f"the RLP start failed: {res.termination.value} ({res.message})")
        return self.point(res.solution["w"], -res.solution["b"])

    def solve(self, run, point: FSVPoint) -> StepResult:
        t = self.weights(point)
        self.steps += 1
        if self.aid:
            new, inner, info = self._solve_aid(run, t)
        else:
            new, inner, info = self._solve_direct(run, t)
        lp_value = self.nu * new.error + float(t @ (new.v - point.v))
        return StepResult(new, lp_value, info, inner)

    def objective(self, point: FSVPoint) -> float:
        return fsv.concave_objective(point.error, point.v, self.nu, self.alpha)

    def linearization_at(self, point: FSVPoint, at: FSVPoint) -> float:
        return self.nu * point.error + float(self.weights(at) @ (point.v - at.v))

    def support(self, point: FSVPoint) -> int:
        return int(self.support_mask(point).sum())

    def support_mask(self, point: FSVPoint) -> np.ndarray:
        return point.v > self.support_tol * max(1.0, float(point.v.max(initial=0.0)))

    def solution(self, point: FSVPoint) -> dict:
        return {"w": point.w, "gamma": point.gamma, "b": -point.gamma,
                "support": np.flatnonzero(self.support_mask(point)), "error": point.error}

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None

    # ------------------------------------------------------------------ the two solvers
    def _solve_direct(self, run, t):
        if self.handle is None:  # both stop at the time limit (TimeLimitReached)
            self.model = run.build(lambda _: fsv.create_instance(self.data.X, self.data.y,
                                                                 self.data.s, self.nu, t))
            with run.timed("build"):
                self.handle = run.persistent(self.model)
        else:
            fsv.set_weights(self.model, t)
            self.handle.update_objective()
        outcome = self.handle.solve()
        if not outcome.optimal:
            if outcome.status == "time_limit":
                raise TimeLimitReached(f"time limit reached in SLA step {self.steps}")
            raise SolverError(f"SLA step {self.steps}: {outcome.solver} returned {outcome.status} "
                              f"({outcome.message})")
        w, gamma, _, _ = fsv.solution_from(self.model)
        how = "warm" if self.handle.warm and self.steps > 1 else "cold"
        return self.point(w, gamma), f"{how} {outcome.solver}", {}

    def _solve_aid(self, run, t):
        from aidopt.decomposition import aid

        config = dataclasses.replace(
            run.config, log=False, time_limit=run.remaining(),
            write_models=None if run.config.write_models is None else str(
                Path(run.config.write_models) / f"sla_{self.steps:03d}"))
        problem = SVMProblem(C=self.nu, norm="l1", feature_weights=t)
        res = aid.solve(problem, self.data, config, partition=self.partition)
        if not res.solution or res.termination.value in ("time_limit", "interrupted",
                                                          "solver_failure"):
            if res.termination.value == "time_limit":
                raise TimeLimitReached(f"time limit reached in SLA step {self.steps}")
            raise SolverError(f"SLA step {self.steps}: AID ended {res.termination.value} "
                              f"({res.message})")
        self.partition = res.partition
        info = {"inner_iterations": len(res.history), "inner_clusters": res.history[-1].n_clusters,
                "inner_gap": res.gap, "inner_certified": float(res.certified)}
        inner = f"AID {'certified' if res.certified else res.termination.value}"
        return self.point(res.solution["w"], -res.solution["b"]), inner, info
