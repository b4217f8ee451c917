r"""Linear-programming SVMs of Bradley & Mangasarian: 1-norm, infinity-norm and RLP.

Notation of Bradley, Mangasarian & Musicant (and of the issue): rows ``A`` (data points or cluster
centroids), labels ``d`` (the diagonal of D, in {-1, +1}), plane ``x'w = gamma`` (so the
offset of ``aidopt``'s public ``(w, b)`` is ``b = -gamma``), slack ``y``, row weights ``c``
(1 on the original data, :math:`|C_k|` under AID) and the loss weight ``nu`` (``C`` in the
public API):

* **1-norm SVM** (1.26 / 1.28), ``regularizer="l1"``::

      min   nu sum_k c[k] y[k] + sum_j r[j] s[j]      (r = 1: the 1-norm; other r > 0: a
                                                      weighted 1-norm, FSV's SLA step (1.22))
      s.t.  margin[k]:  d[k] (A[k] w - gamma) + y[k] >= 1
            upper[j]:   w[j] - s[j] <= 0,   lower[j]: -w[j] - s[j] <= 0,   y, s >= 0

* **infinity-norm SVM** (1.25), ``regularizer="linf"``: ``sum_j s[j]`` becomes one ``sigma``
  with ``-sigma <= w[j] <= sigma``.
* **RLP** (1.17), ``regularizer="none"``: ``min nu sum_k c[k] y[k]`` (RLP's ``e'y`` scaled by
  ``nu``, which does not change the minimizer).

In Pyomo's dual convention the dual ``u[k]`` of ``margin[k]`` is >= 0; the LP dual of each model
is ``max sum_k u[k]`` s.t. ``0 <= u[k] <= nu c[k]``, ``sum_k d[k] u[k] = 0`` and a condition on
``v = sum_k u[k] d[k] A[k]``: ``|v_j| <= r_j`` (l1), ``||v||_1 <= 1`` (linf), ``v = 0`` (none).
The AID certificate checks exactly these on the full data (docs/svm.md).

**Dual forms** (``form="dual"``, model names ``svm_<reg>_lp_dual``), which have m + 1 (l1, RLP)
or m + 2 (linf) rows instead of |K| + 2m, as LAD's dual (the form HiGHS's interior point solves
much faster)::

    max   sum_k u[k]
    s.t.  balance:   sum_k d[k] u[k] = 0                                  (dual: b = -gamma)
          l1:    norm[j]:  -r[j] <= sum_k d[k] A[k,j] u[k] <= r[j]         (dual: w[j])
          linf:  vdef[j]:  sum_k d[k] A[k,j] u[k] - p[j] + q[j] = 0        (dual: w[j])
                 total:    sum_j (p[j] + q[j]) <= 1,   p, q >= 0
          none:  vdef[j]:  sum_k d[k] A[k,j] u[k] = 0                      (dual: w[j])
          0 <= u[k] <= nu c[k]

(dual signs in Pyomo's convention, checked against the primal in tests/models.)
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from ._data import abstract_rows, column_terms, past_deadline, row_array, row_data, row_terms, var_list

__all__ = ["REGULARIZERS", "FORMS", "MODELS", "create_instance", "solution_from"]

REGULARIZERS = ("l1", "linf", "none")
FORMS = ("primal", "dual")


def _data_declarations(name: str) -> pyo.AbstractModel:
    """Sets and data every form shares: rows K, features J, A, labels d, weights c, nu, and the
    per-feature weights r of the 1-norm (1 by default)."""
    model = abstract_rows(
        name, ("A", "data matrix, numpy array |K| x |J|"),
        {"d": "label in {-1, +1}", "c": "row weight (cluster size |C_k| under AID)"},
        {"nu": "weight of the misclassification error"},
    )
    model.r = pyo.Param(model.J, within=pyo.PositiveReals, default=1.0,
                        doc="weight of |w_j| in the 1-norm (the SLA step (1.22) of FSV sets it)")
    return model


def _abstract(regularizer: str) -> pyo.AbstractModel:
    model = _data_declarations(f"svm_{regularizer}_lp")
    model.w = pyo.Var(model.J, doc="normal of the plane x'w = gamma")
    model.gamma = pyo.Var(doc="location of the plane")
    model.y = pyo.Var(model.K, within=pyo.NonNegativeReals, doc="slack (hinge loss)")

    def margin_rule(m, k):
        if past_deadline():
            return pyo.Constraint.Skip
        dk = float(m.d[k])
        coefs, variables = row_terms(m, "A", k, dk)
        body = LinearExpression(
            constant=0.0, linear_coefs=[*coefs, -dk, 1.0],
            linear_vars=[*variables, m.gamma, m.y[k]],
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
        variables = list(var_list(m, "y"))
        if regularizer == "l1":
            coefs += [float(m.r[j]) for j in m.J]
            variables += list(m.s.values())
        elif regularizer == "linf":
            coefs.append(1.0)
            variables.append(m.sigma)
        return LinearExpression(constant=0.0, linear_coefs=coefs, linear_vars=variables)

    model.objective = pyo.Objective(rule=objective_rule, sense=pyo.minimize)
    return model


def _abstract_dual(regularizer: str) -> pyo.AbstractModel:
    model = _data_declarations(f"svm_{regularizer}_lp_dual")
    model.u = pyo.Var(model.K, bounds=lambda m, k: (0.0, m.nu * m.c[k]), doc="dual of margin[k]")

    def balance_rule(m):
        return LinearExpression(
            constant=0.0, linear_coefs=row_array(m, "d").tolist(), linear_vars=var_list(m, "u")
        ) == 0.0

    model.balance = pyo.Constraint(rule=balance_rule, doc="sum_k d_k u_k = 0")

    def column(m, j):
        """sum_k d_k A_kj u_k as coefficient and variable lists (a sparse A: its stored
        entries; an empty list for a column of zeros)."""
        return column_terms(m, "A", j, "d", "u")

    if regularizer == "l1":
        def norm_rule(m, j):
            if past_deadline():
                return pyo.Constraint.Skip
            coefs, variables = column(m, j)
            if not variables:  # a column of zeros: |0| <= r_j holds, w_j = 0
                return pyo.Constraint.Skip
            body = LinearExpression(constant=0.0, linear_coefs=coefs, linear_vars=variables)
            return (-float(m.r[j]), body, float(m.r[j]))

        model.norm = pyo.Constraint(model.J, rule=norm_rule, doc="|sum_k d_k A_kj u_k| <= r_j")
    else:
        if regularizer == "linf":
            model.p = pyo.Var(model.J, within=pyo.NonNegativeReals, doc="positive part of v_j")
            model.q = pyo.Var(model.J, within=pyo.NonNegativeReals, doc="negative part of v_j")

        def vdef_rule(m, j):
            if past_deadline():
                return pyo.Constraint.Skip
            coefs, variables = column(m, j)
            if regularizer == "linf":
                coefs, variables = coefs + [-1.0, 1.0], variables + [m.p[j], m.q[j]]
            elif not variables:  # a column of zeros: 0 = 0, w_j = 0
                return pyo.Constraint.Skip
            body = LinearExpression(constant=0.0, linear_coefs=coefs, linear_vars=variables)
            return body == 0.0

        model.vdef = pyo.Constraint(model.J, rule=vdef_rule, doc="v_j = sum_k d_k A_kj u_k")
        if regularizer == "linf":
            model.total = pyo.Constraint(
                rule=lambda m: LinearExpression(
                    constant=0.0, linear_coefs=[1.0] * (2 * len(m.J)),
                    linear_vars=[*m.p.values(), *m.q.values()]) <= 1.0,
                doc="||v||_1 <= 1",
            )

    def objective_rule(m):
        return LinearExpression(
            constant=0.0, linear_coefs=[1.0] * len(m.K), linear_vars=var_list(m, "u")
        )

    model.objective = pyo.Objective(rule=objective_rule, sense=pyo.maximize)
    return model


MODELS = {
    **{(reg, "primal"): _abstract(reg) for reg in REGULARIZERS},
    **{(reg, "dual"): _abstract_dual(reg) for reg in REGULARIZERS},
}


def create_instance(
    A, d, c=None, nu: float = 1.0, regularizer: str = "l1", form: str = "primal", r=None,
) -> pyo.ConcreteModel:
    """Create a concrete weighted LP-SVM instance.

    Parameters
    ----------
    A : ndarray or scipy sparse matrix of shape (K, m)
        A sparse A is kept sparse: the model holds only its stored entries.
    d : ndarray of shape (K,)
        Labels in {-1, +1}.
    c : ndarray of shape (K,), optional
        Positive row weights (all ones when omitted).
    nu : float
        Weight of the misclassification error (the public ``C``).
    regularizer : {"l1", "linf", "none"}
    form : {"primal", "dual"}
    r : ndarray of shape (m,), optional
        Positive weights of the 1-norm, ``sum_j r_j |w_j|`` (all ones when omitted; ``l1`` only).

    Returns
    -------
    pyomo.environ.ConcreteModel
    """
    if regularizer not in REGULARIZERS:
        raise ValueError(f"regularizer must be one of {REGULARIZERS}, got {regularizer!r}")
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    c = np.ones(np.shape(A)[0]) if c is None else c
    data = row_data("A", A, {"d": d, "c": c}, {"nu": nu})
    if r is not None:
        if regularizer != "l1":
            raise ValueError("feature weights r apply to the 1-norm (regularizer='l1') only")
        data[None]["r"] = dict(enumerate(np.asarray(r, dtype=float).tolist()))
    return MODELS[regularizer, form].create_instance(data=data)


def solution_from(instance, duals=None):
    """``(w, b, u)`` of a solved instance of either form.

    Primal: ``w``, ``b = -gamma`` from the variables, ``u`` the duals of ``margin`` (``None``
    without duals). Dual: ``u`` from the variables, ``w`` and ``b`` from the duals of the
    ``norm`` / ``vdef`` rows and of ``balance`` (both ``None`` without duals).
    """
    if instance.name.endswith("_dual"):
        u = np.array([instance.u[k].value for k in instance.K], dtype=float)
        if duals is None:
            return None, None, u
        rows = instance.norm if hasattr(instance, "norm") else instance.vdef
        w = np.array([duals.get(rows[j], 0.0) if j in rows else 0.0 for j in instance.J],
                     dtype=float)
        b = float(duals.get(instance.balance, 0.0))
        return w, b, u
    w = np.array([instance.w[j].value for j in instance.J], dtype=float)
    b = -float(instance.gamma.value)
    u = None
    if duals is not None:
        u = np.array([duals.get(instance.margin[k], 0.0) for k in instance.K], dtype=float)
    return w, b, u
