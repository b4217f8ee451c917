"""Classifiers of k >= 3 classes (aidopt/api/multiclass.py): one-vs-rest and one-vs-one made of
certified binary fits. Each k-class fit is compared with the binary fits done by hand, and with
scikit-learn's LinearSVC / SVC where accuracy is the point."""

from __future__ import annotations

import itertools
import json
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

sklearn = pytest.importorskip("sklearn", minversion="1.6")

from sklearn.datasets import load_digits, load_iris  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.svm import SVC, LinearSVC  # noqa: E402

from aidopt import (  # noqa: E402
    AggregateOutputClassifier,
    FSVClassifier,
    GSVMClassifier,
    S2RLSCClassifier,
    S3VMClassifier,
    SCMClassifier,
    SVMClassifier,
)
from aidopt.api.estimator import ConvergenceWarning  # noqa: E402
from aidopt.api.multiclass import MulticlassResult, subproblem_classes  # noqa: E402
from aidopt.cli.main import main  # noqa: E402
from aidopt.results import AIDResult  # noqa: E402


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def _full_gamma(X):
    """gamma='scale' on all rows, as the k-class fit resolves it once."""
    return 1.0 / (X.shape[1] * X.var())


# --------------------------------------------------------------------------- against binary fits


def test_ovr_is_k_binary_fits_by_hand(iris):
    X, y = iris
    clf = SVMClassifier(C=0.5).fit(X, y)
    assert clf.result_.strategy == "ovr" and clf.coef_.shape == (3, 4)
    assert clf.intercept_.shape == (3,) and clf.decision_function(X).shape == (150, 3)
    for c in range(3):
        hand = SVMClassifier(C=0.5).fit(X, np.where(y == c, 1, -1))
        np.testing.assert_allclose(clf.coef_[c], hand.coef_[0], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(clf.intercept_[c], hand.intercept_[0], rtol=1e-4, atol=1e-5)
        assert clf.results_[c].objective == pytest.approx(hand.result_.objective, rel=1e-7)
        np.testing.assert_allclose(clf.decision_function(X)[:, c], hand.decision_function(X),
                                   rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(clf.predict(X), np.argmax(clf.decision_function(X), axis=1))


def test_ovo_is_pairwise_binary_fits_by_hand(iris):
    """Kernel SVMs default to one-vs-one; gamma='scale' is resolved on all rows (as SVC), so the
    pair fits by hand use that gamma; decision_function_shape='ovo' gives each pair's own values,
    positive for the pair's first class."""
    X, y = iris
    clf = SVMClassifier(kernel="rbf", decision_function_shape="ovo").fit(X, y)
    assert clf.result_.strategy == "ovo"
    assert clf.result_.subproblems == [(0, 1), (0, 2), (1, 2)]
    values = clf.decision_function(X)
    assert values.shape == (150, 3) and clf.dual_coef_.shape == (3, clf.support_.size)
    for p, (i, j) in enumerate(itertools.combinations(range(3), 2)):
        rows = np.isin(y, (i, j))
        hand = SVMClassifier(kernel="rbf", gamma=_full_gamma(X)).fit(
            X[rows], np.where(y[rows] == i, 1, -1))
        assert clf.results_[p].objective == pytest.approx(hand.result_.objective, rel=1e-6)
        np.testing.assert_allclose(values[:, p], hand.decision_function(X), rtol=1e-4, atol=1e-4)
        # the pair's support vectors are rows of the pair, placed in the shared support set
        assert set(np.flatnonzero(rows)[hand.support_]) == set(
            clf.support_[np.abs(clf.dual_coef_[p]) > 0])


def test_ovo_votes_follow_scikit_learns_svc_convention(iris):
    """decision_function_shape='ovr' (the default) is SVC's aggregation of the pairwise values:
    the votes plus a confidence in (-1/3, 1/3); predict is the class with the most votes."""
    from sklearn.utils.multiclass import _ovr_decision_function

    X, y = iris
    clf = SVMClassifier(multi_class="ovo").fit(X, y)
    assert clf.coef_.shape == (3, 4)  # linear one-vs-one: one plane per pair
    pairwise = X @ clf.coef_.T + clf.intercept_
    expected = _ovr_decision_function(pairwise < 0, -pairwise, 3)
    np.testing.assert_allclose(clf.decision_function(X), expected, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(X), np.argmax(expected, axis=1))
    clf.set_params(decision_function_shape="ovo")
    np.testing.assert_allclose(clf.decision_function(X), pairwise, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(X), np.argmax(expected, axis=1))


@pytest.mark.parametrize(("est", "strategy"), [
    (FSVClassifier(nu=0.5), "ovr"),
    (GSVMClassifier(kernel="rbf"), "ovo"),
    (SCMClassifier(), "ovr"),
], ids=["FSV", "GSVM", "SCM"])
def test_other_classifiers_are_their_binary_fits_by_hand(iris, est, strategy):
    X, y = iris
    clf = sklearn.base.clone(est).fit(X, y)
    assert clf.result_.strategy == strategy and len(clf.results_) == 3
    for p, labels in enumerate(subproblem_classes(np.arange(3), strategy)):
        rows = np.isin(y, labels) if strategy == "ovo" else np.ones(150, bool)
        hand = sklearn.base.clone(est).fit(X[rows], np.where(y[rows] == labels[0], 1, -1))
        np.testing.assert_allclose(clf.decision_function(X)[:, p] if strategy == "ovr" else
                                   clf.estimators_[p].decision_function(X),
                                   hand.decision_function(X), rtol=1e-6, atol=1e-6)
    assert clf.score(X, y) > 0.93


def test_fsv_selects_the_features_any_subproblem_uses(iris):
    X, y = iris
    clf = FSVClassifier(nu=0.5).fit(X, y)
    used = np.flatnonzero(np.any(np.abs(clf.coef_) > 0, axis=0))
    assert set(clf.get_support(indices=True)) == set(np.concatenate(
        [est.support_ for est in clf.estimators_]))
    assert set(clf.get_support(indices=True)) <= set(used)
    assert clf.transform(X).shape == (150, clf.get_support().sum())
    assert clf.certified_ is False  # FSV ends at stationary points, never certified


# --------------------------------------------------------------------------- accuracy


def test_digits_accuracy_against_linearsvc():
    """10 classes, standardized, 70/30 split: within a point of LinearSVC(loss="hinge")
    (LIBLINEAR, one-vs-rest too), every subproblem certified."""
    X, y = load_digits(return_X_y=True)
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.3, random_state=0)
    scaler = StandardScaler().fit(Xa)
    Xa, Xb = scaler.transform(Xa), scaler.transform(Xb)
    clf = SVMClassifier().fit(Xa, ya)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LIBLINEAR's dual CD may stop at its iteration limit
        reference = LinearSVC(loss="hinge", max_iter=20_000).fit(Xa, ya).score(Xb, yb)
    assert clf.score(Xb, yb) >= reference - 0.01
    assert clf.certified_ and len(clf.results_) == 10
    assert all(r.certificate.certified for r in clf.results_)


def test_iris_accuracy_against_svc(iris):
    X, y = iris
    linear = SVMClassifier().fit(X, y)
    kernel = SVMClassifier(kernel="rbf").fit(X, y)
    assert linear.score(X, y) >= LinearSVC(loss="hinge", max_iter=20_000).fit(X, y).score(X, y) - 0.02
    assert kernel.score(X, y) >= SVC().fit(X, y).score(X, y) - 0.01
    assert linear.certified_ and kernel.certified_


# --------------------------------------------------------------------------- attributes, results


def test_results_certificates_and_the_multiclass_result(iris):
    X, y = iris
    clf = SVMClassifier(kernel="rbf").fit(X, y)
    result = clf.result_
    assert isinstance(result, MulticlassResult) and result.results is clf.results_
    assert all(isinstance(r, AIDResult) and r.certificate is not None for r in clf.results_)
    assert clf.certified_ is True and result.certified and result.termination == "certified_optimal"
    lines = result.summary().splitlines()
    assert lines[0].startswith("one-vs-one: 3 classes, 3 subproblems")
    assert [line.split()[:3] for line in lines[1:4]] == [["0", "vs", "1"], ["0", "vs", "2"],
                                                         ["1", "vs", "2"]]
    assert all("certified_optimal" in line and "relative gap" in line for line in lines[1:4])
    data = json.loads(result.to_json())
    assert data["strategy"] == "ovo" and data["certified"] is True
    assert [s["classes"] for s in data["subproblems"]] == [[0, 1], [0, 2], [1, 2]]
    assert len(result.history_frame().subproblem.unique()) == 3
    assert clf.n_iter_ == max(len(r.history) for r in clf.results_)


def test_certified_only_when_every_subproblem_is(iris):
    X, y = iris
    with pytest.warns(ConvergenceWarning, match=r"of 3 subproblems ended with a warning") as caught:
        clf = SVMClassifier(max_iter=1).fit(X, y)
    assert len([w for w in caught if issubclass(w.category, ConvergenceWarning)]) == 1
    assert clf.certified_ is False and not clf.result_.certified
    assert not all(r.certified for r in clf.results_)
    assert clf.result_.termination == "iteration_limit"
    assert "(not certified)" in clf.result_.summary()
    assert clf.predict(X).shape == (150,)  # the best planes so far still predict


def test_time_limit_is_shared_by_the_subproblems(iris):
    """time_limit is for the whole fit: subproblem p of 3 must end within (p + 1) / 3 of it,
    with what the earlier ones left."""
    X, y = iris
    clf = SVMClassifier(time_limit=30.0).fit(X, y)
    limits = [r.config["time_limit"] for r in clf.results_]
    for p, limit in enumerate(limits):
        assert 10.0 * (p + 1) - 5.0 < limit <= 10.0 * (p + 1)
    assert clf.certified_


def test_n_jobs_2_equals_n_jobs_1(iris):
    """Two worker processes: the same subproblems, the same certified answers."""
    X, y = iris
    one = SVMClassifier(kernel="rbf", multi_class="ovr").fit(X, y)
    two = SVMClassifier(kernel="rbf", multi_class="ovr", n_jobs=2).fit(X, y)
    assert two.result_.n_jobs == 2 and two.certified_
    np.testing.assert_array_equal(two.dual_coef_, one.dual_coef_)
    np.testing.assert_array_equal(two.intercept_, one.intercept_)
    assert [r.objective for r in two.results_] == [r.objective for r in one.results_]
    np.testing.assert_array_equal(two.decision_function(X), one.decision_function(X))


def test_binary_behaviour_is_unchanged(iris):
    """Two classes: one binary fit, today's attributes and shapes, whatever multi_class says."""
    X, y = iris
    rows = y > 0
    Xb, yb = X[rows], y[rows]
    import aidopt

    reference = aidopt.solve_svm(Xb, yb, log=False)
    for multi_class in ("auto", "ovr", "ovo"):
        clf = SVMClassifier(multi_class=multi_class).fit(Xb, yb)
        assert isinstance(clf.result_, AIDResult) and clf.results_ == [clf.result_]
        assert clf.certified_ is True and not hasattr(clf, "estimators_")
        assert clf.classes_.tolist() == [1, 2]
        assert clf.coef_.shape == (1, 4) and clf.intercept_.shape == (1,)
        np.testing.assert_allclose(clf.coef_[0], reference.solution["w"], rtol=1e-9)
        f = clf.decision_function(Xb)
        assert f.shape == (100,)
        np.testing.assert_array_equal(clf.predict(Xb), np.where(f > 0, 2, 1))
    kernel = SVMClassifier(kernel="rbf").fit(Xb, yb)
    assert kernel.dual_coef_.shape == (1, kernel.support_.size)
    assert kernel.decision_function(Xb).shape == (100,)
    # a refit on k classes forgets the binary fit, and back
    clf = SVMClassifier().fit(X, y)
    assert clf.coef_.shape == (3, 4) and len(clf.estimators_) == 3
    clf.fit(Xb, yb)
    assert clf.coef_.shape == (1, 4) and not hasattr(clf, "estimators_")


def test_string_labels(iris):
    X, y = iris
    species = np.array(["setosa", "versicolor", "virginica"])
    names = species[y]
    for est in (SVMClassifier(), SVMClassifier(kernel="rbf")):
        named = sklearn.base.clone(est).fit(X, names)
        numbered = sklearn.base.clone(est).fit(X, y)
        assert named.classes_.tolist() == ["setosa", "versicolor", "virginica"]
        assert named.result_.subproblems[0][0] == "setosa"
        np.testing.assert_allclose(named.decision_function(X), numbered.decision_function(X))
        np.testing.assert_array_equal(named.predict(X), species[numbered.predict(X)])
    assert "'setosa' vs rest" in SVMClassifier().fit(X, names).result_.summary()


@pytest.mark.parametrize("multi_class", ["ovr", "ovo"])
def test_a_class_with_one_sample(iris, multi_class):
    X, y = iris
    X = np.vstack([X, [[3.0, 3.0, 3.0, 3.0]]])
    y = np.append(y, 3)
    clf = SVMClassifier(multi_class=multi_class).fit(X, y)
    assert clf.classes_.tolist() == [0, 1, 2, 3] and clf.certified_
    assert len(clf.results_) == (4 if multi_class == "ovr" else 6)
    assert clf.decision_function(X).shape == (151, 4)
    assert clf.score(X, y) > 0.9


def test_sparse_and_dataframe_input_give_the_same_model(iris):
    X, y = iris
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    for est in (SVMClassifier(), SVMClassifier(kernel="rbf")):
        dense = sklearn.base.clone(est).fit(X, y)
        sparse = sklearn.base.clone(est).fit(sp.csr_array(X), y)
        named = sklearn.base.clone(est).fit(frame, y)
        np.testing.assert_allclose(sparse.decision_function(sp.csr_array(X)),
                                   dense.decision_function(X), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(named.decision_function(frame), dense.decision_function(X),
                                   rtol=1e-6, atol=1e-6)
        assert named.feature_names_in_.tolist() == ["a", "b", "c", "d"]
        assert named.results_[0].solution["feature_names"] == ["a", "b", "c", "d"]


def test_sample_weights(iris):
    """Integer weights are repeated rows in every subproblem; a class without weight is refused."""
    X, y = iris
    w = np.random.default_rng(0).integers(0, 3, size=150)
    weighted = SVMClassifier().fit(X, y, sample_weight=w)
    repeated = SVMClassifier().fit(X.repeat(w, axis=0), y.repeat(w))
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="every row of class 2 has zero sample weight"):
        SVMClassifier().fit(X, y, sample_weight=np.where(y == 2, 0.0, 1.0))


@pytest.mark.parametrize("est", [SVMClassifier(kernel="rbf"), GSVMClassifier(kernel="rbf"),
                                 SCMClassifier(), FSVClassifier(nu=0.5)],
                         ids=["SVM-rbf", "GSVM", "SCM", "FSV"])
def test_k_class_models_pickle(iris, est):
    X, y = iris
    clf = sklearn.base.clone(est).fit(X, y)
    twin = pickle.loads(pickle.dumps(clf))
    np.testing.assert_allclose(twin.decision_function(X), clf.decision_function(X))
    assert [r.objective if hasattr(r, "objective") else r.intercept for r in twin.results_] == \
        [r.objective if hasattr(r, "objective") else r.intercept for r in clf.results_]
    assert twin.result_.results is twin.results_ and twin.certified_ == clf.certified_


def test_bad_multiclass_options_are_refused(iris):
    X, y = iris
    with pytest.raises(ValueError, match="multi_class must be 'auto', 'ovr', 'ovo' or "
                                         "'crammer_singer'"):
        SVMClassifier(multi_class="weston_watkins").fit(X, y)  # crammer_singer: its own tests
    with pytest.raises(ValueError, match="decision_function_shape='ovo' .* set multi_class='ovo'"):
        SVMClassifier(decision_function_shape="ovo").fit(X, y)
    with pytest.raises(ValueError, match="n_jobs must be a non-zero integer or None"):
        SVMClassifier(n_jobs=0).fit(X, y)
    for cls in (SVMClassifier, GSVMClassifier, FSVClassifier, SCMClassifier):
        with pytest.raises(ValueError, match="needs at least two classes, got 1 class"):
            cls().fit(X, np.ones(150))


def test_binary_only_models_say_so(iris):
    """S3VM, S2RLSC and aggregate outputs are binary models: their docstrings say why, and
    k-class labels are refused."""
    X, y = iris
    for cls in (S3VMClassifier, S2RLSCClassifier, AggregateOutputClassifier):
        assert "A binary model, with no multi-class form" in cls.__doc__
    semi = np.where(np.arange(150) % 3 == 0, y - 1, 0)  # -1, 0, +1 labeled and 0 unlabeled ...
    semi[0] = 2  # ... and a third class
    for cls in (S3VMClassifier, S2RLSCClassifier):
        with pytest.raises(ValueError, match=r"labels must be -1 or \+1"):
            cls().fit(X, semi)


# --------------------------------------------------------------------------- the CLI


def test_cli_prints_one_line_per_subproblem_and_the_accuracy(tmp_path, capsys, iris):
    X, y = iris
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["species"] = np.array(["setosa", "versicolor", "virginica"])[y]
    path = tmp_path / "iris.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "r.json"
    assert main(["svm", "--data", str(path), "--target", "species", "--quiet",
                 "--output", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("one-vs-rest: 3 classes, 3 subproblems")
    for line, name in zip(printed[1:4], ["setosa", "versicolor", "virginica"], strict=True):
        assert line.split()[:3] == [f"'{name}'", "vs", "rest"]
        assert "certified_optimal" in line and "objective" in line and "relative gap" in line
    assert printed[4] == "certified: all 3 subproblems"
    accuracy = SVMClassifier().fit(X, y).score(X, y)
    assert printed[5] == f"training accuracy {100 * accuracy:.2f} % (3 classes)"
    assert json.loads(out.read_text())["subproblems"][2]["classes"] == ["virginica"]
    assert main(["svm", "--data", str(path), "--target", "species", "--quiet",
                 "--multi-class", "ovo"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:3] for line in lines[1:4]] == [
        ["'setosa'", "vs", "'versicolor'"], ["'setosa'", "vs", "'virginica'"],
        ["'versicolor'", "vs", "'virginica'"]]
    assert main(["svm", "--data", str(path), "--target", "species", "--quiet",
                 "--max-iter", "1"]) == 1  # not every subproblem certified
    capsys.readouterr()
    assert main(["svm", "--data", str(path), "--target", "species", "--quiet",
                 "--method", "lpc", "--norm", "l1"]) == 2
    assert "--method: binary SVMs only" in capsys.readouterr().err
