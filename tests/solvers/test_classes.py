"""A model's real class is checked against the class it is routed as: a MILP is never solved as
its LP relaxation, a QP never as an LP, and ``problem_class=None`` infers the class."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from aidopt import solvers
from aidopt.solvers import ProblemClass, SolverCapabilityError, solve_model
from aidopt.solvers.classify import model_facts
from tests.conftest import solver_params


def _all_solvers():
    """Every registered solver, whatever its classes (unavailable ones skip)."""
    params = []
    for name, spec in solvers.SOLVERS.items():
        marks = []
        if solvers.availability(name) not in ("full", "limited"):
            marks.append(pytest.mark.skip(reason=f"{name} not installed (pip install 'aidopt[{spec.extra}]')"))
        params.append(pytest.param(name, marks=marks, id=name))
    return params


def binary_model(param_coefficient: bool = False):
    """min x1 + 2 x2 + 3 y, x1 + x2 + y >= 1.5, x binary: MILP optimum 2.5 (x1 = 1, y = 0.5);
    its LP relaxation has optimum 2.0 with x2 = 0.5."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2], within=pyo.Binary)
    m.y = pyo.Var(bounds=(0, None))
    m.p = pyo.Param(initialize=1.0, mutable=True)
    coef = m.p if param_coefficient else 1.0
    m.c = pyo.Constraint(expr=coef * m.x[1] + m.x[2] + m.y >= 1.5)
    m.o = pyo.Objective(expr=m.x[1] + 2 * m.x[2] + 3 * m.y)
    return m


def quadratic_model():
    """min (x - 1)^2 + y, x + y >= 2, 0 <= x, y <= 3: optimum at x = 1.5, y = 0.5 (0.75)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 3))
    m.y = pyo.Var(bounds=(0, 3))
    m.c = pyo.Constraint(expr=m.x + m.y >= 2)
    m.o = pyo.Objective(expr=(m.x - 1) ** 2 + m.y)
    return m


@pytest.mark.parametrize("solver", _all_solvers())
def test_binary_model_routed_as_lp_raises(solver):
    m = binary_model()
    with pytest.raises(SolverCapabilityError, match="2 binary/integer variables but was routed as LP"):
        solve_model(m, solver, problem_class=ProblemClass.LP)
    assert m.x[2].value is None  # nothing was solved, nothing loaded


@pytest.mark.parametrize("solver", ["highs", "clarabel"])
def test_compiler_fallback_checks_integrality(solver):
    """A Param coefficient sends the model to Pyomo's standard-form compiler, which ignores
    integrality itself: the check must still catch it (the bug: x2 = 0.5 reported optimal)."""
    m = binary_model(param_coefficient=True)
    assert solvers._read_linear_expressions(m) is None
    assert solvers._compile_standard_form(m).n_integer == 2
    with pytest.raises(SolverCapabilityError, match="routed as LP"):
        solve_model(m, solver, problem_class="LP")


@pytest.mark.parametrize("solver", solver_params(ProblemClass.LP))
def test_quadratic_objective_routed_as_lp_raises(solver):
    with pytest.raises(SolverCapabilityError, match="quadratic objective but was routed as LP"):
        solve_model(quadratic_model(), solver, problem_class=ProblemClass.LP)


@pytest.mark.parametrize("solver", ["highs", "scip", "gurobi", "cplex", "xpress"])
def test_quadratic_objective_routed_as_milp_raises(solver):
    if solvers.availability(solver) not in ("full", "limited"):
        pytest.skip(f"{solver} not installed")
    with pytest.raises(SolverCapabilityError, match="is a QP"):
        solve_model(quadratic_model(), solver, problem_class=ProblemClass.MILP)


@pytest.mark.parametrize("param_coefficient", [False, True], ids=["fast_reader", "compiler"])
@pytest.mark.parametrize("solver", solver_params(ProblemClass.MILP))
def test_inferred_milp_is_solved_as_milp(solver, param_coefficient):
    m = binary_model(param_coefficient)
    out = solve_model(m, solver)  # problem_class=None: inferred
    assert out.optimal, out.message
    assert out.objective == pytest.approx(2.5, abs=1e-6)
    assert [round(m.x[i].value) for i in (1, 2)] == [1, 0]
    assert m.y.value == pytest.approx(0.5, abs=1e-6)
    assert out.bound == pytest.approx(2.5, abs=1e-6)


@pytest.mark.parametrize("solver", solver_params(ProblemClass.MILP))
def test_milp_routed_as_miqp_is_fine(solver):
    """A class that covers the model's (MIQP covers MILP, QP covers LP) is accepted."""
    if ProblemClass.MIQP not in solvers.SOLVERS[solver].classes:
        pytest.skip(f"{solver} takes no MIQP")
    out = solve_model(binary_model(), solver, problem_class=ProblemClass.MIQP)
    assert out.optimal and out.objective == pytest.approx(2.5, abs=1e-6)


@pytest.mark.parametrize("solver", solver_params(ProblemClass.QP))
def test_inferred_qp(solver):
    m = quadratic_model()
    out = solve_model(m, solver)
    assert out.optimal, out.message
    assert out.objective == pytest.approx(0.75, abs=1e-6)
    assert m.x.value == pytest.approx(1.5, abs=1e-5)


def test_capability_follows_the_real_class():
    with pytest.raises(SolverCapabilityError, match="cannot solve MILP"):
        solve_model(binary_model(), "clarabel")
    m = quadratic_model()
    m.x.domain = pyo.Integers
    with pytest.raises(SolverCapabilityError, match="cannot solve MIQP"):
        solve_model(m, "highs")


def test_fixed_binary_is_not_integer():
    """A fixed binary variable is a constant: the model is an LP."""
    m = binary_model()
    m.x[1].fix(1)
    m.x[2].fix(0)
    out = solve_model(m, "highs", problem_class="LP")
    assert out.optimal and out.objective == pytest.approx(2.5)


def test_nonlinear_model_is_refused():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0.1, 2))
    m.c = pyo.Constraint(expr=m.x ** 3 >= 1)
    m.o = pyo.Objective(expr=m.x)
    with pytest.raises(SolverCapabilityError, match="nonlinear constraints"):
        solve_model(m, "highs")


def test_model_facts():
    facts = model_facts(binary_model(), count_vars=True)
    assert (facts.n_declared, facts.n_vars, facts.n_cons, facts.n_integer) == (3, 3, 1, 2)
    assert facts.problem_class is ProblemClass.MILP
    assert model_facts(quadratic_model()).problem_class is ProblemClass.QP
    m = binary_model()
    m.z = pyo.Var(within=pyo.Binary)  # declared, used nowhere: not an integer column
    m.x[1].fix(1)
    m.x[2].fix(0)
    assert model_facts(m).problem_class is ProblemClass.LP


def test_problem_class_lattice():
    P = ProblemClass
    assert P.MIQP.covers(P.LP) and P.MILP.covers(P.LP) and P.QP.covers(P.LP)
    assert not P.LP.covers(P.MILP) and not P.LP.covers(P.QP) and not P.MILP.covers(P.QP)
    assert P.of(integer=True, quadratic=False) is P.MILP
