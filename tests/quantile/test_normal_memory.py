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


@pytest.mark.parametrize("seed", [0, 1])
def test_the_dense_factor_of_a_sparse_x_solves_as_the_sparse_one(seed, monkeypatch):
    """Above DENSE_SHARE of the triangle (here with DENSE_COLUMNS lowered): the m x m matrix
    factored by LAPACK in place gives the solves of CHOLMOD's factor, and of a dense Cholesky."""
    X, rng = _awkward(seed)
    d = rng.uniform(0.1, 10.0, X.shape[0])
    r = rng.normal(size=X.shape[1])
    sparse_ne = normal.NormalEquations(X)
    assert not sparse_ne.dense_factor  # fewer than DENSE_COLUMNS columns
    sparse_ne.factor(d)
    monkeypatch.setattr(normal, "DENSE_COLUMNS", 1)
    dense_ne = normal.NormalEquations(X)
    assert dense_ne.dense_factor
    dense_ne.factor(d)
    np.testing.assert_allclose(dense_ne.solve(r), sparse_ne.solve(r), rtol=1e-9, atol=1e-12)
    dense_ne.factor(2.0 * d)  # the buffer refilled: half the solution
    np.testing.assert_allclose(dense_ne.solve(r), 0.5 * sparse_ne.solve(r), rtol=1e-9,
                               atol=1e-12)


def test_a_singular_dense_factor_gets_the_ridge(monkeypatch):
    """Two equal columns: X'DX is singular; the ridged dense factor still solves a consistent
    system (as the sparse path's ridge)."""
    X, rng = _rows(200, 12, 4, 5)
    X = sparse.hstack([np.ones((200, 1)), X, X[:, [3]]], format="csr")
    monkeypatch.setattr(normal, "DENSE_COLUMNS", 1)
    ne = normal.NormalEquations(X)
    assert ne.dense_factor
    ne.factor(np.ones(200))
    r = X.T @ rng.normal(size=200)  # in the range of X'X
    x = ne.solve(r)
    np.testing.assert_allclose(X.T @ (X @ x), r, rtol=1e-5, atol=1e-6)


def test_frisch_newton_with_the_dense_factor_equals_the_sparse_one(monkeypatch):
    from aidopt.bench.lad import instance
    from aidopt.numerics.fn import frisch_newton

    X, y = instance("text:40", 1000, 100, 0)
    reference = frisch_newton(X, y, tol=1e-8)
    monkeypatch.setattr(normal, "DENSE_COLUMNS", 1)
    assert normal.NormalEquations(X).dense_factor
    res = frisch_newton(X, y, tol=1e-8)
    assert res.status == reference.status == "optimal"
    assert res.objective == pytest.approx(reference.objective, rel=1e-10)
    np.testing.assert_allclose(res.beta, reference.beta, rtol=1e-6, atol=1e-8)


def test_the_dense_factor_traces_the_m_by_m_matrix_only(monkeypatch):
    """The dense factor's traced peak is its m x m matrix (8 m^2 bytes) and little more."""
    X, rng = _rows(3000, 1000, 20, 3)
    X.sum_duplicates()
    monkeypatch.setattr(normal, "DENSE_COLUMNS", 1)
    normal.NormalEquations(X[:60]).factor(np.ones(60))  # numba's compilations outside
    tracemalloc.start()
    try:
        ne = normal.NormalEquations(X)
        ne.factor(rng.uniform(0.5, 2.0, X.shape[0]))
        ne.solve(np.ones(X.shape[1]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ne.dense_factor
    csr = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    assert peak < 8 * X.shape[1] ** 2 + 2 * csr, (peak, csr)
