r"""Learning from aggregate outputs: the Musicant et al. (2007) SVM, as stated in Dutt & Kumar
(SLAAG) section 3.

Rows (or clusters of rows of one collection, under AID) :math:`k \in K` with weights :math:`n_k`
(1 for the original data, the cluster size under AID) belong to collections :math:`c`; of
collection c only the number :math:`y_c` of class-1 rows is known. One binary :math:`d_k` per row
(or cluster) says whether it is counted in class 1; the decision function is
:math:`f(x) = w \cdot x - b` (the seed's sign of b)::

    min   R(w) + C sum_k n[k] (xi[k] + z[k]) + D sum_c eta[c]
    s.t.  positive[k]:    w x[k] - b + xi[k] + bigM[k] (1 - d[k]) >= 1
          negative[k]:  -(w x[k] - b) + z[k] + bigM[k] d[k]       >= 1
          count_upper[c]:  y[c] - sum_{k in c} n[k] d[k] <= eta[c]
          count_lower[c]:  sum_{k in c} n[k] d[k] - y[c] <= eta[c]
          xi, z, eta >= 0,  d binary,  w, b free

``R(w) = 1/2 ||w||_2^2`` (``norm="l2"``, the seed's MIQP) or :math:`\|w\|_1` (``norm="l1"``: an
MILP, solvable by HiGHS; written with :math:`a_j \ge |w_j|`). The two count rows are the seed's
:math:`-\eta_c \le y_c - \sum_{l \in c} d_l \le \eta_c`.

``bigM[k]`` must bound :math:`1 + |w x_k - b|` at some optimum;
:func:`aidopt.decomposition.plugins.aggout.big_m` derives such a bound from the data. With a smaller value
the model is a different (restricted) problem.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from ._data import add_l1_rows, as_matrix, regularizer, row_terms

__all__ = ["AGGOUT", "NORMS", "create_instance", "solution_from"]

NORMS = ("l2", "l1")


def _abstract() -> pyo.AbstractModel:
    model = pyo.AbstractModel(name="aggregate_outputs")
    model.K = pyo.Set(ordered=True, doc="rows (or clusters of rows of one collection)")
    model.J = pyo.Set(ordered=True, doc="features")
    model.Collections = pyo.Set(ordered=True, doc="collections c")
    model.x = pyo.Param(within=pyo.Any, doc="rows or centroids, numpy array or CSR |K| x |J|")
    model.n = pyo.Param(model.K, doc="weight n_k: 1, or the cluster size under AID")
    model.collection = pyo.Param(model.K, within=pyo.Any, doc="collection of row k")
    model.y = pyo.Param(model.Collections, doc="y_c: number of class-1 rows of collection c")
    model.C = pyo.Param(within=pyo.NonNegativeReals, doc="cost of the hinges xi, z")
    model.D = pyo.Param(within=pyo.NonNegativeReals, doc="cost of a count deviation eta_c")
    model.bigM = pyo.Param(model.K, within=pyo.PositiveReals, doc="bound on 1 + |w x_k - b|")
    model.norm = pyo.Param(within=pyo.Any, doc="'l2' (1/2 ||w||^2) or 'l1' (||w||_1)")

    model.w = pyo.Var(model.J, doc="normal of the separating hyperplane")
    model.b = pyo.Var(doc="offset: f(x) = w x - b")
    model.xi = pyo.Var(model.K, within=pyo.NonNegativeReals, doc="hinge of class 1 (d = 1)")
    model.z = pyo.Var(model.K, within=pyo.NonNegativeReals, doc="hinge of class 0 (d = 0)")
    model.d = pyo.Var(model.K, within=pyo.Binary, doc="1: row (cluster) counted in class 1")
    model.eta = pyo.Var(model.Collections, within=pyo.NonNegativeReals,
                        doc="|y_c - predicted count of c|")

    def body(m, k, sign, coefs, variables):
        row, w = row_terms(m, "x", k, sign)  # a sparse x: its stored entries only
        return LinearExpression(constant=0.0, linear_coefs=[*row, -sign, *coefs],
                                linear_vars=[*w, m.b, *variables])

    def positive_rule(m, k):
        return body(m, k, 1.0, [1.0, -m.bigM[k]], [m.xi[k], m.d[k]]) >= 1.0 - m.bigM[k]

    def negative_rule(m, k):
        return body(m, k, -1.0, [1.0, m.bigM[k]], [m.z[k], m.d[k]]) >= 1.0

    def count(m, c):
        """sum_{k in c} n_k d_k (the members of every collection are found once per model)."""
        groups = m.__dict__.get("_members")
        if groups is None:
            groups = {q: [] for q in m.Collections}
            for k in m.K:
                groups[m.collection[k]].append(k)
            m.__dict__["_members"] = groups
        return LinearExpression(constant=0.0, linear_coefs=[float(m.n[k]) for k in groups[c]],
                                linear_vars=[m.d[k] for k in groups[c]])

    def count_upper_rule(m, c):
        return float(m.y[c]) - count(m, c) - m.eta[c] <= 0.0

    def count_lower_rule(m, c):
        return count(m, c) - float(m.y[c]) - m.eta[c] <= 0.0

    model.positive = pyo.Constraint(model.K, rule=positive_rule,
                                    doc="w x_k - b + xi_k >= 1 when d_k = 1")
    model.negative = pyo.Constraint(model.K, rule=negative_rule,
                                    doc="-(w x_k - b) + z_k >= 1 when d_k = 0")
    model.count_upper = pyo.Constraint(model.Collections, rule=count_upper_rule,
                                       doc="y_c - sum_{k in c} n_k d_k <= eta_c")
    model.count_lower = pyo.Constraint(model.Collections, rule=count_lower_rule,
                                       doc="sum_{k in c} n_k d_k - y_c <= eta_c")
    add_l1_rows(model, lambda m: m.norm.value == "l1")

    def objective_rule(m):
        weights = [m.C * m.n[k] for k in m.K]
        loss = LinearExpression(
            constant=0.0,
            linear_coefs=[*weights, *weights, *(m.D for _ in m.Collections)],
            linear_vars=[*m.xi.values(), *m.z.values(), *m.eta.values()],
        )
        return regularizer(m, m.norm.value == "l1") + loss

    model.objective = pyo.Objective(rule=objective_rule, sense=pyo.minimize)
    return model


AGGOUT = _abstract()


def create_instance(X, n, collection, y, *, C: float, D: float, bigM, norm: str = "l2"):
    """A concrete instance from numpy data.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix (K, m)
        Rows or cluster centroids; a sparse X is kept as CSR (the model's rows hold its stored
        entries only).
    n : ndarray (K,)
        Positive weights (cluster sizes; ones for the original rows).
    collection : ndarray of int (K,)
        The collection ``0..C-1`` of every row (cluster).
    y : ndarray of int (C,)
        Class-1 count of every collection.
    C, D : float
        Costs of the hinges and of the count deviations.
    bigM : float or ndarray (K,)
        Bounds on ``1 + |w x_k - b|`` (see :func:`aidopt.decomposition.plugins.aggout.big_m`).
    norm : {"l2", "l1"}

    Returns
    -------
    pyomo.environ.ConcreteModel
    """
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    X = as_matrix(X)
    K = range(X.shape[0])

    def rows(values, kind=float):
        return dict(zip(K, np.asarray(values).astype(kind).tolist(), strict=True))

    y = np.asarray(y, dtype=float)
    data = {
        "K": {None: list(K)}, "J": {None: list(range(X.shape[1]))},
        "Collections": {None: list(range(y.size))}, "x": {None: X},
        "n": rows(n), "collection": rows(collection, int), "y": dict(enumerate(y.tolist())),
        "C": {None: float(C)}, "D": {None: float(D)},
        "bigM": rows(np.broadcast_to(np.asarray(bigM, dtype=float), (X.shape[0],))),
        "norm": {None: norm},
    }
    return AGGOUT.create_instance(data={None: data})


def solution_from(instance):
    """``(w, b, d)`` of a solved instance; ``d`` (|K|,) rounded to 0/1."""
    w = np.array([instance.w[j].value for j in instance.J], dtype=float)
    d = np.array([instance.d[k].value for k in instance.K], dtype=float)
    return w, float(instance.b.value), (d > 0.5).astype(float)
