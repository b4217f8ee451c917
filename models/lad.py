r"""Weighted least-absolute-deviation (LAD) regression and regression quantiles as linear programs.

Park & Klabjan (2016), eqs. (1) and (4): with rows (or cluster centroids) :math:`x_k, y_k` and
weights :math:`w_k` (1 for the original data, :math:`|C_k|` for an aggregated problem)

.. math::

    E(\beta) = \sum_k w_k \, |y_k - x_k \beta|
    \qquad\text{or, for the level } \tau,\qquad
    E_\tau(\beta) = \sum_k w_k \, \rho_\tau(y_k - x_k \beta),

with Koenker's check function :math:`\rho_\tau(r) = r(\tau - 1\{r < 0\})`. Both weigh a positive
residual by ``above`` (a) and a negative one by ``below`` (b): a = b = 1 for LAD,
a = :math:`\tau`, b = :math:`1 - \tau` for a quantile (:func:`aidopt.numerics.rq.slopes`).

**Primal LP** (``PRIMAL``)::

    min   sum_k w[k] * (above * e_plus[k] + below * e_minus[k])
    s.t.  fit[k]:  sum_j x[k,j] * beta[j] + e_plus[k] - e_minus[k] = y[k]      k in K
          e_plus, e_minus >= 0,  beta free

**Dual LP** (``DUAL``; its value equals the primal's by LP duality)::

    max   sum_k y[k] * v[k]
    s.t.  balance[j]:  sum_k x[k,j] * v[k] = 0                                  j in J
          -below * w[k] <= v[k] <= above * w[k]

In Pyomo's dual sign convention (d objective / d rhs) the dual of ``fit[k]`` is ``v[k]`` and the
dual of ``balance[j]`` is ``beta[j]``, so either form yields both ``beta`` and the certificate's
``v``. The dual has |J| = m rows instead of |K|, which is why AID solves it by default (HiGHS IPM:
8 s against 65 s for the primal on a 20,000 x 100 aggregated problem, see docs/design.md).

The design matrix is held as one array-valued ``Param`` (``x``) rather than a |K| x m indexed
``Param``: an indexed ``Param`` costs about a microsecond per entry to construct and look up, which
dominated instance creation on aggregated problems with millions of coefficients.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from aidopt.numerics.rq import check_loss, slopes

from ._data import abstract_rows, column_entries, past_deadline, row_data, row_entries, var_list

__all__ = [
    "PRIMAL",
    "DUAL",
    "FORMS",
    "create_instance",
    "evaluate",
    "residuals",
    "solution_from",
]


def _data_declarations(name: str) -> pyo.AbstractModel:
    """The sets and data both forms share: rows K, features J, x, y, weights w and the slopes of
    the loss (``above``, ``below``)."""
    return abstract_rows(
        name, ("x", "design matrix, numpy array |K| x |J|"),
        {"y": "response", "w": "row weight (cluster size |C_k| under AID)"},
        {"above": "weight of a positive residual: 1 for LAD, tau for a quantile",
         "below": "weight of a negative residual: 1 for LAD, 1 - tau for a quantile"},
    )


def _abstract_primal() -> pyo.AbstractModel:
    model = _data_declarations("weighted_lad_primal")
    model.beta = pyo.Var(model.J, doc="regression coefficients")
    model.e_plus = pyo.Var(model.K, within=pyo.NonNegativeReals, doc="positive residual part")
    model.e_minus = pyo.Var(model.K, within=pyo.NonNegativeReals, doc="negative residual part")

    def fit_rule(m, k):
        if past_deadline():
            return pyo.Constraint.Skip
        where, values = row_entries(m, "x", k)
        beta = var_list(m, "beta")
        body = LinearExpression(
            constant=0.0,
            linear_coefs=[*values, 1.0, -1.0],
            linear_vars=[*(beta if where is None else [beta[j] for j in where]),
                         m.e_plus[k], m.e_minus[k]],
        )
        return body == m.y[k]

    model.fit = pyo.Constraint(model.K, rule=fit_rule, doc="x_k beta + e+_k - e-_k = y_k")

    def objective_rule(m):
        w = [m.w[k] for k in m.K]
        above, below = pyo.value(m.above), pyo.value(m.below)
        return LinearExpression(
            constant=0.0,
            linear_coefs=[above * wk for wk in w] + [below * wk for wk in w],
            linear_vars=[*m.e_plus.values(), *m.e_minus.values()],
        )

    model.objective = pyo.Objective(rule=objective_rule, sense=pyo.minimize)
    return model


def _abstract_dual() -> pyo.AbstractModel:
    model = _data_declarations("weighted_lad_dual")
    model.v = pyo.Var(model.K, doc="dual of fit[k]", bounds=lambda m, k: (
        -pyo.value(m.below) * m.w[k], pyo.value(m.above) * m.w[k]))

    def balance_rule(m, j):
        if past_deadline():
            return pyo.Constraint.Skip
        where, values = column_entries(m, "x", j)
        if where is not None and not where:  # a column of zeros: the trivial row 0 = 0
            return pyo.Constraint.Skip
        v = var_list(m, "v")
        body = LinearExpression(
            constant=0.0, linear_coefs=values,
            linear_vars=v if where is None else [v[k] for k in where],
        )
        return body == 0.0

    model.balance = pyo.Constraint(model.J, rule=balance_rule, doc="sum_k x_kj v_k = 0")

    def objective_rule(m):
        return LinearExpression(
            constant=0.0,
            linear_coefs=[m.y[k] for k in m.K],
            linear_vars=var_list(m, "v"),
        )

    model.objective = pyo.Objective(rule=objective_rule, sense=pyo.maximize)
    return model


PRIMAL = _abstract_primal()
DUAL = _abstract_dual()
FORMS = {"primal": PRIMAL, "dual": DUAL}


def create_instance(X, y, w=None, form: str = "primal", quantile: float | None = None
                    ) -> pyo.ConcreteModel:
    """Create a concrete weighted-LAD (or regression quantile) instance from numpy data.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (K, m)
        Design matrix (rows or cluster centroids). Used as given: no intercept is added. A
        sparse X is kept sparse: the model holds only its stored entries.
    y : ndarray of shape (K,)
    w : ndarray of shape (K,), optional
        Positive weights; all ones (the unweighted full-data LAD) when omitted.
    form : {"primal", "dual"}
    quantile : float, optional
        :math:`\\tau \\in (0, 1)`: the regression quantile's loss; None (default): LAD.

    Returns
    -------
    pyomo.environ.ConcreteModel
    """
    if form not in FORMS:
        raise ValueError(f"form must be one of {sorted(FORMS)}, got {form!r}")
    n_rows = np.shape(X)[0]
    w = np.ones(n_rows) if w is None else w
    above, below = slopes(quantile)
    data = row_data("x", X, {"y": y, "w": w}, {"above": above, "below": below})
    return FORMS[form].create_instance(data=data)


def residuals(X, y, beta) -> np.ndarray:
    """Residuals ``r = y - X beta`` (vectorised)."""
    from scipy import sparse

    X = X if sparse.issparse(X) else np.asarray(X, dtype=float)
    return np.asarray(y, dtype=float) - X @ np.asarray(beta, dtype=float)


def evaluate(X, y, beta, w=None, quantile: float | None = None) -> float:
    """Weighted LAD objective ``sum_k w_k |y_k - x_k beta|`` (or ``sum_k w_k rho_tau(y_k - x_k
    beta)`` with ``quantile``) on the given data."""
    r = residuals(X, y, beta)
    return check_loss(r, np.ones(r.size) if w is None else np.asarray(w, dtype=float), quantile)


def solution_from(instance, duals=None) -> tuple[np.ndarray, np.ndarray | None]:
    """Read ``(beta, v)`` from a solved instance of either form.

    ``beta`` comes from the primal variables (primal form) or from the duals of ``balance``
    (dual form); ``v`` from the duals of ``fit`` (primal form) or the variables ``v`` (dual form).
    Whichever needs duals is ``None`` when ``duals`` is ``None``.
    """
    if instance.name == "weighted_lad_primal":
        beta = np.array([instance.beta[j].value for j in instance.J], dtype=float)
        v = None if duals is None else np.array([duals.get(instance.fit[k], 0.0) for k in instance.K])
        return beta, v
    v = np.array([instance.v[k].value for k in instance.K], dtype=float)
    # a column of zeros makes balance[j] the trivial row 0 == 0, which the standard-form compiler
    # drops: its beta_j is arbitrary and reported as 0
    beta = None if duals is None else np.array(
        [duals.get(instance.balance[j], 0.0) if j in instance.balance else 0.0 for j in instance.J])
    return beta, v
