"""Input validation (aidopt.data.validate) and the file loaders.

Every bad input must give a clear error *before* any model is built or solved: the ``no_solve``
fixture replaces every solve entry point by a function that fails the test if it is reached.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import aidopt
import aidopt.api._front
import aidopt.solvers
from aidopt.data.validate import RegressionData, as_regression_data, load_table, read_svmlight

N, M = 60, 3


def _reached_solver(*args, **kwargs):  # pragma: no cover - only runs when the test fails
    raise AssertionError("a solve was started although the input is invalid")


@pytest.fixture
def no_solve(monkeypatch):
    """Fail the test if anything tries to build or solve a model."""
    monkeypatch.setattr(aidopt.api._front, "solve", _reached_solver)
    monkeypatch.setattr(aidopt.api._front, "solve_direct", _reached_solver)
    monkeypatch.setattr(aidopt.solvers, "solve_model", _reached_solver)


@pytest.fixture
def xy():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(N, M))
    y = X @ np.array([1.0, -2.0, 0.5]) + rng.laplace(scale=0.1, size=N)
    return X, y


def _solve(X, y, **kw):
    return aidopt.solve_lad(X, y, log=False, **kw)


@pytest.mark.parametrize("aid", [True, False])
def test_no_solve_guard_is_effective(no_solve, xy, aid):
    """Sanity check of the fixture: valid data does reach the (patched) solver."""
    X, y = xy
    with pytest.raises(AssertionError, match="a solve was started"):
        _solve(X, y, aid=aid)


# --------------------------------------------------------------------------- NaN / inf


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("aid", [True, False])
def test_non_finite_X_rejected(no_solve, xy, value, aid):
    X, y = xy
    X = X.copy()
    X[4, 1] = value
    with pytest.raises(ValueError, match=r"X contains 1 NaN or infinite") as exc:
        _solve(X, y, aid=aid)
    assert "(4, 1)" in str(exc.value)  # the first bad entry is located


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_y_rejected(no_solve, xy, value):
    X, y = xy
    y = y.copy()
    y[[3, 10]] = value
    with pytest.raises(ValueError, match=r"y contains 2 NaN or infinite") as exc:
        _solve(X, y)
    assert "(3,)" in str(exc.value)


def test_pandas_missing_values_rejected(no_solve, xy):
    X, y = xy
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame.loc[5, "b"] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        _solve(frame, y)


def test_pandas_nullable_integer_with_na_rejected(no_solve, xy):
    X, y = xy
    frame = pd.DataFrame(
        {"a": pd.array([1, None] + [2] * (N - 2), dtype="Int64"), "b": X[:, 0], "c": X[:, 1]}
    )
    with pytest.raises(ValueError, match="NaN"):
        _solve(frame, y)


def test_y_series_with_nan_rejected(no_solve, xy):
    X, y = xy
    ys = pd.Series(y)
    ys.iloc[-1] = np.nan
    with pytest.raises(ValueError, match="y contains 1 NaN"):
        _solve(X, ys)


# --------------------------------------------------------------------------- shapes


def test_row_count_mismatch_rejected(no_solve, xy):
    X, y = xy
    with pytest.raises(ValueError, match=rf"X has {N} rows but y has {N - 1} entries"):
        _solve(X, y[:-1])


def test_two_column_y_rejected(no_solve, xy):
    X, y = xy
    with pytest.raises(ValueError):
        _solve(X, np.column_stack([y, y]))


def test_column_vector_y_accepted(xy):
    X, y = xy
    data = as_regression_data(X, y.reshape(-1, 1))
    assert data.y.shape == (N,)
    np.testing.assert_array_equal(data.y, y)


@pytest.mark.parametrize("shape", [(5, 5), (4, 6)])
def test_n_not_greater_than_m_rejected_unless_wide(shape):
    """The validation refuses n <= m unless its caller has a method for it (``wide=True``: LAD's
    dual LP, tests/quantile/test_sparse_wide.py)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=shape)
    y = rng.normal(size=shape[0])
    with pytest.raises(ValueError, match=rf"n={shape[0]} <= m={shape[1]}"):
        as_regression_data(X, y)
    assert as_regression_data(X, y, wide=True).X.shape == shape


def test_intercept_pushes_m_to_n_rejected():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5, 4))  # n > m, but n <= m + 1 with the intercept column
    y = rng.normal(size=5)
    as_regression_data(X, y)  # fine without the intercept
    with pytest.raises(ValueError, match=r"n=5 <= m=5.*intercept"):
        as_regression_data(X, y, fit_intercept=True)


def test_frisch_newton_on_wide_data_is_refused_before_solving(no_solve):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4, 6))
    with pytest.raises(ValueError, match="solver='fn'.*more rows than columns"):
        _solve(X, rng.normal(size=4), solver="fn")


@pytest.mark.parametrize("shape", [(0, 3), (10, 0)])
def test_empty_X_rejected(no_solve, shape):
    X = np.empty(shape)
    y = np.zeros(shape[0])
    with pytest.raises(ValueError, match="empty"):
        _solve(X, y)


def test_empty_list_rejected(no_solve):
    with pytest.raises(ValueError):
        _solve([], [])


def test_one_dimensional_X_rejected(no_solve, xy):
    _, y = xy
    with pytest.raises(ValueError, match=r"2-d.*reshape"):
        _solve(np.arange(N, dtype=float), y)


def test_three_dimensional_X_rejected(no_solve):
    with pytest.raises(ValueError, match="2-d"):
        _solve(np.zeros((20, 2, 2)), np.zeros(20))


# --------------------------------------------------------------------------- dtypes


def test_non_numeric_pandas_columns_named(no_solve, xy):
    X, y = xy
    frame = pd.DataFrame({"age": X[:, 0], "city": ["a", "b"] * (N // 2), "z": X[:, 1]})
    frame["grade"] = pd.Categorical(["lo", "hi", "mid"] * (N // 3))
    with pytest.raises(TypeError) as exc:
        _solve(frame, y)
    msg = str(exc.value)
    assert "city" in msg and "grade" in msg
    assert "age" not in msg and "'z'" not in msg


def test_numeric_and_bool_pandas_columns_accepted(xy):
    X, y = xy
    frame = pd.DataFrame(
        {"a": X[:, 0], "b": X[:, 1].astype(np.float32), "n": np.arange(N), "flag": X[:, 2] > 0}
    )
    data = as_regression_data(frame, y)
    assert data.X.dtype == np.float64
    assert data.feature_names == ["a", "b", "n", "flag"]
    np.testing.assert_array_equal(data.X[:, 3], (X[:, 2] > 0).astype(float))


def test_object_dtype_X_rejected(no_solve, xy):
    X, y = xy
    Xo = X.astype(object)
    Xo[0, 0] = "1.5"
    with pytest.raises(TypeError, match="X must be numeric.*object"):
        _solve(Xo, y)


def test_object_dtype_X_of_numbers_rejected(no_solve, xy):
    X, y = xy
    with pytest.raises(TypeError, match="object"):
        _solve(X.astype(object), y)


def test_string_y_rejected(no_solve, xy):
    X, y = xy
    with pytest.raises(TypeError, match="y must be numeric"):
        _solve(X, y.astype(str))


def test_non_numeric_y_series_rejected(no_solve, xy):
    X, _ = xy
    with pytest.raises(TypeError, match="y"):
        _solve(X, pd.Series(["up", "down"] * (N // 2)))


def test_lists_and_sparse_accepted(xy):
    from scipy import sparse

    X, y = xy
    a = as_regression_data(X.tolist(), y.tolist())
    b = as_regression_data(sparse.csr_matrix(X), y)
    np.testing.assert_array_equal(a.X, X)
    np.testing.assert_array_equal(b.X, X)
    assert a.feature_names == ["x0", "x1", "x2"]


# --------------------------------------------------------------------------- sample weights


@pytest.mark.parametrize(
    ("weights", "pattern"),
    [
        (lambda n: np.r_[-1.0, np.ones(n - 1)], "negative"),
        (lambda n: np.r_[np.nan, np.ones(n - 1)], "sample_weight contains 1 NaN"),
        (lambda n: np.r_[np.ones(n - 1), np.inf], "sample_weight contains 1 NaN or infinite"),
        (lambda n: np.zeros(n), "all zero"),
        (lambda n: np.ones(n - 1), rf"sample_weight has {N - 1} entries, expected {N}"),
    ],
    ids=["negative", "nan", "inf", "all-zero", "wrong-length"],
)
def test_bad_sample_weight_rejected(no_solve, xy, weights, pattern):
    X, y = xy
    with pytest.raises(ValueError, match=pattern):
        _solve(X, y, sample_weight=weights(N))


def test_string_sample_weight_rejected(no_solve, xy):
    X, y = xy
    with pytest.raises(TypeError, match="sample_weight"):
        _solve(X, y, sample_weight=np.array(["1"] * N))


def test_valid_sample_weight_kept(xy):
    X, y = xy
    s = np.r_[np.zeros(5), np.full(N - 5, 2.0)]
    data = as_regression_data(X, y, s)
    np.testing.assert_array_equal(data.s, s)


def test_feature_names_count_checked(no_solve, xy):
    X, y = xy
    with pytest.raises(ValueError, match="2 feature names for 3 columns"):
        as_regression_data(X, y, feature_names=["a", "b"])


def test_intercept_column_appended_last(xy):
    X, y = xy
    data = as_regression_data(X, y, fit_intercept=True)
    assert isinstance(data, RegressionData)
    assert (data.n, data.m) == (N, M + 1)
    np.testing.assert_array_equal(data.X[:, -1], np.ones(N))
    np.testing.assert_array_equal(data.X[:, :M], X)
    assert data.feature_names[-1] == "intercept"


def test_valid_input_gives_no_warning(xy):
    X, y = xy
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        data = as_regression_data(X, y, fit_intercept=True)
    assert data.m == X.shape[1] + 1


# --------------------------------------------------------------------------- rank deficiency


def _lad_data(n=400, seed=3):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 2))])
    y = X @ np.array([0.5, 1.0, -1.0]) + rng.laplace(size=n)
    return X, y


@pytest.mark.parametrize("aid", [True, False])
def test_duplicate_column_warns_and_certifies(aid):
    X, y = _lad_data()
    reference = _solve(X, y, aid=aid)
    Xd = np.column_stack([X, X[:, 1]])
    with pytest.warns(aidopt.RankWarning, match=r"duplicate column.*x1.*x3"):
        res = _solve(Xd, y, aid=aid)
    assert res.termination == "certified_optimal"
    assert res.certified
    assert res.solution["beta"].shape == (4,)
    # the optimal value is unique even though beta is not
    assert res.objective == pytest.approx(reference.objective, rel=1e-6)
    fitted = Xd @ res.solution["beta"]
    assert np.abs(y - fitted).sum() == pytest.approx(res.objective, rel=1e-9)


@pytest.mark.parametrize("aid", [True, False])
def test_all_zero_column_warns_and_certifies(aid):
    X, y = _lad_data()
    reference = _solve(X, y, aid=aid)
    Xz = np.column_stack([X[:, :2], np.zeros(X.shape[0]), X[:, 2]])
    with pytest.warns(aidopt.RankWarning, match=r"all-zero column.*x2"):
        res = _solve(Xz, y, aid=aid)
    assert res.termination == "certified_optimal"
    assert res.certified
    assert res.solution["beta"].shape == (4,)
    assert res.objective == pytest.approx(reference.objective, rel=1e-6)


def test_intercept_duplicating_ones_column_warns():
    X, y = _lad_data()
    with pytest.warns(aidopt.RankWarning, match="intercept"):
        res = _solve(X, y, fit_intercept=True)
    assert res.certified


def test_rank_warning_points_at_the_callers_line():
    """The warning should be attributed to the user's call, not to aidopt's internals."""
    X, y = _lad_data(n=200)
    Xd = np.column_stack([X, X[:, 2]])
    with pytest.warns(aidopt.RankWarning) as record:
        _solve(Xd, y)
    assert [w.filename for w in record if w.category is aidopt.RankWarning] == [__file__]


def test_rank_warning_is_a_user_warning():
    assert issubclass(aidopt.RankWarning, UserWarning)


# --------------------------------------------------------------------------- loaders


@pytest.fixture
def frame():
    rng = np.random.default_rng(11)
    n = 40
    return pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "y": rng.normal(size=n),
            "b": rng.integers(0, 5, size=n),
            "c": rng.normal(size=n),
        }
    )


def test_load_csv_default_target_is_last_column(tmp_path, frame):
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    X, y, names = load_table(path)
    assert names == ["a", "y", "b"]
    np.testing.assert_allclose(np.asarray(y, dtype=float), frame["c"].to_numpy())
    np.testing.assert_allclose(np.asarray(X, dtype=float), frame[["a", "y", "b"]].to_numpy())


def test_load_csv_with_target(tmp_path, frame):
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    X, y, names = load_table(str(path), target="y")
    assert names == ["a", "b", "c"]
    np.testing.assert_allclose(np.asarray(y, dtype=float), frame["y"].to_numpy())
    data = as_regression_data(X, y)
    assert data.feature_names == ["a", "b", "c"]
    np.testing.assert_allclose(data.X, frame[["a", "b", "c"]].to_numpy())


def test_load_tsv(tmp_path, frame):
    path = tmp_path / "data.tsv"
    frame.to_csv(path, index=False, sep="\t")
    X, y, names = load_table(path, target="a")
    assert names == ["y", "b", "c"]
    np.testing.assert_allclose(np.asarray(y, dtype=float), frame["a"].to_numpy())


def test_load_csv_unknown_target(tmp_path, frame):
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"target column 'price' not in"):
        load_table(path, target="price")


def test_load_csv_question_mark_is_missing(no_solve, tmp_path, frame):
    path = tmp_path / "data.csv"
    text = frame.to_csv(index=False).splitlines()
    cells = text[3].split(",")
    cells[0] = "?"
    text[3] = ",".join(cells)
    path.write_text("\n".join(text) + "\n")
    X, y, _ = load_table(path, target="y")
    assert np.isnan(np.asarray(X["a"], dtype=float)).sum() == 1
    with pytest.raises(ValueError, match="NaN"):
        _solve(X, y)


def test_load_csv_text_column_then_solve_names_it(no_solve, tmp_path, frame):
    path = tmp_path / "data.csv"
    frame.assign(city=["x", "y"] * 20).to_csv(path, index=False)
    X, y, _ = load_table(path, target="y")
    with pytest.raises(TypeError, match="city"):
        _solve(X, y)


def test_load_parquet(tmp_path, frame):
    pytest.importorskip("pyarrow")
    path = tmp_path / "data.parquet"
    frame.to_parquet(path)
    X, y, names = load_table(path, target="y")
    assert names == ["a", "b", "c"]
    np.testing.assert_allclose(np.asarray(y, dtype=float), frame["y"].to_numpy())
    np.testing.assert_allclose(np.asarray(X, dtype=float), frame[["a", "b", "c"]].to_numpy())
    X2, y2, names2 = load_table(path)
    assert names2 == ["a", "y", "b"]
    np.testing.assert_allclose(np.asarray(y2, dtype=float), frame["c"].to_numpy())


def test_load_npz(tmp_path):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 4)), rng.normal(size=30)
    path = tmp_path / "data.npz"
    np.savez(path, X=X, y=y)
    X2, y2, names = load_table(path)
    assert names is None
    np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(y2, y)


def test_load_npz_without_y(tmp_path):
    path = tmp_path / "data.npz"
    np.savez(path, X=np.zeros((5, 2)), target=np.zeros(5))
    with pytest.raises(ValueError, match="'X' and 'y'"):
        load_table(path)


@pytest.mark.parametrize("suffix", [".svm", ".svmlight", ".libsvm", ".txt"])
def test_load_svmlight(tmp_path, suffix):
    path = tmp_path / f"data{suffix}"
    path.write_text(
        "# a comment line\n"
        "1.5 1:2.0 3:-1.0\n"
        "-2 qid:7 2:0.5   # trailing comment\n"
        "\n"
        "0 1:1 2:1 3:1 4:4.25\n"
    )
    X, y, names = load_table(path)
    assert names is None
    np.testing.assert_array_equal(y, [1.5, -2.0, 0.0])
    np.testing.assert_array_equal(
        X, [[2.0, 0.0, -1.0, 0.0], [0.0, 0.5, 0.0, 0.0], [1.0, 1.0, 1.0, 4.25]]
    )


def test_svmlight_zero_based_index_rejected(tmp_path):
    path = tmp_path / "data.svm"
    path.write_text("1 0:2.0 1:1.0\n2 1:3.0\n")
    with pytest.raises(ValueError, match="start at 1"):
        read_svmlight(path)


def test_load_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        load_table(tmp_path / "nope.csv")


@pytest.mark.parametrize("name", ["data.xlsx", "data.json", "data"])
def test_load_unsupported_suffix(tmp_path, name):
    path = tmp_path / name
    path.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="unsupported data file type"):
        load_table(path)


def test_loaded_csv_solves_certified(tmp_path):
    rng = np.random.default_rng(5)
    n = 300
    frame = pd.DataFrame({"u": rng.normal(size=n), "v": rng.uniform(size=n)})
    frame["target"] = 2.0 - frame["u"] + 3.0 * frame["v"] + rng.laplace(scale=0.05, size=n)
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    X, y, names = load_table(path, target="target")
    res = _solve(X, y, fit_intercept=True)
    assert res.certified
    assert res.solution["feature_names"] == ["u", "v", "intercept"]
    np.testing.assert_allclose(res.solution["beta"], [-1.0, 3.0, 2.0], atol=0.1)
