"""Declarations and instance data shared by the formulation modules: rows K, features J, one
numpy matrix Param, row-indexed Params and scalar Params."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

__all__ = ["abstract_rows", "add_l1_rows", "regularizer", "row_array", "row_data"]


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
    X : array-like of shape (K, m)
    rows : dict
        Name -> array of shape (K,) for each row-indexed ``Param`` (labels, weights, ...).
    scalars : dict, optional
        Name -> number for each scalar ``Param``.
    """
    X = np.ascontiguousarray(X, dtype=float)
    index = range(X.shape[0])
    data = {"K": {None: list(index)}, "J": {None: list(range(X.shape[1]))}, matrix: {None: X}}
    for name, values in rows.items():
        data[name] = dict(zip(index, np.asarray(values, dtype=float).tolist(), strict=True))
    for name, value in (scalars or {}).items():
        data[name] = {None: float(value)}
    return {None: data}


def row_array(model, name: str) -> np.ndarray:
    """The row-indexed ``Param`` ``name`` of a constructed model as a numpy array, read once per
    model (rules that run once per feature would otherwise walk all |K| entries each time)."""
    cache = model.__dict__.setdefault("_row_arrays", {})
    if name not in cache:
        param = getattr(model, name)
        cache[name] = np.fromiter((param[k] for k in model.K), dtype=float, count=len(model.K))
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
