"""A run stopped by its time limit is never empty-handed (the initial phase gets a share of the
clock; the plug-in's greedy solution and its bound from the data are returned)."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from aidopt.decomposition.run import Run, RunConfig

import aidopt


def _euclidean(n, seed=0):
    xy = np.random.default_rng(seed).random((n, 2)) * 1000
    return np.floor(np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1)))


def test_share_caps_what_solves_see_and_restores_it():
    run = Run("t", None, RunConfig(time_limit=100.0))
    with run.share(0.5):
        assert 49.0 < run.remaining() <= 50.0
        with run.share(0.5):
            assert 24.0 < run.remaining() <= 25.0
        assert 49.0 < run.remaining() <= 50.0
    assert run.remaining() > 99.0
    free = Run("t", None, RunConfig())
    with free.share(0.5):
        assert free.remaining() is None


@pytest.mark.parametrize("aggregation", ["radius", "sites"])
@pytest.mark.parametrize("time_limit", [1e-6, 0.05])
def test_a_time_limit_returns_a_feasible_solution_and_a_bound(aggregation, time_limit):
    D = _euclidean(300)
    p = 5
    t = time.perf_counter()
    r = aidopt.solve_facility_location(D, p=p, aggregation=aggregation, time_limit=time_limit,
                                       log=False, raise_on_failure=False)
    assert time.perf_counter() - t < time_limit + 10
    assert math.isfinite(r.objective) and not r.certified
    open_sites, assign = r.solution["open"], r.solution["assign"]
    assert open_sites.size == p and np.isin(assign, open_sites).all()
    assert r.objective == pytest.approx(D[np.arange(300), assign].sum())
    assert r.lower_bound == pytest.approx(D.min(axis=1).sum()) or r.lower_bound > 0
    assert r.lower_bound <= r.objective


def test_ufl_bound_from_the_data_counts_one_opening():
    D = _euclidean(60, seed=1)
    f = np.full(60, 500.0)
    r = aidopt.solve_facility_location(D, fixed_costs=f, time_limit=1e-6, log=False,
                                       raise_on_failure=False)
    assert math.isfinite(r.objective)
    assert r.lower_bound == pytest.approx(D.min(axis=1).sum() + 500.0)
    full = aidopt.solve_facility_location(D, fixed_costs=f, log=False)
    assert full.certified and r.lower_bound <= full.objective <= r.objective


def test_a_stopped_solve_worse_than_the_start_does_not_replace_it(monkeypatch):
    """Driver: when no iterate finishes, the answer is the better of the initial point and the
    stopped solve's incumbent (a canned stopped outcome with a poor open set here)."""
    from aidopt.decomposition.plugins.facility_benders import FacilityBendersProblem

    import aidopt
    from aidopt.solvers import SolveOutcome, SolveStatus

    rng = np.random.default_rng(0)
    pts = rng.random((200, 2))
    costs = np.round(np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1)) * 1000)
    poor = np.zeros(200)
    poor[np.argsort(costs.sum(axis=1))[-5:]] = 1.0  # the five most remote points

    def stopped(self, method, aggregated, previous, partition, **kw):
        return poor, SolveOutcome(SolveStatus.TIME_LIMIT, 1e12, None, True, "benders", "", 0.0,
                                  bound=0.0)

    monkeypatch.setattr(FacilityBendersProblem, "solve_native", stopped)
    res = aidopt.solve_facility_location(costs, p=5, log=False, raise_on_failure=False,
                                         improve=0)
    poor_cost = costs[:, np.flatnonzero(poor)].min(axis=1).sum()
    assert res.objective < poor_cost
    # the start wins, as the driver's initial point or as the lift's (which keeps the start it
    # was given when the branch and cut's answer is dearer)
    assert "initial" in res.message or "incumbent of the stopped solve" in res.message
    # (the cut LP's bound may prove the start optimal: then the run is certified, honestly)
    assert res.termination in ("time_limit", "certified_optimal")


def test_a_solve_cancelled_at_the_deadline_is_a_time_limit_not_ctrl_c():
    """HiGHS's own limit raised past the run's: aidopt cancels the solve at the run's deadline
    (+1 s), which HiGHS reports as "interrupted"; that used to read as Ctrl-C (exit 130)."""
    from aidopt.instances.facility import orlib_pmed

    import aidopt

    C, _, _ = orlib_pmed("pmed12")
    res = aidopt.solve_facility_location(C, p=10, aggregation="sites", aid=False, time_limit=2,
                                         solver_options={"time_limit": 100})
    assert res.termination == "time_limit"
    assert not res.certified
