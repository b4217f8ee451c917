"""Booleans must be booleans: a string or a number given for a boolean parameter was taken by
``bool()`` (``prune="no"`` ran with pruning on); every door refuses it with a TypeError naming the
parameter, before anything is solved. numpy's booleans are booleans."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import aidopt
from aidopt import solvers
from aidopt.api._params import Family


def _lad_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 2))
    return X, 1.0 + X @ [1.0, 2.0] + rng.laplace(size=120)


def _costs():
    return np.abs(np.random.default_rng(1).normal(size=(20, 6)))


@pytest.fixture
def no_solve(monkeypatch):
    """Any solve fails the test: the value must be refused before."""
    def refuse(*args, **kwargs):
        raise AssertionError("a model was solved before the parameters were checked")

    monkeypatch.setattr(solvers, "solve_model", refuse)


@pytest.mark.parametrize("call, name", [
    (lambda: aidopt.solve_lad(*_lad_data(), fit_intercept="yes", log=False), "fit_intercept"),
    (lambda: aidopt.LADRegressor(fit_intercept="yes").fit(*_lad_data()), "fit_intercept"),
    (lambda: aidopt.LADRegressor(fit_intercept=1).fit(*_lad_data()), "fit_intercept"),
    (lambda: aidopt.solve_facility_location(_costs(), p=2, aggregation="sites", solver="highs",
                                            prune="no", log=False), "prune"),
    (lambda: aidopt.solve_facility_location(_costs(), p=2, aggregation="sites", solver="highs",
                                            far="yes", log=False), "far"),
    (lambda: aidopt.solve_lad(*_lad_data(), aid="no", log=False), "aid"),
    (lambda: aidopt.solve_lad(*_lad_data(), tee=1, log=False), "tee"),
    (lambda: aidopt.solve_lad(*_lad_data(), log="no"), "log"),
    (lambda: aidopt.LADRegressor(fallback="no").fit(*_lad_data()), "fallback"),
], ids=["solve_lad", "LADRegressor", "LADRegressor-int", "facility-prune", "facility-far",
        "aid", "tee", "log", "estimator-fallback"])
def test_a_non_boolean_is_refused_by_every_door(call, name, no_solve):
    with pytest.raises(TypeError, match=f"{name} must be True or False, got"):
        call()


def _families():
    for module in ("lad", "svm", "s3vm", "fsv", "gsvm", "aggout", "facility", "lpc", "s2rlsc",
                   "scm"):
        for obj in vars(importlib.import_module(f"aidopt.api.{module}")).values():
            if isinstance(obj, Family):
                yield obj


def test_every_boolean_parameter_of_every_family_is_checked():
    booleans = [(family, p) for family in _families() for p in family.params.values()
                if isinstance(p.default, bool)]
    assert {p.name for _, p in booleans} >= {"fit_intercept", "prune", "far"}
    for family, param in booleans:
        for wrong in ("no", "yes", 0, 1, None, [True]):
            with pytest.raises(TypeError, match=param.name):
                family.values({param.name: wrong})
        for right in (True, False, np.True_, np.False_):
            assert getattr(family.values({param.name: right}), param.name) == right


def test_numpy_booleans_are_booleans():
    X, y = _lad_data()
    plain = aidopt.solve_lad(X, y, fit_intercept=True, log=False)
    numpy = aidopt.solve_lad(X, y, fit_intercept=np.True_, log=False)
    assert numpy.certified and len(numpy.solution["beta"]) == X.shape[1] + 1
    np.testing.assert_allclose(numpy.solution["beta"], plain.solution["beta"])
    est = aidopt.LADRegressor(fit_intercept=np.False_).fit(X, y)
    assert est.intercept_ == 0.0 and est.coef_.shape == (2,)
