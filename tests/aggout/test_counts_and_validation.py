"""Aggregate outputs: counts held exactly with a large count cost, bad input, the estimator."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import aidopt
from aidopt import AggregateOutputClassifier, solvers
from aidopt.data.validate import as_aggregate_data


def _have(name):
    return solvers.availability(name) in ("full", "limited")


def noisy(seed, n=20, size=5):
    """Counts of a noisy linear truth: no hyperplane reproduces them at no hinge cost."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    truth = (X[:, 0] + 0.8 * rng.normal(size=n) > 0).astype(int)
    collections = np.arange(n) // size
    counts = np.bincount(collections, weights=truth).astype(int)
    return X, collections, counts


def _counted(result, collections, n_coll):
    labels = np.asarray(result.solution["labels"], dtype=float)
    assert set(np.unique(labels)) <= {0.0, 1.0}
    return np.bincount(collections, weights=labels, minlength=n_coll).astype(int)


# --------------------------------------------------------------------------- counts
@pytest.mark.parametrize("seed", [0, 1])
def test_large_D_makes_counts_exact_highs_l1(seed):
    """D = 100 > C n (the cost of w = 0, b = 0 with any count-respecting labelling) forces
    eta = 0: the labels reproduce every count."""
    X, collections, counts = noisy(seed)
    res = aidopt.solve_aggregate_outputs(X, collections, counts, method="miqp", C=1.0, D=100.0,
                                         norm="l1", solver="highs", aid=False, log=False)
    assert res.termination == "certified_optimal"
    np.testing.assert_array_equal(_counted(res, collections, counts.size), counts)
    # the objective is at most the cost C n of w = 0 with a count-respecting labelling
    assert res.objective <= 1.0 * X.shape[0] + 1e-6


def test_large_D_counts_exact_with_aid_and_mapping_ids():
    """Same with AID and string ids given through a mapping."""
    X, collections, counts = noisy(3)
    ids = np.array([f"bag-{c}" for c in collections])
    mapping = {f"bag-{c}": int(k) for c, k in enumerate(counts)}
    res = aidopt.solve_aggregate_outputs(X, ids, mapping, method="miqp", C=1.0, D=100.0,
                                         norm="l1", solver="highs", aid=True, log=False)
    assert res.termination in ("cluster_optimal", "certified_optimal")
    np.testing.assert_array_equal(_counted(res, collections, counts.size), counts)


def test_small_D_does_not_hold_counts():
    """Guard for the tests above: with a tiny D the counts are not reproduced, so their
    exactness is the work of D."""
    X, collections, counts = noisy(0)
    res = aidopt.solve_aggregate_outputs(X, collections, counts, method="miqp", C=1.0, D=0.01,
                                         norm="l1", solver="highs", aid=False, log=False)
    assert res.termination == "certified_optimal"
    assert not np.array_equal(_counted(res, collections, counts.size), counts)


@pytest.mark.skipif(not _have("scip"), reason="SCIP not installed")
def test_large_D_counts_exact_scip_l2():
    X, collections, counts = noisy(1, n=15)
    res = aidopt.solve_aggregate_outputs(X, collections, counts, method="miqp", C=1.0, D=100.0,
                                         norm="l2", solver="scip", aid=False, log=False)
    assert res.termination == "certified_optimal"
    np.testing.assert_array_equal(_counted(res, collections, counts.size), counts)


# --------------------------------------------------------------------------- counts: input forms
def test_counts_array_follows_sorted_ids():
    """An array of counts is read over the sorted distinct ids, whatever the row order."""
    X = np.arange(14.0).reshape(7, 2)
    ids = np.array(["b", "a", "b", "c", "a", "b", "c"])
    data = as_aggregate_data(X, ids, [2, 3, 0])  # a: 2 of 2, b: 3 of 3, c: 0 of 2
    assert list(data.ids) == ["a", "b", "c"]
    np.testing.assert_array_equal(data.sizes, [2, 3, 2])
    np.testing.assert_array_equal(data.counts, [2, 3, 0])
    same = as_aggregate_data(X, ids, {"c": 0, "a": 2, "b": 3})
    np.testing.assert_array_equal(same.counts, data.counts)
    np.testing.assert_array_equal(same.collection, data.collection)
    # whole floats are accepted as counts
    np.testing.assert_array_equal(as_aggregate_data(X, ids, [2.0, 3.0, 0.0]).counts, [2, 3, 0])


def test_counts_series_indexed_by_id_is_not_misaligned():
    """A pandas Series of counts indexed by collection id (not in sorted order) must either be
    aligned on its index or rejected, never read positionally against other ids."""
    X = np.arange(14.0).reshape(7, 2)
    ids = np.array(["b", "a", "b", "c", "a", "b", "c"])
    series = pd.Series({"c": 0, "b": 3, "a": 2})
    try:
        data = as_aggregate_data(X, ids, series)
    except ValueError:
        return
    np.testing.assert_array_equal(data.counts, [2, 3, 0])  # a, b, c


# --------------------------------------------------------------------------- bad input
X6 = np.arange(12.0).reshape(6, 2)
C6 = np.array([0, 0, 0, 1, 1, 1])


def _with(value, at=(1, 1)):
    X = X6.copy()
    X[at] = value
    return X


BAD = [
    pytest.param(X6, C6, [4, 1], r"outside 0\.\.collection size.*count 4 for 3", id="count>size"),
    pytest.param(X6, C6, [-1, 1], r"outside 0\.\.collection size.*count -1", id="negative-count"),
    pytest.param(X6, C6, [1.5, 1], r"whole numbers", id="non-integer-count"),
    pytest.param(X6, C6, [np.nan, 1], r"whole numbers", id="nan-count"),
    pytest.param(X6, C6, {0: 1, 1: 1, 7: 0}, r"without rows|empty", id="empty-collection"),
    pytest.param(X6, C6, {0: 1}, r"no count", id="missing-count"),
    pytest.param(_with(np.nan), C6, [1, 1], r"NaN", id="nan-in-X"),
    pytest.param(_with(np.inf), C6, [1, 1], r"infinite", id="inf-in-X"),
    pytest.param(X6, np.array([0, 0, np.nan, 1, 1, 1]), [1, 1], r"collections.*NaN", id="nan-id"),
    pytest.param(X6, C6, [1, 1, 0], r"one entry per collection", id="counts-too-long"),
    pytest.param(X6, C6, [1], r"one entry per collection", id="counts-too-short"),
    pytest.param(X6, C6, ["x", 1], r"counts must be numbers", id="non-numeric-count"),
]


@pytest.mark.parametrize(("X", "collections", "counts", "match"), BAD)
def test_as_aggregate_data_rejects(X, collections, counts, match):
    with pytest.raises(ValueError, match=match):
        as_aggregate_data(X, collections, counts)


@pytest.mark.parametrize(("X", "collections", "counts", "match"), BAD)
@pytest.mark.parametrize("method", ["slaag", "miqp"])
def test_solve_rejects_bad_data(X, collections, counts, match, method):
    with pytest.raises(ValueError, match=match):
        aidopt.solve_aggregate_outputs(X, collections, counts, method=method, norm="l1",
                                       solver="highs", log=False)


def test_collections_of_wrong_length_name_collections():
    """A collections array of the wrong length: the message should name ``collections`` (the
    argument the user passed), not a ``y`` that this API does not have."""
    with pytest.raises(ValueError, match=r"collections") as info:
        as_aggregate_data(X6, C6[:5], [1, 1])
    assert "6" in str(info.value) and "5" in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(method="foo"), r"method must be one of"),
        (dict(C=-1.0), r"C must be a non-negative"),
        (dict(method="miqp", C=-1.0), r"C must be a non-negative"),
        (dict(D=-0.5), r"D must be a non-negative"),
        (dict(method="miqp", D=float("inf")), r"D must be a non-negative"),
        (dict(E=-1.0), r"E must be a non-negative"),
        (dict(norm="l3"), r"norm must be"),
        (dict(big_M=10.0), r"big_M"),
        (dict(method="miqp", big_M=0.5), r"big_M"),
    ],
)
def test_solve_rejects_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        aidopt.solve_aggregate_outputs(X6, C6, [1, 1], log=False, **kwargs)


def test_estimator_fit_rejects_bad_counts():
    with pytest.raises(ValueError, match=r"outside 0\.\.collection size"):
        AggregateOutputClassifier().fit(X6, C6, [4, 1])


# --------------------------------------------------------------------------- estimator
def separable(n=100, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    X[:, 0] += np.where(X[:, 0] >= 0, 0.5, -0.5)  # a margin of 1 around x0 = 0
    truth = (X[:, 0] > 0).astype(int)
    collections = np.arange(n) // 5
    counts = np.bincount(collections, weights=truth).astype(int)
    return X, truth, collections, counts


@pytest.mark.parametrize(
    "params",
    [dict(), dict(norm="l1"), dict(method="miqp", norm="l1", solver="highs", D=10.0)],
    ids=["slaag-l2", "slaag-l1", "miqp-l1-aid"],
)
def test_estimator_fit_predict_score(params):
    X, truth, collections, counts = separable()
    clf = AggregateOutputClassifier(**params)
    assert clf.fit(X, collections, counts) is clf
    pred = clf.predict(X)
    assert pred.shape == (X.shape[0],)
    assert set(np.unique(pred)) <= {0, 1}
    dec = clf.decision_function(X)
    np.testing.assert_allclose(dec, X @ clf.coef_[0] + clf.intercept_[0])
    np.testing.assert_array_equal(pred, (dec >= 0).astype(int))
    sol = clf.result_.solution
    assert clf.coef_.shape == (1, 2) and clf.intercept_.shape == (1,)
    np.testing.assert_allclose(clf.coef_[0], sol["w"])
    assert clf.intercept_[0] == pytest.approx(-float(sol["b"]))
    np.testing.assert_allclose(dec, sol["decision"], atol=1e-9)
    np.testing.assert_array_equal(clf.labels_, np.asarray(sol["labels"]).astype(int))
    assert clf.labels_.shape == (X.shape[0],)
    assert clf.score(X, truth) > 0.9
    # held-out rows of the same distribution
    Xt, yt, _, _ = separable(60, seed=1)
    assert clf.score(Xt, yt) > 0.9


def test_estimator_clone_and_params():
    from sklearn.base import clone

    X, truth, collections, counts = separable(n=30)
    clf = AggregateOutputClassifier(method="miqp", C=2.0, D=5.0, norm="l1", solver="highs", aid=False)
    params = clf.get_params()
    for key, val in dict(method="miqp", C=2.0, D=5.0, norm="l1", solver="highs", aid=False).items():
        assert params[key] == val
    clf.fit(X, collections, counts)
    twin = clone(clf)
    assert twin is not clf
    assert twin.get_params() == clf.get_params()
    assert not hasattr(twin, "coef_")
    twin.fit(X, collections, counts)
    assert twin.result_.termination == "certified_optimal"
    assert twin.result_.objective == pytest.approx(clf.result_.objective, rel=1e-6)
    np.testing.assert_array_equal(twin.predict(X), clf.predict(X))
    assert twin.set_params(C=0.5) is twin and twin.get_params()["C"] == 0.5
