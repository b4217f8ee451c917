r"""Linear-programming SVMs of Bradley & Mangasarian: 1-norm, infinity-norm and RLP.

Notation of Bradley, Mangasarian & Musicant (and of the issue): rows ``A`` (data points or cluster
centroids), labels ``d`` (the diagonal of D, in {-1, +1}), plane ``x'w = gamma`` (so the
offset of ``aidopt``'s public ``(w, b)`` is ``b = -gamma``), slack ``y``, row weights ``c``
(1 on the original data, :math:`|C_k|` under AID) and the loss weight ``nu`` (``C`` in the
public API):

* **1-norm SVM** (1.26 / 1.28), ``regularizer="l1"``::

      min   nu sum_k c[k] y[k] + sum_j s[j]
      s.t.  margin[k]:  d[k] (A[k] w - gamma) + y[k] >= 1
            upper[j]:   w[j] - s[j] <= 0,   lower[j]: -w[j] - s[j] <= 0,   y, s >= 0

* **infinity-norm SVM** (1.25), ``regularizer="linf"``: ``sum_j s[j]`` becomes one ``sigma``
  with ``-sigma <= w[j] <= sigma``.
* **RLP** (1.17), ``regularizer="none"``: ``min nu sum_k c[k] y[k]`` (RLP's ``e'y`` scaled by
  ``nu``, which does not change the minimizer).

In Pyomo's dual convention the dual ``u[k]`` of ``margin[k]`` is >= 0; the LP dual of each model
is ``max sum_k u[k]`` s.t. ``0 <= u[k] <= nu c[k]``, ``sum_k d[k] u[k] = 0`` and a condition on
``v = sum_k u[k] d[k] A[k]``: ``||v||_inf <= 1`` (l1), ``||v||_1 <= 1`` (linf), ``v = 0`` (none).
The AID certificate checks exactly these on the full data (docs/svm.md).
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

__all__ = ["REGULARIZERS", "MODELS", "create_instance", "solution_from"]

REGULARIZERS = ("l1", "linf", "none")


def _abstract(regularizer: str) -> pyo.AbstractModel:
    model = pyo.AbstractModel(name=f"svm_{regularizer}_lp")
    model.K = pyo.Set(ordered=True, doc="rows (data points or clusters)")
    model.J = pyo.Set(ordered=True, doc="features")
    model.A = pyo.Param(within=pyo.Any, doc="data matrix, numpy array |K| x |J|")
    model.d = pyo.Param(model.K, doc="label in {-1, +1}")
    model.c = pyo.Param(model.K, doc="row weight (cluster size |C_k| under AID)")
    model.nu = pyo.Param(within=pyo.PositiveReals, doc="weight of the misclassification error")
    model.w = pyo.Var(model.J, doc="normal of the plane x'w = gamma")
    model.gamma = pyo.Var(doc="location of the plane")
    model.y = pyo.Var(model.K, within=pyo.NonNegativeReals, doc="slack (hinge loss)")

    def margin_rule(m, k):
        dk = m.d[k]
        row = m.A.value[m.K.ord(k) - 1] * dk
        body = LinearExpression(
            constant=0.0,
            linear_coefs=[*row.tolist(), -float(dk), 1.0],
            linear_vars=[*m.w.values(), m.gamma, m.y[k]],
        )
        return body >= 1.0

    model.margin = pyo.Constraint(model.K, rule=margin_rule, doc="d_k (A_k w - gamma) + y_k >= 1")
    if regularizer == "l1":
        model.s = pyo.Var(model.J, within=pyo.NonNegativeReals, doc="s_j >= |w_j|")
        model.upper = pyo.Constraint(
            model.J, rule=lambda m, j: LinearExpression(
                constant=0.0, linear_coefs=[1.0, -1.0], linear_vars=[m.w[j], m.s[j]]) <= 0.0
        )
        model.lower = pyo.Constraint(
            model.J, rule=lambda m, j: LinearExpression(
                constant=0.0, linear_coefs=[-1.0, -1.0], linear_vars=[m.w[j], m.s[j]]) <= 0.0
        )
    elif regularizer == "linf":
        model.sigma = pyo.Var(within=pyo.NonNegativeReals, doc="sigma >= max_j |w_j|")
        model.upper = pyo.Constraint(
            model.J, rule=lambda m, j: LinearExpression(
                constant=0.0, linear_coefs=[1.0, -1.0], linear_vars=[m.w[j], m.sigma]) <= 0.0
        )
        model.lower = pyo.Constraint(
            model.J, rule=lambda m, j: LinearExpression(
                constant=0.0, linear_coefs=[-1.0, -1.0], linear_vars=[m.w[j], m.sigma]) <= 0.0
        )

    def objective_rule(m):
        coefs = [m.nu * m.c[k] for k in m.K]
        variables = list(m.y.values())
        if regularizer == "l1":
            coefs += [1.0] * len(m.J)
            variables += list(m.s.values())
        elif regularizer == "linf":
            coefs.append(1.0)
            variables.append(m.sigma)
        return LinearExpression(constant=0.0, linear_coefs=coefs, linear_vars=variables)

    model.objective = pyo.Objective(rule=objective_rule, sense=pyo.minimize)
    return model


MODELS = {reg: _abstract(reg) for reg in REGULARIZERS}


def create_instance(A, d, c=None, nu: float = 1.0, regularizer: str = "l1") -> pyo.ConcreteModel:
    """Create a concrete weighted LP-SVM instance.

    Parameters
    ----------
    A : ndarray of shape (K, m)
    d : ndarray of shape (K,)
        Labels in {-1, +1}.
    c : ndarray of shape (K,), optional
        Positive row weights (all ones when omitted).
    nu : float
        Weight of the misclassification error (the public ``C``).
    regularizer : {"l1", "linf", "none"}

    Returns
    -------
    pyomo.environ.ConcreteModel
    """
    if regularizer not in MODELS:
        raise ValueError(f"regularizer must be one of {REGULARIZERS}, got {regularizer!r}")
    A = np.ascontiguousarray(A, dtype=float)
    rows = range(A.shape[0])
    c = np.ones(A.shape[0]) if c is None else np.asarray(c, dtype=float)
    data = {
        None: {
            "K": {None: list(rows)},
            "J": {None: list(range(A.shape[1]))},
            "A": {None: A},
            "d": dict(zip(rows, np.asarray(d, dtype=float).tolist(), strict=True)),
            "c": dict(zip(rows, c.tolist(), strict=True)),
            "nu": {None: float(nu)},
        }
    }
    return MODELS[regularizer].create_instance(data=data)


def solution_from(instance, duals=None):
    """``(w, b, u)`` of a solved instance: ``b = -gamma``; ``u`` are the duals of ``margin``
    (``None`` without duals)."""
    w = np.array([instance.w[j].value for j in instance.J], dtype=float)
    b = -float(instance.gamma.value)
    u = None
    if duals is not None:
        u = np.array([duals.get(instance.margin[k], 0.0) for k in instance.K], dtype=float)
    return w, b, u
