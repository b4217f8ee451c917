"""Re-optimization by parts (POPMUSIC) of the p-median start: ends at a solution no part of
which an exact solver improves, never costlier than its start, never fooled by a wrong part
answer; the plug-in's exact part solver (SCIP) against brute force, on a matrix and on
coordinates, and the whole solve's optimum with and without it."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from aidopt.decomposition.plugins import facility_benders as fb
from aidopt.decomposition.plugins.facility import local_reoptimization
from aidopt.decomposition.plugins.facility_cuts import NearestSites, lp_by_cuts

import aidopt
from aidopt.data.facility import EuclideanCosts, as_facility_data


def _points(seed, n=90):
    rng = np.random.default_rng(seed)
    return rng.random((n, 2)) * 100


def _matrix(xy):
    return np.round(np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1)))


def _cost(data, sites):
    return float(data.demand @ data.cost_columns(np.asarray(sites)).min(axis=1))


def _brute_part(part, start, deadline):
    """The part's optimum by enumerating every r-subset of its sites (start kept on ties)."""
    C, w, r = part.costs, part.demand, part.p
    best, value = np.asarray(start), float(w @ C[:, start].min(axis=1))
    for subset in itertools.combinations(range(C.shape[1]), r):
        v = float(w @ C[:, list(subset)].min(axis=1))
        if v < value - 1e-9:
            best, value = np.asarray(subset), v
    return best


def _bad_start(xy, p):
    """p sites crowded in one corner: far from any good solution."""
    return np.argsort(xy.sum(axis=1))[:p]


def _near(data, k=4):
    levels = NearestSites.of(data)
    return levels.customers, levels.order[:, :k].astype(np.int64)


@pytest.mark.parametrize("seed", range(3))
def test_parts_end_where_no_part_improves_and_never_above_the_start(seed):
    xy = _points(seed)
    p, r = 9, 3
    data = as_facility_data(_matrix(xy), p=p)
    customers, near = _near(data)
    start = _bad_start(xy, p)
    end = local_reoptimization(data, customers, near, start, _brute_part, r=r, seed=seed)
    assert end.size == p and np.unique(end).size == p
    assert _cost(data, end) < _cost(data, start)
    # a fixpoint: every part of the end is optimal, so a second pass (any seed order) moves nothing
    again = local_reoptimization(data, customers, near, end, _brute_part, r=r, seed=seed + 10)
    assert np.array_equal(again, end)


def test_a_wrong_part_answer_is_never_taken():
    xy = _points(4)
    p = 9
    data = as_facility_data(_matrix(xy), p=p)
    customers, near = _near(data)
    start = np.sort(_bad_start(xy, p))
    calls = []

    def wrong(part, start_cols, deadline):  # nothing, too few, repeated, out of range, worse
        calls.append(len(calls))
        kind = len(calls) % 5
        start_cols = np.asarray(start_cols)
        if kind == 0:
            return None
        if kind == 1:
            return start_cols[:-1]
        if kind == 2:
            return np.repeat(start_cols[:1], part.p)
        if kind == 3:
            return start_cols + part.costs.shape[1]
        dear = np.argsort(-(part.demand @ part.costs))[:part.p]
        worse = _cost(part, dear) > _cost(part, start_cols)
        return dear if worse else start_cols

    end = local_reoptimization(data, customers, near, start, wrong, r=3)
    assert len(calls) >= 5 and np.array_equal(end, start)


def test_a_past_deadline_starts_no_part():
    xy = _points(5)
    data = as_facility_data(_matrix(xy), p=9)
    customers, near = _near(data)
    start = np.sort(_bad_start(xy, 9))

    def never(*args):
        raise AssertionError("no part may be solved after the deadline")

    end = local_reoptimization(data, customers, near, start, never, r=3,
                               deadline=time.perf_counter() - 1.0)
    assert np.array_equal(end, start)


@pytest.mark.parametrize("seed", range(3))
def test_the_plugins_part_solver_is_exact(seed):
    """_solve_part (cutting-plane LP, fixing, SCIP) returns an optimum of the part."""
    rng = np.random.default_rng(seed)
    C = _matrix(rng.random((26, 2)) * 100)[:, :14]
    part = as_facility_data(C, p=3)
    start = np.array([0, 1, 2])
    found = fb.FacilityBendersProblem()._solve_part(part, start, None)
    best = _brute_part(part, start, None)
    assert found.size == 3
    assert _cost(part, found) == pytest.approx(_cost(part, best), abs=1e-9)


def test_by_parts_improves_a_poor_start_on_a_matrix_and_on_coordinates(monkeypatch):
    monkeypatch.setattr(fb, "PART_SIZES", (3, 4))
    monkeypatch.setattr(fb, "SWAP_ENTRIES", 1000)  # parts run where the swaps see few sites
    xy = _points(7, n=120)
    p = 12
    problem = fb.FacilityBendersProblem()
    for costs in (_matrix(xy), EuclideanCosts(xy, round_to=0)):
        data = as_facility_data(costs, p=p)
        levels = NearestSites.of(data)
        lp = lp_by_cuts(levels, data.demand[levels.customers], None, p)
        poor = problem.greedy_point(data, _bad_start(xy, p))
        upper = data.objective(poor.solution["open"], poor.solution["assign"])
        found = problem._by_parts(data, lp, poor, None)
        value = data.objective(found.solution["open"], found.solution["assign"])
        assert lp.value - 1e-6 <= value < upper
        assert np.unique(found.solution["open"]).size == p


def test_by_parts_is_skipped_when_p_is_small_the_swaps_see_every_site_or_the_start_is_at_the_bound(
        monkeypatch):
    xy = _points(8)
    data = as_facility_data(_matrix(xy), p=5)
    levels = NearestSites.of(data)
    lp = lp_by_cuts(levels, data.demand[levels.customers], None, 5)
    problem = fb.FacilityBendersProblem()
    point = problem.greedy_point(data, _bad_start(xy, 5))
    assert problem._by_parts(data, lp, point, None) is point  # p <= every PART_SIZES
    monkeypatch.setattr(fb, "PART_SIZES", (2,))
    assert problem._by_parts(data, lp, point, None) is point  # 90 x 90 pairs <= SWAP_ENTRIES
    monkeypatch.setattr(fb, "SWAP_ENTRIES", 1000)
    assert problem._by_parts(data, lp, point, None) is not point
    best = aidopt.solve_facility_location(data.costs, p=5, log=False)
    assert fb.at_bound(best.objective, lp.value, data.integral)  # LP integral here
    optimal = problem.greedy_point(data, best.solution["open"])
    assert problem._by_parts(data, lp, optimal, None) is optimal


@pytest.mark.parametrize("seed", range(2))
def test_the_solve_certifies_the_same_optimum_with_and_without_parts(seed, monkeypatch):
    monkeypatch.setattr(fb, "PART_SIZES", (3, 4))
    monkeypatch.setattr(fb, "SWAP_ENTRIES", 1000)  # parts run where the swaps see few sites
    xy = _points(20 + seed, n=150)
    C = _matrix(xy)
    a = aidopt.solve_facility_location(C, p=15, log=False)
    monkeypatch.setattr(fb.FacilityBendersProblem, "_by_parts",
                        lambda self, data, lp, point, seconds: point)
    b = aidopt.solve_facility_location(C, p=15, log=False)
    assert a.certified and b.certified
    assert a.objective == b.objective


def test_at_bound_proves_optimality_only_when_no_better_value_fits():
    assert fb.at_bound(100.0, 99.2, True)  # every value an integer: nothing in (99.2, 100)
    assert not fb.at_bound(100.0, 99.0, True)  # 99 itself may be attained
    assert not fb.at_bound(100.0, 99.0 + 1e-12, True)  # rounding never decides
    assert fb.at_bound(100.0, 100.0 - 1e-8, False)
    assert not fb.at_bound(100.0, 99.9, False)
