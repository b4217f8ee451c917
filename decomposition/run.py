"""The run framework shared by every iterative algorithm (AID, and sequences of LPs to come).

An algorithm writes only its own loop; a :class:`Run` gives it everything else:

* **configuration**: :class:`RunConfig`, the one definition of the common keywords of every
  ``solve_*`` function, estimator and CLI command (each field carries its help text and CLI flag;
  :func:`common_options` documents and checks them, :func:`add_arguments` makes the CLI flags);
* **limits**: wall-clock time (:meth:`Run.remaining` is passed to every solve), iterations, and
  Ctrl-C (:meth:`Run.guard` turns it into an ``interrupted`` stop with the best solution so far);
* **solver calls**: :meth:`Run.solve` (configured solver, options, time left, LP/MPS writing),
  :meth:`Run.solve_with_fallbacks` (a plug-in's fallbacks on failure or licence refusal) and
  :meth:`Run.persistent` (a warm-start handle for sequences of related models);
* **failure handling**: :meth:`Run.failure` raises or returns an honest stop reason;
* **timing and the log**: :meth:`Run.timed` accumulates seconds by step; :meth:`Run.header` /
  :meth:`Run.row` print a gdpopt-style iteration table; :meth:`Run.result` assembles the
  :class:`~aidopt.results.AIDResult` and prints the termination block;
* **memory hygiene**: :func:`pause_gc` while a model is built and solved, :func:`release` to free
  a solved Pyomo model at once.

Nothing here knows a problem by name. Pyomo's gdpopt ``_GDPoptAlgorithm`` is the model.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import difflib
import functools
import gc
import inspect
import logging
import math
import numbers
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from aidopt.decomposition.threads import compute_threads

from aidopt import solvers
from aidopt.results import AIDResult, Certificate, IterationRecord, Termination

logger = logging.getLogger("aidopt.run")
#: where a run with ``log=False`` writes: nowhere, even when an outer run's handler is attached
#: methods aidopt runs itself, named as ``solver`` (the solver layer's explicit registry)
BUILTIN_METHODS = solvers.NATIVE_METHODS

#: seconds between the "still solving" lines of a long single solve (``Run.alive``)
HEARTBEAT = 30.0

_quiet = logging.getLogger("aidopt.quiet")
_quiet.propagate = False
_quiet.addHandler(logging.NullHandler())

__all__ = ["RunConfig", "Run", "common_options", "add_arguments", "config_from_args",
           "pause_gc", "release"]


def _opt(default, help: str, *, flag: str | None = None, cli: bool = True, default_factory=None,
         flag_help: str | None = None):
    """A :class:`RunConfig` field with its documentation and CLI flag; ``flag_help`` is the help
    of a flag that sets the opposite of the default (``--no-aid``, ``--quiet``)."""
    meta = {"help": help, "flag": flag, "cli": cli, "flag_help": flag_help}
    if default_factory is not None:
        return field(default_factory=default_factory, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class RunConfig:
    """The common options of every ``solve_*`` call, estimator and CLI command.

    This class is their only definition: the API documents its keywords from it
    (:func:`common_options`), the estimators take their parameters from it, and the CLI builds its
    flags from it (:func:`add_arguments`), so the three cannot drift. Values are validated when
    the object is made.
    """

    solver: str | None = _opt(
        None, "Solver name: highs, clarabel, gurobi, scip, cplex, xpress or any Pyomo solver "
        "(None: the problem's default, see `aidopt solvers`).")
    aid: bool = _opt(True, "Solve by Aggregate and Iterative Disaggregate; False solves the full "
                     "model directly (same certificate).", flag="--no-aid",
                     flag_help="Solve the full model directly instead of by Aggregate and Iterative "
                               "Disaggregate (the same certificate).")
    tol: float = _opt(1e-6, "Relative duality gap (E - bound) / max(phi, |E|) accepted as optimal; "
                      "phi is the problem's gap floor: a tiny fraction of the objective of a "
                      "trivial solution where the problem declares one (scale-invariant), else 1.")
    feasibility_tol: float = _opt(1e-6, "Tolerance on the certificate's scaled dual residuals.")
    max_iter: int | None = _opt(None, "Iteration limit (None: no limit).")
    time_limit: float | None = _opt(None, "Wall-clock limit for the whole run in seconds; the time "
                                    "left is passed to every solve.")
    r0: float | None = _opt(None, "Initial aggregation rate |K_0| / n (None: the paper's rule "
                            "for the problem).")
    seed: int = _opt(0, "Seed of every random choice (samples, k-means centres).")
    write_models: str | None = _opt(None, "Directory to write every solved model into as .lp and "
                                    ".mps, numbered in solve order (NNN_<model name>; an initial "
                                    "sample or LP-phase solve counts).", flag="--write-models")
    log: bool = _opt(True, "Print the iteration table and the termination block.", flag="--quiet",
                     flag_help="Print the result only: one line 'result: <termination>, "
                               "objective, relative gap, certificate, time' and the fitted model "
                               "(coefficients, open sites, selected features, accuracy); no banner, "
                               "iteration table, termination or certificate block, progress or "
                               "file notes. Errors and warnings still go to stderr.")
    solver_options: dict = _opt(None, "Options passed through untouched to the solver "
                                "(CLI: --option KEY=VALUE, repeatable).", flag="--option",
                                default_factory=dict)
    threads: int | None = _opt(None, "Solver threads, and while the run lasts the bound on BLAS's "
                               "and aidopt's own worker threads (None: the defaults).")
    tee: bool = _opt(False, "Show the solver's own log.")
    raise_on_failure: bool = _opt(True, "Raise SolverError when a solve fails; False returns the "
                                  "best solution so far with termination 'solver_failure'.",
                                  cli=False)
    fallback: bool = _opt(True, "When an aggregated solve fails or a licence refuses its size, "
                          "retry with the problem's fallbacks (another form or solver).",
                          flag="--no-fallback",
                          flag_help="Do not retry a failed or refused solve with the problem's "
                                    "fallbacks (another form or solver).")

    def __post_init__(self):
        if self.solver is not None and (not isinstance(self.solver, str) or not self.solver):
            raise TypeError(f"solver must be a solver name, got {self.solver!r}")
        for name in ("aid", "log", "tee", "raise_on_failure", "fallback"):
            if not isinstance(getattr(self, name), bool | np.bool_):
                raise TypeError(f"{name} must be True or False, got {getattr(self, name)!r}")
        for name in ("tol", "feasibility_tol"):
            val = getattr(self, name)
            if not (_real(val) and math.isfinite(val) and 0 <= val < 1):
                raise ValueError(f"{name} must be a number in [0, 1), got {val!r}")
        if self.max_iter is not None and not (_integer(self.max_iter) and self.max_iter >= 1):
            raise ValueError(f"max_iter must be a positive integer or None, got {self.max_iter!r}")
        if self.time_limit is not None and not (_real(self.time_limit) and self.time_limit > 0):
            raise ValueError(f"time_limit must be positive seconds or None, got {self.time_limit!r}")
        if self.r0 is not None and not (_real(self.r0) and 0 < self.r0 <= 1):
            raise ValueError(f"r0 must be in (0, 1], got {self.r0!r}")
        if not _integer(self.seed):
            raise TypeError(f"seed must be an integer, got {self.seed!r}")
        if self.threads is not None and not (_integer(self.threads) and self.threads >= 1):
            raise ValueError(f"threads must be a positive integer or None, got {self.threads!r}")
        if self.solver_options is None:
            self.solver_options = {}
        if not isinstance(self.solver_options, dict):
            raise TypeError(f"solver_options must be a dict, got {self.solver_options!r}")
        self.solver_options = dict(self.solver_options)
        if self.write_models is not None:
            self.write_models = str(self.write_models)
            path = Path(self.write_models)
            if path.exists() and not path.is_dir():
                raise ValueError(f"write_models: {path} exists and is not a directory")

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def from_kwargs(cls, kwargs: dict, *, caller: str = "this function", **defaults) -> RunConfig:
        """Build from keyword arguments; unknown names raise ``TypeError`` with a suggestion.

        ``defaults`` are the caller's own defaults for fields the user did not give (e.g. a
        problem's default solver).
        """
        names = cls.names()
        unknown = [k for k in kwargs if k not in names]
        if unknown:
            hints = []
            for key in unknown:
                close = difflib.get_close_matches(key, names, n=1)
                hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
            raise TypeError(f"{caller}() got unexpected keyword argument(s) {', '.join(hints)}; "
                            f"common options are: {', '.join(names)}")
        values = {**defaults, **{k: v for k, v in kwargs.items()}}
        for key, val in defaults.items():  # an explicit None means "the default" as well
            if values.get(key) is None:
                values[key] = val
        return cls(**values)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


#: the old name of :class:`RunConfig`, kept because ``aidopt.decomposition.AIDConfig`` is an import
#: path users have
AIDConfig = RunConfig


def _real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _integer(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


# --------------------------------------------------------------------------- one definition


def _numpydoc_lines() -> list[str]:
    lines = []
    for f in dataclasses.fields(RunConfig):
        default = "{}" if f.name == "solver_options" else repr(f.default)
        lines.append(f"{f.name} : default {default}")
        lines.append(f"    {f.metadata['help']}")
    return lines


def common_options(*, exclude: tuple[str, ...] = (), **defaults):
    """Decorator for a ``solve_*(..., **options)`` function: documents the common options in its
    docstring and signature (from :class:`RunConfig`), so help() and IDEs show them.

    ``defaults`` overrides a field's default for this function (shown in its signature).
    The function itself builds its config with :meth:`RunConfig.from_kwargs`.
    """

    def wrap(func):
        sig = inspect.signature(func)
        params = [p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
        for f in dataclasses.fields(RunConfig):
            if f.name in exclude:
                continue
            default = defaults.get(f.name, {} if f.name == "solver_options" else f.default)
            params.append(inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=default))
        func.__signature__ = sig.replace(parameters=params)
        doc = inspect.cleandoc(func.__doc__ or "")
        block = "\n".join(["", "Common options (one definition for the API, estimators and CLI)",
                           "-" * 63, *_numpydoc_lines()])
        marker = "\nReturns\n-------"
        func.__doc__ = doc.replace(marker, block + "\n" + marker, 1) if marker in doc else doc + block
        return func

    return wrap


def add_arguments(parser, *, defaults: dict | None = None, exclude: tuple[str, ...] = ()) -> None:
    """Add one CLI flag per :class:`RunConfig` field (``--time-limit``, ``--no-aid``, ...)."""
    defaults = defaults or {}
    group = parser.add_argument_group("common options")
    for f in dataclasses.fields(RunConfig):
        if not f.metadata["cli"] or f.name in exclude:
            continue
        flag = f.metadata["flag"] or "--" + f.name.replace("_", "-")
        default = defaults.get(f.name, None if f.name == "solver_options" else f.default)
        help_text = f.metadata["help"]
        if f.type in ("bool",) or isinstance(f.default, bool):
            negated = flag.startswith("--no-") or flag == "--quiet"  # the flag turns it off
            if negated and not f.metadata["flag_help"]:
                raise ValueError(f"RunConfig.{f.name}: a flag that turns it off needs flag_help")
            group.add_argument(flag, dest=f.name, action="store_false" if negated else "store_true",
                               default=default, help=f.metadata["flag_help"] if negated else help_text)
        elif f.name == "solver_options":
            group.add_argument(flag, dest=f.name, action="append", default=[], metavar="KEY=VALUE",
                               help=help_text)
        else:
            kind = {"tol": float, "feasibility_tol": float, "time_limit": float, "r0": float,
                    "max_iter": int, "seed": int, "threads": int}.get(f.name, str)
            group.add_argument(flag, dest=f.name, type=kind, default=default,
                               help=f"{help_text} (default: {default})")


def config_from_args(args) -> dict:
    """The common options parsed by :func:`add_arguments`, as keyword arguments."""
    out = {}
    for f in dataclasses.fields(RunConfig):
        if not f.metadata["cli"] or not hasattr(args, f.name):
            continue
        val = getattr(args, f.name)
        if f.name == "solver_options":
            val = _key_values(val)
        out[f.name] = val
    return out


def _key_values(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise ValueError(f"--option expects KEY=VALUE, got {pair!r}")
        key, val = pair.split("=", 1)
        for cast in (int, float):
            try:
                val = cast(val)
                break
            except ValueError:
                continue
        out[key] = val
    return out


# --------------------------------------------------------------------------- memory hygiene


@contextlib.contextmanager
def run_scope(config: RunConfig):
    """What a run holds while it lasts: its log (``config.log``, :func:`aidopt.log.run_logging`)
    and its thread budget (``config.threads``, :func:`.threads.compute_threads`)."""
    from aidopt.log import run_logging

    with run_logging(config.log), compute_threads(config.threads), small_pages():
        yield


_PAGES_LOCK = threading.Lock()
_PAGES = {"runs": 0, "before": None}


def _madvise_setter():
    """NumPy's switch of ``madvise(MADV_HUGEPAGE)`` for new arrays (None if it has none)."""
    try:
        from numpy._core import multiarray  # NumPy >= 2
    except ImportError:  # pragma: no cover - NumPy 1.26
        from numpy.core import multiarray
    return getattr(multiarray, "_set_madvise_hugepage", None)


@contextlib.contextmanager
def small_pages():
    """While any run lasts, NumPy does not ask Linux for transparent huge pages.

    NumPy marks every array of 4 MiB or more ``madvise(MADV_HUGEPAGE)``; with Linux's common
    ``transparent_hugepage/defrag = madvise`` each first touch of such memory then compacts memory
    and zeroes 2 MiB synchronously. A plug-in that fills large arrays afresh each iteration spent
    40 % of its CPU time there (docs/benchmarks.md, "Under a busy machine"). The
    switch is process-wide: the first run to start turns it off and the last to end restores it
    (``NUMPY_MADVISE_HUGEPAGE`` and NumPy's own choice outside runs are left alone).
    """
    setter = _madvise_setter()
    if setter is None:
        yield
        return
    with _PAGES_LOCK:
        if _PAGES["runs"] == 0:
            _PAGES["before"] = setter(False)
        _PAGES["runs"] += 1
    try:
        yield
    finally:
        with _PAGES_LOCK:
            _PAGES["runs"] -= 1
            if _PAGES["runs"] == 0:
                setter(_PAGES["before"])


@contextlib.contextmanager
def pause_gc():
    """No automatic garbage collection while a Pyomo model is built and solved.

    A model is millions of small container objects: the cyclic collector would traverse them again
    and again while they are created. Loops free each model with :func:`release` instead.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def release(model) -> None:
    """Free a solved Pyomo model now, by reference counting.

    A Pyomo block and its components form reference cycles, so a dropped model waits for a full
    cyclic collection, which in a loop meant one model more held per iteration (10.1 GB peak at
    n = 10^6, m = 100, against 3.8 GB when each model is freed) or a 1 s collection per iteration.
    Deleting the components first lets reference counting free the expressions at once.
    """
    if model is None or not hasattr(model, "component_objects"):
        return  # nothing, or a native method's own solution object
    for component in list(model.component_objects(descend_into=False)):
        model.del_component(component)


# --------------------------------------------------------------------------- the call's clock

#: when the current public call started (:func:`clocked`), in a box the first run takes
_CALL_START: contextvars.ContextVar[list | None] = contextvars.ContextVar(
    "aidopt_call_start", default=None)


def clocked(func):
    """Decorator for a ``solve_*`` door: the first :class:`Run` it starts counts its
    ``time_limit`` from the call, so that checking and copying the input (seconds on a
    10^6 x 100 X) is inside the limit. Runs started after the first (inner runs, which get the
    time the outer one has left) count from their own start. The copies are made with
    :func:`small_pages`, as within a run (a copy of 800 MB: 3-4 s instead of 5-7 s here)."""

    @functools.wraps(func)
    def door(*args, **kwargs):
        token = _CALL_START.set([time.perf_counter()])
        try:
            with small_pages():
                return func(*args, **kwargs)
        finally:
            _CALL_START.reset(token)

    return door


def call_deadline(time_limit: float | None) -> float | None:
    """When ``time_limit`` seconds counted from the current :func:`clocked` call (or from now,
    outside one) end, as a ``time.perf_counter()`` value; None without a limit. For work a door
    does before its :class:`Run` starts (the first run counts from the same instant)."""
    if time_limit is None:
        return None
    box = _CALL_START.get()
    return (box[0] if box else time.perf_counter()) + time_limit


# --------------------------------------------------------------------------- the run


@dataclass
class Column:
    """One column of the iteration table: header, width and format of its values."""

    name: str
    width: int
    fmt: str


class Run:
    """One run of an iterative algorithm: clock, solver calls, limits, log and result.

    Parameters
    ----------
    name : str
        Problem name for logs and the result.
    problem_class : ProblemClass or None
        Checked against the configured solver at once (before anything is built); ``None``: the
        run solves nothing with an external solver (a local search of aidopt's own), and
        ``config.solver`` may be ``None``.
    config : RunConfig
    defaults : callable, optional
        ``solver -> dict`` of problem-specific solver options (user options override them).
    dimensions : dict of str to int
        Problem sizes for the log and the result.
    fallbacks : callable, optional
        ``solver -> [(solver, form), ...]``: the run's one fallback policy (a plug-in's
        :meth:`~.protocol.AIDProblem.fallbacks`), used by every solve that goes through
        :meth:`solve_or_retry` or :meth:`solve_with_fallbacks` when ``config.fallback`` is on.
    """

    def __init__(self, name: str, problem_class, config: RunConfig, *, defaults=None,
                 dimensions: dict | None = None, mode: str = "", fallbacks=None):
        if config.solver is None and problem_class is not None:
            raise ValueError("RunConfig.solver must be set before a run starts")
        self.name = name
        self.problem_class = problem_class
        self.config = config
        self.dimensions = dict(dimensions or {})
        self.mode = mode
        from aidopt.models._data import deadline_in_force

        box = _CALL_START.get()
        self.start = box.pop() if box else time.perf_counter()  # the door's clock: once
        #: when the run's ``time_limit`` ends (a ``time.perf_counter()`` value; None: no limit),
        #: never after the deadline of a run it is part of: a model that deadline cut short
        #: must meet a solve with no time left here too
        own = None if config.time_limit is None else self.start + config.time_limit
        outer = deadline_in_force()
        self.deadline = outer if own is None else own if outer is None else min(own, outer)
        self._deadline: float | None = None  # a share of the clock (:meth:`share`), absolute
        self._defaults = defaults or (lambda solver: {})
        self._fallbacks = fallbacks or (lambda solver: [])
        # an algorithm of aidopt's own (e.g. SOR sweeps) uses no external solver: nothing to check
        self.spec = (None if problem_class is None
                     else BUILTIN_METHODS[config.solver] if config.solver in BUILTIN_METHODS
                     else solvers.check_solver(config.solver, problem_class))
        self.n_models = 0
        self.interrupted = False
        self.notes: list[str] = []
        # (failed solver, fallback, form) -> [first message, count, retries that ended optimal]
        self.retries: dict[tuple, list] = {}
        self.seconds: dict[str, float] = {}
        self.columns: list[Column] = []
        self.log = logger if config.log else _quiet
        if config.write_models is not None:
            Path(config.write_models).mkdir(parents=True, exist_ok=True)

    # ------------------------------------------------------------ clock and limits
    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def remaining(self) -> float | None:
        """Seconds left for the next solve: of the run's ``time_limit``, and within a
        :meth:`share` of the share's (None: no limit)."""
        # from the same absolute deadline as builds (:meth:`build`): a model whose rows were
        # skipped at the deadline always meets a solve with no time left
        left = None if self.deadline is None else self.deadline - time.perf_counter()
        if self._deadline is not None:
            share = self._deadline - time.perf_counter()
            left = share if left is None else min(left, share)
        return left

    def past_deadline(self) -> bool:
        """Whether the run's ``time_limit`` has passed, on the clock of :meth:`build`."""
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def time_up(self) -> bool:
        """Whether the run's ``time_limit`` (not a share of it) has passed."""
        return self.config.time_limit is not None and self.elapsed() >= self.config.time_limit

    @contextlib.contextmanager
    def share(self, fraction: float):
        """Within the block, solves see at most ``fraction`` of the time left at its start, so
        that a phase (an initial partition's LP rounds, a sample fit) cannot use the whole
        ``time_limit`` and leave the run without an iterate. Nothing changes without a limit."""
        left = self.remaining()
        outer = self._deadline
        if left is not None:
            self._deadline = time.perf_counter() + fraction * max(left, 0.0)
        try:
            yield
        finally:
            self._deadline = outer

    @contextlib.contextmanager
    def timed(self, step: str):
        """Add the seconds spent in the block to ``self.seconds[step]`` (the current iteration)."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[step] = self.seconds.get(step, 0.0) + time.perf_counter() - t0

    def take_seconds(self) -> dict[str, float]:
        """The step times since the last call, rounded for the history, and start afresh."""
        out = {k: round(v, 6) for k, v in self.seconds.items()}
        self.seconds = {}
        return out

    # ------------------------------------------------------------ solving
    def options_for(self, solver: str) -> dict:
        """Problem defaults for ``solver`` with the user's options on top (configured solver only)."""
        user = self.config.solver_options if solver == self.config.solver else {}
        return {**self._defaults(solver), **user}

    def solve(self, model, need_duals: bool = False, solver: str | None = None,
              problem_class=None) -> solvers.SolveOutcome:
        """Solve ``model`` with the configured (or given) solver, the time left and the options;
        write it first when ``write_models`` is set."""
        self.write(model)
        solver = solver or self.config.solver
        with self.alive(f"{solver} solving {model.name}"):
            return solvers.solve_model(
                model, solver, problem_class=problem_class or self.problem_class,
                need_duals=need_duals, time_limit=self.remaining(), threads=self.config.threads,
                tee=self.config.tee, options=self.options_for(solver),
            )

    @contextlib.contextmanager
    def alive(self, what: str, every: float | None = None):
        """While the block runs, log ``what`` with the elapsed seconds every ``every`` seconds
        (default :data:`HEARTBEAT`), so a long single solve is not silence. A thread does it:
        it runs while the solver releases the GIL (HiGHS and Clarabel do; ``tee=True`` shows
        the solver's own progress for the others). Nothing when the run's log is off."""
        every = HEARTBEAT if every is None else every
        if not self.config.log or self.config.tee or every <= 0:
            yield
            return
        done = threading.Event()
        start = time.perf_counter()

        def beat():
            while not done.wait(every):
                self.log.info("  ... %s: %.0f s (run %.0f s)", what,
                              time.perf_counter() - start, self.elapsed())

        thread = threading.Thread(target=beat, name="aidopt-heartbeat", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()

    def persistent(self, model, solver: str | None = None, problem_class=None):
        """A warm-start handle on ``model`` (see :func:`aidopt.solvers.persistent`); its solves
        get the run's time left and the model is written before each solve.

        Raises
        ------
        TimeLimitReached
            The time limit passed while HiGHS's handle loaded a model of more than one piece
            (:data:`aidopt.solvers.handles.LOAD_PIECE` rows or columns).
        """
        solver = solver or self.config.solver
        handle = solvers.persistent(
            model, solver=solver, problem_class=problem_class or self.problem_class,
            options=self.options_for(solver), threads=self.config.threads, tee=self.config.tee,
            deadline=self.deadline,
        )
        return _RunHandle(self, handle, model)

    def solve_or_retry(self, model, need_duals: bool = False, solver: str | None = None,
                       problem_class=None) -> solvers.SolveOutcome:
        """Solve ``model`` under the run's fallback policy: like :meth:`solve`, but a failed
        solve (an error, a numerical failure, an iteration limit, a licence refusal; never a time
        limit or an interruption) is retried on the *same* model with each fallback solver of
        the run that can take it, and each retry is noted in the result. This is the ``solve``
        the plug-ins receive for their own solves (initial sample, certificate). When no retry
        ends optimal, the first failure is returned (or its exception raised) unchanged."""
        solver = solver or self.config.solver
        outcome, error = self._attempt(model, need_duals, solver, problem_class)
        if self._should_retry(outcome):
            for other, _form in self._fallbacks(solver):
                if other == solver or not self._can_take(other, need_duals, problem_class):
                    continue
                retry, _ = self._attempt(model, need_duals, other, problem_class)
                self._note_retry(outcome, other, None, retry)
                if retry.optimal or not self._should_retry(retry):
                    return retry  # optimal, or stopped by the time limit or Ctrl-C
        if error is not None:
            raise error
        return outcome

    def plugin_solve(self) -> PluginSolve:
        """The ``solve`` a plug-in's own steps receive: :meth:`solve_or_retry`, with
        ``remaining()`` telling the seconds left (of the phase's :meth:`share`)."""
        return PluginSolve(self)

    def solve_with_fallbacks(self, build, *, need_duals: bool, fallbacks=None, rebuild=None):
        """Build and solve one model; on failure or licence refusal try the fallbacks.

        Parameters
        ----------
        build : callable
            ``build(form) -> model`` (``form=None``: the configured formulation).
        fallbacks : list of (solver, form), optional
            Tried in order when the first solve fails (not when it stops at the time limit) or a
            size-limited licence refuses the model; each retry is logged and noted in the result.
            Default: the run's policy for the configured solver.
        rebuild : callable, optional
            ``rebuild(model, outcome) -> model or None``, asked after each optimal solve, again
            after the rebuilt model's solve, until it returns ``None`` (the plug-in makes sure it
            does: :meth:`~.protocol.AIDProblem.rebuild`).

        Returns
        -------
        (model, outcome)
        """
        model = self.build(build, None)
        model, outcome, error = self._solve_checked(model, need_duals, None, rebuild)
        model, retried = self.retry_failed(model, outcome, build, need_duals=need_duals,
                                           fallbacks=fallbacks, rebuild=rebuild)
        if error is not None and not retried.optimal and retried is outcome:
            raise error  # nothing retried: the solver's own error, unchanged
        return model, retried

    def retry_failed(self, model, outcome, build, *, need_duals: bool, fallbacks=None,
                     rebuild=None):
        """``(model, outcome)`` of a finished solve, or of the first fallback that ends optimal
        when it failed: each fallback ``(solver, form)`` solves ``build(form)``. A time limit, an
        interruption, or ``fallback=False`` returns the solve as it is."""
        if not self._should_retry(outcome):
            return model, outcome
        if fallbacks is None:
            fallbacks = self._fallbacks(outcome.solver or self.config.solver)
        for solver, form in fallbacks:
            if not self._can_take(solver, need_duals, None):
                continue
            left = self.remaining()
            if left is not None and left <= 0:  # no time to build and solve another model
                self.note(f"{outcome.solver} returned {outcome.status} ({outcome.message}); no "
                          f"time left to retry with {solver}")
                return model, solvers.SolveOutcome(
                    solvers.SolveStatus.TIME_LIMIT, None, None, False, outcome.solver, "", 0.0,
                    "no time left for a fallback")
            release(model)
            model = self.build(build, form)
            model, retry, _ = self._solve_checked(model, True, solver, rebuild)
            self._note_retry(outcome, solver, form, retry)
            if retry.optimal or not self._should_retry(retry):
                return model, retry  # optimal, or stopped by the time limit or Ctrl-C
            outcome = retry
        return model, outcome

    def build(self, build, form=None):
        """``build(form)`` timed as the step ``"build"`` and stopped at the run's time limit.

        The formulations' row rules skip every row once the deadline has passed
        (:func:`aidopt.models._data.build_deadline`), so a build that would outlast the limit
        ends there; the incomplete model is released, never solved.

        Raises
        ------
        TimeLimitReached
            The time limit passed during the build.
        """
        from aidopt.models._data import build_deadline

        t0 = time.perf_counter()
        with self.timed("build"), build_deadline(self.deadline):
            model = build(form)
        if self.past_deadline():
            seconds = time.perf_counter() - t0
            release(model)
            raise solvers.TimeLimitReached(
                f"time limit reached while building the model ({seconds:.1f} s of building, "
                f"{self.elapsed():.1f} s into the run): no solve started")
        return model

    def _should_retry(self, outcome: solvers.SolveOutcome) -> bool:
        return self.config.fallback and not (
            outcome.optimal or outcome.status in ("time_limit", "interrupted"))

    def _can_take(self, solver: str, need_duals: bool, problem_class) -> bool:
        """Whether a fallback ``solver`` is installed and can solve this class, with duals when
        they are needed."""
        spec = solvers.SOLVERS.get(solver)
        if spec is None or solvers.availability(solver) not in ("full", "limited"):
            return False
        return (spec.duals or not need_duals) and (
            solvers.ProblemClass(problem_class or self.problem_class) in spec.classes)

    def _note_retry(self, failed, solver, form, retry) -> None:
        """Count a fallback; the result's message and the log have one line per failed solver
        and fallback (the first failure's reason, how often it happened and how many retries
        ended optimal), not one per solve or per status."""
        key = (failed.solver, solver, form)
        if key in self.retries:
            self.retries[key][1] += 1
            self.retries[key][2] += bool(retry.optimal)
            self.log.debug("%s returned %s (%s); retried with %s: %s", failed.solver,
                           failed.status, failed.message, solver, retry.status)
            return
        text = (f"{failed.solver} returned {failed.status} ({_one_line(failed.message)}); "
                f"retried with {solver}" + (f" ({form} form)" if form else "")
                + f": {retry.status}")
        self.retries[key] = [text, 1, int(bool(retry.optimal))]
        self.log.info(text)

    def retry_notes(self) -> list[str]:
        """The retries, one line per failed solver and fallback (with a count, and how many
        retries ended optimal, when it happened more than once)."""
        return [text if count == 1 else
                f"{text} (x{count}: the first shown" + ("" if optimal == count else
                                                        f"; {optimal} of them optimal") + ")"
                for text, count, optimal in self.retries.values()]

    def _attempt(self, model, need_duals, solver, problem_class):
        """One solve, as ``(outcome, error)``: a solver error (a crash, a licence refusal)
        becomes a failed outcome so that the policy can retry it, and is kept to be raised when
        nothing else succeeds. A time limit or a rejected option still raises at once."""
        try:
            return self.solve(model, need_duals=need_duals, solver=solver,
                              problem_class=problem_class), None
        except (solvers.TimeLimitReached, solvers.SolverOptionError):
            raise
        except solvers.SolverError as exc:
            status = (solvers.SolveStatus.LICENCE_LIMIT
                      if isinstance(exc, solvers.LicenceLimitError) else solvers.SolveStatus.ERROR)
            return solvers.SolveOutcome(status, None, None, False, solver or self.config.solver,
                                        "", 0.0, _short(exc)), exc

    def _solve_checked(self, model, need_duals, solver, rebuild):
        with self.timed("solve"):
            outcome, error = self._attempt(model, need_duals, solver, None)
        rounds = 0
        while outcome.optimal and rebuild is not None:
            again = rebuild(model, outcome)
            if again is None:
                break
            rounds += 1
            if rounds > MAX_REBUILDS:  # a plug-in whose rebuilds never end: say so, keep the solve
                self.note(f"{self.name}: rebuild asked for more than {MAX_REBUILDS} rounds; kept "
                          "the last solve")
                break
            self.log.debug("the plug-in rebuilt the model after the solve; solving again")
            release(model)
            model = again
            with self.timed("solve"):
                outcome, error = self._attempt(model, need_duals, solver, None)
        return model, outcome, error

    def write(self, model) -> None:
        """Write ``model`` as LP and MPS with readable names when ``write_models`` is set; not
        once the time limit has passed (a model built after it may be incomplete, and its solve
        returns at once)."""
        if self.config.write_models is None or self.past_deadline():
            return
        self.n_models += 1
        stem = Path(self.config.write_models) / f"{self.n_models:03d}_{model.name}"
        for suffix in ("lp", "mps"):
            # the format comes from the suffix (.lp: CPLEX LP, .mps: MPS); passing format="lp"
            # made Pyomo warn that the file name does not match the format
            model.write(f"{stem}.{suffix}", io_options={"symbolic_solver_labels": True})

    # ------------------------------------------------------------ failures and interrupts
    def failure(self, outcome: solvers.SolveOutcome) -> tuple[str, str]:
        """``(stop, message)`` for a solve that did not end optimal: ``"time_limit"``,
        ``"interrupted"`` or ``"solver_failure"``; a solver failure raises
        :class:`~aidopt.solvers.SolverError` unless ``raise_on_failure=False``."""
        if outcome.status == "time_limit":
            return "time_limit", f"solver stopped at the time limit ({outcome.message})"
        if outcome.status == "interrupted":
            return "interrupted", (f"interrupted (Ctrl-C) during a {outcome.solver} solve: the best "
                                   "solution so far")
        text = f"solver {outcome.solver} returned {outcome.status} ({outcome.message})"
        if self.config.raise_on_failure:
            raise solvers.SolverError(
                text + "; pass raise_on_failure=False to get the best solution so far instead.")
        return "solver_failure", text

    def error(self, exc: Exception) -> tuple[str, str]:
        """``(stop, message)`` for an exception raised inside a step: a time limit reached in a
        step without a partial result stops the run; any other solver error raises unless
        ``raise_on_failure=False``."""
        if isinstance(exc, solvers.TimeLimitReached):
            return "time_limit", str(exc)
        if self.config.raise_on_failure or isinstance(exc, solvers.SolverOptionError):
            raise exc  # a rejected option is the caller's to fix, whatever raise_on_failure says
        return "solver_failure", f"{type(exc).__name__}: {exc}"

    @contextlib.contextmanager
    def guard(self):
        """Turn Ctrl-C inside the block into a recorded interruption: the block ends,
        ``self.interrupted`` becomes True, and the loop goes on to certify and report the best
        solution so far (termination ``interrupted``)."""
        try:
            yield
        except KeyboardInterrupt:
            self.interrupted = True
            self.log.info("interrupted (Ctrl-C): finishing with the best solution so far")

    def note(self, text: str) -> None:
        """Record a remark (a fallback, a left-out row) once, for the result's message."""
        if text not in self.notes:
            self.notes.append(text)
            self.log.info(text)

    def check_objective(self, certificate: Certificate | None, objective: float,
                        floor: float = 1.0) -> tuple[Certificate | None, bool]:
        """The certificate as the run may accept it for ``objective``, and whether they agree.

        A certificate proves something about its own ``primal_objective``; the run reports
        ``objective`` (for AID, the plug-in's ``evaluate`` of the returned solution). When the
        two differ by more than ``tol`` relative (:func:`~.protocol.relative_difference`, on the
        scale of the gap test with its ``floor``), the certificate proves nothing about what the
        run reports: it comes back not certified, with a note saying why, and the run's message
        says so too. ``certificate`` ``None``: ``(None, True)``.
        """
        from aidopt.decomposition.protocol import relative_difference

        if certificate is None:
            return None, True
        primal = certificate.primal_objective
        diff = relative_difference(objective, primal, floor)
        if diff <= self.config.tol:
            return certificate, True
        text = (f"not certified: the objective reported, {objective:.10g}, is not the "
                f"certificate's primal objective, {primal:.10g} (relative difference "
                f"{diff:.3e} > tol {self.config.tol:g}; the evaluation of the solution and its "
                "certificate disagree)")
        self.note(f"{self.name}: {text}")
        note = "; ".join(part for part in (certificate.note, text) if part)
        return dataclasses.replace(certificate, certified=False, note=note), False

    # ------------------------------------------------------------ log
    def solver_version(self, solver: str | None = None) -> str:
        """The version of ``solver`` (default the configured one); aidopt's own for a built-in
        method."""
        from aidopt._version import __version__

        name = solver or self.config.solver
        return f"aidopt {__version__}" if name in BUILTIN_METHODS else solvers.version(name)

    def intro(self) -> None:
        from aidopt._version import __version__

        dims = " ".join(f"{k}={v}" for k, v in self.dimensions.items())
        self.log.info("aidopt %s | problem %s | %s | solver %s %s | %s", __version__, self.name, dims,
                    self.config.solver, self.solver_version(), self.mode)
        c = self.config
        self.log.info("tol %g | feasibility_tol %g | max_iter %s | time_limit %s | seed %d",
                    c.tol, c.feasibility_tol, c.max_iter, c.time_limit, c.seed)

    def header(self, columns: list[Column]) -> None:
        """Print the iteration table's header (the loop's own columns, then ``time``)."""
        self.columns = [*columns, Column("time", 8, ".2f")]
        self.log.info(" ".join(f"{c.name:>{c.width}}" for c in self.columns))

    def row(self, *values) -> None:
        """Print one row of the iteration table; the elapsed time is added."""
        cells = []
        for col, val in zip(self.columns, (*values, self.elapsed()), strict=True):
            if isinstance(val, float) and not math.isfinite(val):
                cells.append(f"{'-' if math.isnan(val) else val:>{col.width}}")
            else:
                cells.append(f"{val:>{col.width}{col.fmt}}")
        self.log.info(" ".join(cells))

    def result(self, termination: Termination, message: str = "", *, objective=math.inf,
               lower=-math.inf, solution=None, certificate: Certificate | None = None,
               history: list[IterationRecord] | None = None, solver: str | None = None,
               aid: bool = True, floor: float = 1.0) -> AIDResult:
        """Assemble the result (gap from ``objective`` and ``lower``, with the gap's ``floor``:
        :func:`~.protocol.relative_gap`) and log its summary."""
        from aidopt.decomposition.protocol import relative_gap

        parts = [p for p in (message, *self.notes, *self.retry_notes()) if p]
        if self.retries and certificate is not None and certificate.certified:
            parts.append(f"certified with {solver or self.config.solver}'s solution")
        result = AIDResult(
            problem=self.name, termination=termination, objective=objective, lower_bound=lower,
            gap=relative_gap(objective, lower, floor), solution=solution or {}, certificate=certificate,
            history=history or [], solver=solver or self.config.solver,
            solver_version=self.solver_version(solver), aid=aid,
            n=self.dimensions.get("n"), m=self.dimensions.get("m"), seconds=self.elapsed(),
            config=self.config.as_dict(), message="; ".join(parts), dimensions=self.dimensions,
        )
        width = sum(c.width + 1 for c in self.columns) - 1 if self.columns else 60
        self.log.info("-" * width)
        # the coefficient table comes from the caller, once the data's feature names are attached
        self.log.info(result.summary(coefficients=False))
        return result


#: most rebuilds of one aggregated model (:meth:`~.protocol.AIDProblem.rebuild` must end by
#: itself; this only keeps a faulty plug-in from looping forever)
MAX_REBUILDS = 100


class PluginSolve:
    """``solve(model, need_duals=False, solver=None, problem_class=None)`` for a plug-in's own
    solves (:meth:`Run.solve_or_retry`), and ``remaining()``: seconds left for the current phase
    (None without a time limit), for work a plug-in does without a Pyomo model."""

    def __init__(self, run: Run):
        self._run = run

    def __call__(self, model, need_duals: bool = False, solver: str | None = None,
                 problem_class=None) -> solvers.SolveOutcome:
        return self._run.solve_or_retry(model, need_duals=need_duals, solver=solver,
                                        problem_class=problem_class)

    def remaining(self) -> float | None:
        return self._run.remaining()


class _RunHandle:
    """A persistent solver handle whose solves respect the run's clock and model writing."""

    def __init__(self, run: Run, handle, model):
        self._run, self._handle, self._model = run, handle, model

    @property
    def warm(self) -> bool:
        return self._handle.warm

    @property
    def stats(self):
        return self._handle.stats

    def update_objective(self) -> None:
        self._handle.update_objective()

    def add_constraints(self, constraints) -> None:
        self._handle.add_constraints(constraints)

    def remove_constraints(self, constraints) -> None:
        self._handle.remove_constraints(constraints)

    def update_variables(self, variables) -> None:
        self._handle.update_variables(variables)

    def update(self) -> None:
        self._handle.update()

    def set_start(self, values) -> None:
        """A MIP start for the next solve (:meth:`aidopt.solvers.handles.PersistentHandle.set_start`)."""
        self._handle.set_start(values)

    @property
    def model(self):
        return self._model

    def close(self) -> None:
        self._handle.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def solve(self, need_duals: bool = False) -> solvers.SolveOutcome:
        self._run.write(self._model)
        return self._handle.solve(need_duals=need_duals, time_limit=self._run.remaining())


def _short(exc: Exception) -> str:
    text = str(exc)
    if "licen" in text.lower():
        return "model too large for its licence"
    return _one_line(text)


def _one_line(text) -> str:
    """``text`` on one line of at most 200 characters, for the result's message and the log."""
    return " ".join(str(text).split())[:200]
