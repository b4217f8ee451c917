"""MCLP and LSCP through the dask engine: the same answer as in memory (several seeds, both
models, weights, forced sites, every input kind), the points' checks with their global indices,
the time limit, and a memory peak far below the n x s matrix."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

import aidopt  # noqa: E402
from aidopt.bench.covering import covering_points, covering_sites, write_points  # noqa: E402
from aidopt.data.facility import EuclideanCosts  # noqa: E402


def instance(seed, n=1500, s=25):
    kind = "clustered" if seed % 2 else "uniform"
    return covering_points(n, kind, seed), covering_sites(kind, seed, s)


def both(pts, sites, chunks=331, demand=None, dask_demand=False, **kw):
    """The in-memory answer (coordinates as an oracle) and the dask engine's (a dask array)."""
    a = aidopt.solve_facility_location(EuclideanCosts(pts, sites), demand=demand, log=False, **kw)
    d = da.from_array(demand, chunks=chunks) if dask_demand else demand
    b = aidopt.solve_facility_location(customer_xy=da.from_array(pts, chunks=(chunks, 2)),
                                       site_xy=sites, demand=d, log=False, **kw)
    return a, b


def assert_same(a, b):
    assert a.termination.value == b.termination.value == "certified_optimal"
    assert a.objective == b.objective
    # the rows' fractional weights are summed chunk by chunk in one and at once in the other: the
    # MCLP's bound (a Lagrangian bound, a MIP's dual bound on those weights) may differ in the
    # last bits
    assert a.lower_bound == pytest.approx(b.lower_bound, rel=1e-12, abs=1e-12)
    assert a.solution["open"] == b.solution["open"]
    assert a.solution["rows"] == b.solution["rows"]
    assert b.dimensions["data_passes"] >= 2


@pytest.mark.parametrize("seed", range(6))
def test_mclp_dask_equals_memory(seed):
    rng = np.random.default_rng(seed)
    pts, sites = instance(seed)
    demand = None
    if seed % 3 == 1:
        demand = rng.integers(0, 5, size=len(pts)).astype(float)
    elif seed % 3 == 2:
        demand = rng.uniform(0.1, 3.0, size=len(pts))
    fixed = sorted(rng.choice(len(sites), size=2, replace=False).tolist()) if seed >= 3 else None
    a, b = both(pts, sites, demand=demand, dask_demand=seed == 4, model="mclp", p=4,
                radius=0.12, fixed_open=fixed)
    assert_same(a, b)
    assert a.solution["covered"] == pytest.approx(b.solution["covered"], rel=1e-12)
    # the uncovered weight, recomputed from the dense matrix
    C = EuclideanCosts(pts, sites).rows(np.arange(len(pts)))
    w = np.ones(len(pts)) if demand is None else demand
    hit = (C[:, b.solution["open"]] <= 0.12).any(axis=1)
    assert b.objective == pytest.approx(float(w[~hit].sum()), rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_lscp_dask_equals_memory(seed):
    rng = np.random.default_rng(10 + seed)
    pts, sites = instance(10 + seed, n=1200, s=20)
    C = EuclideanCosts(pts, sites).rows(np.arange(len(pts)))
    radius = float(C.min(axis=1).max() * 1.05)
    f = rng.integers(1, 6, size=len(sites)).astype(float) if seed % 2 else None
    fixed = [int(rng.integers(0, len(sites)))] if seed >= 2 else None
    a, b = both(pts, sites, chunks=250, model="lscp", radius=radius, fixed_costs=f,
                fixed_open=fixed)
    assert_same(a, b)
    assert (C[:, b.solution["open"]] <= radius).any(axis=1).all()


def test_npy_path_and_defaults(tmp_path):
    """A .npy path with engine=None takes the dask engine; its chunks are chosen by aidopt."""
    path = write_points(tmp_path / "pts.npy", 2500, "clustered", seed=7)
    sites = covering_sites("clustered", 7, 30)
    pts = np.load(path)
    a = aidopt.solve_facility_location(EuclideanCosts(pts, sites), model="mclp", p=3,
                                       radius=0.1, log=False)
    b = aidopt.solve_facility_location(customer_xy=path, site_xy=sites, model="mclp", p=3,
                                       radius=0.1, log=False)
    assert_same(a, b)
    assert "dask engine" in b.message and "dask engine" not in a.message
    c = aidopt.solve_facility_location(customer_xy=pts, site_xy=sites, model="mclp", p=3,
                                       radius=0.1, engine="dask", log=False)
    assert_same(a, c)


def test_points_checked_with_global_indices():
    pts, sites = instance(1, n=900, s=10)
    xy = da.from_array(pts, chunks=(200, 2))
    demand = np.ones(900)
    demand[517] = -1.0
    with pytest.raises(ValueError, match=r"demand must be non-negative"):
        aidopt.solve_facility_location(customer_xy=xy, site_xy=sites, model="mclp", p=2,
                                       radius=0.1, demand=demand, log=False)
    with pytest.raises(ValueError, match=r"demand\[517\] = -1.0"):
        aidopt.solve_facility_location(customer_xy=xy, site_xy=sites, model="mclp", p=2,
                                       radius=0.1, demand=da.from_array(demand, chunks=200),
                                       log=False)
    with pytest.raises(ValueError, match="total demand is 0"):
        aidopt.solve_facility_location(customer_xy=xy, site_xy=sites, model="mclp", p=2,
                                       radius=0.1, demand=da.zeros(900, chunks=300), log=False)
    far = pts.copy()
    far[[450, 899]] = 50.0  # no site near them (points 450 and 899: the 3rd and 5th chunks)
    with pytest.raises(ValueError, match=r"demand point\(s\) 450, 899 have no candidate site"):
        aidopt.solve_facility_location(customer_xy=da.from_array(far, chunks=(200, 2)),
                                       site_xy=sites, model="lscp", radius=0.5, log=False)
    bad = pts.copy()
    bad[333, 0] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        aidopt.solve_facility_location(customer_xy=da.from_array(bad, chunks=(200, 2)),
                                       site_xy=sites, model="lscp", radius=0.5, log=False)


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(p=2), "offered by the covering models"),
    (dict(model="p-center", p=2), "offered by the covering models"),
    (dict(model="mclp", p=2, radius=0.1, costs=np.ones((5, 3))), "with costs=None"),
    (dict(model="mclp", p=2, radius=0.1, site_xy=np.ones((3, 3))), "site_xy must be an"),
    (dict(model="lscp", radius=0.1, site_xy=None), "with costs=None"),
])
def test_dask_engine_refused_where_it_does_not_apply(kwargs, message):
    kwargs = {"customer_xy": da.zeros((5, 2), chunks=(2, 2)), "site_xy": np.zeros((3, 2)),
              "engine": "dask", **kwargs}
    with pytest.raises(ValueError, match=message):
        aidopt.solve_facility_location(log=False, **kwargs)


def test_time_limit_counts_the_streamed_coverage():
    pts, sites = instance(2)
    res = aidopt.solve_facility_location(customer_xy=da.from_array(pts, chunks=(300, 2)),
                                         site_xy=sites, model="mclp", p=2, radius=0.1,
                                         time_limit=1e-9, log=False)
    assert res.termination.value == "time_limit" and not res.certified


def test_memory_far_below_the_matrix():
    """n = 100,000 points x 1,000 sites (an n x s float matrix: 800 MB): the traced peak of the
    streamed solve, after a warm-up, stays below 2.5 % of it (chunks of 10,000 points; measured
    about 10 MB)."""
    n, s = 100_000, 1000
    sites = covering_sites("uniform", 0, s)
    pts = covering_points(n, "uniform", 0)
    kw = dict(site_xy=sites, model="mclp", p=1, radius=0.015, fixed_open=[0], log=False)
    aidopt.solve_facility_location(customer_xy=da.from_array(pts[:2000], chunks=(500, 2)), **kw)
    xy = da.from_array(pts, chunks=(10_000, 2))
    tracemalloc.start()
    try:
        res = aidopt.solve_facility_location(customer_xy=xy, **kw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.termination.value == "certified_optimal"
    assert peak < 0.025 * n * s * 8, peak
