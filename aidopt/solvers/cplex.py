"""IBM CPLEX through Pyomo's legacy ``cplex_persistent`` interface (pip ``cplex``).

The pip wheel is the *Community Edition*: 1000 variables and 1000 constraints; beyond, CPLEX
stops with error 1016 ("Community Edition. Problem size limits exceeded"). The wheel has no call
that names its edition, so :func:`licence` probes it with a model of 1001 empty columns, which a
full licence solves in a millisecond and the community edition refuses with 1016.
Statuses are read from CPLEX itself (``solution.get_status()``), the MIP bound from
``solution.MIP.get_best_objective()``; CPLEX's row duals are d objective / d rhs for both senses
(Pyomo's convention, checked by finite differences in the tests).
"""

from __future__ import annotations

import contextlib
import math

from .status import SolveStatus, pyomo_enums

PYOMO_NAME = "cplex_persistent"
COMMUNITY_LIMIT = 1000

__all__ = ["licence", "solver_version"]


def solver_version() -> str:
    import cplex

    c = cplex.Cplex()
    try:
        return c.get_version()
    finally:
        c.end()


def _silent(c):
    for stream in (c.set_log_stream, c.set_results_stream, c.set_warning_stream, c.set_error_stream):
        stream(None)
    return c


def licence() -> str:
    """``'full'`` or ``'limited'`` (Community Edition), by a 1001-column probe."""
    import cplex
    from cplex.exceptions import CplexError, CplexSolverError

    c = _silent(cplex.Cplex())
    try:
        c.variables.add(lb=[0.0] * (COMMUNITY_LIMIT + 1))
        c.solve()
        return "full"
    except CplexSolverError as exc:
        return "limited" if exc.args[2] == 1016 else "no licence"
    except CplexError:
        return "no licence"
    finally:
        c.end()


def quiet():
    """Nothing to hide for CPLEX (the interface's streams are silenced per solve)."""
    return contextlib.nullcontext()


def set_limits(opt, time_limit, threads) -> None:
    """Set (or reset to CPLEX's defaults) the time limit and threads on the loaded model."""
    params = opt._solver_model.parameters
    if time_limit is None:
        params.timelimit.reset()
    else:
        params.timelimit.set(float(time_limit))
    if threads is not None:
        params.threads.set(int(threads))


def _status_table():
    TC, _ = pyomo_enums()
    S = SolveStatus
    table = {}
    for codes, value in [
        ((1, 101, 102), (S.OPTIMAL, TC.convergenceCriteriaSatisfied)),
        ((2, 118), (S.UNBOUNDED, TC.unbounded)),
        ((3, 103), (S.INFEASIBLE, TC.provenInfeasible)),
        ((4, 119), (S.INFEASIBLE_OR_UNBOUNDED, TC.infeasibleOrUnbounded)),
        ((10, 105, 106), (S.ITERATION_LIMIT, TC.iterationLimit)),
        ((11, 25, 107, 108, 131, 132), (S.TIME_LIMIT, TC.maxTimeLimit)),
        ((13, 113, 114), (S.INTERRUPTED, TC.interrupted)),
        ((12, 104), (S.FEASIBLE, TC.objectiveLimit)),
    ]:
        for code in codes:
            table[code] = value
    return table


def read_status(opt, is_mip: bool) -> dict:
    """Status, solution flag, objective and proved bound of the last solve."""
    cpx = opt._solver_model
    code = cpx.solution.get_status()
    status, tc = _status_table().get(code, (SolveStatus.ERROR, pyomo_enums()[0].error))
    has_solution = False
    if cpx.solution.get_solution_type() != cpx.solution.type.none:
        try:
            has_solution = bool(cpx.solution.is_primal_feasible())
        except Exception:  # noqa: BLE001 - no solution to ask about
            has_solution = False
    if status is SolveStatus.OPTIMAL and not has_solution:
        status = SolveStatus.ERROR
    if status is SolveStatus.FEASIBLE and not has_solution:
        status = SolveStatus.ERROR
    objective = float(cpx.solution.get_objective_value()) if has_solution else None
    bound = None
    if is_mip:
        try:
            b = float(cpx.solution.MIP.get_best_objective())
            bound = b if math.isfinite(b) and abs(b) < 1e74 else None
        except Exception:  # noqa: BLE001 - no bound known
            bound = None
    elif status is SolveStatus.OPTIMAL:
        bound = objective
    return {"status": status, "termination": tc, "has_solution": has_solution,
            "objective": objective, "bound": bound,
            "message": f"{code} {cpx.solution.get_status_string()}"}


def read_duals(opt, cons) -> list[float]:
    """Row duals of ``cons`` (loaded constraints) in Pyomo's convention."""
    names = [opt._pyomo_con_to_solver_con_map[c] for c in cons]
    return [float(d) for d in opt._solver_model.solution.get_dual_values(names)] if names else []
