r"""Facility location in the radius (covering) formulation, truncated per customer.

For customer :math:`i` let :math:`D_i^0 < D_i^1 < \dots < D_i^{G_i - 1}` be the distinct values of
its cost row :math:`c_{i\cdot}` (its *levels*) and :math:`N_i^g = \{j : c_{ij} \le D_i^g\}`. With
:math:`z_i^g = 1` when no open site lies in :math:`N_i^g`, the cost of serving :math:`i` from its
nearest open site is :math:`D_i^0 + \sum_{g} (D_i^{g+1} - D_i^g) z_i^g` (Cornuéjols, Nemhauser
and Wolsey 1980; Elloumi 2010, who shows that this formulation's LP relaxation equals that of the
strong formulation :math:`x_{ij} \le y_j`). García, Labbé and Marín (2011) solve large p-median
problems by keeping only each customer's first levels and adding levels while the solution needs
them; aidopt's :mod:`aidopt.decomposition.plugins.facility_radius` does that on the AID contract.

This module builds the model for levels :math:`g < k_i` of every customer (its *radius*
:math:`k_i`), written in the chained (sparse) form: each site appears in one row per customer,
in the row of its own level::

    min   const + sum_j f[j] y[j] + sum_r cost[r] z[r]
    s.t.  cover[r]:  z[r] - z[r - 1] + sum_{j in L(r)} y[j] >= 1 (first row of a customer), 0 (others)
          count:     1 <= sum_j y[j] (<= p for the p-median)
          0 <= z[r] <= ub[r],  y binary (or in [0, 1]: the LP relaxation)

Row ``r`` is level ``g`` of customer ``i``; ``L(r)`` the sites with :math:`c_{ij} = D_i^g`;
``cost[r]`` :math:`= w_i (D_i^{g+1} - D_i^g)`; ``const`` :math:`= \sum_i w_i D_i^0`. With
positive row costs an optimal ``z`` is ``z[r] = max(0, z[r-1] - sum_{L(r)} y)``, i.e.
:math:`z_i^g = \max(0, 1 - \sum_{j \in N_i^g} y_j)`: the chained rows are the covering rows
:math:`z_i^g + \sum_{j \in N_i^g} y_j \ge 1` with one nonzero per site instead of one per site
and level. Truncated at :math:`k_i < G_i - 1`, the customer pays
at most :math:`D_i^{k_i}` (the cheapest cost beyond its radius) however far its nearest open site
is: the truncated model is a relaxation of the original one (docs/facility.md).

Every constraint body is a ``LinearExpression`` and the arrays live in one ``Param(within=Any)``.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

__all__ = ["RADIUS", "RadiusModelData", "create_instance", "solution_from"]


class RadiusModelData:
    """Arrays of one truncated radius model.

    Parameters
    ----------
    row_customer : ndarray of int64 (R,)
        Customer of every row, non-decreasing (a customer's rows are its levels 0, 1, ...).
    row_cost : ndarray (R,)
        Objective coefficient of the row's ``z`` (non-negative).
    row_ub : ndarray (R,)
        Upper bound of the row's ``z`` (1 in every model aidopt builds).
    site_ptr, site_index : ndarray of int64
        CSR lists of the sites in each row: ``site_index[site_ptr[r]:site_ptr[r + 1]]``.
    n_sites : int
    constant : float
        :math:`\\sum_i w_i D_i^0`.
    fixed : ndarray (n_sites,) or None
        Opening costs.
    p : int or None
        At most ``p`` sites open.
    """

    def __init__(self, row_customer, row_cost, row_ub, site_ptr, site_index, n_sites, constant,
                 fixed=None, p=None):
        self.row_customer = np.ascontiguousarray(row_customer, dtype=np.int64)
        self.row_cost = np.ascontiguousarray(row_cost, dtype=float)
        self.row_ub = np.ascontiguousarray(row_ub, dtype=float)
        self.site_ptr = np.ascontiguousarray(site_ptr, dtype=np.int64)
        self.site_index = np.ascontiguousarray(site_index, dtype=np.int64)
        self.n_sites = int(n_sites)
        self.constant = float(constant)
        self.fixed = None if fixed is None else np.ascontiguousarray(fixed, dtype=float)
        self.p = None if p is None else int(p)
        R = self.row_customer.size
        if self.row_cost.size != R or self.row_ub.size != R or self.site_ptr.size != R + 1:
            raise ValueError("row arrays must all have one entry per row (site_ptr: R + 1)")
        if R and np.any(np.diff(self.row_customer) < 0):
            raise ValueError("rows must be sorted by customer")
        if np.any(self.row_cost < 0):
            raise ValueError("row costs must be non-negative")
        self.first = np.ones(R, dtype=bool)
        self.first[1:] = self.row_customer[1:] != self.row_customer[:-1]

    @property
    def n_rows(self) -> int:
        return int(self.row_customer.size)

    @property
    def nnz(self) -> int:
        """Nonzeros of the cover rows."""
        return int(self.site_index.size + 2 * self.n_rows - np.count_nonzero(self.first))


def _abstract() -> pyo.AbstractModel:
    model = pyo.AbstractModel(name="facility_radius")
    model.J = pyo.Set(ordered=True, doc="candidate sites")
    model.R = pyo.Set(ordered=True, doc="rows: one per (customer, level below its radius)")
    model.data = pyo.Param(within=pyo.Any, doc="RadiusModelData: the row and site arrays")
    model.relax = pyo.Param(within=pyo.Boolean, default=False, doc="y in [0, 1] instead of binary")

    def y_domain(m, j):
        return pyo.UnitInterval if m.relax.value else pyo.Binary

    def z_bounds(m, r):
        return (0.0, float(m.data.value.row_ub[r]))

    model.y = pyo.Var(model.J, domain=y_domain, doc="1: the site is open")
    model.z = pyo.Var(model.R, bounds=z_bounds,
                      doc="1: no open site within the customer's levels up to this row's")

    def cover_rule(m, r):
        d = m.data.value
        lo, hi = int(d.site_ptr[r]), int(d.site_ptr[r + 1])
        variables = [m.z[r]] + [m.y[int(j)] for j in d.site_index[lo:hi]]
        coefs = [1.0] * len(variables)
        if not d.first[r]:
            variables.append(m.z[r - 1])
            coefs.append(-1.0)
        body = LinearExpression(constant=0.0, linear_coefs=coefs, linear_vars=variables)
        return body >= (1.0 if d.first[r] else 0.0)

    def count_rule(m):
        p = m.data.value.p
        ys = list(m.y.values())
        body = LinearExpression(constant=0.0, linear_coefs=[1.0] * len(ys), linear_vars=ys)
        return pyo.inequality(1.0, body, p) if p is not None else body >= 1.0

    def objective_rule(m):
        d = m.data.value
        coefs = d.row_cost.tolist()
        variables = list(m.z.values())
        if d.fixed is not None:
            coefs += d.fixed.tolist()
            variables += list(m.y.values())
        return LinearExpression(constant=d.constant, linear_coefs=coefs, linear_vars=variables)

    model.cover = pyo.Constraint(model.R, rule=cover_rule,
                                 doc="z[r] >= z[r-1] - (open sites at this level); chained covering")
    model.count = pyo.Constraint(rule=count_rule, doc="at least one, at most p sites open")
    model.objective = pyo.Objective(rule=objective_rule, sense=pyo.minimize)
    return model


RADIUS = _abstract()


def create_instance(data: RadiusModelData, relax: bool = False,
                    name: str = "facility_radius") -> pyo.ConcreteModel:
    """A concrete model of ``data``; ``relax=True`` gives its LP relaxation (y in [0, 1])."""
    return RADIUS.create_instance(data={None: {
        "J": {None: list(range(data.n_sites))}, "R": {None: list(range(data.n_rows))},
        "data": {None: data}, "relax": {None: bool(relax)},
    }}, name=name)


def solution_from(instance) -> tuple[np.ndarray, np.ndarray]:
    """``(y, z)`` of a solved instance as float arrays (``None`` values read as 0)."""
    y = np.fromiter((v.value if v.value is not None else 0.0 for v in instance.y.values()),
                    dtype=float, count=len(instance.y))
    z = np.fromiter((v.value if v.value is not None else 0.0 for v in instance.z.values()),
                    dtype=float, count=len(instance.z))
    return y, z
