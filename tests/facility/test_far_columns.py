"""Far columns (``far=True``) never end a run without a certificate it could have: a UFL whose
far prices undercut every opening cost (the aggregated MIP opens nothing) and a p-median whose far
columns still bind at the trivial partition both certify the direct MIP's optimum."""

from __future__ import annotations

import numpy as np
import pytest

import aidopt


def _ufl_expensive_openings(seed):
    rng = np.random.default_rng(seed)
    n, s = rng.integers(2, 60), rng.integers(2, 30)
    xy, sxy = rng.uniform(0, 100, (n, 2)), rng.uniform(0, 100, (s, 2))
    D = np.sqrt(((xy[:, None] - sxy[None]) ** 2).sum(-1))
    f = np.full(s, float(rng.choice([1e3, 1e5, 1e7])))
    return D, f, float(rng.choice([0.05, 0.2, 0.5]))


# these raised "the aggregated MIP opened no cluster"
@pytest.mark.parametrize("seed", [147, 159, 163, 174, 175])
def test_ufl_whose_far_columns_undercut_every_opening_certifies(seed):
    D, f, r0 = _ufl_expensive_openings(seed)
    ref = aidopt.solve_facility_location(D, fixed_costs=f, aid=False, log=False)
    r = aidopt.solve_facility_location(D, fixed_costs=f, aggregation="sites", far=True, r0=r0,
                                       log=False)
    assert r.termination == "certified_optimal", r.message
    assert abs(r.objective - ref.objective) <= 1e-9 * ref.objective


# these ended gap_tolerance: at the trivial partition a far column still bound after one rebuild
@pytest.mark.parametrize("seed", [0, 13])
def test_p_median_far_columns_rebuilt_until_none_binds(seed):
    rng = np.random.default_rng(seed)
    n, s, p = rng.integers(10, 40), rng.integers(5, 15), int(rng.integers(1, 4))
    D = rng.integers(0, 50, (n, s)).astype(float)
    ref = aidopt.solve_facility_location(D, p=p, aid=False, log=False)
    r = aidopt.solve_facility_location(D, p=p, aggregation="sites", far=True, log=False)
    assert r.termination == "certified_optimal", r.message
    assert r.objective == ref.objective
