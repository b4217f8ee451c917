"""The estimator (scikit-learn conventions), the CLI module, the result object and the data
generators of Gieseke et al. (2012), section 4.1.1."""

from __future__ import annotations

import argparse
import json
import warnings

import numpy as np
import pytest
from aidopt.instances.s2rlsc import digit_pair, gaussian2c, gaussian4c, ssl_split

from aidopt import solvers
from aidopt.api.s2rlsc import S2RLSCClassifier, solve_s2rlsc
from tests.s2rlsc._helpers import instance

sklearn = pytest.importorskip("sklearn")

needs_miqp = pytest.mark.skipif(
    not any(solvers.availability(name) in ("full", "limited") for name in ("scip", "gurobi")),
    reason="method='exact' needs an MIQP solver: pip install 'aidopt[scip]' or 'aidopt[gurobi]'")


def test_get_params_and_clone():
    from sklearn.base import clone

    clf = S2RLSCClassifier(lam=0.5, search="1+1", r=10, seed=3)
    params = clf.get_params()
    assert params["lam"] == 0.5 and params["search"] == "1+1" and params["r"] == 10
    assert params["seed"] == 3 and params["log"] is False and params["restarts"] == 10
    twin = clone(clf)
    assert twin is not clf and twin.get_params() == params
    clf.set_params(eps=0.2)
    assert clf.eps == 0.2
    with pytest.raises(ValueError):
        clf.set_params(epsilon=0.2)
    with pytest.raises(TypeError):
        S2RLSCClassifier(lambda_=1.0)


def test_fit_predict_on_a_small_problem():
    Xtr, ytr, Xte, yte, truth = instance(l=8, u=72, d=10, seed=60)
    clf = S2RLSCClassifier(search="1+1", restarts=5).fit(Xtr, ytr)
    assert list(clf.classes_) == [-1, 1]
    assert clf.transduction_.shape == ytr.shape
    assert np.array_equal(clf.transduction_[ytr != 0], ytr[ytr != 0])
    assert np.mean(clf.transduction_ == truth) > 0.9
    assert clf.score(Xte, yte) > 0.9
    f = clf.decision_function(Xte)
    assert np.array_equal(clf.predict(Xte), np.where(f >= 0, 1, -1))
    assert np.allclose(clf.decision_function(Xtr), clf.result_.decision, atol=1e-9)
    assert clf.fitness_ == pytest.approx(clf.result_.fitness)
    with pytest.raises(ValueError, match="expected"):
        clf.decision_function(Xte[:, :3])
    with pytest.raises(RuntimeError, match="not fitted"):
        S2RLSCClassifier().predict(Xte)


def test_not_fitted_and_feature_checks_are_the_base_class():
    from aidopt.api.estimator import NotFittedError

    pd = pytest.importorskip("pandas")
    with pytest.raises(NotFittedError):
        S2RLSCClassifier().decision_function(np.zeros((2, 3)))
    Xtr, ytr, Xte, *_ = instance(l=6, u=30, d=3, seed=65)
    clf = S2RLSCClassifier(search="1+1", restarts=2).fit(
        pd.DataFrame(Xtr, columns=["a", "b", "c"]), ytr)
    assert list(clf.feature_names_in_) == ["a", "b", "c"] and clf.n_features_in_ == 3
    good = clf.decision_function(pd.DataFrame(Xte, columns=["a", "b", "c"]))
    np.testing.assert_allclose(good, clf.result_.decision_function(Xte))
    with pytest.raises(ValueError, match="feature names"):
        clf.decision_function(pd.DataFrame(Xte, columns=["a", "b", "z"]))
    with pytest.raises(ValueError, match="NaN|infinity"):
        clf.decision_function(pd.DataFrame(np.where(np.arange(3) == 1, np.nan, Xte),
                                           columns=["a", "b", "c"]))


@pytest.mark.parametrize("kwargs", [{}, {"kernel": "rbf"}, {"kernel": "rbf", "r": 12},
                                    {"kernel": "rbf", "sigma": 2.0}])
def test_fitted_classifier_pickles(kwargs):
    import copy
    import pickle

    Xtr, ytr, Xte, *_ = instance(l=6, u=30, d=4, seed=66)
    clf = S2RLSCClassifier(search="1+1", restarts=2, **kwargs).fit(Xtr, ytr)
    twin = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(twin.decision_function(Xte), clf.decision_function(Xte))
    np.testing.assert_array_equal(twin.result_.predict(Xte), clf.result_.predict(Xte))
    np.testing.assert_array_equal(twin.transduction_, clf.transduction_)
    assert twin.get_params() == clf.get_params()
    assert clf.result_.predictor[0] is not None  # pickling left the fitted estimator intact
    np.testing.assert_array_equal(copy.deepcopy(clf).predict(Xte), clf.predict(Xte))


def test_exact_tests_are_skipped_without_an_miqp_solver():
    for test in (test_exact_fit_does_not_warn_when_certified, test_cli_exact):
        marks = [m for m in getattr(test, "pytestmark", []) if m.name == "skipif"]
        assert marks and "MIQP" in marks[0].kwargs["reason"]


def test_estimator_in_a_pipeline_with_rbf_and_nystrom():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    Xtr, ytr, Xte, yte, _ = instance(l=8, u=72, d=5, seed=61)
    pipe = make_pipeline(StandardScaler(), S2RLSCClassifier(kernel="rbf", r=30, restarts=3))
    pipe.fit(Xtr, ytr)
    assert pipe.score(Xte, yte) > 0.85
    assert pipe[-1].result_.params["r"] == 30


@needs_miqp
def test_exact_fit_does_not_warn_when_certified():
    Xtr, ytr, *_ = instance(l=4, u=12, d=6, seed=62)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = S2RLSCClassifier(method="exact", search="1+1", restarts=2).fit(Xtr, ytr)
    assert clf.result_.certified


def test_result_serialises_and_summarises(tmp_path):
    Xtr, ytr, *_ = instance(l=6, u=30, d=5, seed=63)
    res = solve_s2rlsc(Xtr, ytr, r=12, aggregate=5, log=False, restarts=2)
    data = json.loads(res.to_json(tmp_path / "r.json"))
    assert data["termination"] == "no_improvement" and data["bound"] == "-inf"
    assert len(data["labels"]) == 36 and data["band"]["k_lo"] <= data["band"]["k_hi"]
    text = res.summary()
    assert "a local search proves nothing" in text and "Nystrom r=12" in text
    assert "no_improvement" in repr(res)


def _parser():
    from aidopt.cli.s2rlsc import add_arguments

    parser = argparse.ArgumentParser(prog="aidopt")
    add_arguments(parser.add_subparsers(dest="command", required=True).add_parser("s2rlsc"))
    return parser


def _ssl_csv(tmp_path):
    import pandas as pd

    Xtr, ytr, *_ = instance(l=5, u=25, d=4, seed=64)
    frame = pd.DataFrame(Xtr, columns=["a", "b", "c", "d"])
    frame["label"] = np.where(ytr == 0, np.nan, ytr)  # empty cells: unlabelled
    path = tmp_path / "ssl.csv"
    frame.to_csv(path, index=False)
    return path


def test_cli_search(tmp_path, capsys):
    path = _ssl_csv(tmp_path)
    args = _parser().parse_args(["s2rlsc", "--data", str(path), "--search", "1+1", "--quiet",
                                 "--transduction", str(tmp_path / "t.txt"),
                                 "--output", str(tmp_path / "r.json")])
    assert args.func(args) == 0
    labels = np.loadtxt(tmp_path / "t.txt")
    assert labels.shape == (30,) and set(np.unique(labels)) <= {-1.0, 1.0}
    assert "no_improvement" in capsys.readouterr().out


@needs_miqp
def test_cli_exact(tmp_path, capsys):
    path = _ssl_csv(tmp_path)
    args = _parser().parse_args(["s2rlsc", "--data", str(path), "--method", "exact", "--quiet",
                                 "--restarts", "2", "--aggregate", "0.2"])
    assert args.func(args) == 0
    assert "certified_optimal" in capsys.readouterr().out


def test_generators_follow_the_paper():
    X, y = gaussian2c(400, 6, seed=0)
    assert X.shape == (400, 6) and (y == 1).sum() == 200
    assert np.allclose(X[y == -1].mean(0), [-2.5, 0, 0, 0, 0, 0], atol=0.3)
    assert np.allclose(X[y == 1].mean(0), [2.5, 0, 0, 0, 0, 0], atol=0.3)
    assert np.allclose(X[y == 1].std(0), 1.0, atol=0.15)
    X, y = gaussian4c(400, 5, seed=1)
    assert (y == 1).sum() == 200
    for s0, s1, cls in [(-1, -1, -1), (-1, 1, -1), (1, -1, 1), (1, 1, 1)]:
        quad = (np.sign(X[:, 0]) == s0) & (np.sign(X[:, 1]) == s1)
        assert np.mean(y[quad] == cls) > 0.95
    assert np.array_equal(gaussian2c(10, 3, seed=5)[0], gaussian2c(10, 3, seed=5)[0])
    Xtr, ytr, Xte, yte, truth = ssl_split(*gaussian2c(500, 4, seed=2), l=25, u=225, seed=0)
    assert Xtr.shape == (250, 4) and Xte.shape == (250, 4)
    assert (ytr != 0).sum() == 25 and set(np.unique(ytr[:25])) == {-1.0, 1.0}
    assert np.array_equal(truth[:25], ytr[:25])
    X, y = digit_pair(3, 8)
    assert X.min() >= 0 and X.max() <= 1 and set(np.unique(y)) == {-1.0, 1.0}
    with pytest.raises(ValueError):
        digit_pair(3, 3)
