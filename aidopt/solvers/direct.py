"""The shared driver of Pyomo's legacy *persistent* interfaces (CPLEX, Xpress).

``solve`` loads the model into a fresh ``cplex_persistent`` / ``xpress_persistent`` object,
sets the typed options on the solver's own model (a time limit of a previous solve is reset, not
inherited), solves without letting Pyomo load anything, then reads the status, objective and
bound from the solver itself (:mod:`aidopt.solvers.cplex`, :mod:`aidopt.solvers.xpress`), loads
the primal values into the Pyomo variables and the duals into a ``ComponentMap``. The persistent
handles (:mod:`aidopt.solvers.handles`) keep the same object between solves.
"""

from __future__ import annotations

import logging
import time

from .contrib import licence_error
from .errors import SolverError
from .registry import quiet_pyomo, version
from .status import SolveOutcome, SolveStatus, pyomo_enums

__all__ = ["load", "run", "solve"]

logger = logging.getLogger("aidopt.solvers")


def load(backend, model, name: str, spec, options: dict):
    """A legacy persistent interface with ``model`` loaded (``backend``: the solver's module)."""
    import pyomo.environ as pyo

    with backend.quiet(), quiet_pyomo():
        opt = pyo.SolverFactory(backend.PYOMO_NAME)
        try:
            opt.set_instance(model)
        except Exception as exc:
            err = licence_error(name, spec, exc)
            if err is not None:
                raise err from exc
            raise SolverError(f"Solver {name!r} could not load the model: {exc}") from exc
    for key, val in {**getattr(backend, "DEFAULT_OPTIONS", {}), **options}.items():
        opt.options[key] = val
    return opt


def run(backend, opt, *, name: str, spec, need_duals: bool, is_mip: bool, time_limit, threads,
        tee: bool, t0: float, read_seconds: float) -> SolveOutcome:
    """Solve the loaded model and return its outcome (values loaded into the Pyomo model)."""
    from pyomo.common.collections import ComponentMap

    _, SS = pyomo_enums()
    backend.set_limits(opt, time_limit, threads)
    try:
        with backend.quiet(), quiet_pyomo():
            opt.solve(tee=tee, load_solutions=False, save_results=False)
    except Exception as exc:  # a licence refusal (last resort) or a solver failure
        err = licence_error(name, spec, exc)
        if err is not None:
            raise err from exc
        raise SolverError(f"Solver {name!r} failed: {exc}") from exc
    st = backend.read_status(opt, is_mip)
    status, has_solution = st["status"], st["has_solution"]
    if has_solution:
        opt.load_vars()
    duals = None
    if need_duals and not is_mip and status is SolveStatus.OPTIMAL:
        cons = list(opt._pyomo_con_to_solver_con_map)
        try:
            duals = ComponentMap(zip(cons, backend.read_duals(opt, cons), strict=True))
        except Exception as exc:  # noqa: BLE001 - e.g. fixed integer columns make it a MIP there
            logger.debug("no duals from %s: %s", name, exc)
    extra = {"read_seconds": read_seconds}
    if is_mip:
        extra["mip_gap_bound"] = st["bound"]
    return SolveOutcome(
        status=status,
        objective=st["objective"],
        duals=duals,
        has_solution=has_solution,
        solver=name,
        version=version(name),
        seconds=time.perf_counter() - t0,
        message=st["message"],
        extra=extra,
        bound=st["bound"],
        termination_condition=st["termination"],
        solution_status=(SS.optimal if status is SolveStatus.OPTIMAL and has_solution
                         else SS.feasible if has_solution else SS.noSolution),
    )


def solve(backend, model, spec, name, problem_class, need_duals, time_limit, threads, tee,
          options) -> SolveOutcome:
    """Solve ``model`` once with a fresh legacy persistent interface."""
    t0 = time.perf_counter()
    opt = load(backend, model, name, spec, options)
    try:
        return run(backend, opt, name=name, spec=spec, need_duals=need_duals,
                   is_mip=problem_class.integer, time_limit=time_limit, threads=threads, tee=tee,
                   t0=t0, read_seconds=time.perf_counter() - t0)
    finally:
        release(opt)


def release(opt) -> None:
    """Free the solver's model (CPLEX environments are not freed by garbage collection alone)."""
    model = getattr(opt, "_solver_model", None)
    end = getattr(model, "end", None)
    if callable(end):
        try:
            end()
        except Exception:  # noqa: BLE001 - already freed
            pass
