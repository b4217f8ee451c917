"""Frisch–Newton (``solver="fn"``) against independent LP solves, and as AID's aggregated solver.

The reference is SciPy's ``linprog`` (HiGHS behind SciPy's own interface) on the primal LAD LP
built here from the problem, not from aidopt's models.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

import aidopt
from aidopt.numerics.fn import frisch_newton
from aidopt.results import Termination


def reference(X, y, w):
    """The objective at SciPy/HiGHS's beta, evaluated exactly (its own objective value sums
    residual variables that satisfy the rows only to HiGHS's absolute tolerance, 1e-7)."""
    K, m = X.shape
    c = np.concatenate([np.zeros(m), w, w])
    A = sp.hstack([sp.csr_matrix(X), sp.eye(K), -sp.eye(K)])
    res = linprog(c, A_eq=A, b_eq=y, bounds=[(None, None)] * m + [(0, None)] * (2 * K),
                  method="highs")
    assert res.status == 0
    return float(w @ np.abs(y - X @ res.x[:m]))


def case(seed):
    """Seeded instances ``(X, y, w, unit)``, among them the degenerate and ill-conditioned kinds
    an aggregated LAD meets: duplicated centroids, integer data with ties, weights spanning 1e6,
    tiny and huge units (``unit``), a near-exact fit, an intercept column."""
    rng = np.random.default_rng(seed)
    kind = seed % 7
    K, m = int(rng.integers(30, 400)), int(rng.integers(1, 12))
    X = rng.normal(size=(K, m))
    y = X @ rng.normal(size=m) + rng.laplace(size=K)
    w = rng.integers(1, 30, size=K).astype(float)
    unit = 1.0
    if kind == 1:  # duplicated centroids
        X = np.vstack([X, X[: K // 3]])
        y = np.concatenate([y, y[: K // 3]])
        w = np.concatenate([w, w[: K // 3]])
    elif kind == 2:  # integer data: ties everywhere
        X, y = np.round(2 * X), np.round(2 * y)
    elif kind == 3:  # huge weight ratios
        w = 10.0 ** rng.uniform(0, 6, size=K)
    elif kind == 4:  # data in tiny and in huge units
        unit = 1e-5 if seed % 2 else 1e5
        X, y = X * unit, y * unit
    elif kind == 5:  # nearly exact fit
        y = X @ rng.normal(size=m) + 1e-6 * rng.laplace(size=K)
    elif kind == 6:  # an intercept column
        X = np.column_stack([X, np.ones(K)])
    return X, y, w, unit


@pytest.mark.parametrize("seed", range(28))
def test_frisch_newton_matches_an_independent_lp(seed):
    X, y, w, unit = case(seed)
    res = frisch_newton(X, y, w)
    assert res.status == "optimal"
    # the reference in natural units (HiGHS's absolute tolerances blur a LP in units of 1e-5)
    ref = unit * reference(X / unit, y / unit, w)
    scale = max(abs(ref), 1e-9 * float(w @ np.abs(y)))
    # never worse than the reference's beta; as good, except on a near-exact fit (residuals of
    # 1e-6), where HiGHS's 1e-7 row tolerance leaves its beta up to 0.2 % above FN's proven optimum
    assert res.objective <= ref + 1e-7 * scale
    if seed % 7 != 5:
        assert res.objective >= ref - 1e-7 * scale
    # the dual is feasible: |v| <= w exactly, X'v = 0 to the reported residual, y'v = E
    assert np.all(np.abs(res.v) <= w * (1 + 1e-12))
    assert np.abs(X.T @ res.v).max() <= 1e-8 * float((np.abs(X).T @ w).max())
    assert abs(float(y @ res.v) - res.objective) <= 1e-7 * scale
    # complementary slackness in Pyomo's LAD convention (v_k = w_k sign(r_k) where r_k != 0):
    # the per-row terms w_k |r_k| - v_k r_k >= 0 sum to the gap
    r = y - X @ res.beta
    assert (w * np.abs(r) - res.v * r).max() <= 1e-7 * scale


def test_frisch_newton_limits_and_validation():
    X, y, w, _ = case(0)
    assert frisch_newton(X, y, w, max_iter=2).status == "iteration_limit"
    with pytest.raises(ValueError, match="w > 0"):
        frisch_newton(X, y, -w)


@pytest.mark.parametrize("aid", [True, False], ids=["aid", "direct"])
def test_solve_lad_with_fn_is_certified_and_equals_highs(aid):
    rng = np.random.default_rng(3)
    n, m = 20000, 8
    X = rng.normal(size=(n, m))
    y = X @ rng.normal(size=m) + rng.laplace(size=n)
    res = aidopt.solve_lad(X, y, solver="fn", aid=aid, log=False)
    ref = aidopt.solve_lad(X, y, solver="highs", aid=False, log=False)
    assert res.termination is Termination.CERTIFIED_OPTIMAL and res.solver == "fn"
    assert res.objective == pytest.approx(ref.objective, rel=1e-7)


def test_fn_writes_the_model_it_solves(tmp_path):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(3000, 3))
    y = X @ np.ones(3) + rng.laplace(size=3000)
    res = aidopt.solve_lad(X, y, solver="fn", log=False, write_models=str(tmp_path))
    assert res.certified
    written = sorted(p.name for p in tmp_path.iterdir())
    assert len(written) == 2 * len(res.history) and all("weighted_lad_dual" in p for p in written)


def test_fn_rejects_unknown_options():
    X, y, _, _ = case(0)
    with pytest.raises(ValueError, match="solver='fn' takes"):
        aidopt.solve_lad(np.tile(X, (40, 1)), np.tile(y, 40), solver="fn", log=False,
                         solver_options={"omega": 1.0})
