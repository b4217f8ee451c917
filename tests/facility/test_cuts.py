"""The radius formulation's LP relaxation by per-customer cuts (facility_cuts.py) against the
full radius LP built as a Pyomo model and solved by HiGHS."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from aidopt.decomposition.plugins.facility_cuts import lp_by_cuts, radii_by_cuts, separate
from aidopt.decomposition.plugins.facility_radius import CostLevels, FacilityRadiusProblem
from aidopt.instances.facility import orlib_pmed
from aidopt.models import facility_radius as rmodel

import aidopt
from aidopt import solvers
from aidopt.data.facility import as_facility_data, euclidean_costs


def _full_lp(data):
    levels = CostLevels.of(data)
    w = data.demand[levels.customers]
    k = np.maximum(levels.n_levels - 1, 0)
    model = rmodel.create_instance(FacilityRadiusProblem.model_data(levels, k, w, data), relax=True)
    out = solvers.solve_model(model, "highs", problem_class=solvers.ProblemClass.LP)
    assert out.status == "optimal"
    return out.objective


@functools.cache
def _full_lp_orlib(name):
    """The full radius LP's value of an OR-Library instance, solved once per session (six tests
    compare with pmed6's: building its Pyomo model is most of their time)."""
    costs, p, _ = orlib_pmed(name)
    return _full_lp(as_facility_data(costs, p=p))


#: the tests that compare with pmed6's full LP run on one xdist worker, which solves it once
pmed6_full_lp = pytest.mark.xdist_group("pmed6_full_lp")


def _ufl(n, s, seed):
    rng = np.random.default_rng(seed)
    costs = euclidean_costs(rng.random((n, 2)) * 100, rng.random((s, 2)) * 100, round_to=0)
    return as_facility_data(costs, fixed_costs=rng.uniform(50, 400, s),
                            demand=rng.integers(0, 4, n).astype(float))


@pmed6_full_lp
@pytest.mark.parametrize("name", ["pmed1", "pmed6"])
def test_cut_lp_equals_the_full_radius_lp_p_median(name):
    costs, p, _ = orlib_pmed(name)
    data = as_facility_data(costs, p=p)
    levels = CostLevels.of(data)
    lp = lp_by_cuts(levels, data.demand[levels.customers], None, p)
    assert lp.status == "optimal"
    assert lp.value == pytest.approx(_full_lp_orlib(name), rel=1e-9)
    assert lp.y.sum() == pytest.approx(p)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cut_lp_equals_the_full_radius_lp_ufl_with_zero_demands(seed):
    data = _ufl(60, 25, seed)
    levels = CostLevels.of(data)
    lp = lp_by_cuts(levels, data.demand[levels.customers], data.fixed, None)
    assert lp.status == "optimal"
    assert lp.value == pytest.approx(_full_lp(data), rel=1e-9)


def test_separation_is_the_customers_lp_cost():
    """phi_i(y) = sum over the customer's levels of (D^k - D^{k-1}) max(0, 1 - Y^k), with
    Y^k the fractions of the sites strictly cheaper than D^k (the radius LP's z at fixed y)."""
    costs, p, _ = orlib_pmed("pmed1")
    data = as_facility_data(costs, p=p)
    levels = CostLevels.of(data)
    rng = np.random.default_rng(3)
    y = rng.random(costs.shape[1])
    y *= p / y.sum()
    y = np.minimum(y, 1.0)
    _, _, phi = separate(levels, y)
    for i in rng.choice(levels.n, 10, replace=False):
        c = costs[levels.customers[i]]
        D = np.unique(c)
        direct = D[0] + sum((D[k] - D[k - 1]) * max(0.0, 1.0 - y[c < D[k]].sum())
                            for k in range(1, D.size))
        assert phi[i] == pytest.approx(direct, rel=1e-12)


def test_a_stopped_cut_lp_is_still_a_bound_and_radii_cover_y():
    costs, p, opt = orlib_pmed("pmed6")
    data = as_facility_data(costs, p=p)
    levels = CostLevels.of(data)
    w = data.demand[levels.customers]
    first = lp_by_cuts(levels, w, None, p, max_rounds=2)
    full = lp_by_cuts(levels, w, None, p)
    assert first.status == "round_limit" and first.value <= full.value + 1e-9 <= opt
    k = radii_by_cuts(levels, full.y)
    inside = levels.level < k[:, None]
    cover = (full.y[levels.order] * inside).sum(axis=1)
    assert np.all((cover >= 1 - 1e-7) | (k == levels.n_levels - 1))


def test_run_reports_the_lp_bound():
    """pmed1: the first iteration's bound is at least the cut LP's optimum (rounded up: the
    costs are integers), and the run certifies OR-Library's optimum."""
    costs, p, opt = orlib_pmed("pmed1")
    r = aidopt.solve_facility_location(costs, p=p, log=False)
    data = as_facility_data(costs, p=p)
    levels = CostLevels.of(data)
    lp = lp_by_cuts(levels, data.demand[levels.customers], None, p)
    assert r.certified and r.objective == opt
    assert r.history[0].lower_bound >= np.ceil(lp.value - 1e-6)


def test_a_nonzero_budget_per_round_reaches_the_same_lp(monkeypatch):
    """With each round capped at a few cuts' nonzeros (the most violated first) the rounds end
    at the same LP optimum, and the reduced costs are those of a solved LP (>= 0 at y = 0)."""
    from aidopt.decomposition.plugins import facility_cuts

    costs, p, _ = orlib_pmed("pmed6")
    data = as_facility_data(costs, p=p)
    levels = CostLevels.of(data)
    w = data.demand[levels.customers]
    from aidopt.solvers import highs as highs_module

    added, real = [], highs_module.new_highs

    class Spy:  # records the nonzeros of every addRows call
        def __init__(self, h):
            self._h = h

        def __getattr__(self, name):
            return getattr(self._h, name)

        def addRows(self, count, lower, upper, nnz, *rest):
            added.append(nnz)
            return self._h.addRows(count, lower, upper, nnz, *rest)

    monkeypatch.setattr(highs_module, "new_highs", lambda **kw: Spy(real(**kw)))
    full = lp_by_cuts(levels, w, None, p)
    assert max(added) > 2_000  # uncapped, a round adds more
    added.clear()
    monkeypatch.setattr(facility_cuts, "ROUND_NONZEROS", 2_000)
    capped = lp_by_cuts(levels, w, None, p)
    assert capped.status == "optimal" and max(added) <= 2_000
    assert capped.value == pytest.approx(full.value, rel=1e-9)
    at_zero = capped.y < 1e-9
    assert np.all(capped.reduced[at_zero] >= -1e-7)


@pmed6_full_lp
def test_column_generation_reaches_the_full_lp_from_a_few_sites():
    """The master starts with p sites (the farthest-first spread) and prices the others in: the
    same optimum as the full radius LP, with fewer columns than sites."""
    costs, p, _ = orlib_pmed("pmed6")
    data = as_facility_data(costs, p=p)
    levels = CostLevels.of(data)
    lp = lp_by_cuts(levels, data.demand[levels.customers], None, p, first_sites=p)
    assert lp.status == "optimal"
    assert lp.value == pytest.approx(_full_lp_orlib("pmed6"), rel=1e-9)
    assert p < lp.columns < data.n_sites
    assert lp.y.sum() == pytest.approx(p)


@pmed6_full_lp
@pytest.mark.parametrize("rounds", [1, 2, 4, 8])
def test_a_stopped_lp_reports_a_lower_bound(rounds):
    """Stopped after a few rounds (few cuts, few sites: the master is neither a relaxation nor
    a restriction of the full LP) the value is the duals' Lagrangian bound: below the optimum."""
    costs, p, _ = orlib_pmed("pmed6")
    data = as_facility_data(costs, p=p)
    levels = CostLevels.of(data)
    lp = lp_by_cuts(levels, data.demand[levels.customers], None, p, max_rounds=rounds,
                    first_sites=p)
    full = _full_lp_orlib("pmed6")
    assert lp.value <= full + 1e-6 * full
    if rounds >= 8:
        assert lp.value > 0  # and a useful one once some rounds ran


@pytest.mark.parametrize("kind", ["p-median", "ufl"])
def test_reduced_costs_bound_the_lp_with_a_site_forced_open(kind):
    """The premise of reduced-cost fixing: the full radius LP with y_j = 1 is at least the
    cut LP's bound plus site j's reduced cost, for every site (checked on a sample)."""
    if kind == "p-median":
        costs, p, _ = orlib_pmed("pmed1")
        data = as_facility_data(costs, p=p)
    else:
        data, p = _ufl(60, 25, 4), None
    levels = CostLevels.of(data)
    lp = lp_by_cuts(levels, data.demand[levels.customers], data.fixed, p)
    w = data.demand[levels.customers]
    k = np.maximum(levels.n_levels - 1, 0)
    order = np.argsort(-lp.reduced)
    model = rmodel.create_instance(FacilityRadiusProblem.model_data(levels, k, w, data),
                                   relax=True)  # built once: each site fixed open in turn
    for j in np.concatenate([order[:4], order[-2:]]):
        model.y[int(j)].fix(1.0)
        out = solvers.solve_model(model, "highs", problem_class=solvers.ProblemClass.LP)
        model.y[int(j)].unfix()
        assert out.status == "optimal"
        assert out.objective >= lp.value + max(lp.reduced[j], 0.0) - 1e-7 * abs(out.objective)


def test_initial_sites_are_farthest_first():
    """Each next site is the nearest unchosen site of the customer farthest from the chosen
    ones (brute force on the matrix); every site when more are asked for than exist."""
    from aidopt.decomposition.plugins.facility_cuts import initial_sites

    data = _ufl(50, 30, 7)
    levels = CostLevels.of(data)
    costs = data.costs[levels.customers]
    got = initial_sites(levels, 8)
    chosen = []
    for _ in range(8):
        far = costs[:, chosen].min(axis=1) if chosen else np.full(levels.n, np.inf)
        i = int(np.argmax(far))
        chosen.append(next(int(j) for j in levels.order[i] if int(j) not in chosen))
    assert got.tolist() == sorted(chosen)
    assert initial_sites(levels, 30).tolist() == list(range(30))
