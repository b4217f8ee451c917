"""The 1-norm SVM selects features (exact zeros from HiGHS vertices); the 2-norm SVM does not."""

from __future__ import annotations

import numpy as np
import pytest

import aidopt

N_INFORMATIVE, N_NOISE = 3, 20


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    n = 1000
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    informative = rng.normal(size=(n, N_INFORMATIVE)) + 0.8 * y[:, None]
    noise = rng.normal(size=(n, N_NOISE))
    return np.hstack([informative, noise]), y


@pytest.mark.parametrize("aid", [True, False], ids=["aid", "direct"])
def test_l1_svm_is_sparse_l2_is_dense(data, aid):
    X, y = data
    C = 0.02
    l1 = aidopt.solve_svm(X, y, C=C, norm="l1", solver="highs", aid=aid, log=False)
    l2 = aidopt.solve_svm(X, y, C=C, norm="l2", aid=aid, log=False)
    assert l1.certified and l2.certified
    w1, w2 = l1.solution["w"], l2.solution["w"]
    # every informative feature is kept, with the right sign
    assert np.all(w1[:N_INFORMATIVE] > 1e-3)
    assert np.all(w2[:N_INFORMATIVE] > 1e-3)
    # most noise coefficients are exactly zero under the 1-norm ...
    zeros = int((np.abs(w1[N_INFORMATIVE:]) < 1e-9).sum())
    assert zeros >= 15, w1
    # ... and none under the 2-norm
    assert np.all(np.abs(w2) > 1e-9), w2


def test_l1_sparsity_grows_as_C_shrinks(data):
    X, y = data
    nnz = []
    for C in (1.0, 0.1, 0.01):
        res = aidopt.solve_svm(X, y, C=C, norm="l1", solver="highs", aid=False, log=False)
        assert res.certified
        nnz.append(int((np.abs(res.solution["w"]) >= 1e-9).sum()))
    assert nnz[0] >= nnz[1] >= nnz[2]
    assert nnz[2] < nnz[0]


def test_linf_svm_equalises_large_coefficients(data):
    """The infinity-norm optimum puts many |w_j| at the common maximum sigma."""
    X, y = data
    res = aidopt.solve_svm(X, y, C=0.02, norm="linf", solver="highs", aid=False, log=False)
    assert res.certified
    w = np.abs(res.solution["w"])
    assert int((w >= w.max() * (1 - 1e-7)).sum()) >= 2
