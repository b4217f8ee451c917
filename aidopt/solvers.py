"""Solver layer: one registry of the solvers aidopt knows, what each can take, one ``solve_model``.

Every formulation is a Pyomo model; this module is the only place that talks to a solver. It

* keeps a registry ``SOLVERS`` of :class:`SolverSpec` (name -> Pyomo interface, problem classes,
  duals, pip extra, licence size limits), so capabilities live next to the code that backs them;
* checks a request *before* any model is built (:func:`check_solver`) and fails with an error that
  names the fix (HiGHS has no MIQP; the pip Gurobi licence is size-limited; SCIP returns no duals);
* solves a Pyomo model (:func:`solve_model`) and returns a :class:`SolveOutcome` with the solver's
  honest status, the objective, and constraint duals in Pyomo's sign convention
  (``dual = d objective / d rhs``, for minimisation and maximisation alike).

HiGHS linear programs are handed to ``highspy`` through Pyomo's own standard-form compiler
(``WriterFactory('compile_standard_form')``): the Pyomo model is still what gets solved, but its
translation is about three times faster than ``pyomo.contrib.solver``'s persistent HiGHS interface on
the dense aggregated LPs of AID (docs/design.md has the measurement). Everything else goes through
``pyomo.contrib.solver`` (``highs`` for QP/MILP, ``gurobi_persistent``, ``scip_direct``) or, for a
name aidopt does not know, through Pyomo's legacy ``SolverFactory``.
"""

from __future__ import annotations

import contextlib
import enum
import importlib.metadata
import importlib.util
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

logger = logging.getLogger("aidopt.solvers")


class _DropGurobiLicenceCount(logging.Filter):
    """Pyomo 6.10's gurobi_persistent decrements its licence-client count once too often and then
    warns "release_license() with -1 remaining environment clients" after every solve: noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "release_license()" not in record.getMessage()


logging.getLogger("pyomo.contrib.solver.solvers.gurobi.gurobi_direct_base").addFilter(
    _DropGurobiLicenceCount())


class ProblemClass(enum.StrEnum):
    """Class of an optimization problem, as far as solver choice is concerned."""

    LP = "LP"
    QP = "QP"
    MILP = "MILP"
    MIQP = "MIQP"


class SolverError(RuntimeError):
    """A solver could not be used or failed; the message says how to fix it."""


class SolverUnavailableError(SolverError):
    """The solver is not installed or has no usable licence."""


class SolverCapabilityError(SolverError, ValueError):
    """The solver cannot take this problem (class, duals or licence size)."""


class TimeLimitReached(SolverError):
    """The run's time limit was reached inside a step that has no partial result to offer."""


@dataclass(frozen=True)
class SizeLimits:
    """Size limits of a restricted licence (e.g. the pip ``gurobipy`` licence)."""

    max_vars: int
    max_cons: int
    max_quad_vars: int


@dataclass(frozen=True)
class SolverSpec:
    """What aidopt knows about one solver.

    Attributes
    ----------
    name : str
        aidopt's name (the ``solver=`` flag).
    pyomo_name : str
        Name in ``pyomo.contrib.solver``'s factory.
    classes : frozenset of ProblemClass
        Problem classes the solver can solve to optimality.
    duals : bool
        Whether Pyomo can return constraint duals from it for LPs.
    extra : str
        The aidopt pip extra that installs it.
    limited_licence : SizeLimits or None
        Size limits that apply when only a size-limited licence is found.
    """

    name: str
    pyomo_name: str
    classes: frozenset
    duals: bool
    extra: str
    module: str
    limited_licence: SizeLimits | None = None
    notes: str = ""


SOLVERS: dict[str, SolverSpec] = {
    "highs": SolverSpec(
        name="highs",
        pyomo_name="highs",
        classes=frozenset({ProblemClass.LP, ProblemClass.QP, ProblemClass.MILP}),
        duals=True,
        extra="(core dependency)",
        module="highspy",
        notes="no MIQP (HiGHS cannot solve QPs with integer variables)",
    ),
    "gurobi": SolverSpec(
        name="gurobi",
        pyomo_name="gurobi_persistent",
        classes=frozenset(ProblemClass),
        duals=True,
        extra="gurobi",
        module="gurobipy",
        limited_licence=SizeLimits(max_vars=2000, max_cons=2000, max_quad_vars=200),
        notes="pip licence: 2000 variables / 2000 linear constraints, 200 variables with quadratic terms",
    ),
    "clarabel": SolverSpec(
        name="clarabel",
        pyomo_name="",
        classes=frozenset({ProblemClass.LP, ProblemClass.QP}),
        duals=True,
        extra="(core dependency)",
        module="clarabel",
        notes="interior point for LP/QP (read from the Pyomo model by aidopt, not a Pyomo plugin); "
        "no vertex solutions",
    ),
    "scip": SolverSpec(
        name="scip",
        pyomo_name="scip_direct",
        classes=frozenset(ProblemClass),
        duals=False,
        extra="scip",
        module="pyscipopt",
        notes="Pyomo's scip_direct returns no duals: certificates use the dual LP re-solve",
    ),
}

DEFAULT_SOLVER = "highs"


# --------------------------------------------------------------------------- availability


def _contrib_factory():
    import pyomo.environ  # noqa: F401  (registers the contrib solvers)
    from pyomo.contrib.solver.common.factory import SolverFactory

    return SolverFactory


@contextlib.contextmanager
def _quiet_pyomo():
    """Silence Pyomo's licence-handle chatter while probing availability and versions."""
    log = logging.getLogger("pyomo")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def availability(name: str) -> str:
    """Return ``'full'``, ``'limited'``, ``'not installed'`` or ``'no licence'`` for a solver."""
    with _quiet_pyomo():
        return _availability(name)


def _availability(name: str) -> str:
    spec = _spec(name)
    if spec is not None and not spec.pyomo_name:  # solved by aidopt's own reader: importable?
        return "full" if importlib.util.find_spec(spec.module) else "not installed"
    pyomo_name = spec.pyomo_name if spec else name
    try:
        opt = _contrib_factory()(pyomo_name)
    except Exception:  # unknown to pyomo.contrib.solver: try the legacy factory
        import pyomo.environ as pyo

        try:
            return "full" if pyo.SolverFactory(name).available(exception_flag=False) else "not installed"
        except Exception:
            return "not installed"
    try:
        avail = opt.available()
    except Exception:
        return "not installed"
    label = str(getattr(avail, "name", avail))
    if label == "FullLicense":
        return "full"
    if label == "LimitedLicense":
        return "limited"
    if label in ("BadLicense",):
        return "no licence"
    return "not installed" if not avail else "full"


def version(name: str) -> str:
    """Return the solver's version as a dotted string, or ``''`` when unknown."""
    spec = _spec(name)
    if spec is not None and not spec.pyomo_name:
        try:
            return importlib.metadata.version(spec.module)
        except importlib.metadata.PackageNotFoundError:
            return ""
    try:
        with _quiet_pyomo():
            v = _contrib_factory()(spec.pyomo_name if spec else name).version()
    except Exception:
        return ""
    return ".".join(str(p) for p in v) if isinstance(v, tuple) else str(v or "")


def solver_table() -> list[dict[str, Any]]:
    """One row per registered solver: name, version, available, licence, classes, duals, notes."""
    rows = []
    for name, spec in SOLVERS.items():
        avail = availability(name)
        rows.append(
            {
                "name": name,
                "version": version(name) if avail in ("full", "limited") else "",
                "available": avail in ("full", "limited"),
                "licence": avail,
                "classes": ",".join(c.value for c in ProblemClass if c in spec.classes),
                "duals": "yes" if spec.duals else "no",
                "install": f"pip install 'aidopt[{spec.extra}]'" if spec.extra[0] != "(" else "",
                "notes": spec.notes,
            }
        )
    return rows


def _spec(name: str) -> SolverSpec | None:
    return SOLVERS.get(name.lower())


def check_solver(
    name: str,
    problem_class: ProblemClass,
    *,
    n_vars: int | None = None,
    n_cons: int | None = None,
    n_quad_vars: int = 0,
    need_duals: bool = False,
) -> SolverSpec | None:
    """Check, before anything is built, that ``name`` can solve this problem.

    Returns the :class:`SolverSpec` (``None`` for a solver unknown to aidopt, which is passed
    through to Pyomo unchecked). Raises :class:`SolverUnavailableError` or
    :class:`SolverCapabilityError` with a message naming the fix.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"solver must be a non-empty string, got {name!r}")
    spec = _spec(name)
    problem_class = ProblemClass(problem_class)
    avail = availability(name)
    if spec is None:
        if avail == "not installed":
            raise SolverUnavailableError(
                f"Solver {name!r} is neither registered in aidopt ({', '.join(SOLVERS)}) "
                "nor available through Pyomo's SolverFactory."
            )
        return None
    if avail == "not installed":
        raise SolverUnavailableError(
            f"Solver {name!r} is not installed: pip install 'aidopt[{spec.extra}]' "
            f"(Python module {spec.module!r})."
        )
    if avail == "no licence":
        raise SolverUnavailableError(f"Solver {name!r} is installed but has no valid licence.")
    if problem_class not in spec.classes:
        alternatives = [s for s, sp in SOLVERS.items() if problem_class in sp.classes]
        raise SolverCapabilityError(
            f"Solver {name!r} cannot solve {problem_class.value} problems ({spec.notes}). "
            f"Use solver={' or '.join(repr(a) for a in alternatives)}."
        )
    if need_duals and not spec.duals:
        raise SolverCapabilityError(
            f"Solver {name!r} returns no duals through Pyomo; this step needs them. "
            "Use solver='highs' or solver='gurobi'."
        )
    if avail == "limited" and spec.limited_licence is not None:
        lim = spec.limited_licence
        too_big = []
        if n_vars is not None and n_vars > lim.max_vars:
            too_big.append(f"{n_vars} variables > {lim.max_vars}")
        if n_cons is not None and n_cons > lim.max_cons:
            too_big.append(f"{n_cons} constraints > {lim.max_cons}")
        if n_quad_vars and n_vars is not None and n_vars > lim.max_quad_vars:
            too_big.append(f"{n_vars} variables in a quadratic model > {lim.max_quad_vars}")
        if too_big:
            raise SolverCapabilityError(
                f"Solver {name!r} has a size-limited licence ({spec.notes}); this model has "
                + "; ".join(too_big)
                + ". Use a full licence, another solver (solver='highs' for LPs), or AID "
                "(aid=True) whose aggregated models are smaller."
            )
    return spec


# --------------------------------------------------------------------------- solving


@dataclass
class SolveOutcome:
    """What one solver call produced.

    Attributes
    ----------
    status : str
        ``'optimal'``, ``'time_limit'``, ``'iteration_limit'``, ``'infeasible'``, ``'unbounded'``,
        ``'infeasible_or_unbounded'`` or ``'error'``: the solver's own verdict, never upgraded.
    objective : float or None
        Objective of the loaded solution (``None`` when no solution was loaded).
    duals : dict or None
        ``{ConstraintData: float}`` in Pyomo's convention (d objective / d rhs); ``None`` when the
        solver did not provide them.
    has_solution : bool
        Whether primal values were loaded into the model's variables.
    """

    status: str
    objective: float | None
    duals: dict | None
    has_solution: bool
    solver: str
    version: str
    seconds: float
    message: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def optimal(self) -> bool:
        return self.status == "optimal"


def solve_model(
    model,
    solver: str = DEFAULT_SOLVER,
    *,
    problem_class: ProblemClass = ProblemClass.LP,
    need_duals: bool = False,
    time_limit: float | None = None,
    threads: int | None = None,
    tee: bool = False,
    options: dict | None = None,
) -> SolveOutcome:
    """Solve a Pyomo model and load its solution into it.

    Parameters
    ----------
    model : pyomo.core.Block
        A constructed (concrete) Pyomo model with one active objective.
    solver : str
        A name from :data:`SOLVERS` or any Pyomo solver name (passed through unchecked).
    problem_class : ProblemClass
        Used to route HiGHS LPs to the fast standard-form path and to check capabilities.
    need_duals : bool
        Ask for constraint duals (the outcome's ``duals`` is ``None`` if the solver gives none).
    time_limit, threads, tee
        Typed options, translated to each solver's own option names.
    options : dict, optional
        Solver options passed through untouched (e.g. ``{"solver": "ipm"}`` for HiGHS).

    Returns
    -------
    SolveOutcome
    """
    options = dict(options or {})
    if time_limit is not None and time_limit <= 0:
        return SolveOutcome("time_limit", None, None, False, solver, "", 0.0, "no time left")
    name = solver.lower()
    problem_class = ProblemClass(problem_class)
    if name == "highs" and problem_class in (ProblemClass.LP, ProblemClass.QP):
        t0 = time.perf_counter()
        if problem_class is ProblemClass.LP:
            prog = linear_program(model)
        else:  # a QP the direct reader cannot read goes through pyomo.contrib.solver below
            prog = _read_linear_expressions(model, quadratic=True)
        if prog is not None:
            return _solve_highs_lp(prog, t0, need_duals, time_limit, threads, tee, options)
    if name == "clarabel":
        t0 = time.perf_counter()
        prog = _read_linear_expressions(model, quadratic=True)
        if prog is None and problem_class is ProblemClass.LP:
            prog = _compile_standard_form(model)
        if prog is None:
            raise SolverError("clarabel: the model is not an LP/QP aidopt can read directly")
        return _solve_clarabel(prog, t0, need_duals, time_limit, threads, tee, options)
    spec = _spec(name)
    return _solve_contrib(model, spec, name, need_duals, time_limit, threads, tee, options)


_HIGHS_STATUS = {
    "Optimal": "optimal",
    "Time limit reached": "time_limit",
    "Iteration limit reached": "iteration_limit",
    "Infeasible": "infeasible",
    "Unbounded": "unbounded",
    "Primal infeasible or unbounded": "infeasible_or_unbounded",
}


@dataclass
class LinearProgram:
    """An LP read from a Pyomo model: ``min/max c'x + offset, row_lower <= A x <= row_upper``.

    ``columns[j]`` is the Pyomo variable of column j, ``rows[i]`` the Pyomo constraint of row i
    (a ranged constraint may appear twice: its duals are summed). ``Q`` is the lower triangle of
    the objective's Hessian (objective ``c'x + x'Qx/2``) for a QP, else ``None``.
    """

    c: np.ndarray
    offset: float
    maximize: bool
    A: Any  # scipy.sparse.csc_array
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    columns: list
    rows: list
    Q: Any = None


def linear_program(model) -> LinearProgram:
    """Read the LP of a Pyomo model: directly when every body is a ``LinearExpression``, else
    through Pyomo's standard-form compiler.

    AID's formulations build their rows as ``LinearExpression``s; reading their coefficient
    lists directly costs about a tenth of walking them with Pyomo's expression visitor (2 of the
    3 microseconds per nonzero the model otherwise costs, docs/design.md). Anything else (fixed
    variables, parameters in coefficients, other expression types) goes to the compiler, and
    ``tests/solvers/test_solvers.py`` checks that both readers give the same matrices.
    """
    return _read_linear_expressions(model) or _compile_standard_form(model)


def _bounds(variables):
    inf = np.inf
    lower = np.array([-inf if v.lb is None else v.lb for v in variables], dtype=float)
    upper = np.array([inf if v.ub is None else v.ub for v in variables], dtype=float)
    return lower, upper


def _read_linear_expressions(model, quadratic: bool = False) -> LinearProgram | None:
    """Read a model whose constraint bodies are all ``LinearExpression``s (``None`` otherwise).

    The objective must be a ``LinearExpression`` too, or, with ``quadratic=True``, any
    expression of degree at most two (read with Pyomo's ``generate_standard_repn``: an objective
    has few terms, so its cost does not matter).
    """
    import pyomo.environ as pyo
    from pyomo.core.expr.numeric_expr import LinearExpression
    from scipy import sparse

    objectives = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objectives) != 1:
        return None
    objective = objectives[0].expr
    if type(objective) is not LinearExpression:
        if not quadratic:
            return None
        objective = _quadratic_objective(objective)
        if objective is None:
            return None
    numbers = (float, int)
    column_of: dict[int, int] = {}
    columns: list = []

    def indices(variables):
        out = []
        for v in variables:
            j = column_of.get(id(v))
            if j is None:
                if v.fixed or v.is_integer() or v.is_binary():
                    raise _NotPlain
                j = column_of[id(v)] = len(columns)
                columns.append(v)
            out.append(j)
        return out

    def coefficients(expr):
        coefs = expr.linear_coefs
        if not all(type(a) in numbers for a in coefs) or type(expr.constant) not in numbers:
            raise _NotPlain
        return coefs

    try:
        obj = objectives[0]
        obj_cols = indices(objective.linear_vars)
        obj_coefs = coefficients(objective)
        quad_cols = [indices(pair) for pair in getattr(objective, "quadratic_vars", ())]
        rows, data, index, indptr, lower, upper = [], [], [], [0], [], []
        for con in model.component_data_objects(pyo.Constraint, active=True):
            body = con.body
            if type(body) is not LinearExpression:
                return None
            coefs = coefficients(body)  # per-row numpy arrays: no Python list of all nonzeros
            data.append(np.array(coefs, dtype=float))
            index.append(np.array(indices(body.linear_vars), dtype=np.int64))
            indptr.append(indptr[-1] + len(coefs))
            lb, ub = con.lb, con.ub
            lower.append(-np.inf if lb is None else lb - body.constant)
            upper.append(np.inf if ub is None else ub - body.constant)
            rows.append(con)
    except _NotPlain:
        return None
    n_cols = len(columns)
    c = np.zeros(n_cols)
    np.add.at(c, np.asarray(obj_cols, dtype=np.int64), np.asarray(obj_coefs, dtype=float))
    A = sparse.csr_array(
        (np.concatenate(data or [np.zeros(0)]), np.concatenate(index or [np.zeros(0, np.int64)]),
         np.asarray(indptr)),
        shape=(len(rows), n_cols),
    )
    del data, index
    A.sum_duplicates()
    col_lower, col_upper = _bounds(columns)
    Q = None
    if quad_cols:
        # term a * x_i * x_j is x'Qx/2 with Q_ij = Q_ji = a (i != j) or Q_ii = 2a: lower triangle
        ij = np.sort(np.asarray(quad_cols, dtype=np.int64), axis=1)
        a = np.asarray(objective.quadratic_coefs, dtype=float)
        a = np.where(ij[:, 0] == ij[:, 1], 2.0 * a, a)
        Q = sparse.csc_array((a, (ij[:, 1], ij[:, 0])), shape=(n_cols, n_cols))
        Q.sum_duplicates()
    return LinearProgram(
        c=c, offset=float(objective.constant), maximize=obj.sense == pyo.maximize, A=A.tocsc(),
        row_lower=np.asarray(lower, dtype=float), row_upper=np.asarray(upper, dtype=float),
        col_lower=col_lower, col_upper=col_upper, columns=columns, rows=rows, Q=Q,
    )


@dataclass
class _QuadraticObjective:
    constant: float
    linear_coefs: list
    linear_vars: list
    quadratic_coefs: list
    quadratic_vars: list


def _quadratic_objective(expr) -> _QuadraticObjective | None:
    """Linear and quadratic terms of an objective of degree <= 2 (``None`` if not)."""
    from pyomo.repn.standard_repn import generate_standard_repn

    repn = generate_standard_repn(expr, quadratic=True, compute_values=True)
    if repn.nonlinear_expr is not None:
        return None
    return _QuadraticObjective(
        float(repn.constant), [float(a) for a in repn.linear_coefs], list(repn.linear_vars),
        [float(a) for a in repn.quadratic_coefs], [tuple(p) for p in repn.quadratic_vars],
    )


class _NotPlain(Exception):
    """A model feature the direct reader does not handle (the compiler will)."""


def _compile_standard_form(model) -> LinearProgram:
    from pyomo.core.base.objective import maximize
    from pyomo.opt import WriterFactory

    info = WriterFactory("compile_standard_form").write(model, mixed_form=True, set_sense=None)
    n_cols = info.A.shape[1]
    kind = np.array([r.bound_type for r in info.rows], dtype=int)
    rhs = np.asarray(info.rhs, dtype=float)
    col_lower, col_upper = _bounds(info.columns)
    return LinearProgram(
        c=info.c.toarray().ravel() if n_cols else np.zeros(0),
        offset=float(info.c_offset[0]) if len(info.c_offset) else 0.0,
        maximize=bool(info.objectives) and info.objectives[0].sense == maximize,
        A=info.A.tocsc(),
        row_lower=np.where(kind >= 0, np.where(kind == 0, rhs, -np.inf), rhs),
        row_upper=np.where(kind <= 0, np.where(kind == 0, rhs, np.inf), rhs),
        col_lower=col_lower, col_upper=col_upper,
        columns=list(info.columns), rows=[r.constraint for r in info.rows],
    )


def _solve_highs_lp(prog: LinearProgram, t0, need_duals, time_limit, threads, tee, options) -> SolveOutcome:
    """Solve an LP or QP read from a Pyomo model (:func:`linear_program`) with highspy and load
    the solution into the model's variables; ``t0`` is when reading the model started."""
    import highspy
    from pyomo.common.collections import ComponentMap

    n_rows, n_cols = prog.A.shape
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_ = n_cols
    lp.num_row_ = n_rows
    lp.col_cost_ = prog.c
    lp.offset_ = prog.offset
    lp.col_lower_ = np.where(np.isinf(prog.col_lower), -inf, prog.col_lower)
    lp.col_upper_ = np.where(np.isinf(prog.col_upper), inf, prog.col_upper)
    lp.row_lower_ = np.where(np.isinf(prog.row_lower), -inf, prog.row_lower)
    lp.row_upper_ = np.where(np.isinf(prog.row_upper), inf, prog.row_upper)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = prog.A.indptr
    lp.a_matrix_.index_ = prog.A.indices
    lp.a_matrix_.value_ = prog.A.data
    if prog.maximize:
        lp.sense_ = highspy.ObjSense.kMaximize
    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(tee))
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    if threads is not None:
        h.setOptionValue("threads", int(threads))
    for key, val in options.items():
        status = h.setOptionValue(key, val)
        if status == highspy.HighsStatus.kError:
            raise SolverError(f"HiGHS rejected option {key}={val!r}")
    h.passModel(lp)
    if prog.Q is not None:
        hessian = highspy.HighsHessian()
        hessian.dim_ = n_cols
        hessian.format_ = highspy.HessianFormat.kTriangular
        hessian.start_ = prog.Q.indptr
        hessian.index_ = prog.Q.indices
        hessian.value_ = prog.Q.data
        if h.passHessian(hessian) == highspy.HighsStatus.kError:
            raise SolverError("HiGHS rejected the objective's Hessian")
    read_seconds = time.perf_counter() - t0
    h.run()
    model_status = h.modelStatusToString(h.getModelStatus())
    status = _HIGHS_STATUS.get(model_status, "error")
    sol = h.getSolution()
    has_solution = bool(sol.value_valid)
    objective = None
    if has_solution:
        for var, val in zip(prog.columns, sol.col_value, strict=True):
            var.set_value(val, skip_validation=True)
        objective = float(h.getInfo().objective_function_value)
    duals = None
    if need_duals and sol.dual_valid and status == "optimal":
        duals = ComponentMap()
        for con, d in zip(prog.rows, sol.row_dual, strict=True):
            duals[con] = duals.get(con, 0.0) + float(d)
    info_h = h.getInfo()
    return SolveOutcome(
        status=status,
        objective=objective,
        duals=duals,
        has_solution=has_solution,
        solver="highs",
        version=_highs_version(),
        seconds=time.perf_counter() - t0,
        message=model_status,
        extra={
            "read_seconds": read_seconds,
            "simplex_iterations": int(info_h.simplex_iteration_count),
            "ipm_iterations": int(info_h.ipm_iteration_count),
            "qp_iterations": int(info_h.qp_iteration_count),
        },
    )


_CLARABEL_STATUS = {
    "Solved": "optimal",
    "PrimalInfeasible": "infeasible",
    "DualInfeasible": "unbounded",
    "MaxIterations": "iteration_limit",
    "MaxTime": "time_limit",
}


def _solve_clarabel(prog: LinearProgram, t0, need_duals, time_limit, threads, tee, options):
    """Solve an LP/QP read from a Pyomo model with Clarabel (interior point) and load it.

    Clarabel solves ``min x'Px/2 + q'x`` s.t. ``A x + s = b``, ``s`` in a cone, with dual ``z``
    (``Px + q + A'z = 0``). Equality rows go to the zero cone, one-sided rows and finite column
    bounds to the non-negative cone as ``a'x <= u`` or ``-a'x <= -l``. Then
    d objective / d u = -z and d objective / d l = +z, which is Pyomo's convention
    (d objective / d rhs); a maximization is solved as ``min -f`` and its duals negated back.
    "AlmostSolved" (reduced accuracy) is reported as ``error``, never as optimal.
    """
    import clarabel
    from pyomo.common.collections import ComponentMap
    from scipy import sparse

    sign = -1.0 if prog.maximize else 1.0
    n_cols = prog.A.shape[1]
    A = sparse.csr_array(prog.A)
    lo, up = prog.row_lower, prog.row_upper
    eq = np.flatnonzero(np.isfinite(lo) & (lo == up))
    ub = np.flatnonzero(np.isfinite(up) & ~(lo == up))
    lb = np.flatnonzero(np.isfinite(lo) & ~(lo == up))
    eye = sparse.identity(n_cols, format="csr")
    cub = np.flatnonzero(np.isfinite(prog.col_upper))
    clb = np.flatnonzero(np.isfinite(prog.col_lower))
    blocks = [A[eq], A[ub], -A[lb], eye[cub], -eye[clb]]
    rhs = [up[eq], up[ub], -lo[lb], prog.col_upper[cub], -prog.col_lower[clb]]
    M = sparse.vstack(blocks, format="csc")
    b = np.concatenate(rhs)
    P = sparse.csc_matrix((n_cols, n_cols)) if prog.Q is None else sparse.triu(
        sparse.csc_matrix(prog.Q).T * sign, format="csc")
    q = sign * prog.c
    cones = []
    if eq.size:
        cones.append(clarabel.ZeroConeT(int(eq.size)))
    n_ineq = b.size - eq.size
    if n_ineq:
        cones.append(clarabel.NonnegativeConeT(int(n_ineq)))
    settings = clarabel.DefaultSettings()
    settings.verbose = bool(tee)
    if time_limit is not None:
        settings.time_limit = float(time_limit)
    if threads is not None and hasattr(settings, "max_threads"):
        settings.max_threads = int(threads)
    for key, val in options.items():
        if not hasattr(settings, key):
            raise SolverError(f"clarabel has no setting {key!r}")
        setattr(settings, key, val)
    read_seconds = time.perf_counter() - t0
    solver = clarabel.DefaultSolver(sparse.csc_matrix(P), q, sparse.csc_matrix(M), b, cones, settings)
    sol = solver.solve()
    label = str(sol.status).split(".")[-1]
    status = _CLARABEL_STATUS.get(label, "error")
    x = np.asarray(sol.x, dtype=float)
    has_solution = status in ("optimal", "time_limit", "iteration_limit") and x.size == n_cols
    objective = None
    if has_solution:
        for var, val in zip(prog.columns, x.tolist(), strict=True):
            var.set_value(val, skip_validation=True)
        objective = sign * float(sol.obj_val) + prog.offset
    duals = None
    if need_duals and status == "optimal":
        z = np.asarray(sol.z, dtype=float)
        k_eq, k_ub = eq.size, eq.size + ub.size
        row_dual = np.zeros(len(prog.rows))
        np.add.at(row_dual, eq, -z[:k_eq])
        np.add.at(row_dual, ub, -z[k_eq:k_ub])
        np.add.at(row_dual, lb, z[k_ub:k_ub + lb.size])
        row_dual *= sign
        duals = ComponentMap()
        for con, d in zip(prog.rows, row_dual.tolist(), strict=True):
            duals[con] = duals.get(con, 0.0) + d
    return SolveOutcome(
        status=status,
        objective=objective,
        duals=duals,
        has_solution=has_solution,
        solver="clarabel",
        version=clarabel.__version__,
        seconds=time.perf_counter() - t0,
        message=label,
        extra={"read_seconds": read_seconds, "ipm_iterations": int(sol.iterations)},
    )


def _highs_version() -> str:
    import highspy

    return f"{highspy.HIGHS_VERSION_MAJOR}.{highspy.HIGHS_VERSION_MINOR}.{highspy.HIGHS_VERSION_PATCH}"


def _solve_contrib(model, spec, name, need_duals, time_limit, threads, tee, options):
    """Solve through ``pyomo.contrib.solver`` (or Pyomo's legacy factory for unknown names)."""
    from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

    t0 = time.perf_counter()
    pyomo_name = spec.pyomo_name if spec else name
    try:
        opt = _contrib_factory()(pyomo_name)
    except Exception:
        return _solve_legacy(model, name, need_duals, time_limit, tee, options)
    kwargs = dict(
        tee=tee,
        load_solutions=False,
        raise_exception_on_nonoptimal_result=False,
        solver_options=options,
    )
    if time_limit is not None:
        kwargs["time_limit"] = float(time_limit)
    if threads is not None:
        kwargs["threads"] = int(threads)
    try:
        res = opt.solve(model, **kwargs)
    except Exception as exc:  # licence size errors and the like: make them readable
        text = str(exc)
        if "10010" in text or "size-limited" in text.lower():
            lim = spec.limited_licence if spec else None
            raise SolverCapabilityError(
                f"Solver {name!r} refused the model because of its size-limited licence"
                + (f" ({spec.notes})" if spec else "")
                + (f"; limits {lim}" if lim else "")
                + f": {text}. Use AID (smaller aggregated models) or solver='highs'."
            ) from exc
        raise SolverError(f"Solver {name!r} failed: {text}") from exc
    tc = res.termination_condition
    status = {
        TerminationCondition.convergenceCriteriaSatisfied: "optimal",
        TerminationCondition.maxTimeLimit: "time_limit",
        TerminationCondition.iterationLimit: "iteration_limit",
        TerminationCondition.provenInfeasible: "infeasible",
        TerminationCondition.locallyInfeasible: "infeasible",
        TerminationCondition.unbounded: "unbounded",
        TerminationCondition.infeasibleOrUnbounded: "infeasible_or_unbounded",
    }.get(tc, "error")
    has_solution = res.solution_status in (SolutionStatus.optimal, SolutionStatus.feasible)
    if status == "optimal" and res.solution_status != SolutionStatus.optimal:
        status = "error"
    objective = None
    if has_solution:
        res.solution_loader.load_vars()
        objective = res.incumbent_objective
    duals = None
    if need_duals and status == "optimal" and (spec is None or spec.duals):
        try:
            duals = res.solution_loader.get_duals()
        except Exception as exc:  # noqa: BLE001 - a solver without duals is reported, not fatal
            logger.debug("no duals from %s: %s", name, exc)
    ver = res.solver_version
    return SolveOutcome(
        status=status,
        objective=None if objective is None else float(objective),
        duals=duals,
        has_solution=has_solution,
        solver=name,
        version=".".join(str(p) for p in ver) if isinstance(ver, tuple) else str(ver or ""),
        seconds=time.perf_counter() - t0,
        message=str(tc.name),
        extra={"mip_gap_bound": res.objective_bound},
    )


def _solve_legacy(model, name, need_duals, time_limit, tee, options):
    """Pass an unknown solver name through Pyomo's legacy ``SolverFactory``."""
    import pyomo.environ as pyo
    from pyomo.opt import TerminationCondition as TC

    t0 = time.perf_counter()
    opt = pyo.SolverFactory(name)
    if opt is None or not opt.available(exception_flag=False):
        raise SolverUnavailableError(f"Solver {name!r} is not available through Pyomo.")
    if need_duals and not hasattr(model, "dual"):
        model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    for k, v in options.items():
        opt.options[k] = v
    res = opt.solve(model, tee=tee, load_solutions=False)
    tc = res.solver.termination_condition
    status = {TC.optimal: "optimal", TC.maxTimeLimit: "time_limit", TC.infeasible: "infeasible",
              TC.unbounded: "unbounded"}.get(tc, "error")
    has_solution = len(res.solution) > 0
    if has_solution:
        model.solutions.load_from(res)
    duals = None
    if need_duals and status == "optimal" and hasattr(model, "dual"):
        from pyomo.common.collections import ComponentMap

        duals = ComponentMap((c, model.dual[c]) for c in model.dual)
    obj = next(model.component_data_objects(pyo.Objective, active=True))
    return SolveOutcome(status, pyo.value(obj) if has_solution else None, duals or None,
                        has_solution, name, "", time.perf_counter() - t0, str(tc))
