"""The LSCP variants: the capacitated LSCP (``model="lscp"`` with ``capacity``) and LSCP-B
(``model="lscp-b"``, backup coverage) against brute force over every site subset (the
capacitated one with an assignment LP per subset on the original points, solved by scipy's
HiGHS), their certificates, bad input refused before any solve, and the CLI."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from scipy.optimize import linprog

from aidopt.api.facility import solve_facility_location
from aidopt.data.facility import euclidean_costs


def instance(seed, n=14, s=6):
    """Random points (a third of them repeated) and sites in the unit square, a radius that
    covers every point, integer demand and capacities."""
    rng = np.random.default_rng(seed)
    pts = rng.random((n, 2))
    pts = np.concatenate([pts, pts[rng.integers(0, n, size=n // 3)]])
    sites = rng.random((s, 2))
    C = euclidean_costs(pts, sites)
    radius = float(C.min(axis=1).max() * rng.uniform(1.0, 1.8))
    a = rng.integers(1, 5, size=C.shape[0]).astype(float)
    Q = rng.integers(6, 20, size=s).astype(float)
    return rng, C, radius, a, Q


# --------------------------------------------------------------------------- brute force
def servable(C, radius, a, Q, chosen) -> bool:
    """Whether the sites ``chosen`` serve every point's demand within the radius and their
    capacities (split demand): an LP over the original points' pairs."""
    pairs = [(i, j) for i in range(C.shape[0]) for j in chosen if C[i, j] <= radius]
    if any(not any(C[i, j] <= radius for j in chosen) for i in np.flatnonzero(a > 0)):
        return False
    k = len(pairs)
    A_eq = np.zeros((C.shape[0], k))
    A_ub = np.zeros((C.shape[1], k))
    for col, (i, j) in enumerate(pairs):
        A_eq[i, col] = 1.0
        A_ub[j, col] = a[i]
    keep = a > 0
    res = linprog(np.zeros(k), A_ub=A_ub, b_ub=Q, A_eq=A_eq[keep], b_eq=np.ones(keep.sum()),
                  bounds=(0, 1), method="highs")
    return res.status == 0


def brute_clscp(C, radius, a, Q, f, fixed_open=()):
    s = C.shape[1]
    rest = [j for j in range(s) if j not in fixed_open]
    subsets = [(*fixed_open, *extra) for k in range(len(rest) + 1)
               for extra in itertools.combinations(rest, k)]
    for chosen in sorted(subsets, key=lambda c: float(f[list(c)].sum())):
        if chosen and servable(C, radius, a, Q, list(chosen)):
            return float(f[list(chosen)].sum())
    return np.inf


def brute_backup(C, radius, w, fixed_open=()):
    """(least number of sites covering every point, most weight covered twice by such a set)."""
    s = C.shape[1]
    A = C <= radius
    rest = [j for j in range(s) if j not in fixed_open]
    for k in range(len(rest) + 1):
        best = None
        for extra in itertools.combinations(rest, k):
            chosen = [*fixed_open, *extra]
            times = A[:, chosen].sum(axis=1)
            if chosen and times.min() >= 1:
                value = float(w[times >= 2].sum())
                best = value if best is None else max(best, value)
        if best is not None:
            return len(fixed_open) + k, best
    raise AssertionError("no cover")


def check_shares(res, C, radius, a, Q):
    """The returned shares, checked here on the original points."""
    Z = res.solution["shares"].toarray()
    open_ = np.asarray(res.solution["open"])
    assert Z.shape == C.shape
    assert np.allclose(Z[a > 0].sum(axis=1), 1.0, atol=1e-6)
    closed = np.setdiff1d(np.arange(C.shape[1]), open_)
    assert np.abs(Z[:, closed]).max(initial=0) <= 1e-6
    assert np.abs(Z[C > radius]).max(initial=0) <= 1e-6
    assert np.all(a @ Z <= Q * (1 + 1e-6) + 1e-6)


# --------------------------------------------------------------------------- capacitated
@pytest.mark.parametrize("seed", range(20))
def test_capacitated_lscp_matches_brute_force(seed):
    rng, C, radius, a, Q = instance(seed)
    s = C.shape[1]
    f = np.ones(s) if seed % 2 else rng.integers(1, 6, size=s).astype(float)
    fixed_open = (int(rng.integers(0, s)),) if seed % 3 == 0 else ()
    if seed % 4 == 1:
        a[rng.integers(0, a.size, size=3)] = 0.0  # points of demand 0 impose nothing
    expected = brute_clscp(C, radius, a, Q, f, fixed_open)
    kwargs = dict(model="lscp", radius=radius, demand=a, capacity=Q, fixed_open=list(fixed_open),
                  fixed_costs=None if seed % 2 else f, log=False)
    if not np.isfinite(expected):
        with pytest.raises(ValueError, match="capacitated LSCP is infeasible"):
            solve_facility_location(C, **kwargs)
        return
    res = solve_facility_location(C, **kwargs)
    assert res.termination.value == "certified_optimal"
    assert res.objective == pytest.approx(expected)
    assert res.lower_bound == pytest.approx(expected)
    assert set(fixed_open) <= set(res.solution["open"])
    check_shares(res, C, radius, a, Q)
    assert res.solution["rows"] < C.shape[0]  # the repeated points are merged


def test_capacities_make_more_sites_open_than_the_lscp():
    """Ten points at one place, one site reaches them all: capacity 4 needs three sites."""
    pts = np.zeros((10, 2))
    sites = np.array([[0.0, 0.0], [0.1, 0.0], [0.0, 0.1], [0.1, 0.1], [5.0, 5.0]])
    C = euclidean_costs(pts, sites)
    plain = solve_facility_location(C, model="lscp", radius=0.5, log=False)
    cap = solve_facility_location(C, model="lscp", radius=0.5, capacity=[4, 4, 4, 4, 100],
                                  log=False)
    assert plain.objective == 1 and cap.objective == 3
    assert cap.solution["rows"] == 1  # ten equal coverage sets: one row with demand 10
    shares = json.loads(cap.to_json())["solution"]["shares"]  # a sparse matrix as nonzeros
    assert shares["shape"] == [10, 5] and sum(shares["value"]) == pytest.approx(10.0)
    assert cap.certificate.residuals["largest load above capacity (relative)"] <= 1e-6
    check_shares(cap, C, 0.5, np.ones(10), np.array([4, 4, 4, 4, 100.0]))


def test_capacitated_certificate_catches_an_overloaded_site():
    """The certificate's residuals read the shares on the original points: an overload, or a
    share served by a closed or out-of-range site, shows."""
    from types import SimpleNamespace

    from aidopt.decomposition.plugins.covering import capacity_residuals
    from scipy import sparse

    from aidopt.data.coverage import coverage_sets

    _, C, radius, a, Q = instance(3)
    res = solve_facility_location(C, model="lscp", radius=radius, demand=a, capacity=Q, log=False)
    assert res.certified
    d = SimpleNamespace(coverage=coverage_sets(C, radius), weight=a, n_sites=C.shape[1],
                        capacity=Q / 10.0)
    over = capacity_residuals(d, res.solution["open"], res.solution["shares"])
    assert over["largest load above capacity (relative)"] > 0.1
    d.capacity = Q
    assert max(capacity_residuals(d, res.solution["open"], res.solution["shares"]).values()) <= 1e-6
    wrong = sparse.csr_matrix(np.eye(C.shape[0], C.shape[1]))  # shares at sites 0..5 of points 0..5
    astray = capacity_residuals(d, [0], wrong)
    assert astray["largest share served outside N_i or by a closed site"] == 1.0
    assert astray["largest unserved share of a point"] == 1.0  # points 6.. get nothing


# --------------------------------------------------------------------------- LSCP-B
@pytest.mark.parametrize("seed", range(20))
def test_backup_coverage_matches_brute_force(seed):
    rng, C, radius, _, _ = instance(seed, n=16, s=7)
    w = np.ones(C.shape[0]) if seed % 2 else rng.integers(0, 4, size=C.shape[0]).astype(float)
    fixed_open = (int(rng.integers(0, C.shape[1])),) if seed % 3 == 0 else ()
    k, expected = brute_backup(C, radius, w, fixed_open)
    res = solve_facility_location(C, model="lscp-b", radius=radius, fixed_open=list(fixed_open),
                                  demand=None if seed % 2 else w, log=False)
    assert res.termination.value == "certified_optimal"
    assert res.solution["lscp_sites"] == k == len(res.solution["open"])
    assert res.solution["backup"] == pytest.approx(expected)
    assert res.objective == pytest.approx(w.sum() - expected)
    # recounted here on the original points
    times = (C[:, res.solution["open"]] <= radius).sum(axis=1)
    assert times.min() >= 1 and float(w[times >= 2].sum()) == pytest.approx(expected)
    assert set(fixed_open) <= set(res.solution["open"])


def test_backup_stage_one_not_certified_stops(monkeypatch):
    """A time limit in the LSCP stage returns that stage, not certified, without the backup."""
    _, C, radius, _, _ = instance(1)
    res = solve_facility_location(C, model="lscp-b", radius=radius, time_limit=1e-9, log=False)
    assert res.termination.value == "time_limit" and not res.certified


def test_capacitated_time_limit():
    _, C, radius, a, Q = instance(2)
    res = solve_facility_location(C, model="lscp", radius=radius, capacity=Q * 10, time_limit=1e-9,
                                  log=False)
    assert res.termination.value == "time_limit" and not res.certified


# --------------------------------------------------------------------------- bad input
# no_solve: tests/facility/conftest.py

C0 = np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 4.0], [5.0, 3.0, 1.0], [2.0, 2.0, 9.0]])


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(model="lscp", radius=2.0, capacity=[9, 9]), "capacity must have 3 entries"),
    (dict(model="lscp", radius=2.0, capacity=[9, -1, 9]), "capacity must be non-negative"),
    (dict(model="lscp", radius=2.0, capacity=[9, np.nan, 9]), "capacity contains NaN"),
    (dict(model="lscp", radius=2.0, capacity=[1, 1, 1]), r"total demand 4 exceeds total capacity 3"),
    (dict(model="lscp", radius=2.0, capacity=[9, 9, 9], demand=[0, 0, 0, 0]), "total demand is 0"),
    (dict(model="lscp", radius=2.0, capacity=[9, 9, 9], p=2), "takes no p"),
    (dict(model="lscp", radius=2.0, capacity=[9, 9, 9], demand=[1, 1, -1, 1]), "non-negative"),
    (dict(model="lscp", radius=1.5, capacity=[9, 9, 9]), r"demand point\(s\) 3 have no candidate"),
    # point 3 reaches sites 0 and 1 only (capacity 1 + 1 < its demand 3)
    (dict(model="lscp", radius=2.0, capacity=[1, 1, 9], demand=[0, 0, 0, 3]),
     "demand 3 of point 3 .* exceeds the total capacity 2"),
    # points 0, 1, 3 have the same sites {0, 1}: one row of demand 6 above their capacity 4
    (dict(model="lscp", radius=2.0, capacity=[2, 2, 9], demand=[2, 2, 1, 2]),
     "demand 6 of point 0 .* exceeds the total capacity 4"),
    (dict(model="lscp-b", radius=2.0, capacity=[9, 9, 9]), "takes no capacity"),
    (dict(model="lscp-b", radius=2.0, fixed_costs=[1, 1, 1]), "takes no fixed_costs"),
    (dict(model="lscp-b", radius=2.0, p=2), "takes no p"),
    (dict(model="lscp-b", radius=2.0, demand=[1, 1]), "demand must have 4 entries"),
    (dict(model="lscp-b", radius=1.5), r"demand point\(s\) 3 have no candidate"),
    (dict(model="lscp-b"), "needs a coverage radius"),
    (dict(model="lscp", radius=2.0, demand=[1, 1, 1, 1]), "quantities go with capacity"),
    (dict(model="mclp", p=1, radius=2.0, capacity=[9, 9, 9]), "takes no capacity"),
])
def test_bad_input_refused_before_any_solve(no_solve, kwargs, message):
    with pytest.raises(ValueError, match=message):
        solve_facility_location(C0, log=False, **kwargs)


def test_capacities_infeasible_together_refused(no_solve):
    """Each point alone fits its sites' capacity, all together do not (sites 0 and 1 serve 4 of
    the demand 6; site 2 reaches no point)."""
    C = np.array([[1.0, 9.0, 9.0], [1.0, 1.0, 9.0], [9.0, 1.0, 9.0]])
    with pytest.raises(ValueError, match="even with every site open, at most 4 of the total "
                                         "demand 6"):
        solve_facility_location(C, model="lscp", radius=2.0, capacity=[2, 2, 9],
                                demand=[2, 2, 2], log=False)


# --------------------------------------------------------------------------- CLI
def test_cli_variants(tmp_path, capsys):
    from aidopt.cli.main import main

    path = tmp_path / "pts.csv"
    # four points on a line, every point a site; radius 1 reaches the neighbours
    np.savetxt(path, [[0, 0], [1, 0], [2, 0], [3, 0]], delimiter=",")
    run = ["facility", "--coords", str(path), "--radius", "1", "--quiet"]
    assert main([*run, "--model", "lscp-b"]) == 0  # two sites; {1, 2} covers 1 and 2 twice
    out = capsys.readouterr().out
    assert "open sites (2): 1 2" in out and "covered twice: 2 (not covered twice: 2)" in out
    assert main([*run, "--model", "lscp", "--capacity", "1"]) == 0  # one point per site
    assert "open sites (4)" in capsys.readouterr().out
    cap = tmp_path / "cap.csv"
    np.savetxt(cap, [3, 1, 1, 1])
    assert main([*run, "--model", "lscp", "--capacity", str(cap)]) == 0
    assert "open sites (3)" in capsys.readouterr().out
    assert main([*run, "--model", "lscp", "--capacity", "0.5"]) == 2  # 2 < total demand 4
    assert main([*run, "--model", "lscp", "--capacity", "nope"]) == 2
