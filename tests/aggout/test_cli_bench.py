"""``aidopt aggout`` and ``aidopt bench aggout`` agree with the Python API."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import aidopt
from aidopt.cli.main import main


def _toy(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    truth = (X[:, 0] - 0.3 * X[:, 1] > 0).astype(int)
    collections = np.arange(n) // 5
    return X, truth, collections, np.bincount(collections, weights=truth).astype(int)


@pytest.mark.parametrize("method", ["slaag", "miqp"])
def test_cli_aggout_matches_api(tmp_path, capsys, method):
    X, truth, collections, counts = _toy(80 if method == "slaag" else 20)
    frame = pd.DataFrame(X, columns=["a", "b"])
    frame["collection"] = [f"c{c}" for c in collections]
    frame["count"] = counts[collections]
    path = tmp_path / "agg.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "labels.csv"
    extra = ["--norm", "l1", "--solver", "highs", "--no-aid"] if method == "miqp" else []
    code = main(["aggout", "--data", str(path), "--method", method, "--labels-out", str(out),
                 "--quiet", *extra])
    text = capsys.readouterr().out
    assert code == 0, text
    api = aidopt.solve_aggregate_outputs(
        X, frame["collection"].to_numpy(), dict(zip(frame["collection"], frame["count"], strict=True)),
        method=method, log=False, **({"norm": "l1", "solver": "highs", "aid": False}
                                     if method == "miqp" else {}))
    assert "w: a=" in text and f"{api.solution['b']:.6g}" in text
    labels = pd.read_csv(out)["label"].to_numpy()
    assert np.array_equal(labels, api.solution["labels"].astype(int))
    expected = "certified_optimal" if method == "miqp" else api.termination.value
    assert expected in text


def test_cli_aggout_rejects_inconsistent_counts(tmp_path, capsys):
    X, truth, collections, counts = _toy(20)
    frame = pd.DataFrame(X, columns=["a", "b"])
    frame["collection"] = collections
    frame["count"] = counts[collections]
    frame.loc[0, "count"] += 1  # collection 0 now has two different counts on its rows
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    assert main(["aggout", "--data", str(path)]) == 2
    assert "different counts" in capsys.readouterr().err
    frame = frame.drop(columns=["count"])
    frame.to_csv(path, index=False)
    assert main(["aggout", "--data", str(path)]) == 2
    assert "no column 'count'" in capsys.readouterr().err


def test_bench_aggout_accuracy_table(tmp_path, capsys):
    out, raw = tmp_path / "bench.md", tmp_path / "raw.json"
    assert main(["bench", "aggout", "--dataset", "dermatology", "--sizes", "10",
                 "--randomness", "0", "2000", "--seeds", "2", "--output", str(out),
                 "--raw", str(raw)]) == 0
    text = out.read_text()
    assert "| 10 |" in text and "(98.33;" in text and "(95.83;" in text  # the paper's cells
    rows = json.loads(raw.read_text())
    assert len(rows) == 4 and {r["randomness"] for r in rows} == {0, 2000}
    assert all(0 <= r["accuracy"] <= 100 and r["termination"] in ("no_improvement", "stationary")
               for r in rows)


def test_bench_time_rows_are_whole_collections():
    from aidopt.instances.aggout import aggregate_split, dermatology_psoriasis

    from aidopt.bench.aggout import _first_rows

    X, y = dermatology_psoriasis()
    split = aggregate_split(X, y, size=10, randomness=2000, seed=0)
    part = _first_rows(split, 50)
    assert part.X_train.shape[0] == 50 and part.counts.size == 5
    assert np.array_equal(np.bincount(part.collections, weights=part.y_train), part.counts)
