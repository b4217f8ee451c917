"""``aidopt scm`` (cli_scm.add_arguments / run) and the benchmark on a tiny configuration."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest
from aidopt.instances.scm import sine_set

from aidopt.cli import scm as cli_scm


def _parser():
    parser = argparse.ArgumentParser(prog="aidopt")
    cli_scm.add_arguments(parser.add_subparsers(dest="command").add_parser("scm"))
    return parser


def _csv(path, seed):
    pd = pytest.importorskip("pandas")
    X, y = sine_set("D2", n_pos=20, n_neg=200, seed=seed)
    pd.DataFrame({"x": X[:, 0], "v": X[:, 1], "label": np.where(y > 0, "pos", "neg")}).to_csv(
        path, index=False)
    return path


def test_cli_scm(tmp_path, capsys):
    train, val = _csv(tmp_path / "train.csv", 0), _csv(tmp_path / "val.csv", 1)
    out = tmp_path / "res.json"
    args = _parser().parse_args(["scm", "--data", str(train), "--validation", str(val),
                                 "--kernel", "rbf", "--gamma", "0.5", "--shrink", "auto",
                                 "--output", str(out), "--quiet"])
    assert args.func is cli_scm.run
    assert args.func(args) == 0  # certified
    text = capsys.readouterr().out
    assert "weighted SVM (6) certificate passed" in text
    assert "validation: average precision" in text and "'pos'" in text
    saved = json.loads(out.read_text())
    assert saved["termination"] in ("ratio", "stalled") and saved["svm"]["certificate"]["certified"]



def test_cli_scm_passes_shrink_side(tmp_path, monkeypatch):
    import aidopt.api.scm

    train = _csv(tmp_path / "train.csv", 0)
    seen = {}
    solve = aidopt.api.scm.solve_scm

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return solve(*args, **kwargs)

    monkeypatch.setattr(aidopt.api.scm, "solve_scm", spy)
    args = _parser().parse_args(["scm", "--data", str(train), "--kernel", "linear",
                                 "--shrink-side", "margin", "--quiet"])
    assert args.func(args) == 0 and seen["shrink_side"] == "margin"
    with pytest.raises(SystemExit):
        _parser().parse_args(["scm", "--data", str(train), "--shrink-side", "left"])


def test_cli_average_precision_matches_sklearn():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    truth = rng.random(300) < 0.2
    score = np.round(rng.normal(size=300) + truth, 1)  # with ties
    assert cli_scm._average_precision(truth, score) == pytest.approx(
        metrics.average_precision_score(truth, score))


def test_bench_worker_in_process():
    pytest.importorskip("sklearn")
    from aidopt.bench.scm import worker

    for method in ("whole", "random", "weighted", "scm", "scm_i", "scm_refit"):
        out = worker(method, "sine:10:100", 0, 1.0, "rbf", 2)
        assert out["n"] == 55 and 0 < out["ap"] <= 1 and out["seconds"] > 0
        if method.startswith("scm"):
            assert out["termination"] and out["svm_gap"] >= 0


def test_bench_tables_tiny(tmp_path):
    pytest.importorskip("sklearn")
    from aidopt.bench.scm import bench_scm

    table = bench_scm("sine:10:100", repeat=1, methods=("whole", "scm"),
                      output=str(tmp_path / "t.md"), time_limit=120)
    assert "Table 3" in table and "Table 4" in table and "Target (scm)" in table
    assert "skipped" not in table and (tmp_path / "t.md").read_text().strip()
