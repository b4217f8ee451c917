"""Solvers reached through Pyomo's interfaces: ``pyomo.contrib.solver`` and the legacy factory.

Registered solvers with the ``contrib`` backend (Gurobi's ``gurobi_persistent``, SCIP's
``scip_direct``) and any name aidopt does not know go through ``pyomo.contrib.solver``; a name
that factory does not know goes through Pyomo's legacy ``SolverFactory``. ``time_limit`` and
``threads`` are passed as typed options everywhere: the contrib interfaces have them in their
config; on the legacy path a shell solver gets Pyomo's ``timelimit`` keyword, direct interfaces
the option name they understand, and anything else a logged warning that it was *not* passed.
"""

from __future__ import annotations

import inspect
import logging
import math
import time

from .errors import LicenceLimitError, SolverError, SolverUnavailableError
from .registry import ProblemClass, SolverSpec, package_version, quiet_pyomo
from .status import SolveOutcome, SolveStatus, from_contrib, from_legacy, pyomo_enums

__all__ = ["apply_legacy_limits", "outcome_from_results", "solve", "solve_legacy"]

logger = logging.getLogger("aidopt.solvers")


class _DropGurobiLicenceCount(logging.Filter):
    """Pyomo 6.10's gurobi_persistent decrements its licence-client count once too often and then
    warns "release_license() with -1 remaining environment clients" after every solve: noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "release_license()" not in record.getMessage()


logging.getLogger("pyomo.contrib.solver.solvers.gurobi.gurobi_direct_base").addFilter(
    _DropGurobiLicenceCount())


def contrib_factory():
    """A function name -> ``pyomo.contrib.solver`` object; ``scip_direct`` is aidopt's own
    (:mod:`aidopt.solvers.scip`: Pyomo's interface can deadlock on its captured output)."""
    import pyomo.environ  # noqa: F401  (registers the contrib solvers)
    from pyomo.contrib.solver.common.factory import SolverFactory

    def make(name: str):
        if name == "scip_direct":
            from .scip import ScipDirect

            return ScipDirect()
        return SolverFactory(name)

    return make


def licence_error(name: str, spec: SolverSpec | None, exc: Exception) -> LicenceLimitError | None:
    """A readable :class:`LicenceLimitError` for a solver's own size-limit error (last resort:
    the sizes are normally checked before the solve), else ``None``."""
    text = str(exc)
    low = text.lower()
    if not ("10010" in text or "size-limited" in low or "1016" in text or "size limits" in low
            or "too many rows and columns" in low or "community" in low):
        return None
    lim = spec.limited_licence if spec else None
    return LicenceLimitError(
        f"Solver {name!r} refused the model because of its size-limited licence"
        + (f" ({spec.notes})" if spec else "")
        + f": {text}. Use a full licence, AID (aid=True: smaller aggregated models) or "
        "solver='highs'.",
        solver=name, limits=lim,
    )


def outcome_from_results(res, name: str, spec: SolverSpec | None, problem_class, need_duals: bool,
                         t0: float, extra: dict | None = None) -> SolveOutcome:
    """Turn a ``pyomo.contrib.solver`` ``Results`` into an outcome; load the primal solution."""
    _, SS = pyomo_enums()
    tc = res.termination_condition
    status = from_contrib(tc, res.solution_status)
    has_solution = res.solution_status in (SS.optimal, SS.feasible)
    objective = None
    if has_solution:
        res.solution_loader.load_vars()
        objective = res.incumbent_objective
    is_mip = problem_class is not None and ProblemClass(problem_class).integer
    bound = None
    if is_mip:
        b = res.objective_bound
        bound = float(b) if b is not None and math.isfinite(b) else None
    elif status is SolveStatus.OPTIMAL and objective is not None:
        bound = float(objective)
    duals = None
    if need_duals and status is SolveStatus.OPTIMAL and not is_mip and (spec is None or spec.duals):
        try:
            duals = res.solution_loader.get_duals()
        except Exception as exc:  # noqa: BLE001 - a solver without duals is reported, not fatal
            logger.debug("no duals from %s: %s", name, exc)
    ver = res.solver_version
    details = {"mip_gap_bound": bound if is_mip else res.objective_bound}
    details.update(extra or {})
    return SolveOutcome(
        status=status,
        objective=None if objective is None else float(objective),
        duals=duals,
        has_solution=has_solution,
        solver=name,
        version=".".join(str(p) for p in ver) if isinstance(ver, tuple) else str(ver or ""),
        seconds=time.perf_counter() - t0,
        message=str(tc.name),
        extra=details,
        bound=bound,
        termination_condition=tc,
        solution_status=res.solution_status,
    )


def contrib_solve_kwargs(tee, options, time_limit, threads) -> dict:
    kwargs = dict(
        tee=tee,
        load_solutions=False,
        raise_exception_on_nonoptimal_result=False,
        solver_options=dict(options),
    )
    if time_limit is not None:
        kwargs["time_limit"] = float(time_limit)
    if threads is not None:
        kwargs["threads"] = int(threads)
    return kwargs


def solve(model, spec: SolverSpec | None, name: str, problem_class, need_duals, time_limit,
          threads, tee, options) -> SolveOutcome:
    """Solve through ``pyomo.contrib.solver`` (or the legacy factory for names it lacks)."""
    t0 = time.perf_counter()
    pyomo_name = spec.pyomo_name if spec else name
    try:
        opt = contrib_factory()(pyomo_name)
    except Exception:
        opt = None
    if opt is None:  # unknown to pyomo.contrib.solver
        return solve_legacy(model, name, problem_class, need_duals, time_limit, threads, tee,
                            options)
    try:
        with quiet_pyomo():
            res = opt.solve(model, **contrib_solve_kwargs(tee, options, time_limit, threads))
    except Exception as exc:  # licence size errors and the like: make them readable
        err = licence_error(name, spec, exc)
        if err is not None:
            raise err from exc
        raise SolverError(f"Solver {name!r} failed: {exc}") from exc
    return outcome_from_results(res, name, spec, problem_class, need_duals, t0)


# --------------------------------------------------------------------------- legacy factory

#: typed options of Pyomo's legacy *direct* interfaces and of shell solvers whose Pyomo plugin does
#: not turn ``timelimit`` into a solver option (there it is only a subprocess timeout)
_TIME_OPTION = {
    "cplex_direct": "timelimit", "cplex_persistent": "timelimit", "cplex": "timelimit",
    "xpress_direct": "timelimit", "xpress_persistent": "timelimit", "xpress": "timelimit",
    "gurobi_direct": "TimeLimit", "gurobi_persistent": "TimeLimit", "gurobi": "TimeLimit",
    "mosek_direct": "dparam.optimizer_max_time", "mosek_persistent": "dparam.optimizer_max_time",
    "ipopt": "max_cpu_time", "scip": "limits/time",
}
_NATIVE_TIME_LIMIT = {"glpk", "cbc"}  # their plugins pass Pyomo's timelimit keyword on
_THREADS_OPTION = {
    "cplex_direct": "threads", "cplex_persistent": "threads", "cplex": "threads",
    "xpress_direct": "threads", "xpress_persistent": "threads", "xpress": "threads",
    "gurobi_direct": "Threads", "gurobi_persistent": "Threads", "gurobi": "Threads",
    "mosek_direct": "iparam.num_threads", "mosek_persistent": "iparam.num_threads",
    "cbc": "threads", "scip": "lp/threads",
}


def apply_legacy_limits(opt, name: str, time_limit, threads) -> tuple[dict, dict]:
    """Translate ``time_limit`` and ``threads`` for a legacy ``SolverFactory`` object.

    Returns
    -------
    (options, kwargs)
        Solver options to set and keywords for ``opt.solve``. What cannot be passed is logged as
        a warning (never dropped silently).
    """
    from pyomo.opt.solver import SystemCallSolver

    options, kwargs = {}, {}
    key = name.lower()
    takes_timelimit = isinstance(opt, SystemCallSolver) or "timelimit" in _parameters(opt.solve)
    if time_limit is not None:
        passed = False
        if key in _TIME_OPTION:
            options[_TIME_OPTION[key]] = float(time_limit)
            passed = True
        if takes_timelimit:
            kwargs["timelimit"] = float(time_limit)
            passed = True
            if isinstance(opt, SystemCallSolver) and key not in _NATIVE_TIME_LIMIT | set(_TIME_OPTION):
                logger.info("time_limit=%s passed to %r as Pyomo's timelimit: Pyomo ends the "
                            "solver's process after it (no solution is kept)", time_limit, name)
        if not passed:
            logger.warning("time_limit=%s was not passed to solver %r: aidopt knows no time-limit "
                           "option for it; pass it in options=", time_limit, name)
    if threads is not None:
        config = getattr(opt, "config", None)
        if key in _THREADS_OPTION:
            options[_THREADS_OPTION[key]] = int(threads)
        elif config is not None and "threads" in config:
            config.threads = int(threads)
        else:
            logger.warning("threads=%s was not passed to solver %r: aidopt knows no threads "
                           "option for it; pass it in options=", threads, name)
    return options, kwargs


def _parameters(fn) -> set:
    try:
        return set(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return set()


def legacy_bound(results, is_mip: bool, maximize: bool, objective):
    """The proved bound from a legacy ``SolverResults`` (``problem.lower_bound/upper_bound``)."""
    if not is_mip:
        return objective
    b = results.problem.upper_bound if maximize else results.problem.lower_bound
    try:
        b = float(b)
    except (TypeError, ValueError):
        return None
    return b if math.isfinite(b) else None


def solve_legacy(model, name, problem_class, need_duals, time_limit, threads, tee, options):
    """Pass a solver name through Pyomo's legacy ``SolverFactory``."""
    import pyomo.environ as pyo
    from pyomo.common.collections import ComponentMap

    t0 = time.perf_counter()
    with quiet_pyomo():
        opt = pyo.SolverFactory(name)
        ok = opt is not None and opt.available(exception_flag=False)
    if not ok:
        raise SolverUnavailableError(f"Solver {name!r} is not available through Pyomo.")
    typed, kwargs = apply_legacy_limits(opt, name, time_limit, threads)
    for k, v in {**typed, **options}.items():
        opt.options[k] = v
    added_suffix = need_duals and not hasattr(model, "dual")
    if added_suffix:
        model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    try:
        try:
            res = opt.solve(model, tee=tee, load_solutions=False, **kwargs)
        except Exception as exc:
            err = licence_error(name, None, exc)
            if err is not None:
                raise err from exc
            raise SolverError(f"Solver {name!r} failed: {exc}") from exc
        status, tc = from_legacy(res.solver.termination_condition)
        has_solution = len(res.solution) > 0
        if has_solution:
            model.solutions.load_from(res)
        obj = next(model.component_data_objects(pyo.Objective, active=True), None)
        objective = float(pyo.value(obj)) if has_solution and obj is not None else None
        if status is SolveStatus.OPTIMAL and not has_solution:
            status = SolveStatus.ERROR
        duals = None
        if need_duals and status is SolveStatus.OPTIMAL and hasattr(model, "dual"):
            duals = ComponentMap((c, model.dual[c]) for c in model.dual) or None
    finally:
        if added_suffix:
            model.del_component("dual")
    is_mip = problem_class is not None and ProblemClass(problem_class).integer
    maximize = obj is not None and obj.sense == pyo.maximize
    bound = legacy_bound(res, is_mip, maximize,
                         objective if status is SolveStatus.OPTIMAL else None)
    ver = getattr(opt, "version", lambda: None)()
    return SolveOutcome(
        status, objective, duals, has_solution, name,
        ".".join(str(p) for p in ver) if isinstance(ver, tuple) else package_version(name),
        time.perf_counter() - t0, str(res.solver.termination_condition),
        extra={"mip_gap_bound": bound} if is_mip else {},
        bound=bound, termination_condition=tc,
    )
