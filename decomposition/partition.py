"""Partitions of the data rows into clusters, their aggregation, grouped reductions (sum, min,
max per cluster) and their refinement.

A :class:`Partition` is an int label array of length n (values ``0..K-1``, every label used) plus
the cluster sizes. Aggregation is one sparse indicator product (no Python loop over rows; one pass
over the chunks of an out-of-core :class:`~aidopt.data.chunked.ChunkedMatrix`), and refinement splits
clusters by a per-row group id.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from aidopt.data.chunked import ChunkedMatrix

__all__ = ["Partition", "SIGN_PURE"]

#: what the paper's sign condition holding means (the verdict text of the plug-ins that split
#: by :meth:`Partition.split_mixed`)
SIGN_PURE = "no cluster has rows on both sides: F = E at this solution"


@dataclass(frozen=True)
class Partition:
    """Rows ``0..n-1`` partitioned into clusters ``0..K-1``.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        Cluster of every row.
    counts : ndarray of int64, shape (K,)
        ``|C_k|``, all positive.
    """

    labels: np.ndarray
    counts: np.ndarray

    @classmethod
    def from_labels(cls, labels) -> Partition:
        """Build a partition from any integer labels, renumbering them ``0..K-1`` in order."""
        labels = np.asarray(labels)
        if labels.ndim != 1 or labels.size == 0:
            raise ValueError("labels must be a non-empty 1-d array")
        if labels.dtype == bool:
            labels = labels.astype(np.int64)
        if labels.dtype.kind in "iu" and labels.min() >= 0 and labels.max() < 2 * labels.size + 1024:
            # small non-negative labels (every plug-in's): renumber by counting, no sort. The
            # same numbering as np.unique's (by increasing label), with one n-array (the new
            # labels) instead of np.unique's four (sorted copy, order, flags, inverse)
            counts = np.bincount(labels)
            used = counts > 0
            rank = np.cumsum(used, dtype=np.int64) - 1
            return cls(rank[labels], counts[used].astype(np.int64, copy=False))
        uniq, inverse = np.unique(labels, return_inverse=True)
        inverse = inverse.astype(np.int64, copy=False)
        return cls(inverse, np.bincount(inverse, minlength=len(uniq)).astype(np.int64))

    @property
    def n(self) -> int:
        return int(self.labels.size)

    @property
    def n_clusters(self) -> int:
        return int(self.counts.size)

    def indicator(self, weights=None) -> sparse.csr_matrix:
        """Sparse K x n matrix with ``S[k, i] = weights[i]`` (1 by default) for ``i`` in ``C_k``."""
        data = np.ones(self.n) if weights is None else np.asarray(weights, dtype=float)
        return sparse.csr_matrix(
            (data, (self.labels, np.arange(self.n))), shape=(self.n_clusters, self.n)
        )

    def weighted_means(self, weights, *arrays) -> tuple[np.ndarray, list[np.ndarray]]:
        """Cluster weights ``W_k = sum_{i in C_k} s_i`` and weighted means of each array.

        ``arrays`` are (n,) or (n, m) numpy arrays, scipy sparse (n, m) matrices or
        :class:`~aidopt.data.chunked.ChunkedMatrix` (summed by
        :meth:`~aidopt.data.chunked.ChunkedMatrix.group_sum` in one pass); the result for each
        is (K,) or (K, m), a CSR matrix for a sparse array (one sparse product: its stored
        entries are at most the array's).
        """
        weights = np.asarray(weights, dtype=float)
        K = self.n_clusters
        W = np.bincount(self.labels, weights=weights, minlength=K)
        S = None  # the sparse indicator, built only for a matrix in memory (24+ bytes per row)
        means = []
        for a in arrays:
            if isinstance(a, ChunkedMatrix):
                total = a.group_sum(self.labels, weights, K)
            elif sparse.issparse(a):
                S = self.indicator(weights) if S is None else S
                means.append(sparse.csr_matrix(sparse.diags(1.0 / W) @ (S @ a)))
                continue
            elif np.ndim(a) == 1:
                total = np.bincount(self.labels, weights=weights * a, minlength=K)
            else:
                S = self.indicator(weights) if S is None else S
                total = S @ a
            means.append(total / (W[:, None] if total.ndim == 2 else W))
        return W, means

    def sum(self, values) -> np.ndarray:
        """Per-cluster sums of ``values`` (n,) or (n, m): (K,) or (K, m)."""
        values = np.asarray(values, dtype=float)
        if values.ndim == 1:
            return np.bincount(self.labels, weights=values, minlength=self.n_clusters)
        return self.indicator() @ values

    def min(self, values) -> np.ndarray:
        """Per-cluster minima of ``values`` (n,): (K,) (every cluster is non-empty)."""
        return self._reduce(np.minimum, values, np.inf)

    def max(self, values) -> np.ndarray:
        """Per-cluster maxima of ``values`` (n,): (K,)."""
        return self._reduce(np.maximum, values, -np.inf)

    def _reduce(self, ufunc, values, start: float) -> np.ndarray:
        values = np.asarray(values)
        if values.dtype.kind not in "iu":
            values = values.astype(float, copy=False)
        if values.shape != self.labels.shape:
            raise ValueError(f"values must have one entry per element ({self.n}), got shape "
                             f"{values.shape}")
        if values.dtype.kind == "f":
            out = np.full(self.n_clusters, start)
        else:  # integers (e.g. int8 signs) reduced in their own type: no float copy of n values,
            # and ufunc.at's fast path needs equal types (measured 50x slower with a cast)
            info = np.iinfo(values.dtype)
            out = np.full(self.n_clusters, info.max if start > 0 else info.min, dtype=values.dtype)
        ufunc.at(out, self.labels, values)
        return out.astype(float, copy=False)

    def refine(self, group) -> Partition:
        """Split every cluster into the distinct values of ``group`` among its rows.

        Parameters
        ----------
        group : ndarray of int or bool, shape (n,)
            Small non-negative integers (e.g. 0/1 for a residual sign). A cluster whose rows all
            share one group value is unchanged.

        Returns
        -------
        Partition
            Children of cluster ``k`` keep the order of ``k``; an unchanged cluster keeps its rows.
        """
        group = np.asarray(group)
        if group.dtype != bool:  # booleans are added as they are (no int64 copy of n entries)
            group = group.astype(np.int64, copy=False)
        if group.shape != self.labels.shape:
            raise ValueError("group must have one entry per row")
        if group.size and group.min() < 0:
            raise ValueError("group ids must be non-negative")
        n_groups = int(group.max()) + 1 if group.size else 1
        key = self.labels * n_groups
        key += group
        return Partition.from_labels(key)

    def mixed(self, values, eps: float) -> np.ndarray:
        """Boolean (K,): clusters holding a row with ``value > eps`` and one with ``value < -eps``."""
        values = np.asarray(values, dtype=float)
        return (self.max(values) > eps) & (self.min(values) < -eps)

    def split_mixed(self, values, eps: float, isolate: int = 0) -> tuple[Partition | None, int]:
        """Split every mixed cluster (:meth:`mixed`) into its rows with ``value > eps`` and the
        rest: the paper's split step for a sign condition (LAD residuals, SVM margins).

        ``isolate`` > 0: when the mixed clusters' minority sides (the side with fewer rows of
        each) hold at most ``isolate`` rows in all, every such row becomes a cluster of its own
        and the majority side stays one cluster (Portnoy & Koenker's "fixup" of a glob: the few
        rows on the wrong side of a large cluster leave it, and do not form a new mixed cluster).

        Returns ``(new_partition, n_mixed)``, or ``(None, 0)`` when no cluster is mixed.
        """
        mixed = self.mixed(values, eps)
        if not mixed.any():
            return None, 0
        group = mixed[self.labels]
        group &= np.asarray(values) > eps
        if isolate > 0:
            above = np.bincount(self.labels, weights=group, minlength=self.n_clusters)
            majority = above * 2 > self.counts  # per cluster: is the side value > eps the larger?
            minority = np.minimum(above, self.counts - above)[mixed].sum()
            if minority <= isolate:
                alone = mixed[self.labels]
                alone &= group != majority[self.labels]
                labels = self.labels * 2 + group
                labels[alone] = 2 * self.n_clusters + np.arange(int(alone.sum()))
                return Partition.from_labels(labels), int(mixed.sum())
        return self.refine(group), int(mixed.sum())

    def members(self, k: int) -> np.ndarray:
        """Row indices of cluster ``k`` (for inspection and tests; O(n))."""
        return np.flatnonzero(self.labels == k)
