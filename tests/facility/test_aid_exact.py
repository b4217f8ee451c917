"""AID on small seeded instances: the certified optimum equals the brute-force optimum, every
proven bound is below it and every lifted cost above it, and the split rule is exercised."""

from __future__ import annotations

import math

import pytest
from aidopt.decomposition import RunConfig, solve, solve_direct
from aidopt.decomposition.plugins.facility import FacilityProblem

from aidopt import solvers
from aidopt.results import Termination
from tests.facility._helpers import data_of, small_instance


def _needs(name):
    avail = solvers.availability(name)
    return pytest.mark.skipif(avail not in ("full", "limited"),
                              reason=f"{name} not installed ({avail}): pip install 'aidopt[{name}]'")


# 24 instances: UFL and p-median, ties in costs, sites with equal costs, p = 1 and p = n_sites - 1
CASES = (
    [dict(kind="ufl", seed=s) for s in range(5)]
    + [dict(kind="ufl", seed=s, ties=True) for s in range(5, 8)]
    + [dict(kind="ufl", seed=8, duplicate_sites=True), dict(kind="ufl", seed=9, ties=True,
                                                              duplicate_sites=True)]
    + [dict(kind="p-median", seed=s, p=2 + s % 3) for s in range(10, 15)]
    + [dict(kind="p-median", seed=s, p=3, ties=True) for s in range(15, 18)]
    + [dict(kind="p-median", seed=18, p=1), dict(kind="p-median", seed=19, p=1, ties=True)]
    + [dict(kind="p-median", seed=20, p=7), dict(kind="p-median", seed=21, p=7, ties=True)]
    + [dict(kind="p-median", seed=22, p=2, duplicate_sites=True),
       dict(kind="p-median", seed=23, p=3, ties=True, duplicate_sites=True)]
)


def _ids(case):
    return "-".join(f"{k}={v}" for k, v in case.items())


def check_run(result, optimum, *, rtol=1e-6):
    scale = max(1.0, abs(optimum))
    assert result.termination is Termination.CERTIFIED_OPTIMAL, result.summary()
    assert abs(result.objective - optimum) <= rtol * scale, (result.objective, optimum)
    for h in result.history:  # lower <= optimum <= upper at every iteration
        assert h.lower_bound <= optimum + rtol * scale, (h.t, h.lower_bound, optimum)
        assert h.E_t >= optimum - rtol * scale, (h.t, h.E_t, optimum)
        assert h.lower_bound <= h.E_best + rtol * scale


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_aid_equals_brute_force_highs(case):
    inst = small_instance(**case)
    data = data_of(inst)
    config = RunConfig(solver="highs", log=False, r0=0.25)
    aid = solve(FacilityProblem(), data, config)
    check_run(aid, inst["optimum"])
    direct = solve_direct(FacilityProblem(), data, config)
    check_run(direct, inst["optimum"])
    assert len(direct.history) == 1
    # the returned solution costs what the result says
    assert math.isclose(data.objective(aid.solution["open"], aid.solution["assign"]), aid.objective)
    if data.p is not None:
        assert len(aid.solution["open"]) <= data.p


def test_split_rule_is_exercised():
    """Over the seeded cases, AID splits clusters (more than one iteration) and ends on the
    optimality condition, with both the within-cluster (excess) and the far-column paths seen."""
    splits, iterations = 0, 0
    for case in CASES[:12]:
        inst = small_instance(**case)
        res = solve(FacilityProblem(), data_of(inst), RunConfig(solver="highs", log=False, r0=0.25))
        splits += sum(h.n_split for h in res.history)
        iterations += len(res.history)
    assert splits >= 5 and iterations > len(CASES[:12])


@pytest.mark.parametrize("far", [True, False], ids=["far", "no-far"])
@pytest.mark.parametrize("prune", [True, False], ids=["prune", "no-prune"])
def test_options_keep_exactness(far, prune):
    for case in (CASES[0], CASES[10], CASES[15]):
        inst = small_instance(**case)
        res = solve(FacilityProblem(far=far, prune=prune, improve=0, max_children=2),
                    data_of(inst), RunConfig(solver="highs", log=False, r0=0.25))
        check_run(res, inst["optimum"])


@pytest.mark.parametrize("solver", [pytest.param("scip", marks=_needs("scip")),
                                    pytest.param("gurobi", marks=_needs("gurobi"))])
def test_aid_equals_brute_force_other_solvers(solver):
    """SCIP on a third of the cases (Pyomo's scip_direct is slower to set up); Gurobi's pip
    licence (2000 variables) takes these sizes too."""
    cases = CASES[::3] if solver == "scip" else CASES[::4]
    for case in cases:
        inst = small_instance(**case)
        res = solve(FacilityProblem(), data_of(inst), RunConfig(solver=solver, log=False, r0=0.25))
        check_run(res, inst["optimum"])
        assert res.solver == solver
