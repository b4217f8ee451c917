r"""Facility location as a mixed-integer program: uncapacitated p-median, uncapacitated facility
location (UFL) and, with a flag, capacitated facility location (CFL).

Customers :math:`i \in I` with demand :math:`w_i > 0`, candidate sites :math:`j \in J` with opening
cost :math:`f_j \ge 0` (0 for the p-median) and optional capacity :math:`Q_j`, assignment cost
:math:`c_{ij} \ge 0` per unit of demand. The **strong formulation**::

    min   sum_j f[j] y[j] + sum_(i,j) w[i] c[i,j] x[i,j] + sum_{i in F} w[i] u[i] z[i]
    s.t.  assign[i]:    sum_j x[i,j] (+ z[i]) = 1                     i in I
          link[e]:      x[i,j] - y[j] <= 0                            every pair e = (i, j)
          count:        sum_j y[j] <= p                               (p-median, when p is given)
          capacity[j]:  sum_i w[i] x[i,j] - Q[j] y[j] <= 0            (CFL, when Q is given)
          0 <= x <= 1,  z >= 0,  y binary

The pairs :math:`(i, j)` are given as a sparse list (a customer need not have a variable for every
site: AID leaves out pairs that provably never serve, :mod:`aidopt.decomposition.plugins.facility`). The
optional column ``z[i]`` ("far" assignment at cost ``u[i]`` per unit, no site to open) is how AID
stands in for all the sites it left out for customer ``i`` at the price of the cheapest of them:
a relaxation (docs/facility.md). Without ``far`` costs the model is the textbook one.

For the p-median the count row is ``<= p``: with non-negative costs and no opening costs a
solution with fewer sites extends to exactly p at no extra cost, so the optimum is the same as
with ``= p``, and under AID "at most p clusters open" keeps the aggregated model a relaxation.

Every constraint body is a ``LinearExpression`` with numeric coefficients (aidopt's fast reader
takes them straight into a sparse matrix) and the pair data are numpy arrays held in
``Param(within=Any)``: no Python dict of |I| x |J| entries is built.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

__all__ = ["FACILITY", "FacilityModelData", "create_instance", "pairs_from_dense", "solution_from"]


class FacilityModelData:
    """Arrays of one facility-location model (original or aggregated).

    Parameters
    ----------
    cust, site : ndarray of int64, shape (nnz,)
        The pairs, sorted by customer (``cust`` non-decreasing); ``site`` indexes the model's sites.
    cost : ndarray (nnz,)
        Assignment cost per unit of demand of each pair.
    demand : ndarray (n_customers,)
        Positive demand weights.
    n_sites : int
    fixed : ndarray (n_sites,) or None
        Opening costs (``None``: all zero).
    p : int or None
        At most ``p`` sites open (p-median).
    capacity : ndarray (n_sites,) or None
        Capacities (CFL).
    far : ndarray (n_customers,) or None
        Per-unit cost of the "far" column of each customer (``inf``: no far column).
    """

    def __init__(self, cust, site, cost, demand, n_sites, fixed=None, p=None, capacity=None,
                 far=None):
        self.cust = np.ascontiguousarray(cust, dtype=np.int64)
        self.site = np.ascontiguousarray(site, dtype=np.int64)
        self.cost = np.ascontiguousarray(cost, dtype=float)
        self.demand = np.ascontiguousarray(demand, dtype=float)
        self.n_sites = int(n_sites)
        self.fixed = None if fixed is None else np.ascontiguousarray(fixed, dtype=float)
        self.p = None if p is None else int(p)
        self.capacity = None if capacity is None else np.ascontiguousarray(capacity, dtype=float)
        self.far = None if far is None else np.ascontiguousarray(far, dtype=float)
        n = self.demand.size
        if self.cust.size and np.any(np.diff(self.cust) < 0):
            raise ValueError("pairs must be sorted by customer")
        self.indptr = np.searchsorted(self.cust, np.arange(n + 1)).astype(np.int64)
        has_far = np.zeros(n, dtype=bool) if self.far is None else np.isfinite(self.far)
        empty = (np.diff(self.indptr) == 0) & ~has_far
        if empty.any():
            raise ValueError(f"customer {int(np.flatnonzero(empty)[0])} has no site to be served by")

    @property
    def n_customers(self) -> int:
        return int(self.demand.size)

    @property
    def n_pairs(self) -> int:
        return int(self.cust.size)


def pairs_from_dense(costs, keep=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(cust, site, cost)`` of a dense cost matrix, row by row; ``keep`` (bool, same shape) selects
    the pairs (default all)."""
    costs = np.asarray(costs, dtype=float)
    if keep is None:
        n, s = costs.shape
        return (np.repeat(np.arange(n, dtype=np.int64), s), np.tile(np.arange(s, dtype=np.int64), n),
                costs.ravel().copy())
    cust, site = np.nonzero(keep)
    return cust.astype(np.int64), site.astype(np.int64), costs[cust, site]


def _abstract() -> pyo.AbstractModel:
    model = pyo.AbstractModel(name="facility_location")
    model.I = pyo.Set(ordered=True, doc="customers (demand points)")
    model.J = pyo.Set(ordered=True, doc="candidate sites (or clusters of sites under AID)")
    model.E = pyo.Set(ordered=True, doc="customer-site pairs that have an assignment variable")
    model.F = pyo.Set(ordered=True, doc="customers with a far column")
    model.data = pyo.Param(within=pyo.Any, doc="FacilityModelData: the pair arrays, demand, costs")

    model.y = pyo.Var(model.J, within=pyo.Binary, doc="1: the site is open")
    model.x = pyo.Var(model.E, bounds=(0.0, 1.0), doc="share of customer i's demand served by j")
    model.z = pyo.Var(model.F, within=pyo.NonNegativeReals,
                      doc="share served by the far column (AID's stand-in for left-out sites)")

    def assign_rule(m, i):
        d = m.data.value
        lo, hi = int(d.indptr[i]), int(d.indptr[i + 1])
        xs = [m.x[e] for e in range(lo, hi)]
        if i in m.F:
            xs.append(m.z[i])
        return LinearExpression(constant=0.0, linear_coefs=[1.0] * len(xs), linear_vars=xs) == 1.0

    def link_rule(m, e):
        j = int(m.data.value.site[e])
        return LinearExpression(constant=0.0, linear_coefs=[1.0, -1.0],
                                linear_vars=[m.x[e], m.y[j]]) <= 0.0

    def count_rule(m):
        p = m.data.value.p
        if p is None:
            return pyo.Constraint.Skip
        ys = list(m.y.values())
        return LinearExpression(constant=0.0, linear_coefs=[1.0] * len(ys), linear_vars=ys) <= p

    def capacity_rule(m, j):
        d = m.data.value
        if d.capacity is None:
            return pyo.Constraint.Skip
        pairs = m.pairs_of_site.value[j]
        coefs = d.demand[d.cust[pairs]].tolist() + [-float(d.capacity[j])]
        return LinearExpression(constant=0.0, linear_coefs=coefs,
                                linear_vars=[*(m.x[int(e)] for e in pairs), m.y[j]]) <= 0.0

    def objective_rule(m):
        d = m.data.value
        coefs = (d.demand[d.cust] * d.cost).tolist()
        variables = [m.x[e] for e in m.E]
        if d.fixed is not None:
            coefs += d.fixed.tolist()
            variables += list(m.y.values())
        far = [i for i in m.F]
        if far:
            coefs += (d.demand[far] * d.far[far]).tolist()
            variables += [m.z[i] for i in far]
        return LinearExpression(constant=0.0, linear_coefs=coefs, linear_vars=variables)

    def pairs_of_site(m):
        d = m.data.value
        if d.capacity is None:
            return {}
        order = np.argsort(d.site, kind="stable")
        bounds = np.searchsorted(d.site[order], np.arange(d.n_sites + 1))
        return {j: order[bounds[j]:bounds[j + 1]] for j in range(d.n_sites)}

    model.pairs_of_site = pyo.Param(within=pyo.Any, initialize=pairs_of_site,
                                    doc="pairs of each site (CFL capacity rows)")
    model.assign = pyo.Constraint(model.I, rule=assign_rule, doc="every customer is served")
    model.link = pyo.Constraint(model.E, rule=link_rule, doc="x_ij <= y_j (strong formulation)")
    model.count = pyo.Constraint(rule=count_rule, doc="at most p sites open (p-median)")
    model.capacity = pyo.Constraint(model.J, rule=capacity_rule, doc="served demand <= Q_j y_j")
    model.objective = pyo.Objective(rule=objective_rule, sense=pyo.minimize)
    return model


FACILITY = _abstract()


def create_instance(data: FacilityModelData, name: str = "facility_location") -> pyo.ConcreteModel:
    """A concrete model of ``data`` (see the module docstring)."""
    far = [] if data.far is None else np.flatnonzero(np.isfinite(data.far)).tolist()
    instance = FACILITY.create_instance(data={None: {
        "I": {None: list(range(data.n_customers))}, "J": {None: list(range(data.n_sites))},
        "E": {None: list(range(data.n_pairs))}, "F": {None: far}, "data": {None: data},
    }}, name=name)
    return instance


def solution_from(instance) -> tuple[np.ndarray, np.ndarray]:
    """``(open, x)`` of a solved instance: the 0/1 vector of open sites (rounded) and the pair
    values (length ``n_pairs``)."""
    y = np.fromiter((v.value if v.value is not None else 0.0 for v in instance.y.values()),
                    dtype=float, count=len(instance.y))
    x = np.fromiter((v.value if v.value is not None else 0.0 for v in instance.x.values()),
                    dtype=float, count=len(instance.x))
    return (y > 0.5).astype(np.int8), x
