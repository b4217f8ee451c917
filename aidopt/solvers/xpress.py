"""FICO Xpress through Pyomo's legacy ``xpress_persistent`` interface (pip ``xpress``).

Without a licence file (``XPAUTH_PATH``) the pip wheel runs on its bundled *community licence*:
5000 rows plus columns in total; beyond, Xpress stops with error 120 ("Problem has too many rows
and columns. The maximum is 5000"). ``xpress.init()`` only says so in a ``LicenseWarning`` emitted
once per process, so :func:`licence` probes a model of 5001 empty columns instead (a few
milliseconds): a full licence solves it, the community licence refuses it.
Statuses are read from Xpress itself (``SOLVESTATUS``, ``SOLSTATUS``, ``STOPSTATUS``), the MIP
bound from ``BESTBOUND``; Xpress's duals are d objective / d rhs for both senses (Pyomo's
convention, checked by finite differences in the tests).
"""

from __future__ import annotations

import contextlib
import math
import warnings

from .status import SolveStatus, pyomo_enums

PYOMO_NAME = "xpress_persistent"
COMMUNITY_TOTAL = 5000

#: Xpress's barrier stops at a relative duality gap of about 1e-6 by default (``BARGAPSTOP``),
#: which leaves QP optima that AID's certificates (tolerance 1e-6) cannot verify (measured: a
#: 2-norm SVM QP with gap 4.6e-6); a caller's own ``bargapstop`` wins
DEFAULT_OPTIONS = {"bargapstop": 1e-10}

__all__ = ["licence", "solver_version"]


@contextlib.contextmanager
def quiet():
    """Hide the community-licence notice and Pyomo's deprecated-call warning of the wheel."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Community license.*")
        warnings.filterwarnings("ignore", message=".*getVersion.*", category=DeprecationWarning)
        warnings.filterwarnings("ignore", message=".*Deprecated in Xpress.*")
        yield


def solver_version() -> str:
    with quiet():
        import xpress

        return str(getattr(xpress, "__version__", "")) or ".".join(
            str(p) for p in xpress.getVersionNumbers())


def licence() -> str:
    """``'full'``, ``'limited'`` (community licence) or ``'no licence'``, by a 5001-column probe."""
    with quiet():
        import xpress

        try:
            xpress.init()
            p = xpress.problem()
            p.controls.outputlog = 0
            p.addVariables(COMMUNITY_TOTAL + 1, lb=0.0, ub=1.0)
            p.optimize()
        except Exception as exc:  # noqa: BLE001 - the probe's error says which case it is
            text = str(exc).lower()
            return "limited" if "too many rows and columns" in text else "no licence"
        return "full"


def set_limits(opt, time_limit, threads) -> None:
    """Set (or reset to Xpress's default) the time limit and threads on the loaded model."""
    prob = opt._solver_model
    prob.setControl("timelimit", 1e20 if time_limit is None else float(time_limit))
    if threads is not None:
        prob.setControl("threads", int(threads))


def read_status(opt, is_mip: bool) -> dict:
    """Status, solution flag, objective and proved bound of the last solve."""
    import xpress

    TC, _ = pyomo_enums()
    S = SolveStatus
    attrs = opt._solver_model.attributes
    solve, sol, stop = attrs.solvestatus, attrs.solstatus, attrs.stopstatus
    has_solution = sol in (xpress.SolStatus.OPTIMAL, xpress.SolStatus.FEASIBLE)
    if solve == xpress.SolveStatus.COMPLETED:
        status, tc = {
            xpress.SolStatus.OPTIMAL: (S.OPTIMAL, TC.convergenceCriteriaSatisfied),
            xpress.SolStatus.INFEASIBLE: (S.INFEASIBLE, TC.provenInfeasible),
            xpress.SolStatus.UNBOUNDED: (S.UNBOUNDED, TC.unbounded),
            xpress.SolStatus.FEASIBLE: (S.FEASIBLE, TC.unknown),
        }.get(sol, (S.ERROR, TC.error))
    elif solve == xpress.SolveStatus.STOPPED:
        T = xpress.StopType
        status, tc = {
            T.TIMELIMIT: (S.TIME_LIMIT, TC.maxTimeLimit),
            T.WORKLIMIT: (S.TIME_LIMIT, TC.maxTimeLimit),
            T.ITERLIMIT: (S.ITERATION_LIMIT, TC.iterationLimit),
            T.NODELIMIT: (S.ITERATION_LIMIT, TC.iterationLimit),
            T.SOLLIMIT: (S.FEASIBLE, TC.iterationLimit),
            T.MIPGAP: ((S.OPTIMAL if sol == xpress.SolStatus.OPTIMAL else S.FEASIBLE),
                       TC.convergenceCriteriaSatisfied),
            T.CTRLC: (S.INTERRUPTED, TC.interrupted),
            T.USER: (S.INTERRUPTED, TC.interrupted),
            T.LICENSELOST: (S.LICENCE_LIMIT, TC.licensingProblems),
        }.get(stop, (S.ERROR, TC.error))
    else:
        status, tc = S.ERROR, TC.error
    if status in (S.OPTIMAL, S.FEASIBLE) and not has_solution:
        status, tc = S.ERROR, TC.error
    objective = float(attrs.objval) if has_solution else None
    bound = None
    if is_mip:
        try:
            b = float(attrs.bestbound)
            bound = b if math.isfinite(b) and abs(b) < 1e39 else None
        except Exception:  # noqa: BLE001 - no bound known
            bound = None
    elif status is S.OPTIMAL:
        bound = objective
    return {"status": status, "termination": tc, "has_solution": has_solution,
            "objective": objective, "bound": bound,
            "message": f"{getattr(solve, 'name', solve)}/{getattr(sol, 'name', sol)}/"
                       f"{getattr(stop, 'name', stop)}"}


def read_duals(opt, cons) -> list[float]:
    """Row duals of ``cons`` (loaded constraints) in Pyomo's convention."""
    rows = [opt._pyomo_con_to_solver_con_map[c] for c in cons]
    return [float(d) for d in opt._getDuals(opt._solver_model, rows)] if rows else []
