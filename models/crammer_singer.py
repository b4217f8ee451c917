r"""The Crammer–Singer multi-class SVM as one joint QP (2-norm) or LP (1-norm).

Crammer & Singer (2001), "On the algorithmic implementation of multiclass kernel-based vector
machines", JMLR 2; LIBLINEAR's ``-s 4`` (scikit-learn's ``LinearSVC(multi_class="crammer_singer",
fit_intercept=False)``). The 1-norm LP is Bredensteiner & Bennett's (1999) style: the same
constraints with :math:`\sum_k \|w_k\|_1` as regularizer, written with :math:`a \ge |w|`.

With rows (or cluster centroids) :math:`x_g`, class indices :math:`y_g \in \{0, \dots, k-1\}`,
weights :math:`c_g` (1 for the original data, :math:`W_G = \sum_{i \in G} s_i` for an aggregated
problem) and the cost ``M`` (scikit-learn's ``C``)::

    min   R(w) + M sum_g c[g] xi[g]
    s.t.  margin[g, r]:  xi[g] + sum_j x[g,j] (w[y_g, j] - w[r, j]) >= 1     g in K, r in L, r != y_g
          xi >= 0

    R(w) = 1/2 sum_{r, j} w[r, j]^2                    (norm "l2": a QP)
           sum_{r, j} a[r, j],  a >= w, a >= -w          (norm "l1": an LP)

No offset: as Crammer–Singer and LIBLINEAR ``-s 4`` without ``-B`` (an offset is a constant
feature, regularized with the rest). In Pyomo's dual convention the dual of ``margin[g, r]`` is
:math:`\alpha_{gr} \ge 0`, and the dual of the problem (checked numerically on the full data by
:func:`aidopt.decomposition.plugins.crammer_singer.certificate`) is::

    max   sum_{g, r} alpha[g, r] - R*(v)      s.t.  alpha >= 0,  sum_r alpha[g, r] <= M c[g]
    v[q]  = sum_g sum_{r != y_g} alpha[g, r] (1[q = y_g] - 1[q = r]) x[g]

with :math:`R^*(v) = \tfrac12 \sum_q \|v_q\|^2` (2-norm; at the optimum :math:`w = v`) or the
indicator of :math:`\max_{q,j} |v_{qj}| \le 1` (1-norm).

Each margin row is one ``LinearExpression`` built from the stored entries of ``x_g`` (a sparse X,
held as CSR, gives its stored entries only: no K x m array is made), as in
:mod:`aidopt.models.svm`.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from ._data import abstract_rows, past_deadline, row_array, row_data, row_entries, var_list

__all__ = ["NORMS", "MODELS", "create_instance", "solution_from"]

NORMS = ("l2", "l1")


def _abstract(norm: str) -> pyo.AbstractModel:
    model = abstract_rows(
        f"crammer_singer_{norm}",
        ("x", "feature matrix: numpy array |K| x |J|, or CSR (its stored entries only)"),
        {"y": "class index in 0..k-1", "c": "row weight (cluster weight W_G under AID)"},
        {"M": "misclassification cost"},
    )
    model.L = pyo.Set(ordered=True, doc="classes 0..k-1")
    model.w = pyo.Var(model.L, model.J, doc="weight vector w_r of class r")
    model.xi = pyo.Var(model.K, within=pyo.NonNegativeReals, doc="hinge slack of the row")

    def margin_rule(m, g, r):
        y = int(m.y[g])
        if r == y or past_deadline():
            return pyo.Constraint.Skip
        where, values = row_entries(m, "x", g)
        columns = _class_columns(m)
        own, other = columns[y], columns[r]
        if where is not None:
            own, other = [own[j] for j in where], [other[j] for j in where]
        body = LinearExpression(
            constant=0.0,
            linear_coefs=[*values, *(-v for v in values), 1.0],
            linear_vars=[*own, *other, m.xi[g]],
        )
        return body >= 1.0

    model.margin = pyo.Constraint(model.K, model.L, rule=margin_rule,
                                  doc="xi_g + (w_{y_g} - w_r) x_g >= 1 for r != y_g")
    if norm == "l1":
        model.a = pyo.Var(model.L, model.J, within=pyo.NonNegativeReals, doc="a_rj >= |w_rj|")
        model.abs_upper = pyo.Constraint(
            model.L, model.J, rule=lambda m, r, j: LinearExpression(
                constant=0.0, linear_coefs=[1.0, -1.0], linear_vars=[m.a[r, j], m.w[r, j]]) >= 0.0,
            doc="a_rj >= w_rj")
        model.abs_lower = pyo.Constraint(
            model.L, model.J, rule=lambda m, r, j: LinearExpression(
                constant=0.0, linear_coefs=[1.0, 1.0], linear_vars=[m.a[r, j], m.w[r, j]]) >= 0.0,
            doc="a_rj >= -w_rj")

    def objective_rule(m):
        c = row_array(m, "c")
        loss = LinearExpression(constant=0.0, linear_coefs=(float(m.M) * c).tolist(),
                                linear_vars=var_list(m, "xi"))
        if norm == "l1":
            return LinearExpression(
                constant=0.0, linear_coefs=[*loss.linear_coefs, *[1.0] * len(m.a)],
                linear_vars=[*loss.linear_vars, *var_list(m, "a")])
        return 0.5 * sum(v ** 2 for v in var_list(m, "w")) + loss

    model.objective = pyo.Objective(rule=objective_rule, sense=pyo.minimize)
    return model


def _class_columns(model) -> list[list]:
    """``w[r, :]`` of every class r as a list of variables (listed once per model)."""
    cache = model.__dict__.setdefault("_class_columns", None)
    if cache is None:
        J = list(model.J)
        cache = [[model.w[r, j] for j in J] for r in model.L]
        model.__dict__["_class_columns"] = cache
    return cache


MODELS = {norm: _abstract(norm) for norm in NORMS}


def create_instance(X, y, k: int, c=None, M: float = 1.0, norm: str = "l2") -> pyo.ConcreteModel:
    """Create a concrete weighted Crammer–Singer instance.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (K, m)
        A sparse X (any format, held as CSR) gives rows of its stored entries only.
    y : ndarray of int, shape (K,)
        Class index of every row, in ``0..k-1``.
    k : int
        Number of classes (>= 2).
    c : ndarray of shape (K,), optional
        Positive row weights (all ones when omitted).
    M : float
        Misclassification cost (scikit-learn's ``C``).
    norm : {"l2", "l1"}

    Returns
    -------
    pyomo.environ.ConcreteModel
    """
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS} for the Crammer-Singer SVM, got {norm!r}")
    y = np.asarray(y)
    if isinstance(k, bool) or int(k) != k or k < 2:
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
    if y.size and (y.min() < 0 or y.max() >= k or not np.all(y == np.round(y))):
        raise ValueError(f"y must hold class indices in 0..{k - 1}")
    c = np.ones(np.shape(X)[0]) if c is None else c
    data = row_data("x", X, {"y": y, "c": c}, {"M": M})
    data[None]["L"] = {None: list(range(int(k)))}
    return MODELS[norm].create_instance(data=data)


def solution_from(instance, duals=None) -> tuple[np.ndarray, np.ndarray | None]:
    """``(w, alpha)`` of a solved instance: ``w`` of shape (k, m) from the variables and
    ``alpha`` of shape (K, k) from the duals of ``margin`` (0 in each row's own class column;
    ``None`` without duals)."""
    k, m = len(instance.L), len(instance.J)
    w = np.array([0.0 if v.value is None else v.value for v in var_list(instance, "w")],
                 dtype=float).reshape(k, m)  # a variable in no row (a column of zeros): 0
    if duals is None:
        return w, None
    alpha = np.zeros((len(instance.K), k))
    for row, g in enumerate(instance.K):
        for r in instance.L:
            if (g, r) in instance.margin:
                alpha[row, r] = duals.get(instance.margin[g, r], 0.0)
    return w, alpha
