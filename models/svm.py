r"""Weighted 2-norm soft-margin SVM as a quadratic program (Park & Klabjan 2016, eq. 9).

With rows (or cluster centroids) :math:`x_k`, labels :math:`y_k \in \{-1, +1\}` and weights
:math:`c_k` (1 for the original data, :math:`|C_k|` for an aggregated problem):

**Primal** (``PRIMAL``)::

    min   1/2 sum_j w[j]^2 + M sum_k c[k] xi[k]
    s.t.  margin[k]:  y[k] (sum_j x[k,j] w[j] + b) + xi[k] >= 1              k in K
          xi >= 0,  w, b free

**Dual** (``DUAL``, written with w as auxiliary variables so that the Hessian is the m x m
identity on w and the constraint matrix stays sparse in the K columns)::

    max   sum_k alpha[k] - 1/2 sum_j w[j]^2
    s.t.  weights[j]:  w[j] - sum_k alpha[k] y[k] x[k,j] = 0                  j in J
          balance:     sum_k y[k] alpha[k] = 0
          0 <= alpha[k] <= M c[k]

**Regularized bias** (``bias="regularized"``): the *modified* SVM (1.35) of Bradley, Mangasarian &
Musicant adds :math:`\tfrac12 b^2` to the primal objective (their offset is :math:`\gamma = -b`).
Its dual (1.37) has no ``balance`` row: ``b`` is a variable fixed by the row
``offset: b - sum_k alpha[k] y[k] = 0`` and the objective loses :math:`\tfrac12 b^2` too. It is
the problem LIBLINEAR solves (its bias is an extra feature of value 1, regularized with ``w``), and
the bound-constrained QP that SOR (:mod:`aidopt.numerics.sor`) solves.

Both forms have the same optimal value. In Pyomo's dual convention (d objective / d rhs) the dual of
``margin[k]`` is ``alpha[k]`` and the dual of ``balance`` is ``b`` (checked in
``tests/models/test_svm_models.py`` by comparing with the primal), so either form yields
``(w, b, alpha)``.

Why two forms: HiGHS's QP solver (active set) fails on the primal of overlapping data ("Solve
error" / primal infeasibilities, measured on 5,000 x 30) but solves the dual; SCIP solves the
primal. See docs/svm.md.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from ._data import abstract_rows, column_terms, past_deadline, row_array, row_data, row_terms, var_list

__all__ = ["PRIMAL", "DUAL", "FORMS", "REGULARIZED_FORMS", "BIASES", "create_instance", "solution_from"]


def _data_declarations(name: str) -> pyo.AbstractModel:
    """Sets and data both forms share: rows K, features J, x, y, weights c and the cost M."""
    return abstract_rows(
        name, ("x", "feature matrix: numpy array |K| x |J|, or CSR (its stored entries only)"),
        {"y": "label in {-1, +1}", "c": "row weight (cluster size |C_k| under AID)"},
        {"M": "misclassification cost"},
    )


def _half_squared_norm(w) -> pyo.Expression:
    return 0.5 * sum(w[j] ** 2 for j in w)


def _abstract_primal(regularized: bool) -> pyo.AbstractModel:
    model = _data_declarations("svm_l2rb_primal" if regularized else "svm_l2_primal")
    model.w = pyo.Var(model.J, doc="normal of the separating hyperplane")
    model.b = pyo.Var(doc="offset")
    model.xi = pyo.Var(model.K, within=pyo.NonNegativeReals, doc="hinge slack")

    def margin_rule(m, k):
        if past_deadline():
            return pyo.Constraint.Skip
        yk = m.y[k]
        coefs, variables = row_terms(m, "x", k, yk)  # a sparse x: its stored entries
        body = LinearExpression(
            constant=0.0,
            linear_coefs=[*coefs, float(yk), 1.0],
            linear_vars=[*variables, m.b, m.xi[k]],
        )
        return body >= 1.0

    model.margin = pyo.Constraint(model.K, rule=margin_rule, doc="y_k (w x_k + b) + xi_k >= 1")

    def objective_rule(m):
        loss = LinearExpression(
            constant=0.0,
            linear_coefs=[m.M * m.c[k] for k in m.K],
            linear_vars=var_list(m, "xi"),
        )
        bias = 0.5 * m.b ** 2 if regularized else 0.0
        return _half_squared_norm(m.w) + bias + loss

    model.objective = pyo.Objective(rule=objective_rule, sense=pyo.minimize)
    return model


def _abstract_dual(regularized: bool) -> pyo.AbstractModel:
    model = _data_declarations("svm_l2rb_dual" if regularized else "svm_l2_dual")
    model.alpha = pyo.Var(model.K, bounds=lambda m, k: (0.0, m.M * m.c[k]), doc="dual of margin[k]")
    model.w = pyo.Var(model.J, doc="w = sum_k alpha_k y_k x_k")

    def weights_rule(m, j):
        if past_deadline():
            return pyo.Constraint.Skip
        coefs, variables = column_terms(m, "x", j, "y", "alpha")  # a sparse x: stored entries
        body = LinearExpression(
            constant=0.0,
            linear_coefs=[1.0, *(-c for c in coefs)],
            linear_vars=[m.w[j], *variables],
        )
        return body == 0.0

    model.weights = pyo.Constraint(model.J, rule=weights_rule, doc="w_j = sum_k alpha_k y_k x_kj")

    if regularized:
        model.b = pyo.Var(doc="offset b = sum_k alpha_k y_k (gamma = -b in (1.37))")

    def balance_rule(m):
        coefs, variables = row_array(m, "y").tolist(), var_list(m, "alpha")
        if regularized:
            coefs, variables = [1.0, *(-c for c in coefs)], [m.b, *variables]
        return LinearExpression(constant=0.0, linear_coefs=coefs, linear_vars=variables) == 0.0

    if regularized:
        model.offset = pyo.Constraint(rule=balance_rule, doc="b = sum_k y_k alpha_k")
    else:
        model.balance = pyo.Constraint(rule=balance_rule, doc="sum_k y_k alpha_k = 0")

    def objective_rule(m):
        total = LinearExpression(
            constant=0.0, linear_coefs=[1.0] * len(m.K), linear_vars=var_list(m, "alpha")
        )
        bias = 0.5 * m.b ** 2 if regularized else 0.0
        return total - _half_squared_norm(m.w) - bias

    model.objective = pyo.Objective(rule=objective_rule, sense=pyo.maximize)
    return model


PRIMAL = _abstract_primal(False)
DUAL = _abstract_dual(False)
FORMS = {"primal": PRIMAL, "dual": DUAL}
#: the modified SVM (1.35) / its dual (1.37): the offset regularized
REGULARIZED_FORMS = {"primal": _abstract_primal(True), "dual": _abstract_dual(True)}
BIASES = ("free", "regularized")


def create_instance(X, y, c=None, M: float = 1.0, form: str = "dual",
                    bias: str = "free") -> pyo.ConcreteModel:
    r"""Create a concrete weighted 2-norm SVM instance from numpy data.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (K, m)
        A sparse X (any format, held as CSR) gives rows and columns of its stored entries only:
        no K x m array is made.
    y : ndarray of shape (K,)
        Labels in {-1, +1}.
    c : ndarray of shape (K,), optional
        Positive row weights (all ones when omitted).
    M : float
        Misclassification cost (scikit-learn's ``C``).
    form : {"dual", "primal"}
    bias : {"free", "regularized"}
        ``"regularized"``: the modified SVM (1.35), with :math:`\tfrac12 b^2` in the objective.

    Returns
    -------
    pyomo.environ.ConcreteModel
    """
    if form not in FORMS:
        raise ValueError(f"form must be one of {sorted(FORMS)}, got {form!r}")
    if bias not in BIASES:
        raise ValueError(f"bias must be one of {BIASES}, got {bias!r}")
    c = np.ones(np.shape(X)[0]) if c is None else c
    data = row_data("x", X, {"y": y, "c": c}, {"M": M})
    forms = FORMS if bias == "free" else REGULARIZED_FORMS
    return forms[form].create_instance(data=data)


def solution_from(instance, duals=None):
    """Read ``(w, b, alpha)`` from a solved instance of either form.

    Primal form: ``w, b`` from the variables and ``alpha`` from the duals of ``margin`` (``None``
    without duals). Dual form: ``w, alpha`` from the variables and ``b = dual(balance)``
    (``None`` without duals).
    """
    w = np.array([instance.w[j].value for j in instance.J], dtype=float)
    if instance.name in ("svm_l2_primal", "svm_l2rb_primal"):
        b = float(instance.b.value)
        alpha = None
        if duals is not None:
            alpha = np.array([duals.get(instance.margin[k], 0.0) for k in instance.K], dtype=float)
        return w, b, alpha
    alpha = np.array([instance.alpha[k].value for k in instance.K], dtype=float)
    if instance.name == "svm_l2rb_dual":
        return w, float(instance.b.value), alpha
    b = None if duals is None else float(duals.get(instance.balance, 0.0))
    return w, b, alpha
