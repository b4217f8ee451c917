"""Bad input raises a clear error before anything is clustered or solved."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.instances.scm import sine_set

import aidopt.api.scm as scm


@pytest.fixture
def no_work(monkeypatch):
    """Any clustering, kernel or solve fails the test: validation must come first."""
    def forbidden(*args, **kwargs):
        raise AssertionError("computed before the input was validated")
    monkeypatch.setattr(scm, "kernel_kmeans", forbidden)
    monkeypatch.setattr(scm, "solve_representative_svm", forbidden)
    monkeypatch.setattr(scm, "KernelGram", forbidden)


@pytest.fixture
def data():
    return sine_set("D2", n_pos=10, n_neg=100, seed=0)


@pytest.mark.usefixtures("no_work")
@pytest.mark.parametrize("kwargs, message", [
    ({"k_neg": 101}, "larger than the negative"),
    ({"k_pos": 11}, "larger than the positive"),
    ({"shrink_gamma": 0.0}, "shrink_gamma"),
    ({"shrink_gamma": -1.3}, "shrink_gamma"),
    ({"shrink_gamma": float("nan")}, "shrink_gamma"),
    ({"C": 0.0}, "C must be"),
    ({"k_neg": 0}, "k_neg must be"),
    ({"ratio": -5}, "ratio"),
    ({"rank_keep": 1.0}, "rank_keep"),
    ({"max_miss_rate": 1.5}, "max_miss_rate"),
    ({"clustering": "graclus"}, "clustering"),
    ({"representative": "medoid"}, "representative"),
    ({"shrink": "none"}, "shrink"),
    ({"final": "best"}, "final"),
    ({"kernel": "sigmoid"}, "kernel"),
    ({"gamma": -1.0}, "gamma"),
    ({"kmeans_iter": 0}, "kmeans_iter"),
])
def test_bad_parameters(data, kwargs, message):
    with pytest.raises(ValueError, match=message):
        scm.solve_scm(*data, log=False, **kwargs)


@pytest.mark.usefixtures("no_work")
def test_bad_data(data):
    X, y = data
    with pytest.raises(ValueError, match="two classes"):
        scm.solve_scm(X, np.ones_like(y), log=False)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        scm.solve_scm(bad, y, log=False)
    with pytest.raises(ValueError, match="rows"):
        scm.solve_scm(X, y[:-1], log=False)
    with pytest.raises(TypeError, match="did you mean 'max_iter'"):
        scm.solve_scm(X, y, max_iters=3)


def test_unknown_solver_before_any_solve(data, monkeypatch):
    monkeypatch.setattr(scm, "kernel_kmeans", lambda *a, **k: pytest.fail("clustered"))
    with pytest.raises(Exception, match="nosuchsolver"):
        scm.solve_scm(*data, solver="nosuchsolver", log=False)
