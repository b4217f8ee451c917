"""What a user sees: logging that follows the library convention, the fitted model in the CLI's
output and ``summary()``, and output paths checked before any solve."""

from __future__ import annotations

import io
import logging
import os

import numpy as np
import pandas as pd
import pytest
from aidopt.decomposition.aid import HEADER

import aidopt
from aidopt.cli.main import main


@pytest.fixture
def lad_csv(tmp_path):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 3))
    y = 1.0 + X @ np.array([2.0, -1.0, 0.5]) + rng.laplace(scale=0.1, size=400)
    frame = pd.DataFrame(X, columns=["age", "income", "score"])
    frame["price"] = y
    path = tmp_path / "lad.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture
def svm_csv(tmp_path):
    rng = np.random.default_rng(6)
    y = np.where(rng.random(400) < 0.5, 1, -1)
    X = rng.normal(size=(400, 2)) + 1.2 * y[:, None]
    frame = pd.DataFrame(X, columns=["height", "weight"])
    frame["label"] = y
    path = tmp_path / "svm.csv"
    frame.to_csv(path, index=False)
    return path


def _small_lad():
    rng = np.random.default_rng(0)
    X = np.column_stack([np.ones(300), rng.normal(size=(300, 2))])
    return X, X @ np.array([1.0, 2.0, -1.0]) + rng.laplace(size=300)


# --------------------------------------------------------------------------- logging
def test_run_prints_its_table_without_logging_configuration(capsys):
    aidopt.solve_lad(*_small_lad(), log=True)
    out = capsys.readouterr().out
    assert out.count(HEADER) == 1


def test_configured_logging_gets_the_table_once_and_stdout_nothing(capsys):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    old = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        aidopt.solve_lad(*_small_lad(), log=True)
    finally:
        root.removeHandler(handler)
        root.setLevel(old)
    assert HEADER not in capsys.readouterr().out  # not printed a second time by aidopt itself
    assert stream.getvalue().count(HEADER) == 1


def test_user_level_on_the_aidopt_logger_silences_a_run(capsys):
    logger = logging.getLogger("aidopt")
    logger.setLevel(logging.WARNING)
    try:
        aidopt.solve_lad(*_small_lad(), log=True)
    finally:
        logger.setLevel(logging.NOTSET)
    assert HEADER not in capsys.readouterr().out
    assert logger.level == logging.NOTSET and not [
        h for h in logger.handlers if not isinstance(h, logging.NullHandler)]


# --------------------------------------------------------------------------- the fitted model
def test_lad_cli_prints_named_coefficients(lad_csv, capsys):
    code = main(["lad", "--data", str(lad_csv), "--target", "price", "--fit-intercept", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    assert "coefficients:" in out
    lines = {line.split()[0]: line.split()[1] for line in out.splitlines()
             if line.strip().split()[:1] and line.strip().split()[0] in ("age", "income", "score")}
    assert set(lines) == {"age", "income", "score"}
    assert float(lines["age"]) == pytest.approx(2.0, abs=0.05)
    assert float(lines["income"]) == pytest.approx(-1.0, abs=0.05)


def test_cli_prints_the_coefficient_table_once(svm_csv, capsys):
    """The run's log ends with the summary without the table; the CLI prints it once, with the
    data's feature names."""
    assert main(["svm", "--data", str(svm_csv), "--target", "label", "--C", "0.5"]) == 0
    assert capsys.readouterr().out.count("coefficients:") == 1


def test_svm_cli_prints_w_b_and_accuracy(svm_csv, capsys):
    code = main(["svm", "--data", str(svm_csv), "--target", "label", "--C", "0.5"])
    out = capsys.readouterr().out
    assert code == 0
    assert "training accuracy" in out and "(offset b)" in out
    assert "height" in out and "weight" in out
    acc = float(out.split("training accuracy", 1)[1].split("%")[0])
    assert 85.0 <= acc <= 100.0


def test_summary_has_the_coefficient_table_and_explains_the_split_condition():
    X, y = _small_lad()
    res = aidopt.solve_lad(X, y, log=False)
    text = res.summary()
    assert "coefficients:" in text and "x0" in text
    assert "fails" not in text  # the old confusing "paper's sign condition fails"
    rows = res.coefficients()
    np.testing.assert_allclose([v for _, v in rows], res.solution["beta"])


def test_coefficient_table_rejects_wrong_standard_errors():
    res = aidopt.solve_lad(*_small_lad(), log=False)
    with pytest.raises(ValueError, match="standard errors"):
        res.coefficient_table(standard_errors=[1.0])
    assert "std. error" in res.coefficient_table(standard_errors=[0.1, 0.2, 0.3])


def _with_negative_zeros(solve, keys):
    """``solve`` whose result has -0.0 as the first entry of each solution key (a coefficient
    that is exactly zero comes out of a solver as -0.0)."""
    def wrapped(*args, **kwargs):
        result = solve(*args, **kwargs)
        for key in keys:
            value = result.solution[key]
            if np.ndim(value):
                value = np.array(value, dtype=float)
                value[0] = -0.0
            else:
                value = -0.0
            result.solution[key] = value
        return result

    return wrapped


@pytest.mark.parametrize("command, door, keys", [
    ("lad", "aidopt.api.lad.solve_lad", ["beta"]),
    ("svm", "aidopt.api.svm.solve_svm", ["w", "b"]),
])
def test_coefficient_tables_print_zero_not_minus_zero(command, door, keys, lad_csv, svm_csv,
                                                      monkeypatch, capsys):
    import importlib

    module, name = door.rsplit(".", 1)
    module = importlib.import_module(module)
    monkeypatch.setattr(module, name, _with_negative_zeros(getattr(module, name), keys))
    data, target = (lad_csv, "price") if command == "lad" else (svm_csv, "label")
    for quiet in ([], ["--quiet"]):
        assert main([command, "--data", str(data), "--target", target, *quiet]) == 0
        out = capsys.readouterr().out
        rows = out[out.index("coefficients:"):].splitlines()[2:]
        table = rows[:next((i for i, line in enumerate(rows) if not line.startswith("  ")),
                           len(rows))]
        values = [line.split()[-1] for line in table]
        assert "-0" not in values and "0" in values, out
        if command == "svm":
            assert table[-1].split()[-1] == "0"  # the offset b


def test_aggout_prints_zero_not_minus_zero(tmp_path, monkeypatch, capsys):
    import aidopt.api.aggout as api

    monkeypatch.setattr(api, "solve_aggregate_outputs",
                        _with_negative_zeros(api.solve_aggregate_outputs, ["w", "b"]))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    collections = np.arange(40) // 5
    frame = pd.DataFrame(X, columns=["a", "b"])
    frame["collection"] = collections
    frame["count"] = np.bincount(collections, weights=X[:, 0] > 0).astype(int)[collections]
    frame.to_csv(tmp_path / "agg.csv", index=False)
    main(["aggout", "--data", str(tmp_path / "agg.csv"), "--quiet"])
    out = capsys.readouterr().out
    assert "w: a=0, " in out and "b: 0 " in out and "-0" not in out


# --------------------------------------------------------------------------- output paths
@pytest.mark.parametrize("flag", ["--output", "--plot"])
def test_output_into_a_missing_directory_fails_before_solving(lad_csv, tmp_path, capsys, flag):
    target = tmp_path / "missing" / "out.file"
    code = main(["lad", "--data", str(lad_csv), "--target", "price", flag, str(target)])
    captured = capsys.readouterr()
    assert code == 2
    assert "does not exist" in captured.err
    assert HEADER not in captured.out  # nothing was solved


def test_write_models_onto_a_file_fails_before_solving(lad_csv, tmp_path, capsys):
    existing = tmp_path / "models"
    existing.write_text("not a directory")
    code = main(["lad", "--data", str(lad_csv), "--target", "price", "--write-models", str(existing)])
    captured = capsys.readouterr()
    assert code == 2 and "not a directory" in captured.err and HEADER not in captured.out


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write into read-only directories")
def test_read_only_directory_fails_before_solving(lad_csv, tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code = main(["lad", "--data", str(lad_csv), "--target", "price",
                     "--output", str(locked / "r.json")])
    finally:
        locked.chmod(0o700)
    assert code == 2 and "not writable" in capsys.readouterr().err


def test_output_that_is_a_directory_fails(lad_csv, tmp_path, capsys):
    code = main(["lad", "--data", str(lad_csv), "--target", "price", "--output", str(tmp_path)])
    assert code == 2 and "is a directory" in capsys.readouterr().err


# --------------------------------------------------------------------------- messages
def test_header_only_and_empty_files_say_so(tmp_path, capsys):
    header = tmp_path / "h.csv"
    header.write_text("a,b,y\n")
    empty = tmp_path / "e.csv"
    empty.write_text("")
    assert main(["lad", "--data", str(header)]) == 2
    assert "no rows" in capsys.readouterr().err
    assert main(["lad", "--data", str(empty)]) == 2
    assert "is empty" in capsys.readouterr().err


def test_huge_values_ask_for_scaling():
    X, y = _small_lad()
    with pytest.raises(ValueError, match="scale the data"):
        aidopt.solve_lad(X * 1e300, y, log=False)
    with pytest.raises(ValueError, match="scale the data"):
        aidopt.solve_lad(X, y * 1e21, log=False)


def test_help_documents_exit_codes_and_demo_options(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "exit codes" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    out = capsys.readouterr().out
    assert "(default A)" in out and "rows (default 100000)" in out


def test_transduction_path_is_checked_before_solving(tmp_path, capsys):
    data = tmp_path / "ssl.csv"
    data.write_text("a,b,y\n0,1,1\n1,0,-1\n0.5,0.5,\n")
    code = main(["s3vm", "--data", str(data), "--transduction", str(tmp_path / "no" / "t.txt")])
    assert code == 2 and "does not exist" in capsys.readouterr().err


def test_a_long_solve_says_it_is_alive(capsys, monkeypatch):
    from aidopt.decomposition import run as run_module

    monkeypatch.setattr(run_module, "HEARTBEAT", 0.05)
    rng = np.random.default_rng(1)
    X = np.column_stack([np.ones(20000), rng.normal(size=(20000, 8))])
    y = X @ rng.normal(size=9) + rng.laplace(size=20000)
    aidopt.solve_lad(X, y, aid=False, log=True, solver="highs")
    out = capsys.readouterr().out
    assert "... highs solving" in out
    monkeypatch.setattr(run_module, "HEARTBEAT", 0.002)  # fn takes ~0.05 s here
    aidopt.solve_lad(X, y, aid=False, log=True)  # a native method (fn, the default) too
    assert "... fn solving" in capsys.readouterr().out
    aidopt.solve_lad(X, y, aid=False, log=False)
    assert "solving" not in capsys.readouterr().out


def test_bootstrap_standard_errors_in_the_cli_and_the_api(lad_csv, capsys):
    code = main(["lad", "--data", str(lad_csv), "--target", "price", "--fit-intercept",
                 "--bootstrap", "8", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0 and "std. error" in out
    assert "certified refits" not in out  # a progress note: not printed under --quiet
    row = next(line.split() for line in out.splitlines() if line.strip().startswith("age")
               and len(line.split()) == 3)
    assert 0.0 < float(row[2]) < 0.1  # 400 rows, Laplace noise of scale 0.1
    X, y = _small_lad()
    draws = aidopt.bootstrap_coefficients(aidopt.solve_lad, X, y, B=5, seed=1)
    assert draws.shape == (5, 3) and np.all(draws.std(axis=0, ddof=1) > 0)
    again = aidopt.bootstrap_coefficients(aidopt.solve_lad, X, y, B=5, seed=1)
    np.testing.assert_array_equal(draws, again)  # seeded
    with pytest.raises(ValueError, match="B must be"):
        aidopt.bootstrap_coefficients(aidopt.solve_lad, X, y, B=1)
