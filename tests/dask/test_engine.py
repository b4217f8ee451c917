"""The dask engine gives the numpy engine's answer: every problem, chunking and input kind."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from aidopt.data.chunked import ChunkedMatrix  # noqa: E402

from .conftest import PROBLEMS, assert_same, data_for, solve  # noqa: E402

#: (rows per chunk, n): chunks that do not divide n, chunks of one row, a single chunk
CHUNKINGS = {"uneven": (37, 401), "one-row": (1, 80), "single": (401, 401)}


@pytest.mark.parametrize("chunking", list(CHUNKINGS))
@pytest.mark.parametrize("problem", list(PROBLEMS))
def test_same_answer_as_numpy(problem, chunking, reference):
    rows, n = CHUNKINGS[chunking]
    X, y = data_for(problem, n)
    result = solve(problem, da.from_array(X, chunks=(rows, X.shape[1])), y)  # engine by type
    assert_same(result, reference(problem, n))
    passes = result.dimensions["data_passes"]
    assert passes >= 2 * len(result.history) and f"{passes} passes over X" in result.message
    # each iteration's passes (the counters hook): aggregation and lift, no more
    per_iteration = [record.info["data_passes"] for record in result.history]
    assert per_iteration and all(count == 2 for count in per_iteration), per_iteration


def _npy(tmp_path, X, y):
    np.save(tmp_path / "X.npy", X)
    return tmp_path / "X.npy", y


def _zarr_group(tmp_path, X, y):
    import zarr

    group = zarr.open_group(str(tmp_path / "data.zarr"), mode="w")
    group.create_array("X", shape=X.shape, chunks=(50, X.shape[1]), dtype="f8")[...] = X
    group.create_array("y", shape=y.shape, chunks=(64,), dtype="f8")[...] = y
    return str(tmp_path / "data.zarr"), "y"


def _zarr_array(tmp_path, X, y):
    import zarr

    array = zarr.open_array(str(tmp_path / "X.zarr"), mode="w", shape=X.shape, chunks=(60, 2),
                            dtype="f8")
    array[...] = X
    return str(tmp_path / "X.zarr"), y


def _frame(X, y):
    import pandas as pd

    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    frame["target"] = y
    return frame


def _parquet_file(tmp_path, X, y):
    pytest.importorskip("pyarrow")
    _frame(X, y).to_parquet(tmp_path / "data.parquet", row_group_size=70)
    return str(tmp_path / "data.parquet"), "target"


def _parquet_directory(tmp_path, X, y):
    pytest.importorskip("pyarrow")
    frame = _frame(X, y)
    (tmp_path / "parts").mkdir()
    for i, start in enumerate(range(0, len(frame), 150)):  # three files, row groups of 64
        frame.iloc[start:start + 150].to_parquet(tmp_path / "parts" / f"part-{i}.parquet",
                                                 row_group_size=64, index=False)
    return str(tmp_path / "parts"), "target"


def _chunked(tmp_path, X, y):
    return ChunkedMatrix(da.from_array(X, chunks=(90, X.shape[1]))), y


INPUTS = {"npy": _npy, "zarr-group": _zarr_group, "zarr-array": _zarr_array,
          "parquet-file": _parquet_file, "parquet-directory": _parquet_directory,
          "chunked-matrix": _chunked}


@pytest.mark.parametrize("kind", list(INPUTS))
@pytest.mark.parametrize("problem", ["lad", "svm_l1"])
def test_inputs(problem, kind, tmp_path, reference):
    pytest.importorskip("zarr")
    X, y = data_for(problem)
    Xin, yin = INPUTS[kind](tmp_path, X, y)
    result = solve(problem, Xin, yin)
    assert_same(result, reference(problem))
    assert "data_passes" in result.dimensions
    if kind.startswith("parquet"):
        assert result.solution["feature_names"][:2] == ["f0", "f1"]


def test_weights_by_name_and_zero_weights(tmp_path):
    """Sample weights read from the store by name; zero-weight rows left out lazily."""
    X, y = data_for("lad")
    s = np.where(np.arange(len(y)) % 10 == 0, 0.0, 1.0 + (np.arange(len(y)) % 3))
    frame = _frame(X, y)
    frame["w"] = s
    pytest.importorskip("pyarrow")
    frame.to_parquet(tmp_path / "w.parquet", row_group_size=100)
    result = solve("lad", str(tmp_path / "w.parquet"), "target", sample_weight="w")
    assert_same(result, solve("lad", X, y, sample_weight=s))
    assert result.solution["feature_names"] == ["f0", "f1", "f2", "f3"]


def test_fit_intercept_and_direct_solve():
    X, y = data_for("lad")
    Xd = da.from_array(X[:, 1:], chunks=(64, 3))
    assert_same(solve("lad", Xd, y, fit_intercept=True),
                solve("lad", X[:, 1:], y, fit_intercept=True))
    direct = solve("lad", Xd[:150], y[:150], aid=False)  # the full LP: small data only
    assert_same(direct, solve("lad", X[:150, 1:], y[:150], aid=False))


def test_numpy_engine_loads_a_store(tmp_path, reference):
    X, y = data_for("svm_l2")
    path, name = _zarr_group(tmp_path, X, y)
    result = solve("svm_l2", path, name, engine="numpy")
    assert_same(result, reference("svm_l2"))
    assert "data_passes" not in result.dimensions
