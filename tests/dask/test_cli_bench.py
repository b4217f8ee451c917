"""``aidopt lad|svm --engine dask`` and the benchmark script, on small stores."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("dask.array")
zarr = pytest.importorskip("zarr")

from aidopt.bench.dask import main as bench_main  # noqa: E402
from aidopt.bench.dask import run_bench, write_store, y_path  # noqa: E402
from aidopt.cli.main import main  # noqa: E402

from .conftest import RTOL  # noqa: E402


def test_write_store_is_seeded_and_chunked(tmp_path):
    a = write_store(tmp_path / "a.zarr", "svm", 500, 3, seed=4, chunk_rows=128)
    b = write_store(tmp_path / "b.zarr", "svm", 500, 3, seed=4, chunk_rows=128)
    A, B = zarr.open_group(a, mode="r"), zarr.open_group(b, mode="r")
    assert A["X"].chunks == (128, 3)
    np.testing.assert_array_equal(A["X"][...], B["X"][...])
    assert set(np.unique(A["y"][...])) == {-1.0, 1.0}


@pytest.mark.parametrize("problem, norm, store", [("lad", "l2", "d.zarr"), ("svm", "linf", "d.zarr"),
                                                  ("lad", "l2", "d.npy")])
def test_bench_matches_numpy(tmp_path, problem, norm, store):
    store = write_store(tmp_path / store, problem, 3000, 4, chunk_rows=700)
    dask_row, numpy_row = run_bench(store, problem, norm=norm, compare_numpy=True, log=False)
    assert dask_row["termination"] == numpy_row["termination"] == "certified_optimal"
    assert numpy_row["rel_diff"] <= RTOL
    assert dask_row["passes"] >= 2 * dask_row["iterations"] and dask_row["peak_rss_mb"] > 0
    assert 0 <= dask_row["growth_mb"] <= dask_row["peak_rss_mb"] and dask_row["growth_x"] >= 0


def test_npy_store_equals_zarr_store(tmp_path):
    """The same seeded data in both formats; y beside the .npy matrix."""
    npy = write_store(tmp_path / "d.npy", "svm", 500, 3, seed=4, chunk_rows=128)
    group = zarr.open_group(write_store(tmp_path / "d.zarr", "svm", 500, 3, seed=4,
                                        chunk_rows=128), mode="r")
    np.testing.assert_array_equal(np.load(npy), group["X"][...])
    np.testing.assert_array_equal(np.load(y_path(npy)), group["y"][...])


def test_bench_command_line(tmp_path, capsys):
    out = tmp_path / "rows.jsonl"
    assert bench_main(["--problem", "lad", "--n", "2000", "--m", "3", "--store",
                       str(tmp_path / "x.zarr"), "--quiet", "--output", str(out)]) == 0
    assert "| dask |" in capsys.readouterr().out
    row = json.loads(out.read_text())
    assert (row["n"], row["m"], row["termination"]) == (2000, 3, "certified_optimal")


def test_cli_engine_dask(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    store = write_store(tmp_path / "lad.zarr", "lad", 2000, 3)
    # the store holds the design matrix (its first column is ones): no intercept on top
    saved = tmp_path / "lad.json"
    assert main(["lad", "--data", store, "--engine", "dask", "--no-fit-intercept", "--quiet",
                 "--output", str(saved)]) == 0
    assert "passes over X" in json.loads(saved.read_text())["message"]
    assert capsys.readouterr().out.startswith("result: certified_optimal, ")
    rng = np.random.default_rng(0)
    y = np.where(rng.random(1500) < 0.5, 1, -1)
    frame = pd.DataFrame(rng.normal(size=(1500, 3)) + 0.5 * y[:, None], columns=["a", "b", "c"])
    frame.assign(label=y).to_parquet(tmp_path / "svm.parquet", row_group_size=400)
    assert main(["svm", "--data", str(tmp_path / "svm.parquet"), "--engine", "dask", "--norm", "l1",
                 "--C", "0.1", "--quiet"]) == 0
    assert "training accuracy" in capsys.readouterr().out
    assert main(["lad", "--data", store, "--engine", "dask", "--bootstrap", "5"]) == 2
    assert main(["lad", "--data", store, "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "add --engine dask" in capsys.readouterr().err
