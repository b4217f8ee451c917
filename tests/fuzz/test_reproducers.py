"""Reproducers of what the fuzz campaign (``tests/fuzz/campaign.py``) found, each the smallest
instance found, marked ``xfail(strict=True)``: a fix turns it into a pass (and strict makes the
suite say so, so the mark is removed with the fix).

Two of them need 15-50 s by their nature (a run that returns more than 10 s after its limit
takes more than 10 s); they run only with ``AIDOPT_FUZZ_REPRO=1``, to keep the default suite fast.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

import aidopt

SLOW = pytest.mark.skipif(not os.environ.get("AIDOPT_FUZZ_REPRO"),
                          reason="a run past its limit + 10 s takes that long: set AIDOPT_FUZZ_REPRO=1")


def _scm_data(n, seed=0):
    g = np.random.default_rng(seed)
    y = np.where(g.random(n) < 0.05, 1, -1)
    X = g.normal(size=(n, 5)) + 0.8 * (y[:, None] > 0)
    return X, y


# --------------------------------------------------------------------------- SCM and its limit
@SLOW
def test_scm_returns_within_its_time_limit():
    """Was 30-49 s (20,000 rows with 1 s: 191 s): round 0's Gram matrix, kernel k-means and
    representative kernel did not check the clock."""
    X, y = _scm_data(10_000)
    t = time.perf_counter()
    try:
        aidopt.solve_scm(X, y, time_limit=0.5, log=False, raise_on_failure=False)
    except Exception:  # noqa: S110 - the other reproducer's defect; this one is about the clock
        pass
    assert time.perf_counter() - t <= 0.5 + 10


def test_scm_time_limit_in_round_0_is_a_result_not_an_exception():
    """Raised TimeLimitReached (raise_on_failure=False) when the limit passed before round 0's
    weighted SVM was solved, where every other run returns a result."""
    X, y = _scm_data(300)
    res = aidopt.solve_scm(X, y, time_limit=0.01, log=False, raise_on_failure=False)
    assert res.termination == "time_limit"
    assert res.svm is None and not res.certified and res.certificate is None
    assert "no decision function" in res.message
    with pytest.raises(RuntimeError, match="no decision function"):
        res.decision_function(X[:3])
    assert "no decision function" in res.summary() and res.to_dict()["svm"] is None


# --------------------------------------------------------------------------- LPC
# 10 rows of campaign run lpc seed 3 (boxed LP, c x 1e-6, 2 blocks): the chunk LPs alternated
# between two row sets forever (the full-data check failed on row 1, then on row 9, ...)
LPC_H = np.array([
    [0.27307033602133185, 1.90702041700374], [1.1179598548135432, -0.6316031355728261],
    [-0.8877632966035398, -0.09481167318550389], [-0.3193038427288454, 1.6046599364234222],
    [-1.2218901385415535, 1.4679630503464185], [0.4467740737300403, -1.673279736873468],
    [-0.41597823551088503, -0.9377593538981369], [1.4181797471574957, 0.048056498293440095],
    [0.07634633953017227, 0.10658003351900727], [-0.3610363941719428, 0.22897342947749796]])
LPC_B = np.array([-0.1059554421905043, 0.14463005567442147, -0.44640982157729986, -0.8437721564703308,
                  -0.4566443106205433, 0.007105070187752277, -0.09495730043031332, 0.012298949220724942,
                  0.0038107990854325553, -0.07177700795066927])
LPC_C = np.array([0.11438087526287692, 0.17773544234420594])
LPC_BOUNDS = [(-2.3332470739271876, 1.0107142814543362), (-2.51672916069728, 1.4386764485820784)]


def test_lpc_reproducer_is_certified_unscaled():
    """The same LP with c unscaled is certified: the reproducer below is about c's scale alone."""
    res = aidopt.solve_lp_chunked(LPC_C, LPC_H, LPC_B, bounds=LPC_BOUNDS, chunks=2, log=False, time_limit=20)
    assert res.certified


def test_lpc_does_not_cycle_when_c_is_small():
    """Cycled until the time limit: HiGHS's absolute dual tolerance (1e-7) took any vertex for
    optimal with ||c|| near 1e-7; the chunk LPs now minimize (c / sigma)'x, sigma ~ ||c||_inf."""
    res = aidopt.solve_lp_chunked(LPC_C * 1e-6, LPC_H, LPC_B, bounds=LPC_BOUNDS, chunks=2, log=False,
                                  time_limit=3)
    assert res.termination != "time_limit", res.termination
    assert res.certified, res.message


@SLOW
def test_lpc_returns_within_its_time_limit():
    """Returned after 23-39 s: LPC did not check time_limit while it built and loaded a block's
    rows (fast version: tests/lpc/test_time_limit.py)."""
    g = np.random.default_rng(0)
    H = g.normal(size=(300_000, 30))
    b = H @ np.ones(30) - np.random.default_rng(1).random(300_000)
    t = time.perf_counter()
    aidopt.solve_lp_chunked(H[:50].sum(axis=0), H, b, chunks=1, time_limit=0.5, log=False)
    assert time.perf_counter() - t <= 0.5 + 10


# --------------------------------------------------------------------------- kernel SVM's gamma
def test_kernel_svm_gamma_scale_ignores_weights():
    """gamma='scale' is 1 / (m Var(X)) over every row, as documented (and as scikit-learn's SVC),
    also when rows of zero sample weight are left out of the model (was resolved on the others:
    12.7x here)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    X[:5] *= 10
    y = np.where(X[:, 0] > 0, 1, -1)
    s = np.ones(40)
    s[:5] = 0.0
    res = aidopt.solve_svm(X, y, kernel="rbf", sample_weight=s, log=False)
    assert res.solution["gamma"] == pytest.approx(1.0 / (3 * X.var()), rel=1e-12)


# --------------------------------------------------------------------------- GSVM and FSV limits
@SLOW
def test_gsvm_returns_within_its_time_limit():
    """Was 37 s (1,500 points: 10-49 s by the machine's load): K, its factorisation and the
    build of (1.12) on it did not check time_limit (fast checks: tests/gsvm/test_time_limits.py)."""
    from aidopt.instances import svm_instance

    X, y = svm_instance(n=2500, m=5, seed=474963)
    t = time.perf_counter()
    aidopt.solve_gsvm(X, y, kernel="rbf", formulation="lp_Ku", nu=10.0, time_limit=0.5, log=False,
                      raise_on_failure=False)
    assert time.perf_counter() - t <= 0.5 + 10


@SLOW
def test_fsv_direct_returns_within_its_time_limit():
    """Returned after 13-18 s: solve_fsv (aid=False) did not check time_limit while it built
    its persistent LP (fast version: tests/fsv/test_time_limit.py)."""
    from aidopt.instances import svm_instance

    X, y = svm_instance(n=120_000, m=40, seed=4630)
    t = time.perf_counter()
    aidopt.solve_fsv(X, y, nu=0.1, aid=False, time_limit=2.0, log=False, raise_on_failure=False)
    assert time.perf_counter() - t <= 2.0 + 10


# --------------------------------------------------------------------------- SVM runs past limit
# Two campaign runs (tests/fuzz/campaign.py, family time_limit) returned past their limit + 10 s:
# seed 82 (svm_l1: 100,000 x 30, time_limit=1) after 12.4 s and seed 121 (sor_aid: 300,000 x
# 30, C=100, bias="regularized", clarabel, time_limit=2) after 50.2 s. Alone, on the code of
# this file's commit, they return 0.0-0.4 s past their limits (limits 0.2-6 s scanned), so the
# campaign's overruns were not reproduced; these run the same instances as regression guards.
@SLOW
def test_svm_l1_campaign_seed_82_returns_within_its_time_limit():
    from aidopt.instances import svm_instance

    X, y = svm_instance(n=100_000, m=30, seed=456726)
    t = time.perf_counter()
    aidopt.solve_svm(X, y, C=1.0, norm="l1", time_limit=1.0, log=False, raise_on_failure=False)
    assert time.perf_counter() - t <= 1.0 + 10


@SLOW
def test_sor_aid_campaign_seed_121_returns_within_its_time_limit():
    from aidopt.instances import svm_instance

    X, y = svm_instance(n=300_000, m=30, seed=671583)
    t = time.perf_counter()
    aidopt.solve_svm(X, y, C=100.0, bias="regularized", solver="clarabel", time_limit=2.0,
                     log=False, raise_on_failure=False)
    assert time.perf_counter() - t <= 2.0 + 10
