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
