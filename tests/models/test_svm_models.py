"""The SVM formulations: both forms of each model give the same optimum and the same (w, b, dual),
so the dual signs documented in models/svm.py and models/lp_svm.py are right."""

import numpy as np
import pytest
from aidopt.models import kernel_svm, lp_svm, svm

from aidopt import solvers
from aidopt.numerics.kernels import svc_kernel
from tests.conftest import licence_limits, solver_params


def _data(n=200, m=4, seed=1):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    X = rng.normal(size=(n, m)) + 0.5 * y[:, None] + 1.0
    c = rng.integers(1, 4, size=n).astype(float)  # weights as under AID
    return X, y, c


def _solve(model, solver, problem_class):
    out = solvers.solve_model(model, solver, problem_class=problem_class, need_duals=True)
    assert out.optimal, out.message
    return out


@pytest.mark.parametrize("solver", solver_params(solvers.ProblemClass.QP, need_duals=True))
def test_l2_primal_and_dual_forms_agree(solver):
    X, y, c = _data(n=60 if licence_limits(solver) else 200)  # size-limited licences: small QPs
    C = 0.7
    p = svm.create_instance(X, y, c, C, form="primal")
    d = svm.create_instance(X, y, c, C, form="dual")
    out_p, out_d = _solve(p, solver, "QP"), _solve(d, solver, "QP")
    assert out_p.objective == pytest.approx(out_d.objective, rel=1e-7)
    w_p, b_p, a_p = svm.solution_from(p, out_p.duals)
    w_d, b_d, a_d = svm.solution_from(d, out_d.duals)
    assert np.allclose(w_p, w_d, atol=1e-5) and b_p == pytest.approx(b_d, abs=1e-5)
    # alpha satisfies the dual constraints, and w = sum alpha y x
    for a in (a_p, a_d):
        assert a.min() >= -1e-6 and (a - C * c).max() <= 1e-5
        assert abs(a @ y) <= 1e-5
        assert np.allclose(w_d, (a * y) @ X, atol=1e-4)


@pytest.mark.parametrize("solver", ["highs", "clarabel"])
@pytest.mark.parametrize("reg", lp_svm.REGULARIZERS)
def test_lp_primal_and_dual_forms_agree(reg, solver):
    X, y, c = _data()
    p = lp_svm.create_instance(X, y, c, 0.7, reg, form="primal")
    d = lp_svm.create_instance(X, y, c, 0.7, reg, form="dual")
    out_p, out_d = _solve(p, solver, "LP"), _solve(d, solver, "LP")
    assert out_p.objective == pytest.approx(out_d.objective, rel=1e-7)
    w_p, b_p, u_p = lp_svm.solution_from(p, out_p.duals)
    w_d, b_d, u_d = lp_svm.solution_from(d, out_d.duals)
    tol = 1e-6 if solver == "highs" else 1e-5
    assert np.allclose(w_p, w_d, atol=tol) and b_p == pytest.approx(b_d, abs=tol)
    assert u_p.sum() == pytest.approx(out_p.objective, rel=1e-7)  # LP duality via the margin duals


def test_lp_dual_without_duals_gives_no_plane():
    X, y, c = _data(n=50)
    d = lp_svm.create_instance(X, y, c, 0.7, "l1", form="dual")
    _solve(d, "highs", "LP")
    w, b, u = lp_svm.solution_from(d, None)
    assert w is None and b is None and u.shape == (50,)


def test_bad_form_and_regularizer():
    X, y, c = _data(n=10)
    with pytest.raises(ValueError, match="regularizer"):
        lp_svm.create_instance(X, y, c, 1.0, "l3")
    with pytest.raises(ValueError, match="form"):
        lp_svm.create_instance(X, y, c, 1.0, "l1", form="both")
    with pytest.raises(ValueError, match="form"):
        svm.create_instance(X, y, c, 1.0, form="both")


def test_kernel_factor_reproduces_the_kernel():
    X, _, _ = _data(n=40)
    K = svc_kernel("rbf", 0.3)(X, X)
    L = kernel_svm.factor(K)
    assert np.allclose(L @ L.T, K, atol=1e-9)
    with pytest.raises(ValueError, match="kernel"):
        svc_kernel("sigmoid", 1.0)
