"""Successive linear approximation (SLA): one loop for concave minimization over a polyhedron.

Bradley, Mangasarian & Musicant, Algorithm 2: minimize a concave f over a polyhedral set by
solving, at the current point z^i, the linear program min_z f(z^i) + grad f(z^i)'(z - z^i) over the
same set; stop when the LP's optimal value equals its value at z^i (1.23): then z^i satisfies the
minimum principle, the necessary optimality condition of a concave minimization. The answer is a
**stationary point**, never called optimal.

A problem provides an :class:`SLAStep` (the start, one linearized solve, the objective and the
decrease of the linearization); the loop and everything else (limits, failures, Ctrl-C, the
iteration table, the result) come from the run framework (:class:`~.run.Run`).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aidopt.decomposition.run import Column, Run, RunConfig, run_scope

from aidopt import solvers
from aidopt.results import AIDResult, Certificate, IterationRecord, Termination

logger = logging.getLogger("aidopt.sla")

__all__ = ["SLAStep", "StepResult", "successive_linearization", "COLUMNS"]

COLUMNS = [
    Column("iter", 5, "d"), Column("LP value", 16, ".9g"), Column("objective f", 16, ".9g"),
    Column("decrease (1.23)", 16, ".3e"), Column("support", 8, "d"), Column("inner", 18, "s"),
]


def _columns(step) -> list[Column]:
    """The table's columns, with the step's name for the count it shows."""
    return [Column(step.support_label, c.width, c.fmt) if c.name == "support" else c
            for c in COLUMNS]


@dataclass
class StepResult:
    """One linearized solve: the new point, the LP's optimal value at it (constant included, so
    comparable with the linearization's value at the old point), and what the history records."""

    point: Any
    lp_value: float
    info: dict = field(default_factory=dict)
    inner: str = ""
    """How the LP was solved and certified (e.g. ``"AID certified"``, ``"warm simplex"``)."""


class SLAStep:
    """What a problem gives the SLA loop (override every method)."""

    name = "sla"
    problem_class = solvers.ProblemClass.LP
    support_label = "support"
    """The table's heading for :meth:`support`."""

    def start(self, run: Run):
        """The starting point z^0."""
        raise NotImplementedError

    def solve(self, run: Run, point) -> StepResult:
        """Solve the LP linearized at ``point``."""
        raise NotImplementedError

    def objective(self, point) -> float:
        """The concave objective f at ``point``."""
        raise NotImplementedError

    def linearization_at(self, point, at) -> float:
        """The linearized objective (linearized at ``at``) evaluated at ``point``; at
        ``point = at`` it equals f(at)."""
        raise NotImplementedError

    def support(self, point) -> int:
        """A count shown in the table (e.g. features used)."""
        return 0

    def stop(self, current, new) -> str | None:
        """The problem's own stopping rule, asked after each step that did not meet (1.23): a
        message to stop and return ``current``, or ``None`` (default) to go on."""
        return None

    def solution(self, point) -> dict:
        """The public arrays of ``point``."""
        raise NotImplementedError

    def close(self) -> None:
        """Free what the steps kept (e.g. a persistent solver handle)."""


def successive_linearization(step: SLAStep, config: RunConfig, *, dimensions: dict,
                             mode: str = "") -> AIDResult:
    """Run Algorithm 2 with ``step`` until the stopping rule (1.23) holds within ``config.tol``
    (relative to max(1, |f|)), ``max_iter`` or the time limit.

    The result's termination is ``stationary`` when (1.23) held; its certificate (method
    ``"minimum_principle"``) reports the last decrease and says what it proves; ``certified`` is
    always False (a stationary point of a concave minimization is not proven optimal).
    """
    run = Run(step.name, step.problem_class, config, dimensions=dimensions, mode=mode)
    with run_scope(config):
        run.intro()
        history: list[IterationRecord] = []
        point = best = None
        termination, message, decrease = None, "", math.nan
        with run.guard():
            try:
                with run.timed("start"):
                    point = step.start(run)
                f = step.objective(point)
                best, f_best = point, f
                run.header(_columns(step))
                t = 0
                while termination is None:
                    t += 1
                    with run.timed("solve"):
                        out = step.solve(run, point)
                    decrease = out.lp_value - step.linearization_at(point, point)
                    new_f = step.objective(out.point)
                    history.append(IterationRecord(
                        t=t, n_clusters=0, r_t=math.nan, F_t=out.lp_value, E_t=new_f,
                        E_best=min(f_best, new_f), lower_bound=-math.inf, gap=math.inf,
                        n_split=0, seconds=run.take_seconds(),
                        info={"decrease": decrease, "support": step.support(out.point), **out.info},
                    ))
                    run.row(t, out.lp_value, new_f, decrease, step.support(out.point), out.inner)
                    scale = max(abs(f), np.finfo(float).tiny)  # relative: data in any unit
                    if decrease >= -config.tol * scale:
                        # (1.23): the LP cannot improve on its value at the current point
                        termination, message = Termination.STATIONARY, (
                            f"(1.23) holds: the linearized LP decreases by {-decrease:.2e} <= "
                            f"tol x {scale:.3g}")
                        break  # the current point is the stationary one, not the new vertex
                    rule = step.stop(point, out.point)
                    if rule is not None:
                        termination, message = Termination.NO_IMPROVEMENT, rule
                        break  # the problem's rule keeps the current point
                    point, f = out.point, new_f
                    if f < f_best:
                        best, f_best = point, f
                    if config.max_iter is not None and t >= config.max_iter:
                        termination, message = Termination.ITERATION_LIMIT, f"{t} LPs"
                    elif run.time_up():
                        termination, message = Termination.TIME_LIMIT, f"{run.elapsed():.1f} s"
            except solvers.SolverError as exc:
                stop, message = run.error(exc)
                termination = Termination(stop)
        step.close()
        if run.interrupted:
            termination, message = Termination.INTERRUPTED, "interrupted (Ctrl-C)"
        if best is None:
            return run.result(termination or Termination.SOLVER_FAILURE, message, history=history)
        returned = point if termination in (Termination.STATIONARY,
                                            Termination.NO_IMPROVEMENT) else best
        certificate = Certificate(
            method="minimum_principle", certified=False,
            primal_objective=step.objective(returned), dual_objective=-math.inf,
            relative_gap=math.inf,
            residuals={"decrease of the linearized LP (1.23)": -decrease
                       if math.isfinite(decrease) else math.nan},
            tol=config.tol, feasibility_tol=config.feasibility_tol, checked=[],
            note=("a stationary point: the LP linearized at the returned point cannot decrease "
                  "its value (minimum principle, (1.23)); a necessary condition for a minimum of "
                  "the concave objective, not a proof of global optimality"
                  if termination is Termination.STATIONARY else
                  f"stopped by the problem's rule ({message}) before (1.23) held: no "
                  "stationarity claim" if termination is Termination.NO_IMPROVEMENT else
                  "stopped before (1.23) held: no stationarity claim"),
        )
        return run.result(termination, message, objective=step.objective(returned),
                          solution=step.solution(returned), certificate=certificate,
                          history=history, aid=False)
