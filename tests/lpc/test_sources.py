"""Row-block sources: memmap, .npy paths and Parquet files give what the in-memory path gives,
and a Parquet file is read row group by row group, never whole."""

from __future__ import annotations

import numpy as np
import pytest

from aidopt.api.lpc import solve_lp_chunked, solve_lsvm_lpc
from aidopt.data.rowblocks import ArraySource, ParquetSource, block_ranges, row_source

from ._lps import vertex_lp

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def _write_parquet(path, M, v, vector="b", row_group_size=37):
    table = pa.table({**{f"h{j}": M[:, j] for j in range(M.shape[1])}, vector: v})
    pq.write_table(table, path, row_group_size=row_group_size)


def _same(a, b):
    assert a.termination == b.termination == "certified_optimal"
    assert a.objective == pytest.approx(b.objective, rel=1e-12, abs=1e-12)
    assert [h.F_t for h in a.history] == pytest.approx([h.F_t for h in b.history], rel=1e-12)
    assert np.allclose(a.solution["x"], b.solution["x"], atol=1e-12)


@pytest.fixture(scope="module")
def lp():
    return vertex_lp(21, m=500, n=5, extra_tight=3)


@pytest.fixture(scope="module")
def in_memory(lp):
    c, H, b = lp
    return solve_lp_chunked(c, H, b, chunks=7, log=False)


def test_memmap_equals_in_memory(lp, in_memory, tmp_path):
    c, H, b = lp
    np.save(tmp_path / "H.npy", H)
    np.save(tmp_path / "b.npy", b)
    by_path = solve_lp_chunked(c, str(tmp_path / "H.npy"), tmp_path / "b.npy", chunks=7, log=False)
    _same(by_path, in_memory)
    mm = np.memmap(tmp_path / "H.raw", dtype=float, mode="w+", shape=H.shape)
    mm[:] = H
    mm.flush()
    ro = np.memmap(tmp_path / "H.raw", dtype=float, mode="r", shape=H.shape)
    _same(solve_lp_chunked(c, ro, b, chunks=7, log=False), in_memory)
    assert row_source(ro, b).kind == "memmap"


def test_parquet_equals_in_memory(lp, in_memory, tmp_path, monkeypatch):
    c, H, b = lp
    path = tmp_path / "lp.parquet"
    _write_parquet(path, H, b)
    # the whole file is never read: only read_row_group is allowed
    monkeypatch.setattr(pq.ParquetFile, "read", lambda *a, **k: pytest.fail("whole file read"))
    monkeypatch.setattr(pq, "read_table", lambda *a, **k: pytest.fail("whole file read"))
    _same(solve_lp_chunked(c, path, chunks=7, log=False), in_memory)


def test_parquet_blocks_read_only_their_row_groups(tmp_path):
    rng = np.random.default_rng(0)
    M, v = rng.normal(size=(1000, 3)), rng.normal(size=1000)
    path = tmp_path / "rows.parquet"
    _write_parquet(path, M, v, vector="rhs", row_group_size=100)
    src = row_source(str(path), "rhs")
    assert isinstance(src, ParquetSource) and src.n_rows == 1000 and src.n_cols == 3
    assert src.columns == ["h0", "h1", "h2"]
    for start, stop in [(0, 100), (150, 250), (999, 1000), (0, 1000), (330, 331)]:
        before = src.row_groups_read
        got_M, got_v = src.read(start, stop)
        assert np.array_equal(got_M, M[start:stop]) and np.array_equal(got_v, v[start:stop])
        groups = (stop - 1) // 100 - start // 100 + 1
        assert src.row_groups_read - before == groups
    sub = row_source(str(path), "rhs", columns=["h2", "h0"])
    assert np.array_equal(sub.read(5, 9)[0], M[5:9][:, [2, 0]])


def test_lsvm_parquet_and_memmap_equal_in_memory(tmp_path):
    from aidopt.instances import svm_instance

    X, y = svm_instance(n=1200, m=4, seed=3, separation=2.0)
    ref = solve_lsvm_lpc(X, y, C=0.5, chunks=4, log=False)
    assert ref.certified
    path = tmp_path / "svm.parquet"
    table = pa.table({**{f"f{j}": X[:, j] for j in range(4)}, "label": y})
    pq.write_table(table, path, row_group_size=100)
    got = solve_lsvm_lpc(path, "label", C=0.5, chunks=4, log=False)
    assert got.certified and got.objective == pytest.approx(ref.objective, rel=1e-12)
    assert got.solution["feature_names"] == ["f0", "f1", "f2", "f3"]
    np.save(tmp_path / "X.npy", X)
    got = solve_lsvm_lpc(tmp_path / "X.npy", y, C=0.5, chunks=4, log=False)
    assert got.certified and got.objective == pytest.approx(ref.objective, rel=1e-12)


def test_block_ranges_cover_all_rows():
    for m, blocks in [(10, 3), (7, 7), (5, 8), (1000, 64)]:
        ranges = block_ranges(m, blocks)
        assert ranges[0][0] == 0 and ranges[-1][1] == m
        assert all(a < b for a, b in ranges)
        assert all(r[1] == s[0] for r, s in zip(ranges, ranges[1:], strict=False))
        sizes = [b - a for a, b in ranges]
        assert max(sizes) - min(sizes) <= 1


def test_array_source_reads_copies():
    M, v = np.arange(12.0).reshape(6, 2), np.arange(6.0)
    src = ArraySource(M, v)
    got, _ = src.read(1, 3)
    got[:] = -1
    assert M[1, 0] == 2.0
