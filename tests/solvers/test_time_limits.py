"""A time limit always holds: every installed MIP solver returns within ``time_limit + 10`` s.

Each solve runs in a child process (a solver that hangs must fail the test, not the suite). The
SCIP case is the one that hung: Pyomo's ``scip_direct`` captures output through pipes while
PySCIPOpt's ``optimize`` holds the GIL, so a solve writing more than a pipe buffer (here full
verbosity, a line per node) blocked forever in a pipe write.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import numpy as np
import pytest

from aidopt import solvers

LIMIT = 2.0
GRACE = 10.0

_CHILD = r"""
import json, sys, time
import numpy as np, pyomo.environ as pyo
from aidopt.solvers import solve_model

solver, limit, options = sys.argv[1], float(sys.argv[2]), json.loads(sys.argv[3])
rng = np.random.default_rng(0)
n, k = 300, 30                      # a multi-dimensional knapsack no solver closes in seconds
W = rng.integers(100, 1000, (k, n)); v = rng.integers(100, 1000, n)
m = pyo.ConcreteModel()
m.x = pyo.Var(range(n), domain=pyo.Binary)
m.c = pyo.Constraint(range(k), rule=lambda m, j: sum(int(W[j, i]) * m.x[i] for i in range(n))
                     <= int(W[j].sum() // 2))
m.o = pyo.Objective(expr=sum(int(v[i]) * m.x[i] for i in range(n)), sense=pyo.maximize)
t = time.perf_counter()
out = solve_model(m, solver=solver, problem_class="MILP", time_limit=limit, options=options)
print(json.dumps({"seconds": time.perf_counter() - t, "status": out.status.value,
                  "objective": out.objective}))
"""


def _installed(name):
    return solvers.availability(name) in ("full", "limited")


CASES = [("highs", {}), ("scip", {}),
         # full verbosity, a display line per node: megabytes of captured output
         ("scip", {"display/verblevel": 5, "display/freq": 1}),
         ("gurobi", {}), ("cplex", {}), ("xpress", {})]


@pytest.mark.parametrize("solver,options", CASES, ids=[f"{s}-{i}" for i, (s, _) in enumerate(CASES)])
def test_mip_solve_returns_within_its_time_limit(solver, options):
    if not _installed(solver):
        pytest.skip(f"{solver} not installed")
    try:
        proc = subprocess.run([sys.executable, "-c", _CHILD, solver, str(LIMIT), json.dumps(options)],
                              capture_output=True, text=True, timeout=LIMIT + GRACE + 30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{solver} with time_limit={LIMIT} did not return (killed after "
                    f"{LIMIT + GRACE + 30} s)")
    if proc.returncode != 0 and "licen" in proc.stderr.lower():
        pytest.skip(f"{solver}: licence refuses the model")
    assert proc.returncode == 0, proc.stderr[-2000:]
    # the child's JSON line; SCIP's C-level output (full verbosity) can be flushed after it
    got = json.loads(next(line for line in reversed(proc.stdout.splitlines())
                          if line.startswith('{"seconds"')))
    assert got["seconds"] <= LIMIT + GRACE, got
    assert got["status"] in ("time_limit", "optimal", "feasible"), got


@pytest.mark.parametrize("fire_at", [1.0, -100.0])
def test_scip_watchdog_stops_an_overrun_and_reports_a_time_limit(monkeypatch, fire_at):
    """The watchdog interrupts SCIP past its limit (forced here by a negative grace: 1 s into a
    20 s limit, or at once, before SCIP's solve has begun, when SCIP clears a single interrupt)
    and the solve reports a time limit, not a user interrupt."""
    if not _installed("scip"):
        pytest.skip("scip not installed")
    import time

    import numpy as np
    import pyomo.environ as pyo

    from aidopt.solvers import scip as S
    from aidopt.solvers import solve_model

    limit = 20.0
    monkeypatch.setattr(S, "WATCHDOG_GRACE", fire_at - limit)
    rng = np.random.default_rng(1)
    n, k = 300, 30
    W = rng.integers(100, 1000, (k, n))
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Binary)
    m.c = pyo.Constraint(range(k), rule=lambda m, j: sum(int(W[j, i]) * m.x[i] for i in range(n))
                         <= int(W[j].sum() // 2))
    m.o = pyo.Objective(expr=sum(int(rng.integers(100, 1000)) * m.x[i] for i in range(n)),
                        sense=pyo.maximize)
    t = time.perf_counter()
    out = solve_model(m, solver="scip", problem_class="MILP", time_limit=limit)
    assert time.perf_counter() - t < limit / 2  # SCIP alone would run to its 20 s limit
    assert out.status.value == "time_limit"


# ----------------------------------------------------------------------------- LP / QP solves
def _small_lp():
    from aidopt.models import lp_svm

    rng = np.random.default_rng(0)
    y = np.where(rng.random(60) < 0.5, 1.0, -1.0)
    return lp_svm.create_instance(rng.normal(size=(60, 4)) + y[:, None], y, regularizer="l1")


@pytest.mark.parametrize("solver", ["highs", "clarabel"])
def test_reading_the_model_counts_against_the_time_limit(monkeypatch, solver):
    """A read that outlasts the limit: the solver is never called (it got the whole limit after
    the read before)."""
    from aidopt.solvers import solve as solve_module

    real = solve_module._read_linear_expressions

    def slow(model, *args, **kwargs):
        time.sleep(0.4)
        return real(model, *args, **kwargs)

    monkeypatch.setattr(solve_module, "_read_linear_expressions", slow)
    monkeypatch.setattr(solve_module, "backend_module",
                        lambda name: pytest.fail("the solver was called"))
    out = solvers.solve_model(_small_lp(), solver, time_limit=0.2)
    assert out.status == "time_limit" and not out.has_solution
    assert "while reading the model" in out.message


def test_the_reader_stops_at_its_deadline():
    from aidopt.solvers.reader import ReadTimeLimit, _read_linear_expressions

    model = _small_lp()
    assert _read_linear_expressions(model, deadline=time.perf_counter() + 3600) is not None
    with pytest.raises(ReadTimeLimit):
        _read_linear_expressions(model, deadline=time.perf_counter() - 1.0)


def test_passing_the_model_to_highs_counts_against_the_time_limit(monkeypatch):
    from aidopt.solvers import highs as H

    real = H.pass_program

    def slow(h, prog):
        time.sleep(0.4)
        real(h, prog)

    monkeypatch.setattr(H, "pass_program", slow)
    monkeypatch.setattr(H, "run", lambda *a, **k: pytest.fail("HiGHS was run"))
    out = solvers.solve_model(_small_lp(), "highs", time_limit=0.3)
    assert out.status == "time_limit" and "passing the model to HiGHS" in out.message


class _SlowClarabel:
    """A real ``clarabel.DefaultSolver`` whose ``solve`` first sleeps ``delay`` seconds (an
    iteration longer than the time limit, as the first one of a dense 5,000 x 2,000 SVM dual)."""

    def __init__(self, real, delay, *args):
        self._solver, self._delay = real(*args), delay

    def set_termination_callback(self, callback):
        self._solver.set_termination_callback(callback)

    def solve(self):
        time.sleep(self._delay)
        return self._solver.solve()


def _slow_clarabel(monkeypatch, delay):
    import clarabel

    real = clarabel.DefaultSolver
    monkeypatch.setattr(clarabel, "DefaultSolver", lambda *a: _SlowClarabel(real, delay, *a))


def test_clarabel_returns_at_its_limit_when_an_iteration_outlasts_it(monkeypatch):
    from aidopt.solvers import clarabel as C

    _slow_clarabel(monkeypatch, 6.0)
    model = _small_lp()
    t = time.perf_counter()
    out = solvers.solve_model(model, "clarabel", time_limit=0.5)
    seconds = time.perf_counter() - t
    assert out.status == "time_limit" and not out.has_solution
    assert seconds < 0.5 + 2 * C.GRACE + 1.0, seconds


def test_clarabel_without_a_limit_still_solves_in_its_worker():
    out = solvers.solve_model(_small_lp(), "clarabel", need_duals=True)
    assert out.optimal and out.duals is not None


def test_real_ctrl_c_stops_a_long_clarabel_iteration_promptly(monkeypatch):
    """SIGINT while Clarabel is inside a long iteration: the call returns ``interrupted`` at
    once (before, the signal waited for the iteration to end)."""
    import os
    import signal
    import threading

    _slow_clarabel(monkeypatch, 6.0)
    armed, sent = [True], []

    def handler(signum, frame):  # Python's own Ctrl-C, but only while the solve is going
        if armed[0]:
            raise KeyboardInterrupt

    def fire():
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    previous = signal.signal(signal.SIGINT, handler)
    timer = threading.Timer(1.0, fire)
    try:
        timer.start()
        out = solvers.solve_model(_small_lp(), "clarabel")
        done = time.perf_counter()
    except KeyboardInterrupt:  # never abort the test session
        pytest.fail("Ctrl-C escaped the solve")
    finally:
        armed[0] = False
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, previous)
    assert sent and out.status == "interrupted" and not out.has_solution
    assert done - sent[0] < 2.5, done - sent[0]


class _DeafHighs:
    """A ``highspy.Highs`` stand-in whose solve ignores a cancel for ``deaf`` seconds (HiGHS's QP
    solver ran 37 s past its cancel on a dense 5,000 x 2,000 SVM dual)."""

    HandleUserInterrupt = False

    def __init__(self, deaf):
        self.deaf, self.cancelled_at, self.waits_after = deaf, None, 0

    def is_solver_running(self):  # no other solve of the process runs
        return False

    def startSolve(self):
        pass

    def cancelSolve(self):
        self.cancelled_at = self.cancelled_at or time.perf_counter()

    def wait(self, timeout):
        time.sleep(timeout)
        if self.cancelled_at is not None:
            self.waits_after += 1
        done = self.cancelled_at is not None and time.perf_counter() - self.cancelled_at > self.deaf
        return done, None


def test_a_one_shot_highs_solve_deaf_to_its_cancel_is_abandoned():
    """Cancelled at its deadline (+ 1 s) and still running CANCEL_GRACE later: the solve returns
    a time limit without a solution; a daemon thread waits for HiGHS to end (it waited)."""
    import threading

    from aidopt.solvers import highs as H
    from aidopt.solvers.status import pyomo_enums

    pyomo_enums()  # imported before the clock starts
    h = _DeafHighs(deaf=1.5)
    t = time.perf_counter()
    out = H.run(h, [], [], need_duals=False, is_mip=False, t0=t, read_seconds=0.0,
                deadline=0.1, abandon=True)
    seconds = time.perf_counter() - t
    assert out.status == "time_limit" and not out.has_solution and "cancelled" in out.message
    assert seconds < 0.1 + 1.0 + H.CANCEL_GRACE + 1.0, seconds
    holder = [th for th in threading.enumerate() if th.name == "aidopt-highs-cancelled"]
    assert holder
    for th in holder:
        th.join(10)
    assert h.waits_after > 0 and time.perf_counter() - h.cancelled_at > h.deaf
