"""The linear 2-norm SVM on sparse and wide data: ``solve_svm`` / ``SVMClassifier`` / ``aidopt
svm`` keep scipy sparse X sparse for dual coordinate descent (``solver="dcd"``, or chosen by
shape), certified by the SVM certificate; the answers agree with the dense path and with
Clarabel on the primal QP (tests/svm/_sparse.py)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

import aidopt
from aidopt.api import _shape
from aidopt.cli.main import main
from aidopt.results import Termination
from tests.svm._sparse import objective, random_rows, reference, sparse_rows


def _case(kind, seed):
    """``(X, y, sample_weight, C)``: a scipy sparse X of one kind."""
    rng = np.random.default_rng(10 + seed)
    if kind == "random":
        X, y = random_rows(300, 60, 0.05, seed)
        return X, y, None, 1.0
    if kind == "duplicated rows":  # every row twice, a fifth of the copies with the other label
        X, y = random_rows(150, 40, 0.08, seed)
        return (sp.vstack([X, X]).tocsr(), np.concatenate([y, np.where(rng.random(150) < 0.2, -y, y)]),
                None, 1.0)
    if kind == "sample weights":  # zeros and integers
        X, y = random_rows(250, 40, 0.1, seed)
        s = rng.integers(0, 4, size=250).astype(float)
        s[:2] = 1.0
        return X, y, s, 0.5
    if kind == "wide":  # m > n
        X, y = random_rows(80, 500, 0.04, seed, shift=1.0)
        return X, y, None, 10.0
    if kind == "one class per column":  # each column's stored entries belong to one class
        X, y = random_rows(200, 50, 0.08, seed)
        X = sp.lil_matrix(X)
        X[np.flatnonzero(y < 0), 3] = 0.0  # column 3: positives only
        X[np.flatnonzero(y > 0), 4] = 0.0  # column 4: negatives only
        X[np.flatnonzero(y > 0), 5] = 0.0  # column 5: a few negatives (and nothing else)
        X[np.flatnonzero(y < 0)[3:], 5] = 0.0
        X[:, 6] = 0.0  # and an empty column
        X[7, :] = 0.0  # and an empty row
        return sp.csr_matrix(X), y, None, 1.0
    raise ValueError(kind)


KINDS = ["random", "duplicated rows", "sample weights", "wide", "one class per column"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [0, 1])
def test_sparse_agrees_with_the_dense_path_and_clarabel(kind, seed):
    X, y, s, C = _case(kind, seed)
    sparse_run = aidopt.solve_svm(X, y, C=C, sample_weight=s, solver="dcd", log=False)
    dense_run = aidopt.solve_svm(X.toarray(), y, C=C, sample_weight=s, log=False)
    assert sparse_run.solver == "dcd" and not sparse_run.aid
    for run in (sparse_run, dense_run):
        assert run.termination is Termination.CERTIFIED_OPTIMAL, run.summary()
    assert sparse_run.objective == pytest.approx(dense_run.objective, rel=1e-6)
    u = C * (np.ones(len(y)) if s is None else s)
    keep = u > 0
    best = reference(X[keep], y[keep], u[keep])
    assert sparse_run.objective == pytest.approx(best, rel=1e-6)
    w, b = sparse_run.solution["w"], sparse_run.solution["b"]
    assert objective(X, y, u, w, b) == pytest.approx(sparse_run.objective, rel=1e-12)
    alpha = sparse_run.solution["alpha"]
    assert alpha.shape == y.shape and np.all(alpha[~keep] == 0)
    assert sparse_run.lower_bound <= best * (1 + 1e-9)


def test_integer_weights_are_repeated_rows():
    X, y, s, C = _case("sample weights", 2)
    weighted = aidopt.solve_svm(X, y, C=C, sample_weight=s, solver="dcd", log=False)
    rows = np.repeat(np.arange(len(y)), s.astype(int))
    repeated = aidopt.solve_svm(X[rows], y[rows], C=C, solver="dcd", log=False)
    assert weighted.certified and repeated.certified
    assert weighted.objective == pytest.approx(repeated.objective, rel=1e-6)


@pytest.mark.parametrize("kind", ["csc", "coo", "float32", "int64 indices", "unsorted duplicates"])
def test_formats_are_converted_once_and_the_input_is_left_alone(kind):
    X, y = random_rows(200, 40, 0.1, 3)
    expected = aidopt.solve_svm(X, y, solver="dcd", log=False).objective
    if kind == "csc":
        given = X.tocsc()
    elif kind == "coo":
        given = X.tocoo()
    elif kind == "float32":
        given = X.astype(np.float32)
        expected = aidopt.solve_svm(given.astype(float), y, solver="dcd", log=False).objective
    elif kind == "int64 indices":
        given = sp.csr_matrix((X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64)),
                              shape=X.shape)
    else:  # every stored value split in two entries, rows' indices reversed
        coo = X.tocoo()
        rows, cols = np.concatenate([coo.row, coo.row]), np.concatenate([coo.col, coo.col])
        order = np.lexsort((-cols, rows))
        vals = np.concatenate([coo.data / 2, coo.data / 2])[order]
        counts = np.bincount(rows, minlength=X.shape[0])
        given = sp.csr_matrix((vals, cols[order], np.r_[0, np.cumsum(counts)]), shape=X.shape)
        assert not given.has_canonical_format
    before = given.copy()
    res = aidopt.solve_svm(given, y, solver="dcd", log=False)
    assert res.certified and res.objective == pytest.approx(expected, rel=1e-6)
    assert given.format == before.format and given.nnz == before.nnz
    assert np.array_equal(given.toarray(), before.toarray())


@pytest.mark.parametrize(("value", "match"), [(np.nan, "NaN or infinite"), (np.inf, "NaN or infinite"),
                                              (1e25, "magnitude")])
def test_bad_values_are_named_by_row_and_column(value, match):
    X, y = random_rows(100, 20, 0.2, 0)
    X = X.tolil()
    X[37, 11] = value
    with pytest.raises(ValueError, match=rf"{match}.*\(37, 11\)"):
        aidopt.solve_svm(X.tocsc(), y, log=False)


def test_shape_and_label_errors_are_the_dense_ones():
    X, y = random_rows(100, 20, 0.2, 0)
    with pytest.raises(ValueError, match="X has 100 rows but y has 99"):
        aidopt.solve_svm(X, y[:99], solver="dcd", log=False)
    with pytest.raises(ValueError, match="exactly two classes"):
        aidopt.solve_svm(X, np.ones(100), solver="dcd", log=False)
    with pytest.raises(ValueError, match="X is empty"):
        aidopt.solve_svm(sp.csr_matrix((0, 5)), np.ones(0), log=False)


def test_the_rule_of_the_door():
    assert _shape.linear_method(10**6, 50, 5 * 10**7).method == "aid"  # tall, narrow, dense
    assert _shape.linear_method(2 * 10**4, 2 * 10**4, 8 * 10**5).method == "dcd"  # sparse
    assert _shape.linear_method(2000, 5000, 10**7).method == "dcd"  # wide, dense
    assert _shape.linear_method(300, 60, 900).method == "aid"  # small: AID whatever the shape
    # a sparse X of 30 % stored entries, tall: AID, unless its dense copy would not fit
    assert _shape.linear_method(10**6, 1000, 3 * 10**8, memory=64e9).method == "aid"
    memory = _shape.linear_method(10**6, 1000, 3 * 10**8, memory=16e9)
    assert memory.method == "dcd" and "dense copy (8 GB)" in memory.reason


def test_the_door_dispatches_by_shape_and_says_why(capsys):
    X, y = sparse_rows(6000, 3000, 10, 0)
    res = aidopt.solve_svm(X, y, C=1.0)
    out = capsys.readouterr().out
    assert res.solver == "dcd" and res.certified and res.dimensions["nnz"] == X.nnz
    assert "dual coordinate descent on the full data: sparse X" in out
    assert "dual coordinate descent" in res.message
    labels = np.where(np.arange(40_000) % 2 == 0, 1.0, -1.0)
    dense = np.random.default_rng(0).standard_normal((40_000, 30)) + 0.3 * labels[:, None]
    res = aidopt.solve_svm(dense, labels, C=1.0, log=False)
    assert res.solver == "fm" and res.aid and "AID with fm: tall, narrow, dense X" in res.message
    # another solver named: its Pyomo QP from the stored entries (tests/svm/test_svm_qp_sparse.py)
    small, labels = random_rows(200, 20, 0.2, 1)
    res = aidopt.solve_svm(small, labels, solver="clarabel", aid=False, log=False)
    assert res.solver == "clarabel" and res.certified and "solver='clarabel' given" in res.message


def test_no_n_by_m_array_is_made():
    """2·10^4 x 2·10^4 rows with 40 entries each: the run's peak allocation stays a small
    fraction of the 3.2 GB a dense X would take (validation, solve and certificate)."""
    n = m = 20_000
    X, y = sparse_rows(n, m, 40, 1)
    tracemalloc.start()
    try:
        res = aidopt.solve_svm(X.tocoo(), y, C=1.0, tol=1e-4, log=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.solver == "dcd" and res.certified
    assert peak < 0.03 * n * m * 8, peak  # under 100 MB


def test_time_limit_between_passes():
    X, y = sparse_rows(20_000, 5_000, 30, 2)
    res = aidopt.solve_svm(X, y, C=1000.0, tol=1e-12, time_limit=0.3, log=False)
    assert res.termination is Termination.TIME_LIMIT and not res.certified
    assert res.seconds < 5.0
    assert np.isfinite(res.objective) and res.lower_bound <= res.objective
    assert res.solution["w"].shape == (5_000,)


def test_ctrl_c_returns_the_best_so_far(monkeypatch):
    from aidopt.numerics import dcd as dcd_module

    X, y = sparse_rows(3000, 2000, 10, 3)
    passes = {"count": 0}
    original = dcd_module._pass

    def interrupted(*args):
        passes["count"] += 1
        if passes["count"] == 5:
            raise KeyboardInterrupt
        return original(*args)

    monkeypatch.setattr(dcd_module, "_pass", interrupted)
    res = aidopt.solve_svm(X, y, C=1.0, tol=1e-12, solver="dcd", log=False)
    assert res.termination is Termination.INTERRUPTED
    assert res.solution["w"] is not None and np.isfinite(res.objective)
    assert res.lower_bound <= res.objective


def test_classifier_keeps_sparse_x():
    X, y, _, C = _case("random", 4)
    labels = np.where(y > 0, "spam", "ham")
    clf = aidopt.SVMClassifier(C=C, solver="dcd").fit(X, labels)
    dense = aidopt.SVMClassifier(C=C).fit(X.toarray(), labels)
    assert clf.result_.solver == "dcd" and clf.result_.certified
    assert clf.result_.objective == pytest.approx(dense.result_.objective, rel=1e-6)
    assert np.array_equal(clf.predict(X), clf.predict(X.toarray()))
    assert np.mean(clf.predict(X) == dense.predict(X)) > 0.98


def test_cli_reads_svmlight_sparse(tmp_path, capsys):
    """A vocabulary of 200,000 words: a dense X would take 3.2 GB; the run stays far below."""
    n, m = 2000, 200_000
    X, y = sparse_rows(n, m, 12, 4)
    path = tmp_path / "train.svm"
    coo = X.tocoo()
    lines = [[f"{int(label):+d}"] for label in y]
    for i, j, v in zip(coo.row, coo.col, coo.data, strict=True):
        lines[i].append(f"{j + 1}:{v:.17g}")
    path.write_text("\n".join(" ".join(line) for line in lines) + "\n")
    tracemalloc.start()
    try:
        code = main(["svm", "--data", str(path), "--C", "1", "--quiet"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    out = capsys.readouterr().out
    assert code == 0, out
    assert "certified_optimal" in out and "certificate passed" in out
    assert peak < 200e6, peak
    expected = aidopt.solve_svm(X, y, C=1.0, log=False)
    assert f"objective {expected.objective:.6g}"[:16] in out
