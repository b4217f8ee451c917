"""Declarations and instance data shared by the formulation modules: rows K, features J, one
numpy matrix Param, row-indexed Params and scalar Params; the variable lists their row rules
share; and the build deadline (:func:`build_deadline`) that stops a long build at a run's time
limit."""

from __future__ import annotations

import contextlib
import contextvars
import time

import numpy as np
import pyomo.environ as pyo

__all__ = ["abstract_rows", "add_l1_rows", "build_deadline", "column_entries", "column_terms",
           "deadline_in_force",
           "as_matrix", "past_deadline", "regularizer", "row_array", "row_data", "row_entries",
           "row_terms", "var_list"]

#: the ``time.perf_counter()`` after which row rules build nothing (None: no deadline)
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "aidopt_build_deadline", default=None)


@contextlib.contextmanager
def build_deadline(deadline: float | None):
    """Within the block, the row rules of the large formulations build nothing once
    ``time.perf_counter()`` is past ``deadline``: the rows left are skipped, so a model whose
    build would outlast a run's time limit stops growing at the limit instead of minutes later.

    A model built past its deadline is incomplete and must never be solved: whoever sets the
    deadline checks the clock after the build (:meth:`aidopt.decomposition.run.Run.build`) and
    discards the model when the deadline has passed (it has, whenever a row was skipped: the clock
    is monotonic). Nested blocks keep the earlier deadline; ``None`` adds none.

    Parameters
    ----------
    deadline : float or None
        A ``time.perf_counter()`` value.
    """
    current = _DEADLINE.get()
    if deadline is None or (current is not None and current <= deadline):
        yield
        return
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def deadline_in_force() -> float | None:
    """The :func:`build_deadline` in force (the earliest of the enclosing blocks), or None."""
    return _DEADLINE.get()


def past_deadline() -> bool:
    """Whether the :func:`build_deadline` in force has passed (False without one)."""
    deadline = _DEADLINE.get()
    return deadline is not None and time.perf_counter() > deadline


def abstract_rows(name: str, matrix: tuple[str, str], rows: dict, scalars: dict | None = None):
    """An ``AbstractModel`` with sets ``K`` (rows or clusters) and ``J`` (features), the matrix
    ``Param`` (``(name, doc)``: one numpy array, not |K| x |J| entries), row-indexed ``Param``s
    (``{name: doc}``) and positive scalar ``Param``s (``{name: doc}``)."""
    model = pyo.AbstractModel(name=name)
    model.K = pyo.Set(ordered=True, doc="rows (data points or clusters)")
    model.J = pyo.Set(ordered=True, doc="features (columns)")
    setattr(model, matrix[0], pyo.Param(within=pyo.Any, doc=matrix[1]))
    for param, doc in rows.items():
        setattr(model, param, pyo.Param(model.K, doc=doc))
    for param, doc in (scalars or {}).items():
        setattr(model, param, pyo.Param(within=pyo.PositiveReals, doc=doc))
    return model


def row_data(matrix: str, X, rows: dict, scalars: dict | None = None) -> dict:
    """Pyomo ``create_instance`` data for a model over rows ``K`` and features ``J``.

    Parameters
    ----------
    matrix : str
        Name of the array-valued ``Param`` that holds ``X`` (``"x"`` or ``"A"``).
    X : array-like or scipy sparse matrix of shape (K, m)
        A sparse X is kept sparse (as CSR): the rules that read it through :func:`row_entries` /
        :func:`column_entries` then build only its stored entries.
    rows : dict
        Name -> array of shape (K,) for each row-indexed ``Param`` (labels, weights, ...).
    scalars : dict, optional
        Name -> number for each scalar ``Param``.
    """
    X = as_matrix(X)
    index = range(X.shape[0])
    data = {"K": {None: list(index)}, "J": {None: list(range(X.shape[1]))}, matrix: {None: X}}
    for name, values in rows.items():
        data[name] = dict(zip(index, np.asarray(values, dtype=float).tolist(), strict=True))
    for name, value in (scalars or {}).items():
        data[name] = {None: float(value)}
    return {None: data}


def as_matrix(X):
    """The matrix data of a model: a scipy sparse ``X`` (any format) as a CSR matrix of floats
    (its stored entries only; the matrix itself when it already is one), else a C-contiguous
    float array."""
    from scipy import sparse

    if sparse.issparse(X):
        return sparse.csr_matrix(X, dtype=float)
    return np.ascontiguousarray(X, dtype=float)


def row_entries(model, name: str, k, rows=None) -> tuple[list, list]:
    """Row ``k`` (an element of the ordered set ``rows``, default ``model.K``) of the matrix
    ``Param`` ``name``: ``(variables' positions, values)``, the stored entries only when the
    matrix is sparse (positions ``None``: every column, in order)."""
    X = getattr(model, name).value
    i = (model.K if rows is None else rows).ord(k) - 1
    if isinstance(X, np.ndarray):
        return None, X[i].tolist()
    start, stop = X.indptr[i], X.indptr[i + 1]
    return X.indices[start:stop].tolist(), X.data[start:stop].tolist()


def row_terms(model, name: str, k, scale: float = 1.0, rows=None, w: str = "w") -> tuple[list, list]:
    """``scale * x_k w`` as ``(coefficients, variables)`` for a ``LinearExpression``: row ``k``
    of the matrix ``Param`` ``name`` (:func:`row_entries`) against the ``Var`` ``w`` over
    ``model.J``; a sparse matrix gives its stored entries only."""
    where, values = row_entries(model, name, k, rows)
    variables = var_list(model, w)
    return ([scale * a for a in values],
            variables if where is None else [variables[j] for j in where])


def column_entries(model, name: str, j) -> tuple[list, list]:
    """Column ``j`` (an element of ``model.J``) of the matrix ``Param`` ``name``, as
    :func:`row_entries`; a sparse matrix is converted to CSC once per model."""
    X = getattr(model, name).value
    c = model.J.ord(j) - 1
    if isinstance(X, np.ndarray):
        return None, X[:, c].tolist()
    cache = model.__dict__.setdefault("_columns", {})
    if name not in cache:
        cache[name] = X.tocsc()
    C = cache[name]
    start, stop = C.indptr[c], C.indptr[c + 1]
    return C.indices[start:stop].tolist(), C.data[start:stop].tolist()


def column_terms(model, name: str, j, weights: str, var: str) -> tuple[list, list]:
    """``sum_k weights_k x_kj var_k`` as ``(coefficients, variables)`` for a
    ``LinearExpression``: column ``j`` of the matrix ``Param`` ``name``
    (:func:`column_entries`), scaled by the row-indexed ``Param`` ``weights``, against the
    ``Var`` ``var`` over ``model.K``; a sparse matrix gives its stored entries only (empty lists
    for a column of zeros)."""
    where, values = column_entries(model, name, j)
    d, v = row_array(model, weights), var_list(model, var)
    if where is None:
        return (np.asarray(values) * d).tolist(), v
    return [d[k] * a for k, a in zip(where, values, strict=True)], [v[k] for k in where]


def row_array(model, name: str) -> np.ndarray:
    """The row-indexed ``Param`` ``name`` of a constructed model as a numpy array, read once per
    model (rules that run once per feature would otherwise walk all |K| entries each time)."""
    cache = model.__dict__.setdefault("_row_arrays", {})
    if name not in cache:
        param = getattr(model, name)
        cache[name] = np.fromiter((param[k] for k in model.K), dtype=float, count=len(model.K))
    return cache[name]


def var_list(model, name: str) -> list:
    """The data of the indexed ``Var`` ``name`` of a constructed model in index order, listed once
    per model: ``Var.values()`` calls a Python getter per element, which rules that run once per
    row repeated |J| (or |K|) times each, about half of the build of a dense row."""
    cache = model.__dict__.setdefault("_var_lists", {})
    if name not in cache:
        cache[name] = list(getattr(model, name).values())
    return cache[name]


def add_l1_rows(model, is_l1) -> None:
    """Declare ``a_j >= |w_j|`` on ``model`` (Var ``a`` over ``J``, rows ``abs_upper`` and
    ``abs_lower``), built only where ``is_l1(m)`` holds: the 1-norm of w as a linear objective."""
    model.a = pyo.Var(model.J, within=pyo.NonNegativeReals, doc="|w_j| (l1 norm only)")
    model.abs_upper = pyo.Constraint(
        model.J, rule=lambda m, j: m.a[j] - m.w[j] >= 0.0 if is_l1(m) else pyo.Constraint.Skip,
        doc="a_j >= w_j")
    model.abs_lower = pyo.Constraint(
        model.J, rule=lambda m, j: m.a[j] + m.w[j] >= 0.0 if is_l1(m) else pyo.Constraint.Skip,
        doc="a_j >= -w_j")


def regularizer(m, l1: bool):
    """``sum_j a_j`` (the 1-norm, with :func:`add_l1_rows`) or ``1/2 ||w||^2``."""
    from pyomo.core.expr.numeric_expr import LinearExpression

    if l1:
        return LinearExpression(constant=0.0, linear_coefs=[1.0] * len(m.J),
                                linear_vars=list(m.a.values()))
    return 0.5 * sum(m.w[j] ** 2 for j in m.J)
