"""Algorithm 1's stop rules terminate; the stall of rule (11) under an RBF kernel is detected and
the rank shrink proceeds past it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from aidopt.instances.scm import sine_set

import aidopt
from aidopt.api.scm import STOPS, solve_scm

from ._data import far_negatives


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_ratio_stop(kernel):
    X, y = sine_set("D2", n_pos=20, n_neg=400, seed=0)
    res = solve_scm(X, y, kernel=kernel, C=1.0, shrink="auto", log=False)
    assert res.termination == "ratio"
    assert (res.kept & (y < 0)).sum() <= 5 * (y > 0).sum()
    sizes = [it.n_neg for it in res.history]
    assert sizes[0] == 400 and all(a > b for a, b in zip(sizes, sizes[1:], strict=False))
    assert all(it.k_neg == math.ceil(0.1 * it.n_neg) for it in res.history)  # k- = |D-| / 10
    assert all(it.k_pos == 20 for it in res.history)  # positives as singletons


def test_stall_is_detected_and_rank_shrink_proceeds():
    X, y = far_negatives()
    stalled = solve_scm(X, y, kernel="rbf", gamma=0.5, C=0.1, log=False)
    assert stalled.termination == "stalled"
    first = stalled.history[0]
    assert first.stalled and first.removed < 0.05 * 900
    assert first.vanished >= 590  # the far negatives: f = b there
    assert abs(stalled.intercept) <= 1.3  # |b| <= gamma: rule (11) cannot remove them
    assert "f = b" in stalled.message and "shrink='rank'" in stalled.message
    for shrink in ("rank", "auto"):
        res = solve_scm(X, y, kernel="rbf", gamma=0.5, C=0.1, shrink=shrink, log=False)
        assert res.termination == "ratio", res.message
        assert res.history[0].shrink == "rank" and res.history[0].removed == 450
        assert (res.kept & (y < 0)).sum() <= 5 * 30
        assert len(res.history) <= 4


def test_miss_rate_rule_returns_the_last_round_within_it():
    X, y = far_negatives()
    base = solve_scm(X, y, kernel="rbf", gamma=1.0, C=3.0, shrink="rank", log=False)
    misses = [it.miss_rate for it in base.history]
    assert max(misses[1:]) > misses[0]  # the rank shrink raises the positive miss rate here
    limit = 0.5 * (misses[0] + max(misses[1:]))
    res = solve_scm(X, y, kernel="rbf", gamma=1.0, C=3.0, shrink="rank", max_miss_rate=limit,
                    log=False)
    assert res.termination == "miss_rate"
    over = next(t for t, m in enumerate(misses) if m > limit)
    assert over >= 1 and len(res.history) == over + 1
    assert res.svm.objective == pytest.approx(res.history[over - 1].svm_objective)
    at_once = solve_scm(X, y, kernel="rbf", gamma=0.5, C=0.1, max_miss_rate=0.0, log=False)
    assert at_once.termination == "miss_rate" and len(at_once.history) == 1


def test_iteration_limit_and_direct():
    X, y = far_negatives()
    res = solve_scm(X, y, kernel="rbf", gamma=0.5, C=0.1, shrink="rank", max_iter=1, log=False)
    assert res.termination == "iteration_limit" and len(res.history) == 1
    X, y = sine_set("D2", n_pos=10, n_neg=100, seed=2)
    direct = solve_scm(X, y, kernel="rbf", gamma=0.5, C=1.0, aid=False, log=False)
    assert direct.termination == "direct" and direct.history[0].k_neg == 100
    svm = aidopt.solve_svm(X, y, C=1.0, kernel="rbf", gamma=0.5, aid=False, log=False)
    assert direct.svm.objective == pytest.approx(svm.objective, rel=1e-6)
    # the SVM on all rows is its own full-data certificate
    assert direct.full_certificate.certified


@pytest.mark.parametrize("seed", range(3))
def test_every_run_terminates_with_a_known_reason(seed):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(300) < 0.1, 1.0, -1.0)
    X = rng.normal(size=(300, 3)) + 0.7 * y[:, None]
    for shrink in ("eq11", "rank", "auto"):
        res = solve_scm(X, y, kernel="rbf", C=1.0, shrink=shrink, seed=seed, log=False)
        assert res.termination == "ratio", (shrink, res.message)  # imbalanced: about 1 to 9
        assert len(res.history) <= 10
        if shrink == "rank":  # half of the negatives go at once: 269 -> 135 <= 5 x 31
            assert len(res.history) == 1
    balanced = solve_scm(X[:60], np.r_[np.ones(30), -np.ones(30)], kernel="rbf", log=False)
    assert balanced.history[0].k_pos == 3  # both clustered
    assert balanced.termination == "stalled"  # no ratio stop on balanced data
    assert balanced.termination in STOPS


@pytest.mark.parametrize("raise_on_failure", [True, False])
def test_time_limit_before_the_first_solve_is_a_result(raise_on_failure):
    """A time limit is a result, not a solver failure (Run.error), whatever raise_on_failure
    says: no decision function when round 0's weighted SVM was not solved (this raised
    TimeLimitReached before)."""
    X, y = sine_set("D2", n_pos=10, n_neg=100, seed=0)
    res = solve_scm(X, y, time_limit=1e-9, log=False, raise_on_failure=raise_on_failure)
    assert res.termination == "time_limit" and "time_limit" in res.message
    assert res.svm is None and not res.certified and res.history == []
    assert res.kept.all() and res.support_vectors.shape == (0, X.shape[1])
    with pytest.raises(RuntimeError, match="no decision function"):
        res.decision_function(X[:2])
    from aidopt import SCMClassifier

    with pytest.raises(RuntimeError, match="no solution"):
        SCMClassifier(time_limit=1e-9).fit(X, y)


def _slow_from_round_one(monkeypatch, action):
    """Wrap SCM's kernel k-means: calls 1-2 (round 0) run as they are; the first call of
    round 1 runs ``action`` first (a sleep, a Ctrl-C)."""
    import aidopt.api.scm as module

    real, calls = module.kernel_kmeans, []

    def wrapped(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            action()
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "kernel_kmeans", wrapped)


def test_time_limit_holds_through_the_run_framework(monkeypatch):
    """A round that starts before the limit and would solve after it: the run's clock stops it
    and the last finished round is returned (termination time_limit), within the limit + 10 s."""
    import time

    X, y = sine_set("D2", n_pos=30, n_neg=900, seed=0)
    _slow_from_round_one(monkeypatch, lambda: time.sleep(2.5))
    t0 = time.perf_counter()
    res = solve_scm(X, y, kernel="rbf", shrink="rank", rank_keep=0.9, time_limit=2.0, log=False)
    assert time.perf_counter() - t0 < 2.0 + 10.0
    assert res.termination == "time_limit" and len(res.history) == 1
    assert res.certified  # round 0's weighted SVM, certified
    assert np.isfinite(res.decision_function(X[:5])).all()


def test_ctrl_c_returns_the_last_finished_round(monkeypatch):
    X, y = sine_set("D2", n_pos=30, n_neg=900, seed=0)

    def interrupt():
        raise KeyboardInterrupt

    _slow_from_round_one(monkeypatch, interrupt)
    res = solve_scm(X, y, kernel="rbf", shrink="rank", rank_keep=0.9, log=False)
    assert res.termination == "interrupted" and len(res.history) == 1
    assert "interrupted" in res.summary() and res.termination in STOPS


def test_ctrl_c_before_any_round_raises(monkeypatch):
    import aidopt.api.scm as module

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(module, "kernel_kmeans", interrupt)
    X, y = sine_set("D2", n_pos=10, n_neg=100, seed=0)
    with pytest.raises(KeyboardInterrupt):
        solve_scm(X, y, log=False)
