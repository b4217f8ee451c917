"""What a new user meets first on the command line: ``--quiet`` on every command, the help texts
(plain text, the demo's solver), missing and empty input files, and ``aidopt solvers``."""

from __future__ import annotations

import importlib.util
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from aidopt.decomposition.aid import HEADER

from aidopt.cli.main import COMMANDS, main

ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- small data files
def _frame_csv(path, X, y, names, target):
    frame = pd.DataFrame(X, columns=names)
    frame[target] = y
    frame.to_csv(path, index=False)
    return path


def _two_classes(n, seed, shift=1.2):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    return rng.normal(size=(n, 2)) + shift * y[:, None], y


def _lad(tmp):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 3))
    y = 1.0 + X @ [2.0, -1.0, 0.5] + rng.laplace(scale=0.1, size=400)
    return ["--data", str(_frame_csv(tmp / "lad.csv", X, y, ["a", "b", "c"], "y"))]


def _svm(tmp):
    X, y = _two_classes(400, 6)
    return ["--data", str(_frame_csv(tmp / "svm.csv", X, y, ["h", "w"], "label"))]


def _s3vm(tmp):
    from aidopt.instances import s3vm_instance

    X, y, _ = s3vm_instance(n=60, n_labeled=6, separation=3.0, seed=2)
    labels = np.where(y == 0, np.nan, y)
    return ["--data", str(_frame_csv(tmp / "ssl.csv", X, labels, ["x0", "x1"], "label")),
            "--norm", "l1", "--solver", "highs", "--transduction", str(tmp / "t.txt")]


def _fsv(tmp):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(200, 5))
    y = np.where(X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=200) > 0, 1, -1)
    return ["--data", str(_frame_csv(tmp / "fsv.csv", X, y, list("abcde"), "label")),
            "--nu", "0.1"]


def _facility(tmp):
    rng = np.random.default_rng(8)
    path = tmp / "costs.csv"
    np.savetxt(path, rng.integers(1, 100, size=(30, 10)), delimiter=",", fmt="%d")
    return ["--costs", str(path), "--p", "3", "--assignments", str(tmp / "a.csv")]


def _aggout(tmp):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    truth = (X[:, 0] - 0.3 * X[:, 1] > 0).astype(int)
    collections = np.arange(80) // 5
    frame = pd.DataFrame(X, columns=["a", "b"])
    frame["collection"] = collections
    frame["count"] = np.bincount(collections, weights=truth).astype(int)[collections]
    frame.to_csv(tmp / "agg.csv", index=False)
    return ["--data", str(tmp / "agg.csv"), "--labels-out", str(tmp / "labels.csv")]


def _gsvm(tmp):
    X, y = _two_classes(60, 9, shift=2.0)
    return ["--data", str(_frame_csv(tmp / "gsvm.csv", X, y, ["a", "b"], "label"))]


def _s2rlsc(tmp):
    X, y = _two_classes(40, 10, shift=2.5)
    labels = np.where(np.arange(40) < 8, y, np.nan)
    return ["--data", str(_frame_csv(tmp / "ssl.csv", X, labels, ["a", "b"], "label")),
            "--restarts", "2", "--transduction", str(tmp / "t.txt")]


def _scm(tmp):
    from aidopt.instances.scm import sine_set

    X, y = sine_set("D2", n_pos=20, n_neg=200, seed=0)
    return ["--data", str(_frame_csv(tmp / "scm.csv", X, y, ["x", "v"], "label")),
            "--kernel", "rbf", "--gamma", "0.5"]


def _demo(tmp):
    return ["--n", "1500", "--m", "3"]


SOLVE_COMMANDS = {"demo": _demo, "lad": _lad, "svm": _svm, "s3vm": _s3vm, "fsv": _fsv,
                  "facility": _facility, "aggout": _aggout, "gsvm": _gsvm, "s2rlsc": _s2rlsc,
                  "scm": _scm}


# --------------------------------------------------------------------------- --quiet
def test_every_solve_command_is_tested_for_quiet():
    assert set(SOLVE_COMMANDS) == set(COMMANDS) - {"solvers", "bench"}


@pytest.mark.parametrize("command", sorted(SOLVE_COMMANDS))
def test_quiet_prints_the_result_line_and_no_blocks(command, tmp_path, capsys):
    """--quiet: one 'result:' line (the run's termination) and the fitted model's own lines;
    no banner, iteration table, termination or certificate block, nor notes of files written."""
    out_json = tmp_path / "result.json"
    code = main([command, *SOLVE_COMMANDS[command](tmp_path), "--quiet",
                 "--output", str(out_json)])
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err
    assert "Traceback" not in captured.err
    lines = captured.out.splitlines()
    results = [line for line in lines if line.startswith("result: ")]
    assert len(results) == 1, captured.out
    termination = json.loads(out_json.read_text())["termination"]
    assert results[0].startswith(f"result: {termination}, "), results[0]
    for block in (HEADER, "termination ", "certificate (", "CERTIFIED", "lower bound",
                  "relative gap  ", "aidopt demo:", "written to", "---"):
        assert block not in captured.out, f"{block!r} printed under --quiet:\n{captured.out}"


def test_quiet_result_line_is_the_run_verdict(tmp_path, capsys):
    """The one line carries the objective, the gap and whether the certificate passed, as the
    result (its JSON) has them."""
    out_json = tmp_path / "r.json"
    assert main(["lad", *_lad(tmp_path), "--quiet", "--output", str(out_json)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("result: "))
    saved = json.loads(out_json.read_text())
    assert f"objective {saved['objective']:.10g}" in line
    assert f"relative gap {saved['gap']:.3e}" in line and "certificate passed" in line


def test_quiet_help_says_what_is_printed(capsys):
    with pytest.raises(SystemExit):
        main(["lad", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--quiet Print the result only: one line 'result:" in text
    assert "Errors and warnings still go to stderr" in text


# --------------------------------------------------------------------------- help texts
def test_demo_help_names_the_solver_demo_runs(capsys):
    from aidopt.api.lad import DEFAULT_SOLVER

    assert f"{DEFAULT_SOLVER}, unless --solver" in COMMANDS["demo"]
    assert "HiGHS" not in COMMANDS["demo"]
    with pytest.raises(SystemExit):
        main(["--help"])
    assert f"{DEFAULT_SOLVER}, unless --solver" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_has_no_latex_or_rest_markup(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert text.strip()
    assert not re.findall(r"\\[A-Za-z|{}]", text), re.findall(r".{30}\\[A-Za-z|{}].{30}", text)
    assert ":math:" not in text and "``" not in text and "**" not in text


@pytest.mark.parametrize("latex, plain", [
    (r"\min C s'y + \frac12 (w'w + \gamma^2)", "min C s'y + 1/2 (w'w + gamma^2)"),
    (r":math:`\lceil r_0 |\mathcal D^-_t| \rceil` with ``r0``", "ceil(r_0 |D^-_t|) with r0"),
    (r"c'x^j = c'x^{j-\tau}", "c'x^j = c'x^(j-tau)"),
    (r":math:`\arg\min_{i \in \pi_c} K_{ii} - 2\sum_{j \in \pi_c} K_{ij}`",
     "argmin_(i in pi_c) K_ii - 2 sum_(j in pi_c) K_ij"),
    (r"RBF \exp(-\|a - b\|^2/(2\sigma^2))", "RBF exp(-||a - b||^2/(2 sigma^2))"),
    (r"**not** the *modified* SVM, :math:`f \le 0`, :func:`~aidopt.solve_lad`",
     "not the modified SVM, f <= 0, aidopt.solve_lad"),
    (r"w^\top x, \frac{1}{n} \sqrt{m}, 2 * n * m", "w' x, 1/n sqrt(m), 2 * n * m"),
    ('solver_options={"omega": w}, \\{0, 1\\}', 'solver_options={"omega": w}, {0, 1}'),
])
def test_plain_text_renders_the_common_latex(latex, plain):
    from aidopt.api._params import plain_text

    assert plain_text(latex) == plain


def test_the_api_docstrings_keep_their_math():
    import aidopt

    assert r"\lceil" in aidopt.solve_scm.__doc__ and r"\frac12" in aidopt.solve_svm.__doc__


# --------------------------------------------------------------------------- input files
MISSING = [
    ("facility", ["--tsplib", "{tmp}/absent.tsp", "--p", "2"]),
    ("facility", ["--costs", "{tmp}/absent.csv", "--p", "2"]),
    ("facility", ["--coords", "{tmp}/absent.csv", "--p", "2"]),
    ("facility", ["--customers", "{tmp}/absent.csv", "--sites", "{good}", "--p", "2"]),
    ("facility", ["--customers", "{good}", "--sites", "{tmp}/absent.csv", "--p", "2"]),
    ("facility", ["--graph", "{tmp}/absent.csv", "--p", "2"]),
    ("facility", ["--orlib", "{tmp}/absent.txt"]),
    ("facility", ["--coords", "{good}", "--demand", "{tmp}/absent.csv", "--p", "2"]),
    ("facility", ["--coords", "{good}", "--fixed-costs", "{tmp}/absent.csv"]),
    ("aggout", ["--data", "{tmp}/absent.csv"]),
    ("lad", ["--data", "{tmp}/absent.csv"]),
    ("svm", ["--data", "{tmp}/absent.csv"]),
    ("s3vm", ["--data", "{tmp}/absent.csv"]),
    ("fsv", ["--data", "{tmp}/absent.csv"]),
    ("gsvm", ["--data", "{tmp}/absent.csv"]),
    ("s2rlsc", ["--data", "{tmp}/absent.csv"]),
    ("scm", ["--data", "{tmp}/absent.csv"]),
    ("scm", ["--data", "{good}", "--validation", "{tmp}/absent.csv"]),
    ("lad", ["--data", "{tmp}/absent.npy", "--engine", "dask", "--target", "{npy}"]),
    ("lad", ["--data", "{npy}", "--engine", "dask", "--target", "{tmp}/absent.npy"]),
]


@pytest.mark.parametrize("command, argv", MISSING, ids=lambda v: v if isinstance(v, str) else v[0])
def test_a_missing_file_says_file_not_found_and_nothing_else(command, argv, tmp_path, capsys):
    good = tmp_path / "xy.csv"
    np.savetxt(good, np.random.default_rng(0).random((5, 2)), delimiter=",")
    npy = tmp_path / "X.npy"
    np.save(npy, np.zeros((5, 2)))
    args = [a.format(tmp=tmp_path, good=good, npy=npy) for a in argv]
    code = main([command, *args])
    err = capsys.readouterr().err
    missing = next(a for a in args if Path(a).name.startswith("absent"))
    assert code == 2 and err.startswith("aidopt: error:")
    assert re.search(f"(file|data store) not found: {re.escape(missing)}", err), err
    assert "apt-get" not in err and "Errno" not in err and "Traceback" not in err


def test_a_named_tsplib_set_that_is_not_installed_says_where_it_comes_from(monkeypatch):
    from aidopt.instances import facility

    monkeypatch.setitem(facility.TSPLIB_PATHS, "d493", ["/nonexistent/d493.tsp"])
    with pytest.raises(FileNotFoundError, match="r-cran-tsp"):
        facility.tsplib_path("d493")
    for name, read in [("berlin52", facility.tsplib_path), ("absent/x.tsp", facility.tsplib_path),
                       ("pmed99", facility.orlib_pmed), ("absent.txt", facility.orlib_pmed)]:
        with pytest.raises(facility.InstanceNotFoundError, match="not found|unknown") as err:
            read(name)  # both exception types it was before, for callers that catch either
        assert isinstance(err.value, FileNotFoundError) and isinstance(err.value, ValueError)


EMPTY = [
    ("--costs", "", []),
    ("--costs", "a,b\n", ["--header"]),
    ("--costs", "\n\n", []),
    ("--coords", "", []),
    ("--graph", "", []),
    ("--demand", "", ["--orlib", "pmed1"]),
]


@pytest.mark.parametrize("flag, content, extra", EMPTY)
def test_an_empty_input_file_is_refused_without_a_warning(flag, content, extra, tmp_path, capsys):
    path = tmp_path / "empty.csv"
    path.write_text(content)
    argv = ["facility", flag, str(path), *extra] + ([] if "--orlib" in extra else ["--p", "2"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and f"{flag} {path}: the file has no data" in err, err
    assert not caught, [str(w.message) for w in caught]


def test_text_in_a_cost_file_suggests_header(tmp_path, capsys):
    path = tmp_path / "costs.csv"
    path.write_text("a,b\n1,2\n3,4\n")
    assert main(["facility", "--costs", str(path), "--p", "1"]) == 2
    err = capsys.readouterr().err
    assert f"--costs {path}:" in err and "pass --header" in err


def test_a_map_without_coordinates_is_refused_before_the_solve(tmp_path, monkeypatch, capsys):
    import aidopt.api.facility

    def solve(*args, **kwargs):
        raise AssertionError("solved before --map was checked")

    monkeypatch.setattr(aidopt.api.facility, "solve_facility_location", solve)
    argv = _facility(tmp_path)
    assert main(["facility", *argv, "--map", str(tmp_path / "m.png")]) == 2
    assert "--map needs coordinate data" in capsys.readouterr().err


def test_an_empty_aggout_file_says_so(tmp_path, capsys):
    path = tmp_path / "agg.csv"
    path.write_text("")
    assert main(["aggout", "--data", str(path)]) == 2
    assert f"data file {path} is empty" in capsys.readouterr().err


def test_the_docs_tsplib_examples_use_shipped_sets():
    from aidopt.instances.facility import tsplib_path

    names = set()
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        if page.name != "benchmarks.md":  # measurements, with the instances they were made on
            names |= set(re.findall(r"--tsplib (\S+?)[`\s]", page.read_text()))
    assert names, "no --tsplib example found"
    for name in names:
        assert tsplib_path(name).exists(), name


# --------------------------------------------------------------------------- aidopt solvers
def test_solvers_lists_the_native_methods(capsys):
    from aidopt.solvers import NATIVE_METHODS, SOLVERS

    assert main(["solvers"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert set(SOLVERS) | set(NATIVE_METHODS) == set(rows)
    for name, spec in NATIVE_METHODS.items():
        installed = importlib.util.find_spec(spec.module) is not None
        assert rows[name].split()[2] == str(installed), rows[name]
        assert spec.notes in rows[name]
    assert "LAD" in NATIVE_METHODS["fn"].notes and "kernel SVM" in NATIVE_METHODS["smo"].notes


def test_solver_table_keeps_its_rows_without_native():
    from aidopt.solvers import SOLVERS, solver_table

    assert [r["name"] for r in solver_table()] == list(SOLVERS)
    with pytest.raises(TypeError, match="native"):
        solver_table(native="yes")
