r"""Kernel k-means in a kernel's feature space (Yuan, Li & Zhang 2006, eq. (4)), on a cached or
blocked Gram matrix: :class:`KernelGram` (kernel values of a row set, cached up to
:data:`CACHE_ENTRIES`, else computed :data:`BLOCK_ENTRIES` at a time) and :func:`kernel_kmeans`
(seeded k-means++ in feature space, Lloyd iterations with the within-cluster sums). Support
Cluster Machines (:mod:`aidopt.api.scm`) cluster the majority class with it."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numba
import numpy as np
from scipy import sparse

from aidopt.numerics.kernels import kernel_matrix

__all__ = ['kernel_diagonal', 'KernelGram', 'KMeansResult', 'kernel_kmeans']

logger = logging.getLogger("aidopt.scm")

#: kernel entries kept in memory: the whole training Gram matrix is cached when it fits (256 MB,
#: n <= 5,792 rows), and so is the Gram matrix of a shrunk round that fits: the peak is two such
#: matrices, at most ``2 * 8 * CACHE_ENTRIES`` bytes (512 MB). Read when a :class:`KernelGram` is
#: made: set ``aidopt.numerics.kernel_kmeans.CACHE_ENTRIES`` lower on a small machine, higher to cache larger sets
CACHE_ENTRIES = 1 << 25
#: kernel entries computed per block when the Gram matrix is not cached (32 MB)
BLOCK_ENTRIES = 1 << 22


# --------------------------------------------------------------------------- kernel values


def _span(idx):
    """``idx`` as a slice when it is a contiguous increasing range (a view of a cached matrix
    instead of a gather), else unchanged. ``slice`` and ``None`` (all) pass through."""
    if idx is None or isinstance(idx, slice):
        return slice(None) if idx is None else idx
    idx = np.asarray(idx)
    if idx.size and idx[-1] - idx[0] == idx.size - 1 and (idx.size == 1 or bool(np.all(np.diff(idx) == 1))):
        return slice(int(idx[0]), int(idx[-1]) + 1)
    return idx


def _size(idx, n) -> int:
    return len(range(n)[idx]) if isinstance(idx, slice) else int(np.asarray(idx).size)


def kernel_diagonal(kernel, gamma=None, degree: int = 3, coef0: float = 1.0):
    """``X -> K(x_i, x_i)`` for the named kernels of :mod:`aidopt.models.kernel_svm` without
    evaluating any pair: 1 for ``"rbf"``, :math:`\\|x_i\\|^2` for ``"linear"`` and
    :math:`(\\gamma\\|x_i\\|^2 + c_0)^d` for ``"poly"``; ``None`` for a callable kernel."""
    if kernel == "rbf":
        return lambda X: np.ones(X.shape[0])
    if kernel == "linear":
        return lambda X: np.einsum("ij,ij->i", X, X)
    if kernel == "poly":
        return lambda X: (gamma * np.einsum("ij,ij->i", X, X) + coef0) ** degree
    return None


class KernelGram:
    """Kernel values among the rows of ``X``, cached as one matrix when it fits.

    Row and column arguments are index arrays or slices; a contiguous range of a cached matrix is
    read as a view.

    Parameters
    ----------
    X : ndarray of shape (n, m)
    kfun : callable
        ``kfun(A, B)`` -> ``len(A) x len(B)`` kernel matrix.
    explicit : bool
        The kernel is the linear one, :math:`K = XX^\\top`: products are taken through the
        features (:math:`K M = X (X^\\top M)`), nothing of size n x n is formed.
    cache_entries : int, optional
        Cache the n x n matrix when ``n * n`` is at most this (default :data:`CACHE_ENTRIES`, read
        at construction).
    diag : callable, optional
        ``diag(A)`` -> :math:`K(a_i, a_i)` (:func:`kernel_diagonal`); without it an uncached
        diagonal is read from small blocks of ``kfun``.
    deadline : float, optional
        A ``time.perf_counter()`` value: every block of kernel values asked for after it (and
        the cached matrix, computed in blocks) raises
        :class:`~aidopt.solvers.TimeLimitReached`, so an O(n^2) pass stops at a run's time
        limit. The attribute may be set to None later (work that must finish).

    Raises
    ------
    TimeLimitReached
        The deadline passed while the cached matrix was computed.
    """

    def __init__(self, X, kfun, *, explicit: bool = False, cache_entries: int | None = None,
                 check: bool = True, K=None, diag=None, deadline: float | None = None):
        self.X, self.kfun, self.explicit, self.check = X, kfun, explicit, check
        self.cache_entries = CACHE_ENTRIES if cache_entries is None else int(cache_entries)
        self.diag_fun = diag
        self.deadline = deadline
        self.n = X.shape[0]
        self.K = K
        if K is None and not explicit and self.n * self.n <= self.cache_entries:
            K = np.empty((self.n, self.n))
            step = max(1, BLOCK_ENTRIES // max(1, self.n))
            for start in range(0, self.n, step):  # in blocks: the deadline is checked between
                K[start:start + step] = self._values(X[start:start + step], X)
            self.K = K

    def _check_clock(self) -> None:
        """Raise :class:`~aidopt.solvers.TimeLimitReached` once the deadline has passed."""
        if self.deadline is not None and time.perf_counter() > self.deadline:
            from aidopt.solvers import TimeLimitReached

            raise TimeLimitReached(f"time limit reached in the kernel values of {self.n} rows")

    def _values(self, A, B) -> np.ndarray:
        """``kfun(A, B)``; checked (shape, finite) unless the kernel is known to be safe."""
        self._check_clock()
        return kernel_matrix(self.kfun, A, B) if self.check else self.kfun(A, B)

    def subset(self, rows) -> KernelGram:
        """The Gram of ``X[rows]``: a cached matrix is sliced, not recomputed; otherwise the
        subset's matrix is cached when it fits (a shrunk round's rows often do)."""
        rows = _span(rows)
        like = dict(explicit=self.explicit, check=self.check, cache_entries=self.cache_entries,
                    diag=self.diag_fun, deadline=self.deadline)
        if self.K is None:
            return KernelGram(self.X[rows], self.kfun, **like)
        K = self.K[rows, rows] if isinstance(rows, slice) else self.K[np.ix_(rows, rows)]
        return KernelGram(self.X[rows], self.kfun, K=K, **like)

    def block(self, rows, cols) -> np.ndarray:
        """``K[rows][:, cols]`` as a dense array (a view when both are ranges of a cached K)."""
        self._check_clock()
        rows, cols = _span(rows), _span(cols)
        if self.K is not None:
            if isinstance(rows, slice) or isinstance(cols, slice):
                return self.K[rows][:, cols] if isinstance(rows, slice) else self.K[:, cols][rows]
            return self.K[np.ix_(rows, cols)]
        if self.explicit:
            return self.X[rows] @ self.X[cols].T
        return self._values(self.X[rows], self.X[cols])

    def diag(self, rows) -> np.ndarray:
        """:math:`K_{ii}` for ``rows``."""
        rows = np.arange(self.n)[_span(rows)]
        if self.K is not None:
            return self.K[rows, rows].copy()
        if self.explicit:
            Xr = self.X[rows]
            return np.einsum("ij,ij->i", Xr, Xr)
        if self.diag_fun is not None:
            return np.asarray(self.diag_fun(self.X[rows]), dtype=float)
        out = np.empty(rows.size)  # a callable kernel: the diagonals of small blocks
        for start in range(0, rows.size, 32):
            part = rows[start:start + 32]
            out[start:start + 32] = np.diagonal(self._values(self.X[part], self.X[part]))
        return out

    def times(self, rows, cols, M) -> np.ndarray:
        """``K[rows][:, cols] @ M`` for a dense or sparse ``M`` (vector or matrix), computed in row
        blocks (through the features for the linear kernel)."""
        rows, cols = _span(rows), _span(cols)
        n_rows, n_cols = _size(rows, self.n), _size(cols, self.n)
        vector = not sparse.issparse(M) and np.ndim(M) == 1
        M2 = M if sparse.issparse(M) else np.asarray(M, dtype=float).reshape(n_cols, -1)
        if self.explicit:
            F = np.asarray(M2.T @ self.X[cols])  # p x m: the features of the columns combined
            out = self.X[rows] @ F.T
            return out[:, 0] if vector else out
        index = np.arange(self.n)[rows]
        out = np.empty((n_rows, M2.shape[1]))
        step = max(1, BLOCK_ENTRIES // max(1, n_cols))
        for start in range(0, n_rows, step):
            Kb = self.block(index[start:start + step], cols)
            out[start:start + step] = np.asarray(M2.T @ Kb.T).T
        return out[:, 0] if vector else out

    def sandwich(self, R) -> np.ndarray:
        """:math:`R^\\top K R` for a sparse ``R`` (n x k), in row blocks over the rows that
        carry weight (pseudo-centres: k rows)."""
        R = sparse.csr_matrix(R)
        used = np.unique(R.nonzero()[0])
        Ru = R[used]
        if self.explicit:
            F = np.asarray(Ru.T @ self.X[used])
            return F @ F.T
        out = np.zeros((R.shape[1], R.shape[1]))
        step = max(1, BLOCK_ENTRIES // max(1, used.size))
        for start in range(0, used.size, step):
            Kb = self.block(used[start:start + step], used)
            out += np.asarray(Ru[start:start + step].T @ np.asarray(Ru.T @ Kb.T).T)
        return 0.5 * (out + out.T)


# --------------------------------------------------------------------------- kernel k-means


@dataclass
class KMeansResult:
    """Labels ``0..k-1`` (every cluster non-empty), the objective (4) :math:`J`, the Lloyd
    iterations run, whether the last one changed no label, and every row's within-cluster kernel
    sum :math:`r_i = \\sum_{j \\in \\pi(i)} K_{ij}` (for the pseudo-centres (10))."""

    labels: np.ndarray
    objective: float
    iterations: int
    converged: bool
    within: np.ndarray


def _indicator(labels, k, normalized: bool):
    sizes = np.bincount(labels, minlength=k).astype(float)
    values = 1.0 / sizes[labels] if normalized else np.ones(labels.size)
    return sparse.csr_matrix((values, (np.arange(labels.size), labels)), shape=(labels.size, k))


def _within_sums(g: KernelGram, labels, k) -> np.ndarray:
    """:math:`r_i = \\sum_{j \\in \\pi(i)} K_{ij}` over all rows of ``g``: only kernel values
    between rows of one cluster are read (the pairs themselves from a cached matrix, else the
    kernel on groups of whole clusters of about 256 rows)."""
    if g.explicit:
        sums = np.asarray(_indicator(labels, k, False).T @ g.X)  # k x m cluster sums
        return np.einsum("ij,ij->i", g.X, sums[labels])
    order = np.argsort(labels, kind="stable")
    ordered = labels[order]
    sizes = np.bincount(labels, minlength=k)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]  # first position of each cluster in ``order``
    pairs = int((sizes.astype(np.int64) ** 2).sum())
    if g.K is not None and pairs <= BLOCK_ENTRIES:
        reps = sizes[ordered]  # row ordered[p] pairs with the reps members of its cluster
        i = np.repeat(order, reps)
        offset = np.arange(pairs) - np.repeat(np.cumsum(reps) - reps, reps)
        j = order[np.repeat(starts[ordered], reps) + offset]
        return np.bincount(i, weights=g.K[i, j], minlength=labels.size)
    group = starts[np.flatnonzero(sizes)] // 256
    cut = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    bounds = np.r_[starts[np.flatnonzero(sizes)][cut], labels.size]
    r = np.empty(labels.size)
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        pos, lab = order[a:b], ordered[a:b]
        step = max(1, BLOCK_ENTRIES // pos.size)
        for s in range(0, pos.size, step):
            Kb = g.block(pos[s:s + step], pos)
            r[pos[s:s + step]] = (Kb * (lab[s:s + step, None] == lab[None, :])).sum(axis=1)
    return r


def _seed(g: KernelGram, k, rng, diag) -> np.ndarray:
    """k-means++ seeding in feature space (squared distances
    :math:`K_{ii} + K_{cc} - 2K_{ic}`); returns each row's nearest seed."""
    n = g.n
    first = int(rng.integers(n))
    d2 = np.maximum(diag + diag[first] - 2.0 * g.block(None, [first])[:, 0], 0.0)
    closest = np.zeros(n, dtype=np.int64)
    taken = np.zeros(n, dtype=bool)
    taken[first] = True
    for c in range(1, k):
        total = float(d2.sum())
        if total > 0:
            idx = min(int(np.searchsorted(np.cumsum(d2), rng.random() * total, side="right")), n - 1)
        else:  # every row coincides with a seed (duplicates): any row not taken yet
            idx = int(rng.choice(np.flatnonzero(~taken)))
        taken[idx] = True
        d = np.maximum(diag + diag[idx] - 2.0 * g.block(None, [idx])[:, 0], 0.0)
        better = d < d2
        better[idx] = True
        d2[better] = d[better]
        closest[better] = c
    return closest


@numba.njit(cache=True)
def _nearest_centroid(K, labels, inv_sizes, h, diag, new, dist):  # pragma: no cover - compiled
    """For every row i of the kernel block ``K`` (rows x all n): the cluster c minimizing
    :math:`\\|\\phi_i - m_c\\|^2 = K_{ii} - 2\\sum_{j \\in \\pi_c} K_{ij}/|\\pi_c| + h_c`,
    reading each kernel row once."""
    k = h.shape[0]
    G = np.empty(k)
    for i in range(K.shape[0]):
        G[:] = 0.0
        for j in range(K.shape[1]):
            G[labels[j]] += K[i, j]
        best, value = 0, np.inf
        for c in range(k):
            v = h[c] - 2.0 * G[c] * inv_sizes[c]
            if v < value:
                best, value = c, v
        new[i] = best
        dist[i] = max(value + diag[i], 0.0)


def _assign(g: KernelGram, labels, k, diag, within):
    """One Lloyd assignment: every row to the centroid nearest in feature space; returns the new
    labels and each row's squared distance to its (old-partition) centroid."""
    sizes = np.bincount(labels, minlength=k).astype(float)
    h = np.bincount(labels, weights=within, minlength=k) / sizes**2  # ||m_c||^2
    new = np.empty(g.n, dtype=np.int64)
    dist = np.empty(g.n)
    if g.explicit:
        centroids = np.asarray(_indicator(labels, k, True).T @ g.X)
        step = max(1, BLOCK_ENTRIES // max(1, k))
        for s in range(0, g.n, step):
            block = slice(s, min(g.n, s + step))
            D = h[None, :] - 2.0 * (g.X[block] @ centroids.T)
            new[block] = D.argmin(axis=1)
            dist[block] = np.maximum(D[np.arange(D.shape[0]), new[block]] + diag[block], 0.0)
        return new, dist
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    step = max(1, BLOCK_ENTRIES // max(1, g.n))
    for s in range(0, g.n, step):
        block = slice(s, min(g.n, s + step))
        # one memory layout for the compiled kernel: a copy of a cached block's view is cheap
        _nearest_centroid(np.ascontiguousarray(g.block(block, None)), labels, 1.0 / sizes, h,
                          diag[block], new[block], dist[block])
    return new, dist


def _fill_empty(labels, dist, k) -> None:
    """Give every empty cluster the row farthest from its centroid among clusters of two or more
    rows (in place)."""
    counts = np.bincount(labels, minlength=k)
    empty = np.flatnonzero(counts == 0)
    if not empty.size:
        return
    order = np.argsort(-dist, kind="stable")
    pointer = 0
    for c in empty:
        while counts[labels[order[pointer]]] < 2:
            pointer += 1
        i = order[pointer]
        counts[labels[i]] -= 1
        labels[i] = c
        counts[c] = 1
        dist[i] = 0.0
        pointer += 1


def kernel_kmeans(gram: KernelGram, rows, k: int, rng, max_iter: int = 10) -> KMeansResult:
    """Kernel k-means (4) of ``rows`` of ``gram`` into ``k`` non-empty clusters: k-means++
    seeding and Lloyd iterations in feature space (Dhillon, Guan & Kulis 2004), the kernel read in
    blocks.

    The paper uses Dhillon et al.'s multilevel graph algorithm (graclus) on an
    :math:`\\epsilon`-ball sparsified kernel graph; this is the plain algorithm it accelerates,
    on the dense kernel (Theorem 1: the same objective).
    """
    g = gram.subset(rows)
    n = g.n
    if not 1 <= k <= n:
        raise ValueError(f"k must be in 1..{n} (the rows to cluster), got {k}")
    diag = g.diag(None)
    if k == n:  # every row its own cluster: nothing to iterate
        return KMeansResult(np.arange(n), 0.0, 0, True, diag)
    labels = _seed(g, k, rng, diag)
    _fill_empty(labels, diag.copy(), k)
    converged, iterations = False, 0
    while iterations < max_iter and not converged:
        iterations += 1
        new, dist = _assign(g, labels, k, diag, _within_sums(g, labels, k))
        _fill_empty(new, dist, k)
        converged = bool(np.array_equal(new, labels))
        labels = new
    within = _within_sums(g, labels, k)
    sizes = np.bincount(labels, minlength=k).astype(float)
    objective = float(diag.sum() - (np.bincount(labels, weights=within, minlength=k) / sizes).sum())
    return KMeansResult(labels, max(objective, 0.0), iterations, converged, within)
