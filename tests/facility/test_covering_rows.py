"""The LSCP on a growing subset of its rows (decomposition/plugins/covering_rows.py): the same
certified optimum as the MIP on every row and as brute force, the subset growing by the rows
the subset MIP misses, the greedy completion, the door's choice and its refusals."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from aidopt.decomposition.plugins import covering_rows as cr

from aidopt.api.facility import solve_facility_location
from aidopt.data.coverage import aggregate_rows, coverage_sets
from aidopt.data.facility import euclidean_costs


def instance(seed, n=300, s=14):
    rng = np.random.default_rng(seed)
    C = euclidean_costs(rng.random((n, 2)), rng.random((s, 2)))
    radius = float(C.min(axis=1).max()) * rng.uniform(1.05, 1.8)
    f = rng.integers(1, 5, size=s).astype(float) if seed % 2 else None
    return C, radius, f


def brute_force(C, radius, f):
    """The least cost of a site set covering every point, over every subset by size."""
    s = C.shape[1]
    cost = np.ones(s) if f is None else f
    cover = C <= radius
    best = np.inf
    for k in range(1, s + 1):
        for S in itertools.combinations(range(s), k):
            if cost[list(S)].sum() < best and cover[:, S].any(axis=1).all():
                best = cost[list(S)].sum()
        if f is None and np.isfinite(best):
            break
    return best


@pytest.fixture
def tiny_rounds(monkeypatch):
    """Subsets of 2 rows, 3 added a round: every instance grows over several rounds."""
    monkeypatch.setattr(cr, "SUBSET_START", 2)
    monkeypatch.setattr(cr, "SUBSET_ADD", 3)


@pytest.mark.parametrize("seed", range(20))
def test_subset_matches_brute_force_and_every_row(seed, tiny_rounds):
    C, radius, f = instance(seed)
    expected = brute_force(C, radius, f)
    sub = solve_facility_location(C, model="lscp", radius=radius, fixed_costs=f, rows="subset",
                                  log=False)
    full = solve_facility_location(C, model="lscp", radius=radius, fixed_costs=f, rows="all",
                                   log=False)
    assert sub.termination.value == full.termination.value == "certified_optimal"
    assert sub.objective == pytest.approx(expected) and full.objective == pytest.approx(expected)
    assert sub.lower_bound == pytest.approx(expected)
    assert (C[:, sub.solution["open"]] <= radius).any(axis=1).all()  # every point covered
    assert sub.certificate.note.startswith("bound = the best MIP dual bound of the LSCP on a subset")


def test_the_subset_grows_by_the_rows_the_mip_misses(tiny_rounds):
    C, radius, _ = instance(3, n=600, s=20)
    res = solve_facility_location(C, model="lscp", radius=radius, rows="subset", log=False)
    sizes = [h.info["subset_rows"] for h in res.history]
    assert len(res.history) >= 2 and res.certified
    assert all(h.n_split <= cr.SUBSET_ADD for h in res.history)
    # it ends when the last MIP's sites cover every row, or when a completed cover meets the
    # subset MIP's bound (the gap)
    assert res.history[-1].n_split == 0 or res.history[-1].gap <= 1e-6
    assert sizes[-1] < res.solution["rows"]  # never needed every row
    # every iterate's bound is a relaxation's: never above the optimum
    assert all(h.lower_bound <= res.objective + 1e-9 for h in res.history)


def test_complete_cover_covers_every_row_greedily():
    rng = np.random.default_rng(0)
    C = euclidean_costs(rng.random((400, 2)), rng.random((25, 2)))
    rows = aggregate_rows(coverage_sets(C, float(C.min(axis=1).max()) * 1.3))
    cost = rng.uniform(1.0, 3.0, size=25)
    for start in ([], [0], list(range(5))):
        cover = cr.complete_cover(rows, 25, start, cost)
        assert set(start) <= set(cover.tolist())
        assert all(np.intersect1d(rows.row(r), cover).size for r in range(rows.n_rows))


def test_the_door_picks_the_subset_by_the_number_of_rows(monkeypatch):
    C, radius, _ = instance(5)
    res = solve_facility_location(C, model="lscp", radius=radius, log=False)
    assert "subset_rows" not in res.history[-1].info  # few rows: one MIP on all of them
    monkeypatch.setattr("aidopt.decomposition.plugins.covering_rows.SUBSET_ROWS", 1)
    res = solve_facility_location(C, model="lscp", radius=radius, log=False)
    assert "subset_rows" in res.history[-1].info and res.certified


@pytest.mark.parametrize("kwargs", [dict(model="mclp", p=2), dict(model="lscp", capacity=np.full(14, 50.0)),
                                    dict(model="lscp-b"), dict(p=2), dict(model="ufl", fixed_costs=np.ones(14)),
                                    dict(model="p-center", p=2)])
def test_rows_is_refused_where_it_does_not_apply(kwargs):
    C, radius, _ = instance(1)
    if kwargs.get("model") not in ("mclp", "lscp", "lscp-b"):
        radius = None
    with pytest.raises(ValueError, match="rows='subset'.* model='lscp' without capacity only"):
        solve_facility_location(C, radius=radius, rows="subset", log=False, **kwargs)


@pytest.mark.parametrize("rows", ["bogus", "Subset", None, 1])
def test_a_value_of_rows_outside_its_choices_is_refused(rows):
    C, radius, _ = instance(1)
    with pytest.raises(ValueError, match="rows must be one of"):
        solve_facility_location(C, model="lscp", radius=radius, rows=rows, log=False)


@pytest.mark.parametrize("rows, method", [("subset", "AID over the rows"),
                                          ("all", "direct full model")])
def test_cli_rows_flag(tmp_path, capsys, rows, method):
    from aidopt.cli.main import main

    C, radius, _ = instance(2)
    path = tmp_path / "C.csv"
    np.savetxt(path, C, delimiter=",")
    assert main(["facility", "--costs", str(path), "--model", "lscp", "--radius", str(radius),
                 "--rows", rows]) == 0
    out = capsys.readouterr().out
    assert "certified_optimal" in out
    assert method in out  # the run's header names the method the flag chose


def test_the_plugin_passes_the_contract_check(tiny_rounds):
    """check_plugin on the rows' AID: several iterates, certified by AID and directly (the
    trivial partition: every row a cluster of its own, the MIP on all of them)."""
    from aidopt.decomposition.plugins.covering import CoveringData

    from aidopt.data.coverage import drop_dominated
    from aidopt.testing.contract import check_plugin

    def data(seed):
        C, radius, _ = instance(seed, n=400, s=16)
        coverage = coverage_sets(C, radius)
        rows, dropped = drop_dominated(aggregate_rows(coverage))
        return CoveringData("lscp", coverage, rows, np.ones(400), None, None,
                            np.zeros(0, dtype=np.int64), 400, 16, dropped)

    report = check_plugin(cr.CoveringRowsProblem, data(0), "highs", other_data=data(1),
                          convex=True, config={})
    assert len(report.aid.history) >= 2
    for run in (report.aid, report.direct):
        assert run.termination.value == "certified_optimal", run.summary()
        assert run.certificate.method == "mip_bound"
    assert report.aid.objective == pytest.approx(report.direct.objective)


def test_a_subset_mip_stopped_with_an_incumbent_ends_at_its_limit_not_in_a_crash(monkeypatch,
                                                                                  tiny_rounds):
    """The first subset MIP (2 rows: its bound 2 is below the cover of 3) reports a time limit
    with its solution loaded (a MIP stopped with an incumbent): the run keeps that cover,
    completed and evaluated on every row, and ends uncertified; the certificate reads no subset
    condition from it (it has no split)."""
    import dataclasses

    from aidopt import solvers

    real = solvers.solve_model

    def stopped(model, solver="highs", **kwargs):
        out = real(model, solver, **kwargs)
        return dataclasses.replace(out, status=solvers.SolveStatus.TIME_LIMIT)

    monkeypatch.setattr(solvers, "solve_model", stopped)
    C, radius, _ = instance(1)
    res = solve_facility_location(C, model="lscp", radius=radius, rows="subset", log=False,
                                  raise_on_failure=False)
    assert res.termination.value == "time_limit" and not res.certified
    assert res.lower_bound < res.objective
    assert res.certificate is not None and not res.certificate.sign_condition
    assert (C[:, res.solution["open"]] <= radius).any(axis=1).all()  # the completed cover


def test_fixed_open_covering_every_point_leaves_no_rows_to_subset():
    C, radius, _ = instance(4)
    every = np.arange(C.shape[1])
    res = solve_facility_location(C, model="lscp", radius=radius, rows="subset",
                                  fixed_open=every, log=False)
    assert res.certified and res.solution["rows"] == 0
    assert res.objective == pytest.approx(C.shape[1])


def test_a_cover_missing_a_row_of_the_subset_is_a_solver_failure():
    """The subset MIP's optimum covers the subset: sites that miss one of its rows are a
    solver's failure, not rows to add again (which would loop)."""
    from aidopt.decomposition.protocol import Lifted

    from aidopt.solvers import SolverError

    C, radius, _ = instance(5)
    rows = aggregate_rows(coverage_sets(C, radius))
    partition = cr._with_singletons(np.zeros(rows.n_rows, dtype=np.int64), np.array([0]))
    data = type("D", (), {"rows": rows, "n_sites": C.shape[1]})()
    problem = cr.CoveringRowsProblem()
    with pytest.raises(SolverError, match="miss 1 row"):
        problem.split(partition, data, Lifted({"open": []}, np.zeros(0, dtype=np.int64), {}))
    assert problem.split(partition, data, Lifted({"open": []}, np.arange(C.shape[1]), {})).holds
