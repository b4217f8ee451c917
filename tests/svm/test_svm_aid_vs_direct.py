"""AID equals the direct solve of the same SVM, for every norm, on the issue's hard cases."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import aidopt
from aidopt import Termination
from tests.svm._helpers import close, instance, svm_objective

NORMS = ["l2", "l1", "linf", "none"]
KINDS = [  # (kind, n, m, seed, C)
    ("separable", 2000, 5, 1, 1.0),
    ("overlapping", 3000, 5, 2, 0.1),
    ("imbalanced", 3000, 6, 3, 1.0),
    ("duplicated", 2400, 4, 4, 0.5),
]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize(("kind", "n", "m", "seed", "C"), KINDS, ids=[k[0] for k in KINDS])
def test_aid_objective_equals_direct(kind, n, m, seed, C, norm):
    X, y = instance(kind, n, m, seed)
    aid = aidopt.solve_svm(X, y, C=C, norm=norm, seed=seed, log=False)
    direct = aidopt.solve_svm(X, y, C=C, norm=norm, aid=False, log=False)

    assert direct.termination is Termination.CERTIFIED_OPTIMAL, direct.summary()
    assert aid.termination is Termination.CERTIFIED_OPTIMAL, aid.summary()
    assert aid.certified and direct.certified
    assert aid.aid and not direct.aid
    # both certified within tol=1e-6, so both are within 1e-6 (relative) of the optimum
    assert close(aid.objective, direct.objective, 1e-6), (aid.objective, direct.objective)

    for res in (aid, direct):
        sol = res.solution
        assert sol["w"].shape == (m,) and np.isfinite(sol["w"]).all()
        assert np.isfinite(sol["b"])
        assert sol["alpha"].shape == (len(y),)
        assert sol["classes"] == [-1.0, 1.0]
        # the returned (w, b) really has the reported objective on the original data
        E = svm_objective(X, y, sol["w"], sol["b"], C, norm)
        assert close(E, res.objective, 1e-9)
        assert close(res.certificate.primal_objective, res.objective, 1e-9)
        # the reported lower bound never passes the objective (it is capped there)
        assert res.lower_bound <= res.objective
        # the certificate accepts |sum alpha y| up to feasibility_tol, so D may pass E by ~that
        assert res.certificate.dual_objective <= res.objective + 1e-8 * max(1.0, abs(res.objective))
        assert res.gap <= 1e-6

    # every iteration: the aggregated optimum F_t never exceeds the full objective E_t of its
    # lifted solution (F_t need not be monotone for SVM, so that is not checked)
    assert aid.history, "AID recorded no iteration"
    for rec in aid.history:
        assert rec.F_t <= rec.E_t + 1e-7 * max(1.0, abs(rec.E_t)), rec
        assert rec.E_best <= rec.E_t + 1e-12 * max(1.0, abs(rec.E_t))
        # the bound is F_t for a solver that reports its optimum as the bound; the interior
        # point "fm" reports its dual value, within its own gap (<= 1e-9) below F_t
        assert rec.lower_bound >= rec.F_t - 1e-8 * max(1.0, abs(rec.F_t))
    assert [rec.t for rec in aid.history] == list(range(1, len(aid.history) + 1))
    assert aid.history[-1].E_best == pytest.approx(aid.objective, rel=1e-12, abs=1e-15)
    assert aid.history[0].n_clusters < n  # AID really aggregated
    assert len(direct.history) == 1 and direct.history[0].n_clusters == n


@pytest.mark.parametrize("norm", NORMS)
def test_integer_sample_weights_equal_duplicated_rows(norm):
    """s_i = 3 is the same objective as the row written three times (AID and direct)."""
    X, y = instance("overlapping", 900, 4, 21)
    s = np.ones(len(y))
    s[:150] = 3.0
    X3 = np.vstack([X, X[:150], X[:150]])
    y3 = np.concatenate([y, y[:150], y[:150]])
    ref = aidopt.solve_svm(X3, y3, C=0.3, norm=norm, aid=False, log=False)
    for aid in (True, False):
        res = aidopt.solve_svm(X, y, C=0.3, norm=norm, sample_weight=s, aid=aid, log=False)
        assert res.certified, res.summary()
        assert close(res.objective, ref.objective, 1e-6)
        assert close(svm_objective(X, y, res.solution["w"], res.solution["b"], 0.3, norm, s),
                     res.objective, 1e-9)


@pytest.mark.parametrize("aid", [False, True], ids=["direct", "aid"])
@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_zero_sample_weight_rows_are_ignored(norm, aid):
    X, y = instance("overlapping", 1000, 4, 7)
    s = np.where(np.random.default_rng(0).random(len(y)) < 0.3, 0.0, 1.0)
    keep = s > 0
    ref = aidopt.solve_svm(X[keep], y[keep], C=0.2, norm=norm, aid=False, log=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = aidopt.solve_svm(X, y, C=0.2, norm=norm, sample_weight=s, aid=aid, log=False)
    assert res.certified, res.summary()
    assert close(res.objective, ref.objective, 1e-6)


def test_certified_optimal_termination_always_has_a_passed_certificate():
    X, y = instance("overlapping", 200, 3, 7)
    s = np.ones(len(y))
    s[3] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = aidopt.solve_svm(X, y, C=0.5, kernel="rbf", gamma=0.5, sample_weight=s,
                               aid=False, log=False, raise_on_failure=False)
    if res.termination is Termination.CERTIFIED_OPTIMAL:
        assert res.certified and np.isfinite(res.objective) and "alpha" in res.solution


def test_lower_bound_never_exceeds_objective_l2_direct():
    X, y = instance("imbalanced", 3000, 6, 3)
    res = aidopt.solve_svm(X, y, C=1.0, norm="l2", aid=False, log=False)
    assert res.certified
    assert res.lower_bound <= res.objective * (1 + 1e-9)
