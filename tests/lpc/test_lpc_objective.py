"""LPC reaches the full LP's optimum (1e-7 relative) and certifies it, on seeded LPs."""

from __future__ import annotations

import numpy as np
import pytest

from aidopt.api.lpc import solve_lp_chunked

from ._lps import boxed_lp, cone_lp, full_lp, vertex_lp

CASES = (
    [pytest.param("vertex", s, {}, id=f"vertex-{s}") for s in range(6)]
    + [pytest.param("vertex", s, {"extra_tight": 10}, id=f"degenerate-{s}") for s in range(4)]
    + [pytest.param("vertex", s, {"extra_tight": 4, "duplicates": 6}, id=f"duplicates-{s}")
       for s in range(3)]
    + [pytest.param("cone", s, {}, id=f"cone-{s}") for s in range(5)]
    + [pytest.param("boxed", s, {}, id=f"boxed-{s}") for s in range(4)]
)


def _lp(kind, seed, kwargs):
    if kind == "vertex":
        return (*vertex_lp(seed, **kwargs), None)
    if kind == "cone":
        return (*cone_lp(seed), None)
    return boxed_lp(seed)


@pytest.mark.parametrize("kind,seed,kwargs", CASES)
def test_lpc_equals_full_lp(kind, seed, kwargs):
    c, H, b, bounds = _lp(kind, seed, kwargs)
    ref = full_lp(c, H, b, bounds)
    res = solve_lp_chunked(c, H, b, bounds=bounds, chunks=8, tau=4, log=False)
    assert res.termination == "certified_optimal", res.message
    assert res.certified
    assert abs(res.objective - ref) <= 1e-7 * max(1.0, abs(ref))
    cert = res.certificate
    assert cert.residuals["max row violation"] <= 1e-6
    assert cert.dual_objective <= ref + 1e-7 * max(1.0, abs(ref))
    # every block was loaded: rows from all over the data were needed
    assert res.dimensions["max_rows_in_lp"] < len(b)


def test_optimum_needs_rows_from_every_block():
    """n = 8 tight rows, one in each of 8 blocks: the kept rows at the end come from all."""
    c, H, b = vertex_lp(11, m=800, n=8)
    res = solve_lp_chunked(c, H, b, chunks=8, log=False)
    assert res.certified
    assert abs(res.objective - full_lp(c, H, b)) <= 1e-7 * max(1.0, abs(res.objective))
    blocks = {int(r) * 8 // 800 for r, u in zip(res.solution["rows"], res.solution["multipliers"],
                                                 strict=True) if u > 1e-9}
    assert blocks == set(range(8))


@pytest.mark.parametrize("chunks", [2, 5, 0.1, 1])
def test_chunk_counts(chunks):
    c, H, b = vertex_lp(3, m=300, n=4)
    res = solve_lp_chunked(c, H, b, chunks=chunks, log=False)
    assert res.certified
    assert res.dimensions["blocks"] == {2: 2, 5: 5, 0.1: 10, 1: 1}[chunks]
    assert abs(res.objective - full_lp(c, H, b)) <= 1e-7 * max(1.0, abs(res.objective))


def test_keep_positive_is_algorithm_3_as_stated():
    """Without Remark 7 the degenerate LP still ends certified here (the check guards it)."""
    c, H, b = vertex_lp(5, m=400, n=5, extra_tight=12)
    res = solve_lp_chunked(c, H, b, keep="positive", log=False)
    ref = full_lp(c, H, b)
    assert res.termination == "certified_optimal"
    assert abs(res.objective - ref) <= 1e-7 * max(1.0, abs(ref))


def test_degenerate_rows_are_kept_with_remark_7():
    c, H, b = vertex_lp(2, m=400, n=5, extra_tight=10)
    res = solve_lp_chunked(c, H, b, log=False)
    assert res.certified
    assert max(h.info["degenerate"] for h in res.history) > 0
    # at the end every row through x* is kept (15 = 5 with positive multipliers + 10 others)
    assert len(res.solution["rows"]) >= 15


def test_history_is_nondecreasing_theorem_4():
    c, H, b = cone_lp(7, m=600, n=5)
    res = solve_lp_chunked(c, H, b, chunks=6, log=False)
    values = [h.F_t for h in res.history]
    assert all(b >= a - 1e-9 * max(1.0, abs(a)) for a, b in zip(values, values[1:], strict=False))
    assert values[-1] == pytest.approx(res.objective, rel=1e-9)
    assert np.isfinite(res.lower_bound) and res.lower_bound <= res.objective + 1e-9
