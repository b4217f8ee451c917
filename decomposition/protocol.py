"""The AID plug-in contract: every hook the driver may call, declared once, with its default.

A problem under AID is one subclass of :class:`AIDProblem`. The driver
(:mod:`aidopt.decomposition.aid`) calls only the hooks declared here, in this order::

    configure(spec)                                  once, before anything is built
    initial_partition(data, k0, rng, solve)          -> Partition over the problem's index set,
                                                        or (Partition, Lifted sample fit)
    loop t = 1, 2, ...
        aggregate(data, partition, previous)         -> aggregated data
        build(aggregated, form)                      -> Pyomo model
        [solve]  -> rebuild(model, outcome, aggregated) -> another model or None
                 -> fallbacks(solver) on a failed solve;  on_nonoptimal(outcome) on a stopped one
          or, when the solver is one of native_methods:
        solve_native(method, aggregated, previous, partition, ...) -> (solution, outcome)
        lift(model, outcome, partition, aggregated, data) -> Lifted
        lower_bound(outcome, partition, data, lifted) -> a proven bound on the original optimum, or None
        evaluate(data, lifted)                       -> E_t on the original data
        split(partition, data, lifted)               -> Split (partition None: the condition holds)
    certify(data, best, bound=..., ...)              -> Certificate on the original data
    final_termination(stop, certificate, best)       -> Termination
    public_solution(best, certificate)               -> the arrays users get

State that one step needs from another is *returned*, never left on the plug-in: ``lift`` returns
a :class:`Lifted` (public arrays + the plug-in's own typed ``state`` + numbers for the history),
the driver keeps each iteration as an :class:`Iterate` and hands the previous one to
``aggregate`` and the best ones to ``certify`` (cvxpy's ``apply -> (problem, inverse_data)`` /
``invert`` is the model). A plug-in object holds configuration only (costs, norms, the chosen
form), so one object can solve several data sets in turn.

A partition is over an abstract index set that the plug-in names with :attr:`AIDProblem.element`
("rows" for the ML models; "sites" for location problems; "collections", ...) and sizes with
:meth:`AIDProblem.size`; the driver never assumes data rows.
"""

from __future__ import annotations

import enum
import inspect
import math
import threading
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aidopt.decomposition.partition import Partition

from aidopt.results import Certificate, Termination
from aidopt.solvers import ProblemClass, SolveOutcome, SolverError, TimeLimitReached

__all__ = ["AIDProblem", "GROWN_HOOKS", "Iterate", "Lifted", "OPEN_FALLBACKS", "Split", "Stop",
           "SolveFn", "call_hook", "earlier_signature", "solve_own"]

#: the solvers :meth:`AIDProblem.fallbacks` draws on by default: open source, in the core install
OPEN_FALLBACKS = ("highs", "clarabel", "scip")

#: ``solve(model, need_duals=False, solver=None) -> SolveOutcome``: the run's configured solver
#: call (solver, options, remaining time, model writing), for plug-in steps that solve a side model.
SolveFn = Callable[..., SolveOutcome]


class Stop(enum.Enum):
    """Why the loop stopped, before the certificate is checked (see ``final_termination``)."""

    CONDITION = "condition"
    """``split`` returned no partition: the plug-in's optimality condition holds."""
    GAP = "gap"
    """The relative gap between the best objective and the best proven bound is within ``tol``."""
    ITERATION_LIMIT = "iteration_limit"
    TIME_LIMIT = "time_limit"
    INTERRUPTED = "interrupted"
    SOLVER_FAILURE = "solver_failure"
    INFEASIBLE = "infeasible"
    """A solver proved an aggregated model infeasible and the plug-in declares that this proves
    the original problem infeasible (``AIDProblem.infeasible_proves``)."""


@dataclass
class Lifted:
    """A solution on the original problem, lifted from a solved aggregated model.

    Attributes
    ----------
    solution : dict
        The public arrays (``{"beta"}``, ``{"w", "b", "alpha"}``, ...), returned to users as they are.
    state : object
        The plug-in's own data for ``evaluate`` / ``split`` / ``certify`` (residuals, lifted duals,
        tolerances): typed by the plug-in, opaque to the driver.
    info : dict of str to float
        Numbers the driver records in the iteration history (e.g. an aggregated MIP's gap).
    """

    solution: dict
    state: Any = None
    info: dict = field(default_factory=dict)


@dataclass
class Split:
    """What ``split`` decided.

    ``partition`` is ``None`` when the optimality condition holds (nothing to split);
    ``n_split`` counts the clusters that violate it.
    """

    partition: Partition | None
    n_split: int = 0

    @property
    def holds(self) -> bool:
        return self.partition is None


@dataclass
class Iterate:
    """Everything one iteration produced, kept by the driver and handed back to the plug-in."""

    t: int
    partition: Partition
    aggregated: Any
    lifted: Lifted
    F_t: float
    """Objective of the solved aggregated model (not necessarily a bound: see ``bound``)."""
    bound: float | None
    """What ``lower_bound`` proved for the original problem at this iteration, or ``None``."""
    E_t: float
    split: Split
    solver: str
    """The solver that produced this iterate (a fallback may differ from the configured one)."""


class AIDProblem:
    """Base class of every AID plug-in: the hooks the driver calls, with documented defaults.

    Subclasses must implement :meth:`default_r0`, :meth:`initial_partition`, :meth:`aggregate`,
    :meth:`build`, :meth:`lift`, :meth:`evaluate`, :meth:`split` and :meth:`certify`; every other
    hook has a default that is correct for a convex problem whose aggregated model is solved to
    optimality.

    Attributes
    ----------
    name : str
        Shown in logs and results.
    problem_class : ProblemClass
        LP, QP, MILP or MIQP: checked against the solver before anything is built, and against
        every model the solver layer receives.
    needs_duals : bool
        Whether the aggregated solves must return constraint duals.
    element : str
        What a partition groups ("rows", "sites", "collections", ...): used in messages.
    per_element_keys : tuple of str
        Solution arrays with one entry per element on their first axis (e.g. ``"alpha"``, of shape
        (n,), or (n, k) for the Crammer-Singer SVM's k duals per row): the API expands them back
        to all rows when zero-weight rows were left out.

    native_methods : tuple of str
        Methods of aidopt's own (named as ``solver=``, e.g. ``"sor"``) that this plug-in runs on
        the aggregated problem through :meth:`solve_native` instead of a Pyomo solver.
    table_info : tuple of str
        Keys of ``Lifted.info`` the iteration table shows, one integer column each (e.g.
        the working-set size of a column generation); every :meth:`lift` must set them.
    method_name : str or None
        What the run's header calls the method when the plug-in's AID run is something else
        (e.g. a branch and cut on the trivial partition); ``None``: "AID, r0=..., |K_0| ...".
    infeasible_proves : bool
        ``True`` when every aggregated model is a relaxation of, or equivalent to, the original
        problem, so that a solver's "infeasible" on it proves the original problem infeasible:
        the run then stops with termination ``infeasible`` (no error raised) instead of a
        solver failure. Once the run holds a feasible point of the original problem (an earlier
        iterate or incumbent), "infeasible" contradicts it and is a solver failure again.
        Default ``False``: "infeasible" is a solver failure (added in 0.2.0; plug-ins written
        before it keep their behaviour).
    """

    name: str = "problem"
    problem_class: ProblemClass = ProblemClass.LP
    needs_duals: bool = False
    element: str = "rows"
    per_element_keys: tuple[str, ...] = ()
    native_methods: tuple[str, ...] = ()
    table_info: tuple[str, ...] = ()
    method_name: str | None = None
    infeasible_proves: bool = False

    # ------------------------------------------------------------------ setup
    def configure(self, solver_spec) -> None:
        """Adapt to the chosen solver before anything is built (e.g. choose an LP form that does
        not need duals when the solver returns none). ``solver_spec`` is ``None`` for a solver
        unknown to aidopt. Default: nothing."""

    def solver_defaults(self, solver: str) -> dict:
        """Solver options this problem needs by default (user options override them). Default
        ``{}``."""
        return {}

    def size(self, data) -> int:
        """Number of elements partitioned (default ``data.n``)."""
        return int(data.n)

    def dimensions(self, data) -> dict[str, int]:
        """Sizes shown in logs and results (default ``{"n": data.n, "m": data.m}``)."""
        return {"n": int(data.n), "m": int(data.m)}

    def gap_floor(self, data) -> float:
        """The floor of the relative gap's denominator, ``(E - bound) / max(floor, |E|)``.
        Default ``1.0`` (absolute below 1: fine for data in natural units); a plug-in makes its
        gap scale-invariant by returning a tiny fraction (:data:`GAP_FLOOR`) of the objective
        of a trivial solution."""
        return 1.0

    def initial_bound(self, data) -> float | None:
        """A lower bound on the original optimum computed from the data alone, exactly (no
        solver: e.g. every customer served at its cheapest cost), or ``None`` (default). The
        driver reports it when the run stops before it proves a better one, so that a run
        ended by its time limit still has a bound and a gap."""
        return None

    def counters(self, data) -> dict[str, int]:
        """Cumulative work counters of the data (e.g. ``{"data_passes": 12}`` for an
        out-of-core matrix): the driver records each iteration's increase in its history
        (``info``) and shows it in the iteration table, a column per counter. Default ``{}``."""
        return {}

    def default_r0(self, size: int, data) -> float:
        """The initial aggregation rate |K_0| / size used when the user gives none."""
        raise NotImplementedError

    def min_clusters(self, data) -> int:
        """Fewest clusters the initial partition may have (default 1)."""
        return 1

    def initial_partition(self, data, n_clusters: int, rng: np.random.Generator,
                          solve: SolveFn) -> Partition | tuple[Partition, Lifted]:
        """The initial partition with about ``n_clusters`` clusters.

        ``solve(model, need_duals=..., solver=None)`` solves a model of the plug-in's own (e.g.
        on a random sample) under the run's clock and fallback policy; ``solve.remaining()``
        gives the seconds left for this phase (None: no limit), for work without a Pyomo model
        (:class:`~.run.PluginSolve`). A plug-in that found a
        solution of the original problem on the way (the sample fit) may return it too, as
        ``(partition, lifted)``: the driver evaluates and returns it, uncertified, only when the
        run stops (time limit, Ctrl-C, failure) before its first iterate finishes. The driver
        gives this method at most half of the time left (:data:`~.aid.INITIAL_SHARE`).
        """
        raise NotImplementedError

    def trivial_partition(self, data) -> Partition:
        """Every element its own cluster: the direct solve of the original problem."""
        n = self.size(data)
        return Partition(np.arange(n, dtype=np.int64), np.ones(n, dtype=np.int64))

    # ------------------------------------------------------------------ one iteration
    def aggregate(self, data, partition: Partition, previous: Iterate | None) -> Any:
        """The aggregated data of ``partition``; ``previous`` is the last iteration (``None`` at
        t = 1), for what can be reused or bounded from it."""
        raise NotImplementedError

    def build(self, aggregated, form: str | None = None):
        """A concrete Pyomo model of the aggregated problem; ``form`` names an alternative
        formulation offered by :meth:`fallbacks` (``None``: the configured one)."""
        raise NotImplementedError

    def rebuild(self, model, outcome: SolveOutcome, aggregated):
        """After an optimal solve: a model to solve instead, or ``None`` (default) to keep this
        one (e.g. a big-M model rebuilt with a larger M when its trial value is not verified).
        Asked again after the rebuilt model's solve, until it returns ``None``: each rebuild must
        make progress that ends (a set that only grows, a bound that then holds)."""
        return None

    def fallbacks(self, solver: str) -> list[tuple[str, str | None]]:
        """``(solver, form)`` pairs the run tries, in order, when an aggregated solve fails or a
        size-limited licence refuses the model. Default: the other open-source solvers of
        :data:`OPEN_FALLBACKS`, in that order; the run skips those not installed or unable to take
        the problem's class (with duals when :attr:`needs_duals`). One solver's failure on a model
        is often not another's (HiGHS's "Solve error" on an LP with an ill-conditioned kernel
        matrix that Clarabel solves)."""
        return [(name, None) for name in OPEN_FALLBACKS if name != solver]

    def solve_native(self, method: str, aggregated, previous: Iterate | None,
                     partition: Partition, *, tol: float, time_limit: float | None,
                     options: dict) -> tuple[Any, SolveOutcome]:
        """Solve the aggregated problem with ``method``, one of :attr:`native_methods`: an
        algorithm that exploits its structure and needs no Pyomo model (SOR on a box QP dual).

        Returns ``(solution, outcome)`` in place of the ``(model, outcome)`` of a Pyomo solve:
        :meth:`lift` and :meth:`on_nonoptimal` receive ``solution`` as ``model``. The outcome
        follows the solver layer's rules: ``status`` ``"optimal"`` only when the method's own
        stopping test passed, ``bound`` a proven bound on the aggregated optimum (never an
        estimate), ``objective`` the value of the returned point. ``previous`` and ``partition``
        allow a warm start from the last iterate. The model :meth:`build` makes stays the
        definition of the problem the method solves (it is what ``write_models`` writes).
        ``tol`` is the run's relative gap tolerance (a method that stops on its own gap must stop
        well within it, or the certificate cannot pass), ``time_limit`` the run's time left
        (``None``: none), ``options`` the user's ``solver_options``. Default: no native method.
        """
        raise RuntimeError(f"{type(self).__name__} lists {method!r} in native_methods but does "
                           "not implement solve_native")

    def on_nonoptimal(self, outcome: SolveOutcome) -> bool:
        """Whether the incumbent of an aggregated solve that did not end optimal (stopped by a
        time limit or Ctrl-C: ``outcome.stopped``; or, for a method that bounds every iterate,
        failed) is a feasible point worth lifting and evaluating. Default ``False``."""
        return False

    def lift(self, model, outcome: SolveOutcome, partition: Partition, aggregated, data) -> Lifted:
        """The solution of the original problem that the solved aggregated model gives."""
        raise NotImplementedError

    def lower_bound(self, outcome: SolveOutcome, partition: Partition, data,
                    lifted: Lifted | None = None) -> float | None:
        """A bound on the optimum of the *original* problem proved by this solve, or ``None``.

        ``lifted`` is what :meth:`lift` returned for this solve, so a bound computed from the
        lifted state (e.g. the dual objective of lifted duals made feasible on the original
        data) reaches the driver's gap test. The default is ``None``: nothing is assumed. A
        convex plug-in whose aggregated problem is a relaxation returns the aggregated optimum
        (``outcome.bound``); a MIP plug-in the solver's dual bound, never its incumbent.
        """
        return None

    def evaluate(self, data, lifted: Lifted) -> float:
        """The objective E of the lifted solution on the original data (vectorised)."""
        raise NotImplementedError

    def split(self, partition: Partition, data, lifted: Lifted) -> Split:
        """Split the clusters that violate the optimality condition."""
        raise NotImplementedError

    # ------------------------------------------------------------------ the end
    def certify(self, data, best: Iterate, *, bound: Iterate, solve: SolveFn, tol: float,
                feasibility_tol: float, history: list) -> Certificate:
        """Check the best solution on the original data (duals / KKT, or the MIP bound).

        ``best`` holds the lowest E; ``bound`` is the iteration with the best proven bound (its
        duals give the certificate's bound); ``history`` the iteration records so far.
        """
        raise NotImplementedError

    def final_termination(self, stop: Stop, certificate: Certificate | None,
                          best: Iterate | None) -> Termination:
        """The run's verdict. Default: ``certified_optimal`` only when the certificate passed;
        a condition or gap stop without a passed certificate is ``gap_tolerance``; limits,
        interruptions and failures keep their own reason."""
        if certificate is not None and certificate.certified:
            return Termination.CERTIFIED_OPTIMAL
        if stop in (Stop.CONDITION, Stop.GAP):
            return Termination.GAP_TOLERANCE if best is not None else Termination.SOLVER_FAILURE
        return Termination(stop.value)

    def public_solution(self, best: Iterate, certificate: Certificate | None) -> dict:
        """The arrays returned in ``AIDResult.solution`` (default: the best lifted solution)."""
        return dict(best.lifted.solution)


# --------------------------------------------------------------------------- earlier signatures
#: hooks whose signature grew after the contract was published (docs/plugins.md): hook -> (the
#: parameter added at the end, the release that deprecated the shorter signature). A plug-in
#: written to the shorter one is still called right, without that argument, and warned once per
#: class (:func:`call_hook`). Every other hook has kept its published signature.
GROWN_HOOKS = {"lower_bound": ("lifted", "0.2.0")}

_EARLIER: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # class -> {hook: bool}
_EARLIER_LOCK = threading.Lock()


def earlier_signature(cls: type, hook: str) -> bool:
    """Whether ``cls`` implements ``hook`` (one of :data:`GROWN_HOOKS`) with its signature of
    before the last parameter was added: it cannot take every argument the driver passes, but it
    takes all of them but the last.

    The signature is inspected once per class and hook, and the answer cached; the first time an
    earlier signature is found, a ``DeprecationWarning`` names the class and what to change
    (attributed to the plug-in's own ``def`` line, so that Python's default filters show it when
    the plug-in is defined in a script).
    """
    with _EARLIER_LOCK:
        known = _EARLIER.setdefault(cls, {})
        if hook in known:
            return known[hook]
        known[hook] = earlier = _takes_all_but_last(cls, hook)
    if earlier:
        _warn_earlier(cls, hook)
    return earlier


def call_hook(problem: AIDProblem, hook: str, *args):
    """``problem.<hook>(*args)``, without the last argument when the plug-in's class implements
    the hook's earlier signature (:func:`earlier_signature`, :data:`GROWN_HOOKS`)."""
    if hook in GROWN_HOOKS and earlier_signature(problem.__class__, hook):
        args = args[:-1]
    return getattr(problem, hook)(*args)


def _takes_all_but_last(cls: type, hook: str) -> bool:
    wanted = len(inspect.signature(getattr(AIDProblem, hook)).parameters) - 1  # without self
    try:
        signature = inspect.signature(getattr(cls, hook))
    except (TypeError, ValueError):  # not introspectable: call it as the contract says
        return False
    owner = () if isinstance(inspect.getattr_static(cls, hook), staticmethod | classmethod) else (None,)

    def binds(count: int) -> bool:
        try:
            signature.bind(*owner, *[None] * count)
        except TypeError:
            return False
        return True

    return not binds(wanted) and binds(wanted - 1)


def _warn_earlier(cls: type, hook: str) -> None:
    added, since = GROWN_HOOKS[hook]
    names = list(inspect.signature(getattr(AIDProblem, hook)).parameters)
    earlier = ", ".join(names[:-1])
    text = (f"{cls.__module__}.{cls.__qualname__}.{hook}({earlier}) is the earlier signature of "
            f"this hook: the driver now also passes `{added}`. Add a `{added}=None` parameter: "
            f"def {hook}({earlier}, {added}=None). The earlier signature is deprecated since aidopt "
            f"{since} and still called without `{added}`; it may stop working in the next minor "
            "release at the earliest (docs/plugins.md, 'Deprecation policy').")
    code = getattr(inspect.unwrap(getattr(cls, hook)), "__code__", None)
    if code is None:
        warnings.warn(text, DeprecationWarning, stacklevel=3)
    else:
        warnings.warn_explicit(text, DeprecationWarning, code.co_filename, code.co_firstlineno,
                               module=cls.__module__)


def solve_own(solve: SolveFn, model, what: str, **kwargs) -> SolveOutcome:
    """A plug-in's own solve (initial sample, certificate) through the run's ``solve``: the
    outcome when optimal; :class:`~aidopt.solvers.TimeLimitReached` at the time limit, and
    :class:`~aidopt.solvers.SolverError` naming ``what`` otherwise (after the run's fallbacks)."""
    outcome = solve(model, **kwargs)
    if outcome.status == "time_limit":
        raise TimeLimitReached(f"time limit reached in {what}")
    if not outcome.optimal:
        raise SolverError(f"{what} failed: {outcome.status} ({outcome.message})")
    return outcome


#: the floor of a scale-invariant gap's denominator, as a fraction of the objective of the zero
#: solution (``AIDProblem.gap_floor``): it matters only when the optimum is (nearly) 0, e.g. a LAD
#: fit that interpolates. There E itself is rounding: evaluating E on n rows and a solver's
#: vertex leave ~1e-14 of that objective (measured up to 1.2e-14 on exact fits), which a floor of
#: 1e-9 turned into a relative gap above 1e-6 (gap_tolerance on an optimum of 0). With 1e-6, a
#: certified near-zero optimum is within tol * 1e-6 (1e-12 at tol 1e-6) of the zero solution's
#: objective: still a proof far below any data's resolution.
GAP_FLOOR = 1e-6


def relative_difference(a: float, b: float, floor: float = 1.0) -> float:
    """``|a - b| / max(floor, |a|, |b|)``: how far two values of one objective disagree, on the
    scale of the relative gap (``floor`` as in :func:`relative_gap`, so that it is as
    scale-invariant as the plug-in's gap). ``0`` for equal values (infinities included), ``inf``
    when only one is finite or either is NaN."""
    if a == b:
        return 0.0
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.inf
    return abs(a - b) / max(floor, abs(a), abs(b))


def relative_gap(upper: float, lower: float | None, floor: float = 1.0) -> float:
    """``max(0, upper - lower) / max(floor, |upper|)`` (``inf`` when either is missing).

    ``floor`` keeps the gap finite when the objective is near zero. ``1.0`` (default) makes the
    gap absolute below ``|upper| = 1``, which depends on the units of the data; the LAD and SVM
    plug-ins pass floors that do not (:meth:`AIDProblem.gap_floor`: for LAD :data:`GAP_FLOOR`
    times the objective of beta = 0; for the SVMs none, since their objective is never 0), so
    that scaling the data does not change which points are certified.
    """
    if lower is None or not math.isfinite(upper) or not math.isfinite(lower):
        return math.inf
    return max(0.0, upper - lower) / max(floor, abs(upper))
