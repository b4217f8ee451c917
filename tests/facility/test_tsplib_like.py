"""The TSPLIB-like point sets (instances no run was tuned on) and their bench names."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from aidopt.instances.facility import tsplib_like_points

import aidopt
from aidopt.bench.facility import load_instance
from aidopt.data.facility import euclidean_costs


@pytest.mark.parametrize("kind", ["uniform", "clustered", "lattice"])
def test_points_are_seeded_and_of_their_kind(kind):
    xy = tsplib_like_points(kind, 500)
    assert xy.shape == (500, 2) and np.isfinite(xy).all()
    assert np.array_equal(xy, tsplib_like_points(kind, 500))
    assert not np.array_equal(xy, tsplib_like_points(kind, 500, seed=8))
    if kind == "lattice":  # distinct lattice points at spacing 100: many equal distances
        assert np.array_equal(xy, np.round(xy / 100) * 100)
        assert len(np.unique(xy, axis=0)) == 500
        d = np.floor(euclidean_costs(xy))
        assert len(np.unique(d)) < d.size / 500  # 252 values for 250,000 pairs (uniform: 11,411)


def test_bad_kind_and_size_are_refused():
    with pytest.raises(ValueError, match="kind must be"):
        tsplib_like_points("grid", 10)
    with pytest.raises(ValueError, match="positive integer"):
        tsplib_like_points("uniform", 0)


def test_bench_name_solves_to_the_brute_force_optimum():
    inst = load_instance("lattice-40-p3")
    C, p = inst["costs"], inst["p"]
    assert C.shape == (40, 40) and p == 3 and np.array_equal(C, C.T)
    best = min(C[:, list(s)].min(axis=1).sum() for s in itertools.combinations(range(40), 3))
    res = aidopt.solve_facility_location(C, p=p, log=False)
    assert res.certified and res.objective == pytest.approx(best)
