"""A sparse path never makes the n x m array: tracemalloc's peak during a solve on sparse input
stays far below ``8 n m`` bytes (a small multiple of the CSR's own bytes for the SVM's dual
coordinate descent), and ``time_limit`` counts the building of the LP from a wide sparse X."""

from __future__ import annotations

import time
import tracemalloc
import warnings

import numpy as np
import pytest
from scipy import sparse

import aidopt
from aidopt.data.validate import RankWarning


def _csr(n, m, per_row, seed):
    """n x m CSR with about ``per_row`` stored entries a row, built without an n x m step."""
    rng = np.random.default_rng(seed)
    X = sparse.csr_matrix((rng.normal(size=per_row * n), rng.integers(0, m, per_row * n),
                           np.arange(0, per_row * n + 1, per_row)), shape=(n, m))
    X.sum_duplicates()
    return X, rng


def _bytes(X) -> int:
    return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes


def _peak(solve):
    """``(result, peak bytes)`` of ``solve()`` under tracemalloc (numpy reports its buffers)."""
    tracemalloc.start()
    try:
        result = solve()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_linear_svm_on_a_1e5_by_1e5_csr_input_stays_near_the_input_size():
    n = m = 100_000
    X, rng = _csr(n, m, 5, 0)
    y = np.where(X @ rng.normal(size=m) + 0.1 * rng.normal(size=n) > 0, 1, -1)
    aidopt.solve_svm(X[:200], y[:200], C=0.001, log=False)  # imports outside the measurement
    res, peak = _peak(lambda: aidopt.solve_svm(X, y, C=0.001, tol=1e-3, log=False))
    assert "dual coordinate descent on the full data" in res.message
    assert res.certified and res.solution["w"].shape == (m,)
    assert peak < 8 * _bytes(X)  # measured: 3.1 times the CSR's 6.4 MB
    assert peak < n * m * 8 / 1000


def test_wide_sparse_lad_never_allocates_n_by_m():
    n, m = 3000, 10_000
    X, rng = _csr(n, m, 3, 1)
    y = X @ rng.normal(size=m) + rng.laplace(size=n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankWarning)  # most columns are empty
        aidopt.solve_lad(X[:20, :40], y[:20], log=False)
        res, peak = _peak(lambda: aidopt.solve_lad(X, y, log=False))
    assert res.certified and "the dual LP on the full data" in res.message
    assert peak < n * m * 8 / 10  # measured 1/24: the LP of the stored entries, O(m) names


@pytest.mark.parametrize("solve", ["svm", "lad"])
def test_time_limit_counts_the_build_on_wide_sparse_input(solve):
    """The 1-norm SVM's LP (and LAD's dual LP) from a wide sparse X take far longer to build
    than the limit: the call returns at the limit with a time_limit termination and claims
    nothing."""
    n, m = 20_000, 60_000
    X, rng = _csr(n, m, 20, 2)
    y = np.where(rng.random(n) < 0.5, 1, -1) if solve == "svm" else rng.normal(size=n)
    limit = 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankWarning)
        for rows, time_limit in ((slice(0, 30), None), (slice(None), limit)):  # imports first
            start = time.perf_counter()
            if solve == "svm":
                res = aidopt.solve_svm(X[rows], y[rows], norm="l1", aid=False, log=False,
                                       time_limit=time_limit)
            else:
                res = aidopt.solve_lad(X[rows], y[rows], log=False, time_limit=time_limit,
                                       solver="clarabel", aid=False)
            elapsed = time.perf_counter() - start
    assert res.termination.value == "time_limit"
    assert "while building the model" in res.message
    assert not res.certified and not res.solution.get("w", res.solution.get("beta", []))
    assert elapsed < limit + 2.0, elapsed
