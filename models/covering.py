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

**LSCP decision** (``most=p``): "can p sites cover every row?", the level test of the p-center's
client-subset search (Contardo, Iori & Kramer 2019; docs/facility.md)::

    min   0
    s.t.  cover[r]:  sum_{j in N_r} x[j] >= 1               every row r
          count:     sum_j x[j] <= p
          x binary,  x[j] = 1 for j in J_0

feasible iff p sites suffice; a solver stops at its first solution and proves the answer "no" by
infeasibility (the count row is an objective cutoff: every node whose LP needs more than p sites
is pruned, where the LSCP proper must first find a p-site cover to prune them).

**Capacitated LSCP** (CLSCP-SO of Current & Storbeck 1988, as in PySAL spopt): site j serves at
most :math:`Q_j` demand, row r's demand :math:`A_r` (the summed demand of its points) may be
split among the open sites of :math:`N_r`; :math:`z_{rj}` is the share of it site j serves::

    min   sum_j f[j] x[j]
    s.t.  cover[r]:   sum_{j in N_r} x[j] >= 1                  every row r (implied; kept for the LP)
          assign[r]:  sum_{j in N_r} z[r, j] = 1                every row r
          cap[j]:     sum_{r : j in N_r} A[r] z[r, j] <= Q[j] x[j]   every site j
          link[r, j]: z[r, j] <= x[j]                           (implied by cap when A[r] > 0)
          z >= 0,  x binary,  x[j] = 1 for j in J_0

**Single-sourcing capacitated LSCP** (each point served wholly by one open site): on rows that
are *classes* of :math:`c_r` points with the same coverage set and the same demand
:math:`a_r` each, :math:`n_{rj}` is the (integer) number of the class's points site j serves::

    min   sum_j f[j] x[j]
    s.t.  cover[r]:   sum_{j in N_r} x[j] >= 1                  every row r (implied; kept for the LP)
          assign[r]:  sum_{j in N_r} n[r, j] = c[r]             every row r
          cap[j]:     sum_{r : j in N_r} a[r] n[r, j] <= Q[j] x[j]   every site j
          link[r, j]: n[r, j] <= m[r, j] x[j],  m[r, j] = min(c[r], floor(Q[j] / a[r]))
          n integer >= 0,  x binary,  x[j] = 1 for j in J_0

(the strong linking :math:`x_{ij} \le y_j` of the points, summed over the class and tightened
by the capacity; the sites of :math:`N_r` with :math:`Q_j < a_r` are left out of the row
beforehand). It is the split model with :math:`z_{rj} = n_{rj} / c_r` restricted to multiples
of :math:`1 / c_r`: one formulation, :func:`_add_assignment`, for both; its exactness is proven
in docs/facility.md.

**LSCP-B**, backup coverage (Hogan & ReVelle 1986): with the LSCP's least number of sites
:math:`p^*`, the least weight of rows not covered twice (``v[r] = 1 - U[r]`` of the textbook
max sum W U, sum_{N_r} x >= 1 + U)::

    min   sum_r W[r] v[r]
    s.t.  cover[r]:  v[r] + sum_{j in N_r} x[j] >= 2        every row r
          count:     sum_j x[j] = p*
          0 <= v <= 1,  x binary,  x[j] = 1 for j in J_0

(``v <= 1`` makes every row covered at least once.) It is the MCLP's model with the right-hand
side 2: one formulation, the level of coverage a parameter.

Every constraint body is a ``LinearExpression`` with numeric coefficients.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

__all__ = ["KINDS", "CoveringModelData", "create_instance", "open_sites", "shares", "counts"]

#: the covering models of this module
KINDS = ("mclp", "lscp", "lscp-b")


class CoveringModelData:
    """Arrays of one aggregated covering model.

    Parameters
    ----------
    kind : {"mclp", "lscp", "lscp-b"}
    indptr, sites : ndarray of int64
        Row r's sites are ``sites[indptr[r]:indptr[r + 1]]``.
    n_sites : int
    weight : ndarray (n_rows,), optional
        MCLP, LSCP-B: the rows' weights; capacitated LSCP: the rows' demand :math:`A_r`.
    p : int, optional
        MCLP, LSCP-B: the number of sites open.
    fixed : ndarray (n_sites,), optional
        LSCP: opening costs (default 1 each).
    fixed_open : ndarray of int64, optional
        Sites forced open.
    capacity : ndarray (n_sites,), optional
        LSCP: the sites' capacities :math:`Q_j` (the capacitated LSCP; needs ``weight``).
    count : ndarray of int64 (n_rows,), optional
        Single-sourcing (with ``capacity``): row r is a class of ``count[r]`` points, each of
        demand ``weight[r]`` and served wholly by one site; its assignment variables are the
        integer numbers of its points each site serves. ``None``: split demand, ``weight`` the
        rows' summed demand.
    most : int, optional
        LSCP: the decision version, at most ``most`` sites and no objective (module docstring).
    """

    def __init__(self, kind, indptr, sites, n_sites, weight=None, p=None, fixed=None,
                 fixed_open=None, capacity=None, count=None, most=None):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        self.kind = kind
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self.sites = np.ascontiguousarray(sites, dtype=np.int64)
        self.n_sites = int(n_sites)
        self.weight = None if weight is None else np.ascontiguousarray(weight, dtype=float)
        self.p = None if p is None else int(p)
        self.fixed = None if fixed is None else np.ascontiguousarray(fixed, dtype=float)
        self.fixed_open = (np.zeros(0, dtype=np.int64) if fixed_open is None
                           else np.ascontiguousarray(fixed_open, dtype=np.int64))
        self.capacity = None if capacity is None else np.ascontiguousarray(capacity, dtype=float)
        if kind != "lscp" and (self.p is None or self.weight is None):
            raise ValueError(f"a {kind} model needs p and the rows' weights")
        if self.capacity is not None and (kind != "lscp" or self.weight is None):
            raise ValueError("capacities belong to an LSCP model with the rows' demand")
        self.count = None if count is None else np.ascontiguousarray(count, dtype=np.int64)
        if self.count is not None and (self.capacity is None or self.count.size != self.n_rows
                                       or np.any(self.count < 1)):
            raise ValueError("count (single-sourcing) needs capacities and a positive count "
                             "per row")
        self.most = None if most is None else int(most)
        if self.most is not None and (kind != "lscp" or self.capacity is not None
                                      or self.fixed is not None or self.most < 0):
            raise ValueError("most (the LSCP decision version) belongs to an uncapacitated LSCP "
                             "without opening costs and is at least 0")

    @property
    def need(self) -> int:
        """How many open sites cover a row: 2 for LSCP-B's backup, 1 otherwise."""
        return 2 if self.kind == "lscp-b" else 1

    @property
    def counted(self) -> bool:
        """The model opens ``p`` sites and minimises the weight of rows short of ``need``."""
        return self.kind != "lscp"

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
    if data.counted:
        m.u = pyo.Var(m.R, bounds=(0.0, 1.0), doc="1: the row is short of its coverage")

    def cover_rule(m, r):
        xs = [m.x[int(j)] for j in data.sites[data.indptr[r]:data.indptr[r + 1]]]
        if data.counted:
            xs.append(m.u[r])
        return LinearExpression(constant=0.0, linear_coefs=[1.0] * len(xs),
                                linear_vars=xs) >= float(data.need)

    m.cover = pyo.Constraint(m.R, rule=cover_rule, doc="every row is covered (or counted in u)")
    xs = [m.x[j] for j in m.J]
    if data.counted:
        m.count = pyo.Constraint(expr=LinearExpression(
            constant=0.0, linear_coefs=[1.0] * len(xs), linear_vars=xs) == float(data.p))
        objective = LinearExpression(constant=0.0, linear_coefs=data.weight.tolist(),
                                     linear_vars=[m.u[r] for r in m.R])
    elif data.most is not None:
        m.count = pyo.Constraint(expr=LinearExpression(
            constant=0.0, linear_coefs=[1.0] * len(xs), linear_vars=xs) <= float(data.most))
        objective = LinearExpression(constant=0.0, linear_coefs=[0.0] * len(xs), linear_vars=xs)
    else:
        f = np.ones(data.n_sites) if data.fixed is None else data.fixed
        objective = LinearExpression(constant=0.0, linear_coefs=f.tolist(), linear_vars=xs)
    if data.capacity is not None:
        _add_assignment(m, data)
    m.objective = pyo.Objective(expr=objective, sense=pyo.minimize)
    m.data = data
    return m


def assignment_bounds(data: CoveringModelData) -> np.ndarray:
    r"""The upper bound :math:`m_k` of every pair's assignment variable: 1 for the split shares;
    with single-sourcing :math:`\min(c_r, \lfloor Q_j / a_r \rfloor)` (rounded generously by a
    relative :math:`10^{-9}`: a bound may only be loose, never cut a feasible assignment)."""
    if data.count is None:
        return np.ones(data.sites.size)
    row_of = np.repeat(np.arange(data.n_rows), np.diff(data.indptr))
    fits = np.floor(data.capacity[data.sites] / data.weight[row_of] * (1 + 1e-9))
    return np.minimum(data.count[row_of], fits)


def _add_assignment(m, data: CoveringModelData) -> None:
    """The capacitated LSCP's assignment variables ``z[k]`` of the pairs ``k`` (row r, site
    ``sites[k]``) and their constraints ``assign``, ``cap`` and ``link`` (module docstring):
    the shares of the row's demand (split), or the integer numbers of the row's points the site
    serves (single-sourcing, ``data.count``)."""
    nnz = int(data.sites.size)
    row_of = np.repeat(np.arange(data.n_rows), np.diff(data.indptr))
    m.K = pyo.RangeSet(0, nnz - 1)
    bound = assignment_bounds(data)
    single = data.count is not None
    c = data.count if single else np.ones(data.n_rows, dtype=np.int64)
    m.z = pyo.Var(m.K, within=pyo.NonNegativeIntegers if single else pyo.NonNegativeReals,
                  bounds=lambda m, k: (0.0, float(bound[k])),
                  doc="the number of the row's points (single-sourcing) or the share of its "
                      "demand (split) the site serves")

    def assign_rule(m, r):
        zs = [m.z[k] for k in range(int(data.indptr[r]), int(data.indptr[r + 1]))]
        return LinearExpression(constant=0.0, linear_coefs=[1.0] * len(zs),
                                linear_vars=zs) == float(c[r])

    m.assign = pyo.Constraint(m.R, rule=assign_rule, doc="every row's demand is served")
    order = np.argsort(data.sites, kind="stable")
    site_ptr = np.searchsorted(data.sites[order], np.arange(data.n_sites + 1))
    A = data.weight  # per unit of z: the row's summed demand (split), a point's (single)

    def cap_rule(m, j):
        ks = order[site_ptr[j]:site_ptr[j + 1]]
        coefs = [float(A[row_of[k]]) for k in ks] + [-float(data.capacity[j])]
        zs = [m.z[int(k)] for k in ks] + [m.x[j]]
        return LinearExpression(constant=0.0, linear_coefs=coefs, linear_vars=zs) <= 0.0

    m.cap = pyo.Constraint(m.J, rule=cap_rule, doc="an open site serves at most its capacity")

    def link_rule(m, k):
        return LinearExpression(constant=0.0, linear_coefs=[1.0, -float(bound[k])],
                                linear_vars=[m.z[k], m.x[int(data.sites[k])]]) <= 0.0

    m.link = pyo.Constraint(m.K, rule=link_rule, doc="only an open site serves")


def open_sites(instance) -> np.ndarray:
    """The open sites of a solved instance (sorted indices; values rounded at 0.5)."""
    x = np.fromiter((v.value if v.value is not None else 0.0 for v in instance.x.values()),
                    dtype=float, count=len(instance.x))
    return np.flatnonzero(x > 0.5).astype(np.int64)


def counts(instance) -> np.ndarray:
    """The single-sourcing capacitated LSCP's numbers ``n`` of a solved instance, per pair of its
    rows (rounded to integers, at least 0)."""
    z = np.fromiter((v.value if v.value is not None else 0.0 for v in instance.z.values()),
                    dtype=float, count=len(instance.z))
    return np.maximum(np.round(z), 0).astype(np.int64)


def shares(instance) -> np.ndarray:
    """The capacitated LSCP's shares ``z`` of a solved instance, per pair of its rows (clipped to
    [0, 1])."""
    z = np.fromiter((v.value if v.value is not None else 0.0 for v in instance.z.values()),
                    dtype=float, count=len(instance.z))
    return np.clip(z, 0.0, 1.0)
