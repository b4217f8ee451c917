"""The Ferris–Munson interior point (``solver="fm"``) against an independent QP solve, and as
AID's aggregated solver for the 2-norm SVM (offset free and regularized).

The reference is Clarabel called through its own Python interface on the *primal* weighted SVM
QP built here from the problem (w, b, xi), not from aidopt's models or dual forms.
"""

from __future__ import annotations

import functools

import clarabel
import numpy as np
import pytest
import scipy.sparse as sp
from aidopt.decomposition.plugins.kernel_svm import libsvm_kernel

import aidopt
from aidopt.numerics.fm import best_offset, ferris_munson, ferris_munson_kernel
from aidopt.results import Termination

BIASES = ("free", "regularized")
#: case kind -> the relative gap rounding allows (see the test)
ROUNDING_LIMITED = {4: 1e-8, 5: 1e-6, 6: 1e-8}


def reference(X, y, u, bias):
    """The primal objective at Clarabel's (w, b), evaluated exactly."""
    K, m = X.shape
    nb = 1  # b
    # variables [w (m), b, xi (K)]; -y(Xw + b) - xi + s = -1 and -xi + s = 0, s >= 0
    P = sp.block_diag([sp.eye(m), sp.eye(1) if bias == "regularized" else sp.csc_matrix((1, 1)),
                       sp.csc_matrix((K, K))]).tocsc()
    q = np.concatenate([np.zeros(m + nb), u])
    A = sp.vstack([sp.hstack([sp.csc_matrix(-y[:, None] * X), sp.csc_matrix(-y[:, None]), -sp.eye(K)]),
                   sp.hstack([sp.csc_matrix((K, m + nb)), -sp.eye(K)])]).tocsc()
    rhs = np.concatenate([-np.ones(K), np.zeros(K)])
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_rel = settings.tol_gap_abs = 1e-11
    settings.tol_feas = 1e-11
    sol = clarabel.DefaultSolver(P, q, A, rhs, [clarabel.NonnegativeConeT(2 * K)], settings).solve()
    x = np.asarray(sol.x)
    return objective(X, y, u, x[:m], x[m], bias)


def objective(X, y, u, w, b, bias):
    reg = 0.5 * float(w @ w) + (0.5 * b * b if bias == "regularized" else 0.0)
    return reg + float(u @ np.maximum(1.0 - y * (X @ w + b), 0.0))


def case(seed):
    """Seeded aggregated SVMs ``(X, y, u)`` of the kinds AID meets: overlapping classes,
    duplicated centroids (also with opposite labels), integer data with ties, weights spanning
    1e6, tiny and huge units, separable classes with a large C, one row in a class next to a
    constant and a zero column, a tiny C."""
    rng = np.random.default_rng(seed)
    kind = seed % 8
    K, m = int(rng.integers(40, 400)), int(rng.integers(1, 15))
    y = np.where(rng.random(K) < 0.5, 1.0, -1.0)
    y[:2] = 1.0, -1.0
    X = rng.normal(size=(K, m)) + 0.5 * y[:, None] / np.sqrt(m)
    W = rng.integers(1, 40, size=K).astype(float)
    C = 10.0 ** rng.uniform(-2, 1)
    if kind == 1:  # duplicated centroids, some with the opposite label
        X = np.vstack([X, X[: K // 3]])
        y = np.concatenate([y, np.where(np.arange(K // 3) % 2 == 0, y[: K // 3], -y[: K // 3])])
        W = np.concatenate([W, W[: K // 3]])
    elif kind == 2:  # integer data: ties everywhere
        X = np.round(2 * X)
    elif kind == 3:  # huge weight ratios
        W = 10.0 ** rng.uniform(0, 6, size=K)
        C = 1e-3
    elif kind == 4:  # tiny and huge units
        X = X * (1e-3 if seed % 2 else 1e3)
    elif kind == 5:  # separable, nearly hard margin
        X = X + 3.0 * y[:, None]
        C = 1e3
    elif kind == 6:  # a single positive row, a constant and a zero column
        y = -np.ones(K)
        y[0] = 1.0
        X = np.column_stack([X, np.ones(K), np.zeros(K)])
    elif kind == 7:  # tiny C: alpha at the upper bound almost everywhere
        C = 1e-5
    return X, y, C * W


@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("seed", range(24))
def test_ferris_munson_matches_an_independent_qp(seed, bias):
    X, y, u = case(seed)
    res = ferris_munson(X, y, u, bias=bias, tol=1e-10)
    # where rounding limits the gap, the method says "stalled" (AID accepts it within tol / 10):
    # units of 1e3 (w = H'alpha cancels six digits), a single row in a class, and a hard margin
    # with bounds u ~ 1e4 over an objective ~ 1e-2 (a margin rounded by 1e-14 costs 1e-7)
    limit = ROUNDING_LIMITED.get(seed % 8)
    assert res.status == "optimal" or (limit and res.status == "stalled")
    assert res.gap <= (limit or 1e-10)
    ref = reference(X, y, u, bias)
    scale = abs(ref)
    # as good as the reference's plane (within 1e-8, or the kind's limit), and its value is exact
    assert res.objective <= ref + max(1e-8, limit or 0.0) * scale
    assert res.objective == pytest.approx(objective(X, y, u, res.w, res.b, bias), rel=1e-12)
    # the dual point: in the box exactly, balanced exactly (offset free), a lower bound on the
    # reference's optimum, and the gap between the two values is what was asked for
    a = res.alpha
    assert np.all(a >= 0) and np.all(a <= u)
    g = X.T @ (a * y)
    dual = float(a.sum()) - 0.5 * float(g @ g)
    if bias == "free":
        assert abs(float(a @ y)) <= 1e-12 * float(a.sum())
    else:
        dual -= 0.5 * float(a @ y) ** 2
    assert dual == pytest.approx(res.dual, rel=1e-9, abs=1e-12 * scale)
    assert dual <= ref + 1e-10 * scale
    # stationarity w = X'Dalpha (and b = y'alpha when regularized)
    assert np.abs(res.w - g).max() <= 1e-5 * max(1.0, np.abs(res.w).max())
    # complementary slackness in Pyomo's convention (alpha >= 0 is the dual of the >= margin
    # rows): every per-row term (u - alpha) xi + alpha (xi - 1 + y f) is >= 0 and they sum to
    # the gap, so each is within it
    f = X @ res.w + res.b
    xi = np.maximum(1.0 - y * f, 0.0)
    terms = (u - a) * xi + a * (xi - 1.0 + y * f)
    assert terms.min() >= 0 and terms.max() <= max(res.gap, 1e-10) * scale * 1.01


def test_ferris_munson_limits_and_validation():
    X, y, u = case(0)
    assert ferris_munson(X, y, u, max_iter=2).status == "iteration_limit"
    assert ferris_munson(X, y, u, time_limit=0.0).status == "time_limit"
    with pytest.raises(ValueError, match="u > 0"):
        ferris_munson(X, y, -u)
    with pytest.raises(ValueError, match="both classes"):
        ferris_munson(X, np.ones_like(y), u)
    with pytest.raises(ValueError, match="bias"):
        ferris_munson(X, y, u, bias="none")


def svm_rows(seed=3, n=20000, m=8):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    return rng.normal(size=(n, m)) + 0.4 * y[:, None], y


@functools.cache
def _clarabel_direct(bias):
    """Clarabel's direct solve of svm_rows() (20,000 rows), once per bias and xdist worker."""
    X, y = svm_rows()
    return aidopt.solve_svm(X, y, C=0.1, solver="clarabel", aid=False, bias=bias, log=False)


@pytest.mark.xdist_group("fm_vs_clarabel_direct")  # one worker: each reference solved once
@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("aid", [True, False], ids=["aid", "direct"])
def test_solve_svm_with_fm_is_certified_and_equals_clarabel(aid, bias):
    X, y = svm_rows()
    res = aidopt.solve_svm(X, y, C=0.1, solver="fm", aid=aid, bias=bias, log=False)
    ref = _clarabel_direct(bias)
    assert res.termination is Termination.CERTIFIED_OPTIMAL and res.solver == "fm"
    assert res.objective == pytest.approx(ref.objective, rel=1e-7)
    assert res.certificate.relative_gap <= 1e-6


def test_fm_writes_the_model_it_solves(tmp_path):
    X, y = svm_rows(4, 3000, 3)
    res = aidopt.solve_svm(X, y, C=0.1, solver="fm", log=False, write_models=str(tmp_path))
    assert res.certified
    written = sorted(p.name for p in tmp_path.iterdir())
    assert len(written) == 2 * len(res.history)


def test_fm_options_and_norms():
    X, y = svm_rows(5, 3000, 3)
    with pytest.raises(ValueError, match="solver='fm' takes"):
        aidopt.solve_svm(X, y, solver="fm", log=False, solver_options={"omega": 1.0})
    with pytest.raises(ValueError, match="fm"):
        aidopt.solve_svm(X, y, norm="l1", solver="fm", log=False)


def test_fm_that_stops_short_falls_back_to_clarabel():
    X, y = svm_rows(6, 5000, 4)
    res = aidopt.solve_svm(X, y, C=0.1, solver="fm", log=False, solver_options={"max_iter": 2})
    assert res.certified
    assert "retried with clarabel" in res.message


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 7, 9, 10, 11])
def test_dense_form_solves_the_same_problem(seed):
    """``ferris_munson_kernel`` on Q = D_y X X' D_y (a K x K Cholesky per step) reaches the
    optimum of the normal-equation form and of the independent reference."""
    X, y, u = case(seed)
    H = y[:, None] * X
    res = ferris_munson_kernel(H @ H.T, y, u, tol=1e-10)
    ref = reference(X, y, u, "free")
    assert res.status in ("optimal", "stalled") and res.gap <= 1e-8
    assert res.w is None
    assert res.objective <= ref + 1e-8 * abs(ref)
    a = res.alpha
    assert np.all(a >= 0) and np.all(a <= u) and abs(float(a @ y)) <= 1e-12 * float(a.sum())
    # the dual value of alpha is a lower bound on the reference optimum
    g = H.T @ a
    assert float(a.sum()) - 0.5 * float(g @ g) <= ref + 1e-10 * abs(ref)


def test_dense_form_validation():
    X, y, u = case(0)
    with pytest.raises(ValueError, match="square"):
        ferris_munson_kernel(X, y, u)


@pytest.mark.parametrize("solver", ["fm", "smo"])
@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_kernel_aid_with_fm_is_certified_and_equals_clarabel(kernel, solver):
    """Kernel AID with a native method on the working sets of its column generation (fm, or
    smo in tests/decomposition/test_kernel_columns.py) against Clarabel on the whole
    aggregated Pyomo model at every iteration."""
    X, y = svm_rows(7, 600, 3)
    res = aidopt.solve_svm(X, y, C=1.0, kernel=kernel, solver=solver, log=False)
    ref = aidopt.solve_svm(X, y, C=1.0, kernel=kernel, solver="clarabel", log=False)
    assert res.termination is Termination.CERTIFIED_OPTIMAL and res.solver == solver
    assert ref.certified
    assert res.objective == pytest.approx(ref.objective, rel=2e-6)
    info = res.history[-1].info  # the column generation's work, recorded per iteration
    assert info["working_set"] <= res.history[-1].n_clusters and info["kernel_values"] > 0


def test_kernel_fm_that_stops_short_falls_back_to_clarabel():
    X, y = svm_rows(8, 400, 3)
    res = aidopt.solve_svm(X, y, C=1.0, kernel="rbf", solver="fm", log=False,
                           solver_options={"max_iter": 2})
    assert res.certified
    assert "retried with clarabel" in res.message


# --------------------------------------------------------------------------- kernel AID backends
@pytest.mark.parametrize("seed", range(6))
def test_best_offset_minimises_the_hinge(seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(5, 60))
    y = np.where(rng.random(K) < 0.5, 1.0, -1.0)
    margin, u = rng.normal(size=K), rng.uniform(0.1, 5, size=K)

    def hinge(b):
        return float(u @ np.maximum(1.0 - margin - y * b, 0.0))

    b = best_offset(margin, y, u)
    candidates = y * (1.0 - margin)  # a piecewise-linear convex function: a breakpoint is optimal
    assert hinge(b) <= min(hinge(c) for c in candidates) + 1e-12 * max(1.0, hinge(b))


@pytest.mark.parametrize("seed", range(24))
def test_libsvm_on_a_precomputed_kernel_matches_the_reference(seed):
    """LIBSVM on K = XX' (the linear kernel, precomputed) with sample weights, the optional
    kernel backend, against the independent primal QP. Its answer is always a valid bound; it is
    called optimal only when its rigorous gap is within tol / 4 (9 of these 24 degenerate
    instances: LIBSVM stops early on hard margins and crawls on units of 1e3; AID then falls
    back). LIBSVM caches the kernel in single precision: its gap is ~1e-7 at best."""
    X, y, u = case(seed)
    res, outcome = libsvm_kernel(X @ X.T, y, u, 1.0, tol=4e-6, time_limit=None, options={})
    ref = reference(X, y, u, "free")
    scale = abs(ref)
    assert outcome.solver == "libsvm"
    a = res.alpha
    assert np.all(a >= 0) and np.all(a <= u) and abs(float(a @ y)) <= 1e-12 * max(1.0, a.sum())
    g = X.T @ (a * y)
    dual = float(a.sum()) - 0.5 * float(g @ g)
    assert dual == pytest.approx(res.dual, rel=1e-9, abs=1e-12 * scale)
    assert dual <= ref + 1e-10 * scale  # a valid bound
    assert outcome.optimal == (res.gap <= 1e-6)
    if outcome.optimal:  # then the rigorous gap is within tol / 4
        assert res.objective <= ref * (1 + 1e-6)


def test_kernel_aid_with_libsvm_is_certified_and_equals_fm():
    X, y = svm_rows(9, 800, 3)
    res = aidopt.solve_svm(X, y, C=1.0, kernel="rbf", solver="libsvm", log=False)
    ref = aidopt.solve_svm(X, y, C=1.0, kernel="rbf", solver="fm", log=False)
    assert res.termination is Termination.CERTIFIED_OPTIMAL and res.solver == "libsvm"
    assert res.objective == pytest.approx(ref.objective, rel=2e-6)


def test_libsvm_that_stops_short_falls_back_and_is_only_for_kernels():
    X, y = svm_rows(10, 400, 3)
    res = aidopt.solve_svm(X, y, C=1.0, kernel="rbf", solver="libsvm", log=False,
                           solver_options={"max_iter": 1})
    assert res.certified and "retried with clarabel" in res.message
    with pytest.raises(ValueError, match="libsvm"):
        aidopt.solve_svm(X, y, C=1.0, solver="libsvm", log=False)


def test_bench_backends_solves_the_captured_qp_alike(capsys):
    """``python -m aidopt.bench.backends`` on a small run: every backend installed here reaches
    the same dual value on AID's last aggregated QP (the table reports their distances)."""
    from aidopt.bench import backends as bench_backends

    bench_backends.main(["--kind", "linear", "--n", "3000", "--m", "4",
                         "--backends", "fm", "clarabel", "libsvm"])
    rows = [line.split("|") for line in capsys.readouterr().out.splitlines()
            if line.startswith(("| fm", "| clarabel", "| libsvm"))]
    assert [r[1].strip() for r in rows] == ["fm", "clarabel", "libsvm"]
    assert all(float(r[4]) <= 1e-6 for r in rows)
