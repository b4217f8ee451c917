"""The ``aidopt`` command line: in-process through ``aidopt.cli.main`` and once as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from aidopt.decomposition.aid import HEADER

from aidopt.cli.main import main

N, M = 2000, 4
BETA = np.array([1.0, -2.0, 0.5, 3.0])
INTERCEPT = 0.75


@pytest.fixture(scope="module")
def csv_file(tmp_path_factory):
    """A small LAD data set as CSV: features f0..f3, response y (not the last column)."""
    rng = np.random.default_rng(2024)
    X = rng.normal(size=(N, M))
    y = INTERCEPT + X @ BETA + rng.laplace(scale=0.2, size=N)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(M)])
    frame.insert(2, "y", y)
    path = tmp_path_factory.mktemp("cli_data") / "data.csv"
    frame.to_csv(path, index=False)
    return path


def _lad_objective(path, beta):
    frame = pd.read_csv(path)
    X = frame[[f"f{j}" for j in range(M)]].to_numpy()
    return float(np.abs(frame["y"].to_numpy() - X @ beta[:M] - beta[M]).sum())


# --------------------------------------------------------------------------- solvers


def test_solvers_table(capsys):
    assert main(["solvers"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.strip()]
    header = lines[0].split()
    assert header[:4] == ["name", "version", "available", "licence"]
    highs = [line for line in lines[1:] if line.split()[0] == "highs"]
    assert len(highs) == 1
    assert "True" in highs[0].split()  # HiGHS is installed: available
    assert "LP,QP,MILP" in highs[0]
    names = {line.split()[0] for line in lines[1:]}
    assert {"highs", "gurobi", "scip"} <= names


# --------------------------------------------------------------------------- demo


def test_demo_small(capsys):
    rc = main(["demo", "--n", "3000", "--m", "5"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "n=3000, m=5" in out
    assert HEADER in out
    assert "iter" in out and "upper(E_best)" in out
    assert "certified_optimal" in out
    assert "CERTIFIED" in out


def test_demo_quiet_prints_the_result_line_only(capsys):
    rc = main(["demo", "--n", "1500", "--m", "3", "--quiet", "--no-aid"])
    out = capsys.readouterr().out
    assert rc == 0
    assert HEADER not in out and "aidopt demo:" not in out
    assert "termination " not in out and "CERTIFIED" not in out
    assert out.startswith("result: certified_optimal, objective ")


# --------------------------------------------------------------------------- lad


def test_lad_outputs(capsys, tmp_path, csv_file):
    out_json = tmp_path / "out.json"
    out_png = tmp_path / "out.png"
    models = tmp_path / "models"
    rc = main([
        "lad", "--data", str(csv_file), "--fit-intercept", "--target", "y", "--output", str(out_json),
        "--plot", str(out_png), "--write-models", str(models),
    ])
    out = capsys.readouterr().out
    assert rc == 0
    assert HEADER in out
    assert f"result written to {out_json}" in out
    assert f"plot written to {out_png}" in out

    result = json.loads(out_json.read_text())
    assert result["termination"] == "certified_optimal"
    assert result["problem"] == "lad"
    assert (result["n"], result["m"]) == (N, M + 1)  # intercept added by default
    beta = np.asarray(result["solution"]["beta"], dtype=float)
    assert beta.shape == (M + 1,)
    assert result["solution"]["feature_names"] == ["f0", "f1", "f2", "f3", "intercept"]
    np.testing.assert_allclose(beta, [*BETA, INTERCEPT], atol=0.05)
    assert result["certificate"]["certified"] is True
    assert result["objective"] == pytest.approx(_lad_objective(csv_file, beta), rel=1e-9)
    assert len(result["history"]) >= 1

    assert out_png.stat().st_size > 1000
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    lp = sorted(models.glob("*.lp"))
    mps = sorted(models.glob("*.mps"))
    assert lp and mps
    assert [p.stem for p in lp] == [p.stem for p in mps]
    assert all(p.stat().st_size > 0 for p in lp + mps)


def test_lad_no_aid(capsys, tmp_path, csv_file):
    out_json = tmp_path / "direct.json"
    rc = main(["lad", "--data", str(csv_file), "--fit-intercept", "--target", "y", "--no-aid", "--quiet",
               "--output", str(out_json)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "certified_optimal" in out
    result = json.loads(out_json.read_text())
    assert result["aid"] is False
    assert result["termination"] == "certified_optimal"
    assert len(result["history"]) == 1
    assert len(result["solution"]["beta"]) == M + 1


def test_lad_aid_and_direct_agree(capsys, tmp_path, csv_file):
    a, d = tmp_path / "a.json", tmp_path / "d.json"
    assert main(["lad", "--data", str(csv_file), "--fit-intercept", "--target", "y", "--quiet",
                 "--output", str(a)]) == 0
    assert main(["lad", "--data", str(csv_file), "--fit-intercept", "--target", "y", "--quiet", "--no-aid",
                 "--output", str(d)]) == 0
    capsys.readouterr()
    obj_a = json.loads(a.read_text())["objective"]
    obj_d = json.loads(d.read_text())["objective"]
    assert obj_a == pytest.approx(obj_d, rel=2e-6)


def test_lad_no_intercept_default_target(capsys, tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    frame = pd.DataFrame(X, columns=["a", "b"])
    frame["resp"] = X @ [1.0, 2.0] + rng.laplace(scale=0.1, size=300)  # last column
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    out_json = tmp_path / "o.json"
    rc = main(["lad", "--data", str(path), "--no-fit-intercept", "--quiet", "--output",
               str(out_json)])
    capsys.readouterr()
    assert rc == 0
    result = json.loads(out_json.read_text())
    assert result["solution"]["feature_names"] == ["a", "b"]
    np.testing.assert_allclose(result["solution"]["beta"], [1.0, 2.0], atol=0.05)


def test_lad_solver_option_passthrough(capsys, tmp_path, csv_file):
    out_json = tmp_path / "o.json"
    rc = main(["lad", "--data", str(csv_file), "--solver", "highs", "--target", "y", "--quiet",
               "--option", "solver=simplex", "--output", str(out_json)])
    capsys.readouterr()
    assert rc == 0
    result = json.loads(out_json.read_text())
    assert result["config"]["solver_options"] == {"solver": "simplex"}
    assert result["termination"] == "certified_optimal"


# --------------------------------------------------------------------------- errors


def _assert_clean_error(capsys, rc, *fragments):
    captured = capsys.readouterr()
    assert rc == 2
    assert captured.err.startswith("aidopt: error:")
    for fragment in fragments:
        assert fragment in captured.err
    assert "Traceback" not in captured.err + captured.out


def test_lad_missing_file(capsys, tmp_path):
    rc = main(["lad", "--data", str(tmp_path / "missing.csv")])
    _assert_clean_error(capsys, rc, "not found", "missing.csv")


def test_lad_unsupported_file(capsys, tmp_path):
    path = tmp_path / "data.xlsx"
    path.write_text("junk")
    rc = main(["lad", "--data", str(path)])
    _assert_clean_error(capsys, rc, "unsupported data file type")


def test_lad_unknown_target(capsys, csv_file):
    rc = main(["lad", "--data", str(csv_file), "--fit-intercept", "--target", "price"])
    _assert_clean_error(capsys, rc, "price")


def test_lad_nan_in_data(capsys, tmp_path):
    path = tmp_path / "nan.csv"
    path.write_text("a,b,y\n1,2,3\n?,1,2\n" + "".join(f"{i},{i % 3},{i}\n" for i in range(20)))
    rc = main(["lad", "--data", str(path), "--quiet"])
    _assert_clean_error(capsys, rc, "NaN")


def test_lad_text_column(capsys, tmp_path):
    path = tmp_path / "text.csv"
    path.write_text("a,city,y\n" + "".join(f"{i},c{i % 2},{i}\n" for i in range(20)))
    rc = main(["lad", "--data", str(path), "--quiet"])
    _assert_clean_error(capsys, rc, "city")


def test_missing_subcommand_is_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2
    assert "usage" in capsys.readouterr().err


# --------------------------------------------------------------------------- subprocess


def _run(args, cwd):
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=cwd, env=env)


def test_subprocess_console_script_lad(tmp_path, csv_file):
    # the console script installed next to this interpreter (not a shell shim), else -m
    exe = Path(sys.executable).parent / "aidopt"
    args = [str(exe)] if exe.exists() else [sys.executable, "-m", "aidopt.cli"]
    out_json = tmp_path / "out.json"
    proc = _run([*args, "lad", "--data", str(csv_file), "--fit-intercept", "--target", "y", "--quiet",
                 "--output", str(out_json)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "certified_optimal" in proc.stdout
    assert "Traceback" not in proc.stderr
    result = json.loads(Path(out_json).read_text())
    assert result["termination"] == "certified_optimal"
    assert len(result["solution"]["beta"]) == M + 1
