"""Initial clustering for AID: one k-means iteration in a low-dimensional feature space.

Park & Klabjan build the initial partition cheaply: a model fitted on a small random sample gives a
low-dimensional summary of every row (for LAD the residual and the response), and one k-means
iteration in that space groups rows that will behave alike in the aggregated problem. Nearest
centres are found with a k-d tree, so the step costs O(n log K), not O(n K).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

__all__ = ["one_step_kmeans", "sample_rows"]


def sample_rows(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """A sorted random sample of ``min(n, size)`` distinct row indices."""
    size = min(n, max(1, int(size)))
    return np.sort(rng.choice(n, size=size, replace=False))


def one_step_kmeans(features, n_clusters: int, rng: np.random.Generator) -> np.ndarray:
    """Labels from one k-means iteration (seed centres, assign, update centres, reassign).

    Parameters
    ----------
    features : ndarray of shape (n, d)
        Low-dimensional row summaries; each column is standardised first.
    n_clusters : int
        Number of seed centres (at most n). Clusters that end up empty disappear, so the result
        may have fewer labels; callers renumber with :meth:`Partition.from_labels`.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of int64, shape (n,)
    """
    Z = np.asarray(features, dtype=float)
    if Z.ndim == 1:
        Z = Z[:, None]
    n = Z.shape[0]
    scale = Z.std(axis=0)
    Z = (Z - Z.mean(axis=0)) / np.where(scale > 0, scale, 1.0)
    k = int(min(max(1, n_clusters), n))
    centres = Z[rng.choice(n, size=k, replace=False)]
    labels = cKDTree(centres).query(Z, k=1)[1]
    counts = np.bincount(labels, minlength=k)
    sums = np.column_stack([np.bincount(labels, weights=z, minlength=k) for z in Z.T])
    used = counts > 0
    centres = sums[used] / counts[used, None]
    return cKDTree(centres).query(Z, k=1)[1].astype(np.int64)

