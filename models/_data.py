"""Declarations and instance data shared by the formulation modules: rows K, features J, one
numpy matrix Param, row-indexed Params and scalar Params."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

__all__ = ["abstract_rows", "row_array", "row_data"]


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
