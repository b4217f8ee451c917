"""Sites forced open (``fixed_open``) for the p-median and UFL: every method the door can choose
against brute force over the site subsets that contain the forced ones; bad input refused before
any solve; the CLI's ``--fixed-open``."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from aidopt.api.facility import solve_facility_location
from aidopt.data.facility import EuclideanCosts, euclidean_costs

#: every method the door can choose for an uncapacitated p-median / UFL
METHODS = {
    "benders": dict(),  # the default: branch-and-Benders-cut on the radius formulation
    "radius": dict(aggregation="radius", solver="highs"),
    "sites": dict(aggregation="sites"),
    "direct-radius": dict(aid=False, aggregation="radius", solver="highs"),
    "direct-strong": dict(aid=False, aggregation="sites"),
}


def brute_forced(costs, w, fixed, p, forced):
    """The optimum over every set of open sites that contains ``forced`` (at most ``p``)."""
    s = costs.shape[1]
    rest = [j for j in range(s) if j not in forced]
    best = np.inf
    for k in range(len(rest) + 1):
        for extra in itertools.combinations(rest, k):
            chosen = sorted({*forced, *extra})
            if not chosen or (p is not None and len(chosen) > p):
                continue
            value = float(w @ costs[:, chosen].min(axis=1))
            if fixed is not None:
                value += float(fixed[chosen].sum())
            best = min(best, value)
    return best


def instance(seed, kind):
    """A seeded instance (13 customers, 8 sites, integer costs) and 1-3 forced sites."""
    rng = np.random.default_rng(seed)
    cxy, sxy = rng.random((13, 2)), rng.random((8, 2))
    costs = np.round(euclidean_costs(cxy, sxy) * 100)
    w = rng.integers(1, 5, size=13).astype(float)
    fixed = rng.integers(20, 120, size=8).astype(float) if kind != "p-median" else None
    p = None if kind == "ufl" else int(rng.integers(2, 5))
    forced = sorted(rng.choice(8, size=int(rng.integers(1, 4 if p is None else min(p, 3) + 1)),
                               replace=False).tolist())
    return costs, w, fixed, p, forced


def check(res, costs, w, fixed, p, forced):
    best = brute_forced(costs, w, fixed, p, forced)
    assert res.certified and res.termination == "certified_optimal"
    opened = np.asarray(res.solution["open"])
    assert set(forced) <= set(opened.tolist())
    assert p is None or opened.size <= p
    assign = np.asarray(res.solution["assign"])
    assert np.isin(assign, opened).all()
    priced = float(w @ costs[np.arange(costs.shape[0]), assign])
    if fixed is not None:
        priced += float(fixed[opened].sum())
    assert res.objective == pytest.approx(priced, rel=1e-12)  # priced on the original data
    assert res.objective == pytest.approx(best, rel=1e-9)
    assert res.lower_bound <= res.objective + 1e-9 and res.lower_bound >= best * (1 - 1e-4)
    assert res.certificate.residuals["forced sites closed"] == 0
    assert res.certificate.primal_objective == pytest.approx(best, rel=1e-9)


@pytest.mark.parametrize("kind", ["p-median", "ufl", "p-median+f"])
@pytest.mark.parametrize("seed", range(20))
def test_every_method_matches_brute_force(seed, kind):
    costs, w, fixed, p, forced = instance(seed, kind)
    for name, method in METHODS.items():
        res = solve_facility_location(costs, p=p, fixed_costs=fixed, demand=w,
                                      fixed_open=forced, log=False, **method)
        try:
            check(res, costs, w, fixed, p, forced)
        except AssertionError as exc:  # name the method
            raise AssertionError(f"{name}: {exc}") from exc


def test_forcing_changes_the_answer():
    """The instances above are not all solved by ignoring ``fixed_open``: in most of them the
    constrained optimum is above the free one."""
    raised = 0
    for seed in range(20):
        for kind in ("p-median", "ufl"):
            costs, w, fixed, p, forced = instance(seed, kind)
            raised += brute_forced(costs, w, fixed, p, forced) > brute_forced(costs, w, fixed, p, ())
    assert raised >= 20


def test_as_many_forced_sites_as_p():
    costs, w, fixed, _, _ = instance(3, "p-median+f")
    for method in METHODS.values():
        res = solve_facility_location(costs, p=2, fixed_costs=fixed, demand=w,
                                      fixed_open=[6, 1], log=False, **method)
        check(res, costs, w, fixed, 2, [1, 6])
        assert res.solution["open"].tolist() == [1, 6]


def test_ufl_with_a_cost_oracle():
    """UFL keeps its costs (a forced site just opens free), so coordinates' oracle works."""
    rng = np.random.default_rng(7)
    cxy, sxy = rng.random((40, 2)), rng.random((12, 2))
    fixed = rng.uniform(0.5, 2.0, size=12)
    res = solve_facility_location(EuclideanCosts(cxy, sxy), fixed_costs=fixed,
                                  fixed_open=[0, 5], log=False)
    dense = euclidean_costs(cxy, sxy)
    check(res, dense, np.ones(40), fixed, None, [0, 5])


@pytest.mark.parametrize("seed", range(6))
def test_p_median_with_a_cost_oracle(seed):
    """With a p the forced sites cap the costs: an oracle is read through CappedCosts by the
    default branch-and-Benders-cut (also when p equals the number of forced sites)."""
    rng = np.random.default_rng(seed)
    cxy, sxy = rng.random((30, 2)), rng.random((9, 2))
    w = rng.integers(1, 4, size=30).astype(float)
    fixed = rng.uniform(0.2, 1.0, size=9) if seed % 2 else None
    p = 2 + seed % 3
    forced = sorted(rng.choice(9, size=p if seed == 4 else 1 + seed % 2, replace=False).tolist())
    res = solve_facility_location(EuclideanCosts(cxy, sxy), p=p, fixed_costs=fixed, demand=w,
                                  fixed_open=forced, log=False)
    check(res, euclidean_costs(cxy, sxy), w, fixed, p, forced)


def test_p_median_with_a_graph_oracle():
    nx = pytest.importorskip("networkx")
    from aidopt.data.facility import GraphCosts, graph_costs

    g = nx.grid_2d_graph(4, 5)
    for k, (u, v) in enumerate(g.edges):
        g.edges[u, v]["weight"] = 1.0 + (k * 7) % 5
    res = solve_facility_location(GraphCosts(g), p=3, fixed_open=[0, 19], log=False)
    check(res, graph_costs(g), np.ones(20), None, 3, [0, 19])


def test_an_empty_list_forces_nothing():
    costs, w, fixed, p, _ = instance(2, "p-median+f")
    res = solve_facility_location(costs, p=p, fixed_costs=fixed, demand=w, fixed_open=[],
                                  log=False)
    assert res.certified and "fixed_open" not in res.solution
    assert res.objective == pytest.approx(brute_forced(costs, w, fixed, p, []))


def test_history_and_solution_are_in_the_original_terms():
    costs, w, fixed, p, forced = instance(1, "ufl")
    res = solve_facility_location(costs, fixed_costs=fixed, demand=w, fixed_open=forced,
                                  log=False, aggregation="radius", solver="highs")
    assert res.history[-1].E_best == pytest.approx(res.objective)
    assert res.solution["fixed_open"].tolist() == forced
    assert res.solution["kind"] == "ufl"
    assert "fixed_open" in res.certificate.note


# --------------------------------------------------------------------------- bad input
C0 = np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 4.0], [5.0, 3.0, 1.0], [2.0, 2.0, 9.0]])


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(p=1, fixed_open=[0, 1]), "forces 2 sites open, more than p = 1"),
    (dict(p=2, fixed_open=[3]), r"site index 3 is not in 0\.\.2"),
    (dict(p=2, fixed_open=[-1]), "site index -1"),
    (dict(p=2, fixed_open=[1, 1]), "site 1 is given more than once"),
    (dict(fixed_costs=[1, 1, 1], fixed_open=[2, 0, 2]), "site 2 is given more than once"),
    (dict(p=2, fixed_open=[0.5]), "fixed_open must be a list of site indices"),
    (dict(p=2, fixed_open=[True]), "fixed_open must be a list of site indices"),
    (dict(p=2, fixed_open=[[0, 1]]), "fixed_open must be a list of site indices"),
    (dict(fixed_costs=[1, 1, 1], capacity=[9, 9, 9], fixed_open=[0], aid=False),
     "not offered with capacity"),
])
def test_bad_fixed_open_refused_before_any_solve(no_solve, kwargs, message):
    with pytest.raises(ValueError, match=message):
        solve_facility_location(C0, log=False, **kwargs)


@pytest.mark.parametrize("kwargs", [dict(model="mclp", p=2, radius=2.0),
                                    dict(model="lscp", radius=9.0),
                                    dict(model="p-center", p=2)])
def test_other_models_warn_of_repeats(kwargs):
    """The published models accepted a repeated site: dropped, with a FutureWarning."""
    with pytest.warns(FutureWarning, match="site 1 is given more than once") as caught:
        res = solve_facility_location(C0, fixed_open=[1, 1], log=False, **kwargs)
    assert caught[0].filename == __file__  # points at the caller
    ref = solve_facility_location(C0, fixed_open=[1], log=False, **kwargs)
    assert res.objective == ref.objective and 1 in res.solution["open"]


# --------------------------------------------------------------------------- CLI
def test_cli_fixed_open(tmp_path, capsys):
    from aidopt.cli.main import main

    xy = np.array([[0, 0], [1, 0], [0, 1], [5, 5], [5, 6], [9, 9], [9, 8]], dtype=float)
    path = tmp_path / "pts.csv"
    np.savetxt(path, xy, delimiter=",")
    costs = euclidean_costs(xy)
    w = np.ones(7)
    assert main(["facility", "--coords", str(path), "--p", "3", "--fixed-open", "5,6",
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "open sites (3)" in out
    opened = [int(v) for v in out.split("open sites (3):")[1].split("\n")[0].split()]
    assert {5, 6} <= set(opened)
    assert float(w @ costs[:, opened].min(axis=1)) == pytest.approx(
        brute_forced(costs, w, None, 3, [5, 6]))
    assert main(["facility", "--coords", str(path), "--fixed-costs", "3", "--fixed-open", "0",
                 "--quiet"]) == 0
    assert "open sites" in capsys.readouterr().out
    assert main(["facility", "--coords", str(path), "--p", "1", "--fixed-open", "0,1",
                 "--quiet"]) == 2
    assert "more than p = 1" in capsys.readouterr().err
