"""``aidopt lad --quantile`` and ``--se``: one level, a sequence, the coefficient table of R's
summary, and the refusals (one line, exit code 2, nothing solved)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import aidopt
from aidopt.cli.main import build_parser, main


@pytest.fixture
def csv_file(tmp_path):
    rng = np.random.default_rng(12)
    X = rng.normal(size=(500, 2))
    y = 1.0 + X @ [2.0, -1.0] + (1 + np.abs(X[:, 0])) * rng.laplace(scale=0.5, size=500)
    frame = pd.DataFrame(X, columns=["age", "income"])
    frame["price"] = y
    path = tmp_path / "rq.csv"
    frame.to_csv(path, index=False)
    return path, X, y


def test_one_level(csv_file, tmp_path, capsys):
    path, X, y = csv_file
    out = tmp_path / "r.json"
    code = main(["lad", "--data", str(path), "--target", "price", "--quantile", "0.25", "--quiet",
                 "--output", str(out)])
    text = capsys.readouterr().out
    assert code == 0 and "certified_optimal" in text and "income" in text
    saved = json.loads(out.read_text())
    assert saved["quantile"] == 0.25
    direct = aidopt.solve_lad(X, y, fit_intercept=True, quantile=0.25, log=False)
    assert saved["objective"] == pytest.approx(direct.objective, rel=1e-6)


def test_a_sequence_and_the_standard_errors(csv_file, tmp_path, capsys):
    path, _, _ = csv_file
    code = main(["lad", "--data", str(path), "--target", "price", "--quantile", "0.1,0.5,0.9",
                 "--quiet", "--plot", str(tmp_path / "rq.png")])
    text = capsys.readouterr().out
    assert code == 0 and "coefficients by tau" in text
    assert all(f"{tau:>8}" in text for tau in ("0.1", "0.5", "0.9"))
    assert (tmp_path / "rq.png").exists()
    code = main(["lad", "--data", str(path), "--target", "price", "--quantile", "0.5", "--se",
                 "nid", "--quiet"])
    text = capsys.readouterr().out
    assert code == 0 and "Std. Error" in text and "standard errors: nid" in text
    code = main(["lad", "--data", str(path), "--target", "price", "--quantile", "0.5", "--se",
                 "boot", "--bootstrap", "4", "--quiet"])
    text = capsys.readouterr().out
    assert code == 0 and "B = 4" in text


def test_the_flag_parses_levels():
    parse = build_parser("lad").parse_args
    assert parse(["lad", "--data", "x"]).quantile is None
    assert parse(["lad", "--data", "x", "--quantile", "0.3"]).quantile == 0.3
    assert parse(["lad", "--data", "x", "--quantile", "0.1,0.9"]).quantile == (0.1, 0.9)
    with pytest.raises(SystemExit):
        parse(["lad", "--data", "x", "--quantile", "half"])


@pytest.mark.parametrize(("flags", "words"), [
    (["--quantile", "1.5"], "open interval"),
    (["--quantile", "0"], "open interval"),
    (["--quantile", "0.5,0.5"], "repeats"),
    (["--se", "iid", "--engine", "dask"], "X in memory"),
])
def test_bad_levels_are_one_line_errors(csv_file, capsys, flags, words):
    path, _, _ = csv_file
    code = main(["lad", "--data", str(path), "--target", "price", *flags])
    captured = capsys.readouterr()
    assert code == 2 and captured.err.startswith("aidopt: error:") and words in captured.err
    assert "Traceback" not in captured.err + captured.out and "iter" not in captured.out
