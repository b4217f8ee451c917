r"""Distance levels for the radius searches of the p-center and p-dispersion models
(docs/facility.md): the optimum of either is one of the (weighted) distances of its data, a
*level*, and the search bisects over the distinct levels between two bounds.

:class:`DistanceRows` reads a distance matrix, or a cost oracle
(:class:`~aidopt.data.facility.EuclideanCosts`, :class:`~aidopt.data.facility.GraphCosts`), a
block of rows at a time, never holding an n x s matrix of its own: the p-center's weighted
point-site distances :math:`w_i d_{ij}`, and the p-dispersion's site-site distances
:math:`d_{jk}` (each pair once, :math:`j < k`). Every method computes a distance by the same
arithmetic (the oracle's row, times the point's weight), so a level returned here is exactly
the value the coverage test (:func:`aidopt.data.coverage.coverage_sets` with ``scale``) and the
evaluation of a solution compare with.

:func:`clique_cover` covers the edges of a conflict graph by cliques (the rows of the
p-dispersion's packing model, :mod:`aidopt.models.dispersion`).
"""

from __future__ import annotations

import time

import numpy as np

from aidopt.data.coverage import CoverageTimeLimit

__all__ = ["DistanceRows", "LEVEL_CAP", "clique_cover"]

#: rows read at a time (bounds the temporary memory: ``BLOCK x n_columns`` floats)
BLOCK = 1024

#: most distance values :meth:`DistanceRows.levels_between` holds at once; beyond it, a seeded
#: sample of them (the search stays a bisection over real levels, with a few more passes)
LEVEL_CAP = 2_000_000


def _check_clock(deadline: float | None) -> None:
    if deadline is not None and time.perf_counter() > deadline:
        raise CoverageTimeLimit("time limit reached while reading the distance levels")


class DistanceRows:
    r"""A distance matrix read a block of rows at a time, with a factor per row.

    Parameters
    ----------
    costs : ndarray (n, s), EuclideanCosts or GraphCosts
        Validated distances (:func:`aidopt.data.facility.cost_matrix`).
    scale : ndarray (n,), optional
        Positive factors :math:`w_i` (row i is :math:`w_i d_{ij}`); default 1 (no product).
    pairs : bool
        Site-site distances: a square symmetric matrix whose levels are its entries above the
        diagonal (each pair once).
    """

    def __init__(self, costs, scale=None, *, pairs: bool = False):
        self.costs = costs
        self.n, self.s = (int(v) for v in costs.shape)
        self.scale = None if scale is None else np.ascontiguousarray(scale, dtype=float)
        self.pairs = bool(pairs)
        if self.pairs and self.n != self.s:
            raise ValueError(f"site-site distances must be square, got shape {costs.shape}")

    # ------------------------------------------------------------------ reading
    def rows(self, rows) -> np.ndarray:
        """The (scaled) distances of ``rows`` to every column."""
        rows = np.asarray(rows, dtype=np.int64)
        d = self.costs[rows] if isinstance(self.costs, np.ndarray) else self.costs.rows(rows)
        return d if self.scale is None else d * self.scale[rows, None]

    def columns(self, cols) -> np.ndarray:
        """The (scaled) distances of every row to ``cols`` (n x len(cols))."""
        cols = np.asarray(cols, dtype=np.int64)
        d = (self.costs[:, cols] if isinstance(self.costs, np.ndarray)
             else self.costs.columns(cols))
        return d if self.scale is None else d * self.scale[:, None]

    def blocks(self, deadline: float | None = None):
        """``(rows, distances)`` a block at a time; with ``pairs`` the entries on and below the
        diagonal are NaN (no level)."""
        for start in range(0, self.n, BLOCK):
            _check_clock(deadline)
            rows = np.arange(start, min(self.n, start + BLOCK))
            d = self.rows(rows)
            if self.pairs:
                d = np.where(np.arange(self.s)[None, :] > rows[:, None], d, np.nan)
            yield rows, d

    # ------------------------------------------------------------------ bounds
    def row_minima(self, deadline: float | None = None) -> np.ndarray:
        """Each row's smallest entry."""
        out = np.empty(self.n)
        for rows, d in self.blocks(deadline):
            out[rows] = d.min(axis=1)
        return out

    def row_kth_largest(self, k: int, deadline: float | None = None) -> np.ndarray:
        """Site-site distances: each site's ``k``-th largest distance to another site
        (``1 <= k <= s - 1``)."""
        if not (self.pairs and 1 <= k <= self.s - 1):
            raise ValueError("row_kth_largest needs site-site distances and 1 <= k <= s - 1")
        out = np.empty(self.n)
        for start in range(0, self.n, BLOCK):
            _check_clock(deadline)
            rows = np.arange(start, min(self.n, start + BLOCK))
            d = self.rows(rows)
            d[np.arange(rows.size), rows] = -np.inf  # not a distance to another site
            out[rows] = np.partition(d, self.s - k, axis=1)[:, self.s - k]
        return out

    # ------------------------------------------------------------------ levels
    def levels_between(self, lower: float, upper: float, *, lower_closed: bool,
                       upper_closed: bool, cap: int | None = None, seed: int = 0,
                       deadline: float | None = None) -> tuple[np.ndarray, bool]:
        """The distinct levels in the interval from ``lower`` to ``upper`` (closed or open at
        each end), sorted.

        Returns
        -------
        (ndarray, bool)
            All of them and ``True`` when at most ``cap`` (default :data:`LEVEL_CAP`) entries
            lie in the interval (two passes: a count, then the values); else a seeded
            Bernoulli sample of about ``cap`` of them, never empty, and ``False`` (each sampled
            value is a real level in the interval, so the search may test it; only the
            interval's exact contents are not known). Empty only when the interval holds no
            level.
        """

        def inside(d):
            lo = d >= lower if lower_closed else d > lower
            hi = d <= upper if upper_closed else d < upper
            return lo & hi  # NaN (no level) compares False

        cap = LEVEL_CAP if cap is None else int(cap)
        count = 0
        for _, d in self.blocks(deadline):
            count += int(np.count_nonzero(inside(d)))
        exact = count <= cap
        rng = np.random.default_rng(seed)
        parts, spare = [], None
        for _, d in self.blocks(deadline):
            values = d[inside(d)]
            if not exact:
                if spare is None and values.size:
                    spare = values[:1]  # a level of the interval, should the sample miss all
                values = values[rng.random(values.size) < cap / count]
            parts.append(np.unique(values))
        if spare is not None and not any(part.size for part in parts):
            parts.append(spare)
        values = np.unique(np.concatenate(parts)) if parts else np.zeros(0)
        return values, exact


def clique_cover(adjacency: np.ndarray) -> list[np.ndarray]:
    """Cliques of a graph that together cover every edge (a greedy edge clique cover).

    Each uncovered edge ``(j, k)`` starts a clique, grown by the common neighbours of its
    members, those joined to the seed by the most uncovered edges first, until no vertex is
    adjacent to all of them (a maximal clique: its packing row is as strong as possible).
    An edge's clique row :math:`\\sum_{v \\in Q} x_v \\le 1` implies its edge row
    :math:`x_j + x_k \\le 1`, and a clique's row is valid for every independent set, so the
    rows have the same integer solutions as the edge rows, with a stronger LP relaxation.

    Parameters
    ----------
    adjacency : ndarray of bool (m, m)
        Symmetric, with a False diagonal.

    Returns
    -------
    list of ndarray of int64
        Sorted vertex indices of each clique (every clique has at least two vertices).
    """
    A = np.asarray(adjacency, dtype=bool)
    uncovered = A.copy()
    cliques = []
    for j in np.argsort(-A.sum(axis=1), kind="stable").tolist():
        while True:
            left = np.flatnonzero(uncovered[j])
            if not left.size:
                break
            k = int(left[0])
            members = [j, k]
            candidates = A[j] & A[k]
            pick = np.flatnonzero(candidates)
            # the candidates joined to the seed by the most uncovered edges first
            score = uncovered[j, pick].astype(np.int64) + uncovered[k, pick]
            for c in pick[np.argsort(-score, kind="stable")].tolist():
                if candidates[c]:
                    members.append(c)
                    candidates &= A[c]
            q = np.asarray(sorted(members), dtype=np.int64)
            uncovered[np.ix_(q, q)] = False
            cliques.append(q)
    return cliques
