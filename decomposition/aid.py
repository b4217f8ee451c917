"""The Aggregate and Iterative Disaggregate (AID) driver: one loop for every problem plug-in.

Park & Klabjan (2016), Algorithm 1: cluster the rows, solve the problem on the cluster centroids
(weighted by cluster size), evaluate the solution on the full data, split the clusters that violate
the optimality condition, repeat. This module owns everything that is not problem mathematics:
configuration, the loop, the stopping predicates, timing by step, the iteration log, LP/MPS
writing and the result object; the plug-in (see :mod:`.protocol`) owns the mathematics.

The direct (non-AID) solve is the same machinery with the trivial partition (every row its own
cluster), so both paths build, solve, evaluate and certify through the same code.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from aidopt import solvers
from aidopt.log import run_logging
from aidopt.results import AIDResult, Certificate, IterationRecord, Termination

from .partition import Partition
from .protocol import AIDProblem

logger = logging.getLogger("aidopt.aid")

__all__ = ["AIDConfig", "solve", "solve_direct"]

HEADER = (
    f"{'iter':>5} {'clusters':>9} {'r_t':>9} {'lower(F)':>16} {'upper(E_best)':>16} "
    f"{'gap':>10} {'split':>7} {'time':>8}"
)
#: for problems whose aggregated optimum F_t is not a lower bound (S3VM): F_t and E_t instead
HEADER_NO_BOUND = (
    f"{'iter':>5} {'clusters':>9} {'r_t':>9} {'F_t (no bound)':>16} {'E_t':>16} "
    f"{'E_best':>16} {'split':>7} {'time':>8}"
)


@dataclass
class AIDConfig:
    """Options common to every ``solve_*`` call (validated in ``__post_init__``).

    Attributes
    ----------
    solver : str
        Solver name (``highs`` default, ``gurobi``, ``scip`` or any Pyomo solver).
    tol : float
        Relative duality gap accepted as optimal, ``(E - bound) / max(1, |E|)``.
    feasibility_tol : float
        Tolerance on the scaled dual-feasibility residuals of the certificate.
    max_iter : int or None
        AID iteration limit.
    time_limit : float or None
        Wall-clock limit in seconds for the whole run (passed on to each solve).
    r0 : float or None
        Initial aggregation rate |K_0|/n; the problem's paper default when ``None``.
    seed : int
        Seed of every random choice (sampling, k-means centres).
    write_models : str or Path or None
        Directory to write every solved model as ``.lp`` and ``.mps``.
    log : bool
        Print the iteration table and termination block for this run.
    solver_options : dict
        Passed through untouched to the solver.
    threads : int or None
    tee : bool
        Show the solver's own output.
    raise_on_failure : bool
        Raise :class:`aidopt.solvers.SolverError` when a solve fails (default); otherwise
        return the best solution so far with termination ``solver_failure``.
    fallback : bool
        When an aggregated solve fails, retry it with the plug-in's fallbacks (another model
        form or another installed solver) before giving up; each retry is logged and recorded.
    """

    solver: str = solvers.DEFAULT_SOLVER
    tol: float = 1e-6
    feasibility_tol: float = 1e-6
    max_iter: int | None = None
    time_limit: float | None = None
    r0: float | None = None
    seed: int = 0
    write_models: str | Path | None = None
    log: bool = True
    solver_options: dict = field(default_factory=dict)
    threads: int | None = None
    tee: bool = False
    raise_on_failure: bool = True
    fallback: bool = True

    def __post_init__(self):
        if not isinstance(self.solver, str) or not self.solver:
            raise TypeError(f"solver must be a solver name, got {self.solver!r}")
        for name in ("tol", "feasibility_tol"):
            val = getattr(self, name)
            if not (isinstance(val, int | float) and math.isfinite(val) and 0 <= val < 1):
                raise ValueError(f"{name} must be a number in [0, 1), got {val!r}")
        if self.max_iter is not None and (not isinstance(self.max_iter, int) or self.max_iter < 1):
            raise ValueError(f"max_iter must be a positive integer or None, got {self.max_iter!r}")
        if self.time_limit is not None and not (
            isinstance(self.time_limit, int | float) and self.time_limit > 0
        ):
            raise ValueError(f"time_limit must be positive seconds or None, got {self.time_limit!r}")
        if self.r0 is not None and not (isinstance(self.r0, int | float) and 0 < self.r0 <= 1):
            raise ValueError(f"r0 must be in (0, 1], got {self.r0!r}")
        if not isinstance(self.seed, int | np.integer):
            raise TypeError(f"seed must be an integer, got {self.seed!r}")
        if self.threads is not None and (not isinstance(self.threads, int) or self.threads < 1):
            raise ValueError(f"threads must be a positive integer or None, got {self.threads!r}")
        self.solver_options = dict(self.solver_options or {})

    def as_dict(self) -> dict:
        out = asdict(self)
        out["write_models"] = None if self.write_models is None else str(self.write_models)
        return out


class _Run:
    """State of one run: clock, solver call and model writing shared by the steps."""

    def __init__(self, problem: AIDProblem, data, config: AIDConfig):
        self.problem = problem
        self.data = data
        self.config = config
        self.start = time.perf_counter()
        self.spec = solvers.check_solver(config.solver, problem.problem_class)
        problem.configure(self.spec)
        self.options = {**getattr(problem, "solver_defaults", {}).get(config.solver, {}),
                        **config.solver_options}
        self.n_models = 0
        self.retries: list[str] = []
        if config.write_models is not None:
            Path(config.write_models).mkdir(parents=True, exist_ok=True)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def remaining(self) -> float | None:
        if self.config.time_limit is None:
            return None
        return self.config.time_limit - self.elapsed()

    def solve(self, model, need_duals: bool = False, solver: str | None = None) -> solvers.SolveOutcome:
        self.write(model)
        solver = solver or self.config.solver
        options = self.options if solver == self.config.solver else dict(
            getattr(self.problem, "solver_defaults", {}).get(solver, {}))
        return solvers.solve_model(
            model,
            solver,
            problem_class=self.problem.problem_class,
            need_duals=need_duals,
            time_limit=self.remaining(),
            threads=self.config.threads,
            tee=self.config.tee,
            options=options,
        )

    def solve_aggregated(self, aggregated, seconds: dict):
        """Build and solve one aggregated model; on a failed solve, try the plug-in's fallbacks.

        A plug-in may offer ``fallbacks(solver) -> [(solver, form), ...]`` (e.g. the other QP
        form, or another installed solver), tried when a solve fails or a size-limited licence
        refuses the model. Each retry is logged and recorded (once) in the result's message; the
        solution of a retry is certified like any other.
        """
        problem = self.problem
        with _timed(seconds, "build"):
            model = problem.build(aggregated)
        try:
            model, outcome = self._solve_checked(model, aggregated, seconds, problem.needs_duals)
        except solvers.SolverCapabilityError as exc:  # e.g. a size-limited licence refused it
            if not (self.config.fallback and getattr(problem, "fallbacks", None)):
                raise
            outcome = solvers.SolveOutcome("refused", None, None, False, self.config.solver, "",
                                           0.0, "model too large for its licence"
                                           if "licence" in str(exc) else str(exc)[:200])
        if outcome.optimal or outcome.status == "time_limit" or not self.config.fallback:
            return model, outcome
        for solver, form in getattr(problem, "fallbacks", lambda s: [])(self.config.solver):
            if solvers.availability(solver) not in ("full", "limited"):
                continue
            failed = f"{outcome.solver} returned {outcome.status} ({outcome.message})"
            _release(model)
            model = problem.build(aggregated, form=form) if form else problem.build(aggregated)
            try:
                model, outcome = self._solve_checked(model, aggregated, seconds, True, solver)
            except solvers.SolverError as exc:
                logger.warning("retry with %s failed: %s", solver, exc)
                continue
            note = f"{failed}; retried with {solver}" + (f" ({form} form)" if form else "")
            logger.info("%s: %s", note, outcome.status)
            if note + f": {outcome.status}" not in self.retries:
                self.retries.append(note + f": {outcome.status}")
            if outcome.optimal:
                break
        return model, outcome

    def _solve_checked(self, model, aggregated, seconds, need_duals, solver=None):
        """Solve; a plug-in with ``rebuild(model, outcome, aggregated)`` may then ask for one more
        solve of a rebuilt model (S3VM: when its trial big-M is not verified)."""
        with _timed(seconds, "solve"):
            outcome = self.solve(model, need_duals=need_duals, solver=solver)
        if outcome.optimal and hasattr(self.problem, "rebuild"):
            again = self.problem.rebuild(model, outcome, aggregated)
            if again is not None:
                logger.debug("the plug-in rebuilt the model after the solve; solving again")
                _release(model)
                model = again
                with _timed(seconds, "solve"):
                    outcome = self.solve(model, need_duals=need_duals, solver=solver)
        return model, outcome

    def write(self, model) -> None:
        """Write ``model`` as LP and MPS with readable names when ``write_models`` is set."""
        if self.config.write_models is None:
            return
        self.n_models += 1
        stem = Path(self.config.write_models) / f"{self.n_models:03d}_{model.name}"
        for suffix in ("lp", "mps"):
            model.write(
                f"{stem}.{suffix}", format=suffix, io_options={"symbolic_solver_labels": True}
            )


@contextlib.contextmanager
def _timed(seconds: dict, step: str):
    t0 = time.perf_counter()
    try:
        yield
    finally:
        seconds[step] = seconds.get(step, 0.0) + time.perf_counter() - t0


@contextlib.contextmanager
def _pause_gc():
    """No automatic garbage collection while a Pyomo model is built and solved.

    A model is millions of small container objects: the cyclic collector would traverse them again
    and again while they are created. The loop frees each model with :func:`_release` instead.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _release(model) -> None:
    """Free a solved Pyomo model now, by reference counting.

    A Pyomo block and its components form reference cycles, so a dropped model waits for a full
    cyclic collection, which in the loop meant one model more held per iteration (10.1 GB peak at
    n = 10^6, m = 100, against 3.8 GB when each model is freed) or a 1 s collection per iteration.
    Deleting the components first lets reference counting free the expressions at once (0.3 s for
    a 2M-nonzero model, 55 cyclic objects left for the collector).
    """
    for component in list(model.component_objects(descend_into=False)):
        model.del_component(component)


def solve(problem: AIDProblem, data, config: AIDConfig | None = None) -> AIDResult:
    """Solve ``problem`` on ``data`` by AID; see the module docstring for the loop."""
    config = config or AIDConfig()
    with run_logging(config.log):
        run = _Run(problem, data, config)
        n, m = data.n, data.m
        rng = np.random.default_rng(config.seed)
        r0 = config.r0 if config.r0 is not None else problem.default_r0(n, m)
        k0 = min(n, max(problem.min_clusters(data), math.ceil(r0 * n)))
        _log_intro(run, n, m, f"AID, r0={r0:.4g}, |K_0| target {k0}")
        seconds: dict[str, float] = {}
        try:
            with _timed(seconds, "cluster"):
                partition = problem.initial_partition(data, k0, rng, run.solve)
        except solvers.TimeLimitReached as exc:
            return _result(run, Termination.TIME_LIMIT, str(exc), aid=True)
        except solvers.SolverError as exc:
            if config.raise_on_failure:
                raise
            return _result(run, Termination.SOLVER_FAILURE, str(exc), aid=True)
        return _loop(run, partition, seconds, aid=True)


def solve_direct(problem: AIDProblem, data, config: AIDConfig | None = None) -> AIDResult:
    """Solve ``problem`` on the full data in one model (the trivial partition), and certify."""
    config = config or AIDConfig()
    with run_logging(config.log):
        run = _Run(problem, data, config)
        _log_intro(run, data.n, data.m, "direct full model (no aggregation)")
        partition = Partition(np.arange(data.n, dtype=np.int64), np.ones(data.n, dtype=np.int64))
        return _loop(run, partition, {}, aid=False)


def _loop(run: _Run, partition: Partition, seconds: dict, *, aid: bool) -> AIDResult:
    problem, data, config = run.problem, run.data, run.config
    history: list[IterationRecord] = []
    best = None
    E_best, lower = math.inf, -math.inf
    termination, message = None, ""
    bound = None  # (solution, partition, aggregated) of the iteration with the best lower bound
    t = 0
    f_is_bound = getattr(problem, "aggregated_bound", True)
    logger.info(HEADER if f_is_bound else HEADER_NO_BOUND)
    while termination is None:
        t += 1
        with _timed(seconds, "aggregate"):
            agg = problem.aggregate(data, partition)
        with _pause_gc():
            model, outcome = run.solve_aggregated(agg, seconds)
            if not outcome.optimal:
                termination, message = _failed_solve(outcome, config)
                if (outcome.status == "time_limit" and outcome.has_solution
                        and getattr(problem, "accept_incumbent", False)):
                    # a MIP stopped at the time limit: its incumbent is a solution like any other
                    incumbent = problem.lift(model, outcome, partition, agg, data)
                    E_inc = problem.evaluate(data, incumbent)
                    message += f"; incumbent of the stopped solve: E = {E_inc:.9g}"
                    if E_inc < E_best:
                        E_best, best = E_inc, incumbent
                    if bound is None:
                        bound = (incumbent, partition, agg)
                break
            F_t = float(outcome.objective)
            with _timed(seconds, "evaluate"):
                solution = problem.lift(model, outcome, partition, agg, data)
        with _timed(seconds, "evaluate"):
            _release(model)
            del model, outcome
            E_t = problem.evaluate(data, solution)
        if not (math.isfinite(E_t) and math.isfinite(F_t)):
            termination, message = _failed_solve(
                solvers.SolveOutcome("error", F_t, None, True, config.solver, "", 0.0,
                                     f"non-finite objective: F_t={F_t}, E_t={E_t}"),
                config,
            )
            break
        with _timed(seconds, "split"):
            new_partition, n_split = problem.split(partition, data, solution)
        # a tie goes to the iterate at which the optimality condition holds (it proves more)
        if E_t < E_best or (new_partition is None and E_t <= E_best + 1e-12 * max(1.0, abs(E_best))):
            E_best, best = E_t, solution
        if not f_is_bound:  # only a bound the plug-in proved (a direct MIP's) counts
            lower, bound = max(lower, solution.get("_lower_bound", -math.inf)), (solution, partition, agg)
        elif F_t >= lower:
            lower, bound = F_t, (solution, partition, agg)
        gap = _relative_gap(E_best, lower)
        history.append(
            IterationRecord(
                t=t, n_clusters=partition.n_clusters, r_t=partition.n_clusters / data.n,
                F_t=F_t, E_t=E_t, E_best=E_best, lower_bound=lower, gap=gap, n_split=n_split,
                seconds={k: round(v, 6) for k, v in seconds.items()},
            )
        )
        _log_row(history[-1], run.elapsed(), f_is_bound)
        seconds = {}
        if new_partition is None:
            termination = getattr(problem, "condition_termination", Termination.CERTIFIED_OPTIMAL)
            message = "optimality condition holds"
        elif gap <= config.tol:
            termination, message = Termination.GAP_TOLERANCE, f"gap {gap:.2e} <= tol"
        elif config.max_iter is not None and t >= config.max_iter:
            termination, message = Termination.ITERATION_LIMIT, f"{t} iterations"
        elif config.time_limit is not None and run.elapsed() >= config.time_limit:
            termination, message = Termination.TIME_LIMIT, f"{run.elapsed():.1f} s"
        else:
            partition = new_partition

    certificate = None
    if best is not None:
        t0 = time.perf_counter()
        certificate = problem.certify(
            data, best, dual_solution=bound[0], partition=bound[1], aggregated=bound[2],
            solve=run.solve, tol=config.tol, feasibility_tol=config.feasibility_tol,
        )
        if history:
            history[-1].seconds["certify"] = round(time.perf_counter() - t0, 6)
        termination = _final_termination(termination, certificate)
        # the certified bound is the full-data dual objective; a solver-reported F_t (an interior
        # point's value at a slightly infeasible iterate) can pass E by rounding: cap it
        lower = certificate.dual_objective if certificate.certified else lower
        lower = min(lower, E_best)
    elif termination in (Termination.CERTIFIED_OPTIMAL, Termination.GAP_TOLERANCE,
                         Termination.PROP5_OPTIMAL):
        termination, message = Termination.SOLVER_FAILURE, "no solution to certify"
    return _result(
        run, termination, message, aid=aid, objective=E_best, lower=lower,
        solution=problem.public_solution(best) if best is not None else {},
        certificate=certificate, history=history,
    )


def _result(run, termination, message, *, aid, objective=math.inf, lower=-math.inf,
            solution=None, certificate=None, history=None) -> AIDResult:
    result = AIDResult(
        problem=run.problem.name,
        termination=termination,
        objective=objective,
        lower_bound=lower,
        gap=_relative_gap(objective, lower),
        solution=solution or {},
        certificate=certificate,
        history=history or [],
        solver=run.config.solver,
        solver_version=solvers.version(run.config.solver),
        aid=aid,
        n=run.data.n,
        m=run.data.m,
        seconds=run.elapsed(),
        config=run.config.as_dict(),
        message="; ".join([message, *run.retries]) if run.retries else message,
    )
    _log_termination(result)
    return result


def _relative_gap(upper: float, lower: float) -> float:
    if not math.isfinite(upper) or not math.isfinite(lower):
        return math.inf
    return max(0.0, upper - lower) / max(1.0, abs(upper))


def _failed_solve(outcome: solvers.SolveOutcome, config: AIDConfig):
    if outcome.status == "time_limit":
        return Termination.TIME_LIMIT, f"solver stopped at the time limit ({outcome.message})"
    text = f"solver {outcome.solver} returned {outcome.status} ({outcome.message})"
    if config.raise_on_failure:
        raise solvers.SolverError(
            text + "; pass raise_on_failure=False to get the best solution so far instead."
        )
    return Termination.SOLVER_FAILURE, text


def _final_termination(termination: Termination, certificate: Certificate) -> Termination:
    """Only a passed full-data certificate makes a run optimal; limits keep their reason."""
    if certificate.certified:
        return Termination.CERTIFIED_OPTIMAL
    if termination is Termination.PROP5_OPTIMAL and certificate.sign_condition is not None:
        return Termination.PROP5_OPTIMAL if certificate.sign_condition else Termination.PROP5_NOT_BEST
    if termination in (Termination.CERTIFIED_OPTIMAL, Termination.GAP_TOLERANCE,
                       Termination.PROP5_OPTIMAL):
        return Termination.GAP_TOLERANCE
    return termination


def _log_intro(run: _Run, n: int, m: int, mode: str) -> None:
    from aidopt import __version__

    logger.info(
        "aidopt %s | problem %s | n=%d m=%d | solver %s %s | %s",
        __version__, run.problem.name, n, m, run.config.solver,
        solvers.version(run.config.solver), mode,
    )
    logger.info(
        "tol %g | feasibility_tol %g | max_iter %s | time_limit %s | seed %d",
        run.config.tol, run.config.feasibility_tol, run.config.max_iter,
        run.config.time_limit, run.config.seed,
    )


def _log_row(rec: IterationRecord, elapsed: float, f_is_bound: bool = True) -> None:
    middle = f"{rec.E_best:>16.9g} {rec.gap:>10.3e}" if f_is_bound else (
        f"{rec.E_t:>16.9g} {rec.E_best:>16.9g}")
    logger.info(
        f"{rec.t:>5} {rec.n_clusters:>9} {rec.r_t:>9.4g} {rec.F_t:>16.9g} {middle} "
        f"{rec.n_split:>7} {elapsed:>8.2f}"
    )


def _log_termination(result: AIDResult) -> None:
    logger.info("-" * len(HEADER))
    logger.info(result.summary())
