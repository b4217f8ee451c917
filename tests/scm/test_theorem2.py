"""Theorem 2 of Yuan, Li & Zhang (2006): the support cluster machine (6) and the duplicate SVM (7)
(every row replaced by its cluster's representative) have the same optimal value, the cluster
sums of an optimal (7) are optimal for (6), and an optimal (6) spread over the clusters is optimal
for (7). Checked with SCM's own partition and representatives, (7) solved independently."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.instances.scm import sine_set
from aidopt.models import kernel_svm, svm

import aidopt
from aidopt import solvers
from aidopt.api.scm import solve_scm

C = 1.0


def _G(alpha, y, K) -> float:
    """The dual objective in the paper's minimization form, G(alpha) = 1/2 a'Qa - e'a."""
    v = alpha * y
    return 0.5 * float(v @ K @ v) - float(alpha.sum())


def _duplicate_svm(K_tilde, y):
    """(7) on its kernel matrix, solved by Clarabel (a model of its own, not SCM's code)."""
    model = kernel_svm.create_instance(K_tilde, y, None, C)
    outcome = solvers.solve_model(model, "clarabel", need_duals=True)
    assert outcome.optimal
    return svm.solution_from(model, outcome.duals)[2]


@pytest.mark.parametrize("kernel, representative", [
    ("linear", "centroid"), ("rbf", "centroid"), ("rbf", "pseudo")])
def test_scm_is_the_duplicate_svm(kernel, representative):
    X, y = sine_set("D2", n_pos=15, n_neg=150, seed=3)
    res = solve_scm(X, y, kernel=kernel, gamma=0.5, C=C, representative=representative,
                    max_iter=1, log=False)
    lab = res.cluster_of
    assert (lab >= 0).all()  # round 0 holds every row
    k = lab.max() + 1
    Z = np.zeros((y.size, k))
    Z[np.arange(y.size), lab] = 1.0
    sizes = Z.sum(axis=0)
    K = res.kernel(X, X)
    if representative == "centroid":  # <m_h, m_l> of the feature-space centroids (8)
        S = Z / sizes
        K_pi = S.T @ K @ S
    else:  # the pseudo-centre (10) maximizes the within-cluster kernel sum
        u = res.pseudo_centres
        for c in range(k):
            members = np.flatnonzero(lab == c)
            assert K[u[c], members].sum() == pytest.approx(K[np.ix_(members, members)].sum(1).max())
        K_pi = K[np.ix_(u, u)]
    y_pi = res.svm.y
    assert np.array_equal(y_pi[lab], y)  # label-pure clusters
    np.testing.assert_array_equal(res.svm.weights, sizes)

    K_tilde = Z @ K_pi @ Z.T
    alpha_d = _duplicate_svm(K_tilde, y)
    G_scm, G_dsvm = _G(res.svm.alpha, y_pi, K_pi), _G(alpha_d, y, K_tilde)
    assert G_scm == pytest.approx(G_dsvm, rel=1e-6, abs=1e-7)
    assert res.svm.certificate.certified
    assert res.svm.objective == pytest.approx(-G_scm, rel=1e-6)  # strong duality of (6)

    # cluster sums of the optimal (7): feasible for (6) and optimal
    agg = Z.T @ alpha_d
    assert np.all(agg <= C * sizes * (1 + 1e-6) + 1e-9)
    assert abs(agg @ y_pi) <= 1e-6 * max(1.0, agg.sum())
    assert _G(agg, y_pi, K_pi) == pytest.approx(G_scm, rel=1e-6, abs=1e-7)
    # the optimal (6) spread as alpha_c / |pi_c|: feasible for (7) and optimal
    spread = (res.svm.alpha / sizes)[lab]
    assert np.all(spread <= C * (1 + 1e-6) + 1e-9)
    assert _G(spread, y, K_tilde) == pytest.approx(G_dsvm, rel=1e-6, abs=1e-7)


def test_linear_scm_is_the_svm_on_duplicated_centroids():
    """The same through aidopt's certified SVM: (7) with the linear kernel is the SVM on the rows
    moved to their cluster centroids; both give the same w."""
    X, y = sine_set("D2", n_pos=20, n_neg=200, seed=1)
    res = solve_scm(X, y, kernel="linear", C=C, max_iter=1, log=False)
    lab = res.cluster_of
    U = np.vstack([X[lab == c].mean(axis=0) for c in range(lab.max() + 1)])
    dsvm = aidopt.solve_svm(U[lab], y, C=C, aid=False, log=False)
    assert dsvm.certified and res.certified
    assert res.svm.objective == pytest.approx(dsvm.objective, rel=1e-6)
    np.testing.assert_allclose(res.w, dsvm.solution["w"], atol=1e-5)
