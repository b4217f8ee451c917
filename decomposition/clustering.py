"""Initial clustering for AID: one k-means iteration in a low-dimensional feature space.

Park & Klabjan build the initial partition cheaply: a model fitted on a small random sample gives a
low-dimensional summary of every row (for LAD the residual and the response), and one k-means
iteration in that space groups rows that will behave alike in the aggregated problem. Nearest
centres are found with a k-d tree in up to three dimensions (O(n log K)); in more (kernel AID
clusters the features themselves), where a k-d tree degenerates to a slow exhaustive search, with
one matrix product per block of rows (O(n K d) flops through BLAS).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.spatial import cKDTree

__all__ = ["kmeans_rows", "one_step_kmeans", "sample_rows", "SKETCH_DIMENSIONS"]

#: columns of the random sketch on which :func:`kmeans_rows` clusters sparse rows
SKETCH_DIMENSIONS = 16


def sample_rows(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """A sorted random sample of ``min(n, size)`` distinct row indices."""
    size = min(n, max(1, int(size)))
    return np.sort(rng.choice(n, size=size, replace=False))


def one_step_kmeans(features, n_clusters: int, rng: np.random.Generator) -> np.ndarray:
    """Labels from one k-means iteration (seed centres, assign, update centres, reassign).

    Parameters
    ----------
    features : ndarray or scipy sparse matrix of shape (n, d)
        Low-dimensional row summaries (or kernel AID's rows themselves); each column is
        standardised first. Sparse rows stay sparse (:func:`_one_step_kmeans_sparse`).
    n_clusters : int
        Number of seed centres (at most n). Clusters that end up empty disappear, so the result
        may have fewer labels; callers renumber with :meth:`Partition.from_labels`.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of int64, shape (n,)
    """
    if sparse.issparse(features):
        return _one_step_kmeans_sparse(features, n_clusters, rng)
    Z = np.asarray(features, dtype=float)
    if Z.ndim == 1:
        Z = Z[:, None]
    n = Z.shape[0]
    scale = Z.std(axis=0)
    Z = Z - Z.mean(axis=0)  # one standardised copy of the features, scaled in place
    Z /= np.where(scale > 0, scale, 1.0)
    k = int(min(max(1, n_clusters), n))
    centres = Z[rng.choice(n, size=k, replace=False)]
    labels = _nearest(Z, centres)
    counts = np.bincount(labels, minlength=k)
    sums = np.column_stack([np.bincount(labels, weights=z, minlength=k) for z in Z.T])
    used = counts > 0
    centres = sums[used] / counts[used, None]
    return _nearest(Z, centres)


def _one_step_kmeans_sparse(features, n_clusters: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`one_step_kmeans` on scipy sparse rows, never densified: the columns are scaled by
    their standard deviations (from the stored entries) but not centred (a shift of every point
    changes no distance, and centring would fill every entry); only the k centres are dense.
    The same draws of ``rng`` as the dense version, hence the same labels up to rounding."""
    Z = sparse.csr_matrix(features, dtype=float)
    n = Z.shape[0]
    mean = np.asarray(Z.mean(axis=0)).ravel()
    scale = np.sqrt(np.maximum(np.asarray(Z.multiply(Z).mean(axis=0)).ravel() - mean * mean, 0.0))
    Z = sparse.csr_matrix(Z @ sparse.diags(1.0 / np.where(scale > 0, scale, 1.0)))
    k = int(min(max(1, n_clusters), n))
    centres = Z[rng.choice(n, size=k, replace=False)].toarray()  # k x m: the centres only
    labels = _nearest(Z, centres)
    counts = np.bincount(labels, minlength=k)
    indicator = sparse.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(k, n))
    used = counts > 0
    centres = (indicator @ Z)[np.flatnonzero(used)].toarray() / counts[used, None]
    return _nearest(Z, centres)


def kmeans_rows(X, n_clusters: int, rng: np.random.Generator, iterations: int = 10) -> np.ndarray:
    """Labels of a k-means (k-means++ seeds, ``iterations`` Lloyd steps, SciPy's ``kmeans2``)
    of the rows of ``X``; clusters that end up empty disappear (callers renumber with
    :meth:`Partition.from_labels`).

    A dense X is clustered as it is. A scipy sparse X is clustered on a Gaussian sketch
    ``X G / sqrt(d)`` (G m x d, ``d = SKETCH_DIMENSIONS``; distances are kept up to a small
    factor, Johnson-Lindenstrauss), one sparse product: an n x d array instead of the n x m
    one. Only the initial partition of AID depends on it.
    """
    import warnings

    from scipy import sparse
    from scipy.cluster.vq import kmeans2

    if sparse.issparse(X):
        d = SKETCH_DIMENSIONS
        X = np.asarray(X @ rng.standard_normal((X.shape[1], d))) / np.sqrt(d)
    with warnings.catch_warnings():  # empty clusters disappear in from_labels
        warnings.simplefilter("ignore")
        return kmeans2(X, int(n_clusters), iter=iterations, minit="++", seed=rng)[1]


_KD_TREE_DIMENSIONS = 3
_BLOCK_ENTRIES = 1 << 20
#: rows per k-d tree query (the query returns distances and indices for every row it is given)
_QUERY_ROWS = 1 << 18


def _nearest(Z: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Index (int64) of the nearest centre of every row of ``Z``: a k-d tree in few dimensions,
    else ``argmin_c ||c||^2 - 2 z'c``; both by blocks of rows."""
    labels = np.empty(Z.shape[0], dtype=np.int64)
    if Z.shape[1] <= _KD_TREE_DIMENSIONS and not sparse.issparse(Z):
        tree = cKDTree(centres)
        for lo in range(0, Z.shape[0], _QUERY_ROWS):
            labels[lo:lo + _QUERY_ROWS] = tree.query(Z[lo:lo + _QUERY_ROWS], k=1)[1]
        return labels
    half = 0.5 * np.einsum("ij,ij->i", centres, centres)
    step = max(1, _BLOCK_ENTRIES // centres.shape[0])
    for lo in range(0, Z.shape[0], step):  # a sparse Z: sparse times dense, a dense block
        labels[lo:lo + step] = np.argmin(half - np.asarray(Z[lo:lo + step] @ centres.T), axis=1)
    return labels

