"""One status vocabulary, Pyomo's enums on every outcome, proved bounds."""

from __future__ import annotations

import math

import pyomo.environ as pyo
import pytest
from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

from aidopt import solvers
from aidopt.solvers import ProblemClass, SolveOutcome, SolveStatus, solve_model
from tests.conftest import solver_params
from tests.solvers.test_classes import binary_model

TC = TerminationCondition


def test_status_is_a_str_enum():
    out = SolveOutcome("time_limit", None, None, False, "highs", "", 0.0)
    assert out.status is SolveStatus.TIME_LIMIT and out.status == "time_limit"
    assert f"{out.status}" == "time_limit"
    assert out.termination_condition is TC.maxTimeLimit
    assert out.solution_status is SolutionStatus.noSolution
    assert not out.optimal
    assert {s.value for s in SolveStatus} == {
        "optimal", "feasible", "time_limit", "iteration_limit", "infeasible", "unbounded",
        "infeasible_or_unbounded", "interrupted", "licence_limit", "error"}


def test_outcome_keeps_a_callers_own_label():
    out = SolveOutcome("refused", None, None, False, "gurobi", "", 0.0, "too large")
    assert out.status == "refused" and out.termination_condition is TC.unknown


def test_time_limit_zero_returns_without_solving():
    out = solve_model(binary_model(), "highs", time_limit=0.0)
    assert out.status is SolveStatus.TIME_LIMIT and not out.has_solution and out.seconds == 0.0


def _infeasible():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.y = pyo.Var(bounds=(0, 1))
    m.c = pyo.Constraint(expr=m.x + m.y >= 3)
    m.o = pyo.Objective(expr=m.x + m.y)
    return m


def _unbounded():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, None))
    m.y = pyo.Var(bounds=(0, None))
    m.c = pyo.Constraint(expr=m.x - m.y <= 1)
    m.o = pyo.Objective(expr=-m.x - m.y)
    return m


@pytest.mark.parametrize("solver", solver_params(ProblemClass.LP))
def test_infeasible_lp(solver):
    out = solve_model(_infeasible(), solver)
    assert out.status in (SolveStatus.INFEASIBLE, SolveStatus.INFEASIBLE_OR_UNBOUNDED)
    assert out.termination_condition in (TC.provenInfeasible, TC.infeasibleOrUnbounded)
    assert not out.has_solution and out.objective is None and out.bound is None
    assert out.solution_status is SolutionStatus.noSolution
    assert out.solver == solver


@pytest.mark.parametrize("solver", solver_params(ProblemClass.LP))
def test_unbounded_lp(solver):
    out = solve_model(_unbounded(), solver)
    assert out.status in (SolveStatus.UNBOUNDED, SolveStatus.INFEASIBLE_OR_UNBOUNDED)
    assert out.termination_condition in (TC.unbounded, TC.infeasibleOrUnbounded)
    assert not out.optimal


@pytest.mark.parametrize("solver", solver_params(ProblemClass.LP))
def test_optimal_lp_enums_and_bound(solver):
    m = _unbounded()
    m.x.setub(2)
    m.y.setub(5)
    out = solve_model(m, solver)
    assert out.optimal
    assert out.termination_condition is TC.convergenceCriteriaSatisfied
    assert out.solution_status is SolutionStatus.optimal
    assert out.objective == pytest.approx(-7.0, abs=1e-6)
    assert out.bound == pytest.approx(out.objective)
    assert out.solver == solver and out.version


@pytest.mark.parametrize("solver", solver_params(ProblemClass.MILP))
def test_milp_bound_and_legacy_key(solver):
    out = solve_model(binary_model(), solver)
    assert out.optimal and out.bound is not None
    assert out.bound <= out.objective + 1e-6  # a lower bound for a minimization
    assert out.extra["mip_gap_bound"] == out.bound


def market_split(m_rows=4, n=40, seed=0):
    """A market-split MILP (Cornuejols & Dawande): min total slack of sum_j a_ij x_j = d_i with
    binary x; small but far beyond one second of branch and bound for any solver."""
    import numpy as np

    rng = np.random.default_rng(seed)
    a = rng.integers(0, 100, size=(m_rows, n))
    d = a.sum(axis=1) // 2
    model = pyo.ConcreteModel()
    model.I = pyo.RangeSet(0, m_rows - 1)
    model.J = pyo.RangeSet(0, n - 1)
    model.x = pyo.Var(model.J, within=pyo.Binary)
    model.sp = pyo.Var(model.I, bounds=(0, None))
    model.sm = pyo.Var(model.I, bounds=(0, None))
    model.c = pyo.Constraint(model.I, rule=lambda mm, i: sum(int(a[i, j]) * mm.x[j] for j in mm.J)
                             + mm.sp[i] - mm.sm[i] == int(d[i]))
    model.o = pyo.Objective(expr=sum(model.sp[i] + model.sm[i] for i in model.I))
    return model


@pytest.mark.parametrize("solver", solver_params(ProblemClass.MILP))
def test_time_limited_milp_reports_time_limit_and_a_bound(solver):
    out = solve_model(market_split(), solver, time_limit=1.0)
    if out.optimal:  # pragma: no cover - a solver that cracks it within a second
        pytest.skip(f"{solver} solved the market-split instance within the time limit")
    assert out.status is SolveStatus.TIME_LIMIT, out.message
    assert out.termination_condition is TC.maxTimeLimit
    assert out.bound is not None and math.isfinite(out.bound) and out.bound >= -1e-6
    if out.has_solution:
        assert out.solution_status is SolutionStatus.feasible
        assert out.bound <= out.objective + 1e-6


def test_solver_name_is_the_one_that_ran():
    assert solve_model(binary_model(), "HiGHS").solver == "highs"
    if solvers.availability("cplex") in ("full", "limited"):
        out = solve_model(binary_model(), "cplex_direct")  # Pyomo's legacy factory
        assert out.solver == "cplex_direct" and out.optimal
        assert out.objective == pytest.approx(2.5) and out.bound == pytest.approx(2.5)
