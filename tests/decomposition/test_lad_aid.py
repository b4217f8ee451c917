"""AID for LAD against the direct full LP (HiGHS), certificates, and the paper's Proposition 2."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.decomposition.plugins.lad import certificate
from aidopt.instances import dermatology, lad_instance

import aidopt
from aidopt.data.validate import as_regression_data
from aidopt.results import Termination
from tests.conftest import RTOL


def _instance(kind, n, m, seed):
    """Seeded instances, including the hard cases the issue names."""
    rng = np.random.default_rng(seed)
    if kind in ("A", "B", "C"):
        return lad_instance(kind, n=n, m=m, seed=seed)
    if kind == "ties":  # small integers in X and y: many ties, degenerate vertices
        X = rng.integers(0, 3, size=(n, m)).astype(float)
        X[:, 0] = 1.0
        return X, rng.integers(0, 4, size=n).astype(float)
    if kind == "duplicates":  # every row appears three times
        X, y = lad_instance("A", n=n // 3, m=m, seed=seed)
        return np.vstack([X, X, X]), np.concatenate([y, y, y])
    if kind == "cauchy":  # heavy-tailed noise
        X = np.column_stack([np.ones(n), rng.normal(size=(n, m - 1))])
        return X, X @ rng.normal(size=m) + rng.standard_cauchy(n)
    if kind == "no_intercept":
        X = rng.normal(size=(n, m))
        return X, X @ rng.normal(size=m) + rng.laplace(size=n)
    raise ValueError(kind)


CASES = [
    ("A", 3000, 5, 0), ("A", 5000, 20, 1), ("A", 800, 40, 2), ("A", 60, 50, 3),
    ("B", 3000, 5, 4), ("B", 4000, 15, 5), ("C", 3000, 5, 6), ("C", 4000, 12, 7),
    ("ties", 2000, 4, 8), ("ties", 1500, 8, 9), ("ties", 300, 3, 10),
    ("duplicates", 3000, 6, 11), ("duplicates", 1200, 10, 12),
    ("cauchy", 3000, 5, 13), ("cauchy", 2000, 25, 14),
    ("no_intercept", 2500, 6, 15), ("no_intercept", 120, 100, 16),
    ("A", 20000, 8, 17), ("B", 10000, 30, 18), ("C", 10000, 3, 19), ("ties", 6000, 2, 20),
]


@pytest.mark.parametrize(("kind", "n", "m", "seed"), CASES, ids=[f"{c[0]}-{c[1]}x{c[2]}-s{c[3]}" for c in CASES])
def test_aid_equals_direct_lp(kind, n, m, seed):
    X, y = _instance(kind, n, m, seed)
    aid = aidopt.solve_lad(X, y, tol=1e-9, seed=seed, log=False)
    direct = aidopt.solve_lad(X, y, aid=False, tol=1e-9, log=False)
    assert direct.termination is Termination.CERTIFIED_OPTIMAL
    assert aid.termination is Termination.CERTIFIED_OPTIMAL
    assert aid.objective == pytest.approx(direct.objective, rel=RTOL)
    # the returned beta really has the reported objective on the original data
    assert np.abs(y - X @ aid.solution["beta"]).sum() == pytest.approx(aid.objective, rel=1e-12)
    # Proposition 2: F_t is non-decreasing; and F_t <= E* <= E_t
    F = np.array([rec.F_t for rec in aid.history])
    assert np.all(np.diff(F) >= -1e-9 * max(1.0, abs(direct.objective)))
    assert np.all(F <= direct.objective * (1 + 1e-9) + 1e-9)
    E = np.array([rec.E_t for rec in aid.history])
    assert np.all(E >= direct.objective * (1 - 1e-9) - 1e-9)


def test_tiny_instance_known_primal_and_dual():
    # LAD with an intercept only: the median (3), objective 2+1+0+1+2 = 6; the dual optimum is
    # u = (-1, -1, 0, 1, 1) with y'u = 6.
    X = np.ones((5, 1))
    y = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    res = aidopt.solve_lad(X, y, aid=False, log=False)
    assert res.solution["beta"] == pytest.approx([3.0])
    assert res.objective == pytest.approx(6.0)
    assert res.certificate.dual_objective == pytest.approx(6.0)
    data = as_regression_data(X, y)
    u = np.array([-1.0, -1.0, 0.0, 1.0, 1.0])
    cert = certificate(data, [3.0], u, tol=1e-9)
    assert cert.certified and cert.relative_gap == pytest.approx(0.0, abs=1e-12)
    # a dual vector violating X'u = 0 is rejected even though its y'u is large
    bad = certificate(data, [3.0], np.array([-1.0, -1.0, 1.0, 1.0, 1.0]), tol=1e-9)
    assert not bad.certified and bad.residuals["stationarity |X'u|"] > 0.1
    # and one with |u| > 1
    bad = certificate(data, [3.0], np.array([-2.0, 0.0, 0.0, 1.0, 1.0]), tol=1e-9)
    assert not bad.certified and bad.residuals["dual bound |u|<=s"] > 0.5


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_certificate_rejects_tampered_solution(seed):
    X, y = lad_instance("A", n=3000, m=6, seed=seed)
    res = aidopt.solve_lad(X, y, log=False, tol=1e-9)
    assert res.certified
    cert = res.certificate
    assert cert.residuals["stationarity |X'u|"] <= 1e-9
    assert cert.residuals["dual bound |u|<=s"] <= 1e-12
    assert cert.dual_objective <= res.objective * (1 + 1e-12)
    # perturb beta: the same dual bound no longer certifies it
    data = as_regression_data(X, y)
    rng = np.random.default_rng(seed)
    tampered = res.solution["beta"] + 1e-3 * rng.standard_normal(X.shape[1])
    # an optimal full-data dual u, from the duals of the primal LP's fit rows
    u = _dual_from_primal_form(X, y)
    good = certificate(data, res.solution["beta"], u, tol=1e-9)
    bad = certificate(data, tampered, u, tol=1e-9)
    assert good.certified
    assert not bad.certified
    assert bad.relative_gap > 1e-9


def _dual_from_primal_form(X, y):
    """Full-data dual u from the duals of the primal LP's fit rows (Pyomo's convention)."""
    from aidopt.models import lad

    from aidopt.solvers import solve_model

    model = lad.create_instance(X, y, form="primal")
    out = solve_model(model, "highs", need_duals=True, options={"solver": "ipm"})
    assert out.optimal
    _, v = lad.solution_from(model, out.duals)
    return v


def test_sample_weights_equal_repeated_rows():
    X, y = lad_instance("B", n=1500, m=4, seed=3)
    w = np.random.default_rng(3).integers(1, 4, size=1500)
    weighted = aidopt.solve_lad(X, y, sample_weight=w, log=False, tol=1e-9)
    repeated = aidopt.solve_lad(np.repeat(X, w, axis=0), np.repeat(y, w), log=False, tol=1e-9)
    assert weighted.certified and repeated.certified
    assert weighted.objective == pytest.approx(repeated.objective, rel=RTOL)


def test_intercept_option_appends_ones_column():
    X, y = lad_instance("A", n=2000, m=4, seed=5)
    with_col = aidopt.solve_lad(X, y, log=False, tol=1e-9)
    via_flag = aidopt.solve_lad(X[:, 1:], y, fit_intercept=True, log=False, tol=1e-9)
    assert via_flag.objective == pytest.approx(with_col.objective, rel=RTOL)
    assert via_flag.solution["feature_names"][-1] == "intercept"


def test_real_data_dermatology():
    X, y = dermatology()
    aid = aidopt.solve_lad(X, y, fit_intercept=True, log=False, tol=1e-9)
    direct = aidopt.solve_lad(X, y, fit_intercept=True, aid=False, log=False, tol=1e-9)
    assert aid.certified and direct.certified
    assert aid.objective == pytest.approx(direct.objective, rel=RTOL)


def test_iteration_limit_is_honest():
    X, y = lad_instance("A", n=20000, m=10, seed=1)
    res = aidopt.solve_lad(X, y, max_iter=1, log=False, tol=1e-12)
    assert res.termination is Termination.ITERATION_LIMIT
    assert len(res.history) == 1
    assert not res.certified
    assert res.gap > 1e-12
    assert res.lower_bound <= res.objective


def test_time_limit_is_honest():
    X, y = lad_instance("A", n=20000, m=10, seed=1)
    res = aidopt.solve_lad(X, y, time_limit=1e-3, log=False, raise_on_failure=False)
    assert res.termination is Termination.TIME_LIMIT
    assert not res.certified


def test_iteration_log(capsys):
    X, y = lad_instance("A", n=3000, m=4, seed=0)
    aidopt.solve_lad(X, y, log=True)
    out = capsys.readouterr().out
    assert "iter  clusters" in out and "upper(E_best)" in out
    assert "termination             certified_optimal" in out
    assert "CERTIFIED" in out


def test_result_serialisation(tmp_path):
    X, y = lad_instance("A", n=3000, m=4, seed=0)
    res = aidopt.solve_lad(X, y, log=False)
    import json

    data = json.loads(res.to_json(tmp_path / "r.json"))
    assert data["termination"] == "certified_optimal"
    assert len(data["solution"]["beta"]) == 4
    assert data["certificate"]["certified"] is True
    frame = res.history_frame()
    assert list(frame.t) == list(range(1, len(res.history) + 1))
    assert {"F_t", "E_best", "gap", "r_t", "sec_solve"} <= set(frame.columns)


@pytest.mark.parametrize("aid", [True, False], ids=["aid", "direct"])
def test_solver_failure_raises_or_reports(aid):
    """HiGHS stopped after one IPM iteration, fallbacks off: an error by default, an honest
    result on request (with fallbacks on, Clarabel takes over: test_failure_paths)."""
    X, y = lad_instance("A", n=3000, m=5, seed=0)
    options = {"ipm_iteration_limit": 1, "run_crossover": "off"}
    with pytest.raises(aidopt.SolverError, match="raise_on_failure=False|failed"):
        aidopt.solve_lad(X, y, aid=aid, solver="highs", solver_options=options, log=False,
                         fallback=False)
    res = aidopt.solve_lad(X, y, aid=aid, solver="highs", solver_options=options, log=False,
                           raise_on_failure=False, fallback=False)
    assert res.termination is Termination.SOLVER_FAILURE
    assert not res.certified and res.certificate is None
    assert res.objective == np.inf and res.solution.get("beta") is None


@pytest.mark.parametrize("solver", ["highs", "fn", "clarabel"])
@pytest.mark.parametrize("aid", [True, False])
def test_an_exact_fit_certifies(solver, aid):
    """y = X b + 0.5 exactly: the optimum is 0 and must certify (it ended gap_tolerance: E was
    solver and evaluation rounding, ~1e-14 of E(0), above the old floor's reach)."""
    import aidopt

    for seed, n in ((0, 500), (2, 500), (3, 2000)):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(n, 3)) * [1.0, 100.0, 0.01]
        y = X @ [1.0, -2.0, 0.5] + 0.5
        res = aidopt.solve_lad(X, y, fit_intercept=True, solver=solver, aid=aid, log=False)
        assert res.termination == "certified_optimal", (seed, res.summary())
        assert res.objective <= 1e-9 * np.abs(y).sum()
        np.testing.assert_allclose(res.solution["beta"], [1.0, -2.0, 0.5, 0.5], atol=1e-6)
