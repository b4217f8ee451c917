"""`aidopt bench inference`: the sets, the aidopt worker, the R worker against it (skipped
without Rscript), the agreement column and the command (timings are not asserted)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from aidopt.instances import lad_instance

from aidopt.bench import inference as bench
from aidopt.cli.main import main
from aidopt.numerics import rq


def test_the_sets():
    X, y = bench.instance("B", 500, 4, 3)
    X0, y0 = lad_instance("B", n=500, m=4, seed=3)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    Xh, yh = bench.instance("hetero", 20_000, 7, 3)
    np.testing.assert_array_equal(Xh, lad_instance("B", n=20_000, m=7, seed=3)[0])
    beta = np.random.default_rng(4).uniform(-1, 1, size=7)
    scale = 1 + 0.1 * Xh[:, 1:6].sum(axis=1)
    noise = (yh - Xh @ beta) / scale  # t(3): its spread does not grow with the scale
    low, high = scale < np.median(scale), scale >= np.median(scale)
    assert np.median(np.abs(noise[low])) == pytest.approx(np.median(np.abs(noise[high])), rel=0.1)
    assert np.median(np.abs((yh - Xh @ beta)[high])) > 1.3 * np.median(np.abs((yh - Xh @ beta)[low]))
    with pytest.raises(ValueError, match="unknown inference bench set"):
        bench.instance("C", 100, 3, 0)


def test_the_aidopt_worker():
    out = bench.worker("aidopt", "hetero", 3000, 4, 0.5, "nid", 200, 0, 60.0)
    assert out["certified"] and out["vertices"] == 2 and len(out["std_error"]) == 4
    assert out["bandwidth"] == pytest.approx(rq.hall_sheather(0.5, 3000), rel=1e-15)
    boot = bench.worker("aidopt", "B", 400, 3, 0.5, "boot", 5, 0, 60.0)
    assert len(boot["std_error"]) == 3 and boot["bandwidth"] is None


@pytest.mark.slow  # R starts in ~1 s of CPU, several seconds of wall time on a shared machine
@pytest.mark.skipif(shutil.which("Rscript") is None, reason="R quantreg is not installed")
def test_the_r_worker_agrees_on_nid():
    ours = bench.worker("aidopt", "hetero", 1200, 3, 0.25, "nid", 200, 0, 60.0)
    theirs = bench.worker("quantreg", "hetero", 1200, 3, 0.25, "nid", 200, 0, 120.0)
    if "skipped" in theirs:
        pytest.skip(theirs["skipped"])
    assert theirs["bandwidth"] == pytest.approx(ours["bandwidth"], rel=1e-14)
    np.testing.assert_allclose(ours["std_error"], theirs["std_error"], rtol=1e-6)
    assert "(meets 1e-6)" in bench.compare("nid", ours, theirs, 200)


def test_the_agreement_column():
    ours = {"std_error": [1.0, 2.0], "bandwidth": 0.1}
    assert bench.compare("nid", ours, {"std_error": [1.0, 2.0 * (1 + 2e-6)], "bandwidth": 0.1},
                         200).endswith("(exceeds 1e-6)")
    assert bench.compare("nid", ours, {"std_error": [1.0, 2.0], "bandwidth": 0.1},
                         200) == "max rel. SE diff 0.00e+00 (meets 1e-6)"
    assert "bandwidths differ" in bench.compare("nid", ours, {"std_error": [1.0, 2.0],
                                                              "bandwidth": 0.2}, 200)
    assert bench.boot_sigma(200) == pytest.approx(np.sqrt(1 / 199))
    bound = 3 * bench.boot_sigma(200)
    text = bench.compare("boot", ours, {"std_error": [1.0 / (1 + 0.9 * bound),
                                                      2.0 / (1 + 1.1 * bound)]}, 200)
    assert text == (f"1 of 2 SE ratios within |ratio - 1| <= {bound:.3f}: "
                    f"{1 + 0.9 * bound:.3f} {1 + 1.1 * bound:.3f}")


def test_the_command_writes_the_table(monkeypatch, tmp_path, capsys):
    calls = []

    def fake(side, name, n, m, tau, kind, B, seed, time_limit):
        calls.append((side, name, n, m, tau, kind, B))
        return {"seconds": 1.0 if side == "aidopt" else 4.0, "std_error": [0.1, 0.2],
                "bandwidth": 0.05 if kind == "nid" else None}

    monkeypatch.setattr(bench, "_run", fake)
    monkeypatch.setattr(bench, "_r_version", lambda: "R (test)")
    out = tmp_path / "inf.md"
    assert main(["bench", "inference", "--sets", "hetero", "--sizes", "5000x4", "--quantile",
                 "0.25", "--replicates", "50", "--output", str(out)]) == 0
    assert [c[0] for c in calls] == ["aidopt", "quantreg", "aidopt", "quantreg"]
    assert calls[0] == ("aidopt", "hetero", 5000, 4, 0.25, "nid", 50)
    text = out.read_text()
    assert ("| hetero | 5000 | 4 | 0.25 | nid | 1.00 | 4.00 | 0.25 | 0.05, 0.05 | max rel. SE diff "
            "0.00e+00 (meets 1e-6) |") in text
    assert ("| hetero | 5000 | 4 | 0.25 | boot (B = 50) | 1.00 | 4.00 | 0.25 |  | 2 of 2 SE ratios "
            "within") in text
    assert main(["bench", "inference", "--sets", "A"]) == 2
    assert main(["bench", "inference", "--quantile", "1.5"]) == 2
    assert main(["bench", "inference", "--replicates", "1"]) == 2
    assert "B must be" in capsys.readouterr().err
