r"""Semi- and unsupervised regularized least-squares classification (S²RLSC, Gieseke et al. 2012,
problems (7) and (10)) as a convex mixed-integer quadratic program, after eliminating ``c``.

For fixed labels the inner problem :math:`\min_c J_2(c, y)` has the closed form (12)-(13):
with :math:`\bar K = DKD` and :math:`G = (\bar K + \lambda I)^{-1}`,

.. math:: F(y) = \min_c J_2(c, y) = \lambda\, y' D G D y = y' M y, \qquad
          M = \lambda D (DKD + \lambda I)^{-1} D = D (I - V \Omega V') D,

where :math:`\bar K = V \Lambda V'` and :math:`\Omega = \Lambda(\Lambda + \lambda I)^{-1}`
(eq. 13; the Nyström variant uses :math:`\tilde K`, eq. 14). M is positive definite (D is
invertible and G positive definite), so labelling is the convex MIQP

.. math:: \min_{y} \; y' M y \quad \text{s.t.} \quad y_i = y'_i \;(i \in L), \quad
          y_i \in \{-1, +1\} \;(i \in U), \quad
          \Big|\tfrac{1}{u} \textstyle\sum_{i \in U} \max(0, y_i) - b_c\Big| < \varepsilon .

With one binary per unlabelled point, :math:`y_U = 2z - e` and :math:`\max(0, y_i) = z_i`::

    min   c0 + sum_i p[i] z[i] + sum_{i,j} Q[i,j] z[i] z[j]
    s.t.  lower:  sum_i w[i] z[i] >= k_lo
          upper:  sum_i w[i] z[i] <= k_hi
          z binary

    Q  = 4 M_UU                                  (positive definite: a convex MIQP)
    p  = 4 (M_UL y_L - M_UU e)
    c0 = y_L' M_LL y_L - 2 e' M_UL y_L + e' M_UU e   = F(y) at z = 0 (every free label -1)

so the objective **equals** F(y) at every labelling (the constant c0 is part of the objective,
not dropped). The strict band on the count :math:`k = \sum_U z_i` is the integer interval
``k_lo <= k <= k_hi`` of :class:`aidopt.numerics.rlsc.Band`; ``w`` are the count weights (1 per point;
cluster sizes for an aggregated problem).

Size: Q is dense, so the objective has :math:`u(u+1)/2` quadratic terms, each built as a Pyomo
expression in Python (O(u²) time and memory before any solver starts). The callers in
:mod:`aidopt.api.s2rlsc` refuse ``u > EXACT_MAX_U`` (400); :func:`create_instance` itself does not.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

__all__ = ["S2RLSC_MIQP", "miqp_data", "create_instance", "solution_from"]


def miqp_data(M, y, free) -> tuple[np.ndarray, np.ndarray, float]:
    """``(Q, p, c0)`` of the MIQP in ``z`` for the labelling objective ``y'My``.

    Parameters
    ----------
    M : ndarray (n, n)
        Symmetric positive (semi)definite matrix with ``F(y) = y'My``.
    y : ndarray (n,)
        Labels; the entries outside ``free`` are the fixed (labelled) ones, the others are ignored.
    free : ndarray of int (u,)
        Positions of the unlabelled points (one binary each, in this order).

    Returns
    -------
    Q : ndarray (u, u), p : ndarray (u,), c0 : float
        ``y'My = c0 + p'z + z'Qz`` for ``y_free = 2z - 1``.
    """
    M = np.asarray(M, dtype=float)
    free = np.asarray(free, dtype=np.int64)
    fixed = np.setdiff1d(np.arange(M.shape[0]), free)
    yL = np.asarray(y, dtype=float)[fixed]
    M_UU = M[np.ix_(free, free)]
    M_UL = M[np.ix_(free, fixed)]
    M_LL = M[np.ix_(fixed, fixed)]
    M_UU = 0.5 * (M_UU + M_UU.T)
    ones = np.ones(free.size)
    Q = 4.0 * M_UU
    p = 4.0 * (M_UL @ yL - M_UU @ ones)
    c0 = float(yL @ M_LL @ yL - 2.0 * ones @ M_UL @ yL + ones @ M_UU @ ones)
    return Q, p, c0


def _abstract() -> pyo.AbstractModel:
    model = pyo.AbstractModel(name="s2rlsc_miqp")
    model.U = pyo.Set(ordered=True, doc="unlabelled points (or clusters): one binary each")
    model.Q = pyo.Param(within=pyo.Any, doc="4 M_UU, numpy array |U| x |U| (positive definite)")
    model.p = pyo.Param(model.U, doc="linear coefficient 4 (M_UL y_L - M_UU e)")
    model.w = pyo.Param(model.U, doc="count weight (1 per point, cluster size when aggregated)")
    model.c0 = pyo.Param(within=pyo.Reals, doc="F(y) with every free label -1")
    model.k_lo = pyo.Param(within=pyo.Reals, doc="smallest admissible count of +1 labels")
    model.k_hi = pyo.Param(within=pyo.Reals, doc="largest admissible count of +1 labels")
    model.z = pyo.Var(model.U, within=pyo.Binary, doc="1: label +1 (y = 2z - 1)")

    def count(m):
        return LinearExpression(constant=0.0, linear_coefs=[float(m.w[i]) for i in m.U],
                                linear_vars=list(m.z.values()))

    model.lower = pyo.Constraint(rule=lambda m: count(m) >= m.k_lo, doc="sum w z >= k_lo")
    model.upper = pyo.Constraint(rule=lambda m: count(m) <= m.k_hi, doc="sum w z <= k_hi")

    def objective_rule(m):
        Q = m.Q.value
        z = list(m.z.values())
        u = len(z)
        linear = LinearExpression(constant=float(m.c0), linear_coefs=[float(m.p[i]) for i in m.U],
                                  linear_vars=z)
        # Q symmetric: diagonal once, each off-diagonal pair once with twice its entry
        quad = pyo.quicksum(float(Q[i, i]) * z[i] * z[i] for i in range(u))
        quad += pyo.quicksum(2.0 * float(Q[i, j]) * z[i] * z[j]
                             for i in range(u) for j in range(i + 1, u) if Q[i, j] != 0.0)
        return linear + quad

    model.objective = pyo.Objective(rule=objective_rule, sense=pyo.minimize)
    return model


S2RLSC_MIQP = _abstract()


def create_instance(M, y, free, k_lo: float, k_hi: float, weights=None) -> pyo.ConcreteModel:
    """A concrete labelling MIQP for ``F(y) = y'My`` with the fixed labels of ``y``.

    Parameters
    ----------
    M : ndarray (n, n)
        ``F(y) = y'My`` (:meth:`aidopt.numerics.rlsc.RLSCFitness.matrix`).
    y : ndarray (n,)
        Fixed labels outside ``free``.
    free : ndarray of int (u,)
        The unlabelled positions, in the order of the binaries.
    k_lo, k_hi : float
        Admissible range of the (weighted) count of +1 labels among ``free``.
    weights : ndarray (u,), optional
        Count weights (default 1).

    Returns
    -------
    pyomo.environ.ConcreteModel
        With u(u+1)/2 quadratic objective terms (see the module docstring on size).
    """
    Q, p, c0 = miqp_data(M, y, free)
    u = Q.shape[0]
    w = np.ones(u) if weights is None else np.asarray(weights, dtype=float)
    data = {
        "U": {None: list(range(u))}, "Q": {None: Q},
        "p": dict(enumerate(p.tolist())), "w": dict(enumerate(w.tolist())),
        "c0": {None: c0}, "k_lo": {None: float(k_lo)}, "k_hi": {None: float(k_hi)},
    }
    return S2RLSC_MIQP.create_instance(data={None: data})


def solution_from(instance) -> np.ndarray:
    """The free labels ``2z - 1`` (-1 / +1) of a solved instance, in the order of ``free``."""
    z = np.array([instance.z[i].value for i in instance.U], dtype=float)
    return np.where(z > 0.5, 1.0, -1.0)
