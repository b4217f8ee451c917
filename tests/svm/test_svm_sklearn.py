"""The SVM objectives agree with scikit-learn's SVC (libsvm) on the same data, C and kernel."""

from __future__ import annotations

import numpy as np
import pytest

import aidopt
from tests.svm._helpers import close, instance, svc_kernel_objective, svm_objective

sklearn = pytest.importorskip("sklearn")
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel  # noqa: E402
from sklearn.svm import SVC  # noqa: E402


@pytest.mark.parametrize("C", [0.05, 1.0])
@pytest.mark.parametrize("aid", [True, False], ids=["aid", "direct"])
def test_l2_matches_linear_svc(C, aid):
    X, y = instance("overlapping", 300, 4, 31)
    clf = SVC(kernel="linear", C=C, tol=1e-8).fit(X, y)
    w_sk, b_sk = clf.coef_[0], clf.intercept_[0]
    sk = svm_objective(X, y, w_sk, b_sk, C)
    # libsvm's own dual objective agrees with the primal value computed from coef_
    assert sk == pytest.approx(svc_kernel_objective(clf, X, y, C, linear_kernel), rel=1e-9)

    res = aidopt.solve_svm(X, y, C=C, aid=aid, log=False)
    assert res.certified, res.summary()
    assert res.objective == pytest.approx(sk, rel=1e-4)
    # the 2-norm objective is strictly convex in w: the optimal w is unique
    np.testing.assert_allclose(res.solution["w"], w_sk, atol=1e-3 * np.abs(w_sk).max())
    # neither side is below the other's certified optimum by more than solver accuracy
    assert sk >= res.certificate.dual_objective - 1e-6 * max(1.0, sk)


def test_l2_with_sample_weight_matches_svc():
    X, y = instance("overlapping", 300, 3, 32)
    s = np.random.default_rng(32).uniform(0.5, 2.0, size=len(y))
    C = 0.5
    clf = SVC(kernel="linear", C=C, tol=1e-8).fit(X, y, sample_weight=s)
    sk = svm_objective(X, y, clf.coef_[0], clf.intercept_[0], C, s=s)
    res = aidopt.solve_svm(X, y, C=C, sample_weight=s, log=False)
    assert res.certified
    assert res.objective == pytest.approx(sk, rel=1e-4)


KERNELS = [  # (kernel, aidopt kwargs, SVC kwargs, kernel function for the objective)
    ("rbf", {}, {"gamma": "scale"}, None),
    ("rbf", {"gamma": 0.7}, {"gamma": 0.7}, lambda A, B: rbf_kernel(A, B, gamma=0.7)),
    ("poly", {"gamma": 0.3, "degree": 2, "coef0": 1.0}, {"gamma": 0.3, "degree": 2, "coef0": 1.0},
     lambda A, B: polynomial_kernel(A, B, degree=2, gamma=0.3, coef0=1.0)),
    ("poly", {"gamma": 0.5, "degree": 3, "coef0": 0.5}, {"gamma": 0.5, "degree": 3, "coef0": 0.5},
     lambda A, B: polynomial_kernel(A, B, degree=3, gamma=0.5, coef0=0.5)),
]


@pytest.mark.parametrize("aid", [True, False], ids=["aid", "direct"])
@pytest.mark.parametrize(("kernel", "ours", "theirs", "kfun"), KERNELS,
                         ids=["rbf-scale", "rbf-0.7", "poly2", "poly3"])
def test_kernel_matches_svc(kernel, ours, theirs, kfun, aid):
    X, y = instance("overlapping", 200, 3, 33)
    C = 1.0
    clf = SVC(kernel=kernel, C=C, tol=1e-8, **theirs).fit(X, y)
    if kfun is None:  # gamma="scale": 1 / (m Var(X)), as scikit-learn
        gamma = 1.0 / (X.shape[1] * X.var())
        assert clf._gamma == pytest.approx(gamma)

        def kfun(A, B):
            return rbf_kernel(A, B, gamma=gamma)

    sk = svc_kernel_objective(clf, X, y, C, kfun)
    res = aidopt.solve_svm(X, y, C=C, kernel=kernel, aid=aid, log=False, **ours)
    assert res.certified, res.summary()
    assert res.objective == pytest.approx(sk, rel=1e-4)
    if kernel == "rbf" and "gamma" not in ours:
        assert res.solution["gamma"] == pytest.approx(clf._gamma, rel=1e-12)

    # the kernel solution's own objective, recomputed here from alpha, b and the kernel matrix
    alpha, b = res.solution["alpha"], res.solution["b"]
    assert alpha.shape == (len(y),)
    assert np.all(alpha >= -1e-9) and np.all(alpha <= C * (1 + 1e-6))
    assert abs(float(alpha @ y)) <= 1e-6 * max(1.0, float(alpha.sum()))
    K = kfun(X, X)
    f = K @ (alpha * y) + b
    E = 0.5 * float((alpha * y) @ K @ (alpha * y)) + C * float(np.maximum(0.0, 1.0 - y * f).sum())
    assert close(E, res.objective, 1e-6)


def test_kernel_aid_equals_direct_callable_kernel():
    """A callable kernel (here a scaled linear kernel) goes through the same kernel AID."""
    X, y = instance("overlapping", 200, 3, 34)

    def kern(A, B):
        return 0.5 * (A @ B.T)

    aid = aidopt.solve_svm(X, y, C=0.5, kernel=kern, log=False)
    direct = aidopt.solve_svm(X, y, C=0.5, kernel=kern, aid=False, log=False)
    assert aid.certified and direct.certified
    assert close(aid.objective, direct.objective, 1e-6)
    # K = 0.5 X X' is the linear SVM on X / sqrt(2)
    lin = aidopt.solve_svm(X / np.sqrt(2.0), y, C=0.5, aid=False, log=False)
    assert close(aid.objective, lin.objective, 1e-6)
