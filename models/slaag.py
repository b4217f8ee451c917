r"""SLAAG's convex subproblem (Dutt & Kumar, section 4): problem (3) and the step-2 program.

Both are the same feasible set, only the costs :math:`p_j, q_j` of the two hinges change, so one
instance with mutable Params serves every step (a persistent solver re-solves it warm)::

    min   R(w) + sum_j p[j] xi[j] + sum_j q[j] z[j]
    s.t.  positive[j]:   w x[j] - b + xi[j] >= 1
          negative[j]: -(w x[j] - b) + z[j] >= 1
          xi, z >= 0,  w, b free

* problem (3): :math:`p_j = C a^j`, :math:`q_j = D b^j` (the class shares of row j's collection);
* step 2 at :math:`(\xi^i, z^i)`: :math:`(p_j, q_j) = E\,\delta(\min(\xi^i_j, z^i_j))`, the
  supergradient (2) (the constant :math:`-E\,\delta'(\xi^i, z^i)` of the linearization is added by
  the caller).

``R(w) = 1/2 ||w||_2^2`` (``norm="l2"``, the seed's literal objective: a QP) or
:math:`\|w\|_1` (``norm="l1"``: a linear program, written with :math:`a_j \ge |w_j|`).
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from ._data import add_l1_rows, as_matrix, regularizer, row_terms
from .aggout import NORMS

__all__ = ["SLAAG", "create_instance", "set_costs", "solution_from"]


def _abstract() -> pyo.AbstractModel:
    model = pyo.AbstractModel(name="slaag")
    model.K = pyo.Set(ordered=True, doc="rows")
    model.J = pyo.Set(ordered=True, doc="features")
    model.x = pyo.Param(within=pyo.Any, doc="rows, numpy array or CSR |K| x |J|")
    model.norm = pyo.Param(within=pyo.Any, doc="'l2' (1/2 ||w||^2) or 'l1' (||w||_1)")
    model.p = pyo.Param(model.K, mutable=True, within=pyo.NonNegativeReals, initialize=1.0,
                        doc="cost of xi_j: C a^j in (3), E delta_xi in step 2")
    model.q = pyo.Param(model.K, mutable=True, within=pyo.NonNegativeReals, initialize=1.0,
                        doc="cost of z_j: D b^j in (3), E delta_z in step 2")

    model.w = pyo.Var(model.J, doc="normal of the separating hyperplane")
    model.b = pyo.Var(doc="offset: f(x) = w x - b")
    model.xi = pyo.Var(model.K, within=pyo.NonNegativeReals, doc="hinge of class 1")
    model.z = pyo.Var(model.K, within=pyo.NonNegativeReals, doc="hinge of class 0")

    def body(m, k, sign, slack):
        row, w = row_terms(m, "x", k, sign)  # a sparse x: its stored entries only
        return LinearExpression(constant=0.0, linear_coefs=[*row, -sign, 1.0],
                                linear_vars=[*w, m.b, slack])

    model.positive = pyo.Constraint(model.K, rule=lambda m, k: body(m, k, 1.0, m.xi[k]) >= 1.0,
                                    doc="w x_j - b + xi_j >= 1")
    model.negative = pyo.Constraint(model.K, rule=lambda m, k: body(m, k, -1.0, m.z[k]) >= 1.0,
                                    doc="-(w x_j - b) + z_j >= 1")
    add_l1_rows(model, lambda m: m.norm.value == "l1")

    def objective_rule(m):
        loss = LinearExpression(
            constant=0.0, linear_coefs=[*m.p.values(), *m.q.values()],
            linear_vars=[*m.xi.values(), *m.z.values()],
        )
        return regularizer(m, m.norm.value == "l1") + loss

    model.objective = pyo.Objective(rule=objective_rule, sense=pyo.minimize)
    return model


SLAAG = _abstract()


def create_instance(X, p, q, *, norm: str = "l2") -> pyo.ConcreteModel:
    """A concrete instance on rows ``X`` (n, m; a scipy sparse X is kept as CSR, the rows of the
    model hold its stored entries only) with hinge costs ``p``, ``q`` (n,)."""
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    X = as_matrix(X)
    K = range(X.shape[0])
    data = {"K": {None: list(K)}, "J": {None: list(range(X.shape[1]))}, "x": {None: X},
            "norm": {None: norm},
            "p": dict(zip(K, np.asarray(p, dtype=float).tolist(), strict=True)),
            "q": dict(zip(K, np.asarray(q, dtype=float).tolist(), strict=True))}
    return SLAAG.create_instance(data={None: data})


def set_costs(instance, p, q) -> None:
    """Set the hinge costs (the only data a SLAAG step changes)."""
    for param, values in ((instance.p, p), (instance.q, q)):
        for k, value in zip(instance.K, np.asarray(values, dtype=float).tolist(), strict=True):
            param[k] = value


def solution_from(instance):
    """``(w, b)`` of a solved instance."""
    w = np.array([instance.w[j].value for j in instance.J], dtype=float)
    return w, float(instance.b.value)
