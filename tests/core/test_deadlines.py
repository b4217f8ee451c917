"""Every phase of a run counts against its ``time_limit``: building the model (a build that
overruns stops at the limit and is never solved), the fallbacks after a failed solve (none is
built once the time is up), and writing models. Each test failed before its fix."""

from __future__ import annotations

import time

import numpy as np
import pytest
from aidopt.decomposition import run as run_module
from aidopt.decomposition.plugins.svm import SVMProblem
from aidopt.models import lad, lp_svm, svm
from aidopt.models._data import build_deadline, past_deadline

import aidopt
from aidopt import solvers
from aidopt.results import Termination


def wide(n=400, m=60, seed=0):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    return rng.normal(size=(n, m)) + 0.3 * y[:, None], y


BUILDS = {
    "svm l2 primal": (lambda X, y: svm.create_instance(X, y, form="primal"), "margin"),
    "svm l2 dual": (lambda X, y: svm.create_instance(X, y, form="dual"), "weights"),
    "svm l1 primal": (lambda X, y: lp_svm.create_instance(X, y, regularizer="l1"), "margin"),
    "svm l1 dual": (lambda X, y: lp_svm.create_instance(X, y, regularizer="l1", form="dual"),
                    "norm"),
    "svm rlp dual": (lambda X, y: lp_svm.create_instance(X, y, regularizer="none", form="dual"),
                     "vdef"),
    "lad primal": (lambda X, y: lad.create_instance(X, y, form="primal"), "fit"),
    "lad dual": (lambda X, y: lad.create_instance(X, y, form="dual"), "balance"),
}


@pytest.mark.parametrize("name", list(BUILDS))
def test_a_passed_deadline_skips_the_data_rows(name):
    """Past the deadline the row rules build nothing; without one, or before it, every row."""
    make, rows = BUILDS[name]
    X, y = wide()
    full = getattr(make(X, y), rows)
    assert len(full) > 0
    with build_deadline(time.perf_counter() + 3600):
        assert len(getattr(make(X, y), rows)) == len(full)
    with build_deadline(time.perf_counter() - 1.0):
        assert past_deadline()
        assert len(getattr(make(X, y), rows)) == 0
    assert not past_deadline()


def test_nested_deadlines_keep_the_earlier_one():
    now = time.perf_counter()
    with build_deadline(now - 1.0):
        with build_deadline(now + 3600):
            assert past_deadline()
        with build_deadline(None):
            assert past_deadline()
    with build_deadline(now + 3600), build_deadline(now - 1.0):
        assert past_deadline()


def _run(time_limit, solver="highs", **config):
    problem = SVMProblem(C=1.0, norm="l1")
    cfg = run_module.RunConfig(solver=solver, time_limit=time_limit, log=False, **config)
    run = run_module.Run("svm_l1", solvers.ProblemClass.LP, cfg, fallbacks=problem.fallbacks)
    problem.configure(run.spec)
    return run, problem


def test_a_build_past_the_time_limit_stops_there_and_is_not_solved(monkeypatch):
    """The run's deadline passes in the middle of a build: the rows left are skipped, the
    incomplete model is released and the run raises TimeLimitReached; no solver is called."""
    from aidopt.decomposition.plugins.svm import AggregatedSVM

    X, y = wide(n=3000, m=400)  # the dual's 400 rows of 3000 nonzeros: > 0.1 s to build
    run, problem = _run(time_limit=3600)
    agg = AggregatedSVM(X, y, np.ones(len(y)))
    built, rows = [], []

    def build(form):
        built.append(problem.build(agg, form=form))
        rows.append(len(built[-1].norm))
        return built[-1]

    monkeypatch.setattr(solvers, "solve_model", lambda *a, **k: pytest.fail("solved"))
    run.deadline = time.perf_counter() + 0.02  # the limit ends 20 ms into the build
    with pytest.raises(solvers.TimeLimitReached, match="while building the model"):
        run.solve_with_fallbacks(build, need_duals=True)
    assert len(built) == 1 and rows[0] < 400
    assert not list(built[0].component_objects())  # released


def test_no_fallback_is_built_once_the_time_is_up(monkeypatch):
    """The first solve fails after the time limit has passed: the run stops at the time limit
    and builds none of the three fallback models (each of which is a full build)."""
    X, y = wide()
    builds = []
    real_build = SVMProblem.build

    def build(self, aggregated, form=None):
        builds.append(form)
        return real_build(self, aggregated, form=form)

    def failing(model, solver, **kwargs):
        time.sleep(max(0.0, kwargs["time_limit"]) + 0.05)  # past the limit, then fail
        return solvers.SolveOutcome(solvers.SolveStatus.ERROR, None, None, False, solver, "",
                                    0.0, "forced failure")

    monkeypatch.setattr(SVMProblem, "build", build)
    monkeypatch.setattr(solvers, "solve_model", failing)
    res = aidopt.solve_svm(X, y, norm="l1", solver="highs", aid=False, time_limit=1.0, log=False)
    assert builds == [None]
    assert res.termination is Termination.TIME_LIMIT and not res.certified
    assert "no time left to retry" in res.message and "forced failure" in res.message


def test_a_fallback_stopped_by_the_time_limit_ends_the_retries(monkeypatch):
    """A retry that stops at the time limit is the answer: no further fallback is built."""
    X, y = wide()
    builds = []
    real_build = SVMProblem.build

    def build(self, aggregated, form=None):
        builds.append(form)
        return real_build(self, aggregated, form=form)

    def outcome(model, solver, **kwargs):
        status = solvers.SolveStatus.ERROR if not builds[1:] else solvers.SolveStatus.TIME_LIMIT
        return solvers.SolveOutcome(status, None, None, False, solver, "", 0.0, "forced")

    monkeypatch.setattr(SVMProblem, "build", build)
    monkeypatch.setattr(solvers, "solve_model", outcome)
    res = aidopt.solve_svm(X, y, norm="l1", solver="highs", aid=False, time_limit=600, log=False)
    assert builds == [None, "primal"]
    assert res.termination is Termination.TIME_LIMIT


def test_solve_or_retry_stops_at_a_time_limited_retry(monkeypatch):
    """A plug-in's own solve: after a failure, a fallback stopped by the time limit is returned
    (the run stops at its limit) instead of the first failure's error."""
    X, y = wide()
    run, problem = _run(time_limit=600, solver="clarabel")
    calls = []

    def outcome(model, solver, **kwargs):
        calls.append(solver)
        if solver == "clarabel":
            raise solvers.SolverError("forced crash")
        return solvers.SolveOutcome(solvers.SolveStatus.TIME_LIMIT, None, None, False, solver,
                                    "", 0.0, "forced")

    monkeypatch.setattr(solvers, "solve_model", outcome)
    got = run.solve_or_retry(lp_svm.create_instance(X, y), need_duals=True)
    assert got.status == "time_limit" and calls == ["clarabel", "highs"]


def test_no_model_is_written_after_the_time_limit(tmp_path):
    X, y = wide(n=50, m=3)
    run, _ = _run(time_limit=600, write_models=str(tmp_path))
    model = lp_svm.create_instance(X, y)
    run.write(model)
    assert len(list(tmp_path.iterdir())) == 2  # .lp and .mps
    run.deadline = time.perf_counter() - 1.0
    run.write(model)
    assert len(list(tmp_path.iterdir())) == 2


@pytest.mark.parametrize("family", ["lad", "svm", "sor"])
def test_checking_the_input_counts_against_the_time_limit(monkeypatch, family):
    """Validation that takes longer than the limit (seconds on a 10^6 x 100 X, 9 s for a
    Fortran-ordered one here): the run starts with no time left and stops at once, its clock
    counting from the call (before, it got the whole limit after the checks and certified)."""
    import aidopt.api.lad
    import aidopt.api.svm
    import aidopt.data.validate

    module, name = {"lad": (aidopt.api.lad, "as_regression_data"),
                    "svm": (aidopt.api.svm, "as_classification_data"),
                    "sor": (aidopt.data.validate, "as_classification_data")}[family]
    real = getattr(module, name)

    def slow(*args, **kwargs):
        time.sleep(0.6)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, slow)
    X, y = wide(n=300, m=3)
    given = []
    if family == "sor":
        real_sor = aidopt.api.svm.sor_linear

        def sor(*args, time_limit=None, **kwargs):
            given.append(time_limit)
            return real_sor(*args, time_limit=time_limit, **kwargs)

        monkeypatch.setattr(aidopt.api.svm, "sor_linear", sor)

        def solve(X, y, **options):
            return aidopt.solve_svm(X, y, method="sor", **options)
    else:
        solver = aidopt.solve_lad if family == "lad" else aidopt.solve_svm

        def solve(X, y, **options):
            return solver(X, y, solver="highs", **options)
    res = solve(X, y, time_limit=0.5, log=False)
    assert res.termination is Termination.TIME_LIMIT and not res.certified
    assert res.seconds >= 0.6  # the run's clock started at the call
    if family == "sor":  # SOR's sweeps got what was left, nothing (they got 0.5 s again)
        assert given[0] < 1e-6
    res = solve(X, y, time_limit=60, log=False)  # the clock of one call only
    assert res.certified


def test_checking_finite_values_makes_no_copy_of_x():
    """The finite / magnitude check of X reads it twice (min and max) instead of building
    ``abs(X)`` and masks: 6.7 s against 0.2 s on a 10^6 x 100 X, now part of the time limit.
    Bad values are still found and reported as before."""
    import tracemalloc

    from aidopt.data.validate import HUGE, _check_finite

    X = np.random.default_rng(0).normal(size=(2000, 500))
    tracemalloc.start()
    try:
        _check_finite(X, "X")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < X.nbytes / 20, peak
    for value, words in ((np.nan, "NaN or infinite"), (-np.inf, "NaN or infinite"),
                         (-HUGE, "magnitude")):
        bad = X.copy()
        bad[7, 3] = value
        with pytest.raises(ValueError, match=rf"{words}.*\(7, 3\)"):
            _check_finite(bad, "X")


def test_a_run_inside_another_ends_no_later_than_it():
    """A run started within another's build deadline (a plug-in that runs AID itself) never
    counts past that deadline: a model the outer deadline cut short meets no time left."""
    now = time.perf_counter()
    with build_deadline(now - 1.0):
        run, _ = _run(time_limit=600)
        assert run.remaining() < 0 and run.past_deadline()
        free, _ = _run(time_limit=None)
        assert free.remaining() < 0
    run, _ = _run(time_limit=600)
    assert run.remaining() > 500
