"""HiGHS solves while another HiGHS solve still runs in the process.

highspy lets one solve run at a time in a process: its "solver running" lock belongs to the
``Highs`` class, not to the instance. A solve aidopt abandoned at its deadline (HiGHS's QP solver
can run on long after a cancel) therefore made every later solve of the process fail with
"Solver is already running" (12 FSV tests failed so, in a test worker that had abandoned a QP
shortly before). A later solve now waits for it, within its own time limit.
"""

from __future__ import annotations

import time

import numpy as np
import pyomo.environ as pyo
import pytest

from aidopt.solvers import solve_model

pytestmark = pytest.mark.xdist_group("highs-process")


def _busy_highs(seconds):
    """A real HiGHS solve (in highspy's solver thread) that lasts about ``seconds``: its logging
    callback sleeps."""
    import highspy

    a = highspy.Highs()
    a.setOptionValue("log_to_console", False)
    a.setOptionValue("presolve", "off")
    x = a.addVariables(range(3), lb=0, ub=1)
    a.addConstr(x[0] + x[1] + x[2] <= 2)
    a.changeColsCost(3, np.arange(3, dtype=np.int32), -np.ones(3))
    end = time.perf_counter() + seconds

    def slow(_event):
        while time.perf_counter() < end:
            time.sleep(0.02)

    a.cbLogging += slow
    a.startSolve()
    assert a.is_solver_running()
    return a


def _small_lp():
    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1], bounds=(0, 1))
    m.c = pyo.Constraint(expr=m.x[0] + m.x[1] <= 1.5)
    m.o = pyo.Objective(expr=-m.x[0] - 2 * m.x[1])
    return m


def test_a_solve_waits_for_another_highs_solve_of_the_process():
    a = _busy_highs(1.0)
    try:
        t = time.perf_counter()
        out = solve_model(_small_lp(), solver="highs", problem_class="LP")
        seconds = time.perf_counter() - t
    finally:
        a.joinSolve()
    assert out.status.value == "optimal", out.message
    assert abs(out.objective - (-2.5)) < 1e-9
    assert seconds > 0.5  # it waited for the other solve


def test_the_wait_for_another_solve_counts_against_the_time_limit():
    a = _busy_highs(3.0)
    try:
        t = time.perf_counter()
        out = solve_model(_small_lp(), solver="highs", problem_class="LP", time_limit=0.5)
        seconds = time.perf_counter() - t
    finally:
        a.cancelSolve()
        a.joinSolve()
    assert out.status.value == "time_limit" and not out.has_solution, out.message
    assert "another HiGHS solve" in out.message
    assert seconds < 0.5 + 1.0 + 1.0, seconds
