"""Regressions for an independent review: an unbalanced alpha must not yield a bound, a kernel
problem reused on new data must not reuse its cache, w keeps its length when zero-weight rows are
dropped, and kernels that are not positive semidefinite are refused or not certified."""

import numpy as np
import pytest
from aidopt.decomposition import RunConfig, solve_direct
from aidopt.decomposition.plugins.kernel_svm import KernelSVMProblem
from aidopt.decomposition.plugins.svm import certificate

import aidopt
from aidopt.data.validate import as_classification_data


def _shifted(n=800, shift=200.0, seed=0):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    return rng.normal(size=(n, 3)) + 0.5 * y[:, None] + shift, y


def test_unbalanced_alpha_does_not_certify_a_suboptimal_plane():
    X, y = _shifted()  # large |b|: an imbalance of alpha would overstate the bound by |b| times it
    sol = aidopt.solve_svm(X, y, C=0.3, log=False).solution
    data = as_classification_data(X, y)
    alpha = sol["alpha"].copy()
    alpha[np.argmax(alpha * (y > 0))] += 0.9e-6 * alpha.sum()  # passes the balance tolerance
    cert = certificate(data, sol["w"], sol["b"] + 0.01, alpha, C=0.3, norm="l2", tol=1e-6)
    assert not cert.certified and cert.relative_gap > 1e-6
    honest = certificate(data, sol["w"], sol["b"], sol["alpha"], C=0.3, norm="l2", tol=1e-6)
    assert honest.certified and honest.dual_objective <= honest.primal_objective


@pytest.mark.parametrize("norm", ["l2", "l1", "linf"])
def test_bound_never_above_the_objective_with_large_offset(norm):
    X, y = _shifted(shift=50.0, seed=2)
    for solver, form in (("highs", "primal"), ("clarabel", "auto")):
        res = aidopt.solve_svm(X, y, C=0.3, norm=norm, solver=solver, form=form, log=False)
        assert res.certificate.dual_objective <= res.certificate.primal_objective * (1 + 1e-12)


def test_kernel_problem_reused_on_new_data():
    rng = np.random.default_rng(1)
    X1, X2 = rng.normal(size=(150, 2)), 2 * rng.normal(size=(150, 2))
    d1 = as_classification_data(X1, np.where(X1[:, 0] > 0, 1, -1))
    d2 = as_classification_data(X2, np.where(X2[:, 1] > 0, 1, -1))
    cfg = RunConfig(solver="clarabel", log=False)
    problem = KernelSVMProblem()
    solve_direct(problem, d1, cfg)
    reused = solve_direct(problem, d2, cfg)
    fresh = solve_direct(KernelSVMProblem(), d2, cfg)
    assert reused.objective == pytest.approx(fresh.objective, rel=1e-9)


def test_w_keeps_its_length_when_zero_weight_rows_are_dropped():
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(6, 4)), np.array([1, -1, 1, -1, 1, -1])
    res = aidopt.solve_svm(X, y, sample_weight=[1, 1, 1, 1, 0, 0], log=False)
    assert res.solution["w"].shape == (4,) and res.solution["alpha"].shape == (6,)
    assert (res.solution["alpha"][4:] == 0).all()


def test_indefinite_kernels_are_refused_or_not_certified():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    with pytest.raises(ValueError, match="coef0 >= 0"):
        aidopt.solve_svm(X, y, kernel="poly", coef0=-1.0, log=False)
    res = aidopt.solve_svm(X, y, kernel=lambda A, B: np.tanh(0.5 * A @ B.T - 1.0), log=False,
                           raise_on_failure=False)
    assert not res.certified
    assert res.certificate.residuals["kernel PSD (min eig / max eig)"] > 1e-6
