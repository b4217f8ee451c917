"""Dual coordinate descent on CSR rows (:func:`aidopt.numerics.dcd.dcd`) against an independent
QP solve (Clarabel on the primal, tests/svm/_sparse.py), and its stops: a limit, Ctrl-C."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from aidopt.numerics import dcd as dcd_module
from aidopt.numerics.dcd import dcd
from tests.svm._sparse import objective, random_rows, reference, sparse_rows


def _case(kind, seed):
    """``(X, y, u)`` of one kind of instance."""
    rng = np.random.default_rng(100 + seed)
    if kind == "sparse":
        X, y = random_rows(300, 60, 0.05, seed)
        return X, y, np.ones(300)
    if kind == "weighted":
        X, y = random_rows(250, 40, 0.1, seed)
        return X, y, 0.5 * rng.integers(1, 5, size=250).astype(float)
    if kind == "duplicated":  # every row twice, some copies with the other label
        X, y = random_rows(120, 30, 0.1, seed)
        y2 = np.where(rng.random(120) < 0.2, -y, y)
        return sp.vstack([X, X]).tocsr(), np.concatenate([y, y2]), np.ones(240)
    if kind == "wide":  # m > n: separable, a hard margin for a large C
        X, y = random_rows(80, 400, 0.05, seed, shift=1.0)
        return X, y, np.full(80, 10.0)
    if kind == "empty rows and columns":
        X, y = random_rows(200, 50, 0.08, seed)
        X = sp.lil_matrix(X)
        X[5:9, :] = 0.0  # rows without entries (their decision value is b)
        X[:, 7] = 0.0  # a column without entries
        return sp.csr_matrix(X), y, np.ones(200)
    if kind == "small C":
        X, y = random_rows(200, 30, 0.1, seed)
        return X, y, np.full(200, 1e-3)
    raise ValueError(kind)


KINDS = ["sparse", "weighted", "duplicated", "wide", "empty rows and columns", "small C"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [0, 1])
def test_optimal_value_agrees_with_clarabel(kind, seed):
    X, y, u = _case(kind, seed)
    res = dcd(X, y, u, tol=1e-8)
    best = reference(X, y, u)
    assert res.status == "optimal"
    assert res.gap <= 1e-8
    assert objective(X, y, u, res.w, res.b) == pytest.approx(res.objective, rel=1e-12)
    assert res.objective == pytest.approx(best, rel=1e-7)
    assert res.dual <= best * (1 + 1e-9)  # a lower bound
    alpha = res.alpha
    assert np.all(alpha >= 0) and np.all(alpha <= u)
    assert abs(alpha @ y) <= 1e-12 * alpha.sum()
    # the dual value is that of alpha, recomputed here
    g = X.T @ (alpha * y)
    assert alpha.sum() - 0.5 * g @ g == pytest.approx(res.dual, rel=1e-12)


def test_bounds_hold_at_every_stop():
    X, y, u = _case("sparse", 3)
    best = reference(X, y, u)
    for passes in (1, 2, 5):
        res = dcd(X, y, u, tol=1e-12, max_iter=passes)
        assert res.status == "iteration_limit" and res.iterations == passes
        assert res.dual <= best * (1 + 1e-9) <= res.objective * (1 + 2e-9)


def test_time_limit_between_passes():
    X, y = sparse_rows(20_000, 2_000, 30, 0)
    res = dcd(X, y, np.full(20_000, 100.0), tol=1e-14, time_limit=0.05)
    assert res.status == "time_limit"
    assert np.isfinite(res.objective) and np.isfinite(res.dual) and res.dual <= res.objective


def test_ctrl_c_returns_the_best_so_far(monkeypatch):
    """Ctrl-C arrives between passes (compiled passes are not interrupted): the points met so
    far come back evaluated exactly, with the status "interrupted"."""
    X, y, u = _case("sparse", 4)
    passes = {"count": 0}
    original = dcd_module._pass

    def interrupted(*args):
        passes["count"] += 1
        if passes["count"] == 4:
            raise KeyboardInterrupt
        return original(*args)

    monkeypatch.setattr(dcd_module, "_pass", interrupted)
    res = dcd(X, y, u, tol=1e-12)
    assert res.status == "interrupted" and res.iterations == 3
    best = reference(X, y, u)
    assert res.dual <= best * (1 + 1e-9) <= res.objective * (1 + 2e-9)
    assert objective(X, y, u, res.w, res.b) == pytest.approx(res.objective, rel=1e-12)


def test_index_types_and_seeds_give_the_same_optimum():
    X, y, u = _case("weighted", 5)
    wide = sp.csr_matrix((X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64)),
                         shape=X.shape)
    values = [dcd(Z, y, u, tol=1e-9, seed=seed).objective for Z in (X, wide) for seed in (0, 7)]
    assert np.allclose(values, values[0], rtol=2e-9)


def test_refuses_one_class_and_bad_bounds():
    X, y, u = _case("sparse", 0)
    with pytest.raises(ValueError, match="both classes"):
        dcd(X, np.ones_like(y), u)
    with pytest.raises(ValueError, match="u > 0"):
        dcd(X, y, np.zeros_like(u))


def test_a_sparse_solve_does_not_start_numba():
    """The pass is compiled at install: a fresh process's first sparse solve never initialises
    numba's typing registries (0.5 s measured here, more than LIBLINEAR's whole fit of 2·10^4
    documents). Checked in a fresh interpreter, since other tests may have started numba."""
    code = (
        "import sys, numpy as np, scipy.sparse as sp, aidopt\n"
        "rng = np.random.default_rng(0)\n"
        "X = sp.random(400, 300, density=0.05, format='csr', random_state=rng)\n"
        "y = np.where(X @ rng.standard_normal(300) > 0, 1.0, -1.0)\n"
        "res = aidopt.solve_svm(X, y, C=1.0, solver='dcd', log=False)\n"
        "assert res.certified, res.termination\n"
        "print('numba.np.arraymath' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False"], proc.stdout


@pytest.mark.parametrize("gap, step", [(1e-1, 1e-3), (1e-5, 0.03), (2e-6, 0.1), (0.0, 0.1)])
def test_next_pg_tol_aims_below_tol_by_one_to_three_decades(gap, step):
    """After a failed check the projected-gradient tolerance shrinks with the gap still to close
    (0.3 tol / gap), by at least one decade and at most three."""
    assert dcd_module.next_pg_tol(0.5, gap, 1e-6) == pytest.approx(0.5 * step)


def test_fewer_exact_checks_on_text_like_rows():
    """On 3,000 text-like documents the gap-aware tolerance reaches 1e-6 with at most five exact
    evaluations (dividing the tolerance by ten took seven to nine on such data)."""
    from aidopt.bench.sparse import instance

    X, y = instance("svm", "text:40", 3000, 3000, 0)
    X = sp.csr_matrix(X)
    res = dcd(X, np.where(y > 0, 1.0, -1.0), np.ones(3000), tol=5e-7)
    assert res.status == "optimal" and res.gap <= 5e-7
    assert res.checks <= 5
