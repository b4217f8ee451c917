"""Bad input raises a clear error before any work (no kernel matrix, no search, no solver)."""

from __future__ import annotations

import numpy as np
import pytest

import aidopt.api.s2rlsc as s2rlsc_mod
import aidopt.numerics.rlsc as rlsc_mod
from aidopt.api.s2rlsc import solve_s2rlsc
from tests.s2rlsc._helpers import instance


@pytest.fixture()
def data():
    Xtr, ytr, *_ = instance(l=4, u=16, d=3, seed=50)
    return Xtr, ytr


@pytest.fixture()
def no_work(monkeypatch):
    """Fail the test if a kernel matrix is built or a search starts."""
    def boom(*args, **kwargs):
        raise AssertionError("work started before the input was rejected")

    monkeypatch.setattr(s2rlsc_mod, "_symmetric_kernel", boom)
    monkeypatch.setattr(s2rlsc_mod, "nystrom_fitness", boom)
    monkeypatch.setattr(s2rlsc_mod, "local_search", boom)


@pytest.mark.parametrize("kwargs, match", [
    ({"eps": 0.0}, "eps must be a positive"),
    ({"eps": -0.1}, "eps must be a positive"),
    ({"eps": float("nan")}, "eps must be a positive"),
    ({"lam": 0}, "lam must be a positive"),
    ({"lam_prime": -1.0}, "lam_prime must be a positive"),
    ({"r": 21}, "r = 21 landmarks, but there are only n = 20"),
    ({"r": 0}, "r must be a positive integer"),
    ({"r": 2.5}, "r must be a positive integer"),
    ({"b_c": 1.5}, "b_c must be a number in"),
    ({"search": "ga"}, "search must be one of"),
    ({"method": "bnb"}, "method must be one of"),
    ({"mu": 0}, "mu must be a positive integer"),
    ({"restarts": 0}, "restarts must be a positive integer"),
    ({"kernel": "poly"}, "kernel must be one of"),
    ({"kernel": "linear", "sigma": 1.0}, "sigma is the width of kernel='rbf'"),
    ({"sigma": -1.0, "kernel": "rbf"}, "sigma must be a positive"),
    ({"aggregate": 0}, "aggregate must be"),
    ({"aggregate": 17}, "aggregate must be at most 16"),
    ({"b_c": 0.53, "eps": 0.01}, "admits no count"),
    ({"mode": "clustering"}, "uses no labels"),
    ({"mode": "transductive"}, "mode must be"),
    ({"tolerance": 1e-3}, "unexpected keyword"),
])
def test_bad_parameters(data, no_work, kwargs, match):
    X, y = data
    with pytest.raises((ValueError, TypeError), match=match):
        solve_s2rlsc(X, y, log=False, **kwargs)


def test_bad_data(data, no_work):
    X, y = data
    with pytest.raises(ValueError, match="NaN or infinite"):
        bad = X.copy()
        bad[3, 1] = np.nan
        solve_s2rlsc(bad, y, log=False)
    with pytest.raises(ValueError, match="labels must be -1 or \\+1"):
        solve_s2rlsc(X, np.where(y == 1, 2.0, y), log=False)
    with pytest.raises(ValueError, match="labels must be -1 or \\+1"):
        solve_s2rlsc(X, np.where(y == 1, np.inf, y), log=False)
    with pytest.raises(ValueError, match="y must be numeric"):
        solve_s2rlsc(X, np.array(["a"] * len(y), dtype=object), log=False)
    with pytest.raises(ValueError, match="rows but y has"):
        solve_s2rlsc(X, y[:-1], log=False)
    with pytest.raises(ValueError, match="no unlabelled points"):
        solve_s2rlsc(X, np.where(y == 0, 1.0, y), log=False)
    with pytest.raises(ValueError, match="no unlabelled points"):  # a clustering request
        solve_s2rlsc(X, np.ones(len(y)), mode="clustering", log=False)
    with pytest.raises(ValueError, match="X is empty"):
        solve_s2rlsc(np.zeros((0, 3)), None, log=False)
    with pytest.raises(ValueError, match="one class only"):
        solve_s2rlsc(X, np.where(y != 0, 1.0, 0.0), log=False)
    with pytest.raises(ValueError, match="needs labelled points"):
        solve_s2rlsc(X, np.zeros(len(y)), mode="semi-supervised", log=False)


def test_nan_marks_unlabelled_points(data):
    X, y = data
    a = solve_s2rlsc(X, y, restarts=2, log=False, search="1+1")
    b = solve_s2rlsc(X, np.where(y == 0, np.nan, y), restarts=2, log=False, search="1+1")
    assert np.array_equal(a.labels, b.labels)


def test_kernels_that_are_not_mercer_are_refused(data):
    X, y = data
    with pytest.raises(ValueError, match="not symmetric"):
        solve_s2rlsc(X, y, kernel=lambda A, B: A @ B.T + A[:, :1] * 0.1, log=False)
    with pytest.raises(ValueError, match="not positive semidefinite"):
        solve_s2rlsc(X, y, kernel=lambda A, B: -(A @ B.T), log=False)
    with pytest.raises(ValueError, match="shape"):
        solve_s2rlsc(X, y, kernel=lambda A, B: np.ones((2, 2)), log=False)


def test_callable_kernel_equals_the_named_one(data):
    X, y = data
    named = solve_s2rlsc(X, y, kernel="rbf", sigma=1.5, restarts=2, log=False)
    mine = solve_s2rlsc(X, y, kernel=lambda A, B: np.exp(
        -((A[:, None, :] - B[None, :, :]) ** 2).sum(-1) / (2 * 1.5**2)), restarts=2, log=False)
    assert named.fitness == pytest.approx(mine.fitness, abs=1e-10)
    assert np.array_equal(named.labels, mine.labels)


def test_exact_without_a_miqp_solver_is_refused_before_work(data, no_work, monkeypatch):
    from aidopt import solvers

    monkeypatch.setattr(solvers, "availability", lambda name: "missing")
    X, y = data
    with pytest.raises(solvers.SolverUnavailableError, match="MIQP"):
        solve_s2rlsc(X, y, method="exact", log=False)
    with pytest.raises(solvers.SolverError):
        solve_s2rlsc(X, y, method="exact", solver="highs", log=False)


def test_exact_beyond_its_size_limit_is_refused_before_work(no_work, monkeypatch):
    """u(u+1)/2 Pyomo terms: more than EXACT_MAX_U unlabelled points is refused before any
    kernel matrix is built (and before any solver is looked for)."""
    from aidopt import solvers

    monkeypatch.setattr(solvers, "availability", lambda name: "missing")
    X = np.random.default_rng(0).normal(size=(s2rlsc_mod.EXACT_MAX_U + 5, 2))
    y = np.zeros(len(X))
    y[:4] = [1, -1, 1, -1]  # u = EXACT_MAX_U + 1
    with pytest.raises(ValueError, match="EXACT_MAX_U = 400"):
        solve_s2rlsc(X, y, method="exact", log=False)
    monkeypatch.setattr(s2rlsc_mod, "EXACT_MAX_U", 10)
    Xs, ys = X[:16], y[:16]
    with pytest.raises(ValueError, match="u = 12"):
        solve_s2rlsc(Xs, ys, method="exact", log=False)
    band = rlsc_mod.Band.of(12, 0.5, 0.2)
    with pytest.raises(ValueError, match="EXACT_MAX_U"):  # the lower-level call too
        s2rlsc_mod.solve_miqp(None, ys, np.arange(4, 16), band)
