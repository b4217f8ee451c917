"""Persistent handles: after every kind of update the re-solve equals a cold ``solve_model`` of the
updated model (objective and duals), warm (HiGHS, Gurobi, CPLEX, Xpress) or rebuilt (others)."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from aidopt import solvers
from aidopt.solvers import ProblemClass, SolverCapabilityError, solve_model


def _params():
    params = []
    for name, spec in solvers.SOLVERS.items():
        marks = []
        if solvers.availability(name) not in ("full", "limited"):
            marks.append(pytest.mark.skip(reason=f"{name} not installed (pip install 'aidopt[{spec.extra}]')"))
        params.append(pytest.param(name, marks=marks, id=name))
    return params


SOLVERS = _params()


def lp(seed=0, n=6, rows=8):
    """A generic (non-degenerate) LP: min c'x, a_i x >= b_i, 0 <= x <= 10, costs in a mutable
    Param, rows in a ConstraintList, plus a capacity row; unique primal and dual solutions."""
    rng = np.random.default_rng(seed)
    A = rng.uniform(0.2, 2.0, size=(rows, n))
    b = rng.uniform(1.0, 5.0, size=rows)
    m = pyo.ConcreteModel()
    m.J = pyo.RangeSet(0, n - 1)
    m.p = pyo.Param(m.J, initialize={j: float(v) for j, v in enumerate(rng.uniform(1, 3, n))},
                    mutable=True)
    m.x = pyo.Var(m.J, bounds=(0, 10))
    m.rows = pyo.ConstraintList()
    for i in range(rows):
        m.rows.add(sum(float(A[i, j]) * m.x[j] for j in m.J) >= float(b[i]))
    m.cap = pyo.Constraint(expr=sum(m.x[j] for j in m.J) <= 40)
    m.o = pyo.Objective(expr=sum(m.p[j] * m.x[j] for j in m.J))
    m.rng = rng
    return m


def _tol(solver):
    return (1e-6, 1e-5) if solver == "clarabel" else (1e-8, 1e-7)


def _same_as_cold(model, out, solver):
    """The handle's outcome equals a cold solve_model of the same (updated) model."""
    rel, abs_dual = _tol(solver)
    duals = solvers.SOLVERS[solver].duals
    cold_solver = solver
    values = [(v, v.value) for v in model.component_data_objects(pyo.Var)]
    cold = solve_model(model, cold_solver, need_duals=duals)
    assert out.optimal and cold.optimal, (out.message, cold.message)
    assert out.objective == pytest.approx(cold.objective, rel=rel, abs=rel)
    assert out.bound == pytest.approx(cold.bound, rel=rel, abs=rel)
    for v, val in values:  # the handle loaded the same point
        assert val == pytest.approx(v.value, abs=1e-5 if solver == "clarabel" else 1e-7), v.name
    if duals:
        active = list(model.component_data_objects(pyo.Constraint, active=True))
        assert set(map(id, out.duals)) >= set(map(id, active))
        for con in active:
            assert out.duals[con] == pytest.approx(cold.duals[con], abs=abs_dual), con.name
    return cold


def _need_duals(solver):
    return solvers.SOLVERS[solver].duals


@pytest.mark.parametrize("solver", SOLVERS)
def test_every_update_matches_a_cold_solve(solver):
    m = lp()
    h = solvers.persistent(m, solver)
    assert h.warm == solvers.SOLVERS[solver].warm
    nd = _need_duals(solver)
    _same_as_cold(m, h.solve(need_duals=nd), solver)

    # objective coefficients through a mutable Param
    m.p[0] = 0.2
    m.p[3] = 2.9
    h.update_objective()
    _same_as_cold(m, h.solve(need_duals=nd), solver)

    # a row added to the ConstraintList
    new = m.rows.add(m.x[0] + m.x[1] >= 3.3)
    h.add_constraints([new])
    _same_as_cold(m, h.solve(need_duals=nd), solver)

    # a row deactivated, and one deleted with its component
    m.rows[2].deactivate()
    h.remove_constraints([m.rows[2]])
    _same_as_cold(m, h.solve(need_duals=nd), solver)
    cap = m.cap
    m.del_component(m.cap)
    h.remove_constraints(cap)
    _same_as_cold(m, h.solve(need_duals=nd), solver)

    # bound changes
    m.x[1].setub(0.7)
    m.x[4].setlb(0.25)
    h.update_variables([m.x[1], m.x[4]])
    _same_as_cold(m, h.solve(need_duals=nd), solver)

    # fix and unfix
    m.x[2].fix(1.3)
    h.update_variables(m.x[2])
    _same_as_cold(m, h.solve(need_duals=nd), solver)
    m.x[2].fix(0.4)
    h.update_variables(m.x[2])
    _same_as_cold(m, h.solve(need_duals=nd), solver)
    m.x[2].unfix()
    h.update_variables(m.x[2])
    out = h.solve(need_duals=nd)
    _same_as_cold(m, out, solver)

    assert h.stats.solves == 9
    if h.warm:
        assert out.extra["warm"] and h.stats.warm_solves == 8 and h.stats.rebuilds == 0
    else:
        assert h.stats.warm_solves == 0 and h.stats.rebuilds == 8
    h.close()
    with pytest.raises(solvers.SolverError, match="closed"):
        h.solve()


@pytest.mark.parametrize("solver", SOLVERS)
def test_update_finds_every_change_itself(solver):
    m = lp(seed=1)
    nd = _need_duals(solver)
    with solvers.persistent(m, solver) as h:
        h.solve()
        # a whole new objective expression, a new row, a removed row, a bound
        m.o.set_value(sum((1.0 + 0.3 * j) * m.x[j] for j in m.J) + 2.0)
        m.rows.add(m.x[2] + m.x[5] >= 2.2)
        m.rows[1].deactivate()
        m.x[0].setub(1.1)
        h.update()
        _same_as_cold(m, h.solve(need_duals=nd), solver)
        # another active objective (maximization) replaces the first
        m.o.deactivate()
        m.o2 = pyo.Objective(expr=-sum(m.x[j] for j in m.J), sense=pyo.maximize)
        h.update()
        _same_as_cold(m, h.solve(need_duals=nd), solver)


def knapsack():
    """max value of items in two knapsacks (binary x): a small MILP."""
    rng = np.random.default_rng(3)
    n = 12
    value, w1, w2 = rng.integers(5, 30, n), rng.integers(3, 15, n), rng.integers(3, 15, n)
    m = pyo.ConcreteModel()
    m.J = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.J, within=pyo.Binary)
    m.cuts = pyo.ConstraintList()
    m.cuts.add(sum(int(w1[j]) * m.x[j] for j in m.J) <= 40)
    m.cuts.add(sum(int(w2[j]) * m.x[j] for j in m.J) <= 35)
    m.o = pyo.Objective(expr=sum(int(value[j]) * m.x[j] for j in m.J), sense=pyo.maximize)
    return m


@pytest.mark.parametrize("solver", SOLVERS)
def test_milp_through_the_handle(solver):
    if ProblemClass.MILP not in solvers.SOLVERS[solver].classes:
        with pytest.raises(SolverCapabilityError, match="MILP"):
            solvers.persistent(knapsack(), solver).solve()
        return
    m = knapsack()
    h = solvers.persistent(m, solver)
    first = h.solve()
    assert first.optimal and first.bound >= first.objective - 1e-6
    m.cuts.add(m.x[0] + m.x[1] + m.x[2] <= 1)
    m.x[5].fix(1)
    h.update()
    out = h.solve()
    cold = solve_model(m, solver)
    assert out.optimal and out.objective == pytest.approx(cold.objective, abs=1e-6)
    assert out.objective <= first.objective + 1e-6
    assert all(abs(v.value - round(v.value)) < 1e-6 for v in m.x.values())
    h.close()


@pytest.mark.parametrize("solver", ["highs", "gurobi", "cplex", "xpress"])
def test_warm_handle_refuses_binary_rows_when_routed_as_lp(solver):
    if solvers.availability(solver) not in ("full", "limited"):
        pytest.skip(f"{solver} not installed")
    m = lp()
    m.z = pyo.Var(within=pyo.Binary)
    h = solvers.persistent(m, solver, problem_class="LP")
    h.solve()
    con = m.rows.add(m.x[0] + m.z >= 1)
    with pytest.raises(SolverCapabilityError, match="routed as LP"):
        h.add_constraints(con)
    h.close()


def test_highs_handle_defaults_to_simplex_and_primal_after_cost_changes():
    m = lp()
    h = solvers.persistent(m, "highs")
    assert h.options["solver"] == "simplex"
    assert solvers.persistent(lp(), "highs", options={"solver": "ipm"}).options["solver"] == "ipm"
    h.solve()
    m.p[1] = 0.1
    h.update_objective()
    assert h.solve().extra["simplex_strategy"] == 4  # primal: the basis stays primal feasible
    m.rows.add(m.x[1] + m.x[2] >= 2.5)
    h.update()
    assert h.solve().extra["simplex_strategy"] == 1  # dual after added rows


def test_rows_added_with_new_variables_and_row_map_after_deletions():
    m = lp()
    h = solvers.persistent(m, "highs")
    h.solve()
    m.extra = pyo.Var(bounds=(0, 5))
    m.rows[1].deactivate()
    m.rows[4].deactivate()
    h.remove_constraints([m.rows[1], m.rows[4]])
    con = m.rows.add(m.x[0] + m.extra >= 3.0)
    h.add_constraints(con)
    m.p[2] = 0.5
    m.o.set_value(m.o.expr + 0.35 * m.extra)  # gives the new column a cost: a unique optimum
    h.update_objective()
    out = h.solve(need_duals=True)
    _same_as_cold(m, out, "highs")
    assert h._rows[h._row_of[id(con)]] is con
    assert [h._row_of[id(r)] for r in h._rows] == list(range(len(h._rows)))


def test_write_after_update_writes_the_updated_model(tmp_path):
    """The Pyomo model is the source of truth: what is written is what was solved."""
    m = lp()
    h = solvers.persistent(m, "highs")
    h.solve()
    new = m.rows.add(m.x[0] + 2 * m.x[5] >= 4.25)
    h.add_constraints(new)
    m.rows[3].deactivate()
    h.remove_constraints(m.rows[3])
    out = h.solve()
    path = tmp_path / "updated.lp"
    m.write(str(path), io_options={"symbolic_solver_labels": True})
    text = path.read_text()
    assert f"rows({len(m.rows)})" in text and "rows(3)" not in text
    import highspy

    reread = highspy.Highs()
    reread.setOptionValue("output_flag", False)
    reread.readModel(str(path))
    reread.run()
    assert reread.getInfo().objective_function_value == pytest.approx(out.objective, rel=1e-9)


@pytest.mark.parametrize("solver", ["highs", "gurobi", "cplex", "xpress"])
def test_fixed_binaries_make_an_lp_until_unfixed(solver):
    from tests.solvers.test_classes import binary_model

    if solvers.availability(solver) not in ("full", "limited"):
        pytest.skip(f"{solver} not installed")
    m = binary_model()
    m.x[1].fix(1)
    m.x[2].fix(0)
    h = solvers.persistent(m, solver, problem_class="LP")
    out = h.solve(need_duals=True)
    assert out.optimal and out.objective == pytest.approx(2.5)
    if solver == "highs":  # a fixed binary is a continuous column with equal bounds
        assert out.duals[m.c] == pytest.approx(3.0)
    else:  # Pyomo's interfaces keep fixed binaries integer: the solver sees a MIP, no duals
        assert out.duals is None or out.duals[m.c] == pytest.approx(3.0)
    m.x[2].unfix()
    with pytest.raises(SolverCapabilityError, match="routed as LP"):
        h.update_variables(m.x[2])
    h.close()


def _heavy_knapsack(n=40, seed=1):
    """A 0/1 knapsack whose LP relaxation is fractional, with a greedy feasible packing."""
    rng = np.random.default_rng(seed)
    w = rng.integers(10, 60, n)
    v = w + rng.integers(1, 9, n)
    cap = int(w.sum() // 2) + 1
    m = pyo.ConcreteModel()
    m.J = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.J, within=pyo.Binary)
    m.cap = pyo.Constraint(expr=sum(int(w[j]) * m.x[j] for j in m.J) <= cap)
    m.o = pyo.Objective(expr=sum(int(v[j]) * m.x[j] for j in m.J), sense=pyo.maximize)
    x, total = np.zeros(n), 0
    for j in np.argsort(-v / w):
        if total + w[j] <= cap:
            x[j], total = 1.0, total + w[j]
    return m, x, float(v @ x)


# HiGHS may not search: without a start it ends with no solution, so a solution proves the start
NO_SEARCH = {"mip_max_nodes": 0, "presolve": "off", "mip_heuristic_effort": 0.0}


def test_highs_handle_mip_start_is_used_once_and_checked():
    m, x, value = _heavy_knapsack()
    h = solvers.persistent(m, "highs", options=NO_SEARCH)
    assert not h.solve().has_solution
    from pyomo.common.collections import ComponentMap

    h.set_start(ComponentMap((m.x[j], x[j]) for j in m.J))
    out = h.solve()
    assert out.has_solution and out.objective == pytest.approx(value)
    assert out.extra["start"] == f"passed ({len(x)} of {len(x)} columns)"
    assert [round(m.x[j].value) for j in m.J] == x.tolist()
    assert "start" not in h.solve().extra  # used once
    # an infeasible start (every item) is checked by HiGHS, not trusted
    m2, _, _ = _heavy_knapsack()
    h2 = solvers.persistent(m2, "highs", options=NO_SEARCH)
    h2.set_start([(m2.x[j], 1.0) for j in m2.J])
    bad = h2.solve()
    assert not bad.has_solution and bad.extra["start"].startswith("passed")
    h.close()
    h2.close()


def test_highs_handle_mip_start_after_new_rows_and_columns():
    """The use case: the previous incumbent, extended to nothing for a new column, after rows
    were added that it still satisfies."""
    m, x, value = _heavy_knapsack()
    h = solvers.persistent(m, "highs", options=NO_SEARCH)
    h.solve()
    m.extra = pyo.Var(within=pyo.Binary)
    m.link = pyo.Constraint(expr=m.extra <= m.x[0])
    h.add_constraints([m.link])
    h.set_start([(m.x[j], x[j]) for j in m.J])  # no value for the new column
    out = h.solve()
    assert out.has_solution and out.objective == pytest.approx(value)
    assert out.extra["start"] == f"passed ({len(x)} of {len(x) + 1} columns)"
    h.close()


def test_mip_start_validation_and_solvers_without_it():
    m, x, _ = _heavy_knapsack(n=8)
    h = solvers.persistent(m, "highs")
    other = pyo.ConcreteModel()
    other.y = pyo.Var()
    with pytest.raises(ValueError, match="not a variable of the handle's model"):
        h.set_start([(other.y, 1.0)])
    with pytest.raises(ValueError, match="finite number"):
        h.set_start([(m.x[0], float("nan"))])
    with pytest.raises(ValueError, match="finite number"):
        h.set_start([(m.x[0], "1")])
    with pytest.raises(ValueError, match="mapping or"):
        h.set_start([m.x[0]])
    h.set_start(list(zip(m.x.values(), x.astype(bool), strict=True)))  # a boolean mask is 0 / 1
    assert [v for _, v in h._start] == x.tolist()
    out = h.solve()
    assert out.optimal and out.extra["start"].startswith("passed")
    h.close()
    lp_model = lp()
    h = solvers.persistent(lp_model, "highs")
    h.set_start([(lp_model.x[0], 1.0)])
    assert h.solve().extra["start"] == "ignored: not a MIP"
    h.close()
    if solvers.availability("scip") in ("full", "limited"):  # a rebuilding handle
        m3, x3, value3 = _heavy_knapsack(n=8)
        h = solvers.persistent(m3, "scip")
        h.set_start([(m3.x[j], x3[j]) for j in m3.J])
        out = h.solve()
        assert out.optimal and out.objective >= value3 - 1e-9
        assert out.extra["start"].startswith("ignored")
        h.close()


def test_highs_handle_load_stops_at_its_deadline():
    """A model of more than one piece (LOAD_PIECE rows) is not loaded past ``deadline``:
    TimeLimitReached; a smaller one always loads, and pieces read the same LP as one read."""
    import time

    from aidopt.solvers import TimeLimitReached
    from aidopt.solvers.handles import LOAD_PIECE

    big = lp(rows=2 * LOAD_PIECE + 7)
    with pytest.raises(TimeLimitReached, match="while loading the model"):
        solvers.persistent(big, "highs", deadline=time.perf_counter())
    small = lp()
    with solvers.persistent(small, "highs", deadline=time.perf_counter()) as h:
        _same_as_cold(small, h.solve(need_duals=True), "highs")
    with solvers.persistent(big, "highs", deadline=time.perf_counter() + 600) as h:
        _same_as_cold(big, h.solve(need_duals=True), "highs")
