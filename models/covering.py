r"""Covering models of facility location as mixed-integer programs, on aggregated rows
(:mod:`aidopt.data.coverage`): rows r with site sets :math:`N_r` and weights :math:`W_r`,
candidate sites :math:`j \in J`, sites :math:`J_0` forced open.

**MCLP**, the maximal covering location problem (Church & ReVelle 1974), written as the least
uncovered weight (the same problem: covered = total - uncovered)::

    min   sum_r W[r] u[r]
    s.t.  cover[r]:  u[r] + sum_{j in N_r} x[j] >= 1        every row r
          count:     sum_j x[j] = p
          0 <= u <= 1,  x binary,  x[j] = 1 for j in J_0

(``u[r] = 1 - z[r]`` of the textbook form max sum W z, z <= sum x.)

**LSCP**, the location set covering problem (Toregas, Swain, ReVelle & Bergman 1971)::

    min   sum_j f[j] x[j]
    s.t.  cover[r]:  sum_{j in N_r} x[j] >= 1               every row r
          x binary,  x[j] = 1 for j in J_0

with :math:`f_j = 1` (fewest sites) unless opening costs are given.

Every constraint body is a ``LinearExpression`` with numeric coefficients.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

__all__ = ["CoveringModelData", "create_instance", "open_sites"]


class CoveringModelData:
    """Arrays of one aggregated covering model.

    Parameters
    ----------
    kind : {"mclp", "lscp"}
    indptr, sites : ndarray of int64
        Row r's sites are ``sites[indptr[r]:indptr[r + 1]]``.
    n_sites : int
    weight : ndarray (n_rows,), optional
        MCLP: the rows' weights.
    p : int, optional
        MCLP: the number of sites open.
    fixed : ndarray (n_sites,), optional
        LSCP: opening costs (default 1 each).
    fixed_open : ndarray of int64, optional
        Sites forced open.
    """

    def __init__(self, kind, indptr, sites, n_sites, weight=None, p=None, fixed=None,
                 fixed_open=None):
        if kind not in ("mclp", "lscp"):
            raise ValueError(f"kind must be 'mclp' or 'lscp', got {kind!r}")
        self.kind = kind
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self.sites = np.ascontiguousarray(sites, dtype=np.int64)
        self.n_sites = int(n_sites)
        self.weight = None if weight is None else np.ascontiguousarray(weight, dtype=float)
        self.p = None if p is None else int(p)
        self.fixed = None if fixed is None else np.ascontiguousarray(fixed, dtype=float)
        self.fixed_open = (np.zeros(0, dtype=np.int64) if fixed_open is None
                           else np.ascontiguousarray(fixed_open, dtype=np.int64))
        if kind == "mclp" and (self.p is None or self.weight is None):
            raise ValueError("an MCLP model needs p and the rows' weights")

    @property
    def n_rows(self) -> int:
        return int(self.indptr.size - 1)


def create_instance(data: CoveringModelData, name: str | None = None) -> pyo.ConcreteModel:
    """A concrete model of ``data`` (see the module docstring)."""
    m = pyo.ConcreteModel(name=name or data.kind)
    m.J = pyo.RangeSet(0, data.n_sites - 1)
    m.R = pyo.RangeSet(0, data.n_rows - 1)
    m.x = pyo.Var(m.J, within=pyo.Binary, doc="1: the site is open")
    for j in data.fixed_open.tolist():
        m.x[j].setlb(1)
    if data.kind == "mclp":
        m.u = pyo.Var(m.R, bounds=(0.0, 1.0), doc="1: the row is not covered")

    def cover_rule(m, r):
        xs = [m.x[int(j)] for j in data.sites[data.indptr[r]:data.indptr[r + 1]]]
        if data.kind == "mclp":
            xs.append(m.u[r])
        return LinearExpression(constant=0.0, linear_coefs=[1.0] * len(xs), linear_vars=xs) >= 1.0

    m.cover = pyo.Constraint(m.R, rule=cover_rule, doc="every row is covered (or counted in u)")
    xs = [m.x[j] for j in m.J]
    if data.kind == "mclp":
        m.count = pyo.Constraint(expr=LinearExpression(
            constant=0.0, linear_coefs=[1.0] * len(xs), linear_vars=xs) == float(data.p))
        objective = LinearExpression(constant=0.0, linear_coefs=data.weight.tolist(),
                                     linear_vars=[m.u[r] for r in m.R])
    else:
        f = np.ones(data.n_sites) if data.fixed is None else data.fixed
        objective = LinearExpression(constant=0.0, linear_coefs=f.tolist(), linear_vars=xs)
    m.objective = pyo.Objective(expr=objective, sense=pyo.minimize)
    m.data = data
    return m


def open_sites(instance) -> np.ndarray:
    """The open sites of a solved instance (sorted indices; values rounded at 0.5)."""
    x = np.fromiter((v.value if v.value is not None else 0.0 for v in instance.x.values()),
                    dtype=float, count=len(instance.x))
    return np.flatnonzero(x > 0.5).astype(np.int64)
