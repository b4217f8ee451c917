"""Read a Pyomo model into arrays: ``min/max c'x + x'Qx/2, row_lower <= A x <= row_upper``.

Two readers give the same :class:`LinearProgram`:

* :func:`_read_linear_expressions`, the fast one, takes the ``linear_coefs`` / ``linear_vars`` of
  constraint bodies that are ``LinearExpression``s with numeric coefficients (true of every AID
  formulation) straight into a sparse matrix: about a tenth of the cost of walking them with
  Pyomo's expression visitor (docs/design.md, "How a HiGHS LP leaves Pyomo");
* :func:`_compile_standard_form`, the fallback, is Pyomo's ``compile_standard_form`` writer (any
  linear model: fixed variables, ``Param`` coefficients, other expression types).

Both record which columns are integer (``LinearProgram.integrality``): a model with integer or
binary variables is never handed to a solver as an LP (``aidopt.solvers.classify``).

The persistent handles read single rows and objectives with :class:`Columns`, :func:`read_rows`
and :func:`read_objective`, which keep fixed variables as columns (fixed by their bounds, so fixing
and unfixing is a bound change) and evaluate mutable ``Param`` values.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Columns", "LinearProgram", "linear_program", "read_objective", "read_rows"]


@dataclass
class LinearProgram:
    """An LP, QP or MILP read from a Pyomo model.

    ``min/max c'x + x'Qx/2 + offset, row_lower <= A x <= row_upper, col_lower <= x <= col_upper``.
    ``columns[j]`` is the Pyomo variable of column j, ``rows[i]`` the Pyomo constraint of row i
    (a ranged constraint may appear twice: its duals are summed). ``Q`` is the lower triangle of
    the objective's Hessian for a QP, else ``None``; ``integrality`` a boolean array (True: an
    integer or binary column), ``None`` when every column is continuous.
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
    integrality: np.ndarray | None = None

    @property
    def n_integer(self) -> int:
        """Number of integer (or binary) columns."""
        return 0 if self.integrality is None else int(np.count_nonzero(self.integrality))


def linear_program(model) -> LinearProgram:
    """Read the linear program of a Pyomo model.

    Directly when every constraint body and the objective are ``LinearExpression``s with numeric
    coefficients and no fixed variables, else through Pyomo's standard-form compiler.
    ``tests/solvers/test_solvers.py`` checks that both give the same matrices. Integer columns are
    recorded in ``integrality``, not dropped: the caller decides what a MILP may be solved with.
    """
    return _read_linear_expressions(model) or _compile_standard_form(model)


def _bounds(variables):
    inf = np.inf
    lower = np.array([-inf if v.lb is None else v.lb for v in variables], dtype=float)
    upper = np.array([inf if v.ub is None else v.ub for v in variables], dtype=float)
    return lower, upper


def _integrality(variables) -> np.ndarray | None:
    flags = np.fromiter((v.is_integer() for v in variables), dtype=bool, count=len(variables))
    return flags if flags.any() else None


class _NotPlain(Exception):
    """A model feature the direct reader does not handle (the compiler will)."""


class ReadTimeLimit(Exception):
    """The deadline passed while a model was being read (:func:`_read_linear_expressions`)."""


#: rows read between two looks at the clock
_CLOCK_ROWS = 64


def _read_linear_expressions(model, quadratic: bool = False,
                             deadline: float | None = None) -> LinearProgram | None:
    """Read a model whose constraint bodies are all ``LinearExpression``s (``None`` otherwise).

    The objective may be any expression of degree one (with ``quadratic=True``: at most two),
    Params evaluated at their current values; a ``LinearExpression`` with numeric coefficients is
    read directly, anything else with Pyomo's ``generate_standard_repn`` (one expression, so its
    cost does not matter). Integer and binary columns are flagged in
    ``integrality`` (the reader visits every column, so this costs nothing extra); a fixed
    variable or a non-numeric coefficient returns ``None``.

    ``deadline`` (a ``time.perf_counter()`` value): :class:`ReadTimeLimit` is raised when it
    passes during the read (reading costs about a third of a microsecond per nonzero: seconds on
    a model of ten million), so a solve's time limit covers the read too.
    """
    import pyomo.environ as pyo
    from pyomo.core.expr.numeric_expr import LinearExpression
    from scipy import sparse

    objectives = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objectives) != 1:
        return None
    objective = objectives[0].expr
    if type(objective) is not LinearExpression or not all(
            type(a) in (float, int) for a in objective.linear_coefs):
        # any objective of degree <= 2, e.g. with mutable Params as costs (successive
        # linearization changes only those): read once with generate_standard_repn
        objective = _quadratic_objective(objective)
        if objective is None or (objective.quadratic_coefs and not quadratic):
            return None
    numbers = (float, int)
    column_of: dict[int, int] = {}
    columns: list = []
    integer: list = []

    def indices(variables):
        out = []
        for v in variables:
            j = column_of.get(id(v))
            if j is None:
                if v.fixed:
                    raise _NotPlain
                if v.is_integer():
                    integer.append(len(columns))
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
        for count, con in enumerate(model.component_data_objects(pyo.Constraint, active=True)):
            if deadline is not None and count % _CLOCK_ROWS == 0 \
                    and time.perf_counter() > deadline:
                raise ReadTimeLimit
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
    integrality = None
    if integer:
        integrality = np.zeros(n_cols, dtype=bool)
        integrality[integer] = True
    return LinearProgram(
        c=c, offset=float(objective.constant), maximize=obj.sense == pyo.maximize, A=A.tocsc(),
        row_lower=np.asarray(lower, dtype=float), row_upper=np.asarray(upper, dtype=float),
        col_lower=col_lower, col_upper=col_upper, columns=columns, rows=rows,
        Q=_hessian(quad_cols, objective.quadratic_coefs, n_cols) if quad_cols else None,
        integrality=integrality,
    )


def _hessian(pairs, coefs, n_cols):
    """Lower triangle of Q for the terms ``a * x_i * x_j`` (objective ``x'Qx/2``):
    ``Q_ij = Q_ji = a`` (i != j), ``Q_ii = 2a``."""
    from scipy import sparse

    ij = np.sort(np.asarray(pairs, dtype=np.int64).reshape(-1, 2), axis=1)
    a = np.asarray(coefs, dtype=float)
    a = np.where(ij[:, 0] == ij[:, 1], 2.0 * a, a)
    Q = sparse.csc_array((a, (ij[:, 1], ij[:, 0])), shape=(n_cols, n_cols))
    Q.sum_duplicates()
    return Q


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


def _compile_standard_form(model) -> LinearProgram:
    """Read a linear model with Pyomo's ``compile_standard_form`` writer (any linear model).

    The writer itself ignores integrality; the returned program flags integer columns in
    ``integrality`` so that no caller can mistake a MILP for its LP relaxation.
    """
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
        integrality=_integrality(info.columns),
    )


# --------------------------------------------------------------------------- single rows


def var_bounds(v) -> tuple[float, float]:
    """Column bounds of a variable: its value twice when fixed, else its (domain-tightened)
    bounds, ``-inf``/``inf`` when absent."""
    if v.fixed:
        val = float(v.value)
        return val, val
    lb, ub = v.lb, v.ub
    return (-np.inf if lb is None else float(lb)), (np.inf if ub is None else float(ub))


class Columns:
    """The columns of a persistent model: Pyomo variable <-> column index, in order of first use.

    ``new`` lists the variables added since :meth:`take_new` was last called, so that a handle
    can add them to the solver before the rows that use them.
    """

    def __init__(self):
        self.of: dict[int, int] = {}
        self.vars: list = []
        self.new: list = []

    def __len__(self) -> int:
        return len(self.vars)

    def index(self, v) -> int:
        j = self.of.get(id(v))
        if j is None:
            j = self.of[id(v)] = len(self.vars)
            self.vars.append(v)
            self.new.append(v)
        return j

    def indices(self, variables) -> list[int]:
        return [self.index(v) for v in variables]

    def get(self, v) -> int | None:
        return self.of.get(id(v))

    def take_new(self) -> list:
        new, self.new = self.new, []
        return new


class _Unfixed:
    """Unfix the fixed variables of ``expr`` while Pyomo's repn reads it, so that they stay
    columns (fixed by their bounds) instead of being folded into constants."""

    def __init__(self, expr):
        from pyomo.core.expr.visitor import identify_variables

        self.fixed = [v for v in identify_variables(expr, include_fixed=True) if v.fixed]

    def __enter__(self):
        for v in self.fixed:
            v.fixed = False

    def __exit__(self, *exc):
        for v in self.fixed:
            v.fixed = True


def _repn(expr, quadratic: bool):
    from pyomo.repn.standard_repn import generate_standard_repn

    with _Unfixed(expr):
        return generate_standard_repn(expr, quadratic=quadratic, compute_values=True)


def read_rows(cons, columns: Columns):
    """Read constraints into CSR arrays over ``columns`` (new variables are appended to it).

    Returns
    -------
    tuple
        ``(indptr, index, data, lower, upper)`` with one row per constraint (a ranged constraint
        is one row with both bounds).

    Raises
    ------
    SolverCapabilityError
        For a constraint that is not linear.
    """
    from pyomo.core.expr.numeric_expr import LinearExpression

    from .errors import SolverCapabilityError

    numbers = (float, int)
    indptr, index, data, lower, upper = [0], [], [], [], []
    for con in cons:
        body = con.body
        coefs = body.linear_coefs if type(body) is LinearExpression else None
        if coefs is not None and all(type(a) in numbers for a in coefs) \
                and type(body.constant) in numbers:
            cols, const = columns.indices(body.linear_vars), float(body.constant)
        else:
            repn = _repn(body, quadratic=False)
            if repn.nonlinear_expr is not None:
                raise SolverCapabilityError(
                    f"constraint {con.name} is not linear; a persistent handle takes linear rows")
            coefs = [float(a) for a in repn.linear_coefs]
            cols, const = columns.indices(repn.linear_vars), float(repn.constant)
        data.extend(float(a) for a in coefs)
        index.extend(cols)
        indptr.append(len(index))
        lb, ub = con.lb, con.ub
        lower.append(-np.inf if lb is None else float(lb) - const)
        upper.append(np.inf if ub is None else float(ub) - const)
    return (np.asarray(indptr, dtype=np.int64), np.asarray(index, dtype=np.int64),
            np.asarray(data, dtype=float), np.asarray(lower, dtype=float),
            np.asarray(upper, dtype=float))


def read_objective(obj, columns: Columns):
    """Read an objective over ``columns`` (new variables are appended to it).

    Returns
    -------
    tuple
        ``(cols, coefs, offset, Q_pairs, Q_coefs, maximize)``: linear terms as column indices and
        coefficients, the constant, the quadratic terms ``a * x_i * x_j`` as index pairs and
        coefficients (empty for a linear objective), and the sense.
    """
    import pyomo.environ as pyo
    from pyomo.core.expr.numeric_expr import LinearExpression

    from .errors import SolverCapabilityError

    expr = obj.expr
    maximize = obj.sense == pyo.maximize
    coefs = expr.linear_coefs if type(expr) is LinearExpression else None
    if coefs is not None and all(type(a) in (float, int) for a in coefs) \
            and type(expr.constant) in (float, int):
        return (columns.indices(expr.linear_vars), [float(a) for a in coefs],
                float(expr.constant), [], [], maximize)
    repn = _repn(expr, quadratic=True)
    if repn.nonlinear_expr is not None:
        raise SolverCapabilityError(
            f"objective {obj.name} is not linear or quadratic; a persistent handle takes LP/QP/MILP")
    pairs = [(columns.index(a), columns.index(b)) for a, b in repn.quadratic_vars]
    return (columns.indices(repn.linear_vars), [float(a) for a in repn.linear_coefs],
            float(repn.constant), pairs, [float(a) for a in repn.quadratic_coefs], maximize)
