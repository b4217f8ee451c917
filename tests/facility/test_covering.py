"""The covering models (MCLP, LSCP): exact answers against brute force over every site subset,
coordinates against cost matrices, the exact aggregation, bad input refused before any solve."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from aidopt.api.facility import solve_facility_location
from aidopt.data.coverage import aggregate_rows, coverage_sets, drop_dominated
from aidopt.data.facility import EuclideanCosts, euclidean_costs


# --------------------------------------------------------------------------- brute force
def covered_weight(C, radius, w, open_sites):
    if not len(open_sites):
        return 0.0
    return float(w[(C[:, list(open_sites)] <= radius).any(axis=1)].sum())


def brute_mclp(C, radius, w, p, fixed_open=()):
    s = C.shape[1]
    rest = [j for j in range(s) if j not in fixed_open]
    best = -1.0
    for extra in itertools.combinations(rest, p - len(fixed_open)):
        best = max(best, covered_weight(C, radius, w, (*fixed_open, *extra)))
    return best


def brute_lscp(C, radius, f, fixed_open=()):
    s = C.shape[1]
    rest = [j for j in range(s) if j not in fixed_open]
    best = np.inf
    for k in range(len(rest) + 1):
        for extra in itertools.combinations(rest, k):
            chosen = [*fixed_open, *extra]
            if chosen and (C[:, chosen] <= radius).any(axis=1).all():
                best = min(best, float(f[chosen].sum()))
    return best


def instance(seed, n=18, s=8, duplicates=True):
    """Random points and sites in the unit square; some points repeated (exact duplicates)."""
    rng = np.random.default_rng(seed)
    pts = rng.random((n, 2))
    if duplicates:
        pts = np.concatenate([pts, pts[rng.integers(0, n, size=n // 3)]])
    sites = rng.random((s, 2))
    return rng, pts, sites, euclidean_costs(pts, sites)


# --------------------------------------------------------------------------- MCLP
@pytest.mark.parametrize("seed", range(24))
def test_mclp_matches_brute_force(seed):
    rng, pts, sites, C = instance(seed)
    n, s = C.shape
    radius = float(np.quantile(C, rng.uniform(0.05, 0.35)))
    p = int(rng.integers(1, 4))
    w = None
    if seed % 3 == 1:
        w = rng.integers(0, 6, size=n).astype(float)  # integer weights, some zero
        w[0] = max(w[0], 1.0)
    elif seed % 3 == 2:
        w = rng.uniform(0.1, 3.0, size=n)  # fractional weights
    fixed = ()
    if seed % 4 == 3:
        fixed = tuple(sorted(rng.choice(s, size=int(rng.integers(1, p + 1)), replace=False).tolist()))
    weights = np.ones(n) if w is None else w
    res = solve_facility_location(C, p=p, model="mclp", radius=radius, demand=w,
                                  fixed_open=list(fixed) or None, log=False)
    best = brute_mclp(C, radius, weights, p, fixed)
    assert res.termination.value == "certified_optimal"
    open_ = res.solution["open"]
    assert all(type(j) is int for j in open_)
    assert len(open_) == p and set(fixed) <= set(open_)
    # the returned sites cover what brute force finds best; objective = uncovered weight
    assert covered_weight(C, radius, weights, open_) == pytest.approx(best, rel=1e-9, abs=1e-9)
    assert res.solution["covered"] == pytest.approx(best, rel=1e-9, abs=1e-9)
    assert res.objective == pytest.approx(weights.sum() - best, rel=1e-9, abs=1e-9)
    assert res.lower_bound <= res.objective + 1e-9
    assert res.dimensions["rows"] == res.solution["rows"] <= n


def test_mclp_fixed_open_covers_everything():
    """Every point covered by the forced sites: a model without rows, still certified."""
    _, pts, sites, C = instance(5)
    res = solve_facility_location(C, p=len(sites), model="mclp", radius=2.0,
                                  fixed_open=[0], log=False)
    assert res.termination.value == "certified_optimal"
    assert res.objective == 0.0 and res.solution["covered"] == C.shape[0]
    assert res.solution["rows"] == 0 and len(res.solution["open"]) == len(sites)


def test_mclp_uncoverable_points_count_as_uncovered():
    C = np.array([[1.0, 5.0], [5.0, 1.0], [9.0, 9.0]])
    res = solve_facility_location(C, p=1, model="mclp", radius=2.0, demand=[1, 3, 10], log=False)
    assert res.termination.value == "certified_optimal"
    assert res.solution["open"] == [1]
    assert res.objective == 11.0 and res.solution["covered"] == 3.0


# --------------------------------------------------------------------------- LSCP
@pytest.mark.parametrize("seed", range(24))
def test_lscp_matches_brute_force(seed):
    rng, pts, sites, C = instance(100 + seed)
    n, s = C.shape
    radius = float(C.min(axis=1).max() * rng.uniform(1.0, 1.8))  # every point coverable
    f = None if seed % 2 == 0 else rng.integers(1, 9, size=s).astype(float)
    if seed % 6 == 5:
        f = rng.uniform(0.5, 4.0, size=s)
    fixed = ()
    if seed % 4 == 3:
        fixed = (int(rng.integers(0, s)),)
    costs = np.ones(s) if f is None else f
    res = solve_facility_location(C, model="lscp", radius=radius, fixed_costs=f,
                                  fixed_open=list(fixed) or None, log=False)
    best = brute_lscp(C, radius, costs, fixed)
    assert res.termination.value == "certified_optimal"
    open_ = res.solution["open"]
    assert all(type(j) is int for j in open_) and set(fixed) <= set(open_)
    assert (C[:, open_] <= radius).any(axis=1).all()
    assert res.objective == pytest.approx(best, rel=1e-9)
    assert float(costs[open_].sum()) == pytest.approx(best, rel=1e-9)
    assert res.solution["n_open"] == len(open_)


def test_lscp_fixed_open_covers_everything():
    _, pts, sites, C = instance(7)
    res = solve_facility_location(C, model="lscp", radius=2.0, fixed_open=[3], log=False)
    assert res.termination.value == "certified_optimal"
    assert res.solution["open"] == [3] and res.objective == 1.0


# --------------------------------------------------------------------------- coordinates
@pytest.mark.parametrize("round_to", [None, 0, 1])
def test_coverage_from_coordinates_matches_matrix(round_to):
    rng = np.random.default_rng(3)
    pts, sites = rng.random((300, 2)) * 20, rng.random((40, 2)) * 20
    oracle = EuclideanCosts(pts, sites, round_to=round_to, rounding="floor")
    C = oracle.rows(np.arange(len(pts)))  # the oracle's own numbers, as a matrix
    radius = float(np.quantile(C, 0.1)) if round_to is None else 3.0  # ties at R when rounded
    a, b = coverage_sets(C, radius), coverage_sets(oracle, radius)
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.sites, b.sites)
    if round_to is not None:
        assert (C == radius).any()  # the boundary is exercised


@pytest.mark.parametrize("model", ["mclp", "lscp"])
def test_solve_from_coordinates_agrees_with_matrix(model):
    rng = np.random.default_rng(11)
    pts, sites = rng.random((120, 2)), rng.random((15, 2))
    oracle = EuclideanCosts(pts, sites)
    C = oracle.rows(np.arange(len(pts)))
    kw = dict(p=3) if model == "mclp" else {}
    radius = 0.2 if model == "mclp" else float(C.min(axis=1).max() * 1.2)
    a = solve_facility_location(C, model=model, radius=radius, log=False, **kw)
    b = solve_facility_location(oracle, model=model, radius=radius, log=False, **kw)
    assert a.termination.value == b.termination.value == "certified_optimal"
    assert a.objective == b.objective
    assert a.solution["rows"] == b.solution["rows"]


# --------------------------------------------------------------------------- aggregation
def test_aggregation_merges_equal_sets_and_sums_weights():
    C = np.array([[1.0, 9.0, 1.0], [1.0, 9.0, 1.0], [9.0, 1.0, 9.0], [1.0, 9.0, 1.0], [9.0, 9.0, 9.0]])
    cov = coverage_sets(C, 2.0)
    rows = aggregate_rows(cov, np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    assert rows.n_rows == 2
    assert rows.members.tolist() == [0, 0, 1, 0, -1]  # the last point covers nothing
    assert rows.weight.tolist() == [7.0, 3.0]
    assert rows.row(0).tolist() == [0, 2] and rows.row(1).tolist() == [1]


def test_dominated_rows_dropped():
    C = np.array([[1.0, 9.0, 9.0], [1.0, 1.0, 9.0], [1.0, 1.0, 1.0], [9.0, 9.0, 1.0]])
    rows, dropped = drop_dominated(aggregate_rows(coverage_sets(C, 2.0)))
    assert dropped == 2  # {0, 1} and {0, 1, 2} contain {0}
    assert [rows.row(r).tolist() for r in range(rows.n_rows)] == [[0], [2]]
    assert rows.members.tolist() == [0, -1, -1, 1]


# --------------------------------------------------------------------------- time limit
def test_time_limit_during_the_coverage_computation():
    _, _, _, C = instance(2)
    res = solve_facility_location(C, p=2, model="mclp", radius=0.3, time_limit=1e-9, log=False)
    assert res.termination.value == "time_limit"
    assert not res.certified


# --------------------------------------------------------------------------- bad input
# no_solve: tests/facility/conftest.py

C0 = np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 4.0], [5.0, 3.0, 1.0], [2.0, 2.0, 9.0]])


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(model="mclp", p=1, radius=0.0), "radius must be a positive finite number"),
    (dict(model="mclp", p=1, radius=-1.0), "radius must be a positive finite number"),
    (dict(model="lscp", radius=float("inf")), "radius must be a positive finite number"),
    (dict(model="lscp", radius=float("nan")), "radius must be a positive finite number"),
    (dict(model="lscp", radius="2"), "radius must be a positive finite number"),
    (dict(model="lscp", radius=True), "radius must be a positive finite number"),
    (dict(model="mclp", p=4, radius=2.0), "p must be an integer between 1 and the number of sites"),
    (dict(model="mclp", p=0, radius=2.0), "p must be an integer between 1"),
    (dict(model="mclp", p=1.5, radius=2.0), "p must be an integer"),
    (dict(model="mclp", radius=2.0), "needs p"),
    (dict(model="mclp", p=1, radius=2.0, fixed_open=[0, 1]), "more than p"),
    (dict(model="mclp", p=2, radius=2.0, fixed_open=[3]), "site index 3 is not in 0..2"),
    (dict(model="mclp", p=2, radius=2.0, fixed_open=[-1]), "site index -1"),
    (dict(model="mclp", p=2, radius=2.0, fixed_open=[0.5]), "fixed_open must be a list of site"),
    (dict(model="mclp", p=2, radius=2.0, fixed_costs=[1, 1, 1]), "takes no fixed_costs"),
    (dict(model="mclp", p=2, radius=2.0, demand=[1, 1, -1, 1]), "non-negative"),
    (dict(model="mclp", p=2, radius=2.0, demand=[0, 0, 0, 0]), "total demand is 0"),
    (dict(model="mclp", p=2, radius=2.0, capacity=[9, 9, 9]), "takes no capacity"),
    (dict(model="lscp", radius=2.0, p=2), "takes no p"),
    (dict(model="lscp", radius=2.0, demand=[1, 1, 1, 1]), "takes no demand"),
    (dict(model="lscp", radius=1.5), r"demand point\(s\) 3 have no candidate site within radius 1.5"),
    (dict(model="mclp", p=1), "needs a coverage radius"),
    (dict(model="lscp"), "needs a coverage radius"),
    (dict(p=1, radius=2.0), "radius is the coverage radius of the covering models"),
    (dict(p=1, model="p-median", radius=2.0), "radius is the coverage radius"),
    (dict(p=1, fixed_open=[0, 1]), "more than p = 1"),
    (dict(p=1, model="pmedian"), "model must be one of"),
    (dict(model="ufl", p=1), "model='ufl' needs fixed_costs"),
    (dict(model="p-median", fixed_costs=[1, 1, 1]), "model='p-median' needs p"),
])
def test_bad_input_refused_before_any_solve(no_solve, kwargs, message):
    with pytest.raises(ValueError, match=message):
        solve_facility_location(C0, log=False, **kwargs)


def test_lscp_error_names_every_uncoverable_point(no_solve):
    C = np.full((15, 2), 9.0)
    C[0, 0] = 1.0
    with pytest.raises(ValueError, match=r"1, 2, 3, .*, 10 and 4 more"):
        solve_facility_location(C, model="lscp", radius=2.0, log=False)


def test_pmedian_calls_unchanged():
    """No ``model``: the p-median and UFL as before (the same answer as model='p-median')."""
    _, _, _, C = instance(4, duplicates=False)
    a = solve_facility_location(C, p=2, log=False)
    b = solve_facility_location(C, p=2, model="p-median", log=False)
    assert a.certified and b.certified
    assert a.objective == pytest.approx(b.objective)
    assert list(a.solution["open"]) == list(b.solution["open"])


# --------------------------------------------------------------------------- spopt
def test_against_spopt():
    """spopt's MCLP and LSCP (PuLP + CBC) on a small instance, when spopt is installed."""
    spopt_locate = pytest.importorskip("spopt.locate")
    pulp = pytest.importorskip("pulp")
    rng = np.random.default_rng(21)
    pts, sites = rng.random((30, 2)), rng.random((8, 2))
    C = euclidean_costs(pts, sites)
    w = rng.integers(1, 5, size=30).astype(float)
    mclp = spopt_locate.MCLP.from_cost_matrix(C, w, service_radius=0.25, p_facilities=3)
    mclp = mclp.solve(pulp.PULP_CBC_CMD(msg=False))
    ours = solve_facility_location(C, p=3, model="mclp", radius=0.25, demand=w, log=False)
    assert ours.solution["covered"] == pytest.approx(pulp.value(mclp.problem.objective))
    radius = float(C.min(axis=1).max() * 1.1)
    lscp = spopt_locate.LSCP.from_cost_matrix(C, service_radius=radius)
    lscp = lscp.solve(pulp.PULP_CBC_CMD(msg=False))
    ours = solve_facility_location(C, model="lscp", radius=radius, log=False)
    assert ours.objective == pytest.approx(pulp.value(lscp.problem.objective))


# --------------------------------------------------------------------------- CLI
def test_cli_covering(tmp_path, capsys):
    from aidopt.cli.main import main

    path = tmp_path / "pts.csv"
    np.savetxt(path, [[0, 0], [1, 0], [0, 1], [5, 5], [5, 6], [9, 9]], delimiter=",")
    assert main(["facility", "--coords", str(path), "--model", "mclp", "--radius", "1.5",
                 "--p", "2", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "open sites (2)" in out and "covered demand: 5 (uncovered 1)" in out
    assert main(["facility", "--coords", str(path), "--model", "lscp", "--radius", "1.5",
                 "--fixed-open", "5", "--quiet"]) == 0
    assert "open sites (3)" in capsys.readouterr().out
    assert main(["facility", "--coords", str(path), "--radius", "1.5", "--p", "2",
                 "--quiet"]) == 2


def test_coverage_from_a_graph_matches_its_matrix():
    nx = pytest.importorskip("networkx")
    from aidopt.data.facility import GraphCosts, graph_costs

    g = nx.grid_2d_graph(6, 6)
    rng = np.random.default_rng(0)
    for u, v in g.edges:
        g.edges[u, v]["weight"] = float(rng.integers(1, 5))
    sites = list(g.nodes)[::4]
    a = coverage_sets(graph_costs(g, sites=sites), 4.0)
    b = coverage_sets(GraphCosts(g, sites=sites), 4.0)
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.sites, b.sites)
    res = solve_facility_location(GraphCosts(g, sites=sites), p=2, model="mclp", radius=4.0,
                                  log=False)
    assert res.termination.value == "certified_optimal"


@pytest.mark.parametrize("option", [{"aggregation": "sites"}, {"improve": 1}, {"far": True}])
def test_aid_options_are_refused_for_covering_models(option):
    costs = np.random.default_rng(0).random((20, 5))
    with pytest.raises(ValueError, match="do\\(es\\) not apply"):
        solve_facility_location(costs, p=2, model="mclp", radius=0.5, log=False, **option)
