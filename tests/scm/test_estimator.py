"""SCMClassifier is a scikit-learn estimator: GridSearchCV with average precision, clone, the
orientation of decision_function to classes_[1] whichever class is the minority."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.instances.scm import sine_set

from aidopt.api.scm import SCMClassifier

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.metrics import average_precision_score  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402


def test_grid_search_with_average_precision():
    X, y = sine_set("D2", n_pos=30, n_neg=300, seed=0)
    labels = (y > 0).astype(int)
    search = GridSearchCV(SCMClassifier(kernel="rbf"), {"C": [0.1, 1.0]},
                          scoring="average_precision", cv=3).fit(X, labels)
    assert search.best_params_["C"] in (0.1, 1.0)
    assert 0.5 < search.best_score_ <= 1.0
    best = search.best_estimator_
    assert best.result_.certified and list(best.classes_) == [0, 1]


def test_clone_and_params():
    est = SCMClassifier(C=3.0, shrink="rank", representative="pseudo", max_iter=2)
    copy = clone(est)
    assert copy.get_params() == est.get_params() and copy is not est
    assert not hasattr(copy, "result_")
    assert copy.set_params(shrink_gamma=2.0).shrink_gamma == 2.0
    with pytest.raises(ValueError, match="invalid parameter"):
        copy.set_params(gamma_shrink=1.0)


def test_orientation_when_the_minority_is_the_first_class():
    X, y = sine_set("D2", n_pos=30, n_neg=300, seed=1)
    labels = np.where(y > 0, "a", "b")  # minority "a" sorts first
    clf = SCMClassifier(kernel="linear").fit(X, labels)
    assert list(clf.classes_) == ["a", "b"] and clf.result_.classes == ["b", "a"]
    score = clf.decision_function(X)
    np.testing.assert_allclose(score, -clf.result_.decision_function(X))
    assert average_precision_score(labels == "b", score) > 0.95
    assert np.array_equal(clf.predict(X), np.where(score > 0, "b", "a"))
    assert clf.score(X, labels) > 0.9
    np.testing.assert_allclose(X @ clf.coef_[0] + clf.intercept_[0], score)


def test_kernel_expansion_attributes_and_checks():
    pd = pytest.importorskip("pandas")
    X, y = sine_set("D2", n_pos=20, n_neg=200, seed=2)
    frame = pd.DataFrame(X, columns=["x", "y"])
    clf = SCMClassifier(kernel="rbf", gamma=0.5)
    with pytest.raises(RuntimeError, match="not fitted"):
        clf.predict(X)
    clf.fit(frame, y)
    assert list(clf.feature_names_in_) == ["x", "y"]
    K = clf.result_.kernel(X, clf.support_vectors_)
    np.testing.assert_allclose(K @ clf.dual_coef_[0] + clf.intercept_[0],
                               clf.decision_function(frame))
    with pytest.raises(ValueError, match="expected"):
        clf.predict(frame[["x"]])


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_fitted_classifier_pickles(kernel):
    import copy
    import pickle

    X, y = sine_set("D2", n_pos=20, n_neg=200, seed=3)
    clf = SCMClassifier(kernel=kernel, gamma=0.5, max_iter=2).fit(X, y)
    twin = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(twin.decision_function(X), clf.decision_function(X))
    np.testing.assert_array_equal(twin.result_.decision_function(X),
                                  clf.result_.decision_function(X))
    assert twin.get_params() == clf.get_params() and twin.score(X, y) == clf.score(X, y)
    assert clf.result_.kernel is not None  # pickling left the fitted estimator intact
    np.testing.assert_array_equal(copy.deepcopy(clf).predict(X), clf.predict(X))
