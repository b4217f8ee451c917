"""A failed aggregated solve is retried (other QP form / other of HiGHS and Clarabel)."""

from __future__ import annotations

import numpy as np
import pytest

import aidopt
from aidopt import Termination, solvers
from tests.svm._helpers import close, instance

C = 0.2


@pytest.fixture(scope="module")
def xy():
    return instance("overlapping", 2000, 4, 7)


def _fail_call(monkeypatch, index):
    """Make the ``index``-th call of ``aidopt.solvers.solve_model`` (0-based) return an error
    outcome (after really solving, so the model is in the state a failed solve leaves it in)."""
    real = solvers.solve_model
    calls = []

    def fake(model, solver="highs", **kwargs):
        calls.append((solver, model.name))
        outcome = real(model, solver, **kwargs)
        if len(calls) - 1 == index:
            return solvers.SolveOutcome("error", None, None, False, solver, "", 0.0, "forced failure")
        return outcome

    monkeypatch.setattr(solvers, "solve_model", fake)
    return calls


CASES = [  # (norm, solver, retried solver, retried model)
    ("l2", "clarabel", "clarabel", "svm_l2_primal"),
    ("l2", "highs", "highs", "svm_l2_primal"),
    ("l1", "highs", "highs", "svm_l1_lp"),  # the LPs solve their dual form; retry: the primal
    ("none", "highs", "highs", "svm_none_lp"),
    ("linf", "clarabel", "clarabel", "svm_linf_lp"),
]


@pytest.mark.parametrize(("norm", "solver", "retry_solver", "retry_model"), CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_failed_aggregated_solve_is_retried_aid(monkeypatch, xy, norm, solver, retry_solver,
                                                retry_model):
    X, y = xy
    ref = aidopt.solve_svm(X, y, C=C, norm=norm, aid=False, log=False)
    # call 0 is the initial sample SVM; call 1 is the first aggregated solve
    calls = _fail_call(monkeypatch, 1)
    res = aidopt.solve_svm(X, y, C=C, norm=norm, solver=solver, log=False)
    assert calls[1][0] == solver
    assert calls[2] == (retry_solver, retry_model)
    assert res.termination is Termination.CERTIFIED_OPTIMAL, res.summary()
    assert "retried" in res.message and "forced failure" in res.message
    assert f"retried with {retry_solver}" in res.message
    assert close(res.objective, ref.objective, 1e-6)


@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_failed_direct_solve_is_retried(monkeypatch, xy, norm):
    X, y = xy
    ref = aidopt.solve_svm(X, y, C=C, norm=norm, aid=False, log=False)
    calls = _fail_call(monkeypatch, 0)
    # the Pyomo path (the default 2-norm solver "fm" builds no model: tests/decomposition/test_fm.py)
    solver = "clarabel" if norm == "l2" else "highs"
    res = aidopt.solve_svm(X, y, C=C, norm=norm, aid=False, solver=solver, log=False)
    assert len(calls) == 2
    assert res.termination is Termination.CERTIFIED_OPTIMAL, res.summary()
    assert "retried" in res.message
    assert close(res.objective, ref.objective, 1e-6)


def test_no_fallback_raises(monkeypatch, xy):
    X, y = xy
    _fail_call(monkeypatch, 1)
    with pytest.raises(aidopt.SolverError, match="forced failure"):
        aidopt.solve_svm(X, y, C=C, fallback=False, solver="clarabel", log=False)


def test_no_fallback_without_raise_reports_solver_failure(monkeypatch, xy):
    X, y = xy
    calls = _fail_call(monkeypatch, 1)
    res = aidopt.solve_svm(X, y, C=C, fallback=False, raise_on_failure=False, solver="clarabel",
                           log=False)
    assert len(calls) == 2  # no retry
    assert res.termination is Termination.SOLVER_FAILURE
    assert not res.certified
    assert "forced failure" in res.message and "retried" not in res.message


def test_every_retry_failing_reports_solver_failure(monkeypatch, xy):
    X, y = xy
    real = solvers.solve_model
    seen = []

    def fake(model, solver="highs", **kwargs):
        seen.append(solver)
        if len(seen) == 1:  # the initial sample SVM
            return real(model, solver, **kwargs)
        return solvers.SolveOutcome("error", None, None, False, solver, "", 0.0, "always fails")

    monkeypatch.setattr(solvers, "solve_model", fake)
    res = aidopt.solve_svm(X, y, C=C, raise_on_failure=False, solver="clarabel", log=False)
    assert res.termination is Termination.SOLVER_FAILURE
    assert not res.certified
    # clarabel dual failed -> clarabel primal -> highs dual -> highs primal, each recorded
    assert seen[1:] == ["clarabel", "clarabel", "highs", "highs"]
    assert res.message.count("retried") == 3


def test_highs_l2_direct_fallback_is_certified(monkeypatch, xy):
    X, y = xy
    ref = aidopt.solve_svm(X, y, C=C, aid=False, log=False)
    _fail_call(monkeypatch, 0)
    res = aidopt.solve_svm(X, y, C=C, solver="highs", aid=False, log=False)
    assert "retried with highs (primal form)" in res.message
    assert close(res.objective, ref.objective, 1e-6)
    assert res.termination is Termination.CERTIFIED_OPTIMAL, res.summary()


def test_a_weighted_svm_whose_dual_a_solver_calls_unbounded_still_certifies():
    """Weights in [0.001, 100] with 10 % zeros and C = 4888 (a badly scaled dual QP): fm stops
    short, Clarabel calls the dual "unbounded" (an SVM never is), and the run used to end
    solver_failure; the primal form, now in the fallbacks, certifies the same optimum."""
    import aidopt

    rng = np.random.default_rng(0)
    n, m = 3005, 6
    y = np.where(rng.random(n) < 0.5, 1, -1)
    X = rng.normal(size=(n, m)) + 0.3 * y[:, None]
    w = rng.uniform(0.001, 100, n)
    w[rng.random(n) < 0.1] = 0
    res = aidopt.solve_svm(X, y, C=4888.0, sample_weight=w, log=False)
    ref = aidopt.solve_svm(X, y, C=4888.0, sample_weight=w, solver="clarabel", form="primal",
                           aid=False, log=False)
    assert res.certified and ref.certified
    assert res.objective == pytest.approx(ref.objective, rel=1e-6)
