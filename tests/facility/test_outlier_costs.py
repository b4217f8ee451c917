"""One huge cost (a forbidden customer-site pair) must neither certify a dearer answer nor make
the branch and cut return something dearer than its own start; an infinite time limit runs."""
import itertools

import numpy as np
import pytest

import aidopt
from aidopt.data import euclidean_costs


def brute_force(C, p):
    return min(C[:, list(S)].min(axis=1).sum() for S in itertools.combinations(range(C.shape[1]), p))


def instance():
    rng = np.random.default_rng(5)
    return euclidean_costs(rng.uniform(size=(40, 2)), rng.uniform(size=(15, 2)))


@pytest.mark.parametrize("kw", [{}, {"solver": "highs"}, {"aggregation": "sites"}])
def test_forbidden_pair_does_not_loosen_the_certificate(kw):
    C = instance()
    C[0, 0] = 1e12  # customer 0 may not use site 0
    best = brute_force(C, 3)
    res = aidopt.solve_facility_location(C, p=3, time_limit=60, **kw)
    assert res.lower_bound <= best * (1 + 1e-9)
    if res.certified:  # a certificate at tol 1e-6 puts the answer within 1e-6 of the optimum
        assert res.objective <= best * (1 + 2e-6)
    # the earlier floor (1e-6 x the cost at every customer's dearest site) was 1e6 here:
    # the gap reported must be relative to the objective
    assert res.gap == pytest.approx((res.objective - res.lower_bound) / res.objective, abs=1e-12)


def test_branch_and_cut_never_returns_worse_than_its_start():
    C = instance()
    C[:, 0] = 1e9  # one site nobody should open; SCIP's scaled costs fall below its tolerances
    best = brute_force(C, 3)
    res = aidopt.solve_facility_location(C, p=3, time_limit=60)
    assert res.objective == pytest.approx(best, rel=1e-9)
    assert 0 not in set(res.solution["open"].tolist())


def test_infinite_time_limit_runs():
    C = instance()
    res = aidopt.solve_facility_location(C, p=3, time_limit=float("inf"))
    assert res.certified
    assert res.objective == pytest.approx(brute_force(C, 3), rel=1e-9)


@pytest.mark.parametrize("kw, match", [
    ({"solver": "highs", "branching": "bogus"}, "branching"),
    ({"max_children": 0}, "max_children"),
    ({"far_factor": -1}, "far_factor"),
    ({"aggregation": "sites", "lp_rounds": -5}, "lp_rounds"),
    ({"grow": 0.5}, "grow"),
])
def test_options_the_chosen_method_does_not_use_are_checked_too(kw, match):
    C = np.random.default_rng(0).random((12, 6))
    with pytest.raises(ValueError, match=match):
        aidopt.solve_facility_location(C, p=2, **kw)


def test_costs_above_what_highs_accepts_are_refused_before_solving():
    C = instance()
    C[0, 0] = 1e16  # crashed inside the cut LP ("weights and list don't have the same length")
    with pytest.raises(ValueError, match="below 1e\\+15"):
        aidopt.solve_facility_location(C, p=3)
