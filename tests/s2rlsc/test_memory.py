"""The full-kernel fitness builds few n x n arrays: K is checked and symmetrised in place, in row
blocks, and scaled in place to DKD; numpy's allocations are traced by tracemalloc."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import aidopt.numerics.rlsc as s2
from aidopt.numerics.kernels import rlsc_kernel as kernel_function
from aidopt.numerics.rlsc import RLSCFitness
from tests.s2rlsc._helpers import d_of, instance

N = 600


def _peak(fn):
    """``(result, peak bytes allocated by fn beyond what was allocated before)``."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = fn()
        return out, tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_kernel_and_fitness_peaks(kernel, monkeypatch):
    monkeypatch.setattr(s2, "_SYM_BLOCK_ENTRIES", 50 * N, raising=False)  # 50-row blocks
    # linear: full rank; rbf: few features (its blocks read squared norms of all of X)
    X = np.random.default_rng(0).normal(size=(N, 700 if kernel == "linear" else 5))
    kfun = kernel_function(kernel, None if kernel == "linear" else 2.0, X)
    unit = N * N * 8
    K, peak = _peak(lambda: s2._symmetric_kernel(kfun, X))
    assert peak <= 1.3 * unit  # K and a few blocks (was K, K - K', |K - K'|, (K + K')/2)
    np.testing.assert_array_equal(K, K.T)
    reference = kfun(X, X)
    np.testing.assert_allclose(K, 0.5 * (reference + reference.T), rtol=1e-13, atol=1e-13)
    d = np.where(np.arange(N) < 50, np.sqrt(1 / 50), np.sqrt(1 / (N - 50)))
    fit, peak = _peak(lambda: RLSCFitness.from_kernel(K, d, 0.5, overwrite=True))
    assert peak <= 2.2 * unit  # the eigenvectors and the kept ones, C-ordered
    assert fit.V.flags.c_contiguous and np.all(np.diff(fit.eig) <= 0)
    Kbar = d[:, None] * reference * d[None, :]
    eig, V = np.linalg.eigh(0.5 * (Kbar + Kbar.T))
    keep = eig > s2.RANK_TOL * eig.max()
    np.testing.assert_allclose(np.sort(fit.eig), eig[keep], rtol=1e-9, atol=1e-12)
    y = np.where(np.random.default_rng(1).random(N) < 0.5, 1.0, -1.0)
    reference_F = float(d @ d - ((V[:, keep].T @ (d * y)) ** 2 * eig[keep] / (eig[keep] + 0.5)).sum())
    assert fit(y) == pytest.approx(reference_F, rel=1e-10, abs=1e-12)


def test_from_kernel_leaves_the_callers_matrix_alone_by_default():
    Xtr, ytr, *_ = instance(l=6, u=30, d=5, seed=70)
    K = Xtr @ Xtr.T
    kept = K.copy()
    a = RLSCFitness.from_kernel(K, d_of(ytr), 1.0)
    np.testing.assert_array_equal(K, kept)
    b = RLSCFitness.from_kernel(K, d_of(ytr), 1.0, overwrite=True)
    assert not np.array_equal(K, kept)  # scaled in place
    y = np.where(ytr == 0, 1.0, ytr)
    assert a(y) == pytest.approx(b(y), abs=1e-13)
