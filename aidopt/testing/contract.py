"""The plug-in contract as an executable check: :func:`check_plugin`.

Every AID plug-in (a subclass of :class:`aidopt.decomposition.AIDProblem`) must pass it::
    check_plugin(lambda: MyProblem(C=1.0), data_a, "highs", other_data=data_b)

It runs the plug-in through the real driver several times on small data and asserts what the
driver and users rely on:

* **declaration**: it subclasses ``AIDProblem``, overrides every abstract hook, and every hook it
  overrides takes what the driver passes (a hook with its earlier published signature,
  ``lower_bound(outcome, partition, data)``, passes with a ``DeprecationWarning``);
* **only declared hooks**: the driver sees the plug-in through a recording proxy; every attribute
  it reads is declared on ``AIDProblem`` and it sets none; every hook returns its declared type
  (``lift`` a ``Lifted``, ``split`` a ``Split`` that refines the partition, ...); ``configure``
  comes first and once;
* **no state between runs**: ``vars(problem)`` after a run equals a fresh object after
  ``configure`` alone, and the data's arrays are unchanged; solving A twice, then B, then A gives
  identical results, and B equals B on a fresh object;
* **results**: the history is consistent (E_best is the running minimum of E_t, the bound never
  decreases, gap = relative gap of E_best and the bound); ``certified_optimal`` only with a passed
  certificate; the certificate's primal objective is the E that ``evaluate`` reported (within
  ``tol``, relative); ``result.solver`` is the solver that produced the solution; for a convex
  problem AID and the direct solve agree and every proven bound is below the optimum;
* **limits**: ``max_iter=1`` stops after one iteration (``iteration_limit`` or an earlier
  legitimate stop); a tiny ``time_limit`` returns ``time_limit`` and never raises, with
  ``raise_on_failure`` True or False (a time limit is not a failure);
* **output**: every model ``build`` makes can be written as LP and MPS (``write_models``) and the
  result serialises to JSON.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import math
import numbers
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyomo.environ as pyo

from aidopt import solvers
from aidopt._version import __version__
from aidopt.decomposition.aid import solve, solve_direct
from aidopt.decomposition.partition import Partition
from aidopt.decomposition.protocol import (
    GROWN_HOOKS,
    AIDProblem,
    Iterate,
    Lifted,
    Split,
    earlier_signature,
    relative_difference,
    relative_gap,
)
from aidopt.decomposition.run import BUILTIN_METHODS, RunConfig
from aidopt.results import AIDResult, Certificate, Termination

__all__ = ["ABSTRACT_HOOKS", "HookRecorder", "check_plugin", "declared_names", "same_result"]

#: hooks without a default: every plug-in implements them (the AIDProblem docstring's list)
ABSTRACT_HOOKS = ("default_r0", "initial_partition", "aggregate", "build", "lift", "evaluate",
                  "split", "certify")

#: verdicts that end a run early and legitimately (before an iteration limit could)
EARLY_STOPS = {Termination.CERTIFIED_OPTIMAL, Termination.GAP_TOLERANCE, Termination.PROP5_OPTIMAL,
               Termination.PROP5_NOT_BEST}


def declared_names() -> set[str]:
    """Every public name the driver may use on a plug-in: the hooks and attributes declared on
    :class:`AIDProblem` itself."""
    names = {n for n in vars(AIDProblem) if not n.startswith("_")}
    names |= set(getattr(AIDProblem, "__annotations__", {}))
    return names


# --------------------------------------------------------------------------- the proxy
@dataclass
class Call:
    hook: str
    args: tuple
    kwargs: dict
    result: object = None
    raised: BaseException | None = None


class HookRecorder:
    """Stands in for a plug-in in the driver: records every attribute the driver reads or sets
    and every call of a method (arguments, result), and forwards everything to the plug-in.

    ``isinstance(proxy, AIDProblem)`` holds (``__class__`` is the plug-in's class), so the driver
    cannot tell. The plug-in's own calls of its methods (``self.build`` inside
    ``initial_partition``) are not recorded: they do not go through the proxy.
    """

    def __init__(self, target):
        object.__setattr__(self, "_rec_target", target)
        object.__setattr__(self, "_rec_read", [])
        object.__setattr__(self, "_rec_set", [])
        object.__setattr__(self, "_rec_calls", [])

    @property
    def __class__(self):  # isinstance() sees the plug-in's class
        return type(object.__getattribute__(self, "_rec_target"))

    def __getattr__(self, name):
        target = object.__getattribute__(self, "_rec_target")
        object.__getattribute__(self, "_rec_read").append(name)
        value = getattr(target, name)
        if not inspect.ismethod(value):
            return value
        calls = object.__getattribute__(self, "_rec_calls")

        def recorded(*args, **kwargs):
            call = Call(name, args, kwargs)
            calls.append(call)
            try:
                call.result = value(*args, **kwargs)
            except BaseException as exc:
                call.raised = exc
                raise
            return call.result

        return recorded

    def __setattr__(self, name, value):
        object.__getattribute__(self, "_rec_set").append(name)
        setattr(object.__getattribute__(self, "_rec_target"), name, value)

    @property
    def rec_read(self) -> list[str]:
        return object.__getattribute__(self, "_rec_read")

    @property
    def rec_set(self) -> list[str]:
        return object.__getattribute__(self, "_rec_set")

    @property
    def rec_calls(self) -> list[Call]:
        return object.__getattribute__(self, "_rec_calls")


# --------------------------------------------------------------------------- comparisons
def _same(a, b) -> bool:
    """Structural equality for plug-in attributes and solutions (arrays, dicts, floats, NaN)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and bool(
            np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and _same(vars(a), vars(b))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - objects without a usable ==
        return a is b


def _close(a: float, b: float, rtol: float) -> bool:
    if not (math.isfinite(a) and math.isfinite(b)):
        return a == b or (math.isnan(a) and math.isnan(b))
    return abs(a - b) <= rtol * max(1.0, abs(a), abs(b))


def same_result(r1: AIDResult, r2: AIDResult, *, rtol: float = 1e-9) -> list[str]:
    """What differs between two results of the same run (empty when they are the same): the
    termination, the objective and bound, the partition sizes and objectives of every iteration,
    and the solution arrays."""
    diffs = []
    if r1.termination != r2.termination:
        diffs.append(f"termination {r1.termination} != {r2.termination}")
    for key in ("objective", "lower_bound"):
        if not _close(getattr(r1, key), getattr(r2, key), rtol):
            diffs.append(f"{key} {getattr(r1, key)!r} != {getattr(r2, key)!r}")
    k1, k2 = [h.n_clusters for h in r1.history], [h.n_clusters for h in r2.history]
    if k1 != k2:
        diffs.append(f"clusters per iteration {k1} != {k2}")
    else:
        for h1, h2 in zip(r1.history, r2.history, strict=True):
            if not (_close(h1.F_t, h2.F_t, rtol) and _close(h1.E_t, h2.E_t, rtol)):
                diffs.append(f"iteration {h1.t}: F_t/E_t {h1.F_t}/{h1.E_t} != {h2.F_t}/{h2.E_t}")
    if r1.solution.keys() != r2.solution.keys():
        diffs.append(f"solution keys {sorted(r1.solution)} != {sorted(r2.solution)}")
    else:
        for key, v1 in r1.solution.items():
            v2 = r2.solution[key]
            try:
                a1, a2 = np.asarray(v1, dtype=float), np.asarray(v2, dtype=float)
            except (TypeError, ValueError):
                if not _same(v1, v2):
                    diffs.append(f"solution[{key!r}] differs")
                continue
            if a1.shape != a2.shape or not np.allclose(a1, a2, rtol=rtol * 100, atol=rtol * 100,
                                                        equal_nan=True):
                diffs.append(f"solution[{key!r}] differs")
    return diffs


# --------------------------------------------------------------------------- the checks
@dataclass
class Report:
    """What :func:`check_plugin` ran, for the caller's own extra assertions."""

    aid: AIDResult
    direct: AIDResult | None
    recorder: HookRecorder
    results: dict = field(default_factory=dict)


def check_declaration(problem) -> None:
    assert isinstance(problem, AIDProblem), f"{type(problem).__name__} does not subclass AIDProblem"
    missing = [h for h in ABSTRACT_HOOKS if getattr(type(problem), h) is getattr(AIDProblem, h)]
    assert not missing, f"{type(problem).__name__} does not implement the abstract hook(s) {missing}"
    assert isinstance(problem.name, str) and problem.name, "name must be a non-empty string"
    assert solvers.ProblemClass(problem.problem_class) in solvers.ProblemClass
    assert isinstance(problem.needs_duals, bool | np.bool_)
    assert isinstance(problem.element, str) and problem.element
    assert isinstance(problem.per_element_keys, tuple)
    assert isinstance(problem.table_info, tuple) and all(
        isinstance(key, str) and key for key in problem.table_info)
    assert isinstance(problem.infeasible_proves, bool | np.bool_), "infeasible_proves must be a bool"
    for hook in declared_names():  # every overridden hook takes what the driver passes
        base = getattr(AIDProblem, hook)
        own = getattr(type(problem), hook, base)
        if own is base or not inspect.isfunction(base) or not inspect.isfunction(own):
            continue
        if hook in GROWN_HOOKS and earlier_signature(type(problem), hook):
            continue  # the earlier published signature: deprecated (a DeprecationWarning), called right
        wanted = [q.name for q in inspect.signature(base).parameters.values()
                  if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)]
        params = inspect.signature(own).parameters.values()
        takes = [q.name for q in params if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)]
        varargs = any(q.kind is q.VAR_POSITIONAL for q in params)
        assert varargs or len(takes) >= len(wanted), (
            f"{type(problem).__name__}.{hook}{inspect.signature(own)} takes fewer arguments than "
            f"the contract passes: AIDProblem.{hook}{inspect.signature(base)}")


def _is_real(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _check_calls(rec: HookRecorder, size: int) -> None:
    """The driver read only declared names, set none, and every hook returned its type."""
    declared = declared_names()
    undeclared = sorted(set(rec.rec_read) - declared)
    assert not undeclared, f"the driver used undeclared plug-in attribute(s) {undeclared}"
    assert not rec.rec_set, f"the driver set plug-in attribute(s) {rec.rec_set}"
    calls = [c for c in rec.rec_calls if c.raised is None]
    names = [c.hook for c in rec.rec_calls]
    assert names.count("configure") == 1, f"configure called {names.count('configure')} times"
    first = names.index("configure")
    for later in ("initial_partition", "trivial_partition", "aggregate", "build"):
        assert later not in names[:first], f"{later} was called before configure"
    for c in calls:
        r, hook = c.result, c.hook
        if hook == "initial_partition" and isinstance(r, tuple):  # (partition, sample fit)
            assert len(r) == 2 and isinstance(r[1], Lifted), \
                "initial_partition may return a Partition or (Partition, Lifted)"
            r = r[0]
        if hook in ("initial_partition", "trivial_partition"):
            assert isinstance(r, Partition), f"{hook} returned {type(r).__name__}, not a Partition"
            assert r.n == size, f"{hook} partitions {r.n} elements, size(data) is {size}"
            if hook == "trivial_partition":
                assert r.n_clusters == size
        elif hook == "build" or (hook == "rebuild" and r is not None):
            assert isinstance(r, pyo.Block), f"{hook} returned {type(r).__name__}, not a Pyomo model"
        elif hook == "lift":
            assert isinstance(r, Lifted), f"lift returned {type(r).__name__}, not a Lifted"
            assert isinstance(r.solution, dict) and isinstance(r.info, dict)
            assert all(isinstance(k, str) and _is_real(v) for k, v in r.info.items()), \
                f"Lifted.info must map names to numbers, got {r.info}"
        elif hook == "split":
            assert isinstance(r, Split), f"split returned {type(r).__name__}, not a Split"
            old = c.args[0]
            if r.partition is None:
                assert r.n_split == 0, "a split that holds reports n_split == 0"
            else:
                new = r.partition
                assert isinstance(new, Partition) and new.n == old.n
                assert r.n_split >= 1, "a split that changes the partition names >= 1 cluster"
                assert new.n_clusters > old.n_clusters, "split must add clusters"
                parents = np.full(new.n_clusters, -1)
                parents[new.labels] = old.labels
                assert np.array_equal(parents[new.labels], old.labels), \
                    "split must refine the partition (every new cluster inside an old one)"
        elif hook == "evaluate":
            assert _is_real(r), f"evaluate returned {type(r).__name__}, not a number"
        elif hook == "lower_bound":
            assert r is None or (_is_real(r) and not math.isnan(r)), f"lower_bound returned {r!r}"
        elif hook == "certify":
            assert isinstance(r, Certificate), f"certify returned {type(r).__name__}"
            assert isinstance(c.args[1], Iterate)
        elif hook == "final_termination":
            assert isinstance(r, Termination), f"final_termination returned {r!r}"
        elif hook == "public_solution":
            assert isinstance(r, dict)
        elif hook == "fallbacks":
            assert isinstance(r, list) and all(
                isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str)
                and (p[1] is None or isinstance(p[1], str)) for p in r), f"fallbacks returned {r!r}"
        elif hook == "default_r0":
            assert _is_real(r) and 0 < r <= 1, f"default_r0 returned {r!r}"
        elif hook == "min_clusters":
            assert isinstance(r, numbers.Integral) and 1 <= r, f"min_clusters returned {r!r}"
        elif hook == "size":
            assert isinstance(r, numbers.Integral) and r >= 1
        elif hook == "dimensions":
            assert isinstance(r, dict) and all(isinstance(v, numbers.Integral) for v in r.values())
        elif hook == "solver_defaults":
            assert isinstance(r, dict)
        elif hook == "configure":
            assert r is None
        elif hook == "on_nonoptimal":
            assert isinstance(r, bool | np.bool_)
        elif hook == "solve_native":
            assert c.args[0] in rec.native_methods, f"solve_native called for {c.args[0]!r}"
            assert isinstance(r, tuple) and len(r) == 2 and isinstance(r[1], solvers.SolveOutcome), \
                f"solve_native returned {type(r).__name__}, not (solution, SolveOutcome)"
            outcome = r[1]
            assert outcome.bound is None or (_is_real(outcome.bound) and not math.isnan(outcome.bound))
            if outcome.optimal and outcome.bound is not None:  # a bound never above the value
                assert outcome.bound <= outcome.objective + 1e-9 * max(1.0, abs(outcome.objective))


def check_history(result: AIDResult, size: int, *, tol_rel: float = 1e-9) -> None:
    """E_best is the running minimum of E_t (so non-increasing), the bound never decreases,
    every recorded gap is the relative gap of E_best and the bound, t counts 1, 2, ..."""
    hist = result.history
    assert [h.t for h in hist] == list(range(1, len(hist) + 1))
    best = math.inf
    for prev, h in zip([None, *hist], hist, strict=False):
        best = min(best, h.E_t)
        assert h.E_best == best, f"iteration {h.t}: E_best {h.E_best} is not min(E_1..E_t) = {best}"
        assert math.isfinite(h.F_t) and math.isfinite(h.E_t)
        if prev is not None:
            assert h.lower_bound >= prev.lower_bound, f"iteration {h.t}: the bound decreased"
        expected = relative_gap(h.E_best, h.lower_bound)
        assert _close(h.gap, expected, tol_rel) or h.gap == expected, \
            f"iteration {h.t}: gap {h.gap} != relative gap {expected} of E_best and lower"
        assert 1 <= h.n_clusters <= size and h.r_t == h.n_clusters / size
    if hist and "incumbent" not in result.message:
        assert result.objective == hist[-1].E_best, "the result is not the best iterate"
    assert result.lower_bound <= result.objective or not math.isfinite(result.objective)
    expected = relative_gap(result.objective, result.lower_bound)
    assert _close(result.gap, expected, tol_rel) or result.gap == expected


def check_result(result: AIDResult, solver: str, *, floor: float = 1.0) -> None:
    """``certified_optimal`` only with a passed certificate; the certificate is of the objective
    reported (``evaluate`` and ``certify`` agree within ``tol``, relative with the gap's
    ``floor``); the reported solver produced it."""
    if result.termination is Termination.CERTIFIED_OPTIMAL:
        assert result.certificate is not None and result.certificate.certified, \
            "certified_optimal without a passed certificate"
    cert = result.certificate
    if cert is not None and math.isfinite(result.objective):
        diff = relative_difference(result.objective, cert.primal_objective, floor)
        assert diff <= result.config["tol"], (
            f"evaluate and certify disagree: the run reports E = {result.objective!r} (evaluate) "
            f"and the certificate's primal objective is {cert.primal_objective!r} (relative "
            f"difference {diff:.3e} > tol {result.config['tol']:g}); both must be the objective "
            "of the same solution on the original data")
    if cert is not None and cert.certified:
        checked = cert.residuals if cert.checked is None else cert.checked
        failing = [k for k in checked if not cert.residuals[k] <= cert.feasibility_tol]
        assert cert.relative_gap <= cert.tol and not failing, \
            f"certified with gap {cert.relative_gap} (tol {cert.tol}) and failing {failing}"
    if "retried with" not in result.message:
        assert result.solver == solver, f"result.solver {result.solver!r}, ran only {solver!r}"
    else:
        assert result.solver == solver or f"retried with {result.solver}" in result.message
    expected = (f"aidopt {__version__}" if result.solver in BUILTIN_METHODS
                else solvers.version(result.solver))
    assert result.solver_version == expected


def check_plugin(problem_factory, data, solver: str, *, other_data=None, convex: bool = True,
                 rtol: float = 1e-6, config: dict | None = None) -> Report:
    """Run every contract check on the plug-in ``problem_factory()`` with ``solver``.

    Parameters
    ----------
    problem_factory : callable
        ``() -> AIDProblem``: a fresh, identically configured plug-in per call.
    data, other_data
        Two small data sets of the plug-in (``other_data`` for the A, B, A statelessness check;
        ``None`` skips it).
    solver : str
    convex : bool
        The aggregated problem is a relaxation: AID must equal the direct solve, both certified,
        and every proven bound must be below the optimum.
    rtol : float
        Relative tolerance of "same objective" between AID and the direct solve.
    config : dict, optional
        Extra :class:`RunConfig` fields (``r0``, ``tol``, ...).

    Returns
    -------
    Report
        The AID and direct results and the recorder, for extra assertions.
    """
    base = {"solver": solver, "log": False, "seed": 0, **(config or {})}

    def cfg(**kw):
        return RunConfig(**{**base, **kw})

    problem = problem_factory()
    check_declaration(problem)

    # ---- configure is the only thing a run may change on the object
    expected = problem_factory()
    expected.configure(BUILTIN_METHODS[solver] if solver in BUILTIN_METHODS
                       else solvers.check_solver(solver, expected.problem_class))
    expected_vars = copy.deepcopy(vars(expected))

    # ---- the driver, through the recording proxy
    data_before = {k: v.copy() for k, v in vars(data).items() if isinstance(v, np.ndarray)}
    rec = HookRecorder(problem)
    aid = solve(rec, data, cfg())
    for key, value in data_before.items():
        assert np.array_equal(getattr(data, key), value, equal_nan=True), f"the run changed data.{key}"
    size = problem.size(data)
    _check_calls(rec, size)
    after = vars(problem)
    changed = sorted(k for k in after.keys() | expected_vars.keys()
                     if not _same(after.get(k, "<unset>"), expected_vars.get(k, "<unset>")))
    assert not changed, (f"a run left state on the plug-in beyond what configure sets: {changed}")
    floor = problem.gap_floor(data)
    check_history(aid, size)
    missing = [(h.t, key) for h in aid.history for key in problem.table_info
               if not _is_real(h.info.get(key))]
    assert not missing, f"table_info keys a lift did not report (iteration, key): {missing}"
    check_result(aid, solver, floor=floor)

    # ---- no state between runs
    again = solve(problem, data, cfg())
    diffs = same_result(aid, again)
    assert not diffs, f"solving the same data twice with one object differs: {diffs}"
    if other_data is not None:
        b_used = solve(problem, other_data, cfg())
        a_after_b = solve(problem, data, cfg())
        diffs = same_result(aid, a_after_b)
        assert not diffs, f"A after B differs from A: {diffs}"
        b_fresh = solve(problem_factory(), other_data, cfg())
        diffs = same_result(b_fresh, b_used)
        assert not diffs, f"B on a used object differs from B on a fresh one: {diffs}"

    # ---- the direct solve: same code path from the trivial partition
    rec_direct = HookRecorder(problem_factory())
    direct = solve_direct(rec_direct, data, cfg())
    _check_calls(rec_direct, size)
    assert len(direct.history) == 1 and direct.history[0].n_clusters == size
    check_history(direct, size)
    check_result(direct, solver, floor=floor)
    if convex:
        assert direct.termination is Termination.CERTIFIED_OPTIMAL, direct.summary()
        optimum = direct.certificate.primal_objective
        for h in aid.history:  # a proven bound never exceeds the optimum, E never undercuts it
            assert h.lower_bound <= optimum + rtol * max(1.0, abs(optimum)), \
                f"iteration {h.t}: lower bound {h.lower_bound} above the optimum {optimum}"
            assert h.E_t >= optimum - rtol * max(1.0, abs(optimum)), \
                f"iteration {h.t}: E_t {h.E_t} below the optimum {optimum}"
        initial = problem_factory().initial_bound(data)
        assert initial is None or initial <= optimum + rtol * max(1.0, abs(optimum)), \
            f"initial_bound {initial} above the optimum {optimum}"
        assert aid.termination is Termination.CERTIFIED_OPTIMAL, aid.summary()
        assert _close(aid.objective, direct.objective, rtol), \
            f"AID objective {aid.objective} != direct {direct.objective}"

    # ---- limits (the one-iteration run also writes its models: every model must be writable)
    with tempfile.TemporaryDirectory() as tmp:
        one = solve(problem_factory(), data, cfg(max_iter=1, write_models=tmp))
        written = sorted(p.suffix for p in Path(tmp).iterdir() if p.stat().st_size > 0)
    assert ".lp" in written and ".mps" in written, f"write_models wrote {written}"
    assert json.loads(one.to_json())["termination"] == one.termination.value
    assert len(one.history) <= 1
    assert one.termination is Termination.ITERATION_LIMIT or one.termination in EARLY_STOPS, \
        f"max_iter=1 ended {one.termination}"
    if one.termination is Termination.ITERATION_LIMIT:
        assert one.history and one.history[0].n_split > 0 and one.history[0].gap > one.config["tol"]
    check_history(one, size)
    check_result(one, solver, floor=floor)
    results = {"max_iter=1": one}
    for raise_on_failure in (False, True):
        tiny = solve(problem_factory(), data, cfg(time_limit=1e-9, raise_on_failure=raise_on_failure))
        assert tiny.termination is Termination.TIME_LIMIT, \
            f"time_limit=1e-9 (raise_on_failure={raise_on_failure}) ended {tiny.termination}"
        assert not tiny.certified
        results[f"time_limit raise={raise_on_failure}"] = tiny
    return Report(aid, direct, rec, results)
