"""Every command that reads a data file reads svmlight / LIBSVM files as CSR, never the n x m
array (``aidopt fsv``, ``s3vm``, ``aggout``, ``svm``, ``lad``): through ``main()`` on small files
written here, each result checked against the door on the dense array."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import sparse

import aidopt
from aidopt.cli.main import main
from tests._densify import densify_calls


def _write(path, X, labels, qid=None):
    """X (CSR) and labels as an svmlight file (1-based indices; ``qid:`` when given)."""
    X = sparse.csr_matrix(X)
    with open(path, "w") as fh:
        for i, label in enumerate(labels):
            row = X.getrow(i)
            head = [f"{float(label)!r}"] + ([f"qid:{qid[i]}"] if qid is not None else [])
            items = [f"{j + 1}:{float(v)!r}" for j, v in zip(row.indices, row.data, strict=True)]
            fh.write(" ".join(head + items) + "\n")
    return path


def _data(n, m, seed, density=0.25):
    rng = np.random.default_rng(seed)
    X = sparse.random(n, m - 1, density=density, random_state=seed, format="csr")
    X.data = np.round(X.data, 6)
    # the last column stored in every row: the file gives X's width
    X = sparse.hstack([X, np.full((n, 1), 0.5)], format="csr")
    score = X @ rng.normal(size=m)
    return X, np.where(score > np.median(score), 1, -1)


def _objective(path):
    return json.loads(path.read_text())["objective"]


def test_fsv_reads_svmlight_sparse(tmp_path, monkeypatch):
    X, y = _data(120, 15, 1)
    data = _write(tmp_path / "train.svm", X, y)
    dense = aidopt.solve_fsv(X.toarray(), y, log=False)
    calls = densify_calls(monkeypatch)
    assert main(["fsv", "--data", str(data), "--quiet", "--output", str(tmp_path / "r.json")]) == 0
    assert not calls, calls
    assert _objective(tmp_path / "r.json") == pytest.approx(dense.objective, rel=1e-7)


def test_s3vm_reads_svmlight_sparse(tmp_path, monkeypatch):
    X, y = _data(30, 8, 2)
    y = y.astype(float)
    y[8:] = 0.0  # unlabeled
    data = _write(tmp_path / "train.libsvm", X, y)
    dense = aidopt.solve_s3vm(X.toarray(), y, aid=False, log=False)
    calls = densify_calls(monkeypatch)
    out = tmp_path / "r.json"
    assert main(["s3vm", "--data", str(data), "--no-aid", "--quiet", "--output", str(out)]) == 0
    assert not calls, calls
    assert dense.certified and _objective(out) == pytest.approx(dense.objective, rel=1e-6)


def test_aggout_reads_svmlight_with_collections_as_qid(tmp_path, monkeypatch):
    X, y = _data(100, 12, 3)
    collections = np.arange(100) // 10
    counts = np.bincount(collections, weights=y > 0).astype(int)
    data = _write(tmp_path / "bags.svm", X, counts[collections], qid=collections + 7)
    dense = aidopt.solve_aggregate_outputs(X.toarray(), collections, counts, log=False)
    calls = densify_calls(monkeypatch)
    out = tmp_path / "r.json"
    assert main(["aggout", "--data", str(data), "--quiet", "--output", str(out)]) == 0
    assert not calls, calls
    assert _objective(out) == pytest.approx(dense.objective, rel=1e-6)


def test_aggout_svmlight_needs_a_qid_and_one_count_per_collection(tmp_path, capsys):
    X, y = _data(20, 5, 4)
    no_qid = _write(tmp_path / "a.svm", X, np.ones(20, dtype=int))
    assert main(["aggout", "--data", str(no_qid), "--quiet"]) == 2
    assert "line 1: no qid" in capsys.readouterr().err
    counts = np.ones(20, dtype=int)
    counts[3] = 2
    mixed = _write(tmp_path / "b.svm", X, counts, qid=np.arange(20) // 5)
    assert main(["aggout", "--data", str(mixed), "--quiet"]) == 2
    assert "collection (qid) 0 has different counts" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["svm", "lad"])
def test_svm_and_lad_read_svmlight_sparse(command, tmp_path, monkeypatch):
    if command == "svm":  # n m > 10^6 and sparse: kept CSR by shape (dual coordinate descent)
        X, y = _data(2000, 600, 5, density=0.005)
        dense = aidopt.solve_svm(X.toarray(), y, log=False)
    else:  # wide (n <= m): the dual LP from the stored entries; the CLI adds an intercept
        X, _ = _data(150, 300, 5, density=0.002)  # rank < n: no exact fit
        y = X @ np.arange(300.0) + np.random.default_rng(6).laplace(size=150)
        dense = aidopt.solve_lad(X.toarray(), y, fit_intercept=True, log=False)
        assert dense.objective > 1.0
    data = _write(tmp_path / "train.svm", X, y)
    calls = densify_calls(monkeypatch)
    out = tmp_path / "r.json"
    main([command, "--data", str(data), "--quiet", "--output", str(out)])
    assert not calls, calls
    assert _objective(out) == pytest.approx(dense.objective, rel=1e-6)
