r"""The GSVM linear program (1.12) of Mangasarian's generalized SVMs: the 1-norm of
:math:`K(A, A')Du`, for an arbitrary kernel matrix.

With :math:`w = Du` (so :math:`\|K(A,A')Du\|_1 = \|Kw\|_1`), the kernel matrix ``kernel`` =
:math:`K(A, A')` (m x m, *any* real matrix: no symmetry or definiteness is assumed; Pyomo set
``K`` indexes its rows, ``J`` its columns), labels ``d`` and the error weight ``nu``::

    min   nu sum_i y[i] + sum_i s[i]
    s.t.  margin[i]:  d[i] (K[i] w - gamma) + y[i] >= 1
          upper[i]:   K[i] w - s[i] <= 0,    lower[i]: -K[i] w - s[i] <= 0
          y, s >= 0,  w, gamma free

The decision function (1.2) is :math:`K(x', A') w - \gamma` (class 1 where it is >= 0), and
:math:`u = Dw`. The other two GSVM formulations need no module of their own: (1.11), the 1-norm
of u, is the 1-norm LP SVM of :mod:`aidopt.models.lp_svm` with the rows of K as features, and the
QP (1.10) is the 2-norm SVM dual of :mod:`aidopt.models.svm` on the same rows (its Hessian
:math:`DKK'D` is :math:`D X X' D` with :math:`X = K`): see docs/gsvm.md.

LP dual (multipliers ``u >= 0`` of ``margin``, ``p, q >= 0`` of the rows ``K_i w <= s_i`` and
``-K_i w <= s_i``)::

    max   sum_i u[i]
    s.t.  K' (D u - p + q) = 0,    sum_i d[i] u[i] = 0,    0 <= u <= nu,    p + q <= 1

:meth:`aidopt.decomposition.plugins.gsvm.GSVMKuProblem.certify` checks these conditions and the gap
with the solved model's duals.
"""

from __future__ import annotations

import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from ._data import abstract_rows, past_deadline, row_data

__all__ = ["GSVM_LP_KU", "create_instance", "solution_from"]


def _abstract() -> pyo.AbstractModel:
    model = abstract_rows("gsvm_lp_Ku", ("kernel", "K(A, A'), numpy array m x m"),
                          {"d": "label in {-1, +1}"}, {"nu": "weight of the error e'y"})
    model.w = pyo.Var(model.J, doc="w = Du: the kernel expansion coefficients")
    model.gamma = pyo.Var(doc="threshold of the decision function (1.2)")
    model.y = pyo.Var(model.K, within=pyo.NonNegativeReals, doc="slack (hinge loss)")
    model.s = pyo.Var(model.K, within=pyo.NonNegativeReals, doc="s_i >= |K_i w|")

    def row(m, i, scale, extra_coefs, extra_vars):
        coefs = m.kernel.value[m.K.ord(i) - 1] * scale
        return LinearExpression(constant=0.0, linear_coefs=[*coefs.tolist(), *extra_coefs],
                                linear_vars=[*m.w.values(), *extra_vars])

    # each row has a term per column of K: past the build deadline the rows are skipped
    # (:func:`aidopt.models._data.build_deadline`; the incomplete model is never solved)
    def margin_rule(m, i):
        if past_deadline():
            return pyo.Constraint.Skip
        di = float(m.d[i])
        return row(m, i, di, [-di, 1.0], [m.gamma, m.y[i]]) >= 1.0

    model.margin = pyo.Constraint(model.K, rule=margin_rule, doc="d_i (K_i w - gamma) + y_i >= 1")
    def bound_rule(sign):
        def rule(m, i):
            if past_deadline():
                return pyo.Constraint.Skip
            return row(m, i, sign, [-1.0], [m.s[i]]) <= 0.0
        return rule

    model.upper = pyo.Constraint(model.K, rule=bound_rule(1.0), doc="K_i w - s_i <= 0")
    model.lower = pyo.Constraint(model.K, rule=bound_rule(-1.0), doc="-K_i w - s_i <= 0")
    model.objective = pyo.Objective(
        rule=lambda m: LinearExpression(
            constant=0.0, linear_coefs=[float(m.nu)] * len(m.K) + [1.0] * len(m.K),
            linear_vars=[*m.y.values(), *m.s.values()]),
        sense=pyo.minimize)
    return model


GSVM_LP_KU = _abstract()


def create_instance(K, d, nu: float) -> pyo.ConcreteModel:
    """A concrete (1.12) on the kernel matrix ``K`` (m x m), labels ``d`` and ``nu``."""
    return GSVM_LP_KU.create_instance(data=row_data("kernel", K, {"d": d}, {"nu": nu}))


def solution_from(instance):
    """``(w, gamma)`` of a solved instance (``u = D w``)."""
    import numpy as np

    w = np.array([instance.w[j].value for j in instance.J], dtype=float)
    return w, float(instance.gamma.value)
