"""`aidopt bench sparse` on tiny instances: the svmlight files, the workers against independent
solves, the table, and the whole command through its subprocesses (timings are not asserted)."""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pytest
from scipy import sparse

from aidopt.bench import sparse as bench
from aidopt.cli.main import main

#: n m > 10^6 and a few % of the entries stored: the doors' sparse paths, not AID
N, M = 2000, 600


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    where = tmp_path_factory.mktemp("bench-sparse")
    return {(problem, spec): bench.write_instance(problem, spec, N, M, 0, where)
            for problem in ("svm", "lad") for spec in ("text:10", "onehot:4")}


@pytest.mark.parametrize("problem", ["svm", "lad"])
def test_the_file_holds_the_instance(files, problem):
    """What the workers read back (scikit-learn's reader) and what `aidopt svm --data` reads
    (aidopt's) are the generated instance, to the 16 digits the file keeps."""
    from sklearn.datasets import load_svmlight_file

    from aidopt.data.validate import read_svmlight

    X, y = bench.instance(problem, "text:10", N, M, 0)
    path = files[problem, "text:10"]
    X1, y1 = load_svmlight_file(str(path), n_features=M, zero_based=False)
    X2, y2 = read_svmlight(path, sparse=True)
    assert sparse.isspmatrix_csr(X2) and X1.shape == X.shape and X2.shape[1] <= M
    for Xr, yr in ((X1, y1), (X2, y2)):
        Xr = sparse.csr_matrix(Xr, shape=X.shape)
        assert abs(Xr - X).max() <= 1e-15 * abs(X).max()
        np.testing.assert_allclose(yr, y, rtol=1e-15)
    assert bench.instance("lad", "onehot:4", N, M, 0)[0][:, 0].toarray().ravel().tolist() == [1.0] * N


@pytest.mark.parametrize("spec", ["text:10", "onehot:4"])
def test_svm_workers_agree_with_the_baselines(files, spec):
    """The 2-norm SVM by dcd and the 1-norm SVM by the LP from CSR (the sparse paths), each
    certified, against LIBLINEAR (another problem: it regularizes the offset, and stops at its
    tol 1e-4) and against HiGHS on an LP built independently from the CSR matrix."""
    path = files["svm", spec]
    aid = bench.worker("aidopt", "svm", path, M, C=1.0)
    assert aid["method"] == "dcd" and aid["certified"] and aid["gap"] <= 1e-6
    lib = bench.worker("liblinear", "svm", path, M, C=1.0)
    assert lib["objective"] >= aid["objective"] * (1 - 1e-6)  # aidopt is certified optimal
    assert lib["objective"] == pytest.approx(aid["objective"], rel=1e-3)
    l1 = bench.worker("aidopt", "l1", path, M, C=1.0)
    assert l1["method"] == "LP from CSR, highs" and l1["certified"]
    lp = bench.worker("highs-lp", "l1", path, M, C=1.0)
    assert lp["termination"] == "Optimal" and lp["objective"] == pytest.approx(l1["objective"], rel=1e-7)
    assert aid["nnz"] == lib["nnz"] and aid["peak_how"] == "VmHWM" and aid["peak_over_X"] >= 0


@pytest.mark.parametrize("spec", ["text:10", "onehot:4"])
def test_lad_worker_agrees_with_an_independent_lp(files, spec):
    """LAD by sparse Frisch-Newton (the door's choice for tall sparse X) against SciPy's
    linprog on the primal LP built here from the file's rows."""
    from scipy.optimize import linprog
    from sklearn.datasets import load_svmlight_file

    path = files["lad", spec]
    aid = bench.worker("aidopt", "lad", path, M)
    assert aid["method"] == "FN, sparse normal equations" and aid["certified"]
    X, y = load_svmlight_file(str(path), n_features=M, zero_based=False)
    A = sparse.hstack([X, sparse.eye(N), -sparse.eye(N)], format="csc")
    lp = linprog(np.r_[np.zeros(M), np.ones(2 * N)], A_eq=A, b_eq=y,
                 bounds=[(None, None)] * M + [(0, None)] * (2 * N), method="highs")
    assert lp.status == 0 and aid["objective"] == pytest.approx(lp.fun, rel=1e-7)


def test_the_cli_reads_the_bench_file_as_a_user_would(files, tmp_path, capsys):
    """`aidopt svm --data file.svm` (aidopt's own svmlight reader) reaches the worker's
    certified objective on the same file."""
    path = files["svm", "text:10"]
    aid = bench.worker("aidopt", "svm", path, M, C=1.0)
    out = tmp_path / "r.json"
    assert main(["svm", "--data", str(path), "--C", "1", "--quiet", "--output", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["termination"] == "certified_optimal"
    assert result["objective"] == pytest.approx(aid["objective"], rel=1e-6)


def test_the_table_and_its_verdicts():
    aid = {"n": 10, "m": 5, "nnz": 20, "method": "dcd", "seconds": 2.0, "certified": True,
           "gap": 3e-7, "termination": "certified_optimal", "objective": 10.0, "peak_over_X": 4.0}
    base = {"n": 10, "m": 5, "nnz": 20, "seconds": 3.0, "termination": "done", "objective": 10.5,
            "peak_over_X": 2.5}
    row = bench.row("svm", "text:40", aid, base)
    assert row == ("| 2-norm SVM | text:40 | 10 | 5 | 20 | dcd | 2.00 | certified, gap 3.0e-07 | "
                   "LIBLINEAR | 3.00 | 1.50 | 5.0e-02 | 4.00, 2.50 |")
    late = {**aid, "certified": False, "termination": "time_limit", "gap": float("inf")}
    assert "| not certified (time_limit), no gap |" in bench.row("l1", "onehot", late, base)
    skipped = bench.row("lad", "text", aid, {"skipped": "Rscript not installed"})
    assert "| quantreg rq.fit.sfn | Rscript not installed | | | 4.00, — |" in skipped
    failed = bench.row("lad", "text", {"skipped": "x"}, base)
    assert all(r.count("|") == 14 for r in (row, skipped, failed))  # 13 columns, as the header


def test_fit_peak_sees_what_the_fit_allocates():
    peak = bench.FitPeak()
    block = np.ones(40 * 2**20 // 8)  # 40 MiB, touched
    assert peak.mb() >= 35
    del block


def test_bad_requests_are_refused_before_anything_runs(tmp_path, capsys):
    with pytest.raises(ValueError, match="unknown generator"):
        bench.check_sets(["text", "words"])
    with pytest.raises(ValueError, match="methods are aidopt and liblinear"):
        bench.worker("highs-lp", "svm", tmp_path / "none.svm", 3)
    assert main(["bench", "sparse", "--sets", "words", "--workdir", str(tmp_path / "w")]) == 2
    assert main(["bench", "sparse", "--sizes", "300", "--workdir", str(tmp_path / "w")]) == 2
    assert not (tmp_path / "w").exists() or not any((tmp_path / "w").iterdir())
    with pytest.raises(SystemExit) as exc:  # argparse's choices
        main(["bench", "sparse", "--problems", "qp"])
    assert exc.value.code == 2


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("Rscript") is None, reason="R quantreg not installed")
def test_bench_sparse_end_to_end(tmp_path, capsys):
    """The command as the lead runs it: the file written to --workdir, aidopt and quantreg sfn
    each in a subprocess, the table with the environment and the verdict."""
    out, work = tmp_path / "t.md", tmp_path / "work"
    assert main(["bench", "sparse", "--sizes", f"{N}x{M}", "--sets", "text:10", "--problems", "lad",
                 "--workdir", str(work), "--time-limit", "120", "--output", str(out)]) == 0
    text = out.read_text()
    assert "Environment:" in text and "quantreg 5." in text and "scikit-learn" in text
    assert (work / f"text10-regression-{N}x{M}-seed0.svm").exists()
    lines = text.splitlines()
    head = next(line for line in lines if line.startswith("| problem |"))
    (row,) = [line for line in lines if line.startswith("| LAD |")]
    assert head.count("|") == row.count("|") == 14
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:6] == ["LAD", "text:10", str(N), str(M), cells[4], "FN, sparse normal equations"]
    assert cells[7].startswith("certified, gap") and cells[8] == "quantreg rq.fit.sfn"
    assert abs(float(cells[11])) < 1e-6  # Δ: sfn reached aidopt's certified optimum
    assert re.fullmatch(r"\d+\.\d\d, \d+\.\d\d", cells[12])
