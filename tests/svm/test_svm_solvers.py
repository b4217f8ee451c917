"""Every installed solver gives the same SVM optimum, by AID and by the direct solve."""

from __future__ import annotations

import functools

import pytest

import aidopt
from aidopt import solvers
from aidopt.solvers import ProblemClass
from tests.conftest import RTOL, licence_limits, solver_params
from tests.svm._helpers import close, instance, svm_objective

C = 0.5


@functools.cache
def _data():
    # n = 150: the direct 2-norm QP stays within the pip Gurobi licence (QPs <= 200 variables)
    return instance("overlapping", 150, 3, 4)


@functools.cache
def _reference(norm):
    X, y = _data()
    res = aidopt.solve_svm(X, y, C=C, norm=norm, aid=False, log=False)
    assert res.certified
    return res.objective


def _solve(X, y, solver, **kwargs):
    try:
        return aidopt.solve_svm(X, y, C=C, solver=solver, log=False, **kwargs)
    except aidopt.SolverCapabilityError as exc:  # a size-limited licence refused the model
        if licence_limits(solver):
            pytest.skip(f"{solver} licence refused the model: {exc}")
        raise


@pytest.mark.parametrize("aid", [True, False], ids=["aid", "direct"])
@pytest.mark.parametrize("solver", solver_params(ProblemClass.QP))
def test_l2_same_objective_every_solver(solver, aid):
    X, y = _data()
    res = _solve(X, y, solver, norm="l2", aid=aid)
    assert res.certified, res.summary()
    assert res.solver == solver
    expected = "dual_qp" if not solvers.SOLVERS[solver].duals else "solver_duals"
    assert res.certificate.method == expected
    assert res.objective == pytest.approx(_reference("l2"), rel=RTOL)
    assert close(svm_objective(X, y, res.solution["w"], res.solution["b"], C), res.objective, 1e-9)


@pytest.mark.parametrize("aid", [True, False], ids=["aid", "direct"])
@pytest.mark.parametrize("solver", solver_params(ProblemClass.LP))
@pytest.mark.parametrize("norm", ["l1", "linf"])
def test_lp_same_objective_every_solver(norm, solver, aid):
    X, y = _data()
    res = _solve(X, y, solver, norm=norm, aid=aid)
    assert res.certified, res.summary()
    expected = "highs_duals" if not solvers.SOLVERS[solver].duals else "solver_duals"
    assert res.certificate.method == expected
    assert res.objective == pytest.approx(_reference(norm), rel=RTOL)
    assert close(svm_objective(X, y, res.solution["w"], res.solution["b"], C, norm),
                 res.objective, 1e-9)


@pytest.mark.parametrize("form", ["dual", "primal"])
def test_l2_both_qp_forms_same_objective_clarabel(form):
    X, y = _data()
    res = aidopt.solve_svm(X, y, C=C, solver="clarabel", form=form, aid=False, log=False)
    assert res.certified
    assert res.objective == pytest.approx(_reference("l2"), rel=RTOL)


def test_kernel_refuses_solver_without_duals():
    X, y = _data()
    with pytest.raises(aidopt.SolverError, match="kernel AID reads b from a dual"):
        aidopt.solve_svm(X, y, kernel="rbf", solver="scip", log=False)


def test_default_solvers():
    from aidopt.api.svm import default_svm_solver

    assert default_svm_solver("l2") == "fm"
    assert default_svm_solver("l2", "rbf") == "smo"
    assert default_svm_solver("l2", "linear") == "fm"
    for norm in ("l1", "linf", "none"):
        assert default_svm_solver(norm) == "highs"
    X, y = _data()
    assert aidopt.solve_svm(X, y, norm="l1", log=False).solver == "highs"
    assert aidopt.solve_svm(X, y, norm="l2", log=False).solver == "fm"


@pytest.mark.parametrize("C_", [0.1, 0.2])
def test_l2_highs_primal_form_is_certified(C_):
    X, y = instance("overlapping", 1000, 4, 7)
    ref = aidopt.solve_svm(X, y, C=C_, aid=False, log=False)
    res = aidopt.solve_svm(X, y, C=C_, solver="highs", form="primal", aid=False, log=False)
    assert res.objective == pytest.approx(ref.objective, rel=RTOL)  # the solution is optimal
    assert res.certified, res.certificate.summary()
