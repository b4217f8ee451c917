"""The exactness study's bookkeeping: F* is the best of the MIQP and the searches (the MIQP is
optimal only within its proven gap), and a run finds the optimum within that gap."""

from __future__ import annotations

import pytest

from aidopt.bench.s2rlsc import _excess


def test_a_search_below_the_miqp_within_its_gap_is_not_clipped():
    F_mip, gap = 1.0, 1e-6  # proven: the optimum is in [1 - 1e-6, 1]
    excess, found = _excess(F_mip, {"a": 1.0 - 5e-7, "b": 1.0, "c": 1.0 + 3e-7, "d": 1.01}, gap)
    assert excess["a"] == 0.0 and excess["b"] == pytest.approx(5e-7 / (1 - 5e-7))
    assert excess["d"] == pytest.approx(0.0100005, rel=1e-6)
    assert found == {"a": True, "b": True, "c": True, "d": False}


def test_found_needs_at_least_1e_9_and_ignores_a_missing_gap():
    excess, found = _excess(0.5, {"a": 0.5 + 5e-10, "b": 0.5 + 1e-8}, float("nan"))
    assert found == {"a": True, "b": False}
    assert excess["b"] == pytest.approx(2e-8)


def test_ceiling_on_one_split_with_a_small_grid(monkeypatch, tmp_path):
    """The ceiling table's columns come from working models: on Gaussian2C (Bayes error 0.6 %)
    every column is far below chance (a flipped sign or a mixed-up row order would give ~50 %
    or more), and the table is written."""
    from aidopt.bench import s2rlsc as b

    monkeypatch.setattr(b, "GRID_LAM", (0.25, 1.0))
    monkeypatch.setattr(b, "GRID_LAM_PRIME", (1.0,))
    out = b.ceiling(("gaussian2c-50",), 1, output=tmp_path / "t.md")["gaussian2c-50"]
    assert set(out) == {"mean", "true", "s2rlsc", "transductive"}
    assert all(0.0 <= v < 15.0 for v in out.values()), out
    assert "| gaussian2c-50 |" in (tmp_path / "t.md").read_text()
