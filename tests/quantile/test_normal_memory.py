"""The sparse normal equations of Frisch-Newton (:class:`aidopt.numerics.normal.NormalEquations`):
the pattern of the upper triangle of :math:`|X|^\\top |X|` built column by column equals scipy's
(``triu`` of the full product), on inputs with stored zeros, duplicates, unsorted indices and
empty columns; the solves equal a dense Cholesky's; and the traced peak of building, factoring
and solving stays below a small multiple of X's CSR bytes plus the bytes of the matrix handed
to CHOLMOD (the full product and its ``triu`` copies, as built before, took 6.5 times that)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from scipy import linalg, sparse

from aidopt.numerics import normal

pytest.importorskip("cvxopt")


def _rows(n, m, per_row, seed):
    rng = np.random.default_rng(seed)
    X = sparse.csr_matrix((rng.normal(size=per_row * n), rng.integers(0, m, per_row * n),
                           np.arange(0, per_row * n + 1, per_row)), shape=(n, m))
    return X, rng


def _awkward(seed):
    """CSR with unsorted indices, duplicates (summed by scipy, kept here), a stored zero, an
    intercept column and two empty columns."""
    X, rng = _rows(400, 30, 4, seed)  # duplicates and unsorted indices: not canonical
    X = sparse.hstack([np.ones((400, 1)), X, sparse.csr_matrix((400, 2))], format="csr")
    perm = rng.permutation(X.indices.size)  # shuffle within rows: unsorted indices
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        order = lo + np.argsort(perm[lo:hi])
        X.indices[lo:hi], X.data[lo:hi] = X.indices[order].copy(), X.data[order].copy()
    X.has_sorted_indices = False
    X.data[5] = 0.0  # a stored zero
    return X, rng


@pytest.mark.parametrize("seed", [0, 1])
def test_the_pattern_and_the_solves_equal_scipy_and_dense_cholesky(seed):
    X, rng = _awkward(seed)
    dense = X.toarray()
    used = np.flatnonzero(np.abs(dense).sum(axis=0) > 0)
    ne = normal.NormalEquations(X)
    assert np.array_equal(ne.used, used)
    Xu = sparse.csr_matrix(dense[:, used])
    U = sparse.triu(abs(Xu.T) @ abs(Xu), format="csc")  # the upper triangle by columns
    U.sort_indices()
    indptr, indices = ne._pattern
    assert indices.dtype == np.int32
    assert np.array_equal(indptr, U.indptr) and np.array_equal(indices, U.indices)
    d = rng.uniform(0.1, 10.0, X.shape[0])
    r = rng.normal(size=X.shape[1])
    ne.factor(d)
    A = (dense[:, used] * d[:, None]).T @ dense[:, used]
    expected = np.zeros(X.shape[1])
    expected[used] = linalg.solve(A, r[used], assume_a="pos")
    np.testing.assert_allclose(ne.solve(r), expected, rtol=1e-9, atol=1e-12)
    # X itself is left as it was given
    assert X.data[5] == 0.0 and not X.has_sorted_indices


def test_a_canonical_csr_x_is_not_copied():
    X, _ = _rows(300, 40, 5, 2)
    X.sum_duplicates()
    X = sparse.hstack([np.ones((300, 1)), X], format="csr")  # every column used
    ne = normal.NormalEquations(X)
    assert np.shares_memory(ne.X.data, X.data) and np.shares_memory(ne.X.indices, X.indices)


def test_the_traced_peak_is_a_small_multiple_of_the_inputs():
    """3000 x 1000 with 20 entries a row: X'X is about 70 % dense (338k upper entries). The
    traced peak (numpy's arrays; cvxopt's and CHOLMOD's own are not traced) of building,
    factoring and solving is below 1.5 x (X's CSR bytes + 8 bytes a matrix entry); measured
    0.6 x; the full product with triu's copies took 6.5 x."""
    X, rng = _rows(3000, 1000, 20, 3)
    X.sum_duplicates()
    normal.NormalEquations(X[:60]).factor(np.ones(60))  # numba's compilations outside
    tracemalloc.start()
    try:
        ne = normal.NormalEquations(X)
        ne.factor(rng.uniform(0.5, 2.0, X.shape[0]))
        ne.solve(np.ones(X.shape[1]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    csr = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    matrix = 8 * ne._pattern[1].size
    assert peak < 1.5 * (csr + matrix), (peak, csr, matrix)
