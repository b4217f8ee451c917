"""Every way the AID driver can end, driven by a small real plug-in (:mod:`aidopt.testing.fake`).

Each path reachable with a real solver is run with HiGHS (faults are injected into the plug-in's
hooks, or the plug-in builds an infeasible / oversized model); canned solver outcomes
(``aidopt.solvers.solve_model`` replaced) are used for what a real LP solve cannot produce on
demand (an early stop with an incumbent, an interrupt inside the solver).
"""

from __future__ import annotations

import dataclasses
import math
import os
import signal
import threading
import time

import numpy as np
import pytest
from aidopt.decomposition import Iterate, RunConfig, Stop, solve, solve_direct
from aidopt.decomposition.protocol import relative_gap

from aidopt import solvers
from aidopt.results import Certificate, Termination
from aidopt.testing.fake import FakeLocation, Script, line_data, weighted_median_objective

DATA = line_data(120, seed=3)
OPTIMUM = weighted_median_objective(DATA)


def run(problem, data=DATA, *, aid=True, **options):
    config = RunConfig(**{"solver": "highs", "log": False, **options})
    return (solve if aid else solve_direct)(problem, data, config)


def objective_at(beta, data=DATA):
    return float(data.s @ np.abs(data.y - beta))


def canned(monkeypatch, actions):
    """Replace ``aidopt.solvers.solve_model``: call ``k`` (1-based) runs ``actions[k](real, model,
    solver, kwargs)``; the other calls solve for real. Returns the list of solvers called."""
    real = solvers.solve_model
    called = []

    def fake(model, solver="highs", **kwargs):
        called.append(solver)
        action = actions.get(len(called))
        if action is None:
            return real(model, solver, **kwargs)
        return action(real, model, solver, kwargs)

    monkeypatch.setattr(solvers, "solve_model", fake)
    return called


def outcome(status, solver="highs", *, objective=None, has_solution=False, message="canned"):
    return solvers.SolveOutcome(status, objective, None, has_solution, solver, "", 0.0, message)


def assert_best_of_first_iteration(res, bounded=True):
    """The run kept iteration 1 as its answer, with that iteration's bound and gap."""
    first = res.history[0]
    assert len(res.history) == 1
    assert first.n_split > 0 and first.gap > res.config["tol"]  # iteration 1 was not optimal
    assert res.objective == first.E_best
    assert objective_at(res.solution["beta"][0]) == pytest.approx(res.objective, rel=1e-12)
    # the reported bound is the certificate's (checked on the full data), never the loop's
    cert = res.certificate
    assert res.lower_bound == (min(cert.dual_objective, res.objective) if cert.bound_holds
                               else -math.inf)
    assert res.gap == relative_gap(res.objective, res.lower_bound)
    assert math.isfinite(res.gap) == (bounded and cert.bound_holds)
    assert not res.certified


# ----------------------------------------------------------------------------- normal ends
def test_condition_holds_certified_optimal():
    script = Script()
    res = run(FakeLocation(script))
    assert res.termination is Termination.CERTIFIED_OPTIMAL
    assert res.message == "optimality condition holds"
    assert res.history[-1].n_split == 0 and len(res.history) >= 2
    assert res.objective == pytest.approx(OPTIMUM, rel=1e-9)
    assert res.certificate.method == "solver_duals" and res.certificate.sign_condition is True
    assert res.lower_bound == res.certificate.dual_objective
    assert script.counts["certify"] == 1 and script.counts["final_termination"] == 1


def test_direct_solve_is_the_trivial_partition():
    script = Script()
    res = run(FakeLocation(script), aid=False)
    assert res.termination is Termination.CERTIFIED_OPTIMAL and not res.aid
    assert [h.n_clusters for h in res.history] == [DATA.n]
    assert script.counts["initial_partition"] == 0
    assert res.objective == pytest.approx(OPTIMUM, rel=1e-9)


def test_gap_stop_with_a_passing_certificate_is_certified():
    res = run(FakeLocation(), tol=0.5)
    assert res.termination is Termination.CERTIFIED_OPTIMAL
    assert res.message.startswith("gap ") and res.history[-1].n_split > 0
    assert res.history[-1].gap <= 0.5


def test_gap_stop_without_a_certificate_is_gap_tolerance():
    res = run(FakeLocation(certify_mode="none"), tol=0.5)
    assert res.termination is Termination.GAP_TOLERANCE
    assert res.message.startswith("gap ") and res.history[-1].n_split > 0
    assert not res.certified


def test_condition_without_a_certificate_is_gap_tolerance():
    res = run(FakeLocation(certify_mode="none"))
    assert res.history[-1].n_split == 0
    assert res.termination is Termination.GAP_TOLERANCE


def test_iteration_limit():
    script = Script()
    res = run(FakeLocation(script), max_iter=2)
    assert res.termination is Termination.ITERATION_LIMIT
    assert res.message == "2 iterations" and len(res.history) == 2
    assert res.history[-1].n_split > 0
    assert script.counts["aggregate"] == 2 and script.counts["certify"] == 1
    assert res.certificate is not None and not res.certified


# ----------------------------------------------------------------------------- time limits
@pytest.mark.parametrize("raise_on_failure", [False, True])
def test_time_limit_in_initial_partition_real_solve(raise_on_failure):
    """The sample LP gets no time: the plug-in raises TimeLimitReached."""
    script = Script()
    res = run(FakeLocation(script), time_limit=1e-9, raise_on_failure=raise_on_failure)
    assert res.termination is Termination.TIME_LIMIT
    assert "sample LP" in res.message
    assert res.history == [] and res.objective == math.inf and res.solution == {}
    assert res.certificate is None and script.counts["aggregate"] == 0


def test_no_aggregation_once_the_initial_partition_used_the_limit():
    """The initial partition outlasts the whole limit: the loop does not start an iteration (an
    aggregation is a pass over the data); before, it aggregated and then found no time left."""
    script = Script({("initial_partition", 1): ("sleep", 0.3)})
    res = run(FakeLocation(script, sample_solve=False), time_limit=0.2)
    assert res.termination is Termination.TIME_LIMIT
    assert script.counts["aggregate"] == 0 and script.counts["build"] == 0


def test_time_limit_raised_by_initial_partition():
    script = Script({("initial_partition", 1): solvers.TimeLimitReached("clustering ran out of time")})
    res = run(FakeLocation(script), time_limit=60.0)
    assert res.termination is Termination.TIME_LIMIT and "clustering ran out" in res.message
    assert res.history == [] and script.counts["build"] == 0


@pytest.mark.parametrize("raise_on_failure", [False, True])
def test_time_limit_in_an_aggregated_solve_real(raise_on_failure):
    """Iteration 2's aggregate overruns the limit: its solve gets no time left."""
    script = Script({("aggregate", 2): ("sleep", 1.0)})
    res = run(FakeLocation(script, sample_solve=False), time_limit=0.8,
              raise_on_failure=raise_on_failure)
    assert res.termination is Termination.TIME_LIMIT
    assert "time limit" in res.message
    assert script.counts["build"] == 2 and script.counts["lift"] == 1
    assert_best_of_first_iteration(res)
    assert res.certificate is not None  # the best so far is still checked


def test_time_limit_outcome_of_an_aggregated_solve_canned(monkeypatch):
    canned(monkeypatch, {2: lambda real, m, s, kw: outcome("time_limit", s)})
    script = Script()
    res = run(FakeLocation(script, sample_solve=False), time_limit=60.0)
    assert res.termination is Termination.TIME_LIMIT and "canned" in res.message
    assert script.counts["rebuild"] == 1  # rebuild is asked after optimal solves only
    assert script.named("on_nonoptimal") == []  # no solution: nothing to accept
    assert_best_of_first_iteration(res)


def test_time_limit_between_iterations():
    script = Script({("split", 1): ("sleep", 2.5)})  # a first iteration well inside 2 s, loaded
    res = run(FakeLocation(script, sample_solve=False), time_limit=2.0)
    assert res.termination is Termination.TIME_LIMIT
    assert res.message.endswith(" s")
    assert script.counts["aggregate"] == 1
    assert_best_of_first_iteration(res)


@pytest.mark.parametrize("raise_on_failure", [False, True])
def test_time_limit_inside_certify_real(raise_on_failure):
    """certify solves the dual LP after the limit: no certificate, termination time_limit."""
    script = Script({("certify", 1): ("sleep", 3.0)})
    res = run(FakeLocation(script, sample_solve=False, certify_mode="dual_lp"), time_limit=2.5,
              raise_on_failure=raise_on_failure)
    assert res.history[-1].n_split == 0  # the loop itself ended on the condition
    assert res.termination is Termination.TIME_LIMIT
    assert res.certificate is None
    assert "certificate not checked" in res.message and "dual LP" in res.message
    assert res.objective == pytest.approx(OPTIMUM, rel=1e-9)


# ----------------------------------------------------------------------------- failures
def test_solver_failure_raises_by_default_real():
    with pytest.raises(solvers.SolverError, match="infeasible"):
        run(FakeLocation(Script(), infeasible_at=2, sample_solve=False))


def test_solver_failure_returns_best_so_far_real():
    script = Script()
    res = run(FakeLocation(script, infeasible_at=2, sample_solve=False), raise_on_failure=False)
    assert res.termination is Termination.SOLVER_FAILURE
    assert "infeasible" in res.message
    assert_best_of_first_iteration(res)
    assert res.certificate is not None and script.counts["certify"] == 1


def test_solver_failure_canned(monkeypatch):
    canned(monkeypatch, {2: lambda real, m, s, kw: outcome("error", s, message="forced failure")})
    with pytest.raises(solvers.SolverError, match="forced failure"):
        run(FakeLocation(sample_solve=False))
    canned(monkeypatch, {2: lambda real, m, s, kw: outcome("error", s, message="forced failure")})
    res = run(FakeLocation(sample_solve=False), raise_on_failure=False)
    assert res.termination is Termination.SOLVER_FAILURE and "forced failure" in res.message
    assert_best_of_first_iteration(res)


def test_an_infeasible_model_proves_infeasibility_only_when_the_plugin_says_so():
    """``infeasible_proves``: the solver's "infeasible" stops the run as ``infeasible`` (no
    error, even with ``raise_on_failure``), the solve being a proof; without it, a failure."""

    class Proves(FakeLocation):
        infeasible_proves = True

    res = run(Proves(Script(), infeasible_at=1, sample_solve=False))
    assert res.termination is Termination.INFEASIBLE and not res.certified
    assert "proved the aggregated model infeasible" in res.message
    assert res.objective == math.inf and res.history == []
    with pytest.raises(solvers.SolverError, match="infeasible"):
        run(FakeLocation(Script(), infeasible_at=1, sample_solve=False))


def test_infeasible_after_a_feasible_iterate_is_a_solver_failure_even_when_it_proves():
    """A feasible point of the original problem is already held: a relaxation's "infeasible"
    contradicts it, so it is a solver failure (raised by default), never ``infeasible``."""

    class Proves(FakeLocation):
        infeasible_proves = True

    with pytest.raises(solvers.SolverError, match="infeasible"):
        run(Proves(Script(), infeasible_at=2, sample_solve=False))
    res = run(Proves(Script(), infeasible_at=2, sample_solve=False), raise_on_failure=False)
    assert res.termination is Termination.SOLVER_FAILURE
    assert_best_of_first_iteration(res)


def test_solver_failure_in_the_first_solve_has_no_solution():
    res = run(FakeLocation(Script(), infeasible_at=1, sample_solve=False), raise_on_failure=False)
    assert res.termination is Termination.SOLVER_FAILURE
    assert res.history == [] and res.objective == math.inf and res.certificate is None


def test_non_finite_objective_raises():
    script = Script({("evaluate", 2): "nan"})
    with pytest.raises(solvers.SolverError, match="non-finite objective"):
        run(FakeLocation(script, sample_solve=False))


def test_non_finite_objective_returns_best_so_far():
    script = Script({("evaluate", 2): "nan"})
    res = run(FakeLocation(script, sample_solve=False), raise_on_failure=False)
    assert res.termination is Termination.SOLVER_FAILURE
    assert "non-finite objective" in res.message
    assert script.counts["split"] == 1  # a NaN objective is never split on
    assert_best_of_first_iteration(res)


# ----------------------------------------------------------------------------- fallbacks
def test_fallback_after_a_failed_solve_real(monkeypatch):
    called = canned(monkeypatch, {})
    script = Script()
    res = run(FakeLocation(script, sample_solve=False, broken_form="primal",
                           fallback_list=[("clarabel", "alt")]))
    assert res.termination is Termination.CERTIFIED_OPTIMAL, res.summary()
    assert res.solver == "clarabel" and res.solver_version == solvers.version("clarabel")
    assert "highs returned infeasible" in res.message
    assert "retried with clarabel (alt form): optimal" in res.message
    n = len(res.history)
    assert script.named("build") == [None, "alt"] * n
    assert called == ["highs", "clarabel"] * n
    assert script.named("fallbacks") == ["highs"] * n
    assert res.objective == pytest.approx(OPTIMUM, rel=1e-6)


def test_fallbacks_are_tried_in_order(monkeypatch):
    called = canned(monkeypatch, {})
    script = Script()
    res = run(FakeLocation(script, sample_solve=False, broken_form="primal", fallback_list=[
        ("no_such_solver", "alt"), ("highs", "primal"), ("clarabel", "alt"), ("highs", "alt")]),
        max_iter=1)
    # the unavailable solver is skipped, the broken form fails again, clarabel succeeds, and the
    # last pair is never tried
    assert script.named("build") == [None, "primal", "alt"]
    assert called == ["highs", "highs", "clarabel"]
    assert res.solver == "clarabel"
    assert "retried with highs (primal form): infeasible" in res.message
    assert "retried with clarabel (alt form): optimal" in res.message
    assert "no_such_solver" not in res.message


def _halved_duals(real, model, solver, kwargs):
    """HiGHS solves, reported optimal, with every dual halved: beta (hence the split) is right,
    the lifted bound is half the optimum, so the certificate fails where the condition holds."""
    out = real(model, solver, **kwargs)
    if solver != "highs" or out.duals is None:
        return out
    return dataclasses.replace(out, duals={con: 0.5 * value for con, value in out.duals.items()})


def test_condition_with_a_failing_certificate_goes_to_the_fallbacks(monkeypatch):
    """The condition holds but the certificate fails: the aggregated problem of that iterate is
    solved again by the plug-in's fallbacks (one more iteration on the same clusters), and that
    answer is certified; the message says what happened."""
    called = canned(monkeypatch, dict.fromkeys(range(1, 60), _halved_duals))
    res = run(FakeLocation(sample_solve=False, fallback_list=[("clarabel", None)]))
    assert res.termination is Termination.CERTIFIED_OPTIMAL, res.summary()
    assert res.objective == pytest.approx(OPTIMUM, rel=1e-9)
    *_, held, again = res.history
    assert held.n_split == 0 and held.solver == "highs"
    assert again.solver == "clarabel" and again.n_clusters == held.n_clusters
    assert called.count("clarabel") == 1 and called[-1] == "clarabel"
    assert (f"highs returned feasible (reported optimal at iteration {held.t}, but not certified "
            "on the original data (relative gap") in res.message
    assert "retried with clarabel: optimal" in res.message


def test_condition_with_a_failing_certificate_and_no_fallback_says_so(monkeypatch):
    """Without a fallback (disabled, none declared, or the iteration limit reached) the run ends
    gap_tolerance, and its message does not say the optimality condition holds alone."""
    canned(monkeypatch, dict.fromkeys(range(1, 60), _halved_duals))
    plain = run(FakeLocation(sample_solve=False, fallback_list=[("clarabel", None)]), fallback=False)
    none = run(FakeLocation(sample_solve=False))
    limited = run(FakeLocation(sample_solve=False, fallback_list=[("clarabel", None)]),
                  max_iter=len(plain.history))
    for res in (plain, none, limited):
        assert res.termination is Termination.GAP_TOLERANCE and not res.certified
        assert res.history[-1].n_split == 0 and res.history[-1].solver == "highs"
        assert "optimality condition holds" not in res.message
        assert res.message.startswith("split condition holds (nothing to split at the aggregated "
                                      "solution), but the answer is not certified on the original "
                                      "data (relative gap ")
        assert "not shown optimal" in res.message
    assert "the fallbacks of highs were not tried on its uncertified answer: max_iter reached" in \
        limited.message


def test_no_fallback_when_disabled():
    script = Script()
    with pytest.raises(solvers.SolverError, match="infeasible"):
        run(FakeLocation(script, sample_solve=False, broken_form="primal",
                         fallback_list=[("clarabel", "alt")]), fallback=False)
    assert script.named("build") == [None]


def test_all_fallbacks_fail():
    res = run(FakeLocation(sample_solve=False, broken_form="primal",
                           fallback_list=[("clarabel", "primal")]), raise_on_failure=False)
    assert res.termination is Termination.SOLVER_FAILURE
    assert res.history == [] and "retried with clarabel (primal form)" in res.message


@pytest.mark.parametrize("error", [solvers.LicenceLimitError, solvers.SolverCapabilityError])
def test_licence_refusal_goes_to_the_fallback_canned(monkeypatch, error):
    def refuse(real, model, solver, kwargs):
        raise error("Solver 'highs' has a size-limited licence: 3000 variables > 2000")

    called = canned(monkeypatch, {1: refuse})
    res = run(FakeLocation(sample_solve=False, fallback_list=[("clarabel", None)]), max_iter=1)
    assert called[:2] == ["highs", "clarabel"]
    assert res.solver == "clarabel" and res.history[0].n_clusters > 0
    # only a LicenceLimitError is labelled a licence refusal; another capability error is an error
    label = "licence_limit" if error is solvers.LicenceLimitError else "returned error"
    assert label in res.message and "retried with clarabel" in res.message


def test_licence_refusal_without_fallback_raises_or_fails(monkeypatch):
    def refuse(real, model, solver, kwargs):
        raise solvers.LicenceLimitError("too large for the licence", solver=solver)

    canned(monkeypatch, {1: refuse})
    with pytest.raises(solvers.SolverCapabilityError, match="too large"):
        run(FakeLocation(sample_solve=False))
    canned(monkeypatch, {1: refuse})
    res = run(FakeLocation(sample_solve=False), raise_on_failure=False)
    assert res.termination is Termination.SOLVER_FAILURE and "too large" in res.message


@pytest.mark.skipif(solvers.availability("gurobi") != "limited",
                    reason="needs gurobipy with its size-limited pip licence")
def test_licence_refusal_real_gurobi():
    """A 1100-point direct model (2201 variables) is over the pip licence's 2000: HiGHS takes it."""
    big = line_data(1100, seed=5)
    res = run(FakeLocation(fallback_list=[("highs", None)]), data=big, aid=False, solver="gurobi")
    assert res.termination is Termination.CERTIFIED_OPTIMAL
    assert res.solver == "highs" and "licence" in res.message and "retried with highs" in res.message
    assert res.objective == pytest.approx(weighted_median_objective(big), rel=1e-9)


def test_raised_solver_error_goes_to_the_fallback(monkeypatch):
    def crash(real, model, solver, kwargs):
        raise solvers.SolverError("Solver 'highs' failed: backend crashed")

    called = canned(monkeypatch, {1: crash})
    res = run(FakeLocation(sample_solve=False, fallback_list=[("clarabel", None)]), max_iter=1,
              raise_on_failure=False)
    assert called[:2] == ["highs", "clarabel"], f"solvers called: {called}; {res.message}"
    assert res.solver == "clarabel" and "retried with clarabel" in res.message


# ----------------------------------------------------------------------------- rebuild, incumbents
def test_rebuild_model_is_solved_instead():
    """build returns a wrong trial model; rebuild's model is the one solved and lifted."""
    script = Script()
    res = run(FakeLocation(script, trial=True))
    assert res.termination is Termination.CERTIFIED_OPTIMAL
    assert res.objective == pytest.approx(OPTIMUM, rel=1e-9)
    n = len(res.history)
    # asked after every optimal solve, the rebuilt model's too, until it returns None
    assert script.named("rebuild") == [("trial", "optimal"), ("line", "optimal")] * n
    assert script.named("lift") == ["line"] * n


def test_on_nonoptimal_keeps_the_incumbent(monkeypatch):
    def stopped(real, model, solver, kwargs):
        out = real(model, solver, **kwargs)  # the values are loaded: a feasible incumbent
        return outcome("time_limit", solver, objective=out.objective, has_solution=True)

    canned(monkeypatch, {2: stopped})
    script = Script()
    res = run(FakeLocation(script, sample_solve=False, keep_incumbent=True))
    assert res.termination is Termination.TIME_LIMIT
    assert script.named("on_nonoptimal") == ["time_limit"]
    assert script.named("lift") == ["line", "line"] and len(res.history) == 1
    assert "incumbent of the stopped solve" in res.message
    betas = script.named("evaluate")
    values = [objective_at(b) for b in betas]
    assert res.objective == min(values)
    assert res.solution["beta"][0] == betas[int(np.argmin(values))]
    assert script.named("certify") == [1]  # the bound iterate: only iteration 1 proved one


def test_on_nonoptimal_keeps_a_real_time_limited_incumbent():
    """Iteration 2 is a MILP that HiGHS cannot finish before the run's time limit."""
    script = Script()
    res = run(FakeLocation(script, sample_solve=False, hard_at=2, keep_incumbent=True, bound=False),
              time_limit=1.0)
    assert res.termination is Termination.TIME_LIMIT
    assert script.named("on_nonoptimal") == ["time_limit"]
    assert script.named("lift") == ["line", "line"] and len(res.history) == 1
    assert "incumbent of the stopped solve" in res.message
    values = [objective_at(b) for b in script.named("evaluate")]
    assert res.objective == min(values) and math.isfinite(res.objective)


def test_on_nonoptimal_refused_incumbent_is_dropped(monkeypatch):
    def stopped(real, model, solver, kwargs):
        out = real(model, solver, **kwargs)
        return outcome("time_limit", solver, objective=out.objective, has_solution=True)

    canned(monkeypatch, {2: stopped})
    script = Script()
    res = run(FakeLocation(script, sample_solve=False, keep_incumbent=False))
    assert script.named("on_nonoptimal") == ["time_limit"]
    assert script.named("lift") == ["line"]
    assert_best_of_first_iteration(res)


# ----------------------------------------------------------------------------- bounds
def test_no_lower_bound_means_no_gap_stop():
    res = run(FakeLocation(bound=False, certify_mode="none"), tol=0.99, max_iter=1)
    assert res.termination is Termination.ITERATION_LIMIT  # with a bound this is a gap stop
    assert [h.lower_bound for h in res.history] == [-math.inf]
    assert [h.gap for h in res.history] == [math.inf]
    with_bound = run(FakeLocation(bound=True, certify_mode="none"), tol=0.99, max_iter=1)
    assert with_bound.termination is Termination.GAP_TOLERANCE
    assert with_bound.message.startswith("gap ") and with_bound.history[0].gap <= 0.99


def test_no_lower_bound_is_never_certified_by_the_loop():
    res = run(FakeLocation(bound=False, certify_mode="none"))
    assert res.history[-1].n_split == 0
    assert res.termination is Termination.GAP_TOLERANCE
    assert res.lower_bound == -math.inf and res.gap == math.inf
    assert all(h.gap == math.inf for h in res.history)


def test_no_lower_bound_certificate_uses_the_latest_iterate():
    script = Script()
    res = run(FakeLocation(script, bound=False))
    assert res.termination is Termination.CERTIFIED_OPTIMAL  # by the certificate's own duals
    assert script.named("certify") == [len(res.history)]
    assert res.lower_bound == res.certificate.dual_objective


def test_real_bound_is_the_best_one_proved():
    script = Script()
    res = run(FakeLocation(script), max_iter=3)
    lowers = [h.lower_bound for h in res.history]
    assert lowers == sorted(lowers) and all(lo <= OPTIMUM * (1 + 1e-9) for lo in lowers)
    assert lowers[-1] == max(h.F_t for h in res.history)
    assert script.named("certify") == [int(np.argmax([h.F_t for h in res.history])) + 1]


# ----------------------------------------------------------------------------- final_termination
def test_custom_final_termination():
    seen = []

    def verdict(stop, certificate, best):
        seen.append((stop, certificate, best))
        return Termination.PROP5_NOT_BEST

    res = run(FakeLocation(verdict=verdict))
    assert res.termination is Termination.PROP5_NOT_BEST
    (stop, certificate, best), = seen
    assert stop is Stop.CONDITION and isinstance(certificate, Certificate) and isinstance(best, Iterate)
    assert best.E_t == res.objective
    seen.clear()
    res = run(FakeLocation(verdict=verdict), max_iter=1)
    assert seen[0][0] is Stop.ITERATION_LIMIT and res.termination is Termination.PROP5_NOT_BEST


# ----------------------------------------------------------------------------- Ctrl-C
def test_interrupt_in_a_hook_returns_the_best_so_far():
    script = Script({("evaluate", 2): KeyboardInterrupt})
    res = run(FakeLocation(script, sample_solve=False))
    assert res.termination is Termination.INTERRUPTED
    assert "interrupted" in res.message
    assert_best_of_first_iteration(res)
    assert res.certificate is not None and script.counts["certify"] == 1


def test_interrupt_inside_the_solver(monkeypatch):
    def interrupt(real, model, solver, kwargs):
        raise KeyboardInterrupt

    canned(monkeypatch, {2: interrupt})
    res = run(FakeLocation(sample_solve=False))
    assert res.termination is Termination.INTERRUPTED
    assert_best_of_first_iteration(res)


def test_interrupt_before_any_solution():
    script = Script({("initial_partition", 1): KeyboardInterrupt})
    res = run(FakeLocation(script))
    assert res.termination is Termination.INTERRUPTED
    assert res.history == [] and res.objective == math.inf and res.certificate is None


def test_interrupt_while_certifying():
    script = Script({("certify", 1): KeyboardInterrupt})
    res = run(FakeLocation(script))
    assert res.termination is Termination.INTERRUPTED
    assert "while certifying" in res.message and res.certificate is None
    assert res.objective == pytest.approx(OPTIMUM, rel=1e-9)  # the answer is still returned


def _sigint_during_second_solve(delay: float, time_limit: float):
    """Run the fake whose 2nd aggregated model is a hard MILP and send this process a real SIGINT
    ``delay`` seconds after that model is built. Returns (result, seconds from the signal)."""
    sent, timers, armed = [], [], [True]

    def fire():
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    def arm():
        timers.append(threading.Timer(delay, fire))
        timers[0].start()

    def handler(signum, frame):  # Python's own Ctrl-C, but only while the run is going
        if armed[0]:
            raise KeyboardInterrupt

    script = Script({("build", 2): arm})
    previous = signal.signal(signal.SIGINT, handler)
    try:
        res = run(FakeLocation(script, sample_solve=False, hard_at=2, bound=False),
                  time_limit=time_limit)
        done = time.perf_counter()
        armed[0] = False
    except KeyboardInterrupt:  # never abort the test session
        pytest.fail("Ctrl-C escaped the run")
    finally:
        armed[0] = False
        for timer in timers:
            timer.cancel()
            timer.join()
        signal.signal(signal.SIGINT, previous)
    assert sent and sent[0] < done, "the signal was not sent during the run"
    return res, done - sent[0]


def test_real_ctrl_c_during_a_highs_solve_returns_the_best_so_far():
    res, _ = _sigint_during_second_solve(0.2, 1.2)
    assert res.termination is Termination.INTERRUPTED
    assert res.message.startswith("interrupted (Ctrl-C)")
    # the loop proved no bound (bound=False); the reported one is the certificate's own
    assert res.history[0].lower_bound == -math.inf
    assert_best_of_first_iteration(res)


def test_real_ctrl_c_stops_a_highs_solve_promptly():
    res, after_signal = _sigint_during_second_solve(0.2, 1.5)
    assert res.termination is Termination.INTERRUPTED
    # the solve's own limit would end it 1.3 s after the signal; under pytest-xdist's second
    # worker (and a loaded machine) the prompt stop measured 0.55 s
    assert after_signal < 1.0, f"the run ended {after_signal:.2f} s after Ctrl-C"


def _lad_file(tmp_path):
    from aidopt.instances import lad_instance

    X, y = lad_instance("A", n=400, m=3, seed=0)
    path = tmp_path / "lad.npz"
    np.savez(path, X=X, y=y)
    return path


def test_cli_interrupt_inside_the_run_exits_130(tmp_path, monkeypatch, capsys):
    from aidopt.decomposition.plugins.lad import LADProblem

    from aidopt.cli.main import main

    real = LADProblem.evaluate
    count = []

    def evaluate(self, data, lifted):
        count.append(1)
        if len(count) == 2:
            raise KeyboardInterrupt
        return real(self, data, lifted)

    monkeypatch.setattr(LADProblem, "evaluate", evaluate)
    import json

    saved = tmp_path / "r.json"
    code = main(["lad", "--data", str(_lad_file(tmp_path)), "--quiet", "--r0", "0.02",
                 "--output", str(saved)])
    out = capsys.readouterr().out
    assert code == 130
    assert out.startswith("result: interrupted, ") and len(json.loads(saved.read_text())["history"]) == 1


def test_cli_interrupt_outside_the_run_exits_130(tmp_path, monkeypatch, capsys):
    import aidopt.api.lad
    from aidopt.cli.main import main

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(aidopt.api.lad, "solve_lad", interrupted)
    assert main(["lad", "--data", str(_lad_file(tmp_path)), "--quiet"]) == 130
    assert "interrupted" in capsys.readouterr().err


# ----------------------------------------------------------------------------- step times
def test_step_times_of_a_finished_run_are_per_iteration():
    script = Script({("aggregate", 2): ("sleep", 0.3)})
    res = run(FakeLocation(script, sample_solve=False))
    assert len(res.history) >= 3
    assert res.history[1].seconds["aggregate"] >= 0.3
    assert res.history[0].seconds["aggregate"] < 0.2 and res.history[2].seconds["aggregate"] < 0.2
    assert "certify" in res.history[-1].seconds


def test_step_times_of_an_unfinished_iteration_do_not_overwrite_the_last_record():
    script = Script({("aggregate", 2): ("sleep", 0.3)})
    res = run(FakeLocation(script, infeasible_at=2, sample_solve=False), raise_on_failure=False)
    assert res.termination is Termination.SOLVER_FAILURE and len(res.history) == 1
    assert res.history[0].seconds["aggregate"] < 0.2  # iteration 1's aggregate took ~1 ms
    assert res.history[0].seconds["unfinished"] >= 0.3  # the failed iteration's steps, kept apart


def test_the_bound_hook_sees_what_lift_returned():
    """``lower_bound(outcome, partition, data, lifted)``: the lifted state of the same solve
    reaches the bound, so a bound computed from lifted duals can drive the gap test."""
    from aidopt.testing.fake import FakeLocation, line_data

    seen = []

    class BoundFromLifted(FakeLocation):
        def lower_bound(self, outcome, partition, data, lifted=None):
            seen.append((lifted.solution["beta"][0], len(partition.counts)))
            return super().lower_bound(outcome, partition, data, lifted)

    import aidopt

    res = aidopt.solve(BoundFromLifted(), line_data(300, seed=1), solver="highs", log=False)
    assert res.certified and len(seen) == len(res.history)
    assert [n for _, n in seen] == [h.n_clusters for h in res.history]
    assert [b for b, _ in seen] == [h.info["beta"] for h in res.history]  # that solve's lift


def test_a_plugin_names_its_own_condition_in_the_summary():
    from aidopt import Certificate

    base = dict(method="m", certified=False, primal_objective=1.0, dual_objective=0.0,
                relative_gap=1.0, residuals={}, tol=1e-6, feasibility_tol=1e-6)
    generic = Certificate(**base, sign_condition=True).summary()
    own = Certificate(**base, sign_condition=True, condition_name="Prop. 5",
                      condition="E = F on the final clusters").summary()
    assert "split condition         holds (nothing to split at this solution)" in generic
    assert "both sides" not in generic
    assert "Prop. 5                 holds (E = F on the final clusters)" in own


def test_the_history_records_the_solver_of_each_iteration():
    """A fallback solves one aggregated model: that iteration's record names it (result.solver
    is the best iterate's), and the summary counts the iterations per solver."""
    import aidopt
    from aidopt.testing.fake import FakeLocation, Script, line_data

    problem = FakeLocation(Script(), infeasible_at=2, fallback_list=[("clarabel", None)])
    res = aidopt.solve(problem, line_data(300, seed=1), solver="highs", log=False)
    solvers_used = [h.solver for h in res.history]
    assert solvers_used[1] == "clarabel" and set(solvers_used) == {"highs", "clarabel"}
    assert solvers_used[0] == "highs"
    assert "solvers by iteration    highs" in res.summary() and "clarabel 1" in res.summary()
    assert res.to_dict()["history"][1]["solver"] == "clarabel"


def test_repeated_fallbacks_are_summarized_in_the_message(monkeypatch):
    """Every aggregated solve of the configured solver fails (as Gurobi over its pip licence does
    on each iteration): the message has one line for that kind of retry, with its count."""
    def crash(real, model, solver, kwargs):
        raise solvers.SolverError(f"Solver 'highs' failed: crash number {len(called)}")

    called = canned(monkeypatch, {k: crash for k in range(1, 40, 2)})  # every highs call fails
    res = run(FakeLocation(sample_solve=False, fallback_list=[("clarabel", None)]),
              raise_on_failure=False)
    n_retries = called.count("clarabel")
    assert n_retries >= 2, called
    assert res.message.count("retried with clarabel") == 1, res.message
    assert f"(x{n_retries}: the first shown)" in res.message


def test_a_solver_that_keeps_failing_is_one_line_naming_who_certified(monkeypatch, capsys):
    """The configured solver fails every aggregated solve, in more than one way (an error, then
    iteration limits, as Frisch-Newton / Ferris-Munson do on badly scaled data): the message and
    the log say once which solver failed and why (the first reason), how often, which solver
    took over, and whose solution was certified; not one story per status."""
    def fail(real, model, solver, kwargs):
        first = called.count("highs") == 1
        return outcome("error" if first else "iteration_limit", "highs",
                       message=("error after 124 iterations" if first
                                else "iteration_limit after 200 iterations"))

    called = canned(monkeypatch, {k: fail for k in range(1, 60, 2)})  # every highs call fails
    res = run(FakeLocation(sample_solve=False, fallback_list=[("clarabel", None)]), log=True)
    n_retries = called.count("clarabel")
    assert n_retries >= 3 and res.certified and res.solver == "clarabel", res.message
    assert res.message.count("highs returned") == 1 and "iteration_limit" not in res.message
    assert ("highs returned error (error after 124 iterations); retried with clarabel: optimal "
            f"(x{n_retries}: the first shown)") in res.message
    assert res.message.endswith("certified with clarabel's solution")
    logged = [line for line in capsys.readouterr().out.splitlines()
              if line.startswith("highs returned")]
    assert len(logged) == 1, logged


def test_retries_that_also_fail_are_counted():
    from aidopt.decomposition.run import Run

    run_ = Run("fake", solvers.ProblemClass.LP, RunConfig(solver="highs", log=False))
    for status in ("optimal", "numerical_error", "optimal"):
        run_._note_retry(outcome("error", "highs", message="first\nsecond line"), "clarabel",
                         "dual", outcome(status, "clarabel"))
    assert run_.retry_notes() == [
        "highs returned error (first second line); retried with clarabel (dual form): optimal "
        "(x3: the first shown; 2 of them optimal)"]


def test_a_rebuild_that_never_ends_is_cut_off(monkeypatch):
    """rebuild is asked until it returns None; a plug-in that always rebuilds is stopped after
    MAX_REBUILDS rounds with a note, and the run still ends with its answer."""
    from aidopt.decomposition import run as run_module

    from aidopt.testing import fake

    monkeypatch.setattr(run_module, "MAX_REBUILDS", 3)

    class Endless(FakeLocation):
        def rebuild(self, model, outcome, aggregated):
            super().rebuild(model, outcome, aggregated)
            return fake._line_model(aggregated.y, aggregated.w)

    script = Script()
    res = run(Endless(script, sample_solve=False), max_iter=1, raise_on_failure=False)
    assert script.named("rebuild").count(("line", "optimal")) == 4  # 1 + MAX_REBUILDS
    assert "more than 3 rounds" in res.message
    assert math.isfinite(res.objective)


# ----------------------------------------------------------------------------- E and the certificate
@pytest.mark.parametrize("scale", [1.0, 1e-9])
@pytest.mark.parametrize("door", ["solve_direct", "solve"])
def test_an_evaluate_that_under_reports_is_never_certified(door, scale):
    """The driver trusted ``evaluate``: a plug-in whose evaluate reports 80 % of the objective
    that its own certificate proves was returned ``certified_optimal`` at the wrong value, by the
    direct solve and by AID (from the trivial partition, r0 = 1). Now the E reported and the
    certificate's primal objective are compared (relative, on the gap test's scale: the same at
    any units) and the run is not certified, says why, and reports no bound."""
    import aidopt
    from tests.conformance.wrong_plugins import UNDER, ScaleInvariantFloor, UnderReports, scaled_line_data

    data = scaled_line_data(120, 3, scale)
    optimum = OPTIMUM * scale
    options = {"solver": "highs", "log": False} if door == "solve_direct" else {
        "solver": "highs", "log": False, "r0": 1.0}
    honest = getattr(aidopt, door)(ScaleInvariantFloor(), data, **options)
    assert honest.termination is Termination.CERTIFIED_OPTIMAL, honest.summary()
    assert honest.objective == pytest.approx(optimum, rel=1e-9)

    res = getattr(aidopt, door)(UnderReports(), data, **options)
    cert = res.certificate
    assert cert.primal_objective == pytest.approx(optimum, rel=1e-9)
    assert res.objective == pytest.approx(UNDER * optimum, rel=1e-9)  # what evaluate said
    assert res.termination is not Termination.CERTIFIED_OPTIMAL and not res.certified
    assert res.termination is Termination.GAP_TOLERANCE  # the loop's own stop, uncertified
    assert res.lower_bound == -math.inf and res.gap == math.inf
    said = f"the objective reported, {res.objective:.10g}, is not the certificate's primal " \
           f"objective, {cert.primal_objective:.10g}"
    assert said in res.message and said in cert.note
    assert "NOT certified" in cert.summary() and said in cert.summary()


def test_a_verdict_of_certified_optimal_without_a_passed_certificate_is_refused():
    """``final_termination`` is the plug-in's; a plug-in that answers ``certified_optimal``
    whatever its certificate says does not get it: the default verdict is kept."""
    res = run(FakeLocation(certify_mode="none",
                           verdict=lambda stop, certificate, best: Termination.CERTIFIED_OPTIMAL))
    assert not res.certificate.certified
    assert res.termination is Termination.GAP_TOLERANCE
    assert "final_termination returned certified_optimal without a passed certificate" in res.message


# ----------------------------------------------------------------------------- earlier signatures
def test_a_plugin_written_to_the_earlier_bound_signature_runs_and_warns_once():
    """``lower_bound(self, outcome, partition, data)``, the signature docs/plugins.md published
    before the hook gained ``lifted``, made the driver raise TypeError. It is now called without
    ``lifted``, with one DeprecationWarning per class (however many runs and objects), attributed
    to the plug-in's own ``def`` line, and gives the same answer as the current signature."""
    import inspect
    import warnings

    import aidopt
    from aidopt.testing.contract import same_result

    class EarlierBound(FakeLocation):
        def lower_bound(self, outcome, partition, data):
            return outcome.bound

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # every warning issued is recorded, none merged
        earlier = [aidopt.solve(EarlierBound(), DATA, solver="highs", log=False),
                   aidopt.solve(EarlierBound(), DATA, solver="highs", log=False),
                   aidopt.solve_direct(EarlierBound(), DATA, solver="highs", log=False)]
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert len(deprecations) == 1, [str(w.message) for w in deprecations]
    text = str(deprecations[0].message)
    assert "EarlierBound.lower_bound(self, outcome, partition, data)" in text
    assert "def lower_bound(self, outcome, partition, data, lifted=None)" in text
    assert deprecations[0].filename == __file__
    assert deprecations[0].lineno == inspect.getsourcelines(EarlierBound.lower_bound)[1]

    current = [run(FakeLocation()), run(FakeLocation()), run(FakeLocation(), aid=False)]
    for old, new in zip(earlier, current, strict=True):
        assert old.certified and all(math.isfinite(h.lower_bound) for h in old.history)
        assert same_result(old, new) == []
