"""Facility-location inputs: :func:`as_facility_data` validates a cost matrix (with ``p``, opening
costs, demands, capacities, coordinates) before anything is built; cost matrices from coordinates
(:func:`euclidean_costs`, optionally rounded) or a networkx graph (:func:`graph_costs`: shortest
paths); readers of OR-Library ``pmed`` files (:func:`read_orlib_pmed`: the graph's shortest-path
distances) and TSPLIB coordinate files
(:func:`read_tsplib`); and :func:`auto_fixed_costs` (the UFL opening cost ``aidopt facility``
uses for ``--fixed-costs auto``)."""

from __future__ import annotations

import copy
import math
import numbers
from pathlib import Path

import numpy as np

from aidopt.data.validate import _check_finite

__all__ = ['EuclideanCosts', 'FacilityData', 'GraphCosts', 'as_facility_data', 'bound_costs',
           'cost_matrix', 'euclidean_costs', 'graph_costs', 'read_orlib_cap',
           'read_orlib_pmed', 'read_tsplib', 'tsplib_costs']


class FacilityData:
    """Validated facility-location data (build it with :func:`as_facility_data`).

    Attributes
    ----------
    costs : ndarray (n_customers, n_sites)
        Assignment cost per unit of demand, finite and non-negative.
    demand : ndarray (n_customers,)
        Non-negative weights (a customer of weight 0 is assigned but costs nothing).
    fixed : ndarray (n_sites,) or None
        Opening costs (UFL); ``None`` for the p-median.
    p : int or None
        At most ``p`` open sites (p-median).
    capacity : ndarray (n_sites,) or None
        Capacities (CFL: direct solve only).
    customer_xy, site_xy : ndarray (., 2) or None
        Coordinates, when known: the initial clustering and the split use them, and the map plot.
    integral : bool
        Every cost, opening cost and demand is an integer, so every objective value is one and a
        bound can be rounded up.
    raw_costs, raw_fixed : ndarray or None
        The user's costs and opening costs when ``costs`` / ``fixed`` are their bounded form
        (:func:`bound_costs`: what the solvers see); ``None`` when they are the user's own.
        :meth:`objective` always prices the user's.
    """

    def __init__(self, costs, demand, fixed=None, p=None, capacity=None, customer_xy=None,
                 site_xy=None, name: str = "facility", raw_costs=None, raw_fixed=None):
        self.costs = costs
        self.demand = demand
        self.fixed = fixed
        self.p = p
        self.capacity = capacity
        self.customer_xy = customer_xy
        self.site_xy = site_xy
        self.name = name
        self.raw_costs = raw_costs
        self.raw_fixed = raw_fixed
        values = [demand] + [a for a in (fixed,) if a is not None]
        integral_costs = costs.integral if not self.dense else np.array_equal(costs, np.round(costs))
        self.integral = bool(integral_costs and all(np.array_equal(a, np.round(a)) for a in values))

    @property
    def dense(self) -> bool:
        """The costs are a matrix (else an oracle computing them: :class:`EuclideanCosts`,
        :class:`GraphCosts`)."""
        return isinstance(self.costs, np.ndarray)

    def cost_columns(self, sites) -> np.ndarray:
        """``costs[:, sites]`` (n_customers x len(sites))."""
        sites = np.asarray(sites, dtype=np.int64)
        return self.costs[:, sites] if self.dense else self.costs.columns(sites)

    def cost_rows(self, customers) -> np.ndarray:
        """``costs[customers]`` (len(customers) x n_sites)."""
        customers = np.asarray(customers, dtype=np.int64)
        return self.costs[customers] if self.dense else self.costs.rows(customers)

    def cost_pairs(self, customers, sites) -> np.ndarray:
        """``costs[customers, sites]`` element by element."""
        customers = np.asarray(customers, dtype=np.int64)
        sites = np.asarray(sites, dtype=np.int64)
        return self.costs[customers, sites] if self.dense else self.costs.pairs(customers, sites)

    def cost_row_extremes(self) -> tuple[np.ndarray, np.ndarray]:
        """Each customer's cheapest and dearest cost (computed once, kept)."""
        cached = getattr(self, "_row_extremes", None)
        if cached is None:
            if self.dense:
                cached = (self.costs.min(axis=1), self.costs.max(axis=1))
            else:
                cached = self.costs.row_extremes()
            self._row_extremes = cached
        return cached

    def cost_row_minima(self) -> np.ndarray:
        """Each customer's cheapest cost (kept): from the oracle's nearest site where it has
        one (a k-d tree for coordinates: no pass over every pair), lowered by a relative
        1e-12 there since the oracle's nearest may differ from the true one in the last bit."""
        cached = getattr(self, "_row_minima", None)
        if cached is None:
            if self.dense or not hasattr(self.costs, "nearest"):
                cached = self.cost_row_extremes()[0]
            else:
                nearest = self.costs.nearest(np.arange(self.n_customers), 1)[1][:, 0]
                cached = nearest * (1.0 - 1e-12)
            self._row_minima = cached
        return cached

    def with_sites(self, sites) -> FacilityData:
        """The same customers with only ``sites`` (indices into this data's sites) as
        candidate sites."""
        sites = np.asarray(sites, dtype=np.int64)
        costs = self.costs[:, sites] if self.dense else self.costs.with_sites(sites)

        def some(a):
            return None if a is None else a[..., sites]

        return FacilityData(costs, self.demand, some(self.fixed), self.p, some(self.capacity),
                            self.customer_xy,
                            None if self.site_xy is None else self.site_xy[sites], self.name,
                            raw_costs=some(self.raw_costs), raw_fixed=some(self.raw_fixed))

    @property
    def n_customers(self) -> int:
        return int(self.costs.shape[0])

    @property
    def n_sites(self) -> int:
        return int(self.costs.shape[1])

    @property
    def kind(self) -> str:
        if self.capacity is not None:
            return "cfl"
        return "p-median" if self.fixed is None else ("ufl" if self.p is None else "p-median+f")

    def objective(self, open_sites, assign) -> float:
        """Cost of opening ``open_sites`` and serving customer i at ``assign[i]``, at the user's
        costs (also where the solvers see bounded ones: :func:`bound_costs`)."""
        customers = np.arange(self.n_customers)
        assign = np.asarray(assign, dtype=np.int64)
        pairs = (self.raw_costs[customers, assign] if self.raw_costs is not None
                 else self.cost_pairs(customers, assign))
        total = float(np.dot(self.demand, pairs))
        fixed = self.raw_fixed if self.raw_fixed is not None else self.fixed
        if fixed is not None:
            total += float(fixed[np.asarray(open_sites, dtype=np.int64)].sum())
        return total


#: the largest cost accepted: HiGHS's default ``large_matrix_value`` (its LPs hold the costs)
MAX_COST = 1e15


def _vector(values, name, size, *, positive=False):
    if values is None:
        return None
    arr = np.asarray(values, dtype=float)
    if arr.ndim > 1 and sorted(arr.shape)[-2] > 1:  # a row or column vector reads as a vector
        raise ValueError(f"{name} must be a vector of {size} entries, got shape {arr.shape}")
    arr = arr.reshape(-1)
    if arr.size != size:
        raise ValueError(f"{name} must have {size} entries, got {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    _check_finite(arr, name)  # magnitudes the solvers read as infinite
    if positive and np.any(arr <= 0):
        raise ValueError(f"{name} must be positive")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative, got a minimum of {arr.min():g}")
    return np.ascontiguousarray(arr)


def _coords(xy, name, size):
    if xy is None:
        return None
    arr = np.asarray(xy, dtype=float)
    if arr.ndim != 2 or arr.shape[0] != size or arr.shape[1] != 2:
        raise ValueError(f"{name} must have shape ({size}, 2), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return np.ascontiguousarray(arr)


def as_facility_data(costs, *, p=None, fixed_costs=None, demand=None, capacity=None,
                     customer_xy=None, site_xy=None, name: str = "facility") -> FacilityData:
    """Check the inputs of a facility-location problem; every error is raised here, before any
    model is built.

    Raises
    ------
    ValueError
        Costs not a 2-d numeric array, NaN or infinite or negative entries; neither ``p`` nor
        ``fixed_costs``; ``p`` not an integer in ``1..n_sites``; vectors of the wrong length or
        with negative / non-finite entries; total demand 0; capacities below total demand.
    """
    arr = cost_matrix(costs)
    return _checked(arr, arr.shape, p, fixed_costs, demand, capacity, customer_xy, site_xy, name)


def cost_matrix(costs):
    """``costs`` checked: an oracle (:class:`EuclideanCosts`, :class:`GraphCosts`) as it is (it
    validated its own input), else a finite non-negative 2-d float array below
    :data:`MAX_COST` (a sparse matrix is made dense).

    Raises
    ------
    ValueError
        Not a non-empty 2-d numeric array; NaN, infinite, negative or too large entries.
    """
    if isinstance(costs, (EuclideanCosts, GraphCosts)):  # oracles validate their own input
        return costs
    if hasattr(costs, "toarray"):
        costs = costs.toarray()
    arr = np.asarray(costs)
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise ValueError(f"costs must be a numeric array, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"costs must be a non-empty n_customers x n_sites array, got shape {arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=float)
    bad = ~np.isfinite(arr)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(f"costs contain {int(bad.sum())} NaN or infinite value(s) (first at "
                         f"customer {i}, site {j})")
    _check_finite(arr, "costs")  # magnitudes the solvers read as infinite
    if arr.min() < 0:
        i, j = (int(v) for v in np.unravel_index(int(arr.argmin()), arr.shape))
        raise ValueError(f"costs must be non-negative; costs[{i}, {j}] = {arr[i, j]:g}")
    if arr.max() >= MAX_COST:
        i, j = (int(v) for v in np.unravel_index(int(arr.argmax()), arr.shape))
        raise ValueError(f"costs must be below {MAX_COST:g} (HiGHS refuses LP coefficients from "
                         f"1e15 on); costs[{i}, {j}] = {arr[i, j]:g}: rescale, or leave forbidden "
                         "pairs at a cost a few times the largest real one")
    return arr


def _checked(costs, shape, p, fixed_costs, demand, capacity, customer_xy, site_xy, name):
    """The checks of every input but the costs (:func:`as_facility_data`)."""
    n, s = shape
    if p is None and fixed_costs is None:
        raise ValueError("give p (p-median: at most p sites open) or fixed_costs (uncapacitated "
                         "facility location), or both")
    if p is not None:
        if not (isinstance(p, numbers.Integral) and not isinstance(p, bool)):
            if isinstance(p, float) and p.is_integer():
                p = int(p)
            else:
                raise ValueError(f"p must be an integer, got {p!r}")
        if not 1 <= p <= s:
            raise ValueError(f"p must be between 1 and the number of sites ({s}), got {p}")
        p = int(p)
    fixed = _vector(fixed_costs, "fixed_costs", s)
    w = np.ones(n) if demand is None else _vector(demand, "demand", n)
    if w.sum() <= 0:
        raise ValueError("total demand is 0: nothing to serve")
    cap = _vector(capacity, "capacity", s, positive=True)
    if cap is not None and cap.sum() < w.sum():
        raise ValueError(f"total capacity {cap.sum():g} is below total demand {w.sum():g}: infeasible")
    if cap is not None and p is not None and np.sort(cap)[-p:].sum() < w.sum():
        raise ValueError(f"the {p} largest capacities add up to {np.sort(cap)[-p:].sum():g}, below "
                         f"total demand {w.sum():g}: no {p} sites can serve it (infeasible)")
    return FacilityData(costs, w, fixed, p, cap, _coords(customer_xy, "customer_xy", n),
                        _coords(site_xy, "site_xy", s), name=name)


def bound_costs(data: FacilityData, upper: float) -> FacilityData:
    r"""The same problem with costs the solvers can hold: every cost that no solution as cheap as
    ``upper`` can pay is lowered to a bounded value (the pair stays, priced so that using it
    costs more than ``upper``), and so is every opening cost no such solution can pay.

    With :math:`a_i = w_i \min_j c_{ij}`, :math:`A = \sum_i a_i` and :math:`f_{\min}` the
    cheapest opening cost (0 without opening costs), any solution that serves customer i at site
    j costs at least :math:`w_i c_{ij} + A - a_i + f_{\min}`, and any that opens j at least
    :math:`f_j + A`. Take :math:`M_i = (\tfrac32 U - A + a_i - f_{\min}) / w_i` and
    :math:`M_f = \tfrac32 U - A` for an upper bound U; a cost :math:`c > M` becomes
    :math:`M (2 - M / c)` (rounded down when every cost is an integer): lower than c (so every
    bound of the new problem bounds the original), increasing in c (so the cheapest open site
    stays the cheapest) and at least M (so every solution that uses such a pair or site costs at
    least :math:`\tfrac32 U`, and none within half of U of the optimum does). The two problems
    therefore have the same optimal solutions and value. Customers of zero demand (whose costs
    count for nothing) are bounded by the largest :math:`M_i`. With capacities a customer's
    demand may be split, so a lowered pair can carry a small share of it: the new problem is
    still a relaxation, and a solution that uses no lowered pair or site is priced the same in
    both (:func:`aidopt.solve_facility_location` checks this and restores any it uses).

    Parameters
    ----------
    data : FacilityData
        With a cost matrix.
    upper : float
        The cost of a feasible solution (at the user's costs).

    Returns
    -------
    FacilityData
        ``data`` itself when nothing is lowered (or ``upper`` is 0); else a copy whose
        ``raw_costs`` / ``raw_fixed`` keep the user's values (:meth:`FacilityData.objective`
        prices them) and ``bounded`` counts the lowered pairs and opening costs.
    """
    if not data.dense:
        raise ValueError("bound_costs needs a cost matrix")
    if not (math.isfinite(upper) and upper > 0):
        return data
    w = data.demand
    a = w * data.cost_row_extremes()[0]
    f_min = 0.0 if data.fixed is None else float(data.fixed.min())
    slack = 1.5 * upper - float(a.sum()) - f_min
    served = w > 0
    M = np.empty(data.n_customers)
    M[served] = (slack + a[served]) / w[served]
    M[~served] = M[served].max() if served.any() else upper
    M_f = 1.5 * upper - float(a.sum())
    if data.integral:
        M, M_f = np.ceil(M), math.ceil(M_f)

    def lowered(c, m):
        out = m * (2.0 - m / c)
        return np.floor(out) if data.integral else out

    over = data.costs > M[:, None]
    fixed_over = None if data.fixed is None else data.fixed > M_f
    n_fixed = 0 if fixed_over is None else int(fixed_over.sum())
    if not over.any() and n_fixed == 0:
        return data
    costs = data.costs.copy()
    rows, cols = np.nonzero(over)
    costs[rows, cols] = lowered(data.costs[rows, cols], M[rows])
    fixed = data.fixed
    if n_fixed:
        fixed = data.fixed.copy()
        fixed[fixed_over] = lowered(data.fixed[fixed_over], M_f)
    out = FacilityData(costs, data.demand, fixed, data.p, data.capacity, data.customer_xy,
                       data.site_xy, data.name, raw_costs=data.costs, raw_fixed=data.fixed)
    out.bounded = {"pairs": int(rows.size), "opening costs": n_fixed}
    return out


# --------------------------------------------------------------------------- cost helpers
#: how :func:`euclidean_costs` makes distances discrete (at ``round_to`` decimals)
ROUNDINGS = ("nint", "floor", "ceil")


def euclidean_costs(customers, sites=None, *, metric: str = "euclidean", round_to: int | None = None,
                    rounding: str = "nint"):
    """Cost matrix from coordinates: ``customers`` (n, d), ``sites`` (s, d) (default: the
    customers). ``metric`` is any :func:`scipy.spatial.distance.cdist` metric.

    ``round_to`` (None: exact distances) makes costs discrete at that many decimals, by
    ``rounding``: ``"nint"`` (nearest, halves up: TSPLIB's EUC_2D convention with
    ``round_to=0``), ``"floor"`` (truncation: the convention under which the exact p-median
    papers' optima on TSPLIB sets are reproduced) or ``"ceil"`` (TSPLIB's CEIL_2D)."""
    if rounding not in ROUNDINGS:
        raise ValueError(f"rounding must be one of {ROUNDINGS}, got {rounding!r}")
    from scipy.spatial.distance import cdist

    a = np.asarray(customers, dtype=float)
    b = a if sites is None else np.asarray(sites, dtype=float)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"coordinates must be 2-d arrays with the same number of columns, got "
                         f"{a.shape} and {b.shape}")
    for arr, label in ((a, "customers"), (b, "sites")):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{label} coordinates contain NaN or infinite values")
    _check_round_to(round_to)
    d = cdist(a, b, metric=metric)
    return d if round_to is None else _discrete(d, round_to, rounding)


def _check_round_to(round_to) -> None:
    if round_to is not None and not (isinstance(round_to, numbers.Integral)
                                     and not isinstance(round_to, bool)):
        raise ValueError(f"round_to must be an integer number of decimals or None, got {round_to!r}")


def _discrete(d: np.ndarray, round_to: int, rounding: str) -> np.ndarray:
    """``d`` made discrete at ``round_to`` decimals by ``rounding`` (in place)."""
    scale = 10.0 ** round_to
    d *= scale
    if rounding == "nint":
        d += 0.5
        np.floor(d, out=d)
    elif rounding == "floor":
        np.floor(d, out=d)
    else:
        np.ceil(d, out=d)
    d /= scale
    return d


class EuclideanCosts:
    """Euclidean costs computed from coordinates when needed, never held as a matrix: pass it as
    ``costs`` to :func:`~aidopt.api.facility.solve_facility_location` (``solver="benders"``)
    for instances whose n x s matrix does not fit in memory.

    Parameters
    ----------
    customer_xy : array-like (n, d)
    site_xy : array-like (s, d), optional
        Default: the customers (every customer a candidate site).
    round_to : int, optional
        Decimals the costs are made discrete at (None: exact distances), by ``rounding``:
        ``"nint"``, ``"floor"`` or ``"ceil"`` as in :func:`euclidean_costs`, which makes the
        same numbers as a matrix.
    block : int
        Rows computed at a time (bounds the temporary memory: ``block x s`` floats).

    Each customer's nearest sites come from a k-d tree (:meth:`nearest`); the rest (columns of
    open sites, single pairs, each customer's extremes) from distances computed block by block.
    """

    def __init__(self, customer_xy, site_xy=None, *, round_to: int | None = None,
                 rounding: str = "nint", block: int = 512):
        if rounding not in ROUNDINGS:
            raise ValueError(f"rounding must be one of {ROUNDINGS}, got {rounding!r}")
        a = np.ascontiguousarray(customer_xy, dtype=float)
        b = a if site_xy is None else np.ascontiguousarray(site_xy, dtype=float)
        if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1] or not len(a) or not len(b):
            raise ValueError(f"coordinates must be non-empty 2-d arrays with the same number of "
                             f"columns, got {a.shape} and {b.shape}")
        for arr, label in ((a, "customer_xy"), (b, "site_xy")):
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{label} contains NaN or infinite values")
        # every distance is at most the diagonal of the points' bounding box: the same bound
        # on costs as a matrix gets (computed on halves, so that it cannot overflow)
        both = np.concatenate([a, b]) / 2.0
        diagonal = 2.0 * float(np.hypot.reduce(both.max(axis=0) - both.min(axis=0)))
        if not diagonal < MAX_COST:
            raise ValueError(f"coordinates span {diagonal:.3g}: distances must stay below "
                             f"{MAX_COST:g} (the largest cost accepted); rescale them")
        _check_round_to(round_to)
        if not (isinstance(block, numbers.Integral) and block >= 1):
            raise ValueError(f"block must be a positive integer, got {block!r}")
        self.customer_xy, self.site_xy = a, b
        self.round_to, self.rounding, self.block = round_to, rounding, int(block)
        self._tree = None

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.customer_xy), len(self.site_xy))

    @property
    def integral(self) -> bool:
        """Every cost is an integer (rounded at 0 decimals or fewer)."""
        return self.round_to is not None and self.round_to <= 0

    def _finish(self, d: np.ndarray) -> np.ndarray:
        return d if self.round_to is None else _discrete(d, self.round_to, self.rounding)

    def _between(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Distances of broadcast coordinate arrays, one formula for every method (so the
        nearest sites, columns and pairs agree to the last bit)."""
        diff = a - b
        return self._finish(np.sqrt((diff * diff).sum(axis=-1)))

    def columns(self, sites) -> np.ndarray:
        sites = np.asarray(sites, dtype=np.int64)
        return self._between(self.customer_xy[:, None, :], self.site_xy[sites][None, :, :])

    def rows(self, customers) -> np.ndarray:
        customers = np.asarray(customers, dtype=np.int64)
        return self._between(self.customer_xy[customers][:, None, :], self.site_xy[None, :, :])

    def pairs(self, customers, sites) -> np.ndarray:
        return self._between(self.customer_xy[np.asarray(customers, dtype=np.int64)],
                             self.site_xy[np.asarray(sites, dtype=np.int64)])

    def with_sites(self, sites) -> EuclideanCosts:
        """The same customers with only ``sites`` (indices) as sites."""
        return EuclideanCosts(self.customer_xy, self.site_xy[np.asarray(sites, dtype=np.int64)],
                              round_to=self.round_to, rounding=self.rounding, block=self.block)

    def row_extremes(self) -> tuple[np.ndarray, np.ndarray]:
        """Each customer's cheapest and dearest cost, without a pass over every pair: the
        cheapest from the k-d tree (:meth:`nearest`), the dearest among the vertices of the
        sites' convex hull (a distance is convex, so its maximum over the sites is at a vertex).
        Both are widened by a relative 1e-12 (the minimum down, the maximum up) since another
        site may differ from them in the last bit: they serve as bounds."""
        from scipy.spatial import ConvexHull, QhullError

        n = self.shape[0]
        lo = self.nearest(np.arange(n), 1)[1][:, 0] * (1.0 - 1e-12)
        try:
            far = ConvexHull(self.site_xy).vertices if len(self.site_xy) > self.site_xy.shape[1] + 1 \
                else np.arange(len(self.site_xy))
        except QhullError:  # collinear or repeated sites: every site is a candidate
            far = np.arange(len(self.site_xy))
        hi = np.empty(n)
        step = max(1, (self.block * 256) // max(1, far.size))
        for start in range(0, n, step):
            rows = np.arange(start, min(n, start + step))
            hi[rows] = self._between(self.customer_xy[rows][:, None, :],
                                     self.site_xy[far][None, :, :]).max(axis=1)
        return lo, hi * (1.0 + 1e-12)

    def nearest(self, customers, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(order, costs)``: each customer's ``k`` cheapest sites in non-decreasing cost
        (int32 and float64 arrays of shape (len(customers), k))."""
        from scipy.spatial import cKDTree

        if self._tree is None:
            self._tree = cKDTree(self.site_xy)
        customers = np.asarray(customers, dtype=np.int64)
        k = int(min(k, self.shape[1]))
        order = np.empty((customers.size, k), dtype=np.int32)
        costs = np.empty((customers.size, k))
        step = max(1, (self.block * 256) // max(k, 1))
        for start in range(0, customers.size, step):
            rows = customers[start:start + step]
            idx = self._tree.query(self.customer_xy[rows], k=k)[1].reshape(len(rows), k)
            # the tree's distances may differ from ours in the last bit: recompute and re-sort
            d = self._between(self.customer_xy[rows][:, None, :], self.site_xy[idx])
            resort = np.argsort(d, axis=1, kind="stable")
            order[start:start + len(rows)] = np.take_along_axis(idx, resort, axis=1)
            costs[start:start + len(rows)] = np.take_along_axis(d, resort, axis=1)
        return order, costs


def _graph_matrix(graph, customers, sites, weight):
    """The graph's sparse adjacency (zero lengths kept as 1e-300), its node positions and the
    customers' and sites' positions, after the checks every graph input gets."""
    import networkx as nx

    nodes = list(graph.nodes)
    if not nodes:
        raise ValueError("the graph has no nodes")
    position = {v: k for k, v in enumerate(nodes)}
    cust = nodes if customers is None else list(customers)
    site = nodes if sites is None else list(sites)
    missing = [v for v in (*cust, *site) if v not in position]
    if missing:
        raise ValueError(f"node(s) {missing[:5]} are not in the graph")
    integral = True
    for u, v, data in graph.edges(data=True):
        w = data.get(weight, 1.0)
        if not (isinstance(w, numbers.Real) and math.isfinite(w) and w >= 0):
            raise ValueError(f"edge ({u}, {v}) has {weight}={w!r}: shortest paths need finite "
                             "non-negative weights")
        integral = integral and float(w) == round(float(w))
    g = graph.copy()
    for _, _, data in g.edges(data=True):  # a zero-length edge would vanish from a sparse matrix
        data[weight] = float(data.get(weight, 1.0)) or 1e-300
    A = nx.to_scipy_sparse_array(g, nodelist=nodes, weight=weight, format="csr")
    ci = np.array([position[v] for v in cust], dtype=np.int64)
    sj = np.array([position[v] for v in site], dtype=np.int64)
    return A, cust, site, ci, sj, integral


def _check_reached(d, cust, site, rows, cols):
    if not np.all(np.isfinite(d)):
        r, k = (int(v) for v in np.argwhere(~np.isfinite(d))[0])
        raise ValueError(f"the graph is disconnected: customer {cust[rows[r]]!r} cannot reach "
                         f"site {site[cols[k]]!r}")


def graph_costs(graph, customers=None, sites=None, *, weight: str = "weight", method: str = "scipy"):
    """All-pairs shortest-path costs of a networkx graph (customers x sites, default all nodes
    for both, in ``graph.nodes`` order).

    ``method="scipy"`` (default) runs :func:`scipy.sparse.csgraph.shortest_path` (Dijkstra from
    each customer) on the graph's sparse adjacency matrix; ``"networkx"`` runs networkx's own
    Dijkstra (same numbers, slower: docs/benchmarks/facility.md). An edge without ``weight`` costs
    1; a negative weight is an error; a customer that cannot reach some site is an error (the
    graph is disconnected there). :class:`GraphCosts` computes the same costs when needed
    instead of as a matrix.
    """
    import networkx as nx

    A, cust, site, ci, sj, _ = _graph_matrix(graph, customers, sites, weight)
    if method == "networkx":
        d = np.full((len(cust), len(site)), np.inf)
        for r, v in enumerate(cust):
            lengths = nx.single_source_dijkstra_path_length(graph, v, weight=weight)
            for k, u in enumerate(site):
                d[r, k] = lengths.get(u, np.inf)
    elif method == "scipy":
        from scipy.sparse.csgraph import shortest_path

        d = shortest_path(A, method="D", directed=graph.is_directed(), indices=ci)[:, sj]
        d[d < 1e-200] = 0.0
    else:
        raise ValueError(f"method must be 'scipy' or 'networkx', got {method!r}")
    _check_reached(d, cust, site, np.arange(len(cust)), np.arange(len(site)))
    return d


class GraphCosts:
    """Shortest-path costs on a networkx graph computed when needed (Dijkstra from the
    customers or sites asked for, ``block`` sources at a time), never held as a matrix: the
    graph counterpart of :class:`EuclideanCosts` for ``solver="benders"``. Same conventions as
    :func:`graph_costs` (customers and sites default to every node; an edge without ``weight``
    costs 1; negative weights and unreachable sites are errors, the latter when met).

    A customer's row comes from a Dijkstra from it, a site's column from a Dijkstra from the site
    (on the reversed graph when directed); with non-integer weights the two may differ in the
    last bit (sums in another order), so a bound and an objective can differ by that much.
    """

    def __init__(self, graph, customers=None, sites=None, *, weight: str = "weight",
                 block: int = 256):
        if not (isinstance(block, numbers.Integral) and block >= 1):
            raise ValueError(f"block must be a positive integer, got {block!r}")
        self.A, self._cust, self._site, self.ci, self.sj, self._integral = _graph_matrix(
            graph, customers, sites, weight)
        self.directed = bool(graph.is_directed())
        self.AT = self.A.T.tocsr() if self.directed else self.A
        self.block = int(block)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.ci.size, self.sj.size)

    @property
    def integral(self) -> bool:
        """Every edge length is an integer (so is every cost)."""
        return self._integral

    def _dijkstra(self, sources, reverse: bool = False, limit: float = np.inf) -> np.ndarray:
        """Shortest-path lengths from ``sources`` to every node; beyond ``limit`` they are not
        computed (``inf``), which stops each search early."""
        from scipy.sparse.csgraph import dijkstra

        d = dijkstra(self.AT if reverse else self.A, directed=self.directed, indices=sources,
                     limit=limit)
        d[d < 1e-200] = 0.0
        return d

    def rows(self, customers) -> np.ndarray:
        customers = np.asarray(customers, dtype=np.int64)
        out = np.empty((customers.size, self.sj.size))
        for start in range(0, customers.size, self.block):
            part = customers[start:start + self.block]
            out[start:start + part.size] = self._dijkstra(self.ci[part])[:, self.sj]
        _check_reached(out, self._cust, self._site, customers, np.arange(self.sj.size))
        return out

    def columns(self, sites) -> np.ndarray:
        sites = np.asarray(sites, dtype=np.int64)
        out = np.empty((self.ci.size, sites.size))
        for start in range(0, sites.size, self.block):
            part = sites[start:start + self.block]
            out[:, start:start + part.size] = self._dijkstra(self.sj[part], reverse=True)[:, self.ci].T
        _check_reached(out, self._cust, self._site, np.arange(self.ci.size), sites)
        return out

    def pairs(self, customers, sites) -> np.ndarray:
        """Costs of broadcast (customer, site) index arrays, through the columns of the sites
        or the rows of the customers, whichever are fewer."""
        c, s = np.broadcast_arrays(np.asarray(customers, dtype=np.int64),
                                   np.asarray(sites, dtype=np.int64))
        uc, us = np.unique(c), np.unique(s)
        if us.size <= uc.size:
            return self.columns(us)[c, np.searchsorted(us, s)]
        return self.rows(uc)[np.searchsorted(uc, c), s]

    def row_extremes(self) -> tuple[np.ndarray, np.ndarray]:
        """Each customer's cheapest and dearest cost, ``block`` customers at a time."""
        n = self.ci.size
        lo, hi = np.empty(n), np.empty(n)
        for start in range(0, n, self.block):
            d = self.rows(np.arange(start, min(n, start + self.block)))
            lo[start:start + len(d)], hi[start:start + len(d)] = d.min(axis=1), d.max(axis=1)
        return lo, hi

    def nearest(self, customers, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(order, costs)``: each customer's ``k`` cheapest sites in non-decreasing cost
        (ties by site index), ``block`` customers at a time.

        After the first block every search stops at a distance limit, the largest k-th cost
        seen so far; a customer with fewer than ``k`` sites within it gets a full search. Every
        site at or below a customer's k-th cost lies within the limit, so the result (ties
        included) is that of full rows."""
        customers = np.asarray(customers, dtype=np.int64)
        k = int(min(k, self.sj.size))
        order = np.empty((customers.size, k), dtype=np.int32)
        costs = np.empty((customers.size, k))
        limit = np.inf
        for start in range(0, customers.size, self.block):
            part = customers[start:start + self.block]
            d = self._dijkstra(self.ci[part], limit=limit)[:, self.sj]
            short = np.count_nonzero(np.isfinite(d), axis=1) < k
            if short.any():
                d[short] = self.rows(part[short])
            idx = np.argsort(d, axis=1, kind="stable")[:, :k]
            order[start:start + len(d)] = idx
            costs[start:start + len(d)] = np.take_along_axis(d, idx, axis=1)
            if k:
                kth = float(costs[start:start + len(d), -1].max())
                limit = kth if np.isinf(limit) else max(limit, kth)
        return order, costs

    def with_sites(self, sites) -> GraphCosts:
        """The same customers with only ``sites`` (indices) as sites (the graph is shared)."""
        out = copy.copy(self)
        out.sj = self.sj[np.asarray(sites, dtype=np.int64)]
        out._site = [self._site[int(j)] for j in np.asarray(sites, dtype=np.int64)]
        return out


def read_orlib_pmed(path, *, method: str = "scipy"):
    """Read an OR-Library p-median file: ``(costs, p)``.

    Format: ``n_vertices n_edges p``, then one undirected edge ``i j cost`` per line (1-based).
    **A repeated edge: the last occurrence's cost wins** (OR-Library's convention; taking the
    minimum gives pmed1 a wrong optimum). Costs are all-pairs shortest-path lengths.
    """
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import shortest_path

    if method not in ("scipy", "networkx"):
        raise ValueError(f"method must be 'scipy' or 'networkx', got {method!r}")
    tokens = Path(path).read_text().split()
    if len(tokens) < 3:
        raise ValueError(f"{path}: not an OR-Library p-median file (no header)")
    try:
        n, m, p = (int(t) for t in tokens[:3])
        body = np.array(tokens[3:3 + 3 * m], dtype=float).reshape(-1, 3)
    except ValueError as exc:
        raise ValueError(f"{path}: not an OR-Library p-median file ({exc})") from None
    if n < 1 or m < 0:
        raise ValueError(f"{path}: the header needs n >= 1 vertices and m >= 0 edges, got {n}, {m}")
    if body.shape[0] != m:
        raise ValueError(f"{path}: header says {m} edges, found {body.shape[0]}")
    if m == 0 and n > 1:
        raise ValueError(f"{path}: no edges: the graph's {n} vertices cannot reach each other")
    i = body[:, 0].astype(np.int64) - 1
    j = body[:, 1].astype(np.int64) - 1
    if i.min() < 0 or j.min() < 0 or max(i.max(), j.max()) >= n:
        raise ValueError(f"{path}: vertex numbers must be in 1..{n}")
    if np.any(body[:, 2] < 0):
        raise ValueError(f"{path}: negative edge cost")
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    last = {}
    for a, b, c in zip(lo.tolist(), hi.tolist(), body[:, 2].tolist(), strict=True):
        last[(a, b)] = c  # the last occurrence wins
    keys = np.array(list(last.keys()), dtype=np.int64).reshape(-1, 2)
    vals = np.array(list(last.values()), dtype=float)
    if method == "networkx":
        import networkx as nx

        g = nx.Graph()
        g.add_nodes_from(range(n))
        g.add_weighted_edges_from((int(a), int(b), float(c)) for (a, b), c in zip(keys, vals, strict=True))
        return graph_costs(g, method="networkx"), p
    off_diagonal = keys[:, 0] != keys[:, 1]
    keys, vals = keys[off_diagonal], vals[off_diagonal]
    zero = vals == 0
    vals = np.where(zero, 1e-300, vals)  # explicit zero-length edges survive the sparse format
    A = csr_array((vals, (keys[:, 0], keys[:, 1])), shape=(n, n))
    d = shortest_path(A, method="D", directed=False)
    d[d < 1e-200] = 0.0
    if not np.all(np.isfinite(d)):
        r, k = (int(v) for v in np.argwhere(~np.isfinite(d))[0])
        raise ValueError(f"{path}: the graph is disconnected (vertex {r + 1} cannot reach {k + 1})")
    return d, p


def read_tsplib(path):
    """Coordinates of a TSPLIB file with ``NODE_COORD_SECTION`` (EUC_2D, CEIL_2D, GEO, ATT):
    ``(xy, edge_weight_type)``. Use :func:`euclidean_costs` (``round_to=0`` for TSPLIB's
    nearest-integer EUC_2D convention) to make costs."""
    text = Path(path).read_text(errors="replace").splitlines()
    header, coords, in_coords = {}, [], False
    for line in text:
        s = line.strip()
        if not s:
            continue
        if s.upper().startswith("NODE_COORD_SECTION"):
            in_coords = True
            continue
        if in_coords:
            if s.upper().startswith("EOF") or not (s[0].isdigit() or s[0] in "+-."):
                in_coords = False
                if s.upper().startswith("EOF"):
                    break
                continue
            parts = s.split()
            try:
                coords.append([float(parts[1]), float(parts[2])])
            except (IndexError, ValueError):
                raise ValueError(f"{path}: a NODE_COORD_SECTION line needs 'index x y', got "
                                 f"{s!r}") from None
        elif ":" in s:
            key, value = s.split(":", 1)
            header[key.strip().upper()] = value.strip()
    if not coords:
        raise ValueError(f"{path}: no NODE_COORD_SECTION (only coordinate TSPLIB files are supported)")
    dim = int(header.get("DIMENSION", len(coords)))
    if dim != len(coords):
        raise ValueError(f"{path}: DIMENSION {dim} but {len(coords)} coordinates")
    return np.asarray(coords, dtype=float), header.get("EDGE_WEIGHT_TYPE", "EUC_2D")


#: EDGE_WEIGHT_FORMATs of TSPLIB's EXPLICIT files read by :func:`tsplib_costs`: the order in
#: which a symmetric matrix's entries are listed (``*_COL`` lists the transpose's ``*_ROW``)
_EXPLICIT_FORMATS = ("FULL_MATRIX", "UPPER_ROW", "LOWER_ROW", "UPPER_DIAG_ROW", "LOWER_DIAG_ROW",
                     "UPPER_COL", "LOWER_COL", "UPPER_DIAG_COL", "LOWER_DIAG_COL")


def _tsplib_sections(path):
    """``(header, coordinates, explicit weights)`` of a TSPLIB file (the latter two may be empty)."""
    header, coords, weights, section = {}, [], [], None
    for line in Path(path).read_text(errors="replace").splitlines():
        s = line.strip()
        if not s:
            continue
        upper = s.upper()
        if upper.startswith("EOF"):
            break
        if upper.startswith(("NODE_COORD_SECTION", "EDGE_WEIGHT_SECTION", "DISPLAY_DATA_SECTION",
                             "DEPOT_SECTION", "DEMAND_SECTION", "FIXED_EDGES_SECTION")):
            section = upper.split()[0].rstrip(":")
            continue
        if section is not None and (s[0].isdigit() or s[0] in "+-."):
            if section == "NODE_COORD_SECTION":
                parts = s.split()
                coords.append([float(parts[1]), float(parts[2])])
            elif section == "EDGE_WEIGHT_SECTION":
                weights.extend(float(v) for v in s.split())
            continue
        if ":" in s:
            section = None
            key, value = s.split(":", 1)
            header[key.strip().upper()] = value.strip()
    return header, np.asarray(coords, dtype=float).reshape(-1, 2), np.asarray(weights)


def _explicit_matrix(weights, n, fmt, path):
    """The full symmetric matrix of an EXPLICIT TSPLIB file's listed entries."""
    transpose = {"UPPER_COL": "LOWER_ROW", "LOWER_COL": "UPPER_ROW",
                 "UPPER_DIAG_COL": "LOWER_DIAG_ROW", "LOWER_DIAG_COL": "UPPER_DIAG_ROW"}
    fmt = transpose.get(fmt, fmt)
    if fmt == "FULL_MATRIX":
        expected = n * n
    elif fmt in ("UPPER_ROW", "LOWER_ROW"):
        expected = n * (n - 1) // 2
    else:
        expected = n * (n + 1) // 2
    if weights.size != expected:
        raise ValueError(f"{path}: EDGE_WEIGHT_FORMAT {fmt} with DIMENSION {n} needs {expected} "
                         f"weights, found {weights.size}")
    if fmt == "FULL_MATRIX":
        return weights.reshape(n, n).copy()
    out = np.zeros((n, n))
    diag = fmt.endswith("DIAG_ROW")
    if fmt.startswith("UPPER"):
        rows, cols = np.triu_indices(n, 0 if diag else 1)
    else:
        rows, cols = np.tril_indices(n, 0 if diag else -1)
    out[rows, cols] = weights
    out[cols, rows] = weights
    return out


def tsplib_costs(path, *, rounding: str | None = None) -> np.ndarray:
    """The n x n cost matrix of a TSPLIB file by its ``EDGE_WEIGHT_TYPE`` (TSPLIB 95, §2):

    * ``EUC_2D``: Euclidean distance rounded to the nearest integer (``rounding`` ``"floor"``,
      ``"ceil"`` or ``"exact"`` overrides it: the exact p-median papers truncate);
    * ``CEIL_2D``: rounded up; ``ATT``: the pseudo-Euclidean distance
      ``r = sqrt((dx^2 + dy^2) / 10)``, ``t = nint(r)``, ``t + 1`` when ``t < r``;
    * ``GEO``: coordinates as DDD.MM (degrees, minutes) on a sphere of radius 6378.388 km,
      ``int(RRR acos(...) + 1)`` as TSPLIB defines it, with pi = 3.141592;
    * ``EXPLICIT``: the ``EDGE_WEIGHT_SECTION`` in any of the symmetric formats
      (``FULL_MATRIX``, ``UPPER_ROW``, ``LOWER_DIAG_ROW``, ...).
    """
    header, xy, weights = _tsplib_sections(path)
    kind = header.get("EDGE_WEIGHT_TYPE", "EUC_2D").upper()
    n = int(header.get("DIMENSION", len(xy)))
    if kind == "EXPLICIT":
        fmt = header.get("EDGE_WEIGHT_FORMAT", "FULL_MATRIX").upper()
        if fmt not in _EXPLICIT_FORMATS:
            raise ValueError(f"{path}: EDGE_WEIGHT_FORMAT {fmt} is not supported "
                             f"({', '.join(_EXPLICIT_FORMATS)})")
        return _explicit_matrix(weights, n, fmt, path)
    if len(xy) != n or n == 0:
        raise ValueError(f"{path}: DIMENSION {n} but {len(xy)} coordinates")
    if kind in ("EUC_2D", "CEIL_2D"):
        mode = rounding or ("nint" if kind == "EUC_2D" else "ceil")
        if mode == "exact":
            return euclidean_costs(xy)
        return euclidean_costs(xy, round_to=0, rounding=mode)
    if rounding is not None:
        raise ValueError(f"{path}: rounding applies to EUC_2D files only, this one is {kind}")
    dx = xy[:, None, 0] - xy[None, :, 0]
    dy = xy[:, None, 1] - xy[None, :, 1]
    if kind == "ATT":
        r = np.sqrt((dx * dx + dy * dy) / 10.0)
        t = np.floor(r + 0.5)
        return np.where(t < r, t + 1.0, t)
    if kind == "GEO":
        pi, rrr = 3.141592, 6378.388
        deg = np.trunc(xy)
        rad = pi * (deg + 5.0 * (xy - deg) / 3.0) / 180.0
        lat, lon = rad[:, 0], rad[:, 1]
        q1 = np.cos(lon[:, None] - lon[None, :])
        q2 = np.cos(lat[:, None] - lat[None, :])
        q3 = np.cos(lat[:, None] + lat[None, :])
        arg = np.clip(0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3), -1.0, 1.0)
        d = np.trunc(rrr * np.arccos(arg) + 1.0)
        np.fill_diagonal(d, 0.0)
        return d
    raise ValueError(f"{path}: EDGE_WEIGHT_TYPE {kind} is not supported "
                     "(EUC_2D, CEIL_2D, ATT, GEO, EXPLICIT)")


def read_orlib_cap(path) -> dict:
    """An OR-Library uncapacitated/capacitated warehouse location file (Beasley's ``cap*``
    format): ``dict(costs, fixed_costs, demand, capacity)``.

    The file lists ``m n`` (warehouses, customers); then per warehouse its capacity and fixed
    cost; then per customer its demand followed by its ``m`` allocation costs, each the cost of
    serving the customer's *whole* demand from that warehouse. ``costs`` are per unit of demand
    (the listed cost divided by the demand), so that ``demand * costs`` is the listed cost and
    :func:`solve_facility_location` (``sum_i w_i c_ij``) minimises the file's objective; a
    customer of zero demand keeps the listed costs. Capacities are read as given (the UFL uses
    none; the capb/capc files write the capacity as the word ``capacity``, read as ``inf``)."""
    tokens = Path(path).read_text(errors="replace").split()
    pos = 0

    def take(count):
        nonlocal pos
        if pos + count > len(tokens):
            raise ValueError(f"{path}: the file ends early (OR-Library cap format)")
        out = tokens[pos:pos + count]
        pos += count
        return out

    m, n = (int(v) for v in take(2))
    capacity, fixed = np.empty(m), np.empty(m)
    for j in range(m):
        cap, f = take(2)
        capacity[j] = math.inf if cap.lower() == "capacity" else float(cap)
        fixed[j] = float(f)
    demand, listed = np.empty(n), np.empty((n, m))
    for i in range(n):
        demand[i] = float(take(1)[0])
        listed[i] = [float(v) for v in take(m)]
    if pos != len(tokens):
        raise ValueError(f"{path}: {len(tokens) - pos} values after the last customer")
    per_unit = np.divide(listed, demand[:, None], out=listed.copy(), where=demand[:, None] > 0)
    return {"costs": per_unit, "fixed_costs": fixed, "demand": demand, "capacity": capacity}


def auto_fixed_costs(costs, demand=None) -> np.ndarray:
    """The documented UFL opening cost rule for data without opening costs: every site costs
    ``mean(c) * n * mean(w) / (2 sqrt(n_sites))`` (with k open sites a customer's distance falls
    like 1 / sqrt(k) in the plane, so this opens a few dozen sites for n_sites ~ 10^3)."""
    costs = np.asarray(costs, dtype=float)
    n, s = costs.shape
    w = np.ones(n) if demand is None else np.asarray(demand, dtype=float)
    value = float(costs.mean()) * n * float(w.mean()) / (2.0 * math.sqrt(s))
    return np.full(s, float(np.round(value)))


def nearest_sites(costs, open_) -> np.ndarray:
    """Each point's nearest site of ``open_`` (read a block of points at a time)."""
    n = int(costs.shape[0])
    out = np.empty(n, dtype=np.int64)
    for start in range(0, n, 4096):
        rows = np.arange(start, min(n, start + 4096))
        d = costs[rows][:, open_] if isinstance(costs, np.ndarray) else \
            costs.pairs(np.repeat(rows, open_.size), np.tile(open_, rows.size)).reshape(
                rows.size, open_.size)
        out[rows] = open_[np.argmin(d, axis=1)]
    return out
