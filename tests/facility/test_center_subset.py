"""The p-center's client-subset relaxation (decomposition/plugins/center.py): the optimum against
brute force over every p-subset of sites and against the LSCP on every point (``subset=False``),
a level whose subset must grow before its answer holds for every point, a level proven
infeasible from a strict subset of the points, the swap heuristic, the hand-over to every point
at the node cap, SCIP, and the decision LSCP (``most=``) on its own."""

from __future__ import annotations

import itertools

import aidopt.decomposition.plugins.center as center_module
import numpy as np
import pytest
from aidopt.decomposition.levels import level_search
from aidopt.decomposition.plugins.center import PCenterTest
from aidopt.decomposition.run import Run, RunConfig, run_scope
from aidopt.models import covering as cmodel
from aidopt.models._data import build_deadline

from aidopt import solvers
from aidopt.data.coverage import coverage_sets
from aidopt.data.facility import euclidean_costs

from .test_center import brute_center, center_instance, center_radius


def config():
    return RunConfig(solver="highs", log=False, aid=False, threads=1)


def search(C, w, p, fixed=(), subset=True):
    test = PCenterTest(C, w, p, np.asarray(fixed, dtype=np.int64), subset=subset)
    return test, level_search(test, config())


def one_level(test, R):
    """``test``'s verdict at level ``R``, outside a search (its ``start`` run first)."""
    cfg = config()
    run = Run(test.name, test.problem_class, cfg, defaults=test.solver_defaults,
              fallbacks=test.fallbacks)
    with run_scope(cfg), build_deadline(run.deadline):
        test.start(run)
        return test.test(run, R)


def covers(C, w, S, R):
    return center_radius(C, w, S) <= R


def feasible_by_brute_force(C, w, p, R):
    return brute_center(C, w, p) <= R


@pytest.mark.parametrize("seed", range(20))
def test_subset_search_matches_brute_force_and_the_full_lscp(seed):
    rng, _, _, C = center_instance(100 + seed, n=18, s=9)
    n, s = C.shape
    p = int(rng.integers(1, 5))
    w = np.ones(n) if seed % 2 == 0 else rng.uniform(0.3, 2.0, size=n)
    fixed = (int(rng.integers(0, s)),) if seed % 4 == 3 else ()
    best = brute_center(C, w, p, fixed)
    test, res = search(C, w, p, fixed, subset=True)
    assert res.termination.value == "certified_optimal"
    assert res.objective == res.lower_bound == best
    open_ = res.solution["open"]
    assert len(open_) == p and set(fixed) <= set(open_)
    assert center_radius(C, w, open_) == best  # checked on every point, not the subset
    below = res.solution["search"]["infeasible_level"]
    if below is not None:  # the level below, proven infeasible from the subset, really is
        assert brute_center(C, w, p, fixed) > below
    full_test, full = search(C, w, p, fixed, subset=False)
    assert full.certified and full.objective == best
    assert full_test.clients.size <= p + 1  # the LSCP on every point never grows a subset
    assert test.clients.size <= n


def test_subset_grows_until_every_point_is_covered(monkeypatch):
    """Points in a row at 0, 1, ..., 9 (sites at every point), p = 2 at radius 2, the primal
    heuristic off: the start's subset (the greedy's p + 1 farthest points) is covered by many
    pairs that leave a middle point out, so uncovered points must join before the level is
    proven feasible."""
    monkeypatch.setattr(center_module, "SWAPS_PER_SITE", 0)
    x = np.arange(10.0)
    C = np.abs(x[:, None] - x[None, :])
    w = np.ones(10)
    test = PCenterTest(C, w, 2, np.zeros(0, dtype=np.int64))
    verdict = one_level(test, 2.0)
    start = 3  # p + 1 farthest points of the greedy
    assert verdict.feasible is True
    assert covers(C, w, verdict.solution, 2.0)  # on every point
    assert verdict.info["subset_rounds"] >= 2
    assert test.clients.size > start


def test_subset_proves_infeasibility_from_a_strict_subset():
    """Three clusters far apart, p = 2 at a radius inside a cluster: three points, one per
    cluster, already need three sites; the proof holds for every point and comes from a
    subset of them."""
    rng = np.random.default_rng(4)
    centres = np.array([[0.0, 0.0], [100.0, 0.0], [0.0, 100.0]])
    pts = np.concatenate([c + rng.random((8, 2)) for c in centres])
    C = euclidean_costs(pts, pts)
    w = np.ones(len(pts))
    R = 5.0
    test = PCenterTest(C, w, 2, np.zeros(0, dtype=np.int64))
    verdict = one_level(test, R)
    assert verdict.feasible is False
    assert "subset" in verdict.proof
    assert verdict.info["subset"] < len(pts)
    assert not feasible_by_brute_force(C, w, 2, R)  # the relaxation's answer holds for all


def test_full_lscp_and_subset_agree_level_by_level():
    """Every level of one instance: the subset test and the LSCP on every point give the same
    verdict (and the subset test's feasible sites cover every point)."""
    _, _, _, C = center_instance(7, n=20, s=10)
    w = np.ones(C.shape[0])
    for R in np.unique(C)[::3]:
        a = one_level(PCenterTest(C, w, 3, np.zeros(0, dtype=np.int64)), float(R))
        b = one_level(PCenterTest(C, w, 3, np.zeros(0, dtype=np.int64), subset=False), float(R))
        assert a.feasible == b.feasible == feasible_by_brute_force(C, w, 3, R)
        if a.feasible:
            assert covers(C, w, a.solution, R)


@pytest.mark.parametrize("most", [1, 2, 3])
def test_decision_lscp_answers_whether_most_sites_cover(most):
    rng = np.random.default_rng(5)
    C = euclidean_costs(rng.random((12, 2)), rng.random((6, 2)))
    cov = coverage_sets(C, 0.45)
    data = cmodel.CoveringModelData("lscp", cov.indptr, cov.sites, 6, most=most)
    model = cmodel.create_instance(data)
    outcome = solvers.solve_model(model, "highs", problem_class=solvers.ProblemClass.MILP,
                                  need_duals=False, time_limit=30, threads=1, tee=False,
                                  options={})
    possible = any(cov.covered(list(S)).all()
                   for k in range(1, most + 1) for S in itertools.combinations(range(6), k))
    if possible:
        assert outcome.optimal
        S = cmodel.open_sites(model)
        assert S.size <= most and cov.covered(S).all()
    else:
        assert outcome.status == "infeasible"


def test_decision_lscp_refuses_other_kinds():
    with pytest.raises(ValueError, match="most"):
        cmodel.CoveringModelData("mclp", np.array([0, 1]), np.array([0]), 1, weight=[1.0], p=1,
                                 most=1)
    with pytest.raises(ValueError, match="most"):
        cmodel.CoveringModelData("lscp", np.array([0, 1]), np.array([0]), 1, most=-1)


@pytest.mark.parametrize("seed", range(6))
def test_swap_cover_returns_its_sites_and_exactly_their_uncovered_points(seed):
    rng, _, _, C = center_instance(200 + seed, n=30, s=12)
    R = float(np.quantile(C, 0.3))
    cov = coverage_sets(C, R)
    keep = np.ones(C.shape[0], dtype=bool)
    keep[rng.integers(0, C.shape[0])] = False  # a point covered by a forced site, say
    start = np.sort(rng.choice(12, size=3, replace=False))
    fixed = start[:1]
    S, miss = center_module.swap_cover(cov, center_module._transpose(cov, keep), keep, start,
                                       fixed, rng, 40)
    assert S.size == 3 and fixed[0] in S  # p sites, the forced one kept
    uncovered = np.flatnonzero(keep & ~(C[:, S] <= R).any(axis=1))
    assert np.array_equal(miss, uncovered)
    before = int((keep & ~(C[:, start] <= R).any(axis=1)).sum())
    assert miss.size <= before  # never worse than its start


def test_the_heuristic_proves_a_level_without_a_mip():
    """The start's greedy sites do not cover at the level, but repaired by swaps they cover
    every point, and no decision MIP is solved."""
    x = np.arange(10.0)
    C = np.abs(x[:, None] - x[None, :])
    test = PCenterTest(C, np.ones(10), 2, np.zeros(0, dtype=np.int64))
    verdict = one_level(test, 3.0)  # the greedy's start sites 0 and 9 miss 4 and 5 at 3
    assert not covers(C, np.ones(10), test.greedy([]), 3.0)
    assert verdict.feasible is True and covers(C, np.ones(10), verdict.solution, 3.0)
    assert verdict.info["subset_rounds"] == 0 and test.rounds == 0


@pytest.mark.parametrize("seed", range(4))
def test_a_capped_subset_mip_hands_over_to_every_point(seed, monkeypatch):
    """Every subset MIP, and every MIP under the first cap, 'stops at the node cap' (as HiGHS
    reports it): the test hands over to every point, raises the cap, and the search still ends
    at the brute-force optimum."""
    real = PCenterTest._decide
    calls = []

    def capped(self, run, coverage, points, cap):
        calls.append((int(points.sum()), cap))
        everyone = bool(points.sum() == points.size)
        if not everyone or cap == center_module.NODE_CAP:
            return None, "iteration_limit", 1
        return real(self, run, coverage, points, cap)

    monkeypatch.setattr(PCenterTest, "_decide", capped)
    monkeypatch.setattr(center_module, "SWAPS_PER_SITE", 0)
    rng, _, _, C = center_instance(300 + seed, n=14, s=7)
    w = np.ones(C.shape[0])
    p = int(rng.integers(1, 4))
    test, res = search(C, w, p)
    assert res.certified and res.objective == brute_center(C, w, p)
    caps = {cap for _, cap in calls}
    if res.solution["search"]["tests"]:
        assert caps == {center_module.NODE_CAP, 4 * center_module.NODE_CAP}
        assert any(rec.info.get("all_points") == 1.0 for rec in res.history)


@pytest.mark.parametrize("seed", range(3))
def test_subset_search_with_scip(seed):
    """Another solver (uncapped, its own infeasibility status) reaches the same optimum."""
    if solvers.availability("scip") != "full":
        pytest.skip("SCIP is not installed")
    rng, _, _, C = center_instance(400 + seed, n=14, s=7)
    w = np.ones(C.shape[0])
    p = int(rng.integers(1, 4))
    test = PCenterTest(C, w, p, np.zeros(0, dtype=np.int64))
    res = level_search(test, RunConfig(solver="scip", log=False, aid=False, threads=1))
    assert res.certified and res.objective == brute_center(C, w, p)


@pytest.mark.parametrize("threads, expected", [(None, 1), (2, 2)])
def test_p_center_runs_highs_on_one_thread_unless_told(monkeypatch, threads, expected):
    """The p-center's level tests run HiGHS on one thread by default (measured faster on TSPLIB,
    docs/benchmarks/facility.md); a user's ``threads`` is kept; the answer is the same."""
    import aidopt.decomposition.levels as levels_module

    from aidopt.api.facility import solve_facility_location

    seen = []
    real = levels_module.level_search

    def spy(test, config):
        seen.append(config.threads)
        return real(test, config)

    monkeypatch.setattr(levels_module, "level_search", spy)
    rng, _, _, C = center_instance(3)
    w = rng.uniform(0.5, 2.0, C.shape[0])
    res = solve_facility_location(C, p=3, model="p-center", demand=w, threads=threads, log=False)
    assert seen == [expected]
    assert res.termination.value == "certified_optimal"
    assert res.objective == pytest.approx(brute_center(C, w, 3))
