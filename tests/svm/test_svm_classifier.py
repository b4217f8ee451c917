"""SVMClassifier: scikit-learn conventions, labels, decision function, kernels."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.instances import svm_instance

import aidopt
from aidopt import SVMClassifier
from tests.svm._helpers import instance

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone, is_classifier  # noqa: E402
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402


@pytest.fixture(scope="module")
def separated():
    X, y = svm_instance(600, 3, 11, separation=3.0)
    return X, np.where(y > 0, "spam", "ham")


@pytest.mark.parametrize("norm", ["l2", "l1", "linf", "none"])
def test_fit_predict_score_string_labels(separated, norm):
    X, labels = separated
    clf = SVMClassifier(C=0.5, norm=norm)
    assert clf.fit(X, labels) is clf
    assert clf.result_.certified
    assert list(clf.classes_) == ["ham", "spam"]
    assert clf.n_features_in_ == 3
    assert clf.coef_.shape == (1, 3) and clf.intercept_.shape == (1,)
    assert clf.coef_[0] == pytest.approx(clf.result_.solution["w"])
    pred = clf.predict(X)
    assert set(pred) <= {"ham", "spam"}
    assert clf.score(X, labels) > 0.9
    assert clf.score(X, labels) == pytest.approx(np.mean(pred == labels))
    # decision function: w x + b, positive means classes_[1]
    d = clf.decision_function(X)
    assert d == pytest.approx(X @ clf.coef_[0] + clf.intercept_[0])
    assert np.array_equal(pred, np.where(d > 0, "spam", "ham"))
    # support_: exactly the rows with a dual above 1e-8 C
    alpha = clf.result_.solution["alpha"]
    assert np.array_equal(clf.support_, np.flatnonzero(alpha > 1e-8 * 0.5))
    if norm == "l2":  # w = sum_i alpha_i y_i x_i needs support vectors
        assert clf.support_.size > 0


def test_numeric_labels_map_like_sklearn():
    X, y = instance("overlapping", 400, 3, 12)
    labels = np.where(y > 0, 7, 3)  # the sorted first (3) is the negative class
    clf = SVMClassifier(C=0.3).fit(X, labels)
    assert list(clf.classes_) == [3, 7]
    same = SVMClassifier(C=0.3).fit(X, y)
    assert clf.coef_ == pytest.approx(same.coef_, rel=1e-6, abs=1e-9)
    flipped = SVMClassifier(C=0.3).fit(X, np.where(y > 0, 3, 7))
    # the same problem with y negated: w is -w*; each certificate bounds its distance to the
    # optimum by 1/2 ||w - w*||^2 <= E - D (the objective is 1-strongly convex in w)
    reach = sum(np.sqrt(2 * c.result_.certificate.relative_gap * c.result_.objective)
                for c in (same, flipped))
    assert np.abs(flipped.coef_ + same.coef_).max() <= reach
    assert flipped.result_.certified and same.result_.certified
    assert flipped.result_.objective == pytest.approx(same.result_.objective, rel=1e-9)
    assert clf.result_.solution["classes"] == [3, 7]


def test_sklearn_clone_params_and_tags(separated):
    X, labels = separated
    clf = SVMClassifier(C=0.25, norm="l1", seed=3).fit(X, labels)
    twin = clone(clf)
    assert twin.get_params() == clf.get_params()
    assert not hasattr(twin, "result_") and not hasattr(twin, "coef_")
    assert is_classifier(clf)
    twin.set_params(C=2.0)
    assert twin.C == 2.0 and clf.C == 0.25
    with pytest.raises(ValueError, match="invalid parameter"):
        twin.set_params(nope=1)


def test_cross_val_score_and_pipeline(separated):
    X, labels = separated
    scores = cross_val_score(SVMClassifier(C=0.5), X, labels, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0.9)
    pipe = make_pipeline(StandardScaler(), SVMClassifier(C=0.5, norm="l1"))
    scores = cross_val_score(pipe, X, labels, cv=3)
    assert np.all(scores > 0.9)


def test_grid_search_over_C(separated):
    X, labels = separated
    search = GridSearchCV(SVMClassifier(), {"C": [0.01, 1.0]}, cv=2).fit(X, labels)
    assert search.best_params_["C"] in (0.01, 1.0)
    assert search.best_estimator_.result_.certified


@pytest.mark.parametrize(("kernel", "params", "kfun"), [
    ("rbf", {"gamma": 0.5}, lambda A, B: rbf_kernel(A, B, gamma=0.5)),
    ("poly", {"gamma": 0.4, "degree": 2, "coef0": 1.0},
     lambda A, B: polynomial_kernel(A, B, degree=2, gamma=0.4, coef0=1.0)),
])
def test_kernel_classifier_consistent_with_result(kernel, params, kfun):
    X, y = svm_instance(200, 2, 3, separation=1.5)
    C = 1.0
    clf = SVMClassifier(C=C, kernel=kernel, **params).fit(X, y)
    res = clf.result_
    assert res.certified
    assert not hasattr(clf, "coef_")
    n_sv = clf.support_.size
    assert clf.support_vectors_.shape == (n_sv, 2) and clf.dual_coef_.shape == (1, n_sv)
    # decision function = sum_i alpha_i y_i K(x_i, x) + b from the result (dropping only
    # rows whose alpha is below 1e-8 C)
    alpha, b = res.solution["alpha"], res.solution["b"]
    f = kfun(X, X) @ (alpha * y) + b
    d = clf.decision_function(X)
    assert d == pytest.approx(f, abs=1e-5)
    # the result's objective is the kernel SVM objective of that decision function
    coef = alpha * y
    E = 0.5 * float(coef @ kfun(X, X) @ coef) + C * float(np.maximum(0.0, 1.0 - y * f).sum())
    assert E == pytest.approx(res.objective, rel=1e-6)
    # predictions: sign of the decision function, accuracy = fraction with y_i f(x_i) > 0
    assert np.array_equal(clf.predict(X), np.where(d > 0, 1.0, -1.0))
    assert clf.score(X, y) == pytest.approx(np.mean(y * d > 0))
    assert clf.score(X, y) > 0.8


def test_kernel_classifier_string_labels_and_new_points():
    X, y = svm_instance(150, 2, 9, separation=2.0)
    labels = np.where(y > 0, "b", "a")
    clf = SVMClassifier(C=1.0, kernel="rbf").fit(X, labels)
    assert list(clf.classes_) == ["a", "b"]
    X_new, y_new = svm_instance(100, 2, 10, separation=2.0)
    assert clf.score(X_new, np.where(y_new > 0, "b", "a")) > 0.8


def test_score_with_sample_weight(separated):
    X, labels = separated
    clf = SVMClassifier(C=0.5).fit(X, labels)
    w = np.random.default_rng(0).uniform(0.1, 1.0, size=len(labels))
    correct = clf.predict(X) == labels
    assert clf.score(X, labels, sample_weight=w) == pytest.approx(np.average(correct, weights=w))


def test_uncertified_fit_warns():
    X, y = instance("overlapping", 3000, 5, 13)
    from aidopt.api.estimator import ConvergenceWarning

    with pytest.warns(ConvergenceWarning, match="not certified optimal"):
        clf = SVMClassifier(C=0.5, max_iter=1).fit(X, y)
    assert clf.result_.termination is aidopt.Termination.ITERATION_LIMIT
    assert clf.predict(X).shape == (3000,)


def test_scip_classifier_has_support():
    X, y = instance("overlapping", 300, 3, 11)
    clf = SVMClassifier(C=0.5, solver="scip").fit(X, y)
    assert clf.result_.certified
    assert clf.result_.solution["alpha"] is not None
    assert clf.support_.size > 0
