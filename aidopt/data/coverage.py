r"""Coverage sets and their exact aggregation, for the covering models of facility location
(MCLP and LSCP: :mod:`aidopt.models.covering`, docs/facility.md).

Demand point i is covered by candidate site j when :math:`d_{ij} \le R`;
:math:`N_i = \{j : d_{ij} \le R\}` is its coverage set. :func:`coverage_sets` computes every
:math:`N_i` from a cost matrix, from coordinates (:class:`~aidopt.data.facility.EuclideanCosts`:
a k-d tree, no n x s matrix) or from another cost oracle (row blocks).

Both covering models see a demand point only through :math:`N_i` (and its weight), so points
with the same set are one row (:func:`aggregate_rows`: MCLP sums their weights, LSCP keeps one;
equal sets found by hashing and checked exactly, :func:`group_rows`); for LSCP a row whose set
contains another row's set is implied by it (:func:`drop_dominated`).

Out of core (the dask engine, docs/facility.md "Covering models at scale"): :func:`open_points`
opens the points, :func:`stream_rows` aggregates them chunk by chunk and merges the chunks'
rows (:func:`merge_rows`), and :class:`StreamedCoverage` evaluates open sites on them pass by
pass.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

__all__ = ["Coverage", "CoverageTimeLimit", "CoverRows", "StreamedCoverage", "coverage_sets",
           "aggregate_rows", "drop_dominated", "group_rows", "merge_rows", "open_points",
           "spread", "stream_rows"]

#: rows of a cost oracle (or points of a per-point-radius k-d tree query) handled at a time
BLOCK = 4096

#: points of coordinates that get one k-d tree against the sites' tree at a time
#: (:func:`coverage_sets`; the candidate pairs of a block are held at once)
POINT_BLOCK = 65536

#: seed of the two random tables whose sums over a row's sites are its hash keys
#: (:func:`group_rows`)
HASH_SEED = 0x5EED_C0FE

#: most pair products ``sum_j deg_j^2`` :func:`drop_dominated` spends on the subset test
#: (about 1.1e8 for 10^6 uniform points x 10^3 sites at 10 sites a point)
DOMINANCE_BUDGET = 400_000_000

#: most pair products of one block of rows in :func:`drop_dominated` (bounds its memory)
DOMINANCE_BLOCK = 4_000_000


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

    def uncovered(self, open_sites, weight=None) -> tuple[int, float]:
        """``(count, weight)`` of the points that no site of ``open_sites`` covers (``weight``:
        the points' weights, default 1 each)."""
        miss = ~self.covered(open_sites)
        count = int(miss.sum())
        return count, float(count if weight is None else np.asarray(weight)[miss].sum())

    def uncoverable(self, weight=None) -> float:
        """The weight of the points with an empty set (default 1 each)."""
        empty = self.sizes() == 0
        return float(empty.sum() if weight is None else np.asarray(weight)[empty].sum())


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
    """:func:`coverage_sets` of coordinates by k-d trees (a radius per point with ``scale``:
    ``radius / w_i``).

    Without ``scale``, a block of :data:`POINT_BLOCK` points gets a k-d tree of its own and
    :meth:`scipy.spatial.cKDTree.sparse_distance_matrix` against the sites' tree returns the
    candidate pairs as arrays (no Python object per point); the oracle's own distance then
    decides, vectorized, and the kept pairs are sorted by point and site in one ``argsort``.
    """
    from scipy.spatial import cKDTree

    # a rounded distance <= R may come from an exact one up to one unit of the rounding above R
    slack = 0.0 if costs.round_to is None else 10.0 ** (-costs.round_to)
    n, s = costs.shape
    site_tree = cKDTree(costs.site_xy)
    if scale is not None:
        return _euclidean_scaled(costs, site_tree, (radius / scale + slack) * (1.0 + 1e-9),
                                 radius, scale, deadline)
    reach = (radius + slack) * (1.0 + 1e-9)
    # a pair the tree puts below this is within R by the oracle too (the two distances differ
    # by a few units in the last place, the rounding raises one by at most a unit)
    sure = (radius - slack) * (1.0 - 1e-9)
    parts = []
    for start in range(0, n, POINT_BLOCK):
        _check_clock(deadline)
        stop = min(n, start + POINT_BLOCK)
        pairs = cKDTree(costs.customer_xy[start:stop]).sparse_distance_matrix(
            site_tree, reach, output_type="ndarray")
        key = pairs["i"].astype(np.int64)
        key += start
        key *= s
        key += pairs["j"]  # point * s + site: one sort orders the pairs by point, then site
        check = np.flatnonzero(pairs["v"] > sure)
        del pairs
        if check.size:  # the oracle's own distance decides the others
            far = costs.pairs(key[check] // s, key[check] % s) > radius
            key = np.delete(key, check[far])
        parts.append(np.sort(key))
    key = np.concatenate(parts)
    del parts
    rows, cols = np.divmod(key, s)
    return _from_pairs(rows, cols, n, s)


def _euclidean_scaled(costs, site_tree, reach, radius, scale, deadline) -> Coverage:
    """:func:`_euclidean` with a radius per point (``query_ball_point`` with a radius each)."""
    n, s = costs.shape
    parts_r, parts_c = [], []
    for start in range(0, n, BLOCK):
        _check_clock(deadline)
        stop = min(n, start + BLOCK)
        found = site_tree.query_ball_point(costs.customer_xy[start:stop], r=reach[start:stop])
        counts = np.fromiter((len(f) for f in found), dtype=np.int64, count=stop - start)
        if not counts.sum():
            continue
        r = np.repeat(np.arange(start, stop, dtype=np.int64), counts)
        c = np.concatenate([np.asarray(f, dtype=np.int64) for f in found if f])
        keep = costs.pairs(r, c) * scale[r] <= radius
        r, c = r[keep], c[keep]
        order = np.argsort(r * s + c)
        parts_r.append(r[order])
        parts_c.append(c[order])
    if not parts_r:
        return _from_pairs(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), n, s)
    return _from_pairs(np.concatenate(parts_r), np.concatenate(parts_c), n, s)


def _hash_tables(n_sites: int) -> np.ndarray:
    """Two independent tables of random 64-bit values, one per site (the hash keys of
    :func:`group_rows`)."""
    rng = np.random.default_rng(HASH_SEED)
    return rng.integers(0, np.iinfo(np.uint64).max, size=(2, max(1, n_sites)), dtype=np.uint64,
                        endpoint=True)


def _take_rows(indptr: np.ndarray, sites: np.ndarray, rows: np.ndarray):
    """The compressed rows ``rows`` (sorted indices) of ``(indptr, sites)``."""
    sizes = np.diff(indptr)
    mask = np.zeros(sizes.size, dtype=bool)
    mask[rows] = True
    out = np.zeros(rows.size + 1, dtype=np.int64)
    np.cumsum(sizes[rows], out=out[1:])
    return out, sites[np.repeat(mask, sizes)]


def group_rows(indptr: np.ndarray, sites: np.ndarray, n_sites: int, *,
               tables: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Equal rows of a compressed row set, found by hashing and checked exactly.

    Row r's key is its length and two sums, modulo :math:`2^{64}`, of random 64-bit values
    of its sites (one table each; a row is a set: its sites are distinct, so this is a hash of
    the set). Rows with equal keys are compared site by site with the first of them; the rare
    rows that differ (a collision) are grouped again exactly, by their site lists. Unequal rows
    are therefore never one group, whatever the tables.

    Parameters
    ----------
    indptr, sites : ndarray of int64
        Row r's sites are ``sites[indptr[r]:indptr[r + 1]]``, sorted.
    n_sites : int
        Sites are ``0..n_sites-1``.
    tables : ndarray of uint64 (2, n_sites), optional
        The hash tables (default: seeded random values); for tests.

    Returns
    -------
    (group, first) : ndarray of int64
        ``group[r]`` is row r's group, numbered in order of their first row; ``first[g]`` is
        the first row of group g (increasing).
    """
    n_rows = int(indptr.size - 1)
    if n_rows == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    sizes = np.diff(indptr)
    tables = _hash_tables(n_sites) if tables is None else tables
    keys = []
    for table in tables:
        acc = np.zeros(sites.size + 1, dtype=np.uint64)
        np.cumsum(table[sites], out=acc[1:])  # wraps modulo 2**64
        keys.append(acc[indptr[1:]] - acc[indptr[:-1]])
    order = np.lexsort((keys[1], keys[0], sizes))  # stable: each group's rows in row order
    k0, k1, sz = keys[0][order], keys[1][order], sizes[order]
    new = np.empty(n_rows, dtype=bool)
    new[0] = True
    new[1:] = (k0[1:] != k0[:-1]) | (k1[1:] != k1[:-1]) | (sz[1:] != sz[:-1])
    group = np.empty(n_rows, dtype=np.int64)
    group[order] = np.cumsum(new) - 1
    first = order[new]  # the first row of every group (sorted stably)
    # exact check: every row equals its group's first row, site by site
    leader = first[group]
    offset = np.arange(sites.size, dtype=np.int64) - np.repeat(indptr[:-1], sizes)
    differs = sites != sites[np.repeat(indptr[leader], sizes) + offset]
    if differs.any():
        group, first = _split_collisions(indptr, sites, group, first,
                                         np.unique(np.repeat(np.arange(n_rows), sizes)[differs]))
    # number the groups in order of their first row
    rank = np.argsort(first, kind="stable")
    renumber = np.empty(rank.size, dtype=np.int64)
    renumber[rank] = np.arange(rank.size)
    return renumber[group], first[rank]


def _split_collisions(indptr, sites, group, first, bad_rows):
    """Regroup exactly, by their site lists, the rows of every group that holds a row unequal to
    its first (hash collisions: never expected with the default tables)."""
    bad_groups = np.unique(group[bad_rows])
    rows = np.flatnonzero(np.isin(group, bad_groups))
    first = list(first)
    seen: dict[bytes, int] = {}
    for r in rows.tolist():  # in row order: a new group's first row is its smallest
        key = sites[indptr[r]:indptr[r + 1]].tobytes()
        g = seen.get(key)
        if g is None:
            old = int(group[r])
            if first[old] == r:
                g = old  # the group keeps its number for its first row's set
            else:
                g = len(first)
                first.append(r)
            seen[key] = g
        group[r] = g
    return group, np.asarray(first, dtype=np.int64)


def aggregate_rows(coverage: Coverage, weight=None, keep=None, *,
                   deadline: float | None = None) -> CoverRows:
    """Points with the same coverage set as one row with their summed weight.

    Equal sets are found by :func:`group_rows` (hash keys, then an exact check), the weights
    summed by ``np.bincount``: no Python loop over the points.

    Parameters
    ----------
    coverage : Coverage
    weight : ndarray (n_points,), optional
        Default 1 per point.
    keep : ndarray of bool (n_points,), optional
        The points that go into the model (default: every point with a non-empty set).
        Points with an empty set are always left out (no row can cover them).
    deadline : float, optional
        As in :func:`coverage_sets` (checked before and after the grouping).

    Returns
    -------
    CoverRows
        The rows in order of their first point.
    """
    _check_clock(deadline)
    n = coverage.n_points
    w = np.ones(n) if weight is None else np.asarray(weight, dtype=float)
    use = coverage.sizes() > 0
    if keep is not None:
        use &= np.asarray(keep, dtype=bool)
    points = np.flatnonzero(use)
    indptr, sites = _take_rows(coverage.indptr, coverage.sites, points)
    group, first = group_rows(indptr, sites, coverage.n_sites)
    _check_clock(deadline)
    members = np.full(n, -1, dtype=np.int64)
    members[points] = group
    row_ptr, row_sites = _take_rows(indptr, sites, first)
    summed = np.bincount(group, weights=w[points], minlength=first.size)
    return CoverRows(row_ptr, row_sites, summed, members)


def merge_rows(parts, n_sites: int) -> CoverRows:
    """Aggregated rows of several sets of points (e.g. chunks) as one: equal rows across the
    parts are one row with the summed weight.

    Parameters
    ----------
    parts : sequence of CoverRows
        In the order of their points; ``members`` is not read.
    n_sites : int

    Returns
    -------
    CoverRows
        The rows in order of their first appearance (the rows of the points taken together
        in :func:`aggregate_rows`' order, when every part is in it); ``members`` is empty.
    """
    parts = [p for p in parts if p.n_rows]
    if not parts:
        return CoverRows(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64),
                         np.zeros(0), np.zeros(0, dtype=np.int64))
    sizes = np.concatenate([np.diff(p.indptr) for p in parts])
    indptr = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    sites = np.concatenate([p.sites for p in parts])
    group, first = group_rows(indptr, sites, n_sites)
    row_ptr, row_sites = _take_rows(indptr, sites, first)
    summed = np.bincount(group, weights=np.concatenate([p.weight for p in parts]),
                         minlength=first.size)
    return CoverRows(row_ptr, row_sites, summed, np.zeros(0, dtype=np.int64))


def drop_dominated(rows: CoverRows, budget: float | None = None) -> tuple[CoverRows, int]:
    """LSCP: the rows without those whose site set strictly contains another row's set.

    Covering the smaller set covers the larger one, so a row that contains another is implied
    by it; dropping every such row keeps the rows that are minimal under inclusion, which imply
    all the others (inclusion is transitive). The test is a sparse product of the row-site
    incidence with its transpose (row a lies in row b when their intersection has ``|a|``
    sites), made only when its work ``sum_j deg_j^2`` is within ``budget`` (default
    :data:`DOMINANCE_BUDGET`); otherwise nothing is dropped. The product is made a block of rows
    at a time, each block's at most about :data:`DOMINANCE_BLOCK` pairs, so its memory stays
    bounded whatever the budget. The rows must be distinct (:func:`aggregate_rows`).

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
    MT = M.T.tocsr()
    # the pairs row a's sites share with other rows: sum over its sites of their degrees
    work = np.zeros(rows.sites.size + 1)
    np.cumsum(degree[rows.sites], out=work[1:])
    work = work[rows.indptr]
    bounds = np.unique(np.searchsorted(work, np.arange(0.0, work[-1], DOMINANCE_BLOCK)))
    bounds = np.append(bounds[bounds < n_rows], n_rows)
    dominated = np.zeros(n_rows, dtype=bool)
    for a0, a1 in zip(bounds[:-1], bounds[1:], strict=True):
        inter = (M[a0:a1] @ MT).tocoo()
        a = inter.row.astype(np.int64) + a0
        inside = (a != inter.col) & (inter.data == sizes[a])  # row a within row b
        dominated[inter.col[inside]] = True
    if not dominated.any():
        return rows, 0
    kept = np.flatnonzero(~dominated)
    new_index = np.full(n_rows, -1, dtype=np.int64)
    new_index[kept] = np.arange(kept.size)
    indptr, sites = _take_rows(rows.indptr, rows.sites, kept)
    members = np.where(rows.members >= 0, new_index[np.maximum(rows.members, 0)], -1)
    return CoverRows(indptr, sites, rows.weight[kept], members), int(dominated.sum())


# ----------------------------------------------------------------------------- out of core
#: points per chunk when the dask engine chooses the chunking (a path or numpy input): a chunk's
#: candidate pairs (tens per point) are held at once by each worker thread
CHUNK_POINTS = 1 << 18

#: most first indices of points without a site that a chunk reports (the LSCP error names them)
LONELY_SHOWN = 10


def _block_oracle(block, site_xy):
    """The Euclidean cost oracle of a chunk's points (it checks their coordinates)."""
    from aidopt.data.facility import EuclideanCosts

    return EuclideanCosts(block, site_xy)


def _chunk_rows(block, *weight, site_xy, radius, fixed_open, mclp, weight_column):
    """One chunk of points: its aggregated rows and what the door checks of its points.

    ``block`` holds the coordinates (and, with ``weight_column``, the weights as its last
    column); ``weight`` is the chunk's slice of an in-memory weight vector, if any. Module
    level, so that a distributed cluster pickles it by reference.
    """
    if weight_column:
        w, block = block[:, -1], block[:, :-1]
    else:
        w = weight[0] if weight else np.ones(block.shape[0])
    bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if bad.size:  # the door names the first one
        return None, {"bad": (int(bad[0]), float(w[bad[0]]))}
    cov = coverage_sets(_block_oracle(block, site_xy), radius)
    empty = cov.sizes() == 0
    keep = ~cov.covered(fixed_open) if fixed_open.size else np.ones(cov.n_points, dtype=bool)
    if mclp:
        keep &= w > 0
    rows = aggregate_rows(cov, w, keep)
    lonely = np.flatnonzero(empty)
    stats = {"points": int(cov.n_points), "weight": float(w.sum()),
             "uncoverable": float(w[empty].sum()), "integral": bool(np.array_equal(w, np.round(w))),
             "lonely": int(lonely.size), "lonely_first": lonely[:LONELY_SHOWN]}
    return CoverRows(rows.indptr, rows.sites, rows.weight, np.zeros(0, dtype=np.int64)), stats


def _chunk_uncovered(block, *weight, site_xy, radius, weight_column):
    """``(count, weight)`` of a chunk's points that no site of ``site_xy`` covers."""
    if weight_column:
        w, block = block[:, -1], block[:, :-1]
    else:
        w = weight[0] if weight else None
    if not len(site_xy):
        miss = np.ones(block.shape[0], dtype=bool)
    else:
        miss = coverage_sets(_block_oracle(block, site_xy), radius).sizes() == 0
    return int(miss.sum()), float(miss.sum() if w is None else w[miss].sum())


class StreamedCoverage:
    """The coverage sets of points read chunk by chunk (the dask engine): never held, computed
    again chunk by chunk whenever open sites are evaluated on the original points.

    Made by :func:`stream_rows`. Offers what the covering plug-in asks of :class:`Coverage`:
    :meth:`uncovered` (one pass over the points per new set of open sites) and
    :meth:`uncoverable`, plus the points' total weight and whether every weight is an integer
    (the weights travel with the points: the ``weight`` arguments are not read).

    Attributes
    ----------
    points : aidopt.data.chunked.ChunkedMatrix
        The points' coordinates (and weights as a last column when ``weight_column``).
    n_points, n_sites : int
    total_weight, uncoverable_weight : float
    integral : bool
    """

    def __init__(self, points, site_xy, radius, weight, weight_column, stats):
        self.points, self.site_xy, self.radius = points, site_xy, float(radius)
        self.weight, self.weight_column = weight, bool(weight_column)
        self.n_points, self.n_sites = int(points.shape[0]), int(len(site_xy))
        self.total_weight = stats["weight"]
        self.uncoverable_weight = stats["uncoverable"]
        self.integral = stats["integral"]
        self._last = None

    def uncovered(self, open_sites, weight=None) -> tuple[int, float]:
        """``(count, weight)`` of the original points no site of ``open_sites`` covers: one pass
        over the points (the last answer is kept: the certificate asks again)."""
        open_sites = np.unique(np.asarray(open_sites, dtype=np.int64))
        key = open_sites.tobytes()
        if self._last is None or self._last[0] != key:
            import functools

            task = functools.partial(_chunk_uncovered, site_xy=self.site_xy[open_sites],
                                     radius=self.radius, weight_column=self.weight_column)
            args = () if self.weight is None else (self.weight,)
            count, total = 0, 0.0
            for c, w in self.points.iter_blocks(task, *args, kind="uncovered"):
                count, total = count + c, total + w
            self._last = (key, (count, total))
        return self._last[1]

    def uncoverable(self, weight=None) -> float:
        """The weight of the points with an empty set (found while aggregating)."""
        return self.uncoverable_weight


def stream_rows(points, site_xy, radius: float, *, weight=None, weight_column: bool = False,
                fixed_open=(), mclp: bool = True, deadline: float | None = None):
    """Coverage sets of out-of-core points, aggregated chunk by chunk and merged: memory holds
    the distinct rows (and a few chunks), never a row per point.

    Every chunk's sets are computed as :func:`coverage_sets` computes them (a k-d tree over the
    sites, the Euclidean oracle's own distance deciding), aggregated (:func:`aggregate_rows`,
    leaving out the points a site of ``fixed_open`` covers and, for MCLP, points of weight 0),
    and the chunks' rows are merged (:func:`merge_rows`, equal sets across chunks summed) as
    they arrive, so the rows are those of the points taken together, in the same order.

    Parameters
    ----------
    points : aidopt.data.chunked.ChunkedMatrix
        n x d coordinates, or n x (d + 1) with the weights as the last column
        (``weight_column``).
    site_xy : ndarray (s, d)
    radius : float
    weight : ndarray (n,), optional
        In-memory weights (sliced per chunk); default 1 each (or the weight column).
    fixed_open : ndarray of int64
    mclp : bool
        Leave out points of weight 0.
    deadline : float, optional
        ``time.perf_counter()`` value after which the computation stops (checked as each
        chunk's rows arrive).

    Returns
    -------
    (StreamedCoverage, CoverRows, dict)
        The coverage (to evaluate open sites on the original points), the merged rows and the
        points' checks: ``lonely`` (points without a site) and ``lonely_first`` (the first
        :data:`LONELY_SHOWN` of them, global indices).

    Raises
    ------
    CoverageTimeLimit
        ``deadline`` passed.
    ValueError
        Non-finite coordinates or a negative / non-finite weight (the first such index).
    """
    import functools

    fixed_open = np.asarray(fixed_open, dtype=np.int64)
    task = functools.partial(_chunk_rows, site_xy=site_xy, radius=float(radius),
                             fixed_open=fixed_open, mclp=bool(mclp),
                             weight_column=bool(weight_column))
    starts = np.concatenate([[0], np.cumsum(points.chunks)])
    merged, pending, pending_rows = None, [], 0
    stats = {"weight": 0.0, "uncoverable": 0.0, "integral": True, "lonely": 0}
    lonely_first: list[int] = []
    _check_clock(deadline)
    args = () if weight is None else (weight,)
    for i, (rows, st) in enumerate(points.iter_blocks(task, *args, kind="coverage")):
        if "bad" in st:
            j, value = st["bad"]
            raise ValueError(f"demand must be finite and non-negative; demand[{starts[i] + j}] "
                             f"= {value!r}")
        _check_clock(deadline)
        for name in ("weight", "uncoverable", "lonely"):
            stats[name] += st[name]
        stats["integral"] &= st["integral"]
        if len(lonely_first) < LONELY_SHOWN:
            lonely_first.extend((st["lonely_first"] + starts[i]).tolist())
        pending.append(rows)
        pending_rows += rows.n_rows
        # merge when the new rows outnumber the merged ones: each row is merged O(log) times
        if merged is None or pending_rows >= merged.n_rows:
            merged = merge_rows(([merged] if merged is not None else []) + pending,
                                int(len(site_xy)))
            pending, pending_rows = [], 0
    if pending or merged is None:
        merged = merge_rows(([merged] if merged is not None else []) + pending, int(len(site_xy)))
    stats["lonely_first"] = np.asarray(lonely_first[:LONELY_SHOWN], dtype=np.int64)
    coverage = StreamedCoverage(points, site_xy, radius, weight, weight_column, stats)
    return coverage, merged, stats


def open_points(customer_xy, demand=None, *, chunk_rows: int | None = None):
    """Demand points for :func:`stream_rows`, from a dask array, a
    :class:`~aidopt.data.chunked.ChunkedMatrix`, a path (``.npy`` file or Zarr store, opened
    as :func:`aidopt.data.chunked.open_store` opens them) or an in-memory array (n x d).

    Parameters
    ----------
    customer_xy : dask array, ChunkedMatrix, str / PathLike or array-like (n, d)
    demand : ndarray (n,) or dask array (n,), optional
        Weights: an in-memory vector is checked here and sliced per chunk; a dask array is read
        with the points, as their last column (checked chunk by chunk).
    chunk_rows : int, optional
        Points per chunk for a path or in-memory input (default :data:`CHUNK_POINTS`); a dask
        array keeps its chunks.

    Returns
    -------
    (ChunkedMatrix, ndarray or None, bool)
        The points, the in-memory weights, and whether the weights are the last column.
    """
    from aidopt.data import chunked
    from aidopt.data.facility import _vector

    rows = CHUNK_POINTS if chunk_rows is None else int(chunk_rows)
    if chunked.is_path(customer_xy):
        array = chunked.open_store(customer_xy, chunk_rows=rows).array
    elif isinstance(customer_xy, chunked.ChunkedMatrix) or chunked.is_dask_array(customer_xy):
        array = customer_xy.array if isinstance(customer_xy, chunked.ChunkedMatrix) else customer_xy
        if array.ndim != 2:
            raise ValueError(f"customer_xy must be an (n, d) array, got shape {array.shape}")
        if array.numblocks[1] != 1:
            array = array.rechunk({1: -1})
    else:
        array = chunked.to_dask(np.asarray(customer_xy, dtype=float)
                                if not chunked.is_file_map(customer_xy) else customer_xy, rows)
    if array.ndim != 2 or array.shape[0] == 0:
        raise ValueError(f"customer_xy must be a non-empty (n, d) array, got shape {array.shape}")
    n = int(array.shape[0])
    if chunked.is_dask_array(demand):
        da = chunked._require_dask()
        if demand.shape != (n,):
            raise ValueError(f"demand must have {n} entries, got shape {demand.shape}")
        w = demand.astype(float).rechunk((array.chunks[0],))[:, None]
        return chunked.ChunkedMatrix(da.concatenate([array.astype(float), w], axis=1)), None, True
    return chunked.ChunkedMatrix(array), _vector(demand, "demand", n), False


def spread(coverage: Coverage, candidates: np.ndarray, most: int) -> np.ndarray:
    """At most ``most`` of the ``candidates`` (point or row indices): first those with pairwise
    disjoint coverage sets (each needs a site of its own), the smallest sets first, then the
    others in the same order. A bounded scan of the ``50 * most`` smallest."""
    sizes = coverage.sizes()[candidates]
    order = candidates[np.argsort(sizes, kind="stable")]
    used = np.zeros(coverage.n_sites, dtype=bool)
    first, rest = [], []
    for i in order[:50 * most].tolist():
        if len(first) >= most:
            break
        N = coverage.sites[coverage.indptr[i]:coverage.indptr[i + 1]]
        if used[N].any():
            rest.append(i)
        else:
            used[N] = True
            first.append(i)
    return np.asarray((first + rest)[:most], dtype=np.int64)
