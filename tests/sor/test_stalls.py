"""SOR never stalls an AID run: identical rows (a singular stationarity system) and a large
``nu`` (slow linear convergence) both end certified, at the optimum of an independent solve."""

from __future__ import annotations

import numpy as np

import aidopt
from aidopt.numerics.sor import sor_linear


def _identical_rows():
    return np.ones((30, 3)), np.array([1.0] * 8 + [-1.0] * 22)


def test_polishing_never_lowers_the_dual_value():
    """SOR ascends the dual (1.37); polishing used to accept a point of lower dual value (the
    minimum-norm solution of a singular system, near u = 0) and the sweeps cycled forever."""
    X, y = _identical_rows()
    duals = []
    res = sor_linear(X[[0, 8]], np.array([1.0, -1.0]), 1.0, weights=np.array([8.0, 22.0]),
                     tol=0.0, gap_tol=2.5e-7, gap_scale=1e-300, max_sweeps=500, shrinking=True,
                     polish=True, callback=lambda s, r, p, d: duals.append(d))
    assert all(b >= a - 1e-12 for a, b in zip(duals, duals[1:], strict=False)), duals[:12]
    # the optimum: u2 = 8 (the + row at its bound), u1 - u2 = 1/4, dual 16.125
    assert res.gap <= 1e-6 * abs(res.primal)
    assert abs(res.primal - 16.125) <= 1e-6


def test_aid_with_sor_certifies_on_identical_rows():
    X, y = _identical_rows()
    direct = aidopt.solve_svm(X, y, bias="regularized", aid=False, log=False)
    r = aidopt.solve_svm(X, y, bias="regularized", solver="sor", time_limit=30, log=False)
    assert r.termination == "certified_optimal", r.message
    assert abs(r.objective - direct.objective) <= 1e-6 * abs(direct.objective)
    assert abs(r.objective - 16.125) <= 1e-5


def test_large_nu_falls_back_within_the_sweep_budget_and_certifies():
    """At nu = 1000 SOR needs 10^5-10^6 sweeps per aggregated solve; past the budget the same
    aggregated problem goes to Clarabel, and the run certifies the optimum Clarabel finds alone."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(140, 7))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=140) > 0, 1.0, -1.0)
    ref = aidopt.solve_svm(X, y, C=1000.0, bias="regularized", solver="clarabel", aid=False,
                           log=False)
    r = aidopt.solve_svm(X, y, C=1000.0, bias="regularized", solver="sor", time_limit=60, log=False)
    assert r.termination == "certified_optimal", r.message
    assert abs(r.objective - ref.objective) <= 1e-6 * abs(ref.objective)
    assert "clarabel" in {h.solver for h in r.history}
