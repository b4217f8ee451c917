"""Which rows a round shrinks: the positives (only on balanced data, whatever k_pos says), the
floors of the rank shrink on balanced data, the side of rule (11), and the refit's size limit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from aidopt.instances.scm import sine_set

import aidopt.api.scm
from aidopt.api.scm import solve_scm

from ._data import wrong_side_negatives


def _summary(res):
    return [(it.n_pos, it.n_neg, it.k_pos, it.k_neg, it.shrink, it.removed) for it in res.history]


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_k_pos_of_every_positive_is_the_default(kernel):
    """On imbalanced data the positives are singletons by default; k_pos = n_pos is the same
    partition, so it must be the same run: k_pos sets k+ only, not the shrink or the stop."""
    X, y = sine_set("D2", n_pos=20, n_neg=400, seed=0)
    default = solve_scm(X, y, kernel=kernel, C=1.0, shrink="auto", log=False)
    given = solve_scm(X, y, kernel=kernel, C=1.0, shrink="auto", k_pos=20, log=False)
    assert default.termination == given.termination == "ratio"
    assert _summary(given) == _summary(default)
    assert np.array_equal(given.kept, default.kept)
    np.testing.assert_allclose(given.decision_function(X), default.decision_function(X),
                               rtol=1e-9, atol=1e-9)
    assert all(it.n_pos == 20 for it in given.history)  # positives never shrunk


def test_clustered_positives_on_imbalanced_data_are_not_shrunk():
    X, y = sine_set("D2", n_pos=20, n_neg=400, seed=0)
    res = solve_scm(X, y, kernel="linear", C=1.0, shrink="rank", k_pos=4, log=False)
    assert res.history[0].k_pos == 4
    assert all(it.n_pos == 20 for it in res.history) and res.kept[y > 0].all()
    assert res.termination == "ratio"


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("shrink", ["rank", "auto"])
def test_balanced_data_keep_the_round_zero_clusters(kernel, shrink):
    """Balanced data (both classes shrunk): no class goes below its round-0 number of clusters,
    and the SVM of the last round still classifies (it used to end on one row per class)."""
    X, y = sine_set("D2", n_pos=300, n_neg=300, seed=0)
    Xt, yt = sine_set("D2", n_pos=300, n_neg=300, seed=10)
    res = solve_scm(X, y, kernel=kernel, C=1.0, shrink=shrink, log=False)
    kp0, kn0 = res.history[0].k_pos, res.history[0].k_neg
    assert (kp0, kn0) == (30, 30)
    assert res.termination == "stalled" and "floor" in res.message
    assert res.kept[y > 0].sum() >= kp0 and res.kept[y < 0].sum() >= kn0
    assert all(it.n_pos >= kp0 and it.n_neg >= kn0 for it in res.history)
    positive = y == res.classes[1]
    assert np.mean((res.decision_function(X) > 0) == positive) > 0.85
    assert np.mean((res.decision_function(Xt) > 0) == (yt == res.classes[1])) > 0.85


def test_rule_11_on_the_margin_side_keeps_misclassified_majority_rows():
    X, y, behind = wrong_side_negatives()
    runs = {side: solve_scm(X, y, kernel="linear", C=1.0, max_iter=1, shrink_side=side, log=False)
            for side in ("both", "margin")}
    f = runs["both"].decision_function(X)  # round 0 is the same for both sides
    np.testing.assert_allclose(runs["margin"].decision_function(X), f, rtol=1e-9, atol=1e-9)
    assert np.all(f[behind] > 1.3)  # misclassified majority rows beyond gamma
    neg = y < 0
    np.testing.assert_array_equal(runs["both"].kept[neg], np.abs(f[neg]) <= 1.3)
    np.testing.assert_array_equal(runs["margin"].kept[neg], -f[neg] <= 1.3)
    assert not runs["both"].kept[behind].any() and runs["margin"].kept[behind].all()
    assert runs["margin"].history[0].removed == runs["both"].history[0].removed - behind.size


def test_shrink_side_is_validated():
    X, y = sine_set("D2", n_pos=10, n_neg=100, seed=0)
    with pytest.raises(ValueError, match="shrink_side"):
        solve_scm(X, y, shrink_side="left", log=False)


def test_refit_on_too_many_rows_is_skipped_with_a_pyomo_solver(monkeypatch):
    X, y = sine_set("D2", n_pos=10, n_neg=100, seed=0)
    last = solve_scm(X, y, kernel="linear", C=1.0, max_iter=1, log=False)
    assert last.kept.sum() > 20
    monkeypatch.setattr(aidopt.api.scm, "REFIT_MAX_ROWS", 20)
    with pytest.warns(UserWarning, match="refit skipped"):
        res = solve_scm(X, y, kernel="linear", C=1.0, max_iter=1, final="refit", log=False)
    assert "refit skipped" in res.message and "REFIT_MAX_ROWS" in res.message
    assert res.svm.objective == pytest.approx(last.svm.objective)  # the last round's SVM
    pytest.importorskip("sklearn")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lib = solve_scm(X, y, kernel="linear", C=1.0, max_iter=1, final="refit", solver="libsvm",
                        log=False)
    assert "refit on the" in lib.message
    assert lib.svm.y.size == lib.kept.sum()  # every row left its own cluster
