"""Warm re-solves: the chunk LP stays loaded in HiGHS, rows are added and removed in place and
each re-solve starts from the previous basis; the Pyomo model is what was solved."""

from __future__ import annotations

import numpy as np

from aidopt.api.lpc import solve_lp_chunked, solve_lsvm_lpc

from ._lps import vertex_lp


def test_highs_handle_is_warm():
    c, H, b = vertex_lp(8, m=600, n=6, extra_tight=4)
    res = solve_lp_chunked(c, H, b, chunks=6, log=False)
    assert res.certified
    dims = res.dimensions
    assert dims["solves"] == len(res.history)
    assert dims["warm_solves"] == dims["solves"] - 1  # one load, then in-place updates only
    assert all(h.info["warm"] for h in res.history[1:])
    # once the kept rows have settled, a re-solve after adding a block takes few pivots
    first, last = res.history[0].info["simplex_iterations"], res.history[-1].info["simplex_iterations"]
    assert last <= max(5, first // 4)


def test_written_models_are_the_chunk_lps(tmp_path):
    c, H, b = vertex_lp(9, m=200, n=3)
    res = solve_lp_chunked(c, H, b, chunks=4, write_models=str(tmp_path), log=False)
    assert res.certified
    lps = sorted(tmp_path.glob("*.lp"))
    assert len(lps) == res.dimensions["solves"]
    # the first chunk LP holds block 1 only: rows 0..49
    text = lps[0].read_text()
    assert "rows(49)" in text and "rows(50)" not in text
    last_rows = {int(r) for r in res.history and res.solution["rows"]}
    text = lps[-1].read_text()
    for r in last_rows:
        assert f"rows({r})" in text


def test_lsvm_slots_bound_the_columns():
    from aidopt.instances import svm_instance

    X, y = svm_instance(n=3000, m=3, seed=4, separation=2.5)
    res = solve_lsvm_lpc(X, y, C=1.0, chunks=6, log=False)
    assert res.certified
    assert res.dimensions["warm_solves"] == res.dimensions["solves"] - 1
    assert res.dimensions["max_rows_in_lp"] < 3000
    assert np.count_nonzero(res.solution["alpha"]) <= res.dimensions["max_rows_in_lp"]
