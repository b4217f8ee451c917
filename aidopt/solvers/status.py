"""One status vocabulary for every backend, and what one solver call produced.

:class:`SolveStatus` is a ``StrEnum`` (``outcome.status == "time_limit"`` keeps working). Each
:class:`SolveOutcome` also carries Pyomo's own enums, ``termination_condition``
(``pyomo.contrib.solver.common.results.TerminationCondition``) and ``solution_status``
(``SolutionStatus``), whichever backend ran: the backends set them from the solver's own verdict,
and :class:`SolveOutcome` derives them from ``status`` when a caller builds an outcome itself.

======================== ===================================== =========================
SolveStatus              TerminationCondition                  meaning
======================== ===================================== =========================
optimal                  convergenceCriteriaSatisfied          proven optimal (tolerances)
feasible                 objectiveLimit / unknown              stopped with a feasible point
time_limit               maxTimeLimit                          stopped at the time limit
iteration_limit          iterationLimit                        stopped at an iteration/node limit
infeasible               provenInfeasible                      proven infeasible
unbounded                unbounded                             proven unbounded
infeasible_or_unbounded  infeasibleOrUnbounded                 one of the two, undecided
interrupted              interrupted                           stopped by the user/a callback
licence_limit            licensingProblems                     refused by a size-limited licence
error                    error                                 anything else (never upgraded)
======================== ===================================== =========================
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SolveOutcome", "SolveStatus"]


class SolveStatus(enum.StrEnum):
    """The solver's verdict in aidopt's vocabulary (see the module's table)."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    TIME_LIMIT = "time_limit"
    ITERATION_LIMIT = "iteration_limit"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    INFEASIBLE_OR_UNBOUNDED = "infeasible_or_unbounded"
    INTERRUPTED = "interrupted"
    LICENCE_LIMIT = "licence_limit"
    ERROR = "error"


_TERMINATION_OF = {
    SolveStatus.OPTIMAL: "convergenceCriteriaSatisfied",
    SolveStatus.FEASIBLE: "unknown",
    SolveStatus.TIME_LIMIT: "maxTimeLimit",
    SolveStatus.ITERATION_LIMIT: "iterationLimit",
    SolveStatus.INFEASIBLE: "provenInfeasible",
    SolveStatus.UNBOUNDED: "unbounded",
    SolveStatus.INFEASIBLE_OR_UNBOUNDED: "infeasibleOrUnbounded",
    SolveStatus.INTERRUPTED: "interrupted",
    SolveStatus.LICENCE_LIMIT: "licensingProblems",
    SolveStatus.ERROR: "error",
}


def pyomo_enums():
    """``(TerminationCondition, SolutionStatus)`` of ``pyomo.contrib.solver`` (imported lazily)."""
    from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

    return TerminationCondition, SolutionStatus


def termination_of(status: SolveStatus | str):
    """Pyomo's ``TerminationCondition`` for an aidopt status (``unknown`` for other strings)."""
    TC, _ = pyomo_enums()
    try:
        return getattr(TC, _TERMINATION_OF[SolveStatus(status)])
    except ValueError:
        return TC.unknown


def solution_status_of(status: SolveStatus | str, has_solution: bool):
    """Pyomo's ``SolutionStatus`` of a loaded (or absent) solution with this status."""
    _, SS = pyomo_enums()
    if not has_solution:
        return SS.noSolution
    return SS.optimal if status == SolveStatus.OPTIMAL else SS.feasible


def from_contrib(termination, solution_status) -> SolveStatus:
    """aidopt's status for a ``pyomo.contrib.solver`` result (never upgraded: a converged run
    whose solution is not marked optimal is an ``error``)."""
    TC, SS = pyomo_enums()
    has = solution_status in (SS.optimal, SS.feasible)
    mapped = {
        TC.convergenceCriteriaSatisfied: SolveStatus.OPTIMAL,
        TC.maxTimeLimit: SolveStatus.TIME_LIMIT,
        TC.iterationLimit: SolveStatus.ITERATION_LIMIT,
        TC.provenInfeasible: SolveStatus.INFEASIBLE,
        TC.locallyInfeasible: SolveStatus.INFEASIBLE,
        TC.unbounded: SolveStatus.UNBOUNDED,
        TC.infeasibleOrUnbounded: SolveStatus.INFEASIBLE_OR_UNBOUNDED,
        TC.interrupted: SolveStatus.INTERRUPTED,
        TC.licensingProblems: SolveStatus.LICENCE_LIMIT,
        TC.objectiveLimit: SolveStatus.FEASIBLE if has else SolveStatus.ERROR,
    }.get(termination, SolveStatus.ERROR)
    if mapped is SolveStatus.OPTIMAL and solution_status != SS.optimal:
        return SolveStatus.ERROR
    return mapped


def from_legacy(termination) -> tuple[SolveStatus, Any]:
    """aidopt's status and Pyomo's contrib ``TerminationCondition`` for a legacy
    ``pyomo.opt.TerminationCondition``."""
    from pyomo.opt import TerminationCondition as L

    TC, _ = pyomo_enums()
    table = {
        L.optimal: (SolveStatus.OPTIMAL, TC.convergenceCriteriaSatisfied),
        L.globallyOptimal: (SolveStatus.OPTIMAL, TC.convergenceCriteriaSatisfied),
        L.locallyOptimal: (SolveStatus.OPTIMAL, TC.convergenceCriteriaSatisfied),
        L.feasible: (SolveStatus.FEASIBLE, TC.unknown),
        L.maxTimeLimit: (SolveStatus.TIME_LIMIT, TC.maxTimeLimit),
        L.maxIterations: (SolveStatus.ITERATION_LIMIT, TC.iterationLimit),
        L.maxEvaluations: (SolveStatus.ITERATION_LIMIT, TC.iterationLimit),
        L.minFunctionValue: (SolveStatus.FEASIBLE, TC.objectiveLimit),
        L.minStepLength: (SolveStatus.ERROR, TC.minStepLength),
        L.infeasible: (SolveStatus.INFEASIBLE, TC.provenInfeasible),
        L.unbounded: (SolveStatus.UNBOUNDED, TC.unbounded),
        L.infeasibleOrUnbounded: (SolveStatus.INFEASIBLE_OR_UNBOUNDED, TC.infeasibleOrUnbounded),
        L.userInterrupt: (SolveStatus.INTERRUPTED, TC.interrupted),
        L.resourceInterrupt: (SolveStatus.INTERRUPTED, TC.interrupted),
        L.licensingProblems: (SolveStatus.LICENCE_LIMIT, TC.licensingProblems),
    }
    return table.get(termination, (SolveStatus.ERROR, TC.error))


@dataclass
class SolveOutcome:
    """What one solver call produced.

    Attributes
    ----------
    status : SolveStatus
        The solver's own verdict (never upgraded), a ``StrEnum``: ``outcome.status ==
        "optimal"`` works. A string outside the vocabulary given by a caller is kept as is.
    objective : float or None
        Objective of the loaded solution (``None`` when no solution was loaded).
    duals : dict or None
        ``{ConstraintData: float}`` in Pyomo's convention (d objective / d rhs, for minimisation
        and maximisation alike); ``None`` when not asked for or not provided.
    has_solution : bool
        Whether primal values were loaded into the model's variables.
    solver : str
        aidopt's (or Pyomo's) name of the solver that actually ran.
    version : str
        Its version.
    seconds : float
        Wall-clock seconds of the call, reading the model included.
    message : str
        The solver's own status text.
    extra : dict
        Backend details (iterations, read seconds; ``mip_gap_bound`` = ``bound``).
    bound : float or None
        A bound the solver *proved* on the optimum: the objective for an LP/QP solved to
        optimality, the dual (branch-and-bound) bound for a MIP, also when stopped at a limit;
        ``None`` when unknown.
    termination_condition : pyomo.contrib.solver.common.results.TerminationCondition
        Pyomo's termination condition (derived from ``status`` when not given).
    solution_status : pyomo.contrib.solver.common.results.SolutionStatus
        Pyomo's status of the loaded solution (derived when not given).
    """

    status: SolveStatus
    objective: float | None
    duals: dict | None
    has_solution: bool
    solver: str
    version: str
    seconds: float
    message: str = ""
    extra: dict = field(default_factory=dict)
    bound: float | None = None
    termination_condition: Any = None
    solution_status: Any = None

    def __post_init__(self):
        try:
            self.status = SolveStatus(self.status)
        except ValueError:
            pass  # a caller's own label (e.g. "refused"): kept, mapped to Pyomo's "unknown"
        if self.termination_condition is None:
            self.termination_condition = termination_of(self.status)
        if self.solution_status is None:
            self.solution_status = solution_status_of(self.status, self.has_solution)

    @property
    def optimal(self) -> bool:
        """Whether the solver proved the loaded solution optimal."""
        return self.status == SolveStatus.OPTIMAL

    @property
    def stopped(self) -> bool:
        """Whether the solve was stopped from outside (a time limit or Ctrl-C), not failed: its
        incumbent, when it has one, is as good as the solver got."""
        return self.status in (SolveStatus.TIME_LIMIT, SolveStatus.INTERRUPTED)
