"""KernelGram: the cache limit is read when a Gram is made (so it can be lowered at run time) and
passed on to subsets; the diagonal of a named kernel needs no kernel block; the pseudo-centre is
the member nearest to its cluster's centroid in feature space for every kernel."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.instances.scm import sine_set

import aidopt.numerics.kernel_kmeans as scm
from aidopt.api.scm import solve_scm
from aidopt.numerics.kernel_kmeans import KernelGram, kernel_diagonal
from aidopt.numerics.kernels import svc_kernel


def test_the_default_cache_is_at_most_256_mb():
    assert scm.CACHE_ENTRIES * 8 <= 256 * 2**20


def test_cache_limit_is_read_at_construction_and_kept_by_subsets(monkeypatch):
    X = np.random.default_rng(0).normal(size=(40, 3))
    kfun = svc_kernel("rbf", 0.5)
    assert KernelGram(X, kfun).K is not None
    monkeypatch.setattr(scm, "CACHE_ENTRIES", 100)  # 10 x 10 at most
    g = KernelGram(X, kfun)
    assert g.K is None
    assert g.subset(np.arange(12)).K is None and g.subset(np.arange(10)).K is not None
    big = KernelGram(X, kfun, cache_entries=40 * 40)
    assert big.K is not None and big.subset(np.arange(0, 40, 2)).cache_entries == 1600


@pytest.mark.parametrize("kernel", ["rbf", "poly", "linear"])
def test_uncached_diagonal_of_named_kernels_evaluates_no_pair(kernel):
    X = np.random.default_rng(1).normal(size=(300, 4))
    kfun = svc_kernel(kernel, 0.3, 3, 1.5)
    calls = []

    def counting(A, B):
        calls.append((A.shape[0], B.shape[0]))
        return kfun(A, B)

    g = KernelGram(X, counting, cache_entries=0, diag=kernel_diagonal(kernel, 0.3, 3, 1.5))
    rows = np.arange(5, 290, 3)
    np.testing.assert_allclose(g.diag(rows), np.diagonal(kfun(X[rows], X[rows])), rtol=1e-12)
    assert calls == []
    assert kernel_diagonal(kfun) is None  # a callable: read from small blocks
    plain = KernelGram(X, counting, cache_entries=0)
    np.testing.assert_allclose(plain.diag(rows), np.diagonal(kfun(X[rows], X[rows])), rtol=1e-12)
    assert max(a for a, _ in calls) <= 32


@pytest.mark.parametrize("kernel", ["linear", "poly"])
def test_pseudo_centre_is_the_member_nearest_the_centroid(kernel):
    """(10), the largest within-cluster kernel sum, is the nearest member only when K_ii is
    constant; for the linear kernel the feature space is the input space, so the nearest member
    to the cluster mean can be checked directly."""
    X, y = sine_set("D2", n_pos=15, n_neg=150, seed=3)
    res = solve_scm(X, y, kernel=kernel, gamma=0.5, C=1.0, representative="pseudo", max_iter=1,
                    log=False)
    lab, centres = res.cluster_of, res.pseudo_centres
    K = res.kernel(X, X)
    argmax_sum = 0
    for c in range(lab.max() + 1):
        members = np.flatnonzero(lab == c)
        Kc = K[np.ix_(members, members)]
        dist = np.diag(Kc) - 2.0 * Kc.mean(axis=1)  # ||phi_i - m_c||^2 up to a constant
        assert centres[c] == members[np.argmin(dist)]
        if kernel == "linear":
            mean = X[members].mean(axis=0)
            assert centres[c] == members[np.argmin(((X[members] - mean) ** 2).sum(axis=1))]
        argmax_sum += centres[c] == members[np.argmax(Kc.sum(axis=1))]
    assert argmax_sum < lab.max() + 1  # (10) read literally picks other members here
