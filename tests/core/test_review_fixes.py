"""Regression tests for the independent review of core v2."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from aidopt.instances import lad_instance, s3vm_instance, svm_instance

import aidopt
import aidopt.api.s3vm
from aidopt import solvers


def _tiny_lp():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.c = pyo.Constraint(expr=2 * m.x >= 1)
    m.o = pyo.Objective(expr=m.x)
    return m


def test_a_refused_handle_update_leaves_no_stale_model_to_solve():
    m = _tiny_lp()
    handle = solvers.persistent(m, "highs", problem_class="LP")
    assert handle.solve().objective == pytest.approx(0.5)
    m.x.domain = pyo.Binary
    with pytest.raises(solvers.SolverCapabilityError):
        handle.update_variables([m.x])
    with pytest.raises(solvers.SolverError, match="out of sync"):
        handle.solve()  # before: the LP relaxation again, x = 0.5, "optimal"


def test_a_user_big_m_is_never_taken_as_proven():
    X, y, _ = s3vm_instance(n=40, n_labeled=6, seed=2)
    exact = aidopt.solve_s3vm(X, y, norm="l1", solver="highs", aid=False, log=False)
    cut = aidopt.solve_s3vm(X, y, norm="l1", solver="highs", aid=False, log=False, big_M=1.05)
    assert exact.certified
    assert cut.objective > exact.objective * (1 + 1e-6)  # the small big-M cut the optimum off
    assert not cut.certified and cut.termination != "certified_optimal"
    assert cut.lower_bound <= exact.objective + 1e-9  # no bound above the true optimum claimed


def test_a_rejected_solver_option_is_not_hidden_by_a_fallback():
    X, y = svm_instance(n=300, m=3, seed=0)
    with pytest.raises(solvers.SolverOptionError, match="time_limt"):
        aidopt.solve_svm(X, y, C=0.1, solver="highs", aid=False, log=False,
                         solver_options={"time_limt": 5}, raise_on_failure=False)


def test_solve_s3vm_uses_the_given_solver_without_probing_for_a_default(monkeypatch):
    def no_default(norm="l2"):
        raise AssertionError("the default solver was looked up although one was given")

    monkeypatch.setattr(aidopt.api.s3vm, "default_s3vm_solver", no_default)
    X, y, _ = s3vm_instance(n=30, n_labeled=6, seed=0)
    res = aidopt.solve_s3vm(X, y, norm="l1", solver="highs", aid=False, log=False)
    assert res.solver == "highs"


def test_an_estimator_fit_without_any_solution_says_why():
    X, y = lad_instance("A", n=20000, m=5, seed=0)
    with pytest.raises(RuntimeError, match="found no solution: termination 'time_limit'"):
        aidopt.LADRegressor(solver="highs", time_limit=1e-6).fit(X, y)


@pytest.mark.parametrize("solver", ["highs", "clarabel"])
def test_the_bound_of_an_lp_solve_is_its_dual_objective(solver):
    m = _tiny_lp()
    m.y = pyo.Var(bounds=(0, 4))
    m.d = pyo.Constraint(expr=m.x + m.y >= 2)
    m.o.deactivate()
    m.o2 = pyo.Objective(expr=m.x + 2 * m.y)
    out = solvers.solve_model(m, solver)
    assert out.optimal and out.bound <= out.objective + 1e-9
    assert out.bound == pytest.approx(out.objective, rel=1e-6)


def test_the_run_handle_offers_the_whole_handle_api(tmp_path):
    from aidopt.decomposition import Run, RunConfig

    m = _tiny_lp()
    run = Run("tiny", solvers.ProblemClass.LP, RunConfig(solver="highs", log=False))
    with run.persistent(m) as handle:
        assert handle.model is m
        assert handle.solve().objective == pytest.approx(0.5)
        m.c.set_value(3 * m.x >= 1)
        handle.update()
        assert handle.solve().objective == pytest.approx(1 / 3)
    assert np.isclose(pyo.value(m.x), 1 / 3)
