"""The Aggregate and Iterative Disaggregate (AID) loop: one loop for every plug-in.

Park & Klabjan (2016), Algorithm 1: partition the elements (data rows, sites, ...), solve the
problem on the aggregated data, lift and evaluate the solution on the original data, split the
clusters that violate the optimality condition, repeat. This module is only that loop; the
plug-in (:class:`~.protocol.AIDProblem`) owns the mathematics and the run framework
(:class:`~.run.Run`) owns configuration, limits, solver calls, failures, timing, the log and the
result.

The direct (non-AID) solve is the same loop started from the trivial partition (every element its
own cluster), so both paths build, solve, evaluate and certify through the same code.
"""

from __future__ import annotations

import dataclasses
import logging
import math

import numpy as np
from aidopt.decomposition.protocol import AIDProblem, Iterate, Stop, call_hook, relative_gap
from aidopt.decomposition.run import BUILTIN_METHODS, Column, Run, RunConfig, pause_gc, release, run_scope
from aidopt.models._data import build_deadline

from aidopt import solvers
from aidopt.results import AIDResult, IterationRecord, Termination

logger = logging.getLogger("aidopt.aid")

__all__ = ["solve", "solve_direct", "COLUMNS", "HEADER"]

#: the iteration table: F_t is the aggregated optimum; ``lower`` the best bound the plug-in
#: proved (``-inf`` while it proves none, e.g. for a non-convex problem), ``upper(E_best)`` the best objective
COLUMNS = [
    Column("iter", 5, "d"), Column("clusters", 9, "d"), Column("r_t", 9, ".4g"),
    Column("F_t", 16, ".9g"), Column("lower", 16, ".9g"), Column("upper(E_best)", 16, ".9g"),
    Column("gap", 10, ".3e"), Column("split", 7, "d"),
]
#: the share of the time left that the initial partition's solves may use (LP rounds, sample
#: fits): the rest is the iterations', so that a time limit leaves a run with an iterate
INITIAL_SHARE = 0.5

HEADER = " ".join(f"{c.name:>{c.width}}" for c in [*COLUMNS, Column("time", 8, ".2f")])


def solve(problem: AIDProblem, data, config: RunConfig | None = None, *,
          partition=None) -> AIDResult:
    """Solve ``problem`` on ``data`` by AID and certify the answer on the original data.

    ``partition`` starts the loop from a given partition (e.g. the final partition of a related
    solve, ``result.partition``) instead of ``problem.initial_partition``.
    """
    return _Loop(problem, data, config).execute(aid=True, start=partition)


def solve_direct(problem: AIDProblem, data, config: RunConfig | None = None) -> AIDResult:
    """Solve ``problem`` on the full data in one model (the trivial partition), and certify."""
    return _Loop(problem, data, config).execute(aid=False)


class _Loop:
    """State of one AID run: the best iterate, the iterate with the best bound, the history."""

    def __init__(self, problem: AIDProblem, data, config: RunConfig | None):
        config = config or RunConfig()
        if config.solver is None:
            config = dataclasses.replace(config, solver=solvers.DEFAULT_SOLVER)
        self.problem, self.data, self.config = problem, data, config
        self.best: Iterate | None = None
        self.bound_iterate: Iterate | None = None
        self.lower = -math.inf
        self.history: list[IterationRecord] = []
        self.stop: Stop | None = None
        self.message = ""
        self.last_partition = None
        self.initial_point = None  # the plug-in's sample fit, returned if no iterate finishes
        self.initial_lower = -math.inf  # the plug-in's bound from the data alone (initial_bound)
        self.certified = None  # ((best, bound iterate), their certificate), see _certify
        self.handed: set[str] = set()  # solvers whose answer went to their fallbacks (_handover)

    # ------------------------------------------------------------------ driver
    def execute(self, aid: bool, start=None) -> AIDResult:
        problem, data, config = self.problem, self.data, self.config
        with run_scope(config):
            size = problem.size(data)
            mode = "direct full model (no aggregation)"
            if aid and start is not None:
                if start.n != size:
                    raise ValueError(f"the start partition covers {start.n} {problem.element}, "
                                     f"the problem has {size}")
                mode = f"AID from a given partition of {start.n_clusters} clusters"
            elif aid:
                r0 = config.r0 if config.r0 is not None else problem.default_r0(size, data)
                k0 = min(size, max(problem.min_clusters(data), math.ceil(r0 * size)))
                mode = problem.method_name or f"AID, r0={r0:.4g}, |K_0| target {k0} {problem.element}"
            if config.solver in BUILTIN_METHODS and config.solver not in problem.native_methods:
                offered = ", ".join(problem.native_methods) or "none"
                raise ValueError(f"solver={config.solver!r} is a method of aidopt's own that "
                                 f"{problem.name} does not offer (native methods: {offered})")
            run = Run(problem.name, problem.problem_class, config, defaults=problem.solver_defaults,
                      dimensions=problem.dimensions(data), mode=mode, fallbacks=problem.fallbacks)
            problem.configure(run.spec)
            self.run, self.size, self.floor = run, size, 1.0
            run.intro()
            # every model of the run (aggregated, sample, certificate) stops growing at the limit
            with build_deadline(run.deadline):
                with run.guard():  # the plug-in's passes over the data, too, stop on Ctrl-C
                    self.floor = problem.gap_floor(data)
                    initial = problem.initial_bound(data)
                    self.initial_lower = -math.inf if initial is None else float(initial)
                    self.lower = self.initial_lower
                    if start is not None:
                        partition = start
                    else:
                        partition = self._initial(k0) if aid else problem.trivial_partition(data)
                    if partition is not None:
                        self._iterate(partition)
                if run.interrupted and self.stop is not Stop.INTERRUPTED:
                    self._stop(Stop.INTERRUPTED, "interrupted (Ctrl-C): the best solution so far")
                return self._finish(aid)

    def _stop(self, stop: Stop | str, message: str) -> None:
        self.stop, self.message = Stop(stop), message

    def _initial(self, k0: int):
        rng = np.random.default_rng(self.config.seed)
        try:
            with self.run.timed("cluster"), self.run.share(INITIAL_SHARE):
                partition = self.problem.initial_partition(self.data, k0, rng,
                                                           self.run.plugin_solve())
        except solvers.SolverError as exc:
            self._stop(*self.run.error(exc))
            return None
        if isinstance(partition, tuple):  # (partition, the plug-in's sample fit)
            partition, self.initial_point = partition
        return partition

    def _iterate(self, partition) -> None:
        run, config, problem = self.run, self.config, self.problem
        previous: Iterate | None = None
        counted = problem.counters(self.data)  # e.g. passes over an out-of-core X
        keys = sorted(counted)  # one column per counter the plug-in declares, by its name
        shown = tuple(problem.table_info)  # numbers the plug-in's lift reports, as they are
        run.header(COLUMNS + [Column(key, max(7, len(key)), "d") for key in (*keys, *shown)])
        t = 0
        handover = None  # the uncertified iterate and why, when its aggregated problem goes to the fallbacks
        while self.stop is None:
            t += 1
            if run.time_up():  # before a pass over the data: the initial partition may have
                self._stop(Stop.TIME_LIMIT, f"{run.elapsed():.1f} s")  # used the whole limit
                break
            try:
                it = (self._one(t, partition, previous) if handover is None
                      else self._fallback(t, *handover))
            except solvers.SolverError as exc:
                self._stop(*run.error(exc))
                break
            if it is None:
                break
            if it.split.n_split:  # a refined partition: its solves may be handed over again
                self.handed.clear()
            self.last_partition = it.split.partition or partition
            self._accept(it, supersedes=None if handover is None else handover[0])
            self.initial_point = None  # an iterate exists: the sample fit is not needed
            gap = relative_gap(self.best.E_t, self.lower, self.floor)
            now = problem.counters(self.data)
            work = {key: now[key] - counted.get(key, 0) for key in now}
            counted = now
            self.history.append(IterationRecord(
                t=t, n_clusters=partition.n_clusters, r_t=partition.n_clusters / self.size,
                F_t=it.F_t, E_t=it.E_t, E_best=self.best.E_t, lower_bound=self.lower, gap=gap,
                n_split=it.split.n_split, seconds=run.take_seconds(),
                info={**it.lifted.info, **work}, solver=it.solver,
            ))
            run.row(t, partition.n_clusters, partition.n_clusters / self.size, it.F_t, self.lower,
                    self.best.E_t, gap, it.split.n_split, *(work.get(key, 0) for key in keys),
                    *(int(it.lifted.info.get(key, 0)) for key in shown))
            if it.split.holds:
                self._stop(Stop.CONDITION, "optimality condition holds")
            elif gap <= config.tol:
                self._stop(Stop.GAP, f"gap {gap:.2e} <= tol")
            elif config.max_iter is not None and t >= config.max_iter:
                self._stop(Stop.ITERATION_LIMIT, f"{t} iterations")
            elif run.time_up():
                self._stop(Stop.TIME_LIMIT, f"{run.elapsed():.1f} s")
            if self.stop is None:
                previous, partition, handover = it, it.split.partition, None
            else:
                previous = None  # used by no fallback solve: freed before the certificate's vectors
                handover = self._handover(it)
                if handover is not None:  # solved again by the fallbacks, as iteration t + 1
                    self.stop = None
            del it

    def _one(self, t, partition, previous) -> Iterate | None:
        """Aggregate, build, solve, lift, evaluate and split once; ``None`` when the solve did not
        end optimal (the stop reason is set, and a usable incumbent kept)."""
        problem, data, run = self.problem, self.data, self.run
        with run.timed("aggregate"):
            agg = problem.aggregate(data, partition, previous)
        with pause_gc():
            if self.config.solver in problem.native_methods:
                model, outcome = self._native(agg, previous, partition)
            else:
                model, outcome = run.solve_with_fallbacks(
                    lambda form: problem.build(agg, form=form), need_duals=problem.needs_duals,
                    rebuild=lambda m, o: problem.rebuild(m, o, agg))
        return self._judge(t, partition, agg, model, outcome)

    def _judge(self, t, partition, agg, model, outcome) -> Iterate | None:
        """Lift, bound, evaluate and split a finished solve of ``agg`` (``None`` when it did not
        end optimal: the stop reason is set, and a usable incumbent kept)."""
        problem, data, run = self.problem, self.data, self.run
        with pause_gc():
            try:
                if not outcome.optimal:
                    if (outcome.status == "infeasible" and problem.infeasible_proves
                            and self.best is None):  # a feasible point seen: a solver's error
                        self._stop(Stop.INFEASIBLE, (
                            f"solver {outcome.solver} proved the aggregated model infeasible; "
                            f"{problem.name}'s aggregated models are relaxations of (or equal to) "
                            "the original problem, so it has no feasible solution"))
                        return None
                    self._stop(*run.failure(outcome))
                    if outcome.has_solution and problem.on_nonoptimal(outcome):
                        self._incumbent(t, model, outcome, partition, agg)
                    return None
                with run.timed("lift"):
                    lifted = problem.lift(model, outcome, partition, agg, data)
                F_t = float(outcome.objective)
                bound = call_hook(problem, "lower_bound", outcome, partition, data, lifted)
            finally:
                release(model)
        with run.timed("evaluate"):
            E_t = problem.evaluate(data, lifted)
        if not (math.isfinite(E_t) and math.isfinite(F_t)):
            self._stop(*run.failure(solvers.SolveOutcome(
                solvers.SolveStatus.ERROR, F_t, None, True, outcome.solver, "", 0.0,
                f"non-finite objective: F_t={F_t}, E_t={E_t}")))
            return None
        with run.timed("split"):
            split = problem.split(partition, data, lifted)
        return Iterate(t=t, partition=partition, aggregated=agg, lifted=lifted, F_t=F_t,
                       bound=bound, E_t=E_t, split=split, solver=outcome.solver)

    def _handover(self, it: Iterate):
        """At a condition or gap stop: ``None`` when the certificate passes, else ``(it, failed)``
        to solve the aggregated problem of ``it`` again with the fallbacks of the solver that
        solved it (``failed`` says why, for the result's message), once per solver and
        partition (a refined partition may hand over again), unless ``fallback=False`` or
        ``max_iter`` or the time limit is reached (then noted). The condition (nothing to
        split: F = E at that solution) proves optimality only when the aggregated solve was
        optimal; a certificate that fails beside it says the solve was not, whatever the
        solver reported."""
        config, problem, run = self.config, self.problem, self.run
        if not config.fallback or self.stop not in (Stop.CONDITION, Stop.GAP) or it.solver in self.handed:
            return None
        certificate = self._certify()
        self.history[-1].seconds.update(run.take_seconds())  # the record of ``it``
        if not self._unproven(certificate) or not problem.fallbacks(it.solver):
            return None  # (a certificate that could not be checked has set its own stop)
        limit = ("max_iter" if config.max_iter is not None and it.t >= config.max_iter
                 else "the time limit" if run.time_up() else None)
        if limit is not None:
            run.note(f"the fallbacks of {it.solver} were not tried on its uncertified answer: "
                     f"{limit} reached")
            return None
        self.handed.add(it.solver)
        failed = solvers.SolveOutcome(
            solvers.SolveStatus.FEASIBLE, it.F_t, None, True, it.solver, "", 0.0,
            f"reported optimal at iteration {it.t}, but {_shortfall(certificate)}")
        return it, failed

    def _fallback(self, t, it: Iterate, failed) -> Iterate | None:
        """The aggregated problem of ``it`` solved again by the fallbacks of ``failed.solver``
        (:meth:`_handover`); ``None``, with the stop of ``it`` restored, when none solves it."""
        problem, run, agg = self.problem, self.run, it.aggregated
        with pause_gc():
            model, outcome = run.retry_failed(
                None, failed, lambda form: problem.build(agg, form=form),
                need_duals=problem.needs_duals, rebuild=lambda m, o: problem.rebuild(m, o, agg))
        if not outcome.optimal:  # the retries are noted; the run ends on the stop of ``it``
            release(model)
            self._stop(Stop.CONDITION if it.split.holds else Stop.GAP, self.message)
            return None
        return self._judge(t, it.partition, agg, model, outcome)

    def _unproven(self, certificate, termination=None) -> bool:
        """Whether the loop stopped on the condition or the gap with a ``certificate`` that
        failed where the plug-in's verdict (``termination``, else asked) is ``gap_tolerance``:
        the stop claimed what the original data did not confirm. (A plug-in whose condition is
        its answer on a non-convex problem gives another verdict.)"""
        if certificate is None or certificate.certified or self.stop not in (Stop.CONDITION, Stop.GAP):
            return False
        if termination is None:
            termination = self.problem.final_termination(self.stop, certificate, self.best)
        return termination is Termination.GAP_TOLERANCE

    def _certify(self):
        """The certificate of the best iterate with the bound iterate's duals (None when it
        could not be checked: the stop then says why), computed once per pair of iterates."""
        run, key = self.run, (self.best, self.bound_iterate)
        if self.certified is not None and self.certified[0][0] is key[0] and self.certified[0][1] is key[1]:
            return self.certified[1]
        certificate = None
        with run.guard():
            try:
                with run.timed("certify"):
                    certificate = self.problem.certify(
                        self.data, self.best, bound=self.bound_iterate, solve=run.solve_or_retry,
                        tol=self.config.tol, feasibility_tol=self.config.feasibility_tol,
                        history=self.history)
            except solvers.SolverError as exc:
                stop, text = run.error(exc)  # raises a solver failure if raise_on_failure
                self._stop(stop, f"{self.message}; certificate not checked: {text}".lstrip("; "))
        if run.interrupted and self.stop is not Stop.INTERRUPTED:
            self._stop(Stop.INTERRUPTED, "interrupted (Ctrl-C) while certifying")
        self.certified = (key, certificate)
        return certificate

    def _native(self, agg, previous, partition):
        """The plug-in's own method on the aggregated problem (``solve_native``); the Pyomo
        model it solves is built and written only when ``write_models`` asks for it."""
        run, method = self.run, self.config.solver
        if self.config.write_models is not None:
            with run.timed("build"):
                model = self.problem.build(agg)
            run.write(model)
            release(model)
        with run.timed("solve"), run.alive(f"{method} solving the aggregated problem"):
            solution, outcome = self.problem.solve_native(
                method, agg, previous, partition, tol=self.config.tol, time_limit=run.remaining(),
                options=dict(self.config.solver_options))
        # a Pyomo solver on the same problem when the method misses its own test
        return run.retry_failed(solution, outcome, lambda form: self.problem.build(agg, form=form),
                                need_duals=self.problem.needs_duals)

    def _incumbent(self, t, model, outcome, partition, agg) -> None:
        """A solve stopped early with a feasible point the plug-in accepts: keep it as a
        candidate (its split is not checked; its bound is what the plug-in proves from the
        stopped solve, e.g. a MIP's dual bound)."""
        problem = self.problem
        lifted = problem.lift(model, outcome, partition, agg, self.data)
        E = problem.evaluate(self.data, lifted)
        F = math.nan if outcome.objective is None else float(outcome.objective)
        bound = call_hook(problem, "lower_bound", outcome, partition, self.data, lifted)
        self.message += f"; incumbent of the stopped solve: E = {E:.9g}"
        self._accept(Iterate(t=t, partition=partition, aggregated=agg, lifted=lifted, F_t=F,
                             bound=bound, E_t=E, split=None, solver=outcome.solver))

    def _accept(self, it: Iterate, supersedes: Iterate | None = None) -> None:
        """Keep ``it`` as the best iterate (lowest E; a tie goes to the iterate at which the
        optimality condition holds: it proves more) and/or as the bound iterate.

        ``supersedes``: the last iterate, whose aggregated problem ``it`` solved again after
        its certificate failed (:meth:`_handover`): what it alone proved is dropped (it is no
        longer the bound iterate, and the loop's bound goes back to the one before it); its
        E, a full-data evaluation, stays a candidate."""
        if supersedes is not None:
            if self.bound_iterate is supersedes:
                self.bound_iterate = None
            self.lower = self.history[-2].lower_bound if len(self.history) > 1 else self.initial_lower
        best = self.best
        holds = it.split is not None and it.split.holds
        if best is None or it.E_t < best.E_t or (
                holds and it.E_t <= best.E_t + 1e-12 * max(1.0, abs(best.E_t))):
            self.best = it
        if it.bound is not None:
            kept = self.bound_iterate
            if kept is None or kept.bound is None or it.bound >= kept.bound:
                self.bound_iterate = it
            self.lower = max(self.lower, it.bound)  # the data's own bound may be the larger
        elif self.bound_iterate is None or self.bound_iterate.bound is None:
            self.bound_iterate = it  # no bound proved yet: the latest iterate's duals

    def _initial_iterate(self, best: Iterate | None) -> Iterate | None:
        """The plug-in's initial point as the answer of a run that stopped before its first
        iterate finished, when it is better than ``best`` (the incumbent of a stopped solve, or
        None): evaluated on the full data, never certified (no bound proves anything);
        ``best`` when it is not better or Ctrl-C stops the evaluation too."""
        E = None
        with self.run.guard():
            E = self.problem.evaluate(self.data, self.initial_point)
        if E is None or (best is not None and not E < best.E_t):
            return best
        self.message += (f"; returned the initial sample fit, E = {E:.9g} (not certified: the "
                         "run stopped before its first iterate)")
        return Iterate(t=0, partition=None, aggregated=None, lifted=self.initial_point,
                       F_t=math.nan, bound=None, E_t=E, split=None, solver=self.config.solver)

    # ------------------------------------------------------------------ the end
    def _finish(self, aid: bool) -> AIDResult:
        problem, run, best = self.problem, self.run, self.best
        certificate = None
        if self.history:  # steps of an iteration that did not finish (a stop inside it)
            unfinished = sum(run.take_seconds().values())
            if unfinished:
                self.history[-1].seconds["unfinished"] = round(unfinished, 6)
        if self.initial_point is not None:  # no iterate finished: the better of the two
            best = self.best = self._initial_iterate(best)
        if best is not None and self.bound_iterate is not None:
            certificate = self._certify()
            if self.history:
                self.history[-1].seconds.update(run.take_seconds())
            # a certificate of another objective than the E reported proves nothing about E
            # (an evaluate that under-reports): not certified, and its bound is not reported
            certificate, agrees = run.check_objective(certificate, best.E_t, self.floor)
            # the reported bound is the certificate's, checked on the full data, or none: the
            # aggregated optima that steered the loop are solver-reported values (an interior
            # point's value at a slightly infeasible iterate can pass E by rounding)
            holds = agrees and certificate is not None and certificate.bound_holds
            self.lower = min(max(certificate.dual_objective if holds else -math.inf,
                                 self.initial_lower), best.E_t)
        stop = self.stop or Stop.SOLVER_FAILURE
        termination = problem.final_termination(stop, certificate, best)
        if termination is Termination.CERTIFIED_OPTIMAL and not (
                certificate is not None and certificate.certified):
            # "optimal" only for what a passed certificate proved, whatever the plug-in says
            run.note(f"{problem.name}: final_termination returned certified_optimal without a "
                     "passed certificate; the default verdict is kept")
            termination = AIDProblem.final_termination(problem, stop, certificate, best)
        message = self.message
        if self._unproven(certificate, termination):  # say what was shown, and no more
            message = (f"{_stopped(stop, message, certificate)}, but the answer is "
                       f"{_shortfall(certificate)}: not shown optimal")
        if best is None and stop in (Stop.CONDITION, Stop.GAP):
            message = "no solution to certify"
        result = run.result(
            termination, message, objective=best.E_t if best else math.inf, lower=self.lower,
            solution=problem.public_solution(best, certificate) if best else {},
            certificate=certificate, history=self.history,
            solver=best.solver if best else None, aid=aid, floor=self.floor,
        )
        result.partition = self.last_partition
        return result


def _stopped(stop: Stop, message: str, certificate) -> str:
    """What a condition or gap stop showed (``message``: the loop's words for a gap stop)."""
    if stop is Stop.CONDITION:
        return f"{certificate.condition_name} holds (nothing to split at the aggregated solution)"
    return f"{message} (on the aggregated bounds)"


def _shortfall(certificate) -> str:
    """Why ``certificate`` failed: "not certified on the original data (reasons)"."""
    keys = certificate.residuals if certificate.checked is None else certificate.checked
    failed = [f"{key} {certificate.residuals[key]:.1e} > feasibility_tol {certificate.feasibility_tol:g}"
              for key in keys if not certificate.residuals[key] <= certificate.feasibility_tol]
    if not math.isfinite(certificate.dual_objective):
        failed.insert(0, "no lower bound")
    elif not certificate.relative_gap <= certificate.tol:
        failed.insert(0, f"relative gap {certificate.relative_gap:.2e} > tol {certificate.tol:g}")
    return f"not certified on the original data ({'; '.join(failed) or certificate.note or 'see its certificate'})"
