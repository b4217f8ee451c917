"""OR-Library known optima, the public front door, an honest bound under a time limit, the
plug-in contract, the CLI and the bench worker."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from aidopt.decomposition.plugins.facility import FacilityProblem, cluster_minima
from aidopt.instances.facility import ORLIB_PMED, euclidean_instance, orlib_pmed, san_francisco

import aidopt.api.facility as facility_mod
import aidopt.data.facility as facility_data
from aidopt import solvers
from aidopt.results import Termination
from aidopt.testing.contract import check_plugin
from tests.facility._helpers import brute_force, data_of, small_instance


def test_cluster_minima():
    values = np.array([[3.0, 1.0, 2.0, 5.0], [0.0, 4.0, 4.0, 1.0]])
    labels = np.array([1, 0, 1, 0])
    np.testing.assert_array_equal(cluster_minima(values, labels, 2), [[1.0, 2.0], [1.0, 0.0]])


@pytest.mark.parametrize("name", ["pmed1", "pmed5"])
def test_orlib_known_optimum_aid(name):
    costs, p, optimum = orlib_pmed(name)
    res = facility_mod.solve_facility_location(costs, p=p, log=False)
    assert res.termination is Termination.CERTIFIED_OPTIMAL, res.summary()
    assert res.objective == optimum and res.gap <= 1e-6
    assert res.lower_bound == optimum
    assert len(res.solution["open"]) == p
    assert res.solution["assign"].shape == (costs.shape[0],)
    assert np.isin(res.solution["assign"], res.solution["open"]).all()


def test_orlib_pmed1_direct():
    costs, p, optimum = orlib_pmed("pmed1")
    res = facility_mod.solve_facility_location(costs, p=p, aid=False, log=False)
    assert res.certified and res.objective == optimum


@pytest.mark.slow
def test_orlib_pmed10():
    costs, p, optimum = orlib_pmed("pmed10")
    res = facility_mod.solve_facility_location(costs, p=p, log=False)
    assert res.certified and res.objective == optimum


def test_shipped_instances():
    assert set(ORLIB_PMED) == {f"pmed{i}" for i in range(1, 16)}
    from aidopt.instances.facility import DATA_DIR, tsplib_path

    for name, (n, p, _) in ORLIB_PMED.items():  # each file's header says the table's n and p
        with open(DATA_DIR / f"{name}.txt") as fh:
            header = fh.readline().split()
        assert (int(header[0]), int(header[2])) == (n, p), name
    from aidopt.data.facility import read_tsplib

    for name, size in (("fl1400", 1400), ("u1432", 1432)):
        xy, kind = read_tsplib(tsplib_path(name))
        assert xy.shape == (size, 2) and kind == "EUC_2D"
    sf = san_francisco()
    assert sf["costs"].shape == (205, 16) and sf["demand"].shape == (205,)
    inst = euclidean_instance(50, 10, kind="ufl", seed=1)
    assert inst["costs"].shape == (50, 10) and inst["fixed_costs"].shape == (10,)
    assert np.array_equal(inst["costs"], euclidean_instance(50, 10, kind="ufl", seed=1)["costs"])


def test_san_francisco_p4_matches_brute_force():
    sf = san_francisco()
    res = facility_mod.solve_facility_location(sf["costs"], p=4, demand=sf["demand"], site_xy=sf["site_xy"],
                                      customer_xy=sf["customer_xy"], log=False)
    assert res.certified
    best = brute_force(sf["costs"], 4, None, sf["demand"])
    assert math.isclose(res.objective, best, rel_tol=1e-9)


def test_time_limited_aggregated_mip_keeps_an_honest_bound():
    """A MIP stopped at its time limit: the bound is its dual bound (not its incumbent), below
    the optimum, and its incumbent lifts to a feasible solution."""
    costs, p, optimum = orlib_pmed("pmed1")
    problem = FacilityProblem()
    data = facility_data.as_facility_data(costs, p=p)
    outcome = solvers.SolveOutcome(solvers.SolveStatus.TIME_LIMIT, 6000.0, None, True, "highs",
                                   "", 1.0, bound=5700.2)
    assert problem.on_nonoptimal(outcome)
    assert problem.lower_bound(outcome, None, data) == 5701.0  # integral costs: rounded up
    none = solvers.SolveOutcome(solvers.SolveStatus.TIME_LIMIT, None, None, False, "highs", "", 1.0)
    assert not problem.on_nonoptimal(none) and problem.lower_bound(none, None, data) is None
    # through the run: whatever stops it, lower <= optimum <= objective
    for limit in (0.3, 1.0):
        res = facility_mod.solve_facility_location(costs, p=p, time_limit=limit, log=False,
                                          raise_on_failure=False)
        assert res.lower_bound <= optimum <= res.objective or not math.isfinite(res.objective)
        for h in res.history:
            assert h.lower_bound <= optimum <= h.E_t


def test_time_limited_mip_through_the_solver():
    """A real HiGHS MIP stopped by a tiny time limit reports its dual bound, not its incumbent."""
    inst = euclidean_instance(300, 60, kind="p-median", p=6, seed=3)
    problem = FacilityProblem(far=False)
    data = facility_data.as_facility_data(inst["costs"], p=6)
    from aidopt.decomposition.partition import Partition

    partition = Partition.from_labels(np.arange(60) // 2)
    agg = problem.aggregate(data, partition, None)
    for limit in (0.05, 0.2, 0.5, 1.0):
        model = problem.build(agg)
        out = solvers.solve_model(model, "highs", time_limit=limit, options={"mip_rel_gap": 0.0})
        if out.status == "time_limit" and out.has_solution:
            break
    else:
        pytest.skip(f"HiGHS never stopped at a time limit with an incumbent ({out.status})")
    exact = solvers.solve_model(problem.build(agg), "highs", options={"mip_rel_gap": 0.0})
    assert problem.lower_bound(out, None, data) <= exact.objective + 1e-6
    lifted = problem.lift(model, out, partition, agg, data)
    assert problem.evaluate(data, lifted) >= exact.objective - 1e-6


def _contract_data(seed):
    inst = small_instance(seed, kind="ufl", n=14, s=9)
    return data_of(inst)


def test_plugin_conforms_ufl():
    report = check_plugin(FacilityProblem, _contract_data(0), "highs", other_data=_contract_data(1),
                          convex=True, config={"r0": 0.25})
    assert report.aid.certificate.method == "mip_bound"


def test_plugin_conforms_pmedian():
    def data(seed):
        return data_of(small_instance(seed, kind="p-median", p=3, n=14, s=9))

    report = check_plugin(FacilityProblem, data(2), "highs", other_data=data(3), convex=True,
                          config={"r0": 0.25})
    assert report.aid.termination is Termination.CERTIFIED_OPTIMAL


def test_capacitated_direct():
    inst = small_instance(4, kind="ufl", n=10, s=6)
    cap = np.full(6, inst["demand"].sum() / 3.0)
    res = facility_mod.solve_facility_location(inst["costs"], fixed_costs=inst["fixed_costs"],
                                      demand=inst["demand"], capacity=cap, aid=False, log=False)
    assert res.certified
    shares = res.solution["shares"]
    np.testing.assert_allclose(shares.sum(axis=1), 1.0, atol=1e-6)
    load = inst["demand"] @ shares
    assert np.all(load <= cap + 1e-6)
    assert res.objective >= inst["optimum"] - 1e-6  # capacities only add cost


def test_result_json_and_map(tmp_path):
    inst = euclidean_instance(80, 20, kind="ufl", seed=2)
    res = facility_mod.solve_facility_location(inst["costs"], fixed_costs=inst["fixed_costs"],
                                      demand=inst["demand"], customer_xy=inst["customer_xy"],
                                      site_xy=inst["site_xy"], log=False)
    assert res.certified
    doc = json.loads(res.to_json())
    assert doc["solution"]["open"] == res.solution["open"].tolist()
    facility_mod.plot_facility(res, path=tmp_path / "map.png")
    assert (tmp_path / "map.png").stat().st_size > 1000


def test_cli_facility(tmp_path, capsys):
    from aidopt.cli.facility import auto_fixed_costs

    rng = np.random.default_rng(0)
    xy = rng.random((40, 2))
    np.savetxt(tmp_path / "pts.csv", xy, delimiter=",")
    argv = ["facility", "--coords", str(tmp_path / "pts.csv"), "--p", "3", "--quiet",
            "--assignments", str(tmp_path / "a.csv"), "--map", str(tmp_path / "m.png"),
            "--output", str(tmp_path / "r.json")]
    assert _cli(argv) == 0
    out = capsys.readouterr().out
    assert "open sites (3)" in out and "result: certified_optimal, " in out
    assert "certificate passed" in out
    rows = np.loadtxt(tmp_path / "a.csv", delimiter=",", skiprows=1)
    assert rows.shape == (40, 3)
    assert (tmp_path / "m.png").exists() and (tmp_path / "r.json").exists()
    np.savetxt(tmp_path / "c.csv", np.round(rng.random((12, 5)) * 10), delimiter=",")
    assert _cli(["facility", "--costs", str(tmp_path / "c.csv"), "--fixed-costs", "auto",
                 "--quiet"]) == 0
    assert auto_fixed_costs(np.ones((4, 4))).tolist() == [1.0] * 4
    # an unfinished run exits 1: the site aggregation needs several iterations on pmed1
    assert _cli(["facility", "--orlib", "pmed1", "--quiet", "--max-iter", "1",
                 "--aggregation", "sites"]) == 1
    assert _cli(["facility", "--orlib", "pmed1", "--quiet", "--grow", "0.5"]) == 2
    assert _cli(["facility", "--costs", str(tmp_path / "c.csv"), "--p", "9"]) == 2
    assert "p must be between" in capsys.readouterr().err


def _cli(argv):
    """``aidopt facility`` through a parser holding only this command (the lead wires it into
    aidopt.cli)."""
    import argparse
    import sys

    from aidopt.cli.facility import add_arguments
    from aidopt.solvers import SolverError

    parser = argparse.ArgumentParser(prog="aidopt")
    add_arguments(parser.add_subparsers(dest="command", required=True).add_parser("facility"))
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError, OSError, SolverError) as exc:
        print(f"aidopt: error: {exc}", file=sys.stderr)
        return 2


def test_bench_worker_small():
    from aidopt.bench.facility import _worker, direct_highs, load_instance

    inst = load_instance("pmed1")
    r = direct_highs(inst["costs"], inst["p"], gap=1e-6)
    assert r["objective"] == 5819 and r["status"] == "Optimal"
    w = _worker("aid", "sf-p4", 60.0, 1e-6, 0)
    assert math.isclose(w["objective"], 2848268129.7145, rel_tol=1e-9) and w["gap"] <= 1e-6
    with pytest.raises(ValueError, match="unknown facility instance"):
        load_instance("nope!")


def test_far_factor_reaches_the_site_plugin_from_api_and_cli(monkeypatch):
    """One declaration (aidopt/api/facility.py) makes the keyword, the documentation and the CLI
    flag; the value reaches FacilityProblem."""
    from aidopt.decomposition.plugins import facility as plugin

    from aidopt.cli.main import build_parser

    seen = []
    real = plugin.FacilityProblem.__init__

    def spy(self, *args, **kwargs):
        seen.append(kwargs.get("far_factor"))
        real(self, *args, **kwargs)

    monkeypatch.setattr(plugin.FacilityProblem, "__init__", spy)
    # 60 x 20 at p = 4 (three AID iterations) rather than pmed1: the same path, 10x less time
    costs, p = small_instance(0, kind="p-median", n=60, s=20, p=4)["costs"], 4
    optimum = brute_force(costs, p)
    exact = facility_mod.solve_facility_location(costs, p=p, aggregation="sites", far=True,
                                                 far_factor=3.0, log=False)
    assert seen == [3.0] and exact.certified and exact.objective == optimum
    args = build_parser("facility").parse_args(["facility", "--orlib", "pmed1", "--far-factor", "2.5"])
    assert args.far_factor == 2.5


def test_a_failing_mip_solver_falls_back_to_highs(monkeypatch):
    """SCIP failing on an aggregated MIP (as its "error in LP solver" on costs of 1e9) raised
    with no fallback; the run now retries the model with HiGHS and certifies."""
    real = solvers.solve_model

    def scip_fails(model, solver="highs", **kwargs):
        if solver == "scip":
            return solvers.SolveOutcome("error", None, None, False, "scip", "", 0.0,
                                        "error in LP solver")
        return real(model, solver, **kwargs)

    monkeypatch.setattr(solvers, "solve_model", scip_fails)
    # 60 x 20 at p = 4 (2-4 aggregated MIPs per run) rather than pmed1: the same path, faster
    costs, p = small_instance(0, kind="p-median", n=60, s=20, p=4)["costs"], 4
    optimum = brute_force(costs, p)
    for aggregation in ("radius", "sites"):
        res = facility_mod.solve_facility_location(costs * 1e6, p=p, solver="scip",
                                                   aggregation=aggregation, log=False)
        assert res.certified and res.objective == pytest.approx(optimum * 1e6)
        assert "retried with highs" in res.message and {h.solver for h in res.history} == {"highs"}


def test_euclidean_rounding_conventions():
    from aidopt.data.facility import euclidean_costs

    a = np.array([[0.0, 0.0], [3.0, 4.5], [1.0, 1.0]])  # distances 5.408.., 1.414.., 3.5 + ...
    exact = euclidean_costs(a)
    assert np.array_equal(euclidean_costs(a, round_to=0, rounding="floor"), np.floor(exact))
    assert np.array_equal(euclidean_costs(a, round_to=0, rounding="ceil"), np.ceil(exact))
    assert np.array_equal(euclidean_costs(a, round_to=0), np.floor(exact + 0.5))
    half = np.array([[0.0, 0.0], [2.5, 0.0]])  # TSPLIB's nint: 2.5 -> 3, floor -> 2
    assert euclidean_costs(half, round_to=0)[0, 1] == 3.0
    assert euclidean_costs(half, round_to=0, rounding="floor")[0, 1] == 2.0
    assert euclidean_costs(half, round_to=1, rounding="floor")[0, 1] == 2.5
    with pytest.raises(ValueError, match="rounding must be one of"):
        euclidean_costs(a, round_to=0, rounding="round")
