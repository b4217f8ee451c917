"""The MCLP's reduced-cost fixing method (decomposition/plugins/covering_fixing.py): the
Lagrangian bounds against brute force over every set of p sites, the restricted rows against
the original rows, the heuristic's local optimality, and the method against the plain MIP and
brute force (equal optimum, certified), with tampered answers refused by the certificate."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from aidopt.decomposition.plugins import covering_fixing as cf
from scipy.optimize import linprog

from aidopt.api.facility import solve_facility_location
from aidopt.bench.covering import covering_points, covering_sites, mclp_radius
from aidopt.data.coverage import CoverRows, aggregate_rows, coverage_sets
from aidopt.data.facility import EuclideanCosts, euclidean_costs


def random_rows(seed, n=40, s=9, integer=True):
    """Aggregated rows of random points and sites (weights integer or fractional)."""
    rng = np.random.default_rng(seed)
    C = euclidean_costs(rng.random((n, 2)), rng.random((s, 2)))
    w = rng.integers(1, 6, size=n).astype(float) if integer else rng.uniform(0.2, 3.0, size=n)
    rows = aggregate_rows(coverage_sets(C, float(np.quantile(C, 0.25))), w)
    return rng, rows, s


def every_value(rows, s, p):
    """``{subset: uncovered weight}`` over every set of p sites."""
    return {S: cf.rows_uncovered(rows, list(S), s) for S in itertools.combinations(range(s), p)}


def lp_value(rows, s, p):
    """The LP relaxation's value by scipy's linprog (independent of HiGHS's interior point)."""
    R = rows.n_rows
    A = np.zeros((R, s + R))
    for r in range(R):
        A[r, rows.row(r)] = 1.0
        A[r, s + r] = 1.0
    c = np.concatenate([np.zeros(s), rows.weight])
    res = linprog(c, A_ub=-A, b_ub=-np.ones(R), A_eq=np.concatenate([np.ones(s), np.zeros(R)])[None],
                  b_eq=[p], bounds=(0, 1), method="highs-ds")
    return float(res.fun)


# --------------------------------------------------------------------------- the bounds
@pytest.mark.parametrize("seed", range(6))
def test_lagrangian_bounds_bound_every_solution(seed):
    rng, rows, s = random_rows(seed)
    p = int(rng.integers(1, 4))
    values = every_value(rows, s, p)
    opt = min(values.values())
    for trial in range(4):
        pi = rng.uniform(0.0, 4.0, size=rows.n_rows) * (rng.random(rows.n_rows) < 0.8)
        if trial == 0:
            pi = pi - 1.0  # negative entries are taken as 0
        bound, with_open, with_closed = cf.lagrangian_bounds(rows, s, p, pi)
        assert bound <= opt + 1e-9
        for j in range(s):
            inside = [v for S, v in values.items() if j in S]
            outside = [v for S, v in values.items() if j not in S]
            assert with_open[j] <= min(inside) + 1e-9
            assert with_closed[j] <= (min(outside) if outside else np.inf) + 1e-9
            assert with_open[j] >= bound - 1e-9 and with_closed[j] >= bound - 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_lagrangian_bound_at_the_lp_duals_is_the_lp_value(seed):
    rng, rows, s = random_rows(seed, integer=seed % 2 == 0)
    p = 2 + seed % 2
    x, pi = cf.relaxation(rows, s, p)
    bound, _, _ = cf.lagrangian_bounds(rows, s, p, pi)
    assert bound == pytest.approx(lp_value(rows, s, p), rel=1e-7, abs=1e-7)
    assert x.sum() == pytest.approx(p, abs=1e-6)


@pytest.mark.parametrize("seed", range(5))
def test_restricted_rows_price_every_solution_as_the_original(seed):
    rng, rows, s = random_rows(seed)
    forced = rng.choice(s, size=2, replace=False)
    rest = np.setdiff1d(np.arange(s), forced)
    free = np.sort(rng.choice(rest, size=4, replace=False))
    sub, constant = cf.restrict(rows, s, free, forced)
    assert np.array_equal(np.unique(sub.row(0)), sub.row(0)) if sub.n_rows else True
    # equal rows merged: every restricted row distinct
    assert len({tuple(sub.row(r)) for r in range(sub.n_rows)}) == sub.n_rows
    for k in range(free.size + 1):
        for S in itertools.combinations(range(free.size), k):
            original = cf.rows_uncovered(rows, np.concatenate([forced, free[list(S)]]), s)
            assert constant + cf.rows_uncovered(sub, list(S), free.size) == \
                pytest.approx(original, abs=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_greedy_swap_ends_at_a_swap_local_optimum(seed):
    rng, rows, s = random_rows(seed, n=60, s=12, integer=seed % 2 == 0)
    p = int(rng.integers(1, 5))
    chosen = cf.greedy_swap(rows, s, p, start=[0] if seed % 2 else ())
    assert chosen.size == p and np.unique(chosen).size == p
    value = cf.rows_uncovered(rows, chosen, s)
    for out in chosen:
        for into in np.setdiff1d(np.arange(s), chosen):
            swapped = np.append(chosen[chosen != out], into)
            assert cf.rows_uncovered(rows, swapped, s) >= value - 1e-9


def test_greedy_swap_refuses_a_bad_p():
    _, rows, s = random_rows(0)
    with pytest.raises(ValueError, match="p must be"):
        cf.greedy_swap(rows, s, s + 1)


# --------------------------------------------------------------------------- the method
@pytest.mark.parametrize("seed", range(8))
def test_solve_mclp_matches_brute_force(seed):
    rng, rows, s = random_rows(seed, n=50, s=10, integer=seed % 3 != 2)
    p = int(rng.integers(1, 5))
    fixed_open = [int(rng.integers(0, s))] if seed % 4 == 3 else []
    values = {S: v for S, v in every_value(rows, s, p).items() if set(fixed_open) <= set(S)}
    res = cf.solve_mclp(rows, s, p, fixed_open=fixed_open, integral=seed % 3 != 2)
    assert res.status == "optimal"
    assert res.open.size == p and set(fixed_open) <= set(res.open.tolist())
    assert res.objective == pytest.approx(min(values.values()), abs=1e-9)
    assert cf.rows_uncovered(rows, res.open, s) == pytest.approx(res.objective, abs=1e-12)
    assert res.bound <= res.objective + 1e-9
    assert res.bound >= res.objective - 1e-6 * max(1.0, res.objective)


def scale_instance(kind, n, s, p, seed=3):
    pts, sites = covering_points(n, kind, seed), covering_sites(kind, seed, s)
    return EuclideanCosts(pts, sites), mclp_radius(p)


@pytest.mark.parametrize("kind,n,s,p", [("clustered", 2000, 60, 5), ("uniform", 3000, 100, 10),
                                        ("clustered", 4000, 80, 8)])
def test_fixing_matches_the_plain_mip(kind, n, s, p):
    costs, radius = scale_instance(kind, n, s, p)
    fixed = solve_facility_location(costs, p=p, model="mclp", radius=radius, log=False)
    plain = solve_facility_location(costs, p=p, model="mclp", radius=radius, log=False,
                                    fixing=False)
    assert fixed.termination.value == plain.termination.value == "certified_optimal"
    assert fixed.objective == plain.objective
    assert fixed.certificate.residuals["open sites other than p"] == 0.0
    assert "lagrangian" in fixed.history[-1].info and "lagrangian" not in plain.history[-1].info


def test_fixing_closes_sites_and_solves_the_mip_on_the_rest():
    """The clustered instance where the LP bound stays below the incumbent: sites are fixed
    closed, the MIP runs on the rest, and its answer is certified on the original points."""
    costs, radius = scale_instance("clustered", 2000, 60, 5)
    res = solve_facility_location(costs, p=5, model="mclp", radius=radius, log=False)
    info = res.history[-1].info
    assert 0 < info["free_sites"] < 60 and info["fixed_closed"] > 0
    assert info["rows"] < res.dimensions["rows"]  # the restricted rows merged
    assert info["lagrangian"] < res.objective
    assert res.termination.value == "certified_optimal"


def test_a_heuristic_mip_cut_short_runs_again_on_the_sites_fixings_leave(monkeypatch):
    """Every heuristic MIP reported as stopped by its time (its solution kept): the rounds go on,
    HEURISTIC_ROUNDS of them, each with twice the time on the sites the last fixings left (a
    subset of the last round's); the answer stays the plain MIP's, certified."""
    costs, radius = scale_instance("clustered", 2000, 60, 5)
    calls = []
    real = cf._restricted_mip

    def cut_short(rows, n_sites, p, sites, forced, incumbent, **kw):
        calls.append((set(sites.tolist()), kw["seconds"]))
        return real(rows, n_sites, p, sites, forced, incumbent, **kw)[0], "time_limit"

    monkeypatch.setattr(cf, "_restricted_mip", cut_short)
    res = solve_facility_location(costs, p=5, model="mclp", radius=radius, log=False)
    plain = solve_facility_location(costs, p=5, model="mclp", radius=radius, log=False,
                                    fixing=False)
    assert res.termination.value == "certified_optimal" and res.objective == plain.objective
    assert len(calls) == cf.HEURISTIC_ROUNDS == res.history[-1].info["heuristic_rounds"]
    for (before, t0), (after, t1) in itertools.pairwise(calls):
        assert after <= before and t1 == pytest.approx(2 * t0)
    assert calls[-1][0] < calls[0][0]  # the fixings took sites out of the support


def test_without_an_lp_the_mip_runs_on_every_site(monkeypatch):
    costs, radius = scale_instance("clustered", 2000, 60, 5)
    monkeypatch.setattr(cf, "relaxation", lambda *a, **k: None)
    res = solve_facility_location(costs, p=5, model="mclp", radius=radius, log=False)
    plain = solve_facility_location(costs, p=5, model="mclp", radius=radius, log=False,
                                    fixing=False)
    assert res.termination.value == "certified_optimal" and res.objective == plain.objective
    assert res.history[-1].info["free_sites"] == 60


@pytest.mark.parametrize("tamper", ["suboptimal", "one_site_short"])
def test_tampered_answers_are_not_certified(monkeypatch, tamper):
    """An answer of the method whose sites are worse than it claims (a worse solution reported
    with the optimum's value and bound), or that opens p - 1 sites, is refused by the
    certificate, which prices the open sites on the original points."""
    costs, radius = scale_instance("clustered", 2000, 60, 5)
    real = cf.solve_mclp

    def tampered(rows, n_sites, p, **kw):
        res = real(rows, n_sites, p, **kw)
        if tamper == "suboptimal":
            worse = cf.greedy_swap(rows, n_sites, p, max_swaps=0)
            swapped = np.append(worse[1:], np.setdiff1d(np.arange(n_sites), worse)[-1])
            value = cf.rows_uncovered(rows, swapped, n_sites)
            assert value > res.objective
            return cf.FixingResult(swapped, res.objective, res.bound, "optimal", res.stats)
        return cf.FixingResult(res.open[1:], res.objective, res.bound, "optimal", res.stats)

    monkeypatch.setattr(cf, "solve_mclp", tampered)
    res = solve_facility_location(costs, p=5, model="mclp", radius=radius, log=False,
                                  raise_on_failure=False)
    assert res.termination.value != "certified_optimal"
    assert not res.certificate.certified


def test_fixing_false_is_the_plain_mip_and_other_kinds_ignore_it():
    from aidopt.decomposition.plugins.covering import CoveringProblem

    assert CoveringProblem("mclp").native_methods == ("highs",)
    assert CoveringProblem("mclp", fixing=False).native_methods == ()
    assert CoveringProblem("lscp").native_methods == ()


def test_rows_uncovered_of_no_rows():
    empty = CoverRows(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0),
                      np.zeros(0, dtype=np.int64))
    assert cf.rows_uncovered(empty, [0], 3) == 0.0


def test_no_fixing_flag_of_the_cli():
    from aidopt.cli.main import build_parser

    parser = build_parser("facility")
    assert parser.parse_args(["facility", "--model", "mclp"]).fixing is True
    assert parser.parse_args(["facility", "--model", "mclp", "--no-fixing"]).fixing is False


def test_ctrl_c_returns_the_incumbent_so_far(monkeypatch):
    _, rows, s = random_rows(1, n=60, s=12)

    def interrupted(*args, **kwargs):
        raise cf._Interrupted

    monkeypatch.setattr(cf, "relaxation", interrupted)
    res = cf.solve_mclp(rows, s, 3, integral=True)
    assert res.status == "interrupted" and res.bound == -np.inf
    assert res.open.size == 3
    assert res.objective == cf.rows_uncovered(rows, res.open, s)


def test_a_tiny_time_limit_still_returns_p_sites():
    costs, radius = scale_instance("clustered", 2000, 60, 5)
    rows = aggregate_rows(coverage_sets(costs, radius))
    res = cf.solve_mclp(rows, 60, 5, integral=True, time_limit=1e-4)
    assert res.status in ("time_limit", "optimal") and res.open.size == 5
    assert res.objective == cf.rows_uncovered(rows, res.open, 60)
    assert res.bound <= res.objective


def test_bench_covering_plain_mip_flag(tmp_path):
    """``aidopt bench covering --plain-mip`` runs the plain MIP, the default the fixing method;
    both certify the same optimum."""
    import json

    from aidopt.cli.main import main

    for flag, expected in (([], True), (["--plain-mip"], False)):
        raw = tmp_path / f"raw{len(flag)}.json"
        assert main(["bench", "covering", "--points", "2000", "--kinds", "clustered", "--models",
                     "mclp", "--p", "5", "--sites", "60", "--raw", str(raw), *flag]) == 0
        (row,) = json.loads(raw.read_text())
        assert row["fixing"] is expected and row["termination"] == "certified_optimal"
        if expected:
            objective = row["objective"]
        else:
            assert row["objective"] == objective


def test_threads_and_solver_options_reach_every_highs_solve(monkeypatch):
    seen = []
    real = cf._run

    def spy(lp, options, seconds, start_x=None):
        seen.append(dict(options))
        return real(lp, options, seconds, start_x)

    monkeypatch.setattr(cf, "_run", spy)
    costs, radius = scale_instance("clustered", 2000, 60, 5)
    res = solve_facility_location(costs, p=5, model="mclp", radius=radius, log=False, threads=1,
                                  solver_options={"random_seed": 3})
    assert res.termination.value == "certified_optimal"
    assert len(seen) >= 2  # the LP and a MIP
    assert all(o["threads"] == 1 and o["random_seed"] == 3 for o in seen)
