"""CPLEX and Xpress solve LPs, MILPs and MIQPs; typed options reach every path; the registry
probes once per process."""

from __future__ import annotations

import contextlib
import logging

import pyomo.environ as pyo
import pytest

from aidopt import solvers
from aidopt.solvers import ProblemClass, solve_model
from aidopt.solvers.contrib import apply_legacy_limits
from tests.solvers.test_classes import binary_model


def _installed(name):
    if solvers.availability(name) not in ("full", "limited"):
        pytest.skip(f"{name} not installed (pip install 'aidopt[{name}]')")


COMMERCIAL = ["cplex", "xpress", "gurobi"]


def miqp():
    """min (y - 0.3)^2 + x1 + 2 x2, x1 + x2 + y >= 1.5, x binary, 0 <= y <= 1: x = (1, 0),
    y = 0.5, objective 1.04."""
    m = binary_model()
    m.y.setub(1.0)
    m.o.set_value((m.y - 0.3) ** 2 + m.x[1] + 2 * m.x[2])
    return m


@pytest.mark.parametrize("solver", COMMERCIAL)
def test_milp_and_miqp(solver):
    _installed(solver)
    out = solve_model(binary_model(), solver)
    assert out.optimal and out.objective == pytest.approx(2.5, abs=1e-6)
    m = miqp()
    out = solve_model(m, solver, problem_class=ProblemClass.MIQP)
    assert out.optimal, out.message
    assert out.objective == pytest.approx(1.04, abs=1e-6)
    assert [round(m.x[i].value) for i in (1, 2)] == [1, 0]
    assert out.bound is not None and out.bound <= out.objective + 1e-6


@pytest.mark.parametrize("solver", ["cplex", "xpress"])
def test_lp_duals_and_ranged_rows(solver):
    """A ranged row and an equality: duals agree with HiGHS's (the sign test covers the rest)."""
    _installed(solver)

    def build():
        m = pyo.ConcreteModel()
        m.x = pyo.Var(bounds=(0, 4))
        m.y = pyo.Var(bounds=(0, 4))
        m.r = pyo.Constraint(expr=pyo.inequality(1.0, m.x - m.y, 2.0))
        m.e = pyo.Constraint(expr=m.x + 2 * m.y == 5)
        m.o = pyo.Objective(expr=3 * m.x + m.y, sense=pyo.maximize)
        return m

    ref_model, model = build(), build()
    ref = solve_model(ref_model, "highs", need_duals=True)
    out = solve_model(model, solver, need_duals=True)
    assert out.optimal and out.objective == pytest.approx(ref.objective)
    for name in ("r", "e"):
        assert out.duals[getattr(model, name)] == pytest.approx(ref.duals[getattr(ref_model, name)], abs=1e-8)


@pytest.mark.parametrize("solver", ["cplex", "xpress"])
def test_time_limit_and_threads_reach_the_solver_and_are_reset(solver):
    _installed(solver)
    h = solvers.persistent(binary_model(), solver, threads=1)
    assert h.solve(time_limit=7.0).optimal
    opt = h._opt._solver_model
    if solver == "cplex":
        assert opt.parameters.timelimit.get() == 7.0 and opt.parameters.threads.get() == 1
        h.solve()
        assert opt.parameters.timelimit.get() == opt.parameters.timelimit.default()
    else:
        assert opt.getControl("timelimit") == 7.0 and opt.getControl("threads") == 1
        h.solve()
        assert opt.getControl("timelimit") >= 1e20
    h.close()


def test_highs_handle_time_limit_is_reset():
    h = solvers.persistent(binary_model(), "highs")
    h.solve(time_limit=3.0)
    assert h._h.getOptionValue("time_limit")[1] == 3.0
    h.solve()
    assert h._h.getOptionValue("time_limit")[1] == float("inf")


class _NoOptions:
    """A stand-in legacy solver object with neither typed option."""

    def solve(self, model, **kwargs):  # pragma: no cover - never called
        raise AssertionError


class _Caplog:
    """A minimal stand-in for pytest's ``caplog`` (its plugin is off in this suite, see
    pyproject.toml): collects the records of one logger at a level."""

    def __init__(self):
        self.records = []

    @contextlib.contextmanager
    def at_level(self, level, logger):
        log = logging.getLogger(logger)
        handler = logging.Handler(level)
        handler.emit = self.records.append
        old = log.level
        log.addHandler(handler)
        log.setLevel(level)
        try:
            yield
        finally:
            log.removeHandler(handler)
            log.setLevel(old)

    @property
    def text(self):
        return "\n".join(r.getMessage() for r in self.records)


def test_legacy_limits_are_passed_or_warned():
    caplog = _Caplog()
    options, kwargs = apply_legacy_limits(_NoOptions(), "cplex_direct", 5.0, 2)
    assert options == {"timelimit": 5.0, "threads": 2} and kwargs == {}
    options, kwargs = apply_legacy_limits(_NoOptions(), "gurobi_direct", 5.0, 2)
    assert options == {"TimeLimit": 5.0, "Threads": 2}
    with caplog.at_level(logging.WARNING, logger="aidopt.solvers"):
        options, kwargs = apply_legacy_limits(_NoOptions(), "some_solver", 5.0, 2)
    assert options == {} and kwargs == {}
    text = caplog.text
    assert "time_limit=5.0 was not passed" in text and "threads=2 was not passed" in text


def test_legacy_shell_solver_gets_pyomo_timelimit():
    caplog = _Caplog()
    with caplog.at_level(logging.WARNING, logger="aidopt.solvers"):
        opt = pyo.SolverFactory("glpk")
        options, kwargs = apply_legacy_limits(opt, "glpk", 5.0, None)
    assert kwargs == {"timelimit": 5.0} and "was not passed" not in caplog.text


def test_legacy_path_solves_with_typed_options():
    _installed("cplex")
    m = binary_model()
    for v in m.x.values():
        v.domain = pyo.UnitInterval  # the LP relaxation: optimum 2.0 at x2 = 0.5, dual of c 2.0
    out = solve_model(m, "cplex_direct", need_duals=True, time_limit=30, threads=1)
    assert out.optimal and out.objective == pytest.approx(2.0)
    assert out.duals[m.c] == pytest.approx(2.0)
    assert not hasattr(m, "dual")  # the import suffix it needed is removed again


def test_registry_is_probed_once_and_refreshed():
    from aidopt.solvers import registry

    solvers.refresh()
    solvers.availability("highs")
    solvers.availability("highs")
    info = registry._availability.cache_info()
    assert info.misses == 1 and info.hits >= 1
    solvers.version("highs")
    solvers.refresh()
    assert registry._availability.cache_info().currsize == 0
    assert registry._version.cache_info().currsize == 0


def test_solver_table_lists_commercial_solvers():
    table = {r["name"]: r for r in solvers.solver_table()}
    assert {"highs", "gurobi", "clarabel", "scip", "cplex", "xpress"} <= set(table)
    assert table["cplex"]["install"] == "pip install 'aidopt[cplex]'"
    assert table["xpress"]["install"] == "pip install 'aidopt[xpress]'"
    assert table["highs"]["persistent"] == "warm" and table["clarabel"]["persistent"] == "rebuild"
    for name in ("cplex", "xpress"):
        assert table[name]["classes"] == "LP,QP,MILP,MIQP" and table[name]["duals"] == "yes"


def test_public_surface():
    names = ["solve_model", "availability", "version", "solver_table", "check_solver",
             "SolveOutcome", "SOLVERS", "SolverSpec", "SizeLimits", "ProblemClass", "SolverError",
             "SolverUnavailableError", "SolverCapabilityError", "TimeLimitReached",
             "DEFAULT_SOLVER", "LinearProgram", "linear_program", "_read_linear_expressions",
             "_compile_standard_form", "SolveStatus", "LicenceLimitError", "persistent", "refresh"]
    for name in names:
        assert hasattr(solvers, name), name
    assert callable(solvers.persistent)


def test_highs_threads_can_change_within_a_process():
    """HiGHS refuses threads=1 once its global scheduler runs with another count; solve_model
    restarts it instead of reporting an error."""
    for threads in (None, 1, 2, None, 1):
        out = solve_model(binary_model(), "highs", threads=threads)
        assert out.optimal, (threads, out.message)
