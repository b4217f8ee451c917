"""The p-center and the p-dispersion: exact answers against brute force over every p-subset,
the certificate's levels checked independently, coordinates against matrices, the sampled
level path, the clique cover, bad input refused before any solve, the CLI."""

from __future__ import annotations

import itertools

import aidopt.decomposition.levels as search_module
import numpy as np
import pytest

import aidopt.data.levels as levels_module
from aidopt.api.facility import solve_facility_location
from aidopt.data.facility import EuclideanCosts, euclidean_costs
from aidopt.data.levels import DistanceRows, clique_cover


# --------------------------------------------------------------------------- brute force
def center_radius(C, w, S):
    return float((C[:, list(S)].min(axis=1) * w).max())


def brute_center(C, w, p, fixed=()):
    rest = [j for j in range(C.shape[1]) if j not in fixed]
    return min(center_radius(C, w, (*fixed, *extra))
               for extra in itertools.combinations(rest, p - len(fixed)))


def dispersion(M, S):
    return float(min(M[a, b] for a, b in itertools.combinations(sorted(S), 2)))


def brute_dispersion(M, p, fixed=()):
    rest = [j for j in range(M.shape[0]) if j not in fixed]
    return max(dispersion(M, (*fixed, *extra))
               for extra in itertools.combinations(rest, p - len(fixed)))


def center_instance(seed, n=16, s=8):
    rng = np.random.default_rng(seed)
    pts, sites = rng.random((n, 2)), rng.random((s, 2))
    C = euclidean_costs(pts, sites, round_to=1 if seed % 5 == 4 else None)  # ties when rounded
    return rng, pts, sites, C


# --------------------------------------------------------------------------- p-center
@pytest.mark.parametrize("seed", range(24))
def test_p_center_matches_brute_force(seed):
    rng, pts, sites, C = center_instance(seed)
    n, s = C.shape
    p = int(rng.integers(1, 5))
    w = None
    if seed % 3 == 1:
        w = rng.integers(1, 5, size=n).astype(float)
    elif seed % 3 == 2:
        w = rng.uniform(0.2, 3.0, size=n)
        w[rng.integers(0, n)] = 0.0  # a point that never binds
    fixed = ()
    if seed % 4 == 3:
        fixed = tuple(sorted(rng.choice(s, size=int(rng.integers(1, p + 1)), replace=False).tolist()))
    weights = np.ones(n) if w is None else w
    res = solve_facility_location(C, p=p, model="p-center", demand=w,
                                  fixed_open=list(fixed) or None, log=False)
    best = brute_center(C, weights, p, fixed)
    assert res.termination.value == "certified_optimal"
    open_ = res.solution["open"]
    assert all(type(j) is int for j in open_)
    assert len(open_) == p and set(fixed) <= set(open_)
    assert center_radius(C, weights, open_) == best  # the same float: a level of the data
    assert res.objective == res.lower_bound == res.solution["radius"] == best
    # each point is assigned to its nearest open site
    assign = res.solution["assign"]
    assert np.array_equal(C[np.arange(n), assign], C[:, open_].min(axis=1))
    # the certificate's level below is infeasible and no level lies between the two
    search = res.solution["search"]
    assert search["optimal_level"] == best
    W = C * weights[:, None]
    below = search["infeasible_level"]
    if below is None:  # every smaller radius leaves some point without a site
        assert best == W.min(axis=1).max()
    else:
        assert below < best and not ((W > below) & (W < best)).any()
        assert brute_center(C, weights, p, fixed) > below


def test_p_center_with_every_site_is_the_nearest_site_bound():
    _, _, _, C = center_instance(1)
    res = solve_facility_location(C, p=C.shape[1], model="p-center", log=False)
    assert res.certified and res.objective == C.min(axis=1).max()
    assert res.solution["search"]["tests"] == 0


def test_p_center_fixed_open_equal_to_p():
    _, _, _, C = center_instance(2)
    res = solve_facility_location(C, p=2, model="p-center", fixed_open=[0, 5], log=False)
    assert res.certified and res.solution["open"] == [0, 5]
    assert res.objective == center_radius(C, np.ones(C.shape[0]), [0, 5])


@pytest.mark.parametrize("round_to", [None, 0])
def test_p_center_from_coordinates_agrees_with_matrix(round_to):
    rng = np.random.default_rng(8)
    pts, sites = rng.random((150, 2)) * 30, rng.random((20, 2)) * 30
    w = rng.uniform(0.5, 2.0, size=150)
    oracle = EuclideanCosts(pts, sites, round_to=round_to, rounding="floor")
    C = oracle.rows(np.arange(len(pts)))
    a = solve_facility_location(C, p=3, model="p-center", demand=w, log=False)
    b = solve_facility_location(oracle, p=3, model="p-center", demand=w, log=False)
    assert a.certified and b.certified
    assert a.objective == b.objective == center_radius(C, w, b.solution["open"])
    if round_to is None:  # the plain coordinates: the same oracle, built by the door
        c = solve_facility_location(None, p=3, model="p-center", demand=w, customer_xy=pts,
                                    site_xy=sites, log=False)
        assert c.certified and c.objective == a.objective
        assert c.solution["customer_xy"].shape == (150, 2)


def test_p_center_on_a_graph_with_zero_weights():
    nx = pytest.importorskip("networkx")
    from aidopt.data.facility import GraphCosts, graph_costs

    g = nx.grid_2d_graph(5, 5)
    rng = np.random.default_rng(3)
    for u, v in g.edges:
        g.edges[u, v]["weight"] = float(rng.integers(1, 6))
    sites = list(g.nodes)[::3]
    C = graph_costs(g, sites=sites)
    w = rng.integers(0, 4, size=C.shape[0]).astype(float)
    w[0] = 1.0
    a = solve_facility_location(GraphCosts(g, sites=sites), p=2, model="p-center", demand=w,
                                log=False)
    assert a.certified
    assert a.objective == brute_center(C, w, 2)
    assert "of weight 0 left out" in a.message


def test_sampled_levels_reach_the_same_optimum(monkeypatch):
    """More levels than the cap: the search tests sampled levels, with extra passes, and
    still ends certified at the brute-force optimum."""
    monkeypatch.setattr(levels_module, "LEVEL_CAP", 3)
    for seed in range(4):
        rng, _, _, C = center_instance(40 + seed)
        res = solve_facility_location(C, p=2, model="p-center", log=False)
        assert res.certified and res.objective == brute_center(C, np.ones(C.shape[0]), 2)
        M = euclidean_costs(rng.random((9, 2)))
        res = solve_facility_location(M, p=3, model="p-dispersion", log=False)
        assert res.certified and res.solution["dispersion"] == brute_dispersion(M, 3)


# --------------------------------------------------------------------------- p-dispersion
@pytest.mark.parametrize("seed", range(24))
def test_p_dispersion_matches_brute_force(seed):
    rng = np.random.default_rng(1000 + seed)
    s = int(rng.integers(7, 12))
    xy = rng.random((s, 2))
    M = euclidean_costs(xy, round_to=1 if seed % 5 == 4 else None)
    p = int(rng.integers(2, min(6, s) + 1))
    fixed = ()
    if seed % 3 == 2:
        fixed = tuple(sorted(rng.choice(s, size=int(rng.integers(1, p + 1)), replace=False).tolist()))
    via = seed % 4
    if via == 1:  # coordinates through site_xy
        res = solve_facility_location(None, p=p, model="p-dispersion", site_xy=xy,
                                      fixed_open=list(fixed) or None, log=False)
    else:
        res = solve_facility_location(M, p=p, model="p-dispersion",
                                      fixed_open=list(fixed) or None, log=False)
    if via == 1:
        M = EuclideanCosts(xy).rows(np.arange(s))  # the oracle's own distances
    best = brute_dispersion(M, p, fixed)
    assert res.termination.value == "certified_optimal"
    open_ = res.solution["open"]
    assert len(open_) == p and set(fixed) <= set(open_)
    assert dispersion(M, open_) == best == res.solution["dispersion"]
    assert res.objective == res.lower_bound == -best  # reported as a minimisation
    assert res.solution["upper_bound"] == best
    above = res.solution["search"]["infeasible_level"]
    pairs = M[np.triu_indices(s, 1)]
    if above is not None:  # the next larger distance is infeasible, none lies between
        assert above > best and not ((pairs > best) & (pairs < above)).any()


def test_p_dispersion_two_forced_sites_bound_it():
    rng = np.random.default_rng(5)
    M = euclidean_costs(rng.random((10, 2)))
    j, k = np.unravel_index(np.argmin(M + np.eye(10) * 9), M.shape)  # the closest pair
    res = solve_facility_location(M, p=4, model="p-dispersion", fixed_open=[int(j), int(k)],
                                  log=False)
    assert res.certified and res.solution["dispersion"] == M[j, k]
    assert "two forced sites" in res.solution["search"]["infeasible_proof"]


def test_p_dispersion_from_an_euclidean_oracle_uses_its_sites():
    rng = np.random.default_rng(6)
    pts, sites = rng.random((30, 2)), rng.random((10, 2))
    res = solve_facility_location(EuclideanCosts(pts, sites), p=3, model="p-dispersion", log=False)
    assert res.certified
    assert res.solution["dispersion"] == brute_dispersion(EuclideanCosts(sites).rows(np.arange(10)), 3)


def test_clique_cover_covers_every_edge_with_cliques():
    rng = np.random.default_rng(0)
    for _trial in range(20):
        m = int(rng.integers(2, 25))
        A = np.triu(rng.random((m, m)) < rng.uniform(0.05, 0.9), 1)
        A = A | A.T
        cliques = clique_cover(A)
        covered = np.zeros_like(A)
        for q in cliques:
            assert q.size >= 2 and np.all(np.diff(q) > 0)
            sub = A[np.ix_(q, q)]
            assert sub.sum() == q.size * (q.size - 1)  # a clique
            covered[np.ix_(q, q)] = True
            # maximal: no vertex outside is adjacent to all its members
            assert not np.all(A[:, q], axis=1)[np.setdiff1d(np.arange(m), q)].any()
        assert not (A & ~covered).any()


def test_levels_between_matches_numpy():
    rng = np.random.default_rng(2)
    C = np.round(rng.random((50, 7)) * 20)
    w = rng.uniform(0.5, 2, size=50)
    W = C * w[:, None]
    rows = DistanceRows(C, w)
    lo, hi = float(np.quantile(W, 0.2)), float(np.quantile(W, 0.7))
    for lc, hc in itertools.product([True, False], repeat=2):
        got, exact = rows.levels_between(lo, hi, lower_closed=lc, upper_closed=hc)
        mask = ((W >= lo) if lc else (W > lo)) & ((W <= hi) if hc else (W < hi))
        assert exact and np.array_equal(got, np.unique(W[mask]))
    sample, exact = rows.levels_between(lo, hi, lower_closed=True, upper_closed=True, cap=5)
    assert not exact and sample.size >= 1 and np.isin(sample, W).all()
    M = euclidean_costs(rng.random((12, 2)))
    got, _ = DistanceRows(M, pairs=True).levels_between(-1.0, 9.0, lower_closed=True,
                                                        upper_closed=True)
    assert np.array_equal(got, np.unique(M[np.triu_indices(12, 1)]))


# --------------------------------------------------------------------------- time limit
def test_time_limit_returns_the_heuristic_with_a_bound():
    rng = np.random.default_rng(9)
    C = euclidean_costs(rng.random((60, 2)), rng.random((25, 2)))
    res = solve_facility_location(C, p=4, model="p-center", time_limit=1e-9, log=False)
    assert res.termination.value == "time_limit" and not res.certified


# --------------------------------------------------------------------------- bad input
@pytest.fixture
def no_solve(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a search was started")

    monkeypatch.setattr(search_module, "level_search", refuse)


C0 = np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 4.0], [5.0, 3.0, 1.0], [2.0, 2.0, 9.0]])
M0 = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 0.0]])


@pytest.mark.parametrize(("costs", "kwargs", "message"), [
    (C0, dict(model="p-center"), "needs p"),
    (C0, dict(model="p-center", p=0), "p must be an integer between 1 and the number of sites"),
    (C0, dict(model="p-center", p=-2), "p must be an integer between 1"),
    (C0, dict(model="p-center", p=4), r"p must be an integer between 1 and the number of sites \(3\)"),
    (C0, dict(model="p-center", p=1.5), "p must be an integer"),
    (C0, dict(model="p-center", p=True), "p must be an integer"),
    (C0, dict(model="p-center", p=1, fixed_open=[0, 1]), "more than p = 1"),
    (C0, dict(model="p-center", p=2, fixed_open=[3]), "site index 3 is not in 0..2"),
    (C0, dict(model="p-center", p=2, radius=2.0), "finds its radius itself"),
    (C0, dict(model="p-center", p=2, fixed_costs=[1, 1, 1]), "takes no fixed_costs"),
    (C0, dict(model="p-center", p=2, capacity=[9, 9, 9]), "takes no capacity"),
    (C0, dict(model="p-center", p=2, demand=[1, -1, 1, 1]), "non-negative"),
    (C0, dict(model="p-center", p=2, demand=[0, 0, 0, 0]), "total demand is 0"),
    (C0, dict(model="p-center", p=2, demand=[1, 1, 1]), "demand must have 4 entries"),
    (C0, dict(model="p-center", p=2, improve=1), r"do\(es\) not apply"),
    (np.array([[1.0, np.inf], [1.0, 2.0]]), dict(model="p-center", p=1), "NaN or infinite"),
    (np.array([[1.0, np.nan], [1.0, 2.0]]), dict(model="p-center", p=1), "NaN or infinite"),
    (np.array([[1.0, -1.0], [1.0, 2.0]]), dict(model="p-center", p=1), "non-negative"),
    (None, dict(model="p-center", p=1), "needs costs .* or both customer_xy and site_xy"),
    (None, dict(model="p-center", p=1, customer_xy=[[0, 0]], site_xy=[[0, np.nan]]),
     "site_xy contains NaN"),
    (M0, dict(model="p-dispersion"), "needs p"),
    (M0, dict(model="p-dispersion", p=1), "p must be an integer between 2 and the number of sites"),
    (M0, dict(model="p-dispersion", p=4), r"between 2 and the number of sites \(3\)"),
    (M0, dict(model="p-dispersion", p=2, fixed_open=[0, 1, 2]), "more than p = 2"),
    (M0, dict(model="p-dispersion", p=2, demand=[1, 1, 1]), "takes no demand"),
    (C0, dict(model="p-dispersion", p=2), r"square matrix\), got shape \(4, 3\)"),
    (M0 + np.eye(3), dict(model="p-dispersion", p=2), "zero diagonal"),
    (np.array([[0.0, 1.0], [2.0, 0.0]]), dict(model="p-dispersion", p=2), "must be symmetric"),
    (np.array([[0.0, np.inf], [np.inf, 0.0]]), dict(model="p-dispersion", p=2), "NaN or infinite"),
    (None, dict(model="p-dispersion", p=2), "needs the distances between the candidate sites"),
    (None, dict(model="p-dispersion", p=2, site_xy=[[0, 0], [1, np.inf]]), "NaN or infinite"),
    (None, dict(p=2), "costs is required"),
])
def test_bad_input_refused_before_any_search(no_solve, costs, kwargs, message):
    with pytest.raises(ValueError, match=message):
        solve_facility_location(costs, log=False, **kwargs)


def test_p_dispersion_refuses_graph_costs(no_solve):
    nx = pytest.importorskip("networkx")
    from aidopt.data.facility import GraphCosts

    with pytest.raises(ValueError, match="needs site x site distances"):
        solve_facility_location(GraphCosts(nx.path_graph(4)), p=2, model="p-dispersion",
                                log=False)


# --------------------------------------------------------------------------- CLI
def test_cli_p_center_and_p_dispersion(tmp_path, capsys):
    from aidopt.cli.main import main

    path = tmp_path / "pts.csv"
    xy = np.array([[0, 0], [1, 0], [0, 1], [5, 5], [5, 6], [9, 9]], dtype=float)
    np.savetxt(path, xy, delimiter=",")
    out_csv = tmp_path / "assign.csv"
    assert main(["facility", "--coords", str(path), "--model", "p-center", "--p", "2",
                 "--assignments", str(out_csv), "--quiet"]) == 0
    out = capsys.readouterr().out
    C = euclidean_costs(xy)
    best = brute_center(C, np.ones(6), 2)
    assert "open sites (2)" in out and f"radius: {best:.10g}" in out
    assert np.loadtxt(out_csv, delimiter=",", skiprows=1).shape == (6, 3)
    assert main(["facility", "--coords", str(path), "--model", "p-dispersion", "--p", "3",
                 "--fixed-open", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"smallest distance between chosen sites: {brute_dispersion(C, 3, (1,)):.10g}" in out
    sites = tmp_path / "sites.csv"
    np.savetxt(sites, xy[:4], delimiter=",")
    assert main(["facility", "--customers", str(path), "--sites", str(sites), "--model",
                 "p-dispersion", "--p", "2", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"smallest distance between chosen sites: {brute_dispersion(C[:4, :4], 2):.10g}" in out
    assert main(["facility", "--coords", str(path), "--model", "p-dispersion", "--p", "2",
                 "--map", str(tmp_path / "m.png"), "--quiet"]) == 0
    assert (tmp_path / "m.png").read_bytes()[:4] == b"\x89PNG"
    assert main(["facility", "--coords", str(path), "--model", "p-center", "--quiet"]) == 2


# --------------------------------------------------------------------------- TSPLIB
def test_p_center_on_fl1400_sites_subset():
    """A slice of the shipped TSPLIB fl1400 (its first 300 cities as points, every 15th as a
    site: the full set takes minutes): the matrix and coordinate paths agree, certified, and
    the greedy start's radius is never below the optimum."""
    from aidopt.instances.facility import tsplib_path

    from aidopt.data.facility import read_tsplib

    xy = read_tsplib(tsplib_path("fl1400"))[0][:300]
    sites = xy[::15]
    oracle = EuclideanCosts(xy, sites, round_to=0)
    C = oracle.rows(np.arange(len(xy)))
    a = solve_facility_location(C, p=4, model="p-center", log=False)
    b = solve_facility_location(oracle, p=4, model="p-center", log=False)
    assert a.certified and b.certified and a.objective == b.objective
    assert a.history == [] or all(h.E_t >= a.objective for h in a.history)
