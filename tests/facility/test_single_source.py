"""The single-sourcing capacitated LSCP (``model="lscp", capacity=..., single_source=True``)
against an independent unaggregated MIP on the original points (every pair a binary, scipy's
``milp``), against plain enumeration (site subsets and backtracking over whole points) on tiny
instances and against spopt's CLSCP-SO with its assignment variables made binary; its classes,
its certificate on a tampered answer, infeasible input refused, and the CLI flag."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest
from aidopt.decomposition.protocol import Lifted
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

from aidopt.api.facility import solve_facility_location
from aidopt.data.facility import euclidean_costs


def instance(seed, n=8, s=10):
    """Random points, a third of them repeated (half of the copies with the original's demand,
    so that classes of several points arise), demands 3..5 against capacities 4..9 (a site
    holds one or two points whole, and a few sites no point of demand 5), and a radius that
    covers every point and reaches most sites: whole points pack worse than split demand."""
    rng = np.random.default_rng(seed)
    pts = rng.random((n, 2))
    copies = rng.integers(0, n, size=n // 3 + 2)
    pts = np.concatenate([pts, pts[copies]])
    a = rng.integers(3, 6, size=pts.shape[0]).astype(float)
    same = rng.random(copies.size) < 0.5
    a[n:][same] = a[copies[same]]
    sites = rng.random((s, 2))
    C = euclidean_costs(pts, sites)
    radius = float(C.min(axis=1).max() * rng.uniform(2.5, 4.0))
    Q = rng.integers(4, 10, size=s).astype(float)
    return rng, C, radius, a, Q


# --------------------------------------------------------------------------- references
def reference_milp(C, radius, a, Q, f, fixed_open=()):
    """The unaggregated single-sourcing MIP on the original points (binary y_j, binary x_ij for
    every pair within the radius of a point of positive demand; no pair left out, no merge),
    solved by scipy's milp. Returns its optimum, or inf when it is infeasible."""
    n, s = C.shape
    pairs = [(i, j) for i in range(n) if a[i] > 0 for j in range(s) if C[i, j] <= radius]
    k = len(pairs)
    rows_i = np.array([i for i, _ in pairs])
    cols_j = np.array([j for _, j in pairs])
    served = sorted(set(rows_i.tolist()))
    if any(not np.any(C[i] <= radius) for i in np.flatnonzero(a > 0)):
        return np.inf
    idx = {i: r for r, i in enumerate(served)}
    # variables: y (s), then x (k)
    A_assign = sparse.csr_matrix((np.ones(k), ([idx[i] for i in rows_i], s + np.arange(k))),
                                 shape=(len(served), s + k))
    A_cap = sparse.hstack([sparse.diags(-Q), sparse.csr_matrix(
        (a[rows_i], (cols_j, np.arange(k))), shape=(s, k))])
    A_link = sparse.hstack([sparse.csr_matrix((-np.ones(k), (np.arange(k), cols_j)), shape=(k, s)),
                            sparse.identity(k)])
    lb = np.zeros(s + k)
    lb[list(fixed_open)] = 1.0
    res = milp(np.concatenate([f, np.zeros(k)]), integrality=np.ones(s + k),
               bounds=Bounds(lb, np.ones(s + k)),
               constraints=[LinearConstraint(A_assign, 1, 1), LinearConstraint(A_cap, -np.inf, 0),
                            LinearConstraint(A_link, -np.inf, 0)])
    return float(res.fun) if res.status == 0 else np.inf


def assignable(C, radius, a, Q, chosen) -> bool:
    """Whether the sites ``chosen`` serve every point of positive demand whole, within the
    radius and their capacities: backtracking, the largest demands first."""
    points = sorted(np.flatnonzero(a > 0).tolist(), key=lambda i: -a[i])
    left = {j: Q[j] for j in chosen}

    def place(t):
        if t == len(points):
            return True
        i = points[t]
        for j in chosen:
            if C[i, j] <= radius and left[j] >= a[i]:
                left[j] -= a[i]
                if place(t + 1):
                    return True
                left[j] += a[i]
        return False

    return place(0)


def enumerate_optimum(C, radius, a, Q, f):
    s = C.shape[1]
    subsets = [c for k in range(1, s + 1) for c in itertools.combinations(range(s), k)]
    for chosen in sorted(subsets, key=lambda c: float(f[list(c)].sum())):
        if assignable(C, radius, a, Q, list(chosen)):
            return float(f[list(chosen)].sum())
    return np.inf


def check_assignment(res, C, radius, a, Q):
    """The returned sites, checked here on the original points."""
    assign = np.asarray(res.solution["assign"])
    open_ = set(res.solution["open"])
    assert assign.shape == (C.shape[0],)
    for i in np.flatnonzero(a > 0):
        j = int(assign[i])
        assert j in open_ and C[i, j] <= radius
    load = np.bincount(assign[a > 0], weights=a[a > 0], minlength=C.shape[1])
    assert np.all(load <= Q + 1e-9)
    np.testing.assert_allclose(res.solution["load"], load)


# --------------------------------------------------------------------------- optimality
@pytest.mark.parametrize("seed", range(24))
def test_single_source_matches_the_unaggregated_mip(seed):
    rng, C, radius, a, Q = instance(seed)
    s = C.shape[1]
    f = np.ones(s) if seed % 2 else rng.integers(1, 6, size=s).astype(float)
    fixed_open = (int(rng.integers(0, s)),) if seed % 3 == 0 else ()
    if seed % 4 == 1:
        a[rng.integers(0, a.size, size=3)] = 0.0  # points of demand 0 impose nothing
    expected = reference_milp(C, radius, a, Q, f, fixed_open)
    kwargs = dict(model="lscp", radius=radius, demand=a, capacity=Q, single_source=True,
                  fixed_open=list(fixed_open), fixed_costs=None if seed % 2 else f, log=False)
    if not np.isfinite(expected):
        with pytest.raises(ValueError, match="single-sourcing capacitated LSCP is infeasible|"
                                             "capacitated LSCP is infeasible"):
            solve_facility_location(C, **kwargs)
        return
    res = solve_facility_location(C, **kwargs)
    assert res.termination.value == "certified_optimal"
    assert res.objective == pytest.approx(expected)
    assert res.lower_bound == pytest.approx(expected)
    assert set(fixed_open) <= set(res.solution["open"])
    check_assignment(res, C, radius, a, Q)
    assert res.solution["rows"] <= int((a > 0).sum())  # classes: merged points (23 of 24 seeds)
    # split demand relaxes single-sourcing
    split = solve_facility_location(C, **{**kwargs, "single_source": False})
    assert split.objective <= res.objective + 1e-9


@pytest.mark.parametrize("seed", range(8))
def test_single_source_matches_enumeration(seed):
    """Tiny instances: every site subset in order of cost, whole points placed by backtracking
    (no MIP at all in the reference)."""
    rng, C, radius, a, Q = instance(100 + seed, n=5, s=5)
    f = rng.integers(1, 4, size=C.shape[1]).astype(float)
    expected = enumerate_optimum(C, radius, a, Q, f)
    kwargs = dict(model="lscp", radius=radius, demand=a, capacity=Q, fixed_costs=f,
                  single_source=True, log=False)
    if not np.isfinite(expected):
        with pytest.raises(ValueError, match="infeasible"):
            solve_facility_location(C, **kwargs)
        return
    res = solve_facility_location(C, **kwargs)
    assert res.certified and res.objective == pytest.approx(expected)
    check_assignment(res, C, radius, a, Q)


def test_unit_demand_single_source_equals_split():
    """Unit demand and integer capacities: the transportation polytope of every set of open
    sites is integral, so single-sourcing costs nothing over split demand."""
    checked = binding = 0
    for seed in range(6):
        _, C, radius, _, Q = instance(seed)
        kw = dict(model="lscp", radius=radius, capacity=np.floor(Q / 3.0) + 1, log=False)
        try:
            split = solve_facility_location(C, **kw)
        except ValueError:  # capacities too small for these sets
            continue
        single = solve_facility_location(C, single_source=True, **kw)
        assert single.certified and single.objective == split.objective
        plain = solve_facility_location(C, model="lscp", radius=radius, log=False)
        binding += split.objective > plain.objective  # the capacities matter
        checked += 1
    assert checked >= 3 and binding >= 1


def test_bin_packing_makes_single_sourcing_dearer():
    """Six points of demand 2 at one place, sites of capacity 6, 3, 3, 3: split demand fills
    6 + 3 + 3 = 12 with three sites; whole points fit three at site 0 and one at each small site
    (2 + 2 > 3), so single-sourcing needs all four."""
    C = np.zeros((6, 4))
    Q = np.array([6.0, 3.0, 3.0, 3.0])
    a = np.full(6, 2.0)
    split = solve_facility_location(C, model="lscp", radius=1.0, demand=a, capacity=Q, log=False)
    single = solve_facility_location(C, model="lscp", radius=1.0, demand=a, capacity=Q,
                                     single_source=True, log=False)
    assert split.objective == 3 and single.objective == 4
    assert single.certified and single.solution["rows"] == 1  # one class of six points
    assert sorted(np.bincount(single.solution["assign"], minlength=4).tolist()) == [1, 1, 1, 3]


# --------------------------------------------------------------------------- classes
def test_classes_merge_equal_sets_with_equal_demand_only():
    from aidopt.api._lscp import single_source_rows
    from aidopt.data.coverage import coverage_sets

    # points 0, 1, 2, 4 reach sites {0, 1}; point 3 reaches {1, 2}; site 0 holds at most 2
    C = np.array([[1, 1, 9], [1, 1, 9], [1, 1, 9], [9, 1, 1], [1, 1, 9.0]])
    a = np.array([1.0, 1.0, 3.0, 1.0, 0.0])
    Q = np.array([2.0, 5.0, 5.0])
    rows, count = single_source_rows(coverage_sets(C, 2.0), a, Q)
    assert rows.members.tolist() == [0, 0, 1, 2, -1]  # demand 3 is its own class; 0 left out
    assert count.tolist() == [2, 1, 1] and rows.weight.tolist() == [1.0, 3.0, 1.0]
    assert rows.row(0).tolist() == [0, 1]
    assert rows.row(1).tolist() == [1]  # site 0 (capacity 2) cannot hold demand 3: left out
    assert rows.row(2).tolist() == [1, 2]


# --------------------------------------------------------------------------- certificate
def test_certificate_fails_on_a_tampered_assignment():
    from aidopt.decomposition.plugins.covering import CoveringData, CoveringProblem

    from aidopt.api._lscp import single_source_rows
    from aidopt.data.coverage import coverage_sets

    _, C, radius, a, Q = instance(5)
    res = solve_facility_location(C, model="lscp", radius=radius, demand=a, capacity=Q,
                                  single_source=True, log=False)
    assert res.certified
    coverage = coverage_sets(C, radius)
    rows, count = single_source_rows(coverage, a, Q)
    n, s = C.shape
    data = CoveringData("lscp", coverage, rows, a, None, None, np.zeros(0, dtype=np.int64), n, s,
                        capacity=Q, count=count)
    problem = CoveringProblem("lscp")

    def certify(assign, open_=None, capacity=Q):
        data.capacity = capacity
        open_ = res.solution["open"] if open_ is None else open_
        best = SimpleNamespace(E_t=float(len(open_)), lifted=Lifted(
            {"open": np.asarray(open_), "assign": np.asarray(assign)}, None, {}))
        return problem.certify(data, best, bound=SimpleNamespace(bound=res.lower_bound),
                               solve=None, tol=1e-4)

    assign = np.asarray(res.solution["assign"])
    assert certify(assign).certified
    unassigned = assign.copy()
    unassigned[0] = -1
    cert = certify(unassigned)
    assert not cert.certified and cert.residuals["points of positive demand with no site"] == 1
    closed = np.setdiff1d(np.arange(s), res.solution["open"])
    moved = assign.copy()
    moved[1] = closed[0]  # a closed site (instance 5 opens 6 of 10)
    cert = certify(moved)
    assert not cert.certified
    assert cert.residuals["points served by a closed site or outside N_i"] == 1
    i, j = np.argwhere(C > radius)[0]  # a site beyond the radius, open in this tampered answer
    moved = assign.copy()
    moved[i] = j
    cert = certify(moved, open_=np.arange(s), capacity=Q * 10)
    assert not cert.certified
    assert cert.residuals["points served by a closed site or outside N_i"] == 1
    cert = certify(assign, capacity=Q / 3.0)
    assert not cert.certified and cert.residuals["largest load above capacity (relative)"] > 0.1


# --------------------------------------------------------------------------- bad input
C0 = np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 4.0], [5.0, 3.0, 1.0], [2.0, 2.0, 9.0]])


@pytest.mark.parametrize(("kwargs", "message"), [
    # point 3 reaches sites 0 and 1 (capacities 2 and 2) with demand 3: no site holds it whole
    (dict(model="lscp", radius=2.0, capacity=[2, 2, 9], demand=[1, 1, 1, 3], single_source=True),
     r"demand of point\(s\) 3 \(demand 3, largest capacity 2\) exceeds the capacity of every "
     "site"),
    (dict(model="lscp", radius=2.0, single_source=True), "pass model='lscp' with capacity"),
    (dict(model="mclp", radius=2.0, p=1, single_source=True), "got model='mclp'"),
    (dict(p=1, capacity=[9, 9, 9], single_source=True), "got model=None"),
    (dict(model="lscp", radius=2.0, capacity=[9, 9, 9], single_source="yes"), "True or False"),
    (dict(model="lscp", radius=2.0, capacity=[1, 1, 1], single_source=True),
     "total demand 4 exceeds total capacity 3"),
])
def test_bad_input_refused_before_any_solve(no_solve, kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        solve_facility_location(C0, log=False, **kwargs)


def test_whole_points_that_do_not_fit_are_reported_infeasible():
    """Three points of demand 2, two sites of capacity 3: split demand fits (6 <= 6), whole
    points do not (one per site); only the MIP can tell."""
    C = np.zeros((3, 2))
    kw = dict(model="lscp", radius=1.0, demand=[2, 2, 2], capacity=[3, 3], single_source=True)
    with pytest.raises(ValueError, match="no assignment of whole points"):
        solve_facility_location(C, log=False, **kw)
    res = solve_facility_location(C, log=False, raise_on_failure=False, **kw)
    assert not res.certified and "no assignment of whole points" in res.message
    # a proof, not a failure: the run's own termination says so (no message parsing)
    assert res.termination.value == "infeasible"


def test_time_limit_returns_a_time_limit_result():
    _, C, radius, a, Q = instance(2)
    res = solve_facility_location(C, model="lscp", radius=radius, demand=a, capacity=Q,
                                  single_source=True, time_limit=1e-9, log=False)
    assert res.termination.value == "time_limit" and not res.certified


# --------------------------------------------------------------------------- spopt
def test_agrees_with_spopt_clscp_with_binary_assignments():
    """spopt 0.7 has no single-sourcing option: its CLSCP-SO (continuous z) is built by
    ``LSCP.from_cost_matrix`` and its z made binary before CBC solves it."""
    pytest.importorskip("spopt")
    from aidopt.bench.location import spopt_solve

    for args in ((2, 6, 8), (3, 8, 10), (4, 6, 8)):  # whole points need a site more
        _, C, radius, a, Q = instance(*args)
        res = solve_facility_location(C, model="lscp", radius=radius, demand=a, capacity=Q,
                                      single_source=True, log=False)
        theirs = spopt_solve("sclscp", C, radius=radius, demand=a, capacity=Q)
        assert res.certified and theirs["optimal"]
        assert theirs["objective"] == pytest.approx(res.objective)
        split = spopt_solve("clscp", C, radius=radius, demand=a, capacity=Q)
        assert split["objective"] == pytest.approx(res.objective - 1)


# --------------------------------------------------------------------------- CLI
def test_cli_single_source(tmp_path, capsys):
    from aidopt.cli.main import main

    pts = tmp_path / "pts.csv"
    np.savetxt(pts, np.zeros((6, 2)), delimiter=",")
    sites = tmp_path / "sites.csv"
    np.savetxt(sites, [[0, 0], [0, 0.1], [0.1, 0], [0.1, 0.1]], delimiter=",")
    cap = tmp_path / "cap.csv"
    np.savetxt(cap, [6, 3, 3, 3])
    dem = tmp_path / "demand.csv"
    np.savetxt(dem, np.full(6, 2.0))
    run = ["facility", "--customers", str(pts), "--sites", str(sites), "--model", "lscp",
           "--radius", "1", "--capacity", str(cap), "--demand", str(dem), "--quiet"]
    assert main(run) == 0
    assert "open sites (3)" in capsys.readouterr().out
    out = tmp_path / "assign.csv"
    assert main([*run, "--single-source", "--assignments", str(out)]) == 0
    assert "open sites (4)" in capsys.readouterr().out
    rows = np.loadtxt(out, delimiter=",", skiprows=1)
    assert rows[:, 0].tolist() == list(range(6))
    assert sorted(np.bincount(rows[:, 1].astype(int), minlength=4).tolist()) == [1, 1, 1, 3]
    assert main([*run[:-5], "--single-source", "--quiet"]) == 2  # no capacity
