"""Branch-and-Benders-cut (``solver="benders"``): separation against its definition (also on
a prefix of sorted sites that grows), the solve against brute force and the OR-Library optima,
costs from coordinates against the same costs as a matrix, scale invariance, and a stopped
run's answer."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.decomposition.plugins.facility_cuts import NearestSites, critical_positions, separate
from aidopt.decomposition.plugins.facility_radius import CostLevels
from aidopt.instances.facility import ORLIB_PMED, orlib_pmed

import aidopt
from aidopt.data.facility import EuclideanCosts, as_facility_data, euclidean_costs
from tests.facility._helpers import data_of, small_instance


def _phi_by_definition(levels, y, i):
    """max over customer i's levels D of D - sum_{c_ij < D} (D - c_ij) y_j."""
    costs = levels.sorted_costs[i]
    sites = levels.order[i]
    values = np.unique(costs)
    return max(D - float(((D - costs) * y[sites] * (costs < D)).sum()) for D in values)


@pytest.mark.parametrize("seed", range(6))
def test_separation_is_the_lp_cost_by_definition(seed):
    inst = small_instance(seed, kind="p-median", n=15, s=40, ties=seed % 2 == 0)
    levels = CostLevels.of(data_of(inst))
    rng = np.random.default_rng(seed)
    # small fractions: the prefix that finds the covering position must grow past 32 sites
    y = rng.dirichlet(np.ones(40)) * rng.choice([0.8, 1.5, 3.0])
    D, width, phi = separate(levels, y)
    for i in range(levels.n):
        assert phi[i] == pytest.approx(_phi_by_definition(levels, y, i), abs=1e-9)
        assert width[i] == np.count_nonzero(levels.sorted_costs[i] < D[i])


def test_critical_positions_equal_the_dense_cumsum():
    inst = small_instance(3, kind="p-median", n=30, s=200)
    levels = CostLevels.of(data_of(inst))
    y = np.random.default_rng(0).random(200) * 0.02  # reaches 1 only past 32 and 128 positions
    cum = np.cumsum(y[levels.order], axis=1)
    dense = np.where(cum[:, -1] >= 1 - 1e-12, np.argmax(cum >= 1 - 1e-12, axis=1), 199)
    assert np.array_equal(critical_positions(levels, y), dense)


@pytest.mark.parametrize("kind", ["p-median", "ufl"])
@pytest.mark.parametrize("seed", range(8))
def test_benders_equals_brute_force(kind, seed):
    """Duplicate sites and ties (symmetry SCIP must not reason over: the cuts it does not see)."""
    inst = small_instance(seed, kind=kind, n=14, s=8, p=3 if kind == "p-median" else None,
                          ties=seed % 2 == 1, duplicate_sites=seed % 4 < 2)
    res = aidopt.solve_facility_location(inst["costs"], p=inst["p"], fixed_costs=inst["fixed_costs"],
                                         demand=inst["demand"], solver="benders", log=False)
    assert res.termination == "certified_optimal"
    assert res.objective == pytest.approx(inst["optimum"], rel=1e-9)
    assert res.lower_bound <= inst["optimum"] + 1e-9


def test_benders_certifies_orlib_pmed_at_the_optimum():
    costs, p, optimum = orlib_pmed("pmed1")
    res = aidopt.solve_facility_location(costs, p=p, solver="benders", log=False)
    assert res.termination == "certified_optimal"
    assert res.objective == optimum == ORLIB_PMED["pmed1"][2]
    assert len(res.history) == 1  # the separation inside the tree replaces the outer loop


@pytest.mark.parametrize("scale", [1e-9, 1.0, 1e9])
def test_benders_is_scale_invariant(scale):
    inst = small_instance(11, kind="ufl", n=30, s=12)
    res = aidopt.solve_facility_location(inst["costs"] * scale, fixed_costs=inst["fixed_costs"] * scale,
                                         demand=inst["demand"], solver="benders", log=False)
    assert res.termination == "certified_optimal"
    assert res.objective == pytest.approx(inst["optimum"] * scale, rel=1e-9)


def test_a_growing_prefix_of_sorted_sites_separates_like_the_full_sort():
    """Costs from coordinates: NearestSites starts with 64 sorted sites and grows on demand;
    its cuts are those of the full sort (the dense matrix)."""
    rng = np.random.default_rng(4)
    n, p = 2000, 40
    xy = rng.random((n, 2)) * 1000
    dense = NearestSites(as_facility_data(euclidean_costs(xy, round_to=0), p=p))
    lazy = NearestSites(as_facility_data(EuclideanCosts(xy, round_to=0), p=p))
    assert lazy.width == 64
    integral = np.zeros(n)
    integral[rng.choice(n, p, replace=False)] = 1.0
    for y in (np.full(n, p / n), rng.dirichlet(np.ones(n)) * p, integral):
        D1, w1, phi1 = separate(dense, y)
        D2, w2, phi2 = separate(lazy, y)
        assert np.array_equal(D1, D2) and np.array_equal(w1, w2)
        assert np.allclose(phi1, phi2, rtol=1e-12, atol=1e-9)
    assert 64 < lazy.width < n  # grew, but not to every site


@pytest.mark.parametrize("p", [3, 25])
def test_coordinates_solve_like_the_matrix(p):
    rng = np.random.default_rng(p)
    xy = rng.random((500, 2)) * 1000
    a = aidopt.solve_facility_location(euclidean_costs(xy, round_to=0, rounding="floor"), p=p,
                                       log=False)
    b = aidopt.solve_facility_location(EuclideanCosts(xy, round_to=0, rounding="floor"), p=p,
                                       log=False)
    assert a.termination == b.termination == "certified_optimal"
    assert a.objective == b.objective
    assert b.solver == "benders"
    with pytest.raises(ValueError, match="solver='benders' only"):
        aidopt.solve_facility_location(EuclideanCosts(xy), p=p, solver="highs", log=False)


def test_a_stopped_benders_run_returns_its_incumbent_and_a_bound():
    rng = np.random.default_rng(0)
    pts = rng.random((600, 2))
    costs = np.floor(np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1)) * 1e4)
    res = aidopt.solve_facility_location(costs, p=40, solver="benders", time_limit=0.5,
                                         log=False, raise_on_failure=False)
    assert np.isfinite(res.objective)
    assert len(res.solution["open"]) == 40
    assert res.lower_bound is not None and res.lower_bound <= res.objective
    if res.termination != "certified_optimal":
        assert res.termination == "time_limit"


def test_benders_rejects_unknown_options():
    inst = small_instance(0, kind="p-median", n=10, s=6, p=2)
    with pytest.raises(ValueError, match="log"):
        aidopt.solve_facility_location(inst["costs"], p=2, solver="benders",
                                       solver_options={"threads": 2}, log=False)


@pytest.mark.parametrize("solver", ["benders", "highs"])
@pytest.mark.parametrize("seed", range(4))
def test_p_median_with_opening_costs_opens_at_most_p(seed, solver):
    """Opening costs and p together: at most p sites. Large opening costs make the optimum open
    fewer than p: forcing exactly p in the cut LP or the master would give a bound above it."""
    inst = small_instance(seed, kind="ufl", n=14, s=8)
    fixed = inst["fixed_costs"] * 20
    from tests.facility._helpers import brute_force

    optimum = brute_force(inst["costs"], 4, fixed, inst["demand"])
    res = aidopt.solve_facility_location(inst["costs"], p=4, fixed_costs=fixed,
                                         demand=inst["demand"], solver=solver, log=False)
    assert res.lower_bound <= optimum + 1e-9
    assert res.termination == "certified_optimal"
    assert res.objective == pytest.approx(optimum, rel=1e-9)
    assert 1 <= len(res.solution["open"]) <= 4


def test_direct_solve_without_the_lp_phase():
    """``aid=False`` skips the start phase: no cut LP, the greedy start, SCIP separates every
    cut itself; same optimum."""
    costs, p, optimum = orlib_pmed("pmed6")
    res = aidopt.solve_facility_location(costs, p=p, aid=False, log=False)
    assert res.problem == "facility-benders" and res.solver == "benders"
    assert res.termination == "certified_optimal" and res.objective == optimum


def _cost(C, w, cols):
    return float(w @ C[:, cols].min(axis=1))


@pytest.mark.parametrize("seed", range(8))
def test_swap_search_ends_where_no_swap_improves(seed):
    """At the end no single swap (checked one by one, by definition) lowers the cost, the number
    of open columns is kept and the cost never rises."""
    from aidopt.decomposition.plugins.facility import swap_search

    rng = np.random.default_rng(seed)
    n, m, p = 30, 12, int(rng.integers(2, 6))
    C = rng.integers(0, 20, size=(n, m)).astype(float) if seed % 2 else rng.random((n, m))
    w = rng.integers(0, 4, size=n).astype(float)
    start = rng.choice(m, size=p, replace=False)
    end = swap_search(C, w, start)
    assert end.size == p and np.unique(end).size == p
    assert _cost(C, w, end) <= _cost(C, w, start) + 1e-12
    best = _cost(C, w, end)
    for r in range(p):
        for c in np.setdiff1d(np.arange(m), end):
            other = np.append(np.delete(end, r), c)
            assert _cost(C, w, other) >= best - 1e-9 * max(1.0, best)


def test_swap_search_makes_the_best_swap_first():
    """One step (max_swaps=1) makes the swap of least cost among all swaps."""
    from aidopt.decomposition.plugins.facility import swap_search

    rng = np.random.default_rng(7)
    C, w = rng.random((40, 15)), rng.random(40)
    start = np.array([0, 1, 2])
    one = swap_search(C, w, start, max_swaps=1)
    costs = [_cost(C, w, np.append(np.delete(start, r), c))
             for r in range(3) for c in range(3, 15)]
    assert _cost(C, w, one) == pytest.approx(min(costs), abs=1e-12)


def test_swap_candidates_keep_the_open_sites_and_the_lp_support(monkeypatch):
    """Past the size where every site fits, the candidates are the open sites and the LP's
    support (zero reduced cost first), no more than fit."""
    from aidopt.decomposition.plugins import facility_benders as fb
    from aidopt.decomposition.plugins.facility_cuts import CutLP

    xy = np.random.default_rng(3).random((60, 2))
    data = as_facility_data(EuclideanCosts(xy), p=3)
    monkeypatch.setattr(fb, "SWAP_ENTRIES", 60 * 20)
    y = np.zeros(60)
    y[[5, 6, 7, 8]] = 0.75
    reduced = np.linspace(1.0, 2.0, 60)
    reduced[[5, 6, 7, 8]] = 0.0
    lp = CutLP(y, 1.0, "optimal", 1, 1, reduced=reduced)
    sites = fb.swap_candidates(data, lp, np.array([40, 50, 59]))
    assert {5, 6, 7, 8, 40, 50, 59} <= set(sites.tolist())
    assert sites.size <= 20
    assert np.array_equal(fb.swap_candidates(data, None, np.array([1, 2, 3])), [1, 2, 3])
    monkeypatch.setattr(fb, "SWAP_ENTRIES", 60 * 60)
    assert np.array_equal(fb.swap_candidates(data, lp, np.array([1, 2, 3])), np.arange(60))


@pytest.mark.parametrize("seed", range(4))
def test_swap_search_in_column_blocks_makes_the_same_swaps(seed, monkeypatch):
    """Blocks of a few columns (the memory bound) give the same end as one block."""
    from aidopt.decomposition.plugins import facility

    rng = np.random.default_rng(seed)
    C, w = rng.random((50, 23)), rng.random(50)
    start = rng.choice(23, size=4, replace=False)
    whole = facility.swap_search(C, w, start)
    monkeypatch.setattr(facility, "SWAP_BLOCK", 50 * 3)
    assert np.array_equal(facility.swap_search(C, w, start), whole)


def test_reduced_cost_fixing_keeps_every_optimal_site_and_the_optimum():
    """pmed1-pmed5: the branch and cut sees only the sites reduced-cost fixing keeps (fewer
    than all), the known optimum's sites among them, and certifies the optimum."""
    from aidopt.decomposition.plugins.facility_benders import kept_sites
    from aidopt.decomposition.plugins.facility_cuts import lp_by_cuts

    for name in ["pmed1", "pmed2", "pmed3", "pmed4", "pmed5"]:
        costs, p, optimum = orlib_pmed(name)
        res = aidopt.solve_facility_location(costs, p=p, log=False)
        assert res.termination == "certified_optimal" and res.objective == optimum
        assert res.history[-1].info["sites_kept"] < costs.shape[1]
        data = as_facility_data(costs, p=p)
        levels = NearestSites.of(data)
        lp = lp_by_cuts(levels, data.demand[levels.customers], None, p)
        # with the optimum itself as the incumbent, the sites of a better solution: none may be
        # left out that a solution of cost `optimum` (any optimal one) opens
        kept = kept_sites(lp, optimum + 1.0, True, res.solution["open"][:0], costs.shape[1])
        assert np.isin(res.solution["open"], kept).all()


def test_kept_sites_leaves_out_only_sites_above_the_incumbent():
    from aidopt.decomposition.plugins.facility_benders import kept_sites
    from aidopt.decomposition.plugins.facility_cuts import CutLP

    lp = CutLP(np.zeros(5), 100.0, "optimal", 1, 0, reduced=np.array([0.0, 3.0, 9.9, 10.5, -2.0]))
    assert kept_sites(lp, 110.0, False, np.array([3]), 5).tolist() == [0, 1, 2, 3, 4]
    assert kept_sites(lp, 110.0, False, np.array([], dtype=int), 5).tolist() == [0, 1, 2, 4]
    # integral objectives: a better solution costs at most 109
    assert kept_sites(lp, 110.0, True, np.array([], dtype=int), 5).tolist() == [0, 1, 4]
    unfinished = CutLP(np.zeros(5), -np.inf, "time_limit", 1, 0, reduced=None)
    assert kept_sites(unfinished, 110.0, False, np.array([0]), 5).tolist() == [0, 1, 2, 3, 4]


def test_kept_widths_count_the_kept_sites_of_each_cut():
    from aidopt.decomposition.plugins.facility_benders import kept_widths

    inst = small_instance(2, kind="p-median", n=20, s=30)
    data = data_of(inst)
    levels = NearestSites.of(data)
    rng = np.random.default_rng(0)
    cut_i = rng.integers(0, levels.n, 12)
    width = rng.integers(0, 30, 12)
    sites = np.sort(rng.choice(30, 11, replace=False))
    out = kept_widths(levels, (cut_i, np.zeros(12), width), sites)
    for r in range(12):
        assert out[r] == np.isin(levels.order[cut_i[r], :width[r]], sites).sum()
    sub = NearestSites(data.with_sites(sites))
    for r in range(12):  # the same sites lead the kept ones' sorted order
        D = levels.sorted_costs[cut_i[r], width[r]] if width[r] < 30 else np.inf
        assert out[r] == np.count_nonzero(sub.sorted_costs[cut_i[r]] < D)


def test_coordinates_with_sites_are_the_matrix_columns():
    rng = np.random.default_rng(1)
    xy = rng.random((40, 2)) * 100
    sites = np.array([3, 7, 8, 30])
    full = as_facility_data(EuclideanCosts(xy, round_to=0, rounding="floor"), p=2)
    sub = full.with_sites(sites)
    assert sub.n_sites == 4 and sub.integral
    assert np.array_equal(sub.cost_columns(np.arange(4)), full.cost_columns(sites))
    dense = as_facility_data(euclidean_costs(xy, round_to=0, rounding="floor"), p=2)
    assert np.array_equal(dense.with_sites(sites).costs, dense.costs[:, sites])


def test_integral_costs_are_sorted_compactly_and_separated_in_float64():
    """Integral costs below 2^24 are kept as float32 (exact) with int16 site indices; the cut
    levels that reach SCIP and HiGHS are float64 (a float32 quotient by the cost scale beside a
    float64 side made SoPlex report numerical troubles at every node)."""
    rng = np.random.default_rng(3)
    data = as_facility_data(EuclideanCosts(rng.random((300, 2)) * 1e4, round_to=0,
                                           rounding="floor"), p=5)
    levels = NearestSites(data)
    assert levels.sorted_costs.dtype == np.float32 and levels.order.dtype == np.int16
    exact = data.cost_pairs(np.repeat(levels.customers, levels.width), levels.order.ravel())
    assert np.array_equal(levels.sorted_costs.ravel().astype(float), exact)
    D, width, phi = separate(levels, np.full(300, 5 / 300))
    assert D.dtype == np.float64 and phi.dtype == np.float64
    exact_costs = as_facility_data(EuclideanCosts(rng.random((50, 2)) * 1e4), p=5)
    assert NearestSites(exact_costs).sorted_costs.dtype == np.float64


@pytest.mark.parametrize("seed", range(4))
def test_perturbed_swaps_end_at_a_local_optimum_no_worse_than_the_swap_search(seed):
    """The iterated search returns a local optimum (no single swap improves it), never costlier
    than the swap search from the same start, and the same one for the same seed."""
    from aidopt.decomposition.plugins.facility import perturbed_swaps, swap_search

    rng = np.random.default_rng(100 + seed)
    C, w = rng.random((60, 40)), rng.integers(1, 4, 60).astype(float)
    start, weights = rng.choice(40, 8, replace=False), rng.random(40)
    plain = _cost(C, w, swap_search(C, w, start))
    end = perturbed_swaps(C, w, start, weights=weights, seed=seed)
    assert np.array_equal(end, perturbed_swaps(C, w, start, weights=weights, seed=seed))
    best = _cost(C, w, end)
    assert end.size == 8 and best <= plain + 1e-12
    for r in range(8):
        for c in np.setdiff1d(np.arange(40), end):
            assert _cost(C, w, np.append(np.delete(end, r), c)) >= best - 1e-9 * max(1.0, best)


def test_perturbed_swaps_leave_poor_local_optima():
    """On 400 random points (p = 40) the swap search's local optimum is not always the best:
    over 6 instances the perturbations find a cheaper one at least once."""
    from aidopt.decomposition.plugins.facility import perturbed_swaps, swap_search

    better = 0
    for seed in range(6):
        rng = np.random.default_rng(seed)
        xy = rng.random((400, 2))
        C = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
        w = rng.integers(1, 5, 400).astype(float)
        start = rng.choice(400, 40, replace=False)
        plain = _cost(C, w, swap_search(C, w, start))
        better += _cost(C, w, perturbed_swaps(C, w, start, seed=seed)) < plain - 1e-9
    assert better >= 1


@pytest.mark.parametrize("directed", [False, True])
def test_graph_oracle_gives_the_matrix_costs(directed):
    """GraphCosts' rows, columns, pairs, extremes, nearest sites and site subsets equal
    graph_costs' matrix (a grid with random integer lengths, some zero; directed: one-way
    extra edges)."""
    import networkx as nx

    from aidopt.data.facility import GraphCosts, graph_costs

    rng = np.random.default_rng(5)
    g = nx.grid_2d_graph(6, 7)
    g = nx.DiGraph(g) if directed else g
    for u, v in g.edges:
        g.edges[u, v]["weight"] = int(rng.integers(0, 9))
    if directed:
        g.add_edge((0, 0), (5, 6), weight=1)
    nodes = list(g.nodes)
    cust, site = nodes[:30], nodes[10:]
    M = graph_costs(g, cust, site)
    oracle = GraphCosts(g, cust, site, block=7)
    assert oracle.shape == M.shape and oracle.integral
    assert np.array_equal(oracle.rows(np.arange(30)), M)
    assert np.array_equal(oracle.columns(np.array([0, 5, 31])), M[:, [0, 5, 31]])
    c, s = rng.integers(0, 30, 50), rng.integers(0, 32, 50)
    assert np.array_equal(oracle.pairs(c, s), M[c, s])
    assert np.array_equal(oracle.pairs(c[:, None], np.array([3, 4])[None, :]), M[c][:, [3, 4]])
    lo, hi = oracle.row_extremes()
    assert np.array_equal(lo, M.min(axis=1)) and np.array_equal(hi, M.max(axis=1))
    for k in (5, 12):  # after the first block of 7 the searches stop at a distance limit
        order, costs = oracle.nearest(np.arange(30), k)
        assert np.array_equal(costs, np.sort(M, axis=1)[:, :k])
        assert np.array_equal(order, np.argsort(M, axis=1, kind="stable")[:, :k])  # ties by index
        rising = np.argsort(np.sort(M, axis=1)[:, k - 1], kind="stable")  # later rows exceed the
        order, costs = oracle.nearest(rising, k)  # first block's limit: full searches for them
        assert np.array_equal(order, np.argsort(M[rising], axis=1, kind="stable")[:, :k])
    sub = oracle.with_sites(np.array([2, 7, 20]))
    assert np.array_equal(sub.rows(np.arange(30)), M[:, [2, 7, 20]])


def test_p_median_on_a_graph_oracle_solves_like_the_matrix():
    import networkx as nx

    from aidopt.data.facility import GraphCosts, graph_costs

    rng = np.random.default_rng(2)
    g = nx.random_geometric_graph(300, 0.12, seed=2)
    g = g.subgraph(max(nx.connected_components(g), key=len)).copy()
    for u, v in g.edges:
        g.edges[u, v]["weight"] = int(rng.integers(1, 20))
    a = aidopt.solve_facility_location(graph_costs(g), p=8, log=False)
    b = aidopt.solve_facility_location(GraphCosts(g), p=8, log=False)
    assert a.termination == b.termination == "certified_optimal"
    assert a.objective == b.objective
    with pytest.raises(ValueError, match="solver='benders' only"):
        aidopt.solve_facility_location(GraphCosts(g), p=8, solver="highs", log=False)
    with pytest.raises(ValueError, match="non-negative"):
        g2 = g.copy()
        g2.edges[next(iter(g2.edges))]["weight"] = -1
        GraphCosts(g2)


@pytest.mark.parametrize("seed", range(3))
def test_support_mip_solves_the_problem_on_the_lp_support_and_the_start(seed, monkeypatch):
    """The support MIP returns the optimum over the LP's support and the start's sites (by
    brute force), never worse than the start; with a start at the LP bound it is not run."""
    from aidopt.decomposition.plugins import facility_benders as fb
    from aidopt.decomposition.plugins.facility_cuts import lp_by_cuts

    from tests.facility._helpers import brute_force

    rng = np.random.default_rng(seed)
    xy = rng.random((70, 2)) * 100
    costs = np.round(np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1)))
    p = 5
    data = as_facility_data(costs, p=p)
    levels = NearestSites.of(data)
    lp = lp_by_cuts(levels, data.demand[levels.customers], None, p)
    monkeypatch.setattr(fb, "SUPPORT_SITES", 1.0)
    problem = fb.FacilityBendersProblem()
    support = np.flatnonzero(lp.y > 1e-9)
    outside = np.setdiff1d(np.arange(70), support)
    bad = problem.greedy_point(data, np.sort(np.concatenate([support[:2], outside[:p - 2]])))
    upper = data.objective(bad.solution["open"], bad.solution["assign"])
    found = problem._support_mip(data, lp, bad, None)
    value = data.objective(found.solution["open"], found.solution["assign"])
    sites = np.union1d(support, bad.solution["open"])
    assert value <= upper
    assert value == brute_force(costs[:, sites], p)
    # a start whose value is the LP bound (rounded up: integral costs) is returned as it is
    best = aidopt.solve_facility_location(costs, p=p, log=False)
    assert fb.at_bound(best.objective, lp.value, data.integral)  # LP integral here
    optimal = problem.greedy_point(data, best.solution["open"])
    assert problem._support_mip(data, lp, optimal, None) is optimal
