"""``aidopt svm`` on svmlight/LIBSVM and CSV files."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import aidopt
from aidopt.cli.main import main
from aidopt.data.validate import load_table
from tests.svm._helpers import instance

sklearn = pytest.importorskip("sklearn")
from sklearn.datasets import dump_svmlight_file  # noqa: E402


@pytest.fixture(scope="module")
def xy():
    return instance("overlapping", 500, 4, 2)


@pytest.fixture
def svmlight_file(tmp_path, xy):
    X, y = xy
    path = tmp_path / "train.libsvm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    return path


@pytest.fixture
def csv_file(tmp_path, xy):
    X, y = xy
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    frame["label"] = np.where(y > 0, "pos", "neg")
    path = tmp_path / "train.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("norm", ["l1", "l2"])
@pytest.mark.parametrize("aid", [True, False], ids=["aid", "direct"])
def test_cli_svmlight(svmlight_file, xy, tmp_path, capsys, norm, aid):
    out = tmp_path / "result.json"
    argv = ["svm", "--data", str(svmlight_file), "--C", "0.1", "--norm", norm, "--quiet",
            "--output", str(out)] + ([] if aid else ["--no-aid"])
    assert main(argv) == 0
    result = json.loads(out.read_text())
    assert result["termination"] == "certified_optimal"
    assert result["aid"] is aid
    assert result["n"] == 500 and result["m"] == 4
    X, y = xy
    ref = aidopt.solve_svm(X, y, C=0.1, norm=norm, aid=False, log=False)
    assert result["objective"] == pytest.approx(ref.objective, rel=1e-6)
    assert len(result["solution"]["w"]) == 4
    assert result["certificate"]["certified"] is True
    printed = capsys.readouterr().out
    assert "result: certified_optimal, " in printed and "certificate passed" in printed


def test_svmlight_reader_round_trip(svmlight_file, xy):
    X, y = xy
    X2, y2, names = load_table(svmlight_file)
    assert names is None
    np.testing.assert_allclose(X2, X, rtol=1e-15)
    np.testing.assert_array_equal(y2, y)


def test_cli_csv_string_labels(csv_file, xy, tmp_path):
    out = tmp_path / "result.json"
    argv = ["svm", "--data", str(csv_file), "--C", "0.1", "--norm", "l1", "--quiet",
            "--output", str(out)]
    assert main(argv) == 0
    result = json.loads(out.read_text())
    assert result["termination"] == "certified_optimal"
    assert result["solution"]["classes"] == ["neg", "pos"]
    assert result["solution"]["feature_names"] == ["f0", "f1", "f2", "f3"]
    X, y = xy
    ref = aidopt.solve_svm(X, y, C=0.1, norm="l1", log=False)
    assert result["objective"] == pytest.approx(ref.objective, rel=1e-6)


def test_cli_csv_kernel_with_target(tmp_path, xy):
    X, y = xy
    frame = pd.DataFrame({"cls": y.astype(int), "a": X[:, 0], "b": X[:, 1]})
    path = tmp_path / "t.csv"
    frame.iloc[:150].to_csv(path, index=False)
    out = tmp_path / "r.json"
    argv = ["svm", "--data", str(path), "--target", "cls", "--kernel", "rbf", "--gamma", "0.5",
            "--C", "1", "--quiet", "--output", str(out)]
    assert main(argv) == 0
    result = json.loads(out.read_text())
    assert result["termination"] == "certified_optimal"
    assert result["problem"] == "kernel_svm_rbf"
    assert result["solution"]["gamma"] == 0.5


def test_cli_kernel_cache_size_drops_columns_and_keeps_the_answer(tmp_path, xy):
    """--cache-size bounds the cached mean-kernel columns: a tiny one drops columns (recorded in
    the history) and the certified objective is the unbounded run's."""
    X, y = xy
    frame = pd.DataFrame({"cls": y.astype(int), "a": X[:, 0], "b": X[:, 1]})
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    results = []
    for extra in ([], ["--cache-size", "0.01"]):  # 0.01 MB: 16 columns, the floor
        out = tmp_path / f"r{len(extra)}.json"
        argv = ["svm", "--data", str(path), "--target", "cls", "--kernel", "rbf", "--C", "1",
                "--quiet", "--output", str(out), *extra]
        assert main(argv) == 0
        results.append(json.loads(out.read_text()))
    assert all(r["termination"] == "certified_optimal" for r in results)
    assert results[1]["objective"] == pytest.approx(results[0]["objective"], rel=1e-5)
    dropped = [it["info"].get("columns_dropped", 0) for it in results[1]["history"]]
    assert max(dropped) > 0
    assert max(it["info"].get("columns_dropped", 0) for it in results[0]["history"]) == 0
    assert main(["svm", "--data", str(path), "--target", "cls", "--cache-size", "5",
                 "--quiet"]) == 2  # the linear SVM has no kernel columns


def test_cli_bad_labels_exit_code_2(tmp_path, capsys):
    frame = pd.DataFrame({"a": np.arange(9.0), "label": [1] * 9})
    path = tmp_path / "one.csv"
    frame.to_csv(path, index=False)
    assert main(["svm", "--data", str(path), "--quiet"]) == 2
    assert "exactly two classes" in capsys.readouterr().err


def test_cli_uncertified_exit_code_1(svmlight_file, capsys):
    assert main(["svm", "--data", str(svmlight_file), "--max-iter", "1", "--quiet"]) == 1
    assert "iteration_limit" in capsys.readouterr().out
