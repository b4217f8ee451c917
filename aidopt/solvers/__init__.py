"""Solver layer: one registry of the solvers aidopt knows, what each can take, one ``solve_model``.

Every formulation is a Pyomo model; this package is the only place that talks to a solver. It

* keeps a registry ``SOLVERS`` of :class:`SolverSpec` (name -> backend, problem classes, duals,
  pip extra, licence size limits, warm re-solves), so capabilities live next to the code that
  backs them (:mod:`~aidopt.solvers.registry`);
* checks a request *before* any model is built (:func:`check_solver`), and every model's real
  variable domains and degrees against the class it is routed as, so that a MILP is never solved
  as its LP relaxation (:mod:`~aidopt.solvers.classify`);
* checks sizes against size-limited licences (pip Gurobi, CPLEX Community Edition, Xpress
  community licence) before calling the solver (:class:`LicenceLimitError`);
* solves a Pyomo model (:func:`solve_model`) and returns a :class:`SolveOutcome` with one status
  vocabulary (:class:`SolveStatus`) plus Pyomo's own termination condition and solution status,
  the objective, a proved bound, and constraint duals in Pyomo's sign convention
  (``dual = d objective / d rhs``, for minimisation and maximisation alike);
* keeps a model loaded between solves and re-solves it warm after in-place updates
  (:func:`persistent`, :mod:`~aidopt.solvers.handles`).

Backends, one module each: :mod:`~aidopt.solvers.highs` (highspy, with aidopt's fast reader,
:mod:`~aidopt.solvers.reader`), :mod:`~aidopt.solvers.clarabel`, :mod:`~aidopt.solvers.contrib`
(``pyomo.contrib.solver``: Gurobi, SCIP, HiGHS QPs; and the legacy ``SolverFactory`` for any other
name), :mod:`~aidopt.solvers.cplex` and :mod:`~aidopt.solvers.xpress` (Pyomo's legacy persistent
interfaces, driven by :mod:`~aidopt.solvers.direct`). Solver modules are imported on first use.
"""

from .errors import (
    LicenceLimitError,
    SolverCapabilityError,
    SolverError,
    SolverOptionError,
    SolverUnavailableError,
    TimeLimitReached,
)
from .handles import HandleStats, PersistentHandle, persistent
from .reader import (  # the two private readers stay importable here: the tests use them
    LinearProgram,
    _compile_standard_form,  # noqa: F401
    _read_linear_expressions,  # noqa: F401
    linear_program,
)
from .registry import (
    DEFAULT_SOLVER,
    NATIVE_METHODS,
    SOLVERS,
    ProblemClass,
    SizeLimits,
    SolverSpec,
    availability,
    check_solver,
    refresh,
    solver_table,
    version,
)
from .solve import solve_model
from .status import SolveOutcome, SolveStatus

__all__ = [
    "DEFAULT_SOLVER",
    "NATIVE_METHODS",
    "HandleStats",
    "LicenceLimitError",
    "LinearProgram",
    "PersistentHandle",
    "ProblemClass",
    "SOLVERS",
    "SizeLimits",
    "SolveOutcome",
    "SolveStatus",
    "SolverCapabilityError",
    "SolverError",
    "SolverOptionError",
    "SolverSpec",
    "SolverUnavailableError",
    "TimeLimitReached",
    "availability",
    "check_solver",
    "linear_program",
    "persistent",
    "refresh",
    "solve_model",
    "solver_table",
    "version",
]
