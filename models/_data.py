"""Instance data shared by the formulation modules: rows K, features J, one numpy matrix Param."""

from __future__ import annotations

import numpy as np

__all__ = ["row_data"]


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
