"""The capacitated LSCP's capacity bound and LP dive (decomposition/plugins/covering_capacity.py):
the bound against brute force and against the knapsack LP it solves, the dive's cover meeting a
tight bound without a MIP, the MIP from the cover when the bound is weak (the same optimum as
the plain MIP), and the dive's time budget."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.decomposition.plugins import covering_capacity as cc
from aidopt.decomposition.plugins.covering import CoveringData, CoveringProblem
from scipy.optimize import linprog

from aidopt.data.coverage import aggregate_rows, coverage_sets
from aidopt.data.facility import euclidean_costs

from .test_lscp_variants import brute_clscp, instance


def _data(C, radius, a, Q, fixed_open=()):
    coverage = coverage_sets(C, radius)
    rows = aggregate_rows(coverage, a, a > 0)
    n, s = C.shape
    return CoveringData("lscp", coverage, rows, a, None, None,
                        np.asarray(fixed_open, dtype=np.int64), n, s, 0, "", capacity=Q)


def _native(data, time_limit=None, capacity_bound=True):
    problem = CoveringProblem("lscp", capacity_bound=capacity_bound)
    return problem.solve_native("highs", data, None, None, tol=1e-6, time_limit=time_limit,
                                options={})


def _reach(data):
    rows = data.rows
    return np.bincount(rows.sites, weights=np.repeat(rows.weight, np.diff(rows.indptr)),
                       minlength=data.n_sites)


@pytest.mark.parametrize("seed", range(20))
def test_the_capacity_bound_is_the_knapsack_lp_and_below_the_optimum(seed):
    rng, C, radius, a, Q = instance(seed)
    s = C.shape[1]
    f = rng.integers(1, 6, size=s).astype(float)
    forced = (int(rng.integers(0, s)),) if seed % 3 == 0 else ()
    data = _data(C, radius, a, Q, forced)
    reach = _reach(data)
    bound = cc.capacity_bound(f, Q, reach, a.sum(), forced)
    # the knapsack LP it solves: min f y, sum min(Q, reach) y >= D, 0 <= y <= 1, forced open
    lo = np.zeros(s)
    lo[list(forced)] = 1.0
    lp = linprog(f, A_ub=-np.minimum(Q, reach)[None, :], b_ub=[-a.sum()],
                 bounds=list(zip(lo, np.ones(s), strict=True)), method="highs")
    # the LP's value, less at most the allowance for the sums' rounding (1e-9 of the demand)
    assert lp.status == 0 and lp.fun - 1e-6 <= bound <= lp.fun + 1e-9
    assert bound <= brute_clscp(C, radius, a, Q, f, forced) + 1e-9


def test_an_impossible_demand_has_an_infinite_bound():
    assert cc.capacity_bound([1, 1], [2, 2], [9, 9], 5.0) == np.inf
    assert cc.capacity_bound([1, 1], [9, 9], [2, 2], 5.0) == np.inf  # reach caps capacity
    assert cc.capacity_bound([3, 1], [2, 2], [9, 9], 1.0, forced=[0]) == 3.0


def test_a_tight_bound_is_met_by_the_dive_without_a_mip():
    """30 points of demand 1, six sites that all reach them, capacity 10: any three sites are
    optimal, the bound is 3, and the dive's cover meets it."""
    rng = np.random.default_rng(0)
    C = euclidean_costs(rng.random((30, 2)) * 0.1, rng.random((6, 2)) * 0.1)
    data = _data(C, 1.0, np.ones(30), np.full(6, 10.0))
    model, outcome = _native(data)
    assert outcome.status == "optimal" and outcome.extra["mip"] == 0.0
    assert outcome.objective == outcome.bound == outcome.extra["capacity_bound"] == 3.0


@pytest.mark.parametrize("seed", range(12))
def test_the_mip_from_the_dive_has_the_plain_mips_optimum(seed):
    rng, C, radius, a, Q = instance(seed)
    f = rng.integers(1, 6, size=C.shape[1]).astype(float)
    expected = brute_clscp(C, radius, a, Q, f)
    data = _data(C, radius, a, Q)
    data.fixed = f
    model, outcome = _native(data)
    if not np.isfinite(expected):  # no cover holds the demand: the MIP proves it
        assert outcome.status == "infeasible" and outcome.extra["mip"] == 1.0
        return
    assert outcome.status == "optimal" and outcome.objective == pytest.approx(expected)
    assert outcome.bound <= expected + 1e-6
    if outcome.extra["capacity_bound"] < expected - 1e-6:  # a weak bound: the MIP decided
        assert outcome.extra["mip"] == 1.0


def test_some_instance_needs_the_mip():
    """The bound is not always tight: over the seeds some instance runs the MIP (else the test
    above would check only the dive)."""
    ran = []
    for seed in range(12):
        rng, C, radius, a, Q = instance(seed)
        data = _data(C, radius, a, Q)
        data.fixed = rng.integers(1, 6, size=C.shape[1]).astype(float)
        ran.append(_native(data)[1].extra["mip"])
    assert 1.0 in ran and 0.0 in ran


def test_a_dive_stopped_by_its_time_leaves_the_mip(monkeypatch):
    """The dive's LP stopped at its time (as on a large instance): no cover, the MIP decides."""
    import highspy

    monkeypatch.setattr(cc, "run_for", lambda h, seconds: highspy.HighsModelStatus.kTimeLimit)
    rng = np.random.default_rng(0)
    C = euclidean_costs(rng.random((30, 2)) * 0.1, rng.random((6, 2)) * 0.1)
    data = _data(C, 1.0, np.ones(30), np.full(6, 10.0))
    model, outcome = _native(data)
    assert outcome.extra["mip"] == 1.0 and np.isnan(outcome.extra["dive_cost"])
    assert outcome.status == "optimal" and outcome.objective == 3.0


@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_the_certificate_names_the_bound_it_used(solver):
    """HiGHS's native method reports the capacity bound (and whether its MIP ran); another
    solver runs the plain MIP and its note says so."""
    from aidopt import solvers

    if solvers.availability(solver) not in ("full", "limited"):
        pytest.skip(f"{solver} not installed")
    from aidopt.api.facility import solve_facility_location

    rng, C, radius, a, Q = instance(1)
    res = solve_facility_location(C, model="lscp", radius=radius, demand=a, capacity=Q,
                                  solver=solver, log=False)
    assert res.certified
    info = res.history[-1].info
    if solver == "highs":
        assert "capacity bound" in res.certificate.note and info["mip"] in (0.0, 1.0)
    else:
        assert "capacity bound" not in res.certificate.note and "capacity_bound" not in info


def test_capacities_that_just_hold_the_demand_give_a_finite_bound():
    """One site reaches every point and holds all of them; the others hold nothing. The bound's
    sums (the demand, each site's reachable demand) are added in different orders: a last-digit
    shortfall must not make the bound infinite (it did: the run ended uncertified)."""
    from aidopt.api.facility import solve_facility_location

    rng = np.random.default_rng(1)
    C = euclidean_costs(rng.random((200, 2)), rng.random((21, 2)))
    C[:, 0] = 0.0
    a = rng.random(200) * 7.3
    Q = np.zeros(21)
    Q[0] = a.sum()
    res = solve_facility_location(C, model="lscp", radius=0.05, demand=a, capacity=Q, log=False)
    assert res.certified and res.objective == 1.0 and res.lower_bound == 1.0
    assert np.isfinite(res.history[-1].info["capacity_bound"])


def test_the_build_counts_against_the_time_limit(monkeypatch):
    """A build that outlasts the limit stops the run there (no solve starts)."""
    import time

    from aidopt.api.facility import solve_facility_location

    real = CoveringProblem.build

    def slow(self, data, form=None):
        time.sleep(0.5)
        return real(self, data, form)

    monkeypatch.setattr(CoveringProblem, "build", slow)
    rng, C, radius, a, Q = instance(2)
    res = solve_facility_location(C, model="lscp", radius=radius, demand=a, capacity=Q,
                                  time_limit=0.3, log=False, raise_on_failure=False)
    assert res.termination.value == "time_limit" and not res.certified
