"""Branch-and-Benders-cut (``solver="benders"``): separation against its definition, the
solve against brute force, the direct MIP and the OR-Library optima, the aggregated (capped)
master against the radius MIP, scale invariance, and a stopped run's answer."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.decomposition.plugins.facility_benders import critical_positions, separate, solve_benders
from aidopt.decomposition.plugins.facility_radius import CostLevels, FacilityRadiusProblem
from aidopt.instances.facility import ORLIB_PMED, orlib_pmed

import aidopt
from tests.facility._helpers import data_of, small_instance


def _phi_by_definition(levels, y, i, cap_level=None):
    """max over customer i's levels D (up to cap_level) of D - sum_{c_ij < D} (D - c_ij) y_j."""
    costs = levels.sorted_costs[i]
    sites = levels.order[i]
    values = np.unique(costs)
    if cap_level is not None:
        values = values[: cap_level + 1]
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
    # capped at each customer's level k_i: the aggregated problem's cost
    k = rng.integers(0, levels.n_levels)
    cap = np.count_nonzero(levels.level < k[:, None], axis=1)
    _, _, phi_k = separate(levels, y, cap)
    for i in range(levels.n):
        assert phi_k[i] == pytest.approx(_phi_by_definition(levels, y, i, int(k[i])), abs=1e-9)


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


def test_capped_master_equals_the_aggregated_radius_mip():
    """At radii k the master is the aggregated radius problem: its optimum equals the radius
    model's (HiGHS through Pyomo) at the same radii."""
    from aidopt.solvers import solve_model

    inst = small_instance(5, kind="p-median", n=25, s=15, p=3)
    data = data_of(inst)
    levels = CostLevels.of(data)
    k = np.minimum(np.full(levels.n, 2), levels.n_levels - 1)
    cap = np.count_nonzero(levels.level < k[:, None], axis=1)
    res = solve_benders(levels, data.demand[levels.customers], None, 3, cap=cap)
    assert res.status == "optimal"
    problem = FacilityRadiusProblem()
    agg = problem.aggregate(data, levels.partition(k))
    out = solve_model(problem.build(agg), solver="highs", options={"mip_rel_gap": 1e-9})
    assert res.objective == pytest.approx(out.objective, rel=1e-9)
    assert res.bound <= out.objective * (1 + 1e-9)


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
