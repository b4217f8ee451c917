"""Clarabel (interior point) for LPs and convex QPs read from a Pyomo model by aidopt.

Clarabel solves ``min x'Px/2 + q'x`` s.t. ``A x + s = b``, ``s`` in a cone, with dual ``z``
(``Px + q + A'z = 0``). Equality rows go to the zero cone, one-sided rows and finite column
bounds to the non-negative cone as ``a'x <= u`` or ``-a'x <= -l``. Then d objective / d u = -z and
d objective / d l = +z, which is Pyomo's convention (d objective / d rhs); a maximization is solved
as ``min -f`` and its duals negated back. "AlmostSolved" (reduced accuracy) is reported as
``error``, never as optimal.

Clarabel checks its time limit between iterations only, and one iteration of a dense model (its
KKT factorization) can take minutes: a 5,000 x 2,000 SVM dual took 127 s for its first. So the
setup and the solve run in a worker thread (Clarabel releases the GIL) watched from the calling
thread (:func:`_watched`): past the time limit and :data:`GRACE`, or at Ctrl-C, the call returns
without a solution, and Clarabel's termination callback stops the abandoned solve at its next
iteration.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from .errors import SolverOptionError
from .reader import LinearProgram
from .status import SolveOutcome, SolveStatus, pyomo_enums

__all__ = ["solve"]


def solver_version() -> str:
    import clarabel

    return clarabel.__version__


def licence() -> str:
    return "full"


def _status(label: str):
    TC, _ = pyomo_enums()
    return {
        "Solved": (SolveStatus.OPTIMAL, TC.convergenceCriteriaSatisfied),
        "PrimalInfeasible": (SolveStatus.INFEASIBLE, TC.provenInfeasible),
        "DualInfeasible": (SolveStatus.UNBOUNDED, TC.unbounded),
        "MaxIterations": (SolveStatus.ITERATION_LIMIT, TC.iterationLimit),
        "MaxTime": (SolveStatus.TIME_LIMIT, TC.maxTimeLimit),
        "CallbackTerminated": (SolveStatus.INTERRUPTED, TC.interrupted),
    }.get(label, (SolveStatus.ERROR, TC.error))


#: Clarabel settings for a solution that a scale-invariant certificate accepts: Clarabel's own
#: defaults (1e-8 absolute *or* relative gap) stop at an absolute gap of 1e-8, which is a large
#: relative error when the objective is small (an SVM on large features, scaled data)
TIGHT_GAP = {"tol_gap_rel": 1e-10, "tol_gap_abs": 1e-14}


#: seconds the calling thread waits past the time limit (or after Ctrl-C) for Clarabel to stop
#: by itself before it returns without it (:func:`_watched`)
GRACE = 1.0


def _watched(make, time_limit: float | None):
    """``make()`` (a ``clarabel.DefaultSolver``) and its ``solve()`` in a worker thread.

    The calling thread waits; at ``time_limit`` + :data:`GRACE` seconds, or at Ctrl-C, it asks
    Clarabel to stop (the termination callback, read at each iteration) and gives it
    :data:`GRACE` more seconds. Returns ``(solution, stop)``: ``stop`` is None, ``"time_limit"``
    or ``"interrupted"``; ``solution`` is None when Clarabel had not returned (the worker is
    left to end at its next iteration, holding its memory until then). An exception of the
    worker is raised here."""
    stop = threading.Event()
    out: dict = {}

    def work():
        try:
            solver = make()
            if hasattr(solver, "set_termination_callback"):  # clarabel >= 0.10
                solver.set_termination_callback(lambda info: stop.is_set())
            if not stop.is_set():
                out["solution"] = solver.solve()
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread
            out["error"] = exc

    worker = threading.Thread(target=work, name="aidopt-clarabel", daemon=True)
    worker.start()
    give_up = None if time_limit is None else time.perf_counter() + time_limit + GRACE
    cause = None
    while worker.is_alive():
        try:
            worker.join(0.1)
        except KeyboardInterrupt:
            cause = "interrupted"
            break
        if give_up is not None and time.perf_counter() >= give_up:
            cause = "time_limit"
            break
    if cause is not None:
        stop.set()
        worker.join(GRACE)
        if worker.is_alive():
            return None, cause
    if "error" in out:
        raise out["error"]
    return out.get("solution"), cause


def solve(prog: LinearProgram, t0, need_duals, time_limit, threads, tee, options) -> SolveOutcome:
    """Solve an LP/QP read from a Pyomo model with Clarabel and load the solution into it."""
    import clarabel
    from pyomo.common.collections import ComponentMap
    from scipy import sparse

    entered = time.perf_counter()
    _, SS = pyomo_enums()
    sign = -1.0 if prog.maximize else 1.0
    n_cols = prog.A.shape[1]
    A = sparse.csr_array(prog.A)
    lo, up = prog.row_lower, prog.row_upper
    eq = np.flatnonzero(np.isfinite(lo) & (lo == up))
    ub = np.flatnonzero(np.isfinite(up) & ~(lo == up))
    lb = np.flatnonzero(np.isfinite(lo) & ~(lo == up))
    eye = sparse.identity(n_cols, format="csr")
    cub = np.flatnonzero(np.isfinite(prog.col_upper))
    clb = np.flatnonzero(np.isfinite(prog.col_lower))
    blocks = [A[eq], A[ub], -A[lb], eye[cub], -eye[clb]]
    rhs = [up[eq], up[ub], -lo[lb], prog.col_upper[cub], -prog.col_lower[clb]]
    M = sparse.vstack(blocks, format="csc")
    b = np.concatenate(rhs)
    P = sparse.csc_matrix((n_cols, n_cols)) if prog.Q is None else sparse.triu(
        sparse.csc_matrix(prog.Q).T * sign, format="csc")
    q = sign * prog.c
    cones = []
    if eq.size:
        cones.append(clarabel.ZeroConeT(int(eq.size)))
    n_ineq = b.size - eq.size
    if n_ineq:
        cones.append(clarabel.NonnegativeConeT(int(n_ineq)))
    if time_limit is not None:  # the limit counts from the call: the stacking above is taken
        time_limit -= time.perf_counter() - entered
        if time_limit <= 0:
            return SolveOutcome(SolveStatus.TIME_LIMIT, None, None, False, "clarabel",
                                clarabel.__version__, time.perf_counter() - t0,
                                "the time limit was reached before Clarabel started")
    settings = clarabel.DefaultSettings()
    settings.verbose = bool(tee)
    if time_limit is not None:
        settings.time_limit = float(time_limit)
    if threads is not None and hasattr(settings, "max_threads"):
        settings.max_threads = int(threads)
    for key, val in options.items():
        if not hasattr(settings, key):
            raise SolverOptionError(f"clarabel has no setting {key!r}")
        setattr(settings, key, val)
    read_seconds = time.perf_counter() - t0
    started = time.perf_counter()
    sol, stop = _watched(lambda: clarabel.DefaultSolver(
        sparse.csc_matrix(P), q, sparse.csc_matrix(M), b, cones, settings), time_limit)
    if sol is None:  # abandoned at the time limit or at Ctrl-C
        status = SolveStatus.TIME_LIMIT if stop == "time_limit" else SolveStatus.INTERRUPTED
        return SolveOutcome(
            status=status, objective=None, duals=None, has_solution=False, solver="clarabel",
            version=clarabel.__version__, seconds=time.perf_counter() - t0,
            message=(f"returned without a solution {GRACE:g} s past the time limit: Clarabel had "
                     "not finished its iteration" if stop == "time_limit" else
                     "interrupted (Ctrl-C) during Clarabel's setup or an iteration"),
            extra={"read_seconds": read_seconds})
    label = str(sol.status).split(".")[-1]
    if stop == "interrupted":  # Ctrl-C stops the caller's run even when the solve just ended
        label = "CallbackTerminated"
    elif label == "CallbackTerminated" and stop == "time_limit":
        label = "MaxTime"
    if (label.startswith("Almost") and time_limit is not None
            and time.perf_counter() - started >= 0.9 * time_limit):
        label = "MaxTime"  # cut off by the time limit, where Clarabel reports "AlmostSolved"
    status, tc = _status(label)
    x = np.asarray(sol.x, dtype=float)
    has_solution = status in (SolveStatus.OPTIMAL, SolveStatus.TIME_LIMIT,
                              SolveStatus.ITERATION_LIMIT) and x.size == n_cols
    objective = None
    if has_solution:
        for var, val in zip(prog.columns, x.tolist(), strict=True):
            var.set_value(val, skip_validation=True)
        objective = sign * float(sol.obj_val) + prog.offset
    duals = None
    if need_duals and status is SolveStatus.OPTIMAL:
        z = np.asarray(sol.z, dtype=float)
        k_eq, k_ub = eq.size, eq.size + ub.size
        row_dual = np.zeros(len(prog.rows))
        np.add.at(row_dual, eq, -z[:k_eq])
        np.add.at(row_dual, ub, -z[k_eq:k_ub])
        np.add.at(row_dual, lb, z[k_ub:k_ub + lb.size])
        row_dual *= sign
        duals = ComponentMap()
        for con, d in zip(prog.rows, row_dual.tolist(), strict=True):
            duals[con] = duals.get(con, 0.0) + d
    return SolveOutcome(
        status=status,
        objective=objective,
        duals=duals,
        has_solution=has_solution,
        solver="clarabel",
        version=clarabel.__version__,
        seconds=time.perf_counter() - t0,
        message=label,
        extra={"read_seconds": read_seconds, "ipm_iterations": int(sol.iterations)},
        # the dual objective: at an interior point's stop it is at most the primal value
        bound=(sign * float(sol.obj_val_dual) + prog.offset) if status is SolveStatus.OPTIMAL
        else None,
        termination_condition=tc,
        # an interior point stopped early need not be feasible
        solution_status=(SS.optimal if status is SolveStatus.OPTIMAL
                         else SS.unknown if has_solution else SS.noSolution),
    )
