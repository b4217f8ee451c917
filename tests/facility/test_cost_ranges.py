"""Costs over many orders of magnitude: no method certifies an answer above the optimum.

A few "forbidden" pairs at 1e6 ... 9e14 beside costs of 1 ... 100, or costs from 1e-4 to 1e8,
put the real costs below the solvers' absolute tolerances once they are scaled by the largest;
the door lowers every cost that no solution as cheap as a greedy one can pay
(:func:`aidopt.data.facility.bound_costs`) so that the optimum is unchanged and every bound
stays valid. Each case is checked against brute force (uncapacitated) or an enumeration of open
sets with a transportation LP per set (capacitated).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

import aidopt
from aidopt.data.facility import as_facility_data, bound_costs

from ._helpers import brute_force

F = 1e12
#: the smallest case found: a 6-customer x 5-site UFL with forbidden pairs at 1e12 (certified 56)
SMALL_COSTS = np.array([[2, F, F, 10, 4], [16, F, 7, 4, 8], [3, F, 13, F, 3], [5, 15, F, F, F],
                        [F, 3, 10, 3, 5], [19, F, 8, F, 2]], dtype=float)
SMALL_FIXED = np.array([18, 2, 5, 10, 19], dtype=float)

METHODS = [
    {},
    {"branching": "balls"},
    {"aid": False},
    {"lp_rounds": 0},
    {"solver": "scip"},
    {"solver": "highs"},
    {"aggregation": "sites"},
    {"aggregation": "sites", "far": True},
]


def _instance(seed: int, kind: str):
    rng = np.random.default_rng(seed)
    n, s = int(rng.integers(6, 12)), int(rng.integers(4, 7))
    costs = rng.integers(1, 100, (n, s)).astype(float)
    if kind == "forbidden":
        mask = rng.random((n, s)) < 0.35
        mask[np.arange(n), rng.integers(0, s, n)] = False  # every customer keeps a real site
        costs[mask] = 10.0 ** rng.uniform(6, 14.9)
    else:
        costs = 10.0 ** rng.uniform(-4, 8, (n, s))
    demand = rng.integers(0, 5, n).astype(float)
    demand[0] = max(demand[0], 1.0)
    return costs, demand, rng


def _true_cost(costs, demand, fixed, solution):
    total = demand @ costs[np.arange(costs.shape[0]), solution["assign"]]
    return total + (0.0 if fixed is None else fixed[solution["open"]].sum())


def test_smallest_forbidden_case_is_certified_at_the_optimum():
    res = aidopt.solve_facility_location(SMALL_COSTS, fixed_costs=SMALL_FIXED, log=False)
    optimum = brute_force(SMALL_COSTS, None, SMALL_FIXED)
    assert optimum == 53.0
    assert res.certified
    assert res.objective == pytest.approx(optimum)
    assert res.lower_bound <= optimum + 1e-9


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", ["forbidden", "wide"])
def test_no_method_certifies_above_the_optimum(seed, kind):
    costs, demand, rng = _instance(seed, kind)
    ufl = seed % 2 == 0
    fixed = rng.integers(1, 30, costs.shape[1]).astype(float) if ufl else None
    if ufl and kind == "forbidden":
        fixed[0] = 1e13  # a site meant never to open
    p = None if ufl else 2
    optimum = brute_force(costs, p, fixed, demand)
    for method in METHODS:
        res = aidopt.solve_facility_location(costs, p=p, fixed_costs=fixed, demand=demand,
                                             log=False, **method)
        true = _true_cost(costs, demand, fixed, res.solution)
        assert res.objective == pytest.approx(true, rel=1e-9), method
        assert res.lower_bound <= optimum * (1 + 1e-9), method
        # each of these small instances is certified, and at the optimum
        assert res.certified, method
        assert true <= optimum * (1 + 1e-6), method


def _transport_optimum(costs, demand, fixed, capacity) -> float:
    """Capacitated optimum: every set of open sites with enough capacity, its transportation
    LP (scipy's HiGHS) on the user's costs."""
    n, s = costs.shape
    best = np.inf
    for k in range(1, s + 1):
        for subset in itertools.combinations(range(s), k):
            S = list(subset)
            if capacity[S].sum() < demand.sum():
                continue
            m = len(S)
            a_eq = np.kron(np.eye(n), np.ones(m))
            a_ub = np.kron(demand[None, :], np.eye(m))
            lp = linprog((demand[:, None] * costs[:, S]).ravel(), A_ub=a_ub, b_ub=capacity[S],
                         A_eq=a_eq, b_eq=np.ones(n), bounds=(0, 1), method="highs")
            if lp.status == 0:
                best = min(best, lp.fun + fixed[S].sum())
    return float(best)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", ["forbidden", "wide"])
def test_capacitated_direct_solve_is_certified_at_the_optimum(seed, kind):
    costs, demand, rng = _instance(seed, kind)
    s = costs.shape[1]
    fixed = rng.integers(1, 30, s).astype(float)
    capacity = rng.integers(3, 15, s).astype(float)
    if capacity.sum() < demand.sum():
        capacity *= demand.sum() / capacity.sum() + 1
    optimum = _transport_optimum(costs, demand, fixed, capacity)
    res = aidopt.solve_facility_location(costs, fixed_costs=fixed, demand=demand,
                                         capacity=capacity, aid=False, log=False)
    shares = res.solution["shares"]
    true = float((demand[:, None] * costs * shares).sum() + fixed[res.solution["open"]].sum())
    assert res.objective == pytest.approx(true, rel=1e-9)
    assert res.certified
    assert true == pytest.approx(optimum, rel=1e-6)


def test_capacitated_zero_demand_customer_goes_to_an_open_site():
    rng = np.random.default_rng(3)
    costs = rng.integers(1, 50, (8, 4)).astype(float)
    demand = np.array([2, 0, 3, 1, 0, 2, 2, 1], dtype=float)
    fixed = np.array([1000.0, 5.0, 6.0, 7.0])  # site 0 is dear: it stays closed
    capacity = np.full(4, 6.0)
    res = aidopt.solve_facility_location(costs, fixed_costs=fixed, demand=demand,
                                         capacity=capacity, aid=False, log=False)
    open_sites = set(res.solution["open"].tolist())
    assert 0 not in open_sites
    assert set(res.solution["assign"].tolist()) <= open_sites
    assert res.certified
    assert res.objective == pytest.approx(_transport_optimum(costs, demand, fixed, capacity))
    assert res.solution["shares"].sum(axis=1) == pytest.approx(np.ones(8))


def test_bound_costs_keeps_the_optimum_and_lowers_every_cost_it_changes():
    rng = np.random.default_rng(0)
    costs = rng.integers(1, 100, (9, 6)).astype(float)
    costs[rng.random((9, 6)) < 0.3] = 1e13
    costs[np.arange(9), rng.integers(0, 6, 9)] = rng.integers(1, 100, 9)
    data = as_facility_data(costs, p=2)
    bounded = bound_costs(data, upper=brute_force(costs, 2) * 1.2)
    assert bounded.raw_costs is costs or np.array_equal(bounded.raw_costs, costs)
    assert np.all(bounded.costs <= costs)
    assert bounded.costs.max() < 1e4  # the huge costs no longer set the scale
    assert bounded.integral  # integer costs stay integers (a bound may still be rounded up)
    assert np.array_equal(bounded.costs, np.round(bounded.costs))
    # the cheapest site of every customer among any open set stays the cheapest
    assert np.array_equal(np.argsort(bounded.costs, axis=1, kind="stable")[:, 0],
                          np.argsort(costs, axis=1, kind="stable")[:, 0])
    assert brute_force(bounded.costs, 2) == brute_force(costs, 2)
