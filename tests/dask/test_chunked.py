"""ChunkedMatrix: every operation equals numpy's, one pass each, and nothing large is loaded."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from aidopt.decomposition import Partition  # noqa: E402

from aidopt.data.chunked import ChunkedMatrix, LoadRefusedError, as_chunked  # noqa: E402

N, M = 103, 4


@pytest.fixture(params=[10, 1, N], ids=["chunks-of-10", "chunks-of-1", "one-chunk"])
def pair(request):
    X = np.random.default_rng(0).normal(size=(N, M))
    return X, ChunkedMatrix(da.from_array(X, chunks=(request.param, 2)))  # columns merged


def test_numpy_surface(pair):
    X, C = pair
    assert (C.shape, C.ndim, C.dtype, len(C), C.array.numblocks[1]) == ((N, M), 2, np.float64, N, 1)
    v, u = np.arange(M, dtype=float), np.linspace(-1, 1, N)
    np.testing.assert_allclose(C @ v, X @ v, rtol=1e-14)
    np.testing.assert_allclose(C @ np.ones((M, 2)), X @ np.ones((M, 2)), rtol=1e-14)
    np.testing.assert_allclose(C.T @ u, X.T @ u, rtol=1e-13)
    np.testing.assert_allclose(u @ C, u @ X, rtol=1e-13)
    assert C.T.shape == (M, N) and C.T.T is C
    assert C.passes == 4 and C.pass_counts["X.T @ u"] == 2


def test_row_reads(pair):
    X, C = pair
    idx = np.array([50, 3, 50, -1, 0])  # unsorted, duplicated, negative
    np.testing.assert_array_equal(C[idx], X[idx])
    mask = np.arange(N) % 7 == 0
    np.testing.assert_array_equal(C[mask], X[mask])
    np.testing.assert_array_equal(C[5], X[5])
    np.testing.assert_array_equal(C[10:20, 1], X[10:20, 1])
    np.testing.assert_array_equal(np.asarray(C), X)
    with pytest.raises(IndexError, match="out of range"):
        C[np.array([N])]


def test_group_sum_equals_indicator_product(pair):
    X, C = pair
    rng = np.random.default_rng(1)
    labels, w = rng.integers(0, 9, size=N), rng.uniform(0.5, 2, size=N)
    part = Partition.from_labels(labels)
    W, (means,) = part.weighted_means(w, X)
    W_c, (means_c,) = part.weighted_means(w, C)
    np.testing.assert_array_equal(W, W_c)
    np.testing.assert_allclose(means_c, means, rtol=1e-13)
    sums = C.group_sum(labels, None, 12)  # clusters 9..11 have no rows
    assert sums.shape == (12, M) and not sums[9:].any()
    np.testing.assert_allclose(sums[:9], part.indicator() @ X, rtol=1e-13)


def test_large_loads_and_ufuncs_refused():
    C = ChunkedMatrix(da.ones((1000, 10), chunks=(100, 10)), max_load_bytes=8 * 1000)
    with pytest.raises(LoadRefusedError, match="refusing to load"):
        np.asarray(C)
    with pytest.raises(LoadRefusedError):
        C[np.arange(500)]
    assert C[np.arange(100)].shape == (100, 10)  # exactly at the limit
    with pytest.raises(TypeError):
        np.abs(C)  # a ufunc would load X: refused, not computed


def test_derived_matrices_share_the_pass_count():
    X = np.arange(30.0).reshape(10, 3)
    C = as_chunked(X, chunk_rows=4)
    keep = np.arange(10) % 3 != 0
    sub = C.subset(keep)
    np.testing.assert_array_equal(sub @ np.ones(3), X[keep] @ np.ones(3))
    ones = C.with_ones_column()
    np.testing.assert_array_equal(np.asarray(ones), np.column_stack([X, np.ones(10)]))
    assert C.passes == sub.passes == ones.passes == 2


def test_construction_errors():
    with pytest.raises(ValueError, match="2-d"):
        ChunkedMatrix(da.ones(5))
    with pytest.raises(TypeError, match="numeric"):
        ChunkedMatrix(da.from_array(np.array([["a", "b"]] * 3)))
    unknown = da.ones((6, 2), chunks=(3, 2))
    unknown = unknown[unknown[:, 0] > 0]  # a dask-array mask: unknown chunk sizes
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        ChunkedMatrix(unknown)
    assert ChunkedMatrix(da.ones((4, 2), dtype=int, chunks=2)).dtype == np.float64
