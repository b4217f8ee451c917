"""Bad out-of-core inputs fail with a clear error before anything is solved."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

import aidopt  # noqa: E402
from aidopt.data.chunked import ChunkedMatrix  # noqa: E402
from aidopt.data.validate import as_classification_data, as_regression_data  # noqa: E402

from .conftest import data_for  # noqa: E402


@pytest.fixture
def xy():
    return data_for("lad", n=200)


def _chunks(X, rows=30):
    return da.from_array(X, chunks=(rows, *X.shape[1:]))


@pytest.mark.parametrize("value, pattern", [
    (np.nan, r"X contains 1 NaN or infinite value\(s\) \(first at index \(187, 2\)\)"),
    (-np.inf, r"X contains 1 NaN or infinite value\(s\) \(first at index \(187, 2\)\)"),
    (1e21, r"X has 1 value\(s\) of magnitude >= 1e\+20 \(first at index \(187, 2\)\)"),
])
def test_bad_value_in_a_late_chunk(no_solve, xy, value, pattern):
    X, y = xy
    X = X.copy()
    X[187, 2] = value
    X[195, 1] = value  # a second one in the same chunk, later: the first is named
    pattern = pattern.replace("1 ", "2 ", 1)
    with pytest.raises(ValueError, match=pattern):
        aidopt.solve_lad(_chunks(X), y, log=False)


def test_nan_in_a_parquet_null(no_solve, xy, tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    X, y = xy
    columns = {f"f{j}": pa.array(X[:, j]) for j in range(X.shape[1])}
    columns["f1"] = pa.array([None if i == 150 else v for i, v in enumerate(X[:, 1])])
    pq.write_table(pa.table({**columns, "y": pa.array(y)}), tmp_path / "d.parquet", row_group_size=40)
    with pytest.raises(ValueError, match=r"first at index \(150, 1\)"):
        aidopt.solve_lad(str(tmp_path / "d.parquet"), "y", log=False)


@pytest.mark.parametrize("make_X, make_y, pattern", [
    (lambda X: _chunks(X[:, 0]), lambda y: y, "X must be 2-d"),
    (lambda X: X[:, 0], lambda y: y, r"reshape a single feature to \(-1, 1\)"),
    (lambda X: _chunks(X).reshape(200, 2, 2), lambda y: y, "X must be 2-d, got 3 dimensions"),
    (lambda X: _chunks(X), lambda y: y[:-1], "X has 200 rows but y has 199 entries"),
    (lambda X: _chunks(X), lambda y: np.column_stack([y, y]), r"y must be 1-d"),
    (lambda X: _chunks(X)[:4], lambda y: y[:4], "need more rows than columns"),
    (lambda X: _chunks(X)[:0], lambda y: y[:0], "X is empty"),
    (lambda X: _chunks(X), lambda y: "y", "names a column, but X is not a Zarr group or Parquet"),
])
def test_wrong_shapes(no_solve, xy, make_X, make_y, pattern):
    X, y = xy
    with pytest.raises(ValueError, match=pattern):
        aidopt.solve_lad(make_X(X), make_y(y), engine="dask", log=False)


def test_bad_weights_and_labels(no_solve, xy):
    X, y = xy
    with pytest.raises(ValueError, match="sample_weight has 10 entries, expected 200"):
        aidopt.solve_lad(_chunks(X), y, sample_weight=np.ones(10), log=False)
    with pytest.raises(ValueError, match="exactly two classes"):
        aidopt.solve_svm(_chunks(X), np.arange(200) % 3, log=False)


def test_cheap_errors_come_before_the_pass(xy):
    """A bad y is reported without reading X (no pass over the chunks)."""
    X, y = xy
    y = y.copy()
    y[3] = np.nan
    Xc = ChunkedMatrix(_chunks(X))
    with pytest.raises(ValueError, match="y contains 1 NaN"):
        as_regression_data(Xc, y, engine="dask")
    with pytest.raises(ValueError, match="exactly two classes"):
        as_classification_data(Xc, np.zeros(200), engine="dask")
    assert Xc.passes == 0
    data = as_classification_data(Xc, np.arange(200) % 2, engine="dask")
    assert data.X is Xc and Xc.pass_counts == {"validate": 1}


def test_stores(no_solve, xy, tmp_path):
    zarr = pytest.importorskip("zarr")
    pytest.importorskip("pyarrow")
    import pandas as pd

    X, y = xy
    with pytest.raises(FileNotFoundError, match="not found"):
        aidopt.solve_lad(str(tmp_path / "missing.zarr"), y, log=False)
    (tmp_path / "d.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="unsupported data store"):
        aidopt.solve_lad(str(tmp_path / "d.csv"), y, log=False)
    group = zarr.open_group(str(tmp_path / "g.zarr"), mode="w")
    group.create_array("A", shape=X.shape, dtype="f8")
    with pytest.raises(ValueError, match="must hold the matrix as array 'X'"):
        aidopt.solve_lad(str(tmp_path / "g.zarr"), "y", log=False)
    frame = pd.DataFrame(X, columns=list("abcd")).assign(y=y, label="text")
    frame.to_parquet(tmp_path / "d.parquet")
    with pytest.raises(ValueError, match=r"no column\(s\) \['target'\]"):
        aidopt.solve_lad(str(tmp_path / "d.parquet"), "target", log=False)
    with pytest.raises(TypeError, match=r"non-numeric columns \['label'\]"):
        aidopt.solve_lad(str(tmp_path / "d.parquet"), "y", log=False)
    np.save(tmp_path / "X.npy", X)
    with pytest.raises(ValueError, match="give \\['y'\\] as arrays"):
        aidopt.solve_lad(str(tmp_path / "X.npy"), "y", log=False)


def test_engine_choice(no_solve, xy):
    X, y = xy
    with pytest.raises(ValueError, match="engine must be one of"):
        aidopt.solve_lad(X, y, engine="spark", log=False)
    with pytest.raises(ValueError, match="engine='dask' runs AID on the linear SVMs"):
        aidopt.solve_svm(_chunks(X), y > 0, kernel="rbf", engine="dask", log=False)
    with pytest.raises(ValueError, match="engine='dask' runs AID on the linear SVMs"):
        aidopt.solve_svm(X, y > 0, norm="l1", method="lpc", engine="dask", log=False)
