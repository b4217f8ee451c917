"""Property-based checks (hypothesis): AID == direct == an independent reference solve, and nothing
is certified that is worse than the reference by more than the tolerance.

The references are built here from the mathematical problem, not from aidopt's models: LAD and the
LP SVMs as LPs through SciPy's ``linprog`` (HiGHS behind SciPy's own interface), the 2-norm SVM as
a QP through Clarabel's native API. Few examples per property keep the default suite fast; set
``AIDOPT_FUZZ_EXAMPLES`` for a larger campaign.
"""

from __future__ import annotations

import os

import clarabel
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import aidopt

EXAMPLES = int(os.environ.get("AIDOPT_FUZZ_EXAMPLES", "6"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
TOL = 1e-6


def _close_or_below(value, reference, tol=TOL):
    """A certified objective may not exceed the reference optimum by more than the tolerance
    (and, being feasible, cannot undercut it by more than the reference's own accuracy)."""
    scale = max(1.0, abs(reference))
    return reference - 1e-7 * scale <= value <= reference + 2 * tol * scale


# --------------------------------------------------------------------------- references
def lad_reference(X, y, s):
    """min sum_i s_i |y_i - x_i beta| as an LP in (beta, e+, e-)."""
    n, m = X.shape
    c = np.concatenate([np.zeros(m), s, s])
    A = sp.hstack([sp.csr_matrix(X), sp.eye(n), -sp.eye(n)])
    bounds = [(None, None)] * m + [(0, None)] * (2 * n)
    res = linprog(c, A_eq=A, b_eq=y, bounds=bounds, method="highs")
    assert res.status == 0, res.message
    return float(res.fun)


def lp_svm_reference(X, y, s, C, norm):
    """1-norm, inf-norm or no-regularizer hinge SVM as an LP in (w+, w-, b, xi, t)."""
    n, m = X.shape
    # variables: w+ (m), w- (m), b, xi (n), t
    nv = 2 * m + 1 + n + 1
    c = np.zeros(nv)
    c[2 * m + 1: 2 * m + 1 + n] = C * s
    if norm == "l1":
        c[: 2 * m] = 1.0
    elif norm == "linf":
        c[-1] = 1.0
    Yx = y[:, None] * X
    # -y_i (x_i (w+ - w-) + b) - xi_i <= -1
    A = [sp.hstack([sp.csr_matrix(-Yx), sp.csr_matrix(Yx), sp.csr_matrix(-y[:, None]), -sp.eye(n),
                    sp.csr_matrix((n, 1))])]
    b = [-np.ones(n)]
    if norm == "linf":  # w+_j + w-_j <= t
        A.append(sp.hstack([sp.eye(m), sp.eye(m), sp.csr_matrix((m, 1 + n)), -np.ones((m, 1))]))
        b.append(np.zeros(m))
    bounds = [(0, None)] * (2 * m) + [(None, None)] + [(0, None)] * n + [(0, None)]
    res = linprog(c, A_ub=sp.vstack(A), b_ub=np.concatenate(b), bounds=bounds, method="highs")
    assert res.status == 0, res.message
    return float(res.fun)


def l2_svm_reference(X, y, s, C):
    """1/2 ||w||^2 + C sum s_i xi_i, free offset, through Clarabel's native API."""
    n, m = X.shape
    nv = m + 1 + n
    P = sp.diags(np.concatenate([np.ones(m), np.zeros(1 + n)])).tocsc()
    q = np.concatenate([np.zeros(m + 1), C * s])
    Yx = y[:, None] * X
    A = sp.vstack([sp.hstack([sp.csr_matrix(-Yx), sp.csr_matrix(-y[:, None]), -sp.eye(n)]),
                   sp.hstack([sp.csr_matrix((n, m + 1)), -sp.eye(n)])]).tocsc()
    b = np.concatenate([-np.ones(n), np.zeros(n)])
    settings_ = clarabel.DefaultSettings()
    settings_.verbose = False
    settings_.tol_gap_abs = settings_.tol_gap_rel = settings_.tol_feas = 1e-10
    sol = clarabel.DefaultSolver(sp.triu(P).tocsc(), q, A, b, [clarabel.NonnegativeConeT(2 * n)],
                                 settings_).solve()
    assert str(sol.status) in ("Solved", "AlmostSolved"), sol.status
    assert nv == len(sol.x)
    return float(sol.obj_val)


# --------------------------------------------------------------------------- data
@st.composite
def lad_data(draw):
    seed = draw(st.integers(0, 10_000))
    n = draw(st.integers(30, 120))
    m = draw(st.integers(1, 4))
    scale = draw(st.sampled_from([1e-3, 1.0, 1e3]))
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, m - 1))]) * scale
    if draw(st.booleans()):  # ties and duplicated rows
        X = np.round(X / scale, 0) * scale
    y = X @ rng.normal(size=m) + rng.laplace(size=n) * scale
    s = rng.integers(1, 4, size=n).astype(float) if draw(st.booleans()) else np.ones(n)
    return X, y, s


@st.composite
def svm_data(draw):
    seed = draw(st.integers(0, 10_000))
    n = draw(st.integers(30, 120))
    m = draw(st.integers(1, 4))
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < draw(st.sampled_from([0.5, 0.2])), 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    X = rng.normal(size=(n, m)) + draw(st.sampled_from([0.3, 1.0, 3.0])) * y[:, None]
    s = rng.integers(1, 4, size=n).astype(float) if draw(st.booleans()) else np.ones(n)
    C = draw(st.sampled_from([0.05, 1.0, 20.0]))
    return X, y, s, C


# --------------------------------------------------------------------------- properties
@SETTINGS
@given(lad_data())
def test_lad_aid_direct_and_reference_agree(case):
    X, y, s = case
    ref = lad_reference(X, y, s)
    for aid in (True, False):
        for solver in ("highs", "fn"):  # fn: aidopt's Frisch-Newton on the aggregated arrays
            res = aidopt.solve_lad(X, y, sample_weight=s, aid=aid, log=False, tol=TOL,
                                   solver=solver)
            assert res.certified, res.summary()
            assert _close_or_below(res.objective, ref), (aid, solver, res.objective, ref)
            assert res.lower_bound <= ref + 1e-7 * max(1.0, abs(ref))


@SETTINGS
@given(svm_data(), st.sampled_from(["l1", "linf", "none"]))
def test_lp_svms_aid_direct_and_reference_agree(case, norm):
    X, y, s, C = case
    ref = lp_svm_reference(X, y, s, C, norm)
    for aid in (True, False):
        res = aidopt.solve_svm(X, y, C=C, norm=norm, sample_weight=s, aid=aid, log=False,
                               tol=TOL, raise_on_failure=False)
        if res.certified:  # certified is a promise: never worse than the optimum beyond tol
            assert _close_or_below(res.objective, ref), (norm, aid, res.objective, ref)
        assert res.objective >= ref - 1e-7 * max(1.0, abs(ref))  # a feasible point


@SETTINGS
@given(svm_data())
def test_l2_svm_aid_direct_and_reference_agree(case):
    X, y, s, C = case
    ref = l2_svm_reference(X, y, s, C)
    for aid in (True, False):
        res = aidopt.solve_svm(X, y, C=C, sample_weight=s, aid=aid, log=False, tol=TOL)
        assert res.certified, res.summary()
        assert _close_or_below(res.objective, ref), (aid, res.objective, ref)


@pytest.mark.parametrize("seed", range(3))
def test_s3vm_under_aid_never_claims_certified(seed):
    from aidopt.instances import s3vm_instance

    X, y, _ = s3vm_instance(n=60, m=2, n_labeled=6, seed=seed, separation=2.0)
    res = aidopt.solve_s3vm(X, y, norm="l1", log=False, max_iter=3)
    assert res.termination is not aidopt.Termination.CERTIFIED_OPTIMAL
    assert not res.certified
