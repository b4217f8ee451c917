r"""The test of one level of the p-dispersion search (docs/facility.md): is there a set of
``p`` sites whose pairwise distances are all at least D?

Sites j and k *conflict* when :math:`d_{jk} < D`; a set of sites qualifies exactly when it is an
independent set of this conflict graph. With the graph's edges covered by cliques :math:`Q`
(:func:`aidopt.data.levels.clique_cover`), the maximum independent set, capped at ``p``, is the
set-packing MIP::

    max   sum_j x[j]
    s.t.  pack[q]:  sum_{j in Q_q} x[j] <= 1        every clique q
          count:    sum_j x[j] <= p
          x binary

The level is feasible when the optimum is ``p`` and infeasible when the solver's bound is below
``p`` (the cap lets the solver stop as soon as it finds ``p`` sites). The sites forced open and
those in conflict with them are left out by the caller, which lowers ``p`` by the forced count.

Every constraint body is a ``LinearExpression`` with numeric coefficients.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

__all__ = ["DispersionModelData", "create_instance"]


class DispersionModelData:
    """Arrays of one level's packing model.

    Parameters
    ----------
    n_sites : int
        Sites of the model (numbered ``0 .. n_sites - 1``).
    cliques : list of ndarray of int64
        The clique rows (each at least two sites).
    p : int
        Most sites counted (the level needs ``p``).
    """

    def __init__(self, n_sites: int, cliques, p: int):
        self.n_sites = int(n_sites)
        self.cliques = [np.asarray(q, dtype=np.int64) for q in cliques]
        self.p = int(p)
        if self.n_sites < 1 or self.p < 1:
            raise ValueError("a dispersion model needs at least one site and p >= 1")

    @property
    def n_rows(self) -> int:
        return len(self.cliques)


def create_instance(data: DispersionModelData, name: str = "p_dispersion_level") -> pyo.ConcreteModel:
    """A concrete model of ``data`` (see the module docstring)."""
    m = pyo.ConcreteModel(name=name)
    m.J = pyo.RangeSet(0, data.n_sites - 1)
    m.Q = pyo.RangeSet(0, data.n_rows - 1)
    m.x = pyo.Var(m.J, within=pyo.Binary, doc="1: the site is chosen")

    def pack_rule(m, q):
        xs = [m.x[int(j)] for j in data.cliques[q]]
        return LinearExpression(constant=0.0, linear_coefs=[1.0] * len(xs), linear_vars=xs) <= 1.0

    m.pack = pyo.Constraint(m.Q, rule=pack_rule, doc="at most one site of a conflict clique")
    xs = [m.x[j] for j in m.J]
    total = LinearExpression(constant=0.0, linear_coefs=[1.0] * len(xs), linear_vars=xs)
    m.count = pyo.Constraint(expr=total <= float(data.p))
    m.objective = pyo.Objective(expr=LinearExpression(
        constant=0.0, linear_coefs=[1.0] * len(xs), linear_vars=xs), sense=pyo.maximize)
    m.data = data
    return m
