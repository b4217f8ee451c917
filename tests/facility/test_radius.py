"""AID over each customer's cost levels (aggregation="radius"): exact on the seeded cases with
HiGHS, SCIP and Gurobi, a relaxation at every radius, the split rule exercised, the level
bookkeeping checked against brute force."""

from __future__ import annotations

import math

import numpy as np
import pyomo.environ as pyo
import pytest
from aidopt.decomposition import RunConfig, solve, solve_direct
from aidopt.decomposition.plugins.facility_radius import CostLevels, FacilityRadiusProblem
from aidopt.models import facility_radius as rmodel

from aidopt import solvers
from aidopt.api.facility import solve_facility_location
from aidopt.data.facility import as_facility_data
from aidopt.results import Termination
from tests.facility._helpers import data_of, small_instance
from tests.facility.test_aid_exact import CASES, _ids, _needs, check_run


@pytest.mark.parametrize("lp_rounds", [0, 50], ids=["mip-only", "lp-phase"])
@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_radius_aid_equals_brute_force_highs(case, lp_rounds):
    inst = small_instance(**case)
    data = data_of(inst)
    config = RunConfig(solver="highs", log=False)
    aid = solve(FacilityRadiusProblem(lp_rounds=lp_rounds), data, config)
    check_run(aid, inst["optimum"])
    assert math.isclose(data.objective(aid.solution["open"], aid.solution["assign"]), aid.objective)
    if data.p is not None:
        assert len(aid.solution["open"]) <= data.p


@pytest.mark.parametrize("case", CASES[::4], ids=_ids)
def test_radius_direct_is_the_full_formulation(case):
    inst = small_instance(**case)
    res = solve_direct(FacilityRadiusProblem(), data_of(inst), RunConfig(solver="highs", log=False))
    check_run(res, inst["optimum"])
    assert len(res.history) == 1 and res.history[0].n_split == 0


def test_radius_split_rule_is_exercised():
    """Without the LP phase the greedy radii are too small on most cases: AID must split (grow
    radii) and still end on the optimality condition."""
    splits, iterations, conditions = 0, 0, 0
    for case in CASES:
        res = solve(FacilityRadiusProblem(lp_rounds=0, improve=0), data_of(small_instance(**case)),
                    RunConfig(solver="highs", log=False))
        splits += sum(h.n_split for h in res.history)
        iterations += len(res.history)
        conditions += res.history[-1].n_split == 0
    assert splits >= 10 and iterations > len(CASES) + 5
    assert conditions >= len(CASES) // 2  # most runs end on the condition, not on the gap


@pytest.mark.parametrize("solver", [pytest.param("scip", marks=_needs("scip")),
                                    pytest.param("gurobi", marks=_needs("gurobi"))])
def test_radius_other_solvers(solver):
    cases = CASES[::3] if solver == "scip" else CASES[::4]
    for case in cases:
        inst = small_instance(**case)
        res = solve(FacilityRadiusProblem(lp_rounds=2), data_of(inst),
                    RunConfig(solver=solver, log=False))
        check_run(res, inst["optimum"])
        assert res.solver == solver


# ---------------------------------------------------------------------------- the levels
def _levels_case():
    costs = np.array([[3.0, 1.0, 3.0, 7.0, 0.0],
                      [2.0, 2.0, 2.0, 2.0, 2.0],
                      [9.0, 4.0, 6.0, 4.0, 5.0],
                      [1.0, 1.0, 1.0, 1.0, 1.0]])
    demand = np.array([1.0, 2.0, 3.0, 0.0])  # the last customer has no demand: not modelled
    return as_facility_data(costs, p=2, demand=demand)


def test_cost_levels_against_brute_force():
    data = _levels_case()
    lv = CostLevels.of(data)
    assert lv is CostLevels.of(data)  # cached on the data
    assert lv.customers.tolist() == [0, 1, 2]
    for r, i in enumerate(lv.customers):
        distinct = np.unique(data.costs[i])
        assert lv.n_levels[r] == distinct.size
        assert np.array_equal(lv.sorted_costs[r], np.sort(data.costs[i]))
        for j in range(data.n_sites):
            assert lv.site_level[r, j] == np.searchsorted(distinct, data.costs[i, j])
    values = np.array([3.0, 2.5, 100.0])
    assert lv.level_of(values).tolist() == [2, 1, 4]  # distinct costs strictly below each value
    assert lv.price(np.array([0, 0, 2])).tolist() == [0.0, 2.0, 6.0]


def test_partition_round_trip_and_refinement():
    data = _levels_case()
    lv = CostLevels.of(data)
    k = np.array([2, 0, 1])
    part = lv.partition(k)
    assert part.n == 3 * 5
    assert lv.radii(part).tolist() == k.tolist()
    assert part.n_clusters == int((k + 1).sum())
    # customer 0 at radius 2: levels 0 (cost 0) and 1 (cost 1) alone, the rest one far cluster
    labels = part.labels.reshape(3, 5)
    assert len(set(labels[0].tolist())) == 3 and labels[0, 0] == labels[0, 2] == labels[0, 3]
    # radii beyond the last level are capped (the far cluster is then one level)
    assert lv.radii(lv.partition(np.array([99, 99, 99]))).tolist() == (lv.n_levels - 1).tolist()
    # the trivial partition (every pair alone) reads as the full formulation
    trivial = FacilityRadiusProblem().trivial_partition(data)
    assert trivial.n == part.n and lv.radii(trivial).tolist() == (lv.n_levels - 1).tolist()
    with pytest.raises(ValueError, match="pairs"):
        lv.radii(part.__class__(part.labels[:-1], part.counts))
    # a start partition whose cluster mixes customers is refused, not misread
    one = part.__class__(np.zeros(part.n, dtype=np.int64), np.array([part.n]))
    with pytest.raises(ValueError, match="one customer"):
        lv.radii(one)


def _fixed_y_value(data, k, open_sites):
    """The radius model's optimum with the open sites fixed (HiGHS)."""
    lv = CostLevels.of(data)
    md = FacilityRadiusProblem.model_data(lv, k, data.demand[lv.customers], data)
    model = rmodel.create_instance(md)
    for j in range(data.n_sites):
        model.y[j].fix(1.0 if j in open_sites else 0.0)
    out = solvers.solve_model(model, "highs", problem_class=solvers.ProblemClass.MILP)
    assert out.status == "optimal"
    return pyo.value(model.objective)


@pytest.mark.parametrize("seed", range(4))
def test_truncated_model_is_a_relaxation_and_exact_at_full_radius(seed):
    inst = small_instance(seed=30 + seed, kind="ufl" if seed % 2 else "p-median", p=3, ties=seed > 1)
    data = data_of(inst)
    lv = CostLevels.of(data)
    rng = np.random.default_rng(seed)
    for _ in range(5):
        open_sites = set(rng.choice(data.n_sites, size=3, replace=False).tolist())
        idx = sorted(open_sites)
        nearest = data.costs[:, idx].min(axis=1)
        true = data.demand @ nearest + (0.0 if data.fixed is None else data.fixed[idx].sum())
        k = rng.integers(0, lv.n_levels)
        price = lv.price(np.minimum(k, lv.n_levels - 1))
        expected = data.demand @ np.minimum(nearest, price) + (0.0 if data.fixed is None else data.fixed[idx].sum())
        assert _fixed_y_value(data, k, open_sites) == pytest.approx(expected)
        assert expected <= true + 1e-9
        assert _fixed_y_value(data, lv.n_levels - 1, open_sites) == pytest.approx(true)


def test_model_data_rows_and_nonzeros():
    data = _levels_case()
    lv = CostLevels.of(data)
    md = FacilityRadiusProblem.model_data(lv, np.array([2, 0, 1]), data.demand[lv.customers], data)
    # customer 0: levels 0 (site 4) and 1 (site 1); customer 2: level 0 (sites 1 and 3)
    assert md.row_customer.tolist() == [0, 0, 2]
    assert md.row_cost.tolist() == [1.0 * (1 - 0), 1.0 * (3 - 1), 3.0 * (5 - 4)]
    rows = [sorted(md.site_index[md.site_ptr[r]:md.site_ptr[r + 1]].tolist()) for r in range(3)]
    assert rows == [[4], [1], [1, 3]]
    assert md.constant == 1.0 * 0 + 2.0 * 2 + 3.0 * 4
    assert md.nnz == 4 + 3 + 1


# ---------------------------------------------------------------------------- front door
def test_front_door_default_is_benders_and_agrees_with_radius_and_sites():
    inst = small_instance(seed=3, kind="ufl", n=30, s=15)
    kw = dict(fixed_costs=inst["fixed_costs"], demand=inst["demand"], log=False, tol=1e-6)
    default = solve_facility_location(inst["costs"], **kw)
    radius = solve_facility_location(inst["costs"], solver="highs", **kw)
    sites = solve_facility_location(inst["costs"], aggregation="sites", **kw)
    assert default.problem == "facility-benders" and default.solver == "benders"
    assert radius.problem == "facility-radius" and sites.problem == "facility"
    assert default.termination is radius.termination is sites.termination \
        is Termination.CERTIFIED_OPTIMAL
    assert default.objective == pytest.approx(radius.objective)
    assert radius.objective == pytest.approx(sites.objective)
    assert radius.objective == pytest.approx(inst["optimum"])
    with pytest.raises(ValueError, match="uncapacitated"):
        solve_facility_location(inst["costs"], aggregation="sites", solver="benders", **kw)


def test_time_limited_run_keeps_an_honest_bound():
    from aidopt.instances.facility import euclidean_instance

    inst = euclidean_instance(400, 150, kind="p-median", p=8, seed=2)
    res = solve_facility_location(inst["costs"], p=8, log=False, time_limit=0.5, lp_rounds=0)
    assert res.termination in (Termination.TIME_LIMIT, Termination.CERTIFIED_OPTIMAL)
    if res.history:
        assert all(h.lower_bound <= h.E_best + 1e-6 * max(1.0, h.E_best) for h in res.history)
    if res.termination is Termination.TIME_LIMIT:
        assert not res.certified


@pytest.mark.parametrize("kwargs, message", [
    (dict(aggregation="levels"), "aggregation must be one of"),
    (dict(grow=0.5), "grow must be"),
    (dict(lp_rounds=-1), "lp_rounds must be"),
    (dict(lp_rounds=1.5), "lp_rounds must be"),
    (dict(mip_gap=1.0), "mip_gap must be"),
])
def test_bad_options(kwargs, message):
    inst = small_instance(seed=1, kind="p-median", p=2)
    with pytest.raises(ValueError, match=message):
        solve_facility_location(inst["costs"], p=2, log=False, **kwargs)
