"""HiGHS through ``highspy``: LPs, convex QPs and MILPs read from a Pyomo model by aidopt.

The model is read into a :class:`~aidopt.solvers.reader.LinearProgram` (the fast reader, or Pyomo's
standard-form compiler), passed to one ``highspy.Highs`` object (integrality and Hessian
included), solved, and the solution loaded back into the Pyomo variables. Row duals are HiGHS's
``row_dual``, which is d objective / d rhs for both senses: Pyomo's convention
(``test_dual_sign_convention`` checks it by finite differences). The same functions configure and
read the ``Highs`` object a persistent handle keeps (:mod:`aidopt.solvers.handles`).
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import threading
import time

import numpy as np

from .errors import SolverError, SolverOptionError
from .reader import LinearProgram
from .status import SolveOutcome, SolveStatus, pyomo_enums

__all__ = ["solve", "highs_version", "QP_TIME_GUARD"]

#: seconds a QP may run in HiGHS when the caller set no HiGHS time limit of its own: its QP
#: solver can stall (minutes on a 563 x 37 SVM dual that Clarabel solves in 0.07 s); a QP
#: stopped by this guard counts as a failed solve, so the run falls back to another solver
QP_TIME_GUARD = 30.0


def highs_version() -> str:
    import highspy

    return f"{highspy.HIGHS_VERSION_MAJOR}.{highspy.HIGHS_VERSION_MINOR}.{highspy.HIGHS_VERSION_PATCH}"


def solver_version() -> str:
    return highs_version()


def licence() -> str:
    return "full"


def _quiet_highs():
    """``highspy.Highs()`` without the banner HiGHS prints from C++ on its first construction in
    a process ("Running HiGHS ...": no option can stop it, the object does not exist yet), by
    pointing file descriptor 1 at /dev/null for the constructor only."""
    import highspy

    global _BANNER_SHOWN
    if _BANNER_SHOWN:
        return highspy.Highs()
    _BANNER_SHOWN = True
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no real stdout (e.g. some notebooks): construct as is
        return highspy.Highs()
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            return highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


_BANNER_SHOWN = False


def new_highs(*, threads=None, tee=False, options=None):
    """A ``highspy.Highs`` with aidopt's typed options and the caller's options set (the banner
    shown only with ``tee``)."""
    import highspy

    h = highspy.Highs() if tee else _quiet_highs()
    h.setOptionValue("output_flag", bool(tee))
    if threads is not None:
        h.setOptionValue("threads", int(threads))
    for key, val in (options or {}).items():
        if h.setOptionValue(key, val) == highspy.HighsStatus.kError:
            raise SolverOptionError(f"HiGHS rejected option {key}={val!r}")
    return h


def reset_scheduler() -> None:
    """Restart HiGHS's global thread scheduler (needed to change ``threads`` within a process)."""
    import highspy

    highspy.Highs.resetGlobalScheduler(True)


def set_time_limit(h, time_limit) -> None:
    h.setOptionValue("time_limit", math.inf if time_limit is None else float(time_limit))


def _finite(a):
    import highspy

    inf = highspy.kHighsInf
    return np.where(np.isinf(a), np.where(a > 0, inf, -inf), a)


def pass_program(h, prog: LinearProgram) -> None:
    """Load a read program (LP, QP or MILP) into ``h``."""
    import highspy

    n_rows, n_cols = prog.A.shape
    lp = highspy.HighsLp()
    lp.num_col_ = n_cols
    lp.num_row_ = n_rows
    lp.col_cost_ = prog.c
    lp.offset_ = prog.offset
    lp.col_lower_ = _finite(prog.col_lower)
    lp.col_upper_ = _finite(prog.col_upper)
    lp.row_lower_ = _finite(prog.row_lower)
    lp.row_upper_ = _finite(prog.row_upper)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = prog.A.indptr
    lp.a_matrix_.index_ = prog.A.indices
    lp.a_matrix_.value_ = prog.A.data
    if prog.integrality is not None:
        lp.integrality_ = [highspy.HighsVarType.kInteger if f else highspy.HighsVarType.kContinuous
                           for f in prog.integrality]
    if prog.maximize:
        lp.sense_ = highspy.ObjSense.kMaximize
    if h.passModel(lp) == highspy.HighsStatus.kError:
        raise SolverError("HiGHS rejected the model")
    if prog.Q is not None:
        pass_hessian(h, prog.Q, n_cols)


def pass_hessian(h, Q, n_cols) -> None:
    """Pass the lower triangle ``Q`` (csc) as the objective's Hessian (``None``: remove it)."""
    import highspy
    from scipy import sparse

    hessian = highspy.HighsHessian()
    hessian.dim_ = n_cols
    hessian.format_ = highspy.HessianFormat.kTriangular
    Q = sparse.csc_array((n_cols, n_cols)) if Q is None else Q
    hessian.start_ = Q.indptr
    hessian.index_ = Q.indices
    hessian.value_ = Q.data
    if h.passHessian(hessian) == highspy.HighsStatus.kError:
        raise SolverError("HiGHS rejected the objective's Hessian")


def _status(model_status, has_solution: bool):
    """(SolveStatus, TerminationCondition) of a HiGHS model status."""
    import highspy

    TC, _ = pyomo_enums()
    M = highspy.HighsModelStatus
    table = {
        M.kOptimal: (SolveStatus.OPTIMAL, TC.convergenceCriteriaSatisfied),
        M.kModelEmpty: (SolveStatus.OPTIMAL, TC.convergenceCriteriaSatisfied),
        M.kInfeasible: (SolveStatus.INFEASIBLE, TC.provenInfeasible),
        M.kUnboundedOrInfeasible: (SolveStatus.INFEASIBLE_OR_UNBOUNDED, TC.infeasibleOrUnbounded),
        M.kUnbounded: (SolveStatus.UNBOUNDED, TC.unbounded),
        M.kTimeLimit: (SolveStatus.TIME_LIMIT, TC.maxTimeLimit),
        M.kIterationLimit: (SolveStatus.ITERATION_LIMIT, TC.iterationLimit),
        M.kSolutionLimit: (SolveStatus.ITERATION_LIMIT, TC.iterationLimit),
        M.kInterrupt: (SolveStatus.INTERRUPTED, TC.interrupted),
    }
    if hasattr(M, "kHighsInterrupt"):
        table[M.kHighsInterrupt] = (SolveStatus.INTERRUPTED, TC.interrupted)
    if model_status in (M.kObjectiveBound, M.kObjectiveTarget):
        return (SolveStatus.FEASIBLE if has_solution else SolveStatus.ERROR), TC.objectiveLimit
    return table.get(model_status, (SolveStatus.ERROR, TC.error))


#: seconds a cancelled one-shot solve may take to stop before the caller returns without it
#: (:func:`_run_interruptible`)
CANCEL_GRACE = 1.0


def _run_interruptible(h, deadline: float | None = None, abandon: bool = False):
    """``h.run()``, but Ctrl-C stops HiGHS at once: the solve runs in highspy's solver thread with
    its user-interrupt callbacks on, and a ``KeyboardInterrupt`` in the waiting thread cancels it.
    HiGHS then ends with model status "interrupted" (mapped to ``SolveStatus.INTERRUPTED``: the run
    framework stops with the best solution so far). A plain ``h.run()`` holds the interpreter until
    the solve ends. ``deadline`` (seconds from now): cancel the solve then, in case HiGHS does not
    check its own time limit in time (its QP solver may not).

    HiGHS honours a cancel only where it looks for one: its QP solver on a dense 5,000 x 2,000 SVM
    dual ran 37 s past it. ``abandon`` (a one-shot solve, whose ``h`` is not used again): when
    the cancelled solve has not stopped :data:`CANCEL_GRACE` seconds later, return without it
    and let a daemon thread hold ``h`` until it ends (HiGHS must not be destroyed while its solver
    thread runs).

    Returns HiGHS's run status and whether the deadline, not Ctrl-C, cancelled the solve (HiGHS
    reports both as "interrupted"; the caller reports the first as a time limit); raises
    :class:`_Abandoned` when the solve was abandoned."""
    h.HandleUserInterrupt = True
    start = time.perf_counter()
    _start_when_free(h, deadline, start)
    cancelled = by_user = False
    cancelled_at = None
    while True:
        try:
            done, status = h.wait(0.1)
        except KeyboardInterrupt:
            h.cancelSolve()
            by_user = True
            cancelled_at = cancelled_at or time.perf_counter()
            continue
        if done:
            return status, cancelled and not by_user
        now = time.perf_counter()
        if deadline is not None and not cancelled and now - start > deadline + 1.0:
            h.cancelSolve()
            cancelled = True
            cancelled_at = cancelled_at or now
        if abandon and cancelled_at is not None and now - cancelled_at > CANCEL_GRACE:
            _hold_until_done(h)
            raise _Abandoned(cancelled and not by_user)


#: one thread at a time checks that no HiGHS solve runs and starts one (:func:`_start_when_free`)
_STARTING = threading.Lock()


def run_for(h, seconds: float | None, interrupted=KeyboardInterrupt):
    """Run ``h`` for at most ``seconds`` more (``None``: no limit) and return its model status,
    the time limit also when the driver cancelled it at ``seconds``
    (:func:`_run_interruptible`); Ctrl-C raises ``interrupted``. HiGHS's own limit counts the
    object's run time over all its runs, so it is set past the time already run."""
    import highspy

    set_time_limit(h, None if seconds is None else h.getRunTime() + max(seconds, 1e-3))
    late = _run_interruptible(h, seconds)[1]
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kInterrupt:
        if not late:
            raise interrupted
        status = highspy.HighsModelStatus.kTimeLimit
    return status


def _start_when_free(h, deadline: float | None, start: float) -> None:
    """``h.startSolve()`` once no other HiGHS solve runs in this process.

    highspy runs one solve at a time per process (its "solver running" lock belongs to the
    ``Highs`` class) and refuses to start a second: a solve abandoned at its deadline and still
    running would make every later solve fail. Wait for it instead, polling, until ``deadline``
    seconds (+ 1, as for the solve itself) after ``start``; then raise :class:`_Abandoned` (late),
    or (not late) on Ctrl-C. HiGHS's global thread scheduler is not safe for solves in two threads
    at once either, so the wait is also what keeps them apart."""
    while True:
        with _STARTING:
            if not h.is_solver_running():
                h.startSolve()
                return
        why = "waiting for another HiGHS solve of this process to end"
        try:
            if deadline is not None and time.perf_counter() - start > deadline + 1.0:
                raise _Abandoned(True, f"time limit reached {why}: returned without a solution")
            time.sleep(0.02)
        except KeyboardInterrupt:
            raise _Abandoned(False, f"interrupted {why}: returned without a solution") from None


def wait_until_free(h, seconds: float | None = None) -> bool:
    """Wait (at most ``seconds``) until no HiGHS solve runs in this process, for code that calls
    ``h.run()`` itself (:func:`_start_when_free`); whether none runs."""
    end = None if seconds is None else time.perf_counter() + seconds
    while h.is_solver_running():
        if end is not None and time.perf_counter() > end:
            return False
        time.sleep(0.02)
    return True


class _Abandoned(Exception):
    """A cancelled one-shot solve that had not stopped :data:`CANCEL_GRACE` seconds later, or a
    solve that never started (:func:`_start_when_free`); ``late``: the deadline, not Ctrl-C,
    stopped it."""

    def __init__(self, late: bool, message: str | None = None):
        super().__init__()
        self.late = late
        self.message = message or (
            f"HiGHS had not stopped {CANCEL_GRACE:g} s after it was cancelled "
            f"({'at its deadline' if late else 'Ctrl-C'}): returned without a solution")


def _hold_until_done(h) -> None:
    """Keep ``h`` alive in a daemon thread until its (cancelled) solve ends."""

    def wait():
        while not h.wait(1.0)[0]:
            pass

    threading.Thread(target=wait, name="aidopt-highs-cancelled", daemon=True).start()


def _run_to_a_status(h, is_mip: bool, deadline, abandon: bool):
    """Run ``h`` (:func:`_run_interruptible`), again where HiGHS needs it; ``(late, model
    status)``."""
    import highspy

    ran, late = _run_interruptible(h, deadline, abandon)
    if ran == highspy.HighsStatus.kError and \
            h.getModelStatus() == highspy.HighsModelStatus.kNotset:
        # HiGHS refuses to run when its global thread scheduler was started with another
        # ``threads`` in this process (e.g. threads=1 after a default run): restart it, once
        reset_scheduler()
        late = _run_interruptible(h, deadline, abandon)[1]
    model_status = h.getModelStatus()
    if not is_mip and model_status in (highspy.HighsModelStatus.kUnknown,
                                       highspy.HighsModelStatus.kUnboundedOrInfeasible):
        # an LP verdict HiGHS leaves open (presolve can stop at "unknown" or "infeasible or
        # unbounded" on small degenerate LPs): once more without presolve, for a definite status
        if h.getOptionValue("presolve")[1] != "off":
            h.setOptionValue("presolve", "off")
            h.clearSolver()
            late = _run_interruptible(h, deadline, abandon)[1]
            model_status = h.getModelStatus()
    return late, model_status


def run(h, columns, rows, *, need_duals: bool, is_mip: bool, t0: float, read_seconds: float,
        solver: str = "highs", extra: dict | None = None, deadline: float | None = None,
        abandon: bool = False) -> SolveOutcome:
    """Run ``h`` and return its outcome; load values into ``columns`` (Pyomo variables, in column
    order) and map row duals to ``rows`` (Pyomo constraints, in row order; a constraint that
    appears twice gets the sum). ``deadline`` and ``abandon``: :func:`_run_interruptible`."""
    import highspy
    from pyomo.common.collections import ComponentMap

    TC, SS = pyomo_enums()
    try:
        late, model_status = _run_to_a_status(h, is_mip, deadline, abandon)
    except _Abandoned as stop:
        return SolveOutcome(
            SolveStatus.TIME_LIMIT if stop.late else SolveStatus.INTERRUPTED, None, None, False,
            solver, highs_version(), time.perf_counter() - t0, stop.message,
            extra={"read_seconds": read_seconds, **(extra or {})})
    message = h.modelStatusToString(model_status)
    sol = h.getSolution()
    info = h.getInfo()
    has_solution = bool(sol.value_valid)
    status, tc = _status(model_status, has_solution)
    if late and status is SolveStatus.INTERRUPTED:  # our deadline stopped it, not Ctrl-C
        status, tc = SolveStatus.TIME_LIMIT, TC.maxTimeLimit
        message = "Time limit reached (cancelled at the deadline)"
    objective = None
    if has_solution:
        for var, val in zip(columns, sol.col_value, strict=True):
            var.set_value(val, skip_validation=True)
        objective = float(info.objective_function_value)
    elif status is SolveStatus.OPTIMAL and not columns:  # an empty model: its constant
        objective = float(h.getInfo().objective_function_value)
    bound = None
    if is_mip:
        b = float(info.mip_dual_bound)
        bound = b if math.isfinite(b) else None
    elif status is SolveStatus.OPTIMAL:
        # the dual objective of the returned dual solution: the bound an LP/QP optimum proves
        # (equal to the objective at a vertex; below it for an interior point without crossover)
        bound = objective
        try:
            status_dual, dual_value = h.getDualObjectiveValue()
            if status_dual == highspy.HighsStatus.kOk and math.isfinite(dual_value):
                bound = float(dual_value)
        except (AttributeError, TypeError, ValueError):  # older highspy: the objective
            pass
    duals = None
    if need_duals and not is_mip and sol.dual_valid and status is SolveStatus.OPTIMAL:
        duals = ComponentMap()
        for con, d in zip(rows, sol.row_dual, strict=True):
            duals[con] = duals.get(con, 0.0) + float(d)
    details = {
        "read_seconds": read_seconds,
        "simplex_iterations": int(info.simplex_iteration_count),
        "ipm_iterations": int(info.ipm_iteration_count),
        "qp_iterations": int(info.qp_iteration_count),
    }
    if is_mip:
        details.update(mip_gap_bound=bound, mip_gap=float(info.mip_gap),
                       mip_nodes=int(info.mip_node_count))
    details.update(extra or {})
    return SolveOutcome(
        status=status,
        objective=objective,
        duals=duals,
        has_solution=has_solution,
        solver=solver,
        version=highs_version(),
        seconds=time.perf_counter() - t0,
        message=message,
        extra=details,
        bound=bound,
        termination_condition=tc,
        solution_status=(SS.optimal if status is SolveStatus.OPTIMAL and has_solution
                         else SS.feasible if has_solution else SS.noSolution),
    )


def solve(prog: LinearProgram, t0, need_duals, time_limit, threads, tee, options) -> SolveOutcome:
    """Solve a program read from a Pyomo model with a fresh ``Highs`` and load its solution;
    ``t0`` is when reading the model started. ``time_limit`` counts from the call: passing the
    model to HiGHS (seconds on ten million nonzeros) is taken from it."""
    entered = time.perf_counter()
    h = new_highs(threads=threads, tee=tee, options=options)
    pass_program(h, prog)
    if time_limit is not None:
        time_limit -= time.perf_counter() - entered
        if time_limit <= 0:
            return SolveOutcome(SolveStatus.TIME_LIMIT, None, None, False, "highs", highs_version(),
                                time.perf_counter() - t0,
                                "the time limit was reached while passing the model to HiGHS")
    # HiGHS's QP solver can stall for minutes on QPs Clarabel solves in milliseconds: unless the
    # caller set HiGHS's own time_limit, a QP gets QP_TIME_GUARD seconds and then counts as failed
    # (so that the run falls back), not as the run's time limit
    guard = QP_TIME_GUARD if (prog.Q is not None and prog.n_integer == 0
                              and "time_limit" not in (options or {})) else None
    limit = time_limit if guard is None or (time_limit is not None and time_limit <= guard) \
        else guard
    if "time_limit" not in (options or {}):
        set_time_limit(h, limit)
    outcome = run(h, prog.columns, prog.rows, need_duals=need_duals, is_mip=prog.n_integer > 0,
                  t0=t0, read_seconds=time.perf_counter() - t0, deadline=limit, abandon=True)
    if limit is not None and limit == guard and outcome.status in (SolveStatus.TIME_LIMIT,
                                                                    SolveStatus.INTERRUPTED):
        return dataclasses.replace(
            outcome, status=SolveStatus.ERROR, termination_condition=None, solution_status=None,
            message=f"HiGHS's QP solver did not finish within aidopt's guard of {guard:g} s "
                    "(solver_options={'time_limit': ...} sets another)")
    return outcome
