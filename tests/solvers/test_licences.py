"""Size-limited licences are checked *before* the solver is called, with a readable error."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from aidopt import solvers
from aidopt.solvers import LicenceLimitError, ProblemClass, SizeLimits, check_solver, solve_model
from aidopt.solvers.contrib import licence_error
from aidopt.solvers.registry import check_licence


def _limited(name):
    if solvers.availability(name) != "limited":
        pytest.skip(f"needs the size-limited pip licence of {name}")


def lp(n_vars, n_cons, quadratic=False):
    """A trivial feasible LP (or QP) with exactly n_vars variables and n_cons constraints."""
    m = pyo.ConcreteModel()
    m.J = pyo.RangeSet(0, n_vars - 1)
    m.I = pyo.RangeSet(0, n_cons - 1)
    m.x = pyo.Var(m.J, bounds=(0, 1))
    m.c = pyo.Constraint(m.I, rule=lambda mm, i: mm.x[i % n_vars] + mm.x[(i + 1) % n_vars] >= 0.5)
    m.o = pyo.Objective(expr=sum(m.x[j] for j in m.J) + (m.x[0] ** 2 if quadratic else 0))
    return m


@pytest.fixture
def no_solver_call(monkeypatch):
    """Make every backend's solve fail loudly: a licence error must come before it."""
    from aidopt.solvers import contrib, direct

    def boom(*args, **kwargs):
        raise AssertionError("the solver was called")

    monkeypatch.setattr(contrib, "solve", boom)
    monkeypatch.setattr(direct, "solve", boom)


@pytest.mark.parametrize("solver, n_vars, n_cons, match", [
    ("gurobi", 2001, 10, "2001 variables > 2000"),
    ("gurobi", 100, 2001, "2001 constraints > 2000"),
    ("gurobi", 201, 10, "201 variables in a model with quadratic terms > 200"),
    ("cplex", 1001, 10, "1001 variables > 1000"),
    ("cplex", 100, 1001, "1001 constraints > 1000"),
    ("xpress", 3000, 2500, "3000 variables \\+ 2500 constraints = 5500 > 5000 in total"),
    ("xpress", 150, 60, "= 210 > 200 in total for a model with quadratic terms"),
])
def test_licence_checked_before_the_solve(solver, n_vars, n_cons, match, no_solver_call):
    _limited(solver)
    quadratic = "quadratic" in match
    with pytest.raises(LicenceLimitError, match=match) as err:
        solve_model(lp(n_vars, n_cons, quadratic), solver)
    text = str(err.value)
    assert "size-limited licence" in text and "Use a full licence" in text and "AID" in text
    assert err.value.solver == solver and err.value.limits == solvers.SOLVERS[solver].limited_licence
    assert isinstance(err.value, solvers.SolverCapabilityError)  # existing handlers still catch it


@pytest.mark.parametrize("solver, n_vars, n_cons", [("cplex", 1000, 1000), ("xpress", 2500, 2500)])
def test_model_at_the_limit_solves(solver, n_vars, n_cons):
    _limited(solver)
    out = solve_model(lp(n_vars, n_cons), solver)
    assert out.optimal, out.message


def test_check_solver_and_size_limits():
    lim = SizeLimits(max_vars=5000, max_cons=5000, max_total=5000, max_quad_total=200)
    assert lim.violations(2000, 2000) == []
    assert lim.violations(3000, 2001) == ["3000 variables + 2001 constraints = 5001 > 5000 in total"]
    assert lim.violations(150, 51, n_quad_vars=1)[-1].endswith("for a model with quadratic terms")
    spec = solvers.SOLVERS["xpress"]
    if solvers.availability("xpress") == "limited":
        with pytest.raises(LicenceLimitError, match="5001 > 5000"):
            check_solver("xpress", ProblemClass.LP, n_vars=5000, n_cons=1)
    check_licence(spec, n_vars=10**6, n_cons=10**6, avail="full")  # a full licence: no limits


def test_licence_detection():
    for name in ("gurobi", "cplex", "xpress"):
        avail = solvers.availability(name)
        assert avail in ("full", "limited", "not installed", "no licence")
        if avail == "limited":
            assert solvers.SOLVERS[name].limited_licence is not None


def test_solvers_own_licence_error_is_translated_as_last_resort():
    spec = solvers.SOLVERS["cplex"]
    err = licence_error("cplex", spec, RuntimeError(
        "CPLEX Error  1016: Community Edition. Problem size limits exceeded."))
    assert isinstance(err, LicenceLimitError) and "1016" in str(err)
    err = licence_error("xpress", solvers.SOLVERS["xpress"], RuntimeError(
        "?120 Error: Problem has too many rows and columns. The maximum is 5000"))
    assert isinstance(err, LicenceLimitError)
    assert licence_error("cplex", spec, RuntimeError("out of memory")) is None
