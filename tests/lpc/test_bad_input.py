"""Infeasible and unbounded LPs report their status (no crash, not certified); bad arguments
are refused before any solve."""

from __future__ import annotations

import numpy as np
import pytest

from aidopt.api.lpc import n_blocks, solve_lp_chunked, solve_lsvm_lpc


def _infeasible():
    # block 1 has x0 >= 1, block 2 has -x0 >= 0: each block is feasible, the LP is not
    rng = np.random.default_rng(0)
    H = np.vstack([[1.0, 0.0]] * 1 + [rng.normal(size=(49, 2)) * [0, 1]] + [[-1.0, 0.0]]
                  + [rng.normal(size=(49, 2)) * [0, 1]])
    b = np.concatenate([[1.0], -np.ones(49) * 10, [0.0], -np.ones(49) * 10])
    return np.array([1.0, 0.0]), H, b


def test_infeasible_lp_is_reported():
    c, H, b = _infeasible()
    res = solve_lp_chunked(c, H, b, bounds=(-5, 5), chunks=2, log=False)
    assert res.termination == "infeasible"
    assert not res.certified
    assert "infeasible" in res.message


def test_unbounded_lp_is_reported():
    rng = np.random.default_rng(1)
    H = np.column_stack([rng.random(60), rng.normal(size=60)])  # x0 >= ... only: min -x0 has no bound
    H[:, 0] = -np.abs(H[:, 0])
    b = -np.ones(60)
    res = solve_lp_chunked([1.0, 0.0], H, b, bounds=[(None, None), (-1, 1)], chunks=3, log=False)
    assert res.termination == "unbounded"
    assert not res.certified
    assert res.dimensions["max_rows_in_lp"] == 60  # it needed every row to prove it


def test_unbounded_chunk_but_bounded_lp_is_solved():
    """Block 1 leaves x1 free below; block 2 bounds it: blocks are accumulated, then LPC goes on."""
    rng = np.random.default_rng(2)
    top = np.column_stack([rng.normal(size=40), np.zeros(40)])
    bottom = np.column_stack([np.zeros(40), np.ones(40)])
    H = np.vstack([top, bottom])
    b = np.concatenate([-np.abs(rng.normal(size=40)) - 1, -rng.random(40) - 2])
    H[:40, 0] = np.where(np.arange(40) % 2 == 0, 1.0, -1.0) * np.abs(H[:40, 0])
    res = solve_lp_chunked([0.0, 1.0], H, b, chunks=2, log=False)
    assert res.termination == "certified_optimal", res.message
    assert res.objective == pytest.approx(float(b[40:].max()), rel=1e-9)
    assert any("unbounded" in note for note in [res.message])


def test_failing_check_is_not_certified_at_iteration_limit():
    from ._lps import vertex_lp

    c, H, b = vertex_lp(4, m=400, n=5)
    res = solve_lp_chunked(c, H, b, chunks=8, max_iter=2, log=False)
    assert res.termination in ("iteration_limit", "certified_optimal")
    if res.termination == "iteration_limit":
        assert not res.certified
        assert res.objective == np.inf  # x^j violates a row: no feasible value
        assert np.isfinite(res.lower_bound)
        assert "violates row" in res.message


@pytest.mark.parametrize("kwargs,match", [
    ({"chunks": 0}, "chunks"), ({"chunks": 1.5}, "chunks"), ({"chunks": True}, "chunks"),
    ({"tau": 0}, "tau"), ({"keep": "all"}, "keep"),
    ({"bounds": (2, 1)}, "lower"), ({"bounds": [(0, 1)] * 3}, "pairs"),
])
def test_bad_arguments(kwargs, match):
    c, H, b = np.ones(2), np.eye(2), np.zeros(2)
    with pytest.raises(ValueError, match=match):
        solve_lp_chunked(c, H, b, log=False, **kwargs)


def test_bad_data():
    c, H, b = np.ones(2), np.ones((5, 2)), np.zeros(5)
    with pytest.raises(ValueError, match="columns"):
        solve_lp_chunked(np.ones(3), H, b, log=False)
    with pytest.raises(ValueError, match="entries"):
        solve_lp_chunked(c, H, np.zeros(4), log=False)
    bad = H.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="row 3"):
        solve_lp_chunked(c, bad, b, log=False)
    with pytest.raises(ValueError, match="finite"):
        solve_lp_chunked([1.0, np.inf], H, b, log=False)
    with pytest.raises(TypeError, match="unexpected keyword"):
        solve_lp_chunked(c, H, b, tolerance=1e-3)
    with pytest.raises(FileNotFoundError):
        solve_lp_chunked(c, "/nonexistent/H.npy", b, log=False)
    with pytest.raises(ValueError, match="two classes"):
        solve_lsvm_lpc(np.ones((4, 2)), [1, 2, 3, 1], log=False)
    with pytest.raises(ValueError, match="C must"):
        solve_lsvm_lpc(np.ones((4, 2)), [1, 2, 2, 1], C=-1, log=False)


def test_n_blocks():
    assert n_blocks(8, 1000) == 8
    assert n_blocks(1 / 8, 1000) == 8
    assert n_blocks(1 / 64, 1000) == 64
    assert n_blocks(0.3, 1000) == 4
    assert n_blocks(50, 10) == 10


def test_time_limit_stops_honestly():
    from ._lps import vertex_lp

    c, H, b = vertex_lp(6, m=300, n=4)
    res = solve_lp_chunked(c, H, b, time_limit=1e-6, log=False)
    assert res.termination == "time_limit"
    assert not res.certified


def test_solver_failure_raises_unless_asked(monkeypatch):
    """A chunk LP that ends neither optimal, infeasible nor unbounded goes through the run's
    failure handling: raise by default, an honest stop with raise_on_failure=False."""
    from aidopt.decomposition import run as run_module

    from aidopt import solvers

    from ._lps import vertex_lp

    c, H, b = vertex_lp(7, m=200, n=3)
    real = run_module._RunHandle.solve

    def failing(self, need_duals=False):
        real(self, need_duals)
        return solvers.SolveOutcome(solvers.SolveStatus.ERROR, None, None, False, "highs", "", 0.0,
                                    "simulated")

    monkeypatch.setattr(run_module._RunHandle, "solve", failing)
    with pytest.raises(solvers.SolverError, match="simulated"):
        solve_lp_chunked(c, H, b, log=False)
    res = solve_lp_chunked(c, H, b, raise_on_failure=False, log=False)
    assert res.termination == "solver_failure" and not res.certified


def test_nan_in_bounds_is_an_error_not_no_bound():
    """A NaN bound was read as "no bound" and the LP certified; None is the way to say none."""
    import aidopt

    H = np.vstack([np.eye(2), -np.eye(2)])
    b = np.array([0.0, 0.0, -1.0, -1.0])
    with pytest.raises(ValueError, match="bounds of column 0 hold NaN"):
        aidopt.solve_lp_chunked(np.ones(2), H, b, bounds=(np.nan, 1), log=False)
    with pytest.raises(ValueError, match="bounds of column 1 hold NaN"):
        aidopt.solve_lp_chunked(np.ones(2), H, b, bounds=[(0, 1), (None, np.nan)], log=False)
    res = aidopt.solve_lp_chunked(np.ones(2), H, b, bounds=[(0, None), (None, 2)], log=False)
    assert res.certified and res.objective == pytest.approx(0.0)


@pytest.mark.parametrize("where", ["c", "H", "b"])
def test_magnitudes_the_solvers_read_as_infinite_are_refused(where):
    import aidopt

    c, H, b = np.ones(2), np.vstack([np.eye(2), -np.eye(2)]), np.array([0.0, 0.0, -1.0, -1.0])
    {"c": c, "H": H, "b": b}[where].flat[0] = 1e300
    with pytest.raises(ValueError, match="1e\\+20"):
        aidopt.solve_lp_chunked(c, H, b, log=False)
