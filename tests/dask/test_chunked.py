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


@pytest.mark.parametrize("dtype", ["<f8", ">f8", "<i4", "<f4"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_npy_read_by_explicit_reads(tmp_path, dtype, order):
    """A .npy store is read at the chunks' offsets (C or Fortran order, any byte order), with no
    memory map left behind: the blocks own their memory."""
    from aidopt.data.chunked import open_store

    X = np.asarray(np.random.default_rng(0).normal(size=(N, M)) * 100, dtype=dtype, order=order)
    np.save(tmp_path / "X.npy", X)
    for rows in (10, 1, None):  # uneven chunks, one row each, the default
        array = open_store(tmp_path / "X.npy", chunk_rows=rows).array
        np.testing.assert_array_equal(array.compute(), X)
    block = array.blocks[0].compute()
    assert block.base is None or not isinstance(block.base, np.memmap)


def test_memory_map_is_read_from_its_file(tmp_path):
    """A memory map of a whole .npy file is streamed from the file (no copy in the graph); a
    slice of one, or a copy-on-write map, is an in-memory array like any other."""
    from aidopt.data.chunked import is_file_map

    X = np.random.default_rng(1).normal(size=(N, M))
    np.save(tmp_path / "X.npy", X)
    mm = np.load(tmp_path / "X.npy", mmap_mode="r")
    assert is_file_map(mm) and not is_file_map(mm[5:]) and not is_file_map(X)
    assert not is_file_map(np.load(tmp_path / "X.npy", mmap_mode="c"))
    C = as_chunked(mm, chunk_rows=25)
    held = [v for v in dict(C.array.dask).values() if isinstance(v, np.ndarray) and v.size > M]
    assert not held  # the graph reads the file, it holds no array of the data
    np.testing.assert_array_equal(np.asarray(C), X)
    np.testing.assert_array_equal(as_chunked(mm[5:], chunk_rows=25) @ np.ones(M), X[5:] @ np.ones(M))


@pytest.mark.parametrize("threads", [1, 3])
def test_group_sum_in_waves(pair, monkeypatch, threads):
    """The cluster sums are the same whatever the number of chunks computed per wave."""
    from aidopt.data import chunked

    X, C = pair
    labels = np.random.default_rng(2).integers(0, 7, size=N)
    monkeypatch.setattr(chunked, "_threads", lambda: threads)
    before = C.passes
    np.testing.assert_allclose(C.group_sum(labels, None, 7),
                               Partition.from_labels(labels).indicator() @ X, rtol=1e-13)
    assert C.passes == before + 1
    blocks = list(C.iter_blocks(lambda block: block.shape[0]))
    assert blocks == list(C.chunks)  # row order
