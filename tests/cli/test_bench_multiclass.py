"""`aidopt bench multiclass`: the covertype-like generator (frozen: the set of docs/multiclass.md),
the split, the workers on small data, the rows, the time limit and the command (timings are not
asserted)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from aidopt.instances.covertype import COVERTYPE_SHARES, covertype_like

from aidopt.bench import multiclass as bench
from aidopt.cli.main import main


def test_covertype_like_is_the_measured_set():
    """71,429 rows, seed 0: the set measured in docs/multiclass.md (the numbers were recorded
    from the script that made it, before it moved into aidopt.instances)."""
    X, y = covertype_like(71_429, seed=0)
    assert X.shape == (71_429, 54) and y.dtype.kind == "i"
    assert np.bincount(y).tolist() == [25829, 35175, 4378, 335, 1119, 2081, 2512]
    np.testing.assert_allclose(X[0, :3], [0.477679007739, 0.883377996191, -1.166357941432],
                               atol=1e-12)
    assert X[:, 10:14].sum(axis=0).tolist() == [17878.0, 12323.0, 29093.0, 12135.0]
    assert X[:, 14:19].sum(axis=0).tolist() == [513.0, 1140.0, 4150.0, 3524.0, 1670.0]
    assert float(X[:, :10].sum()) == pytest.approx(-34293.16615371665, rel=1e-12)
    # one category per block and row, the shares close to covertype's
    np.testing.assert_array_equal(X[:, 10:14].sum(axis=1), 1.0)
    np.testing.assert_array_equal(X[:, 14:].sum(axis=1), 1.0)
    shares = np.asarray(COVERTYPE_SHARES) / sum(COVERTYPE_SHARES)
    np.testing.assert_allclose(np.bincount(y) / len(y), shares, atol=0.005)


def test_covertype_like_is_seeded_and_blockwise_exact(monkeypatch):
    a = covertype_like(3000, seed=4)
    np.testing.assert_array_equal(a[0], covertype_like(3000, seed=4)[0])
    assert not np.array_equal(a[0], covertype_like(3000, seed=5)[0])
    import instances.covertype as module

    monkeypatch.setattr(module, "_BLOCK", 7)  # many blocks: the same one-hot columns
    np.testing.assert_array_equal(module.covertype_like(3000, seed=4)[0], a[0])
    for bad in (0, -3, 2.5, True, "10"):
        with pytest.raises(ValueError, match="n must be"):
            covertype_like(bad)
    with pytest.raises(TypeError, match="seed"):
        covertype_like(10, seed=1.5)


def test_total_rows_leave_the_training_rows():
    from sklearn.model_selection import train_test_split

    for n in (2, 50_000, 500_000, 1234):
        N = bench.total_rows(n)
        assert N - math.ceil(0.3 * N) == n
        assert (N - 1) - math.ceil(0.3 * (N - 1)) < n  # the smallest such N
    assert bench.total_rows(50_000) == 71_429  # the measured set
    train, _ = train_test_split(np.arange(bench.total_rows(1234)), test_size=0.3, random_state=0)
    assert len(train) == 1234
    with pytest.raises(ValueError, match="training rows"):
        bench.total_rows(1)


@pytest.mark.filterwarnings("ignore:Liblinear failed to converge")
def test_workers_on_small_data_and_the_rows():
    aid = bench.worker("covertype", 600, "aidopt", 0, 60.0)
    assert aid["n"] == 600 and aid["m"] == 54 and aid["k"] == 7
    assert aid["certified"] and aid["certified_subproblems"] == aid["subproblems"] == 7
    liblinear = bench.worker("covertype", 600, "liblinear-hinge", 0, 60.0)
    assert liblinear["max_iter"] == 1000 and isinstance(liblinear["converged"], bool)
    # the same split and standardization: LinearSVC refitted here scores the same
    from sklearn.svm import LinearSVC

    Xa, Xb, ya, yb = bench.data("covertype", 600, 0)
    assert Xa.shape == (600, 54) and abs(Xa.mean(axis=0)).max() < 1e-12
    again = LinearSVC(loss="hinge", C=1.0, random_state=0).fit(Xa, ya)
    assert again.score(Xb, yb) == pytest.approx(liblinear["test_accuracy"])
    row = bench._row(liblinear, aid, "covertype", "liblinear-hinge")
    assert row.startswith("| covertype | 600 | 54 | 7 | liblinear-hinge |") and row.count("|") == 11
    gap = 100 * (liblinear["test_accuracy"] - aid["test_accuracy"])
    assert f"{gap:+.2f}" in row
    assert bench.status(aid) == "all 7 certified"
    assert bench.status({**aid, "certified_subproblems": 5}) == "5 of 7 certified"
    assert bench.status({"method": "liblinear-hinge", "converged": False, "max_iter": 1000}) == (
        "iteration limit (1,000)")
    assert bench.status({"method": "liblinear-squared", "converged": True}) == (
        "converged (another loss)")
    with pytest.raises(ValueError, match="unknown multiclass bench method"):
        bench.estimator("aidopt-fast", "digits", 1.0, 10.0)
    with pytest.raises(ValueError, match="unknown multiclass set"):
        bench.data("iris")


def test_a_worker_past_its_time_limit_is_stopped(monkeypatch):
    monkeypatch.setattr(bench, "GRACE", 0.0)
    out = bench._run("digits", None, "liblinear-hinge", 0, 0.2, 1.0)
    assert out["skipped"] == "time limit (0.2 s, stopped)"
    assert "time limit (0.2 s, stopped)" in bench._row(out, None, "digits", "liblinear-hinge")


def test_the_command_runs_aidopt_first_and_writes_the_table(monkeypatch, tmp_path, capsys):
    calls = []

    def fake(name, n, method, seed, time_limit, C):
        calls.append((name, n, method, C))
        certified = {"certified": True, "subproblems": 7, "certified_subproblems": 7}
        return {"method": method, "n": n or 1257, "m": 54, "k": 7, "test_accuracy": 0.75,
                "seconds": 2.0 if method == "aidopt" else 4.0,
                **(certified if method.startswith("aidopt") else
                   {"converged": True, "max_iter": 1000})}

    monkeypatch.setattr(bench, "_run", fake)
    out = tmp_path / "mc.md"
    assert main(["bench", "multiclass", "--sets", "covertype", "--sizes", "1000", "2000",
                 "--baselines", "liblinear-squared", "--output", str(out)]) == 0
    assert calls == [("covertype", 1000, "aidopt", 1.0), ("covertype", 1000, "liblinear-squared", 1.0),
                     ("covertype", 2000, "aidopt", 1.0), ("covertype", 2000, "liblinear-squared", 1.0)]
    text = out.read_text()
    assert "| covertype | 1,000 | 54 | 7 | liblinear-squared | 4.00 | 75.00 % | +0.00 | converged " \
           "(another loss) | 2.00 |" in text
    # asked only for the baseline: aidopt ran as the reference and has its row
    assert "| covertype | 2,000 | 54 | 7 | aidopt | 2.00 | 75.00 % | +0.00 | all 7 certified | 1.00 |" \
        in text
    assert main(["bench", "multiclass", "--baselines", "nope"]) == 2
    assert main(["bench", "multiclass", "--sizes", "10x3"]) == 2
    assert "bench multiclass --sizes" in capsys.readouterr().err
