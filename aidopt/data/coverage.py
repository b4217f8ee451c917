r"""Coverage sets and their exact aggregation, for the covering models of facility location
(MCLP and LSCP: :mod:`aidopt.models.covering`, docs/facility.md).

Demand point i is covered by candidate site j when :math:`d_{ij} \le R`;
:math:`N_i = \{j : d_{ij} \le R\}` is its coverage set. :func:`coverage_sets` computes every
:math:`N_i` from a cost matrix, from coordinates (:class:`~aidopt.data.facility.EuclideanCosts`:
a k-d tree, no n x s matrix) or from another cost oracle (row blocks).

Both covering models see a demand point only through :math:`N_i` (and its weight), so points
with the same set are one row (:func:`aggregate_rows`: MCLP sums their weights, LSCP keeps one);
for LSCP a row whose set contains another row's set is implied by it (:func:`drop_dominated`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

__all__ = ["Coverage", "CoverageTimeLimit", "CoverRows", "coverage_sets", "aggregate_rows", "drop_dominated"]

#: rows of a cost oracle (or points of a k-d tree query) handled at a time
BLOCK = 4096

#: most pair products ``sum_j deg_j^2`` :func:`drop_dominated` spends on the subset test
DOMINANCE_BUDGET = 20_000_000


@dataclass
class Coverage:
    """Every demand point's coverage set, as compressed rows.

    Attributes
    ----------
    indptr : ndarray of int64 (n_points + 1,)
        Point i's sites are ``sites[indptr[i]:indptr[i + 1]]``.
    sites : ndarray of int64 (nnz,)
        Sorted within each point.
    n_sites : int
    """

    indptr: np.ndarray
    sites: np.ndarray
    n_sites: int

    @property
    def n_points(self) -> int:
        return int(self.indptr.size - 1)

    def sizes(self) -> np.ndarray:
        """``|N_i|`` of every point."""
        return np.diff(self.indptr)

    def covered(self, open_sites) -> np.ndarray:
        """Boolean per point: some site of ``open_sites`` covers it."""
        is_open = np.zeros(self.n_sites, dtype=bool)
        is_open[np.asarray(open_sites, dtype=np.int64)] = True
        hits = is_open[self.sites].astype(np.int64)
        return np.add.reduceat(np.append(hits, 0), self.indptr[:-1]) * (self.sizes() > 0) > 0


@dataclass
class CoverRows:
    """The rows of an aggregated covering model.

    Attributes
    ----------
    indptr, sites : ndarray of int64
        Row r's sites are ``sites[indptr[r]:indptr[r + 1]]`` (sorted, never empty).
    weight : ndarray (n_rows,)
        The summed weight of the points of each row (MCLP; 1 per point without weights).
    members : ndarray of int64 (n_points,)
        The row of every point, -1 for points left out of the model.
    """

    indptr: np.ndarray
    sites: np.ndarray
    weight: np.ndarray
    members: np.ndarray

    @property
    def n_rows(self) -> int:
        return int(self.indptr.size - 1)

    def row(self, r: int) -> np.ndarray:
        return self.sites[self.indptr[r]:self.indptr[r + 1]]


class CoverageTimeLimit(Exception):
    """The deadline passed while the coverage sets were computed or grouped (the data layer
    imports no solver: the door turns it into a ``time_limit`` result)."""


def _check_clock(deadline: float | None) -> None:
    if deadline is not None and time.perf_counter() > deadline:
        raise CoverageTimeLimit("time limit reached while computing the coverage sets")


def _from_pairs(rows: np.ndarray, cols: np.ndarray, n_points: int, n_sites: int) -> Coverage:
    """:class:`Coverage` of pairs sorted by point, then site."""
    indptr = np.zeros(n_points + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_points), out=indptr[1:])
    return Coverage(indptr, cols.astype(np.int64), int(n_sites))


def coverage_sets(costs, radius: float, *, scale=None, deadline: float | None = None) -> Coverage:
    r"""Every demand point's sites within ``radius``: :math:`N_i = \{j : d_{ij} \le R\}`, or
    :math:`\{j : w_i d_{ij} \le R\}` with a per-point ``scale`` :math:`w` (the weighted
    p-center).

    Parameters
    ----------
    costs : ndarray (n_points, n_sites), EuclideanCosts or GraphCosts
        Validated costs (:func:`aidopt.data.facility.cost_matrix`). For
        :class:`~aidopt.data.facility.EuclideanCosts` a k-d tree over the sites finds the
        candidates (``query_ball_point`` at a radius widened by the costs' rounding and a
        relative 1e-9), and the oracle's own distance decides, so the sets are exactly those of
        its cost matrix; another oracle is read ``BLOCK`` rows at a time.
    radius : float
        Positive and finite.
    scale : ndarray (n_points,), optional
        Positive factors :math:`w_i`: point i is covered by site j when ``w_i * d_ij <= radius``,
        the product computed as :class:`aidopt.data.levels.DistanceRows` computes it (so that a
        level it returns is covered exactly at that level). Default: no factor.
    deadline : float, optional
        ``time.perf_counter()`` value after which the computation stops.

    Returns
    -------
    Coverage

    Raises
    ------
    CoverageTimeLimit
        ``deadline`` passed (checked between blocks).
    """
    from aidopt.data.facility import EuclideanCosts

    n, s = (int(v) for v in costs.shape)
    if scale is not None:
        scale = np.asarray(scale, dtype=float)
        if scale.shape != (n,) or not np.all(scale > 0) or not np.all(np.isfinite(scale)):
            raise ValueError(f"scale must hold {n} positive finite factors")
    if isinstance(costs, np.ndarray) and scale is None:
        rows, cols = np.nonzero(costs <= radius)
        return _from_pairs(rows, cols, n, s)
    if isinstance(costs, EuclideanCosts):
        return _euclidean(costs, radius, deadline, scale)
    parts_r, parts_c = [], []
    for start in range(0, n, BLOCK):
        _check_clock(deadline)
        block = np.arange(start, min(n, start + BLOCK))
        d = costs[block] if isinstance(costs, np.ndarray) else costs.rows(block)
        if scale is not None:
            d = d * scale[block, None]
        r, c = np.nonzero(d <= radius)
        parts_r.append(r + start)
        parts_c.append(c)
    return _from_pairs(np.concatenate(parts_r), np.concatenate(parts_c), n, s)


def _euclidean(costs, radius: float, deadline: float | None, scale=None) -> Coverage:
    """:func:`coverage_sets` of coordinates by a k-d tree over the sites (a radius per point
    with ``scale``: ``radius / w_i``)."""
    from scipy.spatial import cKDTree

    # a rounded distance <= R may come from an exact one up to one unit of the rounding above R
    slack = 0.0 if costs.round_to is None else 10.0 ** (-costs.round_to)
    reach = (radius + slack) * (1.0 + 1e-9) if scale is None else \
        (radius / scale + slack) * (1.0 + 1e-9)
    tree = cKDTree(costs.site_xy)
    n, s = costs.shape
    parts_r, parts_c = [], []
    for start in range(0, n, BLOCK):
        _check_clock(deadline)
        stop = min(n, start + BLOCK)
        found = tree.query_ball_point(costs.customer_xy[start:stop],
                                      r=reach if scale is None else reach[start:stop])
        counts = np.fromiter((len(f) for f in found), dtype=np.int64, count=stop - start)
        if not counts.sum():
            continue
        r = np.repeat(np.arange(start, stop, dtype=np.int64), counts)
        c = np.concatenate([np.asarray(f, dtype=np.int64) for f in found if f])
        d = costs.pairs(r, c)  # the oracle's own distance decides
        keep = (d if scale is None else d * scale[r]) <= radius
        r, c = r[keep], c[keep]
        order = np.lexsort((c, r))
        parts_r.append(r[order])
        parts_c.append(c[order])
    if not parts_r:
        return _from_pairs(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), n, s)
    return _from_pairs(np.concatenate(parts_r), np.concatenate(parts_c), n, s)


def aggregate_rows(coverage: Coverage, weight=None, keep=None, *,
                   deadline: float | None = None) -> CoverRows:
    """Points with the same coverage set as one row with their summed weight.

    Parameters
    ----------
    coverage : Coverage
    weight : ndarray (n_points,), optional
        Default 1 per point.
    keep : ndarray of bool (n_points,), optional
        The points that go into the model (default: every point with a non-empty set).
        Points with an empty set are always left out (no row can cover them).
    deadline : float, optional
        As in :func:`coverage_sets` (checked every ``BLOCK`` points).

    Returns
    -------
    CoverRows
        The rows in order of their first point.
    """
    n = coverage.n_points
    w = np.ones(n) if weight is None else np.asarray(weight, dtype=float)
    use = coverage.sizes() > 0
    if keep is not None:
        use &= np.asarray(keep, dtype=bool)
    members = np.full(n, -1, dtype=np.int64)
    first: dict[bytes, int] = {}
    starts = []
    indptr, sites = coverage.indptr, coverage.sites
    for i in np.flatnonzero(use).tolist():
        if i % BLOCK == 0:
            _check_clock(deadline)
        key = sites[indptr[i]:indptr[i + 1]].tobytes()
        r = first.get(key)
        if r is None:
            r = first[key] = len(starts)
            starts.append(i)
        members[i] = r
    starts = np.asarray(starts, dtype=np.int64)
    lengths = coverage.sizes()[starts]
    row_ptr = np.zeros(starts.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=row_ptr[1:])
    row_sites = (np.concatenate([sites[indptr[i]:indptr[i + 1]] for i in starts])
                 if starts.size else np.zeros(0, dtype=np.int64))
    inside = members >= 0
    summed = np.bincount(members[inside], weights=w[inside], minlength=starts.size)
    return CoverRows(row_ptr, row_sites, summed, members)


def drop_dominated(rows: CoverRows, budget: float | None = None) -> tuple[CoverRows, int]:
    """LSCP: the rows without those whose site set strictly contains another row's set.

    Covering the smaller set covers the larger one, so a row that contains another is implied
    by it; dropping every such row keeps the rows that are minimal under inclusion, which imply
    all the others (inclusion is transitive). The test is a sparse product of the row-site
    incidence with its transpose (row a lies in row b when their intersection has ``|a|``
    sites), made only when its work ``sum_j deg_j^2`` is within ``budget`` (default
    :data:`DOMINANCE_BUDGET`); otherwise nothing is dropped. The rows must be distinct (:func:`aggregate_rows`).

    Returns
    -------
    (CoverRows, int)
        The kept rows (``members`` of a dropped row's points set to -1) and how many were
        dropped.
    """
    from scipy import sparse

    n_rows = rows.n_rows
    if n_rows < 2:
        return rows, 0
    degree = np.bincount(rows.sites)
    if float(np.dot(degree, degree)) > (DOMINANCE_BUDGET if budget is None else budget):
        return rows, 0
    sizes = np.diff(rows.indptr)
    M = sparse.csr_matrix((np.ones(rows.sites.size), rows.sites, rows.indptr),
                          shape=(n_rows, int(rows.sites.max()) + 1))
    inter = (M @ M.T).tocoo()
    inside = (inter.row != inter.col) & (inter.data == sizes[inter.row])  # row a within row b
    dominated = np.zeros(n_rows, dtype=bool)
    dominated[inter.col[inside]] = True
    if not dominated.any():
        return rows, 0
    kept = np.flatnonzero(~dominated)
    new_index = np.full(n_rows, -1, dtype=np.int64)
    new_index[kept] = np.arange(kept.size)
    lengths = sizes[kept]
    indptr = np.zeros(kept.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    sites = np.concatenate([rows.row(r) for r in kept])
    members = np.where(rows.members >= 0, new_index[np.maximum(rows.members, 0)], -1)
    return CoverRows(indptr, sites, rows.weight[kept], members), int(dominated.sum())
