"""`aidopt bench quantiles` machinery on a tiny instance (timings are not asserted, only the
objectives' agreement and the table)."""

import shutil

import numpy as np
import pytest

from aidopt.bench import quantiles as bench
from aidopt.cli.main import main

LEVELS = (0.25, 0.5, 0.9)


def test_workers_agree_on_every_level():
    sequence = bench.worker("sequence", 1000, 4, "B-het", 1, 60.0, LEVELS)["levels"]
    assert [lv["tau"] for lv in sequence] == list(LEVELS)
    assert all(lv["certified"] and lv["cpu"] >= 0 and lv["wall"] > 0 for lv in sequence)
    single = bench.worker("single", 1000, 4, "B-het", 1, 60.0, LEVELS[1:2])["levels"]
    assert single[0]["certified"]
    assert single[0]["objective"] == pytest.approx(sequence[1]["objective"], rel=1e-6)


@pytest.mark.slow  # R and quantreg take seconds to start
@pytest.mark.skipif(shutil.which("Rscript") is None, reason="R quantreg not installed")
def test_quantreg_workers_agree_with_the_certified_sequence():
    sequence = bench.worker("sequence", 1000, 4, "B", 2, 60.0, LEVELS)["levels"]
    out = bench.worker("pfn", 1000, 4, "B", 2, 60.0, LEVELS)
    if "skipped" in out:
        pytest.skip(out["skipped"])
    for a, b in zip(sequence, out["levels"], strict=True):
        assert b["cpu"] >= 0 and b["wall"] >= 0 and b["certified"] is None
        assert b["objective"] >= a["objective"] * (1 - 1e-6)  # aidopt's are certified
        assert b["objective"] == pytest.approx(a["objective"], rel=1e-6)


def test_the_heteroscedastic_set_keeps_x_and_changes_the_errors():
    X, y = bench.instance("B", 400, 7, 3)
    Xh, yh = bench.instance("B-het", 400, 7, 3)
    np.testing.assert_array_equal(X, Xh)
    assert not np.allclose(y, yh)
    with pytest.raises(ValueError, match="unknown quantiles instance set"):
        bench.instance("A", 400, 7, 3)


def fake(objectives, cpu, certified=None):
    return {"levels": [{"tau": t, "wall": 2 * c, "cpu": c, "objective": o,
                        "certified": certified, "termination": "certified_optimal"}
                       for t, o, c in zip(LEVELS, objectives, cpu, strict=True)]}


def test_the_table_compares_against_the_faster_quantreg_method_per_level():
    results = {"sequence": fake([10.0, 20.0, 30.0], [1.0, 1.0, 1.0], certified=True),
               "fn": fake([10.0, 20.0, 30.0 + 3e-5], [2.0, 8.0, 2.0]),
               "pfn": fake([10.0, 20.0 + 1e-6, 30.0], [4.0, 4.0, 4.0])}
    ref = bench.reference(results)
    assert ref["objective"] == [10.0, 20.0, 30.0] and ref["cpu"] == 2.0 + 4.0 + 2.0
    row = bench.row("B", 100, 4, "sequence", results["sequence"], ref)
    assert row.startswith("| B | 100 | 4 | sequence | 6.00 | 3.00 |") and "| yes |" in row
    assert row.endswith("| 0.0e+00 | yes | 0.38 | 0.38 |")
    assert "| 1.0e-06 |" in bench.row("B", 100, 4, "fn", results["fn"], ref)
    table = bench.bench_quantiles(sizes=[(100, 4)], sets=["B"], levels=LEVELS,
                                  methods=["sequence", "fn", "pfn"],
                                  run=lambda method, n, m, s: results[method])
    assert table.count("\n| B | 100 | 4 |") == 3
    skipped = bench.row("B", 100, 4, "br", {"skipped": "br (simplex) only up to n = 20000"}, ref)
    assert "only up to" in skipped and skipped.count("|") == 12


def test_bad_requests_are_refused_before_any_run(capsys):
    def never(*args):
        raise AssertionError("ran")

    for kwargs, words in [({"levels": (0.5, 0.25)}, "increasing"), ({"levels": (0.0,)}, "in (0, 1)"),
                          ({"methods": ["rq"]}, "unknown quantiles bench method"),
                          ({"sets": ["C"]}, "unknown quantiles instance set")]:
        with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
            bench.bench_quantiles(run=never, **kwargs)
    assert main(["bench", "quantiles", "--sizes", "100x3", "--methods", "lad"]) != 0
    assert "unknown quantiles bench method" in capsys.readouterr().err
