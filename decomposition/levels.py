r"""The search over distance levels: one loop for the p-center and the p-dispersion
(docs/facility.md).

Both problems ask for the best *key* among finitely many (the distinct distances of their data:
the p-center's radius, the p-dispersion's negated smallest distance), and each has a test,
"is key v feasible?", that is monotone: feasible at v means feasible at every larger key. The
optimum is the smallest feasible key. The loop keeps

* ``good``: the smallest key known feasible, with a solution attaining it (first a heuristic's);
* ``lo``: every key below ``lo`` (closed: ``lo`` itself undecided; from a bound on the data) or
  at most ``lo`` (open: ``lo`` proven infeasible by a test) is infeasible;

and tests the median of the levels still undecided, strictly between the two, until none is
left (bisection: :math:`\lceil \log_2 (L + 1) \rceil` tests for L undecided levels). Then
``good`` is optimal: it is feasible, and every smaller level is infeasible, the largest of them
proven so by a test (or all of them by the bound). The certificate reports both ends and how
each was proven; it is certified only when the search ended so and the returned solution,
evaluated on the original data, attains ``good``.

A problem provides a :class:`LevelTest`; the loop and everything else (limits, failures,
Ctrl-C, the iteration table, the result) come from the run framework (:class:`~.run.Run`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aidopt.decomposition.protocol import relative_gap
from aidopt.decomposition.run import Column, Run, RunConfig, run_scope
from aidopt.models._data import build_deadline

from aidopt import solvers
from aidopt.data.coverage import CoverageTimeLimit
from aidopt.results import AIDResult, Certificate, IterationRecord, Termination

__all__ = ["LevelTest", "Verdict", "Start", "level_search", "COLUMNS"]

COLUMNS = [
    Column("test", 5, "d"), Column("level", 16, ".10g"), Column("verdict", 11, "s"),
    Column("rows", 9, "d"), Column("MIP bound", 11, ".6g"), Column("undecided", 10, "d"),
    Column("best", 16, ".10g"),
]


@dataclass
class Start:
    """Where the search starts: keys below ``floor`` are infeasible (``floor_proof`` says why)
    and ``solution`` (a heuristic's) is feasible."""

    floor: float
    floor_proof: str
    solution: Any


@dataclass
class Verdict:
    """One level's test: ``feasible`` True (with ``solution``), False (``proof`` says how it was
    proven) or None (undecided: the solver stopped, ``status`` says why)."""

    feasible: bool | None
    solution: Any = None
    proof: str = ""
    status: str = ""
    rows: int = 0
    bound: float = math.nan
    info: dict = field(default_factory=dict)


class LevelTest:
    """What a problem gives :func:`level_search` (override every method)."""

    name = "levels"
    problem_class = solvers.ProblemClass.MILP
    #: what a key is, for the log and the certificate (e.g. "radius")
    key_name = "level"
    #: the levels on the infeasible side of the optimum, in the problem's own terms
    worse_one, worse_all = "the level just below", "every smaller level"

    def dimensions(self) -> dict:
        return {}

    def solver_defaults(self, solver: str) -> dict:
        return {}

    def fallbacks(self, solver: str) -> list:
        return []

    def start(self, run: Run) -> Start:
        """The bound and a feasible solution (raise ``CoverageTimeLimit`` at the deadline)."""
        raise NotImplementedError

    def levels(self, lo: float, lo_closed: bool, hi: float, deadline) -> tuple[np.ndarray, bool]:
        """The keys from ``lo`` (closed or open) to ``hi`` (open), sorted, and whether that is
        all of them (else a sample of real keys in the interval)."""
        raise NotImplementedError

    def test(self, run: Run, key: float) -> Verdict:
        """Is ``key`` feasible?"""
        raise NotImplementedError

    def evaluate(self, solution) -> float:
        """The key ``solution`` attains, computed on the original data."""
        raise NotImplementedError

    def residuals(self, solution) -> dict[str, float]:
        """The feasibility checks of ``solution`` on the original data (0: holds)."""
        return {}

    def gap_floor(self) -> float:
        return 1.0

    def public_solution(self, solution, key: float) -> dict:
        raise NotImplementedError

    def display(self, key: float) -> float:
        """``key`` as the log shows it (e.g. the distance for a negated key)."""
        return key


def level_search(test: LevelTest, config: RunConfig, *, mode: str = "") -> AIDResult:
    """Bisect over the levels of ``test`` until the optimal one is proven (module docstring).

    The result's ``objective`` is the key of the returned solution, ``lower_bound`` the
    smallest key not proven infeasible (the optimum when certified); ``termination`` is
    ``certified_optimal`` when no level is left undecided and the returned solution attains the
    smallest feasible one on the original data.
    """
    run = Run(test.name, test.problem_class, config, defaults=test.solver_defaults,
              dimensions=test.dimensions(), mode=mode or "bisection over distance levels",
              fallbacks=test.fallbacks)
    with run_scope(config), build_deadline(run.deadline):
        run.intro()
        history: list[IterationRecord] = []
        start = solution = None
        good = lo = math.nan
        lo_closed, lo_proof = True, ""
        termination, message, undecided = None, "", None
        known: np.ndarray | None = None  # every undecided level, once they fit in memory
        with run.guard():
            try:
                with run.timed("start"):
                    start = test.start(run)
                solution, good = start.solution, test.evaluate(start.solution)
                lo, lo_proof = start.floor, start.floor_proof
                run.header(COLUMNS)
                t = 0
                while termination is None:
                    if known is None:
                        keys, exact = test.levels(lo, lo_closed, good, run.deadline)
                        if exact:
                            known = keys
                    else:
                        keys = known[((known >= lo) if lo_closed else (known > lo)) & (known < good)]
                        known = keys
                    undecided = keys.size if known is not None else None
                    if keys.size == 0:
                        termination = Termination.CERTIFIED_OPTIMAL
                        break
                    if config.max_iter is not None and t >= config.max_iter:
                        termination, message = Termination.ITERATION_LIMIT, f"{t} level tests"
                        break
                    t += 1
                    v = float(keys[(keys.size - 1) // 2])
                    with run.timed("test"):
                        verdict = test.test(run, v)
                    if verdict.feasible:
                        solution, good = verdict.solution, test.evaluate(verdict.solution)
                        text = "feasible"
                    elif verdict.feasible is False:
                        lo, lo_closed, lo_proof = v, False, verdict.proof
                        text = "infeasible"
                    else:
                        text = "undecided"
                    if known is None:
                        left = -1  # not known: a sample was tested
                    elif verdict.feasible is None:
                        left = keys.size
                    elif verdict.feasible:
                        left = (keys.size - 1) // 2
                    else:
                        left = keys.size - 1 - (keys.size - 1) // 2
                    history.append(IterationRecord(
                        t=t, n_clusters=verdict.rows, r_t=math.nan, F_t=test.display(v),
                        E_t=good, E_best=good, lower_bound=lo, gap=math.nan, n_split=0,
                        seconds=run.take_seconds(),
                        info={"level": test.display(v), "feasible": float(bool(verdict.feasible))
                              if verdict.feasible is not None else math.nan,
                              "rows": float(verdict.rows), "mip_bound": verdict.bound,
                              **verdict.info}))
                    run.row(t, test.display(v), text, verdict.rows, verdict.bound, left,
                            test.display(good))
                    if verdict.feasible is None:
                        stop = verdict.status or "solver_failure"
                        termination = Termination(stop if stop in ("time_limit", "interrupted")
                                                  else "solver_failure")
                        message = f"the test of level {test.display(v):.10g} stopped ({stop})"
                        if termination is Termination.SOLVER_FAILURE and config.raise_on_failure:
                            raise solvers.SolverError(
                                message + "; pass raise_on_failure=False to get the best "
                                "solution so far instead.")
                    elif run.time_up():
                        termination, message = Termination.TIME_LIMIT, f"{run.elapsed():.1f} s"
            except CoverageTimeLimit as exc:
                termination, message = Termination.TIME_LIMIT, str(exc)
            except solvers.SolverError as exc:
                stop, message = run.error(exc)
                termination = Termination(stop)
        if run.interrupted:
            termination, message = Termination.INTERRUPTED, "interrupted (Ctrl-C)"
        if solution is None:
            return run.result(termination or Termination.SOLVER_FAILURE, message,
                              history=history, aid=False)
        return _finish(run, test, solution, good, lo, lo_closed, lo_proof, known, termination,
                       message, history, undecided)


def _finish(run, test, solution, good, lo, lo_closed, lo_proof, known, termination, message,
            history, undecided) -> AIDResult:
    """The certificate and the result (see :func:`level_search`)."""
    E = test.evaluate(solution)
    residuals = test.residuals(solution)
    residuals["key above the best level found"] = max(0.0, E - good)
    ended = termination is Termination.CERTIFIED_OPTIMAL
    if ended:
        lower = good
    elif known is not None and known.size:
        lower = float(known[0])  # the smallest level not proven infeasible
    else:
        lower = lo  # every key below it is infeasible (at it too when open)
    lower = min(lower, E)
    floor = test.gap_floor()
    rel = relative_gap(E, lower, floor)
    feasible = all(v == 0 for v in residuals.values())
    certified = bool(ended and feasible and rel <= run.config.tol)
    name = test.key_name
    shown = test.display(good)
    if ended and not lo_closed:
        below = (f"{test.worse_one}, {test.display(lo):.10g}, is infeasible ({lo_proof}); "
                 "no level lies between the two")
    elif ended:
        below = f"{test.worse_all} is infeasible ({lo_proof})"
    else:
        below = (f"undecided levels are left ({'unknown number' if undecided is None else undecided}); "
                 f"the levels beyond {test.display(lo):.10g}"
                 f"{'' if lo_closed else ' (it included)'} are infeasible ({lo_proof})")
    note = (f"{'optimal' if ended else 'best'} {name} {shown:.10g} is feasible (the returned "
            f"solution attains it); {below}")
    certificate = Certificate(
        method="level_search", certified=certified, primal_objective=E, dual_objective=lower,
        relative_gap=float(rel), residuals=residuals, tol=run.config.tol,
        feasibility_tol=run.config.feasibility_tol, sign_condition=ended, checked=list(residuals),
        condition_name="levels left undecided", condition="none: the search is complete",
        note=note)
    if ended:
        termination = Termination.CERTIFIED_OPTIMAL if certified else Termination.GAP_TOLERANCE
        message = message or f"{len(history)} level tests"
    public = test.public_solution(solution, E)
    public["search"] = {
        "optimal_level": test.display(good) if ended else None,
        "best_level": test.display(good),
        "infeasible_level": None if lo_closed else test.display(lo),
        "infeasible_proof": lo_proof,
        "tests": len(history),
        "undecided": 0 if ended else undecided,
    }
    return run.result(termination, message, objective=E, lower=lower, solution=public,
                      certificate=certificate, history=history, aid=False, floor=floor)
