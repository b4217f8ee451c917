"""Sparse input at the data layer, for every family that takes it: pandas DataFrames with sparse
(``SparseDtype``) columns become CSR with their column names, never the dense array (LAD and
the linear SVM here; FSV, S3VM and aggregate outputs in their own test files); scipy sparse
arrays as matrices; ``engine="dask"`` refuses a sparse X with a message naming
``engine="numpy"``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

import aidopt
from aidopt.data.validate import as_classification_data, as_regression_data
from tests._densify import densify_calls


def _frame(X, prefix="f"):
    return pd.DataFrame.sparse.from_spmatrix(X, columns=[f"{prefix}{j}" for j in range(X.shape[1])])


def test_a_sparse_frame_becomes_csr_with_its_names(monkeypatch):
    X = sparse.random(50, 6, density=0.3, random_state=0, format="csr")
    frame = _frame(X)
    frame["dense"] = np.arange(50.0)  # a dense column among sparse ones
    frame["other_fill"] = pd.arrays.SparseArray(np.r_[np.ones(49), 3.0], fill_value=1.0)
    calls = densify_calls(monkeypatch)
    data = as_classification_data(frame, np.arange(50) % 2, sparse=True)
    assert not calls
    assert sparse.issparse(data.X) and data.X.format == "csr"
    assert data.feature_names == [*(f"f{j}" for j in range(6)), "dense", "other_fill"]
    expect = np.column_stack([X.toarray(), np.arange(50.0), np.r_[np.ones(49), 3.0]])
    np.testing.assert_array_equal(data.X.toarray(), expect)
    assert data.X.nnz == np.count_nonzero(expect)  # no stored zeros


def test_nan_in_a_sparse_frame_is_refused():
    frame = pd.DataFrame({"a": pd.arrays.SparseArray([1.0, np.nan, 0.0], fill_value=0.0)})
    with pytest.raises(ValueError, match="NaN or infinite"):
        as_regression_data(frame, [1.0, 2.0, 3.0], sparse=True, wide=True)
    frame = pd.DataFrame({"a": pd.arrays.SparseArray([1.0, np.nan, 0.0])})  # fill NaN: missing
    with pytest.raises(ValueError, match="NaN or infinite"):
        as_regression_data(frame, [1.0, 2.0, 3.0], sparse=True, wide=True)


def test_svm_and_lad_take_sparse_frames(monkeypatch):
    rng = np.random.default_rng(1)
    X = sparse.random(2000, 600, density=0.005, random_state=2, format="csr")
    y = np.where(X @ rng.normal(size=600) > 0, 1, -1)
    svm = aidopt.solve_svm(X, y, log=False)
    wide = sparse.random(150, 300, density=0.003, random_state=3, format="csr")  # rank < n
    z = wide @ rng.normal(size=300) + rng.laplace(size=150)
    lad = aidopt.solve_lad(wide.toarray(), z, fit_intercept=True, log=False)
    calls = densify_calls(monkeypatch)
    frame = _frame(X, "w")
    res = aidopt.solve_svm(frame, y, log=False)
    assert res.solution["feature_names"] == list(frame.columns)
    assert res.objective == pytest.approx(svm.objective, rel=1e-9)
    frame = _frame(wide, "v")
    res = aidopt.solve_lad(frame, z, fit_intercept=True, log=False)
    assert res.solution["feature_names"] == [*frame.columns, "intercept"]
    assert lad.objective > 1.0 and res.objective == pytest.approx(lad.objective, rel=1e-7)
    assert not calls


def test_an_estimator_takes_a_sparse_frame():
    X = sparse.random(120, 10, density=0.3, random_state=3, format="csr")
    y = np.where(X @ np.linspace(-1, 1, 10) > 0, 1, -1)
    clf = aidopt.FSVClassifier(nu=0.5).fit(_frame(X, "t"), y)
    assert list(clf.feature_names_in_) == [f"t{j}" for j in range(10)]
    ref = aidopt.FSVClassifier(nu=0.5).fit(X.toarray(), y)
    np.testing.assert_allclose(clf.coef_, ref.coef_, atol=1e-8)


def test_sparse_arrays_are_taken_as_matrices():
    X = sparse.random(80, 5, density=0.4, random_state=4, format="csr")
    y = np.where(X @ np.ones(5) > np.median(X @ np.ones(5)), 1, -1)
    a = aidopt.solve_fsv(sparse.csr_array(X), y, log=False)
    b = aidopt.solve_fsv(X, y, log=False)
    assert a.objective == pytest.approx(b.objective, rel=1e-12)


@pytest.mark.parametrize("make", [sparse.csr_matrix, _frame])
def test_the_dask_engine_refuses_sparse_x_and_names_the_numpy_engine(make):
    pytest.importorskip("dask")
    X = sparse.random(100, 4, density=0.5, random_state=5, format="csr")
    with pytest.raises(ValueError, match="use engine='numpy'.*keeps X sparse"):
        aidopt.solve_lad(make(X), np.ones(100), engine="dask", log=False)
    with pytest.raises(ValueError, match="use engine='numpy'"):
        aidopt.solve_svm(make(X), np.arange(100) % 2, engine="dask", log=False)
