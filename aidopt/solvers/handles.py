"""Persistent handles: keep one model loaded in the solver, apply updates in place, re-solve warm.

The Pyomo model stays the single source of truth, as in Pyomo's own persistent interfaces: the
user changes the Pyomo model, then tells the handle what changed::

    h = aidopt.solvers.persistent(model, solver="highs")
    out = h.solve()                      # a SolveOutcome; values loaded into the model
    model.p[j] = 0.5                     # a mutable Param in the objective
    h.update_objective()
    c = model.cuts.add(model.x[1] + model.x[2] >= 1)
    h.add_constraints([c])
    model.cuts[1].deactivate()
    h.remove_constraints([model.cuts[1]])
    model.x[3].setub(4.0); model.x[4].fix(0.0)
    h.update_variables([model.x[3], model.x[4]])
    out = h.solve(need_duals=True)       # warm: from the previous basis

:meth:`PersistentHandle.update` instead finds every change itself (a new or changed objective,
added, removed or replaced constraints, changed bounds), at the cost of one pass over the model.

Backends:

* **HiGHS** (``highspy``): one ``Highs`` object; ``changeColsCost`` / ``changeObjectiveOffset`` /
  ``changeObjectiveSense`` for the objective, ``addRows`` / ``deleteRows`` for rows (the row index
  map is compacted after deletions), ``changeColsBounds`` for bounds and fixing (a fixed variable
  is a column with equal bounds), ``addCols`` for new variables. HiGHS keeps its basis, so simplex
  re-solves start from it; the handle therefore defaults to ``solver="simplex"`` (interior point
  does not warm start) unless ``options`` name a ``solver``. MILPs re-solve with branch and bound;
  :meth:`PersistentHandle.set_start` hands HiGHS a starting solution (``setSolution``, partial
  allowed: HiGHS completes or rejects it), e.g. the previous incumbent after rows or columns were
  added. The other handles keep the MIP start unused and say so (``extra["start"]``).
* **Gurobi**: Pyomo's ``pyomo.contrib.solver`` ``gurobi_persistent``, which detects the changes
  itself at each solve (the update calls only class-check what changed); Gurobi warm-starts from
  the basis of the modified model.
* **CPLEX, Xpress**: Pyomo's legacy ``cplex_persistent`` / ``xpress_persistent``
  (``add_constraint``, ``remove_constraint``, ``update_var``, ``set_objective``). Those interfaces
  fold the values of fixed variables into the rows, so fixing or unfixing a variable also reloads
  the rows that use it (and the objective).
* **every other solver**: the same handle rebuilds and calls :func:`aidopt.solvers.solve_model`
  at each solve (``warm`` is False), transparently.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .classify import constraint_facts, model_facts, quadratic_variables, resolve_class
from .errors import SolverCapabilityError, SolverError, TimeLimitReached
from .reader import Columns, LinearProgram, _hessian, read_objective, read_rows, var_bounds
from .registry import (
    DEFAULT_SOLVER,
    ProblemClass,
    availability,
    backend_module,
    check_licence,
    check_solver,
    spec_of,
)
from .status import SolveOutcome, SolveStatus

__all__ = ["HandleStats", "PersistentHandle", "persistent"]


def persistent(model, solver: str = DEFAULT_SOLVER, *, problem_class: ProblemClass | str | None = None,
               options: dict | None = None, threads: int | None = None,
               tee: bool = False, deadline: float | None = None) -> PersistentHandle:
    """A handle that keeps ``model`` loaded in ``solver`` and re-solves it after updates.

    Parameters
    ----------
    model : pyomo.core.Block
        A concrete Pyomo model with one active objective; it stays the source of truth.
    solver : str
        A registered solver name (warm for ``highs``, ``gurobi``, ``cplex``, ``xpress``) or any
        other name :func:`~aidopt.solvers.solve_model` takes (rebuilt at each solve).
    problem_class : ProblemClass, str or None
        The class the model is routed as (``None``: inferred); checked like ``solve_model`` does,
        at creation and for every added row, new objective and changed variable domain.
    options : dict, optional
        Solver options passed through (HiGHS: ``solver`` defaults to ``"simplex"`` here).
    threads : int, optional
        Solver threads.
    tee : bool
        Show the solver's log.
    deadline : float, optional
        A ``time.perf_counter()`` value by which the model must be loaded: HiGHS's handle reads
        the rows and columns ``LOAD_PIECE`` at a time and raises :class:`TimeLimitReached` when
        the deadline passes with some still to read (a model too small to need a second piece
        always loads). The other handles load at once and ignore it.

    Returns
    -------
    PersistentHandle
        ``h.solve(need_duals=False, time_limit=None)``, ``h.set_start(values)`` (a MIP start),
        the update methods, ``h.warm``, ``h.stats``, ``h.close()``; also a context manager.
    """
    spec = spec_of(solver)
    name = spec.name if spec else solver
    kwargs = dict(problem_class=None if problem_class is None else ProblemClass(problem_class),
                  options=dict(options or {}), threads=threads, tee=tee, deadline=deadline)
    if spec is not None and spec.warm:
        if spec.backend == "highs":
            return _HighsHandle(model, name, **kwargs)
        if spec.backend in ("cplex", "xpress"):
            return _LegacyHandle(model, name, **kwargs)
        if spec.backend == "contrib":
            return _ContribHandle(model, name, **kwargs)
    return _RebuildHandle(model, name, **kwargs)


@dataclass
class HandleStats:
    """Counters of a persistent handle.

    Attributes
    ----------
    solves : int
        Calls of ``solve`` that reached the solver.
    warm_solves : int
        Of those, solves of a model already loaded and updated in place.
    rebuilds : int
        Times the solver model was built again after the first build.
    seconds : float
        Wall-clock seconds spent in ``solve``.
    update_seconds : float
        Wall-clock seconds spent in the update methods.
    """

    solves: int = 0
    warm_solves: int = 0
    rebuilds: int = 0
    seconds: float = 0.0
    update_seconds: float = 0.0


def _degree(expr) -> int | None:
    """Polynomial degree of an expression (0 for a number)."""
    from pyomo.core.expr.numeric_expr import LinearExpression

    if type(expr) is LinearExpression:
        return 1
    return expr.polynomial_degree() if hasattr(expr, "polynomial_degree") else 0


def _datas(components) -> list:
    """Component datas from one component (indexed or not) or an iterable of them."""
    if components is None:
        return []
    if hasattr(components, "is_indexed"):
        components = [components]
    out = []
    for c in components:
        if c.is_indexed():
            out.extend(c.values())
        else:
            out.append(c)
    return out


class PersistentHandle:
    """A model kept loaded in a solver between solves (see :func:`persistent`).

    Attributes
    ----------
    model : pyomo.core.Block
        The model (the source of truth: change it, then call the matching update method).
    solver : str
        The solver's name.
    warm : bool
        True if updates are applied to the loaded model in place and re-solves start warm;
        False if each solve rebuilds transparently.
    stats : HandleStats
        Counters: solves, warm_solves, rebuilds, seconds, update_seconds.
    """

    warm: bool = False

    def __init__(self, model, solver: str, *, problem_class, options, threads, tee, deadline=None):
        self.model = model
        self.deadline = deadline  # of the first load (HiGHS only)
        self.solver = solver
        self.problem_class = problem_class
        self.options = options
        self.threads = threads
        self.tee = tee
        self.stats = HandleStats()
        self._closed = False
        self._pending = 0.0  # update seconds since the last solve
        self._start: list | None = None  # (variable, value) pairs for the next solve

    # ----------------------------------------------------------------- public API
    def solve(self, need_duals: bool = False, time_limit: float | None = None) -> SolveOutcome:
        """Solve the current model, load the values into its variables.

        Parameters
        ----------
        need_duals : bool
            Return constraint duals (Pyomo's convention, d objective / d rhs; not for MIPs).
        time_limit : float, optional
            Seconds for this solve; ``<= 0`` returns a ``time_limit`` outcome without solving.

        Returns
        -------
        SolveOutcome
            ``extra["warm"]`` says whether this solve reused the loaded model.
        """
        self._check_open()
        if time_limit is not None and time_limit <= 0:
            return SolveOutcome(SolveStatus.TIME_LIMIT, None, None, False, self.solver, "", 0.0,
                                "no time left")
        t0 = time.perf_counter()
        out = self._solve(need_duals, time_limit, t0)
        if self._start is not None:
            out.extra.setdefault("start", "ignored: this solver's handle does not pass MIP starts")
            self._start = None
        self.stats.solves += 1
        self.stats.seconds += time.perf_counter() - t0
        if out.extra.get("warm"):
            self.stats.warm_solves += 1
        self._pending = 0.0
        return out

    def set_start(self, values) -> None:
        """A starting solution for the next :meth:`solve` of a MIP (used once).

        Parameters
        ----------
        values : mapping or iterable of (variable, value)
            Values of some or all of the model's variables, e.g. the previous incumbent after
            rows or columns were added (a new column may be left out). The solver checks the
            point; an infeasible or incomplete start is completed or dropped by it, never
            trusted. HiGHS takes it (``setSolution``); other handles report
            ``extra["start"] = "ignored: ..."`` in the outcome.

        Raises
        ------
        ValueError
            A value that is not a finite number, or a key that is not a variable of the model.
        """
        self._check_open()
        from pyomo.core.base.var import VarData

        pairs = list(values.items()) if hasattr(values, "items") else list(values)
        checked = []
        for item in pairs:
            if not (isinstance(item, tuple) and len(item) == 2):
                raise ValueError("set_start takes a mapping or (variable, value) pairs")
            var, val = item
            if not isinstance(var, VarData) or var.model() is not self.model.model():
                raise ValueError(f"set_start: {var!r} is not a variable of the handle's model")
            # True / False (also NumPy's) are 1 / 0: a binary start given as a boolean mask
            if not isinstance(val, bool | int | float | np.bool_ | np.integer | np.floating) \
                    or not np.isfinite(val):
                raise ValueError(f"set_start: the value of {var.name} must be a finite number, "
                                 f"got {val!r}")
            checked.append((var, float(val)))
        self._start = checked

    def update_objective(self) -> None:
        """Re-read the active objective from the model (coefficients, mutable Param values,
        constant, sense; also a different active objective)."""
        self._timed(self._update_objective)

    def add_constraints(self, cons) -> None:
        """Load constraints that were added to (and are active in) the model.

        Parameters
        ----------
        cons : ConstraintData, Constraint or iterable of them
        """
        cons = _datas(cons)
        inactive = [c.name for c in cons if not c.active]
        if inactive:
            raise ValueError(f"add_constraints takes active constraints; inactive: {inactive[:5]}")
        if cons:
            self._timed(self._add_constraints, cons)

    def remove_constraints(self, cons) -> None:
        """Unload constraints that were deleted from or deactivated in the model.

        Parameters
        ----------
        cons : ConstraintData, Constraint or iterable of them
        """
        cons = _datas(cons)
        if cons:
            self._timed(self._remove_constraints, cons)

    def update_variables(self, variables) -> None:
        """Reload bounds, fixed state and domain of these variables.

        Parameters
        ----------
        variables : VarData, Var or iterable of them
        """
        variables = _datas(variables)
        if variables:
            self._timed(self._update_variables, variables)

    def update(self) -> None:
        """Find every change since the last load and apply it: the active objective (a whole new
        expression, another objective, Param values), added, removed or replaced constraints
        (by the identity of their expression), changed variable bounds, fixed states and
        domains. Costs one pass over the model; the targeted methods cost only what they touch.
        (A mutable ``Param`` inside a constraint is not seen: remove and add that constraint.)"""
        self._timed(self._update)

    def close(self) -> None:
        """Release the solver's model (the handle cannot solve afterwards)."""
        if not self._closed:
            self._release()
            self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} solver={self.solver!r} warm={self.warm} "
                f"solves={self.stats.solves}>")

    # ----------------------------------------------------------------- helpers
    def _timed(self, fn, *args):
        self._check_open()
        t0 = time.perf_counter()
        try:
            fn(*args)
        except Exception as exc:
            # a refused update (e.g. a variable became integer in a model routed as LP) may have
            # been applied in part: the loaded model no longer matches the Pyomo model
            self._stale = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            dt = time.perf_counter() - t0
            self.stats.update_seconds += dt
            self._pending += dt

    def _check_open(self):
        if self._closed:
            raise SolverError("this persistent handle was closed")
        if getattr(self, "_stale", None):
            raise SolverError(f"an update of this persistent handle was refused ({self._stale}); "
                              "the loaded model is out of sync with the Pyomo model: make a new "
                              "handle (aidopt.solvers.persistent) or solve with solve_model")

    def _check_class(self, integer: bool, quadratic: bool, detail: str) -> ProblemClass:
        actual = ProblemClass.of(integer=integer, quadratic=quadratic)
        actual = resolve_class(actual, self.problem_class, self.solver, detail)
        check_solver(self.solver, actual)
        return actual

    def _check_rows(self, cons) -> None:
        n_int, degree = constraint_facts(cons)
        if degree is None or degree > 1:
            raise SolverCapabilityError(
                f"an added constraint is not linear (degree {degree}); aidopt's classes "
                "(LP, QP, MILP, MIQP) have linear constraints")
        if n_int:
            self._check_class(True, self._quadratic, f"{n_int} binary/integer variables in added rows")

    def _active_objective(self):
        import pyomo.environ as pyo

        objs = list(self.model.component_data_objects(pyo.Objective, active=True))
        if len(objs) != 1:
            raise SolverError(f"the model has {len(objs)} active objectives; a handle needs one")
        return objs[0]

    # ----------------------------------------------------------------- backend hooks
    _quadratic = False

    def _solve(self, need_duals, time_limit, t0) -> SolveOutcome:
        raise NotImplementedError

    def _update_objective(self):
        pass

    def _add_constraints(self, cons):
        pass

    def _remove_constraints(self, cons):
        pass

    def _update_variables(self, variables):
        pass

    def _update(self):
        pass

    def _release(self):
        pass


# --------------------------------------------------------------------------- rebuild


class _RebuildHandle(PersistentHandle):
    """Any solver: each solve is a fresh :func:`solve_model` of the current model."""

    warm = False

    def __init__(self, model, solver, **kwargs):
        super().__init__(model, solver, **kwargs)
        spec = spec_of(solver)
        if spec is not None and availability(solver) not in ("full", "limited"):
            check_solver(solver, ProblemClass.LP)  # raises the readable "not installed" error

    def _solve(self, need_duals, time_limit, t0):
        from .solve import solve_model

        if self.stats.solves:
            self.stats.rebuilds += 1
        out = solve_model(self.model, self.solver, problem_class=self.problem_class,
                          need_duals=need_duals, time_limit=time_limit, threads=self.threads,
                          tee=self.tee, options=self.options)
        out.extra["warm"] = False
        return out


# --------------------------------------------------------------------------- HiGHS

#: rows (or columns) a HiGHS handle reads between two looks at its load's deadline
LOAD_PIECE = 2_000


def _stack_rows(parts: list) -> tuple:
    """One ``(indptr, index, data, lower, upper)`` from those of consecutive row pieces."""
    offsets = np.cumsum([0] + [int(part[0][-1]) for part in parts])
    indptr = np.concatenate([part[0][:-1] + off for part, off in zip(parts, offsets, strict=False)]
                            + [offsets[-1:]])
    return (indptr, *(np.concatenate([part[i] for part in parts]) for i in range(1, 5)))


class _HighsHandle(PersistentHandle):
    """One ``highspy.Highs`` updated in place (see the module docstring)."""

    warm = True

    def __init__(self, model, solver, **kwargs):
        super().__init__(model, solver, **kwargs)
        self.options = dict(self.options)
        self.options.setdefault("solver", "simplex")
        self._h = None
        self._build()

    # the loaded model ------------------------------------------------------
    def _build(self):
        import pyomo.environ as pyo
        from scipy import sparse

        from . import highs

        if self._h is not None:
            self.stats.rebuilds += 1
        obj = self._active_objective()
        cols = Columns()
        cons = list(self.model.component_data_objects(pyo.Constraint, active=True))
        indptr, index, data, lower, upper = _stack_rows(self._in_pieces(
            lambda piece: read_rows(piece, cols), cons, "rows"))
        ocols, ocoefs, offset, pairs, qcoefs, maximize = read_objective(obj, cols)
        n = len(cols)
        c = np.zeros(n)
        np.add.at(c, np.asarray(ocols, dtype=np.int64), np.asarray(ocoefs, dtype=float))
        A = sparse.csr_array((data, index, indptr), shape=(len(cons), n)).tocsc()
        A.sum_duplicates()
        col_lower, col_upper, integer = (np.concatenate(parts) for parts in zip(
            *self._in_pieces(self._column_data, cols.vars, "columns"), strict=True))
        self._check_class(bool(integer.any()), bool(pairs), self._detail(integer, pairs))
        prog = LinearProgram(
            c=c, offset=offset, maximize=maximize, A=A, row_lower=lower, row_upper=upper,
            col_lower=col_lower, col_upper=col_upper, columns=cols.vars, rows=cons,
            Q=_hessian(pairs, qcoefs, n) if pairs else None,
            integrality=integer if integer.any() else None,
        )
        if pairs and self.options.get("solver") == "simplex":
            self.options.pop("solver")  # HiGHS's QP solver is its own active set method
        h = highs.new_highs(threads=self.threads, tee=self.tee, options=self.options)
        highs.pass_program(h, prog)
        cols.take_new()
        self._h, self._cols, self._rows = h, cols, cons
        self._row_of = {id(con): i for i, con in enumerate(cons)}
        self._row_expr = [con.expr for con in cons]
        self._obj, self._obj_expr = obj, obj.expr
        self._quadratic = bool(pairs)
        self._col_lower, self._col_upper, self._col_int = col_lower, col_upper, integer
        self._solved = False
        self._changes: set[str] = set()

    def _in_pieces(self, read, items: list, what: str) -> list:
        """``read`` of ``items`` ``LOAD_PIECE`` at a time (at least one call), the load's deadline
        checked before every piece after the first."""
        out = []
        for k in range(0, max(len(items), 1), LOAD_PIECE):
            if k and self.deadline is not None and time.perf_counter() >= self.deadline:
                raise TimeLimitReached(
                    f"time limit reached while loading the model into {self.solver} ({k} of "
                    f"{len(items)} {what} read): no solve started")
            out.append(read(items[k:k + LOAD_PIECE]))
        return out

    @staticmethod
    def _column_data(variables):
        bounds = [var_bounds(v) for v in variables]
        lower = np.array([b[0] for b in bounds], dtype=float)
        upper = np.array([b[1] for b in bounds], dtype=float)
        # a fixed integer variable is a constant: its column is continuous (with equal bounds)
        integer = np.fromiter((v.is_integer() and not v.fixed for v in variables), dtype=bool,
                              count=len(variables))
        return lower, upper, integer

    @staticmethod
    def _detail(integer, pairs):
        parts = []
        if integer.any():
            parts.append(f"{int(integer.sum())} binary/integer variables")
        if pairs:
            parts.append("a quadratic objective")
        return " and ".join(parts) or "only continuous variables"

    @property
    def _is_mip(self) -> bool:
        return bool(self._col_int.any())

    def _add_columns(self) -> None:
        """Add the variables ``Columns`` met since the last call to HiGHS (no entries yet)."""
        import highspy

        new = self._cols.take_new()
        if not new:
            return
        lower, upper, integer = self._column_data(new)
        if integer.any() and not self._col_int.any():
            self._check_class(True, self._quadratic, f"{int(integer.sum())} new binary/integer variables")
        k = len(new)
        inf = highspy.kHighsInf
        status = self._h.addCols(k, np.zeros(k), np.clip(lower, -inf, inf), np.clip(upper, -inf, inf),
                                 0, np.zeros(k, dtype=np.int32), np.zeros(0, dtype=np.int32),
                                 np.zeros(0))
        if status == highspy.HighsStatus.kError:
            raise SolverError("HiGHS rejected new columns")
        first = len(self._col_lower)
        if integer.any():
            idx = np.arange(first, first + k, dtype=np.int32)[integer]
            self._h.changeColsIntegrality(len(idx), idx, np.full(len(idx), 1, dtype=np.uint8))
        self._col_lower = np.concatenate([self._col_lower, lower])
        self._col_upper = np.concatenate([self._col_upper, upper])
        self._col_int = np.concatenate([self._col_int, integer])

    # updates --------------------------------------------------------------------
    def _update_objective(self):
        import highspy

        obj = self._active_objective()
        ocols, ocoefs, offset, pairs, qcoefs, maximize = read_objective(obj, self._cols)
        if bool(pairs) != self._quadratic:
            self._check_class(self._is_mip, bool(pairs), "a quadratic objective" if pairs
                              else "a linear objective")
            if pairs and self.options.get("solver") == "simplex":
                self.options.pop("solver")  # HiGHS's QP solver is its own active set method
                self._h.setOptionValue("solver", "choose")
        self._add_columns()
        n = len(self._cols)
        c = np.zeros(n)
        np.add.at(c, np.asarray(ocols, dtype=np.int64), np.asarray(ocoefs, dtype=float))
        h = self._h
        h.changeColsCost(n, np.arange(n, dtype=np.int32), c)
        h.changeObjectiveOffset(offset)
        h.changeObjectiveSense(highspy.ObjSense.kMaximize if maximize else highspy.ObjSense.kMinimize)
        if pairs or self._quadratic:
            from . import highs

            highs.pass_hessian(h, _hessian(pairs, qcoefs, n) if pairs else None, n)
        self._quadratic = bool(pairs)
        self._obj, self._obj_expr = obj, obj.expr
        self._changes.add("objective")

    def _add_constraints(self, cons):
        import highspy

        known = [c.name for c in cons if id(c) in self._row_of]
        if known:
            raise ValueError(f"constraints already loaded: {known[:5]}")
        self._check_rows(cons)
        indptr, index, data, lower, upper = read_rows(cons, self._cols)
        self._add_columns()
        inf = highspy.kHighsInf
        status = self._h.addRows(len(cons), np.clip(lower, -inf, inf), np.clip(upper, -inf, inf),
                                 len(data), indptr[:-1].astype(np.int32), index.astype(np.int32),
                                 data)
        if status == highspy.HighsStatus.kError:
            raise SolverError("HiGHS rejected the new rows")
        first = len(self._rows)
        for i, con in enumerate(cons):
            self._row_of[id(con)] = first + i
        self._rows.extend(cons)
        self._row_expr.extend(con.expr for con in cons)
        self._changes.add("rows")

    def _remove_constraints(self, cons):
        unknown = [c.name for c in cons if id(c) not in self._row_of]
        if unknown:
            raise ValueError(f"constraints not loaded in this handle: {unknown[:5]}")
        gone = np.zeros(len(self._rows), dtype=bool)
        gone[[self._row_of[id(c)] for c in cons]] = True
        idx = np.flatnonzero(gone).astype(np.int32)
        self._h.deleteRows(len(idx), idx)
        # HiGHS compacts the remaining rows in order: so do the maps
        self._rows = [r for r, g in zip(self._rows, gone, strict=True) if not g]
        self._row_expr = [e for e, g in zip(self._row_expr, gone, strict=True) if not g]
        self._row_of = {id(con): i for i, con in enumerate(self._rows)}
        self._changes.add("rows")

    def _update_variables(self, variables):
        idx = [j for j in (self._cols.get(v) for v in variables) if j is not None]
        self._sync_columns(np.asarray(idx, dtype=np.int64))

    def _sync_columns(self, idx) -> None:
        """Send the bounds and integrality of columns ``idx`` that differ from what is loaded."""
        if idx.size == 0:
            return
        variables = [self._cols.vars[j] for j in idx]
        lower, upper, integer = self._column_data(variables)
        changed = (lower != self._col_lower[idx]) | (upper != self._col_upper[idx])
        if changed.any():
            import highspy

            inf = highspy.kHighsInf
            j = idx[changed].astype(np.int32)
            self._h.changeColsBounds(len(j), j, np.clip(lower[changed], -inf, inf),
                                     np.clip(upper[changed], -inf, inf))
            self._col_lower[idx[changed]] = lower[changed]
            self._col_upper[idx[changed]] = upper[changed]
            self._changes.add("bounds")
        flipped = integer != self._col_int[idx]
        if flipped.any():
            will = self._col_int.copy()
            will[idx] = integer
            if will.any() and not self._col_int.any():
                self._check_class(True, self._quadratic,
                                  f"{int(will.sum())} binary/integer variables")
            j = idx[flipped].astype(np.int32)
            self._h.changeColsIntegrality(len(j), j, integer[flipped].astype(np.uint8))
            self._col_int[idx[flipped]] = integer[flipped]
            self._changes.add("integrality")

    def _update(self):
        import pyomo.environ as pyo

        active = list(self.model.component_data_objects(pyo.Constraint, active=True))
        ids = {id(c) for c in active}
        stale = [c for c, e in zip(self._rows, self._row_expr, strict=True)
                 if id(c) not in ids or c.expr is not e]
        if stale:
            self._remove_constraints(stale)
        new = [c for c in active if id(c) not in self._row_of]
        if new:
            self._add_constraints(new)
        self._sync_columns(np.arange(len(self._cols), dtype=np.int64))
        self._update_objective()

    # solving ----------------------------------------------------------------------
    def _solve(self, need_duals, time_limit, t0):
        from . import highs

        # HiGHS measures its time limit on a clock that runs over every solve of this object
        highs.set_time_limit(self._h, None if time_limit is None else time_limit + self._h.getRunTime())
        warm = self._solved
        strategy = self._simplex_strategy()
        extra = {"warm": warm, "simplex_strategy": strategy}
        if self._start is not None:
            extra["start"] = self._pass_start()
        out = highs.run(self._h, self._cols.vars, self._rows, need_duals=need_duals,
                        is_mip=self._is_mip, t0=t0, read_seconds=self._pending, extra=extra)
        self._solved = True
        self._changes.clear()
        return out

    def _pass_start(self) -> str:
        """Give HiGHS the start of :meth:`set_start` (its sparse ``setSolution``); what happened."""
        import highspy

        if not self._is_mip:
            return "ignored: not a MIP"
        known = [(self._cols.get(v), val) for v, val in self._start]
        known = [(j, val) for j, val in known if j is not None]
        if not known:
            return "ignored: none of its variables is in the loaded model"
        idx = np.array([j for j, _ in known], dtype=np.int32)
        val = np.array([v for _, v in known], dtype=float)
        status = self._h.setSolution(len(idx), idx, val)
        if status == highspy.HighsStatus.kError:
            return "rejected by HiGHS"
        return f"passed ({len(idx)} of {len(self._cols)} columns)"

    def _simplex_strategy(self) -> int | None:
        """Primal simplex after objective-only changes (the basis stays primal feasible), HiGHS's
        default (dual simplex) otherwise; never when the caller chose a strategy or solver."""
        if "simplex_strategy" in self.options or self.options.get("solver") != "simplex" \
                or self._is_mip or self._quadratic:
            return None
        strategy = 4 if self._solved and self._changes == {"objective"} else 1
        self._h.setOptionValue("simplex_strategy", strategy)
        return strategy

    def _release(self):
        if self._h is not None:
            self._h.clear()
            self._h = None


# --------------------------------------------------------------------------- Gurobi


class _ContribHandle(PersistentHandle):
    """Pyomo's ``pyomo.contrib.solver`` persistent interface (Gurobi): it finds the changes
    itself at each solve, so the update methods only check classes."""

    warm = True

    def __init__(self, model, solver, **kwargs):
        from .contrib import contrib_factory

        super().__init__(model, solver, **kwargs)
        self._spec = spec_of(solver)
        self._class = self._check_model()
        self._quadratic = self._class.quadratic
        self._opt = contrib_factory()(self._spec.pyomo_name)
        self._solved = False

    def _limited(self) -> bool:
        return self._spec.limited_licence is not None and availability(self.solver) == "limited"

    def _check_model(self) -> ProblemClass:
        limited = self._limited()
        facts = model_facts(self.model, count_vars=limited)
        actual = resolve_class(facts.problem_class, self.problem_class, self.solver, facts.describe())
        check_solver(self.solver, actual, n_vars=facts.n_vars, n_cons=facts.n_cons,
                     n_quad_vars=quadratic_variables(self.model) if limited and actual.quadratic else 0)
        return actual

    def _add_constraints(self, cons):
        self._check_rows(cons)

    def _update_objective(self):
        degree = _degree(self._active_objective().expr)
        if degree is None or degree > 2:
            raise SolverCapabilityError("the new objective is not linear or quadratic")
        if (degree == 2) != self._quadratic:
            self._class = self._check_class(self._class.integer, degree == 2,
                                            "a quadratic objective" if degree == 2 else "a linear objective")
            self._quadratic = degree == 2

    def _update_variables(self, variables):
        n_int = sum(1 for v in variables if not v.fixed and v.is_integer())
        if n_int and not self._class.integer:
            self._class = self._check_class(True, self._quadratic, f"{n_int} binary/integer variables")

    def _update(self):
        self._class = self._check_model()
        self._quadratic = self._class.quadratic

    def _solve(self, need_duals, time_limit, t0):
        from .contrib import contrib_solve_kwargs, licence_error, outcome_from_results
        from .registry import quiet_pyomo

        # the class (and a model that grew past the licence) is checked on every solve: Pyomo's
        # persistent interface picks up domain changes by itself, the reported bound must match
        self._class = self._check_model()
        kwargs = contrib_solve_kwargs(self.tee, self.options, time_limit, self.threads)
        if time_limit is None:  # the loaded model keeps a previous solve's limit otherwise
            kwargs["solver_options"].setdefault("TimeLimit", 1e100)
        try:
            with quiet_pyomo():
                res = self._opt.solve(self.model, **kwargs)
        except Exception as exc:
            err = licence_error(self.solver, self._spec, exc)
            if err is not None:
                raise err from exc
            raise SolverError(f"Solver {self.solver!r} failed: {exc}") from exc
        warm = self._solved
        self._solved = True
        return outcome_from_results(res, self.solver, self._spec, self._class, need_duals, t0,
                                    extra={"warm": warm, "read_seconds": self._pending})

    def _release(self):
        release = getattr(self._opt, "release_license", None)
        if callable(release):
            try:
                release()
            except Exception:  # noqa: BLE001 - nothing held
                pass


# --------------------------------------------------------------------------- CPLEX, Xpress


class _LegacyHandle(PersistentHandle):
    """Pyomo's legacy persistent interface (``cplex_persistent``, ``xpress_persistent``)."""

    warm = True

    def __init__(self, model, solver, **kwargs):
        super().__init__(model, solver, **kwargs)
        self._spec = spec_of(solver)
        self._backend = backend_module(self._spec.backend)
        facts = model_facts(self.model)
        self._class = resolve_class(facts.problem_class, self.problem_class, solver, facts.describe())
        limited = self._limited()
        check_solver(solver, self._class, n_vars=facts.n_declared, n_cons=facts.n_cons,
                     n_quad_vars=quadratic_variables(model) if limited and self._class.quadratic else 0)
        self._quadratic = self._class.quadratic
        self._opt = None
        self._build()

    def _limited(self) -> bool:
        return self._spec.limited_licence is not None and availability(self.solver) == "limited"

    def _build(self):
        from pyomo.common.collections import ComponentMap

        from . import direct

        if self._opt is not None:
            self.stats.rebuilds += 1
            direct.release(self._opt)
        self._opt = direct.load(self._backend, self.model, self.solver, self._spec, self.options)
        self._state = ComponentMap((v, self._var_state(v)) for v in self._opt._pyomo_var_to_solver_var_map)
        self._expr = ComponentMap()
        self._rows_of = ComponentMap()  # variable -> loaded constraints using it (fixed or not)
        for con in self._opt._pyomo_con_to_solver_con_map:
            self._register(con)
        self._solved = False

    def _register(self, con):
        from pyomo.common.collections import ComponentSet
        from pyomo.core.expr.visitor import identify_variables

        self._expr[con] = con.expr
        for v in identify_variables(con.body, include_fixed=True):
            self._rows_of.setdefault(v, ComponentSet()).add(con)

    def _unregister(self, con):
        from pyomo.core.expr.visitor import identify_variables

        self._expr.pop(con, None)
        for v in identify_variables(con.body, include_fixed=True):
            rows = self._rows_of.get(v)
            if rows is not None:
                rows.discard(con)

    @staticmethod
    def _var_state(v):
        return (v.fixed, v.value if v.fixed else None)

    def _add_constraints(self, cons):
        from pyomo.core.expr.visitor import identify_variables

        self._check_rows(cons)
        var_map = self._opt._pyomo_var_to_solver_var_map
        for con in cons:
            if con in self._opt._pyomo_con_to_solver_con_map:
                raise ValueError(f"constraint {con.name} is already loaded")
            for v in identify_variables(con.body, include_fixed=True):
                if v not in var_map:
                    self._opt.add_var(v)
                    self._state[v] = self._var_state(v)
            self._opt.add_constraint(con)
            self._register(con)

    def _remove_constraints(self, cons):
        con_map = self._opt._pyomo_con_to_solver_con_map
        unknown = [c.name for c in cons if c not in con_map]
        if unknown:
            raise ValueError(f"constraints not loaded in this handle: {unknown[:5]}")
        for con in cons:
            self._opt.remove_constraint(con)
            self._unregister(con)

    def _update_variables(self, variables):
        from pyomo.common.collections import ComponentSet

        n_int = sum(1 for v in variables if not v.fixed and v.is_integer())
        if n_int and not self._class.integer:
            self._class = self._check_class(True, self._quadratic, f"{n_int} binary/integer variables")
        var_map = self._opt._pyomo_var_to_solver_var_map
        reload = ComponentSet()
        for v in variables:
            if v not in var_map:
                continue
            self._opt.update_var(v)
            state = self._var_state(v)
            if state != self._state[v]:
                # these interfaces fold fixed values into the rows: reload the rows that use v
                reload.update(self._rows_of.get(v, ()))
                self._state[v] = state
        if reload:
            for con in reload:
                self._opt.remove_constraint(con)
            for con in reload:
                self._opt.add_constraint(con)
        if reload or any(v.fixed for v in variables):
            self._opt.set_objective(self._active_objective())  # the objective folds them too

    def _update_objective(self):
        obj = self._active_objective()
        degree = _degree(obj.expr)
        if degree is None or degree > 2:
            raise SolverCapabilityError("the new objective is not linear or quadratic")
        if (degree == 2) != self._quadratic:
            self._class = self._check_class(self._class.integer, degree == 2,
                                            "a quadratic objective" if degree == 2 else "a linear objective")
            self._quadratic = degree == 2
        self._opt.set_objective(obj)

    def _update(self):
        import pyomo.environ as pyo

        con_map = self._opt._pyomo_con_to_solver_con_map
        active = list(self.model.component_data_objects(pyo.Constraint, active=True))
        ids = {id(c) for c in active}
        stale = [c for c in con_map if id(c) not in ids or c.expr is not self._expr.get(c)]
        if stale:
            self._remove_constraints(stale)
        new = [c for c in active if c not in con_map and (c.has_lb() or c.has_ub())]
        if new:
            self._add_constraints(new)
        self._update_variables(list(self._opt._pyomo_var_to_solver_var_map))
        self._update_objective()

    def _solve(self, need_duals, time_limit, t0):
        from . import direct

        if self._limited():
            n_vars = len(self._opt._pyomo_var_to_solver_var_map)
            n_cons = len(self._opt._pyomo_con_to_solver_con_map)
            check_licence(self._spec, n_vars=n_vars, n_cons=n_cons,
                          n_quad_vars=int(self._quadratic))
        warm = self._solved
        out = direct.run(self._backend, self._opt, name=self.solver, spec=self._spec,
                         need_duals=need_duals, is_mip=self._class.integer, time_limit=time_limit,
                         threads=self.threads, tee=self.tee, t0=t0, read_seconds=self._pending)
        out.extra["warm"] = warm
        self._solved = True
        return out

    def _release(self):
        from . import direct

        if self._opt is not None:
            direct.release(self._opt)
            self._opt = None
