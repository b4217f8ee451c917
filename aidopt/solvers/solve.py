"""``solve_model``: check a Pyomo model's real class, route it to a backend, return an outcome."""

from __future__ import annotations

import time

from .classify import describe_program, model_facts, quadratic_variables, resolve_class
from .errors import SolverCapabilityError, SolverError
from .reader import ReadTimeLimit, _compile_standard_form, _read_linear_expressions
from .registry import (
    DEFAULT_SOLVER,
    ProblemClass,
    availability,
    backend_module,
    check_solver,
    spec_of,
)
from .status import SolveOutcome, SolveStatus

__all__ = ["solve_model"]


def solve_model(
    model,
    solver: str = DEFAULT_SOLVER,
    *,
    problem_class: ProblemClass | str | None = None,
    need_duals: bool = False,
    time_limit: float | None = None,
    threads: int | None = None,
    tee: bool = False,
    options: dict | None = None,
) -> SolveOutcome:
    """Solve a Pyomo model and load its solution into it.

    Parameters
    ----------
    model : pyomo.core.Block
        A constructed (concrete) Pyomo model with one active objective.
    solver : str
        A name from :data:`SOLVERS` or any Pyomo solver name (passed through to Pyomo).
    problem_class : ProblemClass, str or None
        The class the caller routes the model as; ``None`` (default) infers it from the model.
        The model's real variable domains and degrees are always checked against it: a model with
        binary/integer variables routed as LP, or a quadratic objective routed as LP, raises
        :class:`SolverCapabilityError` naming the real class instead of solving a relaxation.
    need_duals : bool
        Ask for constraint duals (the outcome's ``duals`` is ``None`` if the solver gives none, and
        for MIPs).
    time_limit : float, optional
        Seconds for the whole call: for HiGHS and Clarabel reading the model into arrays counts
        (the solver gets what is left, and none left returns a ``time_limit`` outcome); ``<= 0``
        returns a ``time_limit`` outcome without calling the solver.
    threads : int, optional
        Solver threads.
    tee : bool
        Show the solver's log.
    options : dict, optional
        Solver options passed through untouched (e.g. ``{"solver": "ipm"}`` for HiGHS).

    Returns
    -------
    SolveOutcome

    Raises
    ------
    SolverCapabilityError
        The model's class does not match ``problem_class`` or the solver.
    LicenceLimitError
        The model exceeds the solver's size-limited licence (checked before the solve).
    SolverUnavailableError
        The solver is not installed.
    SolverError
        The solver failed.
    """
    options = dict(options or {})
    spec = spec_of(solver)
    name = spec.name if spec else solver
    if time_limit is not None and time_limit <= 0:
        return SolveOutcome(SolveStatus.TIME_LIMIT, None, None, False, name, "", 0.0, "no time left")
    routed = None if problem_class is None else ProblemClass(problem_class)
    backend = spec.backend if spec else "contrib"
    t0 = time.perf_counter()
    if backend in ("highs", "clarabel"):
        deadline = None if time_limit is None else t0 + time_limit
        try:
            prog = _read_linear_expressions(model, quadratic=True, deadline=deadline)
        except ReadTimeLimit:
            return _late(name, t0, "the time limit was reached while reading the model")
        if prog is not None:
            actual = ProblemClass.of(integer=prog.n_integer > 0, quadratic=prog.Q is not None)
            actual = resolve_class(actual, routed, name, describe_program(prog))
        else:
            facts = model_facts(model)
            actual = resolve_class(facts.problem_class, routed, name, facts.describe())
        check_solver(name, actual)
        if prog is None and not actual.quadratic:
            prog = _compile_standard_form(model)
            if prog.n_integer and not actual.integer:  # model_facts and the compiler disagree
                raise SolverCapabilityError(
                    f"the model has {prog.n_integer} binary/integer variables but was routed "
                    f"as {actual.value}")
        if prog is not None:
            from .scaling import scale_program, unscale

            module = backend_module(backend)
            scaled, scaling = scale_program(prog)
            if deadline is not None:  # the solver gets what reading left
                time_limit = deadline - time.perf_counter()
                if time_limit <= 0:
                    return _late(name, t0, "the time limit was reached while reading the model")
            outcome = module.solve(scaled, t0, need_duals, time_limit, threads, tee, options)
            return unscale(outcome, prog, scaling)
        if backend == "clarabel":
            raise SolverError("clarabel: the QP's constraints are not LinearExpressions with "
                              "numeric coefficients, which aidopt reads directly; use "
                              "solver='highs' or 'gurobi'")
        from . import contrib  # a HiGHS QP the direct reader cannot read

        if threads is not None:  # Pyomo's HiGHS would meet the scheduler of an earlier run
            backend_module("highs").reset_scheduler()
        return contrib.solve(model, spec, name, actual, need_duals, time_limit, threads, tee,
                             options)
    limited = spec is not None and spec.limited_licence is not None \
        and availability(name) == "limited"
    facts = model_facts(model, count_vars=limited)
    actual = resolve_class(facts.problem_class, routed, name, facts.describe())
    n_vars = facts.n_declared if backend in ("cplex", "xpress") else facts.n_vars
    n_quad = quadratic_variables(model) if limited and actual.quadratic else 0
    check_solver(name, actual, n_vars=n_vars, n_cons=facts.n_cons, n_quad_vars=n_quad)
    if backend in ("cplex", "xpress"):
        from . import direct

        return direct.solve(backend_module(backend), model, spec, name, actual, need_duals,
                            time_limit, threads, tee, options)
    from . import contrib

    return contrib.solve(model, spec, name, actual, need_duals, time_limit, threads, tee, options)


def _late(solver: str, t0: float, message: str) -> SolveOutcome:
    """A ``time_limit`` outcome of a solve that never started."""
    return SolveOutcome(SolveStatus.TIME_LIMIT, None, None, False, solver, "",
                        time.perf_counter() - t0, message)
