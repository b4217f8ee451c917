r"""Feature selection concave (FSV), Bradley, Mangasarian & Musicant §3.1: the linear program of one
successive-linearization step, (1.22).

Notation of the paper: rows ``A`` (data points, or cluster centroids under AID), labels ``d`` (the
diagonal of D), the plane ``x'w = gamma``, slacks ``y``, ``v >= |w|``, the error weight ``nu``,
and row weights ``c`` (1 on the original data). FSV (1.21) minimizes the concave
:math:`\nu\, e'y + e'(e - \varepsilon^{-\alpha v})` (the paper writes :math:`\varepsilon^{-\alpha v}`
for :math:`\exp(-\alpha v)`); its linearization at :math:`v^i` is the LP (1.22)::

    min   nu sum_k c[k] y[k] + sum_j t[j] v[j]          t[j] = alpha exp(-alpha v^i_j)
    s.t.  margin[k]:  d[k] (A[k] w - gamma) + y[k] >= 1
          upper[j]:   w[j] - v[j] <= 0,   lower[j]: -w[j] - v[j] <= 0,   y, v >= 0

The constant :math:`-t'v^i` of (1.22) is left out of the model (it does not move the minimizer);
:func:`linearization_value` adds it back for the stopping test (1.23). ``t`` is a **mutable**
Param: each step of the successive linearization changes only the objective of one instance, so a
persistent solver re-solves it warm (``aidopt.solvers.persistent``). The same LP is the weighted
1-norm LP SVM of :mod:`aidopt.models.lp_svm` (``nu`` its error weight, ``r = t``); with ``c`` the
cluster sizes it is that model's aggregated problem under AID, which is how large data sets are
solved (docs/fsv.md).
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from ._data import abstract_rows, past_deadline, row_data, row_terms

__all__ = ["FSV", "create_instance", "set_weights", "solution_from", "linearization_value",
           "concave_objective"]


def _abstract() -> pyo.AbstractModel:
    model = abstract_rows(
        "fsv_sla", ("A", "data matrix, numpy array or CSR matrix |K| x |J|"),
        {"d": "label in {-1, +1}", "c": "row weight (cluster size |C_k| under AID)"},
        {"nu": "weight of the misclassification error"},
    )
    model.t = pyo.Param(model.J, mutable=True, within=pyo.NonNegativeReals, initialize=1.0,
                        doc="linearization weight alpha exp(-alpha v^i_j) of (1.22)")
    model.w = pyo.Var(model.J, doc="normal of the plane x'w = gamma")
    model.gamma = pyo.Var(doc="location of the plane")
    model.y = pyo.Var(model.K, within=pyo.NonNegativeReals, doc="slack (misclassification)")
    model.v = pyo.Var(model.J, within=pyo.NonNegativeReals, doc="v_j >= |w_j|")

    def margin_rule(m, k):
        if past_deadline():  # a run's time limit passed (build_deadline): the model is discarded
            return pyo.Constraint.Skip
        dk = float(m.d[k])
        coefs, variables = row_terms(m, "A", k, dk)  # a sparse A: its stored entries only
        return LinearExpression(
            constant=0.0, linear_coefs=[*coefs, -dk, 1.0],
            linear_vars=[*variables, m.gamma, m.y[k]],
        ) >= 1.0

    model.margin = pyo.Constraint(model.K, rule=margin_rule, doc="d_k (A_k w - gamma) + y_k >= 1")
    model.upper = pyo.Constraint(model.J, rule=lambda m, j: LinearExpression(
        constant=0.0, linear_coefs=[1.0, -1.0], linear_vars=[m.w[j], m.v[j]]) <= 0.0)
    model.lower = pyo.Constraint(model.J, rule=lambda m, j: LinearExpression(
        constant=0.0, linear_coefs=[-1.0, -1.0], linear_vars=[m.w[j], m.v[j]]) <= 0.0)

    def objective_rule(m):
        if past_deadline():
            return pyo.Objective.Skip
        error = LinearExpression(constant=0.0, linear_coefs=[m.nu * m.c[k] for k in m.K],
                                 linear_vars=list(m.y.values()))
        return error + sum(m.t[j] * m.v[j] for j in m.J)

    model.objective = pyo.Objective(rule=objective_rule, sense=pyo.minimize,
                                    doc="nu c'y + t'v (the linearized concave term)")
    return model


FSV = _abstract()


def create_instance(A, d, c=None, nu: float = 1.0, t=None) -> pyo.ConcreteModel:
    """A concrete instance of the SLA step LP (1.22).

    Parameters
    ----------
    A : ndarray or scipy sparse matrix of shape (K, m)
        A sparse A is kept as CSR: the margin rows hold its stored entries only.
    d : ndarray of shape (K,)
        Labels in {-1, +1}.
    c : ndarray of shape (K,), optional
        Positive row weights (ones when omitted).
    nu : float
        Weight of the misclassification error.
    t : ndarray of shape (m,), optional
        Linearization weights (ones when omitted; change them with :func:`set_weights`).
    """
    c = np.ones(np.shape(A)[0]) if c is None else c
    instance = FSV.create_instance(data=row_data("A", A, {"d": d, "c": c}, {"nu": nu}))
    if t is not None:
        set_weights(instance, t)
    return instance


def set_weights(instance, t) -> None:
    """Set the linearization weights ``t`` (the only data an SLA step changes)."""
    t = np.asarray(t, dtype=float)
    for j, value in zip(instance.J, t.tolist(), strict=True):
        instance.t[j] = value


def solution_from(instance):
    """``(w, gamma, y, v)`` of a solved instance."""
    w = np.array([instance.w[j].value for j in instance.J], dtype=float)
    y = np.array([instance.y[k].value for k in instance.K], dtype=float)
    v = np.array([instance.v[j].value for j in instance.J], dtype=float)
    return w, float(instance.gamma.value), y, v


def concave_objective(error: float, v, nu: float, alpha: float) -> float:
    r"""FSV's objective (1.21), :math:`\nu\, e'y + e'(e - \exp(-\alpha v))`, with ``error`` the
    weighted slack sum :math:`\sum_k c_k y_k`."""
    v = np.asarray(v, dtype=float)
    return nu * error + float(np.sum(1.0 - np.exp(-alpha * v)))


def linearization_value(error: float, v, v_i, nu: float, alpha: float) -> float:
    r"""The objective of (1.22) at ``(y, v)`` linearized at ``v_i``:
    :math:`\nu\, e'y + \alpha \exp(-\alpha v^i)'(v - v^i)`."""
    v, v_i = np.asarray(v, dtype=float), np.asarray(v_i, dtype=float)
    return nu * error + float(alpha * np.exp(-alpha * v_i) @ (v - v_i))
