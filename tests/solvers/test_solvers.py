"""Solver layer: capability checks, dual sign convention, and every available solver on LAD."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from aidopt.instances import lad_instance

import aidopt
from aidopt import solvers
from aidopt.solvers import ProblemClass, SolverCapabilityError, check_solver, solve_model
from tests.conftest import RTOL, licence_limits, solver_params


def test_registry_lists_the_three_solvers():
    assert {"highs", "gurobi", "scip"} <= set(solvers.SOLVERS)
    table = solvers.solver_table()
    highs = next(r for r in table if r["name"] == "highs")
    assert highs["available"] and highs["duals"] == "yes" and "MIQP" not in highs["classes"]


def test_highs_miqp_error_names_alternatives():
    with pytest.raises(SolverCapabilityError, match="MIQP") as err:
        check_solver("highs", ProblemClass.MIQP)
    assert "gurobi" in str(err.value) and "scip" in str(err.value)


def test_unknown_solver_is_reported():
    with pytest.raises(solvers.SolverUnavailableError):
        check_solver("no_such_solver_xyz", ProblemClass.LP)
    with pytest.raises(solvers.SolverUnavailableError):
        aidopt.solve_lad(*lad_instance("A", n=100, m=3), solver="no_such_solver_xyz", log=False)


def test_scip_refuses_dual_requests():
    spec = solvers.SOLVERS["scip"]
    if solvers.availability("scip") not in ("full", "limited"):
        pytest.skip("scip not installed")
    assert not spec.duals
    with pytest.raises(SolverCapabilityError, match="no duals"):
        check_solver("scip", ProblemClass.LP, need_duals=True)


def test_gurobi_size_limit_message():
    if solvers.availability("gurobi") != "limited":
        pytest.skip("needs the size-limited pip gurobipy licence")
    with pytest.raises(SolverCapabilityError, match="size-limited"):
        check_solver("gurobi", ProblemClass.LP, n_vars=5000, n_cons=10)
    # a direct solve beyond the licence gives the readable error, not GurobiError 10010 ...
    X, y = lad_instance("A", n=3000, m=3, seed=0)
    with pytest.raises(SolverCapabilityError, match="size-limited"):
        aidopt.solve_lad(X, y, solver="gurobi", aid=False, log=False, fallback=False)
    # ... and with fallbacks on (default) HiGHS takes over, and the result says so
    res = aidopt.solve_lad(X, y, solver="gurobi", aid=False, log=False)
    assert res.certified and res.solver == "highs"
    assert "gurobi returned licence_limit" in res.message


def _sign_model(sense):
    """min/max x + y with x + y >= 1 (row a), x - y <= 2 (row b), x + 2 y == 3 (row c)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-10, 10))
    m.y = pyo.Var(bounds=(-10, 10))
    m.a = pyo.Constraint(expr=m.x + m.y >= 1)
    m.b = pyo.Constraint(expr=m.x - m.y <= 2)
    m.c = pyo.Constraint(expr=m.x + 2 * m.y == 3)
    if sense == "min":
        m.o = pyo.Objective(expr=m.x + m.y, sense=pyo.minimize)
    else:
        m.o = pyo.Objective(expr=-m.x - m.y, sense=pyo.maximize)
    return m


@pytest.mark.parametrize("solver", solver_params(need_duals=True))
@pytest.mark.parametrize("sense", ["min", "max"])
def test_dual_sign_convention(solver, sense):
    """Duals are d(objective)/d(rhs), checked by finite differences on each row."""
    base = _sign_model(sense)
    out = solve_model(base, solver, need_duals=True)
    assert out.optimal
    for name in ("a", "b", "c"):
        shifted = _sign_model(sense)
        con = getattr(shifted, name)
        lo, body, up = con.lower, con.body, con.upper
        delta = 1e-3
        if name == "a":
            con.set_value(body >= pyo.value(lo) + delta)
        elif name == "b":
            con.set_value(body <= pyo.value(up) + delta)
        else:
            con.set_value(body == pyo.value(up) + delta)
        out2 = solve_model(shifted, solver)
        assert out2.optimal
        fd = (out2.objective - out.objective) / delta
        assert out.duals[getattr(base, name)] == pytest.approx(fd, abs=1e-6), name


@pytest.mark.parametrize("solver", solver_params())
@pytest.mark.parametrize("aid", [True, False], ids=["aid", "direct"])
def test_every_solver_on_lad(solver, aid):
    n, m = (400, 3) if licence_limits(solver) else (3000, 5)
    X, y = lad_instance("B", n=n, m=m, seed=2)
    reference = aidopt.solve_lad(X, y, aid=False, log=False, tol=1e-9)
    # an interior-point solver (clarabel) stops at a relative gap near 1e-8, not at a vertex
    tol = 1e-7 if solver == "clarabel" else 1e-9
    res = aidopt.solve_lad(X, y, solver=solver, aid=aid, log=False, tol=tol)
    assert res.termination is aidopt.Termination.CERTIFIED_OPTIMAL
    assert res.objective == pytest.approx(reference.objective, rel=RTOL)
    expected = "solver_duals" if solvers.SOLVERS[solver].duals else "dual_lp"
    assert res.certificate.method == expected


@pytest.mark.parametrize("form", ["primal", "dual"])
def test_both_lp_forms_agree(form):
    X, y = lad_instance("C", n=2000, m=4, seed=1)
    res = aidopt.solve_lad(X, y, form=form, log=False, tol=1e-9)
    ref = aidopt.solve_lad(X, y, aid=False, log=False, tol=1e-9)
    assert res.certified
    assert res.objective == pytest.approx(ref.objective, rel=RTOL)


def test_solver_options_pass_through():
    X, y = lad_instance("A", n=1000, m=3, seed=0)
    res = aidopt.solve_lad(X, y, solver="highs", solver_options={"solver": "simplex"}, log=False)
    assert res.certified
    with pytest.raises(solvers.SolverError, match="rejected option"):
        aidopt.solve_lad(X, y, solver="highs", solver_options={"no_such_option": 1}, log=False)


def test_highs_lp_path_matches_pyomo_contrib_highs():
    """The standard-form HiGHS path solves the same Pyomo model as pyomo.contrib.solver's HiGHS."""
    from aidopt.models import lad
    from pyomo.contrib.solver.common.factory import SolverFactory

    X, y = lad_instance("A", n=300, m=4, seed=0)
    ours = lad.create_instance(X, y, form="dual")
    out = solve_model(ours, "highs", need_duals=True)
    theirs = lad.create_instance(X, y, form="dual")
    res = SolverFactory("highs").solve(theirs)
    assert out.objective == pytest.approx(res.incumbent_objective, rel=1e-9)
    beta_ours, _ = lad.solution_from(ours, out.duals)
    beta_theirs, _ = lad.solution_from(theirs, res.solution_loader.get_duals())
    np.testing.assert_allclose(beta_ours, beta_theirs, atol=1e-7)


def _dense(prog):
    """Dense (rows x columns) view keyed by Pyomo names, for comparing two readers."""
    A = prog.A.toarray()
    return {
        (prog.rows[i].name, prog.columns[j].name): A[i, j]
        for i in range(A.shape[0]) for j in range(A.shape[1]) if A[i, j] != 0
    }


@pytest.mark.parametrize("form", ["primal", "dual"])
def test_direct_reader_equals_pyomo_standard_form(form):
    from aidopt.models import lad

    X, y = lad_instance("C", n=40, m=3, seed=0)
    model = lad.create_instance(X, y, np.arange(1, 41, dtype=float), form=form)
    fast = solvers._read_linear_expressions(model)
    ref = solvers._compile_standard_form(model)
    assert fast is not None
    assert _dense(fast) == pytest.approx(_dense(ref))
    bounds = lambda p: {v.name: (lo, up) for v, lo, up in zip(p.columns, p.col_lower, p.col_upper, strict=True)}  # noqa: E731
    assert bounds(fast) == bounds(ref)
    rows = lambda p: {r.name: (lo, up) for r, lo, up in zip(p.rows, p.row_lower, p.row_upper, strict=True)}  # noqa: E731
    assert rows(fast) == rows(ref)
    cost = lambda p: {v.name: c for v, c in zip(p.columns, p.c, strict=True) if c != 0}  # noqa: E731
    assert cost(fast) == pytest.approx(cost(ref)) and fast.maximize == ref.maximize


def test_direct_reader_falls_back_for_other_models():
    """A fixed variable or a Param coefficient goes through Pyomo's compiler, same answer."""
    m = pyo.ConcreteModel()
    m.p = pyo.Param(initialize=2.0, mutable=True)
    m.x = pyo.Var(bounds=(0, 5))
    m.z = pyo.Var(bounds=(0, 5))
    m.z.fix(1.0)
    m.c = pyo.Constraint(expr=m.p * m.x + m.z >= 3)
    m.o = pyo.Objective(expr=m.x + 2 * m.z)
    assert solvers._read_linear_expressions(m) is None
    out = solve_model(m, "highs", need_duals=True)
    assert out.optimal and m.x.value == pytest.approx(1.0) and out.objective == pytest.approx(3.0)
    assert out.duals[m.c] == pytest.approx(0.5)
