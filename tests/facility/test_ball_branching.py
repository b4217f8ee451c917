"""Branching on balls (a customer's cheapest sites, all closed or at least one open): the ball
chosen against its definition, the branch and cut with it against brute force, and when it is
used."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.decomposition.plugins.facility_benders import BALL_CUSTOMERS_PER_SITE, branching_rule, solve_benders
from aidopt.decomposition.plugins.facility_cuts import NearestSites, branching_ball, critical_positions

import aidopt
from aidopt.data.facility import as_facility_data
from tests.facility._helpers import brute_force, data_of, small_instance


def _balls_by_definition(levels, y, w):
    """Every candidate ball ``(score, customer, size)``: a prefix of a customer's sorted sites
    ending before a cost step, inside its LP radius, with a fractional sum."""
    q = critical_positions(levels, y)
    out = []
    for i in range(levels.n):
        costs = levels.sorted_costs[i].astype(float)
        total = 0.0
        for k in range(min(int(q[i]), levels.n_sites - 1)):
            total += y[levels.order[i, k]]
            if costs[k] < costs[k + 1] and 1e-6 < total < 1 - 1e-6:
                out.append((round(min(total, 1 - total), 2), i, k + 1))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_the_ball_is_a_most_fractional_ball_of_some_customer(seed):
    inst = small_instance(seed, kind="p-median", n=25, s=30, ties=seed % 2 == 0)
    levels = NearestSites(data_of(inst))
    rng = np.random.default_rng(seed)
    y = rng.dirichlet(np.ones(30)) * rng.choice([2.0, 4.0])
    w = np.asarray(inst["demand"], dtype=float)
    candidates = _balls_by_definition(levels, y, w)
    ball = branching_ball(levels, y, w)
    if not candidates:
        assert ball is None
        return
    assert ball is not None
    size = ball.size
    owners = [(score, i) for score, i, k in candidates
              if k == size and set(levels.order[i, :k].tolist()) == set(ball.tolist())]
    assert owners, "the ball is no customer's candidate ball"
    assert max(score for score, _ in owners) == max(score for score, _, _ in candidates)
    assert 0.0 < y[ball].sum() < 1.0


def test_no_ball_at_an_integral_point():
    inst = small_instance(1, kind="p-median", n=20, s=15, ties=True)
    levels = NearestSites(data_of(inst))
    y = np.zeros(15)
    y[[2, 7, 11]] = 1.0
    assert branching_ball(levels, y, np.ones(20)) is None


def _tied(seed, p):
    """40 customers x 16 sites, costs 0..7 (many ties; the root LP is fractional and SCIP
    branches), demands 1..4, and the optimum by brute force."""
    rng = np.random.default_rng(seed)
    costs = rng.integers(0, 8, size=(40, 16)).astype(float)
    demand = rng.integers(1, 5, size=40).astype(float)
    return costs, demand, brute_force(costs, p, None, demand)


@pytest.mark.parametrize("p", [3, 4])
@pytest.mark.parametrize("seed", range(4))
def test_branch_and_cut_on_balls_equals_brute_force_where_it_branches(seed, p):
    costs, demand, optimum = _tied(seed, p)
    levels = NearestSites(as_facility_data(costs, p=p, demand=demand))
    res = solve_benders(levels, demand, None, p, cost_scale=float(costs.max()),
                        branching="balls")
    sites_res = solve_benders(levels, demand, None, p, cost_scale=float(costs.max()))
    assert res.status == "optimal" and sites_res.status == "optimal"
    assert res.ball_branchings > 0  # the rule ran: not only SCIP's own branching is checked
    assert res.objective == pytest.approx(optimum, rel=1e-9)
    assert sites_res.objective == pytest.approx(optimum, rel=1e-9)
    assert res.bound <= optimum + 1e-6
    assert int(res.y.sum()) == p
    assert res.branching == "balls" and sites_res.ball_branchings == 0


@pytest.mark.parametrize("kind", ["p-median", "ufl"])
def test_balls_with_demands_and_duplicate_sites_equal_brute_force(kind):
    for seed in range(6):
        inst = small_instance(seed, kind=kind, n=14, s=8, p=3 if kind == "p-median" else None,
                              ties=True, duplicate_sites=seed % 2 == 0)
        levels = NearestSites(data_of(inst))
        res = solve_benders(levels, inst["demand"], inst["fixed_costs"], inst["p"],
                            cost_scale=float(np.max(inst["costs"])), branching="balls")
        assert res.objective == pytest.approx(inst["optimum"], rel=1e-9)


def test_unknown_branching_is_refused():
    inst = small_instance(0, kind="p-median", n=10, s=6)
    levels = NearestSites(data_of(inst))
    with pytest.raises(ValueError, match="branching"):
        solve_benders(levels, np.ones(10), None, 2, cost_scale=1.0, branching="radius")


def test_the_rule_branches_on_balls_only_for_few_sites_per_customer():
    costs = np.ones((10 * BALL_CUSTOMERS_PER_SITE, 20))
    assert branching_rule(as_facility_data(costs, p=10)) == "balls"
    assert branching_rule(as_facility_data(costs, p=11)) == "sites"
    assert branching_rule(as_facility_data(costs, fixed_costs=np.ones(20))) == "sites"
    assert branching_rule(as_facility_data(costs, p=5, fixed_costs=np.ones(20))) == "sites"
    demand = np.zeros(10 * BALL_CUSTOMERS_PER_SITE)
    demand[:BALL_CUSTOMERS_PER_SITE] = 1.0  # customers without demand are not in the model
    assert branching_rule(as_facility_data(costs, p=2, demand=demand)) == "sites"


@pytest.mark.parametrize("branching", ["auto", "sites", "balls"])
def test_the_plugin_certifies_the_same_optimum_with_each_branching(branching):
    """Through the plug-in API (``aidopt.solve``), on a lattice-like instance whose tree
    branches; the start phase is kept short so the branch and cut has work left."""
    from aidopt.decomposition.plugins.facility_benders import FacilityBendersProblem

    costs, demand, optimum = _tied(5, 4)
    data = as_facility_data(costs, p=4, demand=demand)
    res = aidopt.solve(FacilityBendersProblem(branching=branching, lp_rounds=0, improve=0,
                                              support_mip=False),
                       data, solver="benders", log=False)
    assert res.certified
    assert res.objective == pytest.approx(optimum, rel=1e-9)
    balls = res.history[-1].info["ball_branchings"]
    if branching == "balls":
        assert balls > 0
    if branching == "sites":
        assert balls == 0


def test_the_plugin_refuses_an_unknown_branching():
    from aidopt.decomposition.plugins.facility_benders import FacilityBendersProblem

    with pytest.raises(ValueError, match="branching"):
        FacilityBendersProblem(branching="radius")


def test_the_api_option_reaches_the_branch_and_cut():
    costs, demand, optimum = _tied(5, 4)
    runs = {b: aidopt.solve_facility_location(costs, p=4, demand=demand, branching=b, log=False)
            for b in ("sites", "balls")}
    for res in runs.values():
        assert res.certified and res.objective == pytest.approx(optimum, rel=1e-9)
    assert runs["sites"].history[-1].info["ball_branchings"] == 0
    with pytest.raises(ValueError, match="branching"):
        aidopt.solve_facility_location(costs, p=4, branching="radius", log=False)
