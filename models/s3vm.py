r"""Semi-supervised SVM (S3VM) as a mixed-integer program (Bennett & Demiriz 1999; Park & Klabjan
2016, eq. 14 and its aggregated version eq. 15).

Labeled rows (or label-pure clusters) :math:`k \in L` with labels :math:`y_k \in \{-1, +1\}` and
weights :math:`c_k`; unlabeled rows (or clusters) :math:`k \in U` with weights :math:`c_k`
(1 for the original data, the cluster size :math:`|C_k|` under AID; a balance cost multiplies the
labeled weights). One binary :math:`d_k` per unlabeled row says on which side of the hyperplane
it is counted (:math:`d_k = 1`: class +1)::

    min   R(w) + M_l sum_{k in L} c[k] xi[k] + M_u sum_{k in U} c[k] eta[k]
    s.t.  labeled[k]:  y[k] (w x[k] + b) + xi[k] >= 1                          k in L
          positive[k]:  (w x[k] + b) + eta[k] + bigM[k] (1 - d[k]) >= 1          k in U
          negative[k]: -(w x[k] + b) + eta[k] + bigM[k] d[k] >= 1                k in U
          balance:      sum_{k in U} c[k] (w x[k] + b) = ybar sum_{k in U} c[k]   (optional)
          xi, eta >= 0,  d binary,  w, b free

The paper (eq. 14) has two slacks :math:`\eta^+_k, \eta^-_k`, one per row pair; with a valid
big-M only the row selected by :math:`d_k` can bind, so one slack :math:`\eta_k` is the same model
with |U| fewer variables (the pip Gurobi licence counts them). With
:math:`R(w) = \tfrac12\|w\|_2^2` (``regularizer="l2"``: an MIQP) or :math:`\|w\|_1`
(``"l1"``: an MILP, Bennett & Demiriz's original; written with :math:`a_j \ge |w_j|`). The balance
row (Park & Klabjan section 4.3) asks the mean decision value over the unlabeled rows to equal the
mean labeled label ``ybar``; it is the same linear row on centroids as on the data.

``bigM[k]`` must bound :math:`1 + |w x_k + b|` at an optimum; :func:`aidopt.decomposition.plugins.s3vm.big_m`
derives such a bound from the data (docs/s3vm.md). With a smaller value the model is a different
(restricted) problem.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from ._data import add_l1_rows, as_matrix, regularizer, row_terms

__all__ = ["S3VM", "REGULARIZERS", "create_instance", "solution_from"]

REGULARIZERS = ("l2", "l1")


def _row_body(m, matrix: str, index_set, k, scale: float, extra_coefs, extra_vars):
    """``scale * (w x[k] + b) + sum extra``, built as one LinearExpression (a sparse row: its
    stored entries only)."""
    coefs, variables = row_terms(m, matrix, k, scale, rows=index_set)
    return LinearExpression(
        constant=0.0,
        linear_coefs=[*coefs, scale, *extra_coefs],
        linear_vars=[*variables, m.b, *extra_vars],
    )


def _abstract() -> pyo.AbstractModel:
    model = pyo.AbstractModel(name="s3vm")
    model.L = pyo.Set(ordered=True, doc="labeled rows (or label-pure clusters)")
    model.U = pyo.Set(ordered=True, doc="unlabeled rows (or clusters)")
    model.J = pyo.Set(ordered=True, doc="features")
    model.xl = pyo.Param(within=pyo.Any, doc="labeled rows, numpy array or CSR |L| x |J|")
    model.xu = pyo.Param(within=pyo.Any, doc="unlabeled rows, numpy array or CSR |U| x |J|")
    model.y = pyo.Param(model.L, doc="label in {-1, +1}")
    model.cl = pyo.Param(model.L, doc="labeled weight (cluster size x balance cost)")
    model.cu = pyo.Param(model.U, doc="unlabeled weight (cluster size)")
    model.Ml = pyo.Param(within=pyo.PositiveReals, doc="cost of a labeled hinge")
    model.Mu = pyo.Param(within=pyo.NonNegativeReals, doc="cost of an unlabeled hinge")
    model.bigM = pyo.Param(model.U, within=pyo.PositiveReals, doc="bound on 1 + |w x_k + b|")
    model.regularizer = pyo.Param(within=pyo.Any, doc="'l2' (1/2 ||w||^2) or 'l1' (||w||_1)")
    model.ybar = pyo.Param(within=pyo.Any, doc="balance target (mean labeled label) or None")

    model.w = pyo.Var(model.J, doc="normal of the separating hyperplane")
    model.b = pyo.Var(doc="offset")
    model.xi = pyo.Var(model.L, within=pyo.NonNegativeReals, doc="labeled hinge")
    model.eta = pyo.Var(model.U, within=pyo.NonNegativeReals, doc="unlabeled hinge (side d)")
    model.d = pyo.Var(model.U, within=pyo.Binary, doc="1: counted in class +1")

    def labeled_rule(m, k):
        return _row_body(m, "xl", m.L, k, float(m.y[k]), [1.0], [m.xi[k]]) >= 1.0

    def positive_rule(m, k):
        return _row_body(m, "xu", m.U, k, 1.0, [1.0, -m.bigM[k]], [m.eta[k], m.d[k]]) >= 1.0 - m.bigM[k]

    def negative_rule(m, k):
        return _row_body(m, "xu", m.U, k, -1.0, [1.0, m.bigM[k]], [m.eta[k], m.d[k]]) >= 1.0

    def balance_rule(m):
        if m.ybar.value is None or len(m.U) == 0:
            return pyo.Constraint.Skip
        c = np.array([m.cu[k] for k in m.U], dtype=float)
        coefs = np.asarray(m.xu.value.T @ c).ravel()  # a sparse xu: one product, no copy
        body = LinearExpression(
            constant=0.0, linear_coefs=[*coefs.tolist(), float(c.sum())],
            linear_vars=[*m.w.values(), m.b],
        )
        return body == float(m.ybar.value) * float(c.sum())

    model.labeled = pyo.Constraint(model.L, rule=labeled_rule, doc="y_k (w x_k + b) + xi_k >= 1")
    model.positive = pyo.Constraint(model.U, rule=positive_rule, doc="w x_k + b + eta_k >= 1 if d_k = 1")
    model.negative = pyo.Constraint(model.U, rule=negative_rule, doc="-(w x_k + b) + eta_k >= 1 if d_k = 0")
    model.balance = pyo.Constraint(rule=balance_rule, doc="mean unlabeled w x + b = mean labeled y")
    add_l1_rows(model, lambda m: m.regularizer.value == "l1")

    def objective_rule(m):
        loss = LinearExpression(
            constant=0.0,
            linear_coefs=[*(m.Ml * m.cl[k] for k in m.L), *(m.Mu * m.cu[k] for k in m.U)],
            linear_vars=[*m.xi.values(), *m.eta.values()],
        )
        return regularizer(m, m.regularizer.value == "l1") + loss

    model.objective = pyo.Objective(rule=objective_rule, sense=pyo.minimize)
    return model


S3VM = _abstract()


def create_instance(
    Xl, yl, cl, Xu, cu, *, Ml: float, Mu: float, bigM, regularizer: str = "l2",
    ybar: float | None = None,
) -> pyo.ConcreteModel:
    """A concrete S3VM instance from numpy data.

    Parameters
    ----------
    Xl : ndarray or scipy sparse matrix (|L|, m)
        Labeled rows or centroids. Sparse ``Xl`` / ``Xu`` are kept as CSR: the rows of the
        model hold their stored entries only.
    yl : ndarray (|L|,)
        Labels in {-1, +1}.
    cl : ndarray (|L|,)
        Positive weights of the labeled rows (cluster sizes times any balance cost).
    Xu : ndarray or scipy sparse matrix (|U|, m)
        Unlabeled rows or centroids.
    cu : ndarray (|U|,)
        Positive weights (cluster sizes).
    Ml, Mu : float
        Costs of the labeled and unlabeled hinges.
    bigM : float or ndarray (|U|,)
        Bounds on ``1 + |w x_k + b|`` at an optimum (see :func:`aidopt.decomposition.plugins.s3vm.big_m`).
    regularizer : {"l2", "l1"}
    ybar : float or None
        Balance target: with a number, the row ``mean_U(w x + b) = ybar`` is added.

    Returns
    -------
    pyomo.environ.ConcreteModel
    """
    if regularizer not in REGULARIZERS:
        raise ValueError(f"regularizer must be one of {REGULARIZERS}, got {regularizer!r}")
    Xl, Xu = as_matrix(Xl), as_matrix(Xu)
    m = Xl.shape[1] if Xl.ndim == 2 and Xl.shape[0] else Xu.shape[1]
    Xl, Xu = (X.reshape(-1, m) if isinstance(X, np.ndarray) else X for X in (Xl, Xu))

    def rows(values):
        return dict(enumerate(np.asarray(values, dtype=float).tolist()))

    data = {
        "L": {None: list(range(Xl.shape[0]))}, "U": {None: list(range(Xu.shape[0]))},
        "J": {None: list(range(m))}, "xl": {None: Xl}, "xu": {None: Xu},
        "y": rows(yl), "cl": rows(cl), "cu": rows(cu),
        "Ml": {None: float(Ml)}, "Mu": {None: float(Mu)},
        "bigM": rows(np.broadcast_to(np.asarray(bigM, dtype=float), (Xu.shape[0],))),
        "regularizer": {None: regularizer}, "ybar": {None: None if ybar is None else float(ybar)},
    }
    return S3VM.create_instance(data={None: data})


def solution_from(instance):
    """``(w, b, d)`` of a solved instance; ``d`` (|U|,) rounded to 0/1."""
    w = np.array([instance.w[j].value for j in instance.J], dtype=float)
    d = np.array([instance.d[k].value for k in instance.U], dtype=float)
    return w, float(instance.b.value), (d > 0.5).astype(float)
