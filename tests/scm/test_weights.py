"""The cluster sizes |pi_c| reach the weighted SVM (6) as its box |pi_c| C: a cluster of s
identical rows behaves like the s rows."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.decomposition.run import RunConfig

import aidopt
from aidopt.api.scm import solve_representative_svm, solve_scm


def _copies(s=5, seed=0):
    """10 positives and 40 distinct negatives, each negative repeated s times (overlapping)."""
    rng = np.random.default_rng(seed)
    P = rng.normal(size=(10, 2)) + 1.0
    N = rng.normal(size=(40, 2))
    X = np.vstack([P, np.repeat(N, s, axis=0)])
    return X, np.r_[np.ones(10), -np.ones(40 * s)]


def test_a_cluster_of_s_copies_is_the_s_rows():
    s, C = 5, 0.05
    X, y = _copies(s)
    res = solve_scm(X, y, kernel="rbf", gamma=1.0, C=C, k_neg=40, max_iter=1, log=False)
    neg = np.flatnonzero(y < 0)
    groups = res.cluster_of[neg].reshape(40, s)  # the copies of one point, one cluster each
    assert np.all(groups == groups[:, :1]) and np.unique(groups[:, 0]).size == 40
    assert np.all(res.svm.weights[res.svm.y < 0] == s)
    full = aidopt.solve_svm(X, y, C=C, kernel="rbf", gamma=1.0, aid=False, log=False)
    assert full.certified and res.certified
    assert res.svm.objective == pytest.approx(full.objective, rel=1e-6)
    # the box is s C: clusters take duals above C, which a row of weight 1 cannot
    assert np.any(res.svm.alpha[res.svm.y < 0] > 1.5 * C)
    assert np.all(res.svm.alpha <= C * res.svm.weights * (1 + 1e-6) + 1e-9)


def test_weights_in_the_representative_svm():
    """(6) with weights (3, 1, ..., 1) equals the SVM with the first row three times, and
    differs from the unweighted SVM."""
    rng = np.random.default_rng(1)
    U = rng.normal(size=(30, 2))
    y = np.where(U[:, 0] + 0.8 * rng.normal(size=30) > 0, 1.0, -1.0)
    weights = np.ones(30)
    weights[0] = 3.0
    config = RunConfig(solver="clarabel", log=False)
    weighted = solve_representative_svm(y, weights, 0.5, config, U=U)
    tripled = aidopt.solve_svm(np.vstack([U, U[[0, 0]]]), np.r_[y, y[[0, 0]]], C=0.5, aid=False,
                               log=False)
    plain = solve_representative_svm(y, np.ones(30), 0.5, config, U=U)
    assert weighted.certificate.certified and tripled.certified
    assert weighted.objective == pytest.approx(tripled.objective, rel=1e-6)
    assert abs(weighted.objective - plain.objective) > 1e-3 * plain.objective
