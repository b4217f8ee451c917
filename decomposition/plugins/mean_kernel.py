r"""Mean kernels of kernel AID's clusters, computed column by column on demand.

Kernel AID (Park & Klabjan 2016, Appendix B) needs, for a cluster :math:`C_l` with weight
:math:`W_l = \sum_{j \in C_l} s_j`, the kernel sums of every row to it,

.. math:: G_{il} = \sum_{j \in C_l} s_j K(x_i, x_j), \qquad H_{il} = G_{il} / W_l,
          \qquad \bar K_{kl} = \sum_{i \in C_k} s_i G_{il} / (W_k W_l),

one column of G costing :math:`n |C_l|` kernel values. Two facts keep the total small:

* only clusters with :math:`\bar\alpha_l > 0` enter the decision values
  :math:`f = \sum_l \bar\alpha_l y_l H_{\cdot l} + b`, and only the clusters of the aggregated
  QP's working set need their columns (:meth:`MeanKernel.kbar` gives :math:`\bar K_{\cdot W}`,
  every row of :math:`\bar K` against the working set W, which is all an optimality check of the
  other clusters needs);
* a split cluster's column is the sum of its two children's: the smaller child is computed, the
  larger one is the parent's column minus it (at most half the rows of a split are evaluated).

:class:`KernelSums` holds the computed columns of G (append-only, shared by the partitions of one
run); :class:`MeanKernel` is one partition's view of it.
"""

from __future__ import annotations

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np
from aidopt.decomposition.partition import Partition
from aidopt.decomposition.plugins._kernel_loops import TILE as _TILE
from aidopt.decomposition.plugins._kernel_loops import cluster_sums_range as _cluster_sums_range
from aidopt.decomposition.plugins._kernel_loops import columns_dot as _columns_dot
from aidopt.decomposition.plugins._kernel_loops import gather_block as _gather_block
from aidopt.decomposition.plugins._kernel_loops import inherit_sums as _inherit_sums
from aidopt.decomposition.plugins._kernel_loops import segment_sums as _segment_sums
from aidopt.decomposition.plugins._kernel_loops import subtract_columns as _subtract_columns
from aidopt.decomposition.plugins._kernel_loops import symmetrise_tiles as _symmetrise_tiles
from aidopt.decomposition.threads import blas_limit, budget

__all__ = ["KernelSums", "MeanKernel"]

_BLOCK_ENTRIES = 1 << 20  # kernel values per block (8 MB of float64: stays in cache)
_RESERVE_BYTES = 1 << 32  # address space reserved for G up front (pages are committed on use)


class KernelSums:
    r"""Columns :math:`G_{\cdot l} = \sum_{j \in C_l} s_j K(\cdot, x_j)` of clusters of the
    rows of ``X``, kept in one Fortran-ordered array (a column is never changed while it is
    held, so every partition of a run can refer to it by its slot).

    Parameters
    ----------
    X : ndarray (n, m)
    s : ndarray (n,)
        Row weights.
    kfun : callable
        ``kfun(A, B)`` -> the ``len(A) x len(B)`` kernel matrix.
    gamma : float or None
        With a number, the kernel is the RBF :math:`\exp(-\gamma\|x - z\|^2)`, computed in
        place from one matrix product per block (``kfun`` unused).
    max_columns : int or None
        How many columns may be held (``None``: no limit). Past it, the columns used least
        recently are dropped (their slots reused; a view that needs one again recomputes it),
        except those the current request needs: one request may exceed the limit.
    """

    def __init__(self, X, s, kfun, gamma=None, max_columns=None):
        self.X, self.s, self.kfun, self.gamma = X, s, kfun, gamma
        n = X.shape[0]
        if gamma is not None:  # -gamma ||x - z||^2 = [2 gamma x, -gamma x'x, 1] . [z, 1, -gamma z'z]
            m = X.shape[1]
            self.A = np.empty((n, m + 2))  # kept for the run: n x (m + 2) more than X
            np.multiply(X, 2.0 * gamma, out=self.A[:, :m])
            self.A[:, m], self.A[:, m + 1] = -gamma * np.einsum("ij,ij->i", X, X), 1.0
        if max_columns is not None and max_columns < 1:
            raise ValueError(f"max_columns must be at least 1, got {max_columns!r}")
        self.max_columns = max_columns
        # at most 2n - 1 clusters are ever created; untouched columns of np.empty cost no
        # memory, so the whole allowance is reserved at once (no copy when it fills up)
        width = min(2 * n, max_columns if max_columns is not None else _RESERVE_BYTES // (8 * n))
        self.G = np.empty((n, max(16, width)), order="F")
        self.generation = np.zeros(self.G.shape[1], dtype=np.int64)  #: bumped when reused
        self.last_used = np.zeros(self.G.shape[1], dtype=np.int64)  #: request clock, per slot
        self.clock = 0
        self.used = 0
        self.free: set[int] = set()  # released slots
        self.evaluations = 0  #: kernel values computed so far
        self.dropped = 0  #: columns dropped to stay within max_columns

    def touch(self, slots) -> None:
        """Mark ``slots`` as used by the current request (for least-recently-used dropping)."""
        self.clock += 1
        slots = np.asarray(slots, dtype=np.int64)
        self.last_used[slots[slots >= 0]] = self.clock

    def _reserve(self, count: int, keep=()) -> np.ndarray:
        """Slots for ``count`` new columns: released ones first (not in ``keep``), then new ones
        while ``max_columns`` allows, then those of the columns used least recently (not in
        ``keep``), then new ones again (the array doubles when full). A reused slot's
        generation goes up, so a view still holding it sees that its column is gone."""
        keep = np.asarray(keep, dtype=np.int64).ravel()
        held = set(keep[keep >= 0].tolist())
        # a released slot still holds its column until reused, and an old view may be reading
        # it in this very request: those in keep stay
        reused = list(itertools.islice((q for q in self.free if q not in held), count))
        self.free.difference_update(reused)
        room = None if self.max_columns is None else max(0, self.max_columns - self.used)
        if room is not None and count - len(reused) > room:  # (not those just taken)
            reused += self._least_recent(count - len(reused) - room, np.r_[keep, reused])
        reused = np.array(reused, dtype=np.int64)
        self.generation[reused] += 1
        need = self.used + count - reused.size
        if need > self.G.shape[1]:  # doubling, but not past max_columns unless need is
            width = max(need, 2 * self.G.shape[1])
            if self.max_columns is not None:
                width = min(width, max(need, self.max_columns))
            G = np.empty((self.G.shape[0], width), order="F")
            G[:, :self.used] = self.G[:, :self.used]
            self.G = G
            grow = width - self.generation.size
            self.generation = np.r_[self.generation, np.zeros(grow, dtype=np.int64)]
            self.last_used = np.r_[self.last_used, np.zeros(grow, dtype=np.int64)]
        slots = np.r_[reused, np.arange(self.used, need, dtype=np.int64)]
        self.used = need
        self.last_used[slots] = self.clock
        return slots

    def _least_recent(self, count: int, keep) -> list[int]:
        """Up to ``count`` held slots, not in ``keep``, used least recently (dropped)."""
        held = np.ones(self.used, dtype=bool)
        held[list(self.free)] = False
        keep = np.asarray(keep, dtype=np.int64)
        held[keep[(keep >= 0) & (keep < self.used)]] = False
        candidates = np.flatnonzero(held)
        if candidates.size > count:
            order = np.argsort(self.last_used[candidates], kind="stable")
            candidates = candidates[order[:count]]
        self.dropped += candidates.size
        return [int(q) for q in candidates]

    def valid(self, slots, generations) -> np.ndarray:
        """Bool: the slots hold the columns they held at ``generations`` (-1: no slot)."""
        slots = np.asarray(slots)
        return (slots >= 0) & (self.generation[np.maximum(slots, 0)] == generations)

    def release(self, slots, generations) -> None:
        """Columns no partition will read again (those still at ``generations``): their
        slots are reused."""
        keep = self.valid(slots, generations)
        self.free.update(int(q) for q in np.asarray(slots)[keep])

    def compute(self, rows: np.ndarray, group: np.ndarray, count: int, keep=()) -> np.ndarray:
        """New columns, one per group: column ``g`` sums ``s_j K(., x_j)`` over the ``rows``
        with ``group == g`` (every group in ``0..count-1`` non-empty). Returns their slots;
        the columns in ``keep`` are not dropped to make room."""
        slots = self._reserve(count, keep)
        if count == 0:
            return slots
        order = np.argsort(group, kind="stable")
        rows, group = rows[order], group[order]
        starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
        Xr, sr = self.X[rows], self.s[rows]
        n, r = self.X.shape[0], rows.size
        step = max(1, _BLOCK_ENTRIES // r)
        if self.gamma is not None:
            m = Xr.shape[1]  # [z, 1, -gamma z'z]: A's columns m + 1 and m, swapped
            B = np.hstack([Xr, np.ones((r, 1)), self.A[rows, m:m + 1]])
        upper = 1.0 if self.gamma is not None else np.inf  # exp(min(e, 0)) = min(exp(e), 1)
        G = self.G
        ends = np.r_[starts[1:], r]

        def block(lo):
            # E[i, j] = K(x_{lo+i}, x_{rows[j]}), Fortran-ordered: the sums below run down
            # contiguous columns of E and G
            hi = min(n, lo + step)
            if self.gamma is not None:  # -gamma ||x - z||^2 in one product, exp in place
                E = (B @ self.A[lo:hi].T).T
                np.exp(E, out=E)
            else:  # a kernel is symmetric: K(X_block, Xr) = K(Xr, X_block)'
                E = np.asfortranarray(np.asarray(self.kfun(Xr, self.X[lo:hi]), dtype=float).T)
            _segment_sums(E, sr, starts, ends, G, lo, slots, upper)

        blocks = range(0, n, step)
        workers = min(_workers(), len(blocks))
        if workers > 1 and self.gamma is not None:
            # numpy releases the GIL in the product, exp and sums: each of the workers takes the
            # next block from one shared iterator when it is free, with BLAS single-threaded
            # inside (else its threads and ours compete for the cores); after an error the
            # others stop at their next block, and all have stopped before this returns
            todo, failed = iter(blocks), threading.Event()

            def work():
                for lo in todo:
                    if failed.is_set():
                        return
                    try:
                        block(lo)
                    except BaseException:
                        failed.set()
                        raise

            with blas_limit(1):
                tasks = [_pool().submit(work) for _ in range(workers)]
                wait(tasks)
                for task in tasks:
                    task.result()
        else:
            for lo in blocks:
                block(lo)
        self.evaluations += n * r
        return slots

    def difference(self, a: np.ndarray, b: np.ndarray, keep=()) -> np.ndarray:
        """New columns ``G[:, a] - G[:, b]`` (a parent's column minus one child's: the other
        child's). Returns their slots; neither ``a``, ``b`` nor ``keep`` is dropped to make
        room."""
        slots = self._reserve(len(a), np.r_[np.asarray(keep, dtype=np.int64), a, b])
        _by_ranges(_subtract_columns, slots.size, self.G, np.asarray(a, dtype=np.int64),
                   np.asarray(b, dtype=np.int64), slots)
        return slots


class MeanKernel:
    """One partition's mean kernels, computed on demand from a shared :class:`KernelSums`.

    Parameters
    ----------
    sums : KernelSums
    partition : Partition
    previous : MeanKernel or None
        The view of the partition this one refines: an unchanged cluster keeps its column, and a
        split cluster whose column is known gives its larger child by difference.
    """

    def __init__(self, sums: KernelSums, partition: Partition, previous: MeanKernel | None = None):
        self.sums, self.partition = sums, partition
        K = partition.n_clusters
        self.W = np.bincount(partition.labels, weights=sums.s, minlength=K)
        self.slot = np.full(K, -1, dtype=np.int64)  # index arrays: int64, as the loops take
        self.gen = np.full(K, -1, dtype=np.int64)  # generation of each slot when this view took it
        self.parent = None  # cluster of the previous partition holding each cluster's rows
        self.parent_slot = np.full(K, -1, dtype=np.int64)
        self.parent_gen = np.full(K, -1, dtype=np.int64)
        self.sibling = np.full(K, -1, dtype=np.int64)
        # cluster sums S[k, l] = sum_{i in C_k} s_i G[i, l] = W_k W_l Kbar[k, l] computed so
        # far: column l is _S[:, _col[l]]
        self._S = np.empty((K, 0), order="F")
        self._col = np.full(K, -1, dtype=np.int64)
        self._previous = None
        self._frozen = False
        if previous is not None:
            self._inherit(previous)

    def _inherit(self, previous: MeanKernel) -> None:
        self._retire(previous)
        old, new = previous.partition, self.partition
        if old.labels.shape != new.labels.shape:
            return
        first = np.unique(new.labels, return_index=True)[1]
        parent = old.labels[first]
        if not np.array_equal(parent[new.labels], old.labels):
            return  # not a refinement of the previous partition: every column from scratch
        self.parent = parent
        same = new.counts == old.counts[parent]
        self._same = same  # the cluster is its parent, unchanged
        self.slot[same] = previous.slot[parent[same]]
        self.gen[same] = previous.gen[parent[same]]
        split = np.flatnonzero(~same)
        self.parent_slot[split] = previous.slot[parent[split]]
        self.parent_gen[split] = previous.gen[parent[split]]
        # siblings: the two children of a parent split in two (a parent split in more parts
        # has its children computed directly)
        children = np.bincount(parent[split], minlength=old.n_clusters)
        pairs = split[children[parent[split]] == 2]
        by_parent = pairs[np.argsort(parent[pairs], kind="stable")]
        self.sibling[by_parent[0::2]] = by_parent[1::2]
        self.sibling[by_parent[1::2]] = by_parent[0::2]
        # cluster sums summed over rows: the smaller of two children (ties: the lower index),
        # whose sibling's are the parent's minus them, and every other split child
        sib = self.sibling[pairs]
        small = pairs[_lexless(new.counts[pairs], pairs, new.counts[sib], sib)]
        self._summed = np.union1d(small, split[children[parent[split]] != 2])
        self._summed_rows = np.flatnonzero(np.isin(new.labels, self._summed))
        self._previous = previous

    def _retire(self, previous: MeanKernel) -> None:
        """``previous`` is done (solved and lifted): keep one generation of views alive, drop
        the cluster sums of the one before it (the driver may still hold it as its best or
        bound iterate; it recomputes them if asked), and release the columns of the clusters
        ``previous``'s own refinement split (nobody derives from them any more; a view still
        holding one recomputes it if asked)."""
        if previous._frozen:
            return  # retired by an earlier view (a second view from one previous one)
        previous._frozen = True
        if previous._previous is not None:  # two generations back: nobody inherits its sums
            previous._previous._forget_sums()
        previous._previous = None
        self.sums.release(previous.parent_slot, previous.parent_gen)

    def _forget_sums(self) -> None:
        """Drop the cluster sums (K x columns asked for: the largest array of a late view); a
        later request computes them again from the columns."""
        self._S = np.empty((self.n_clusters, 0), order="F")
        self._col[:] = -1

    @property
    def n_clusters(self) -> int:
        return self.partition.n_clusters

    def ensure(self, ks) -> np.ndarray:
        """Compute the missing columns of clusters ``ks`` (also those whose slot was reused
        since); return their slots."""
        ks = np.asarray(ks, dtype=np.int64)
        check = np.unique(np.r_[ks, self.sibling[ks]])
        check = check[check >= 0]
        stale = check[(self.slot[check] >= 0) & ~self.sums.valid(self.slot[check],
                                                                 self.gen[check])]
        self.slot[stale] = -1
        missing = np.unique(ks[self.slot[ks] < 0])
        if missing.size:
            counts, sib = self.partition.counts, self.sibling[missing]
            # the larger of two children is its parent's column minus its sibling's, while this
            # view is current and the parent's column is still there
            derive = (sib >= 0) & self.sums.valid(self.parent_slot[missing],
                                                  self.parent_gen[missing])
            derive &= not self._frozen
            derive[derive] = _lexless(counts[sib[derive]], sib[derive], counts[missing[derive]],
                                      missing[derive])
            direct = np.union1d(missing[~derive], sib[derive][self.slot[sib[derive]] < 0])
            # columns this request reads: none of them may be dropped to make room
            keep = np.r_[self.slot[check], self.parent_slot[missing[derive]]]
            if direct.size:
                position = np.full(self.n_clusters, -1)
                position[direct] = np.arange(direct.size)
                rows = np.flatnonzero(position[self.partition.labels] >= 0)
                self.slot[direct] = self.sums.compute(
                    rows, position[self.partition.labels[rows]], direct.size, keep)
                self.gen[direct] = self.sums.generation[self.slot[direct]]
            derived = missing[derive]
            if derived.size:
                self.slot[derived] = self.sums.difference(
                    self.parent_slot[derived], self.slot[self.sibling[derived]],
                    np.r_[keep, self.slot[direct]])
                self.gen[derived] = self.sums.generation[self.slot[derived]]
        self.sums.touch(self.slot[ks])
        return self.slot[ks]

    def H(self, ks) -> np.ndarray:
        """``H[:, ks]`` (n x len(ks)): mean kernel of every row to the clusters ``ks``."""
        ks = np.asarray(ks, dtype=np.int64)
        slots = self.ensure(ks)  # first: it may reallocate G
        return self.sums.G[:, slots] / self.W[ks]

    def H_dot(self, ks, v) -> np.ndarray:
        """``H[:, ks] @ v`` (n,), without forming ``H[:, ks]`` (by chunks of columns under a
        column limit, see :meth:`_chunks`)."""
        ks = np.asarray(ks, dtype=np.int64)
        v = np.asarray(v, dtype=float) / self.W[ks]
        out = np.zeros(self.sums.G.shape[0])
        for part in self._chunks(ks.size):
            slots = self.ensure(ks[part])
            _by_ranges(_columns_dot, out.size, self.sums.G, slots, v[part], out, grain=4096)
        return out

    def _chunks(self, count: int) -> list[slice]:
        """Ranges of at most a quarter of ``max_columns`` requested columns each (a request also
        holds the parents and siblings its new columns derive from), so that no request exceeds
        the limit; one range without a limit."""
        limit = self.sums.max_columns
        step = count if limit is None else max(1, limit // 4)
        return [slice(lo, lo + step) for lo in range(0, count, max(1, step))]

    def kbar(self, ks) -> np.ndarray:
        r""":math:`\bar K_{\cdot, ks}` (K x len(ks)): mean kernel of every cluster to ``ks``."""
        ks = np.asarray(ks, dtype=np.int64)
        cols = self._columns(ks)  # first: it may reallocate _S
        return self._S[:, cols] / np.outer(self.W, self.W[ks])

    def kbar_dot(self, ks, v) -> np.ndarray:
        r""":math:`\bar K_{\cdot, ks} v` (K,), without gathering the columns."""
        ks = np.asarray(ks, dtype=np.int64)
        cols = self._columns(ks)
        used = int(self._col.max()) + 1
        full = np.zeros(used)
        np.add.at(full, cols, np.asarray(v, dtype=float) / self.W[ks])
        return (self._S[:, :used] @ full) / self.W

    def kbar_block(self, ks, signs=None) -> np.ndarray:
        r""":math:`\bar K_{ks, ks}`, or :math:`D \bar K_{ks, ks} D` with ``D = diag(signs)``,
        symmetrised (rounding makes the sums differ in the last digits)."""
        ks = np.asarray(ks, dtype=np.int64)
        cols = self._columns(ks)  # first: it may reallocate _S
        signs = np.ones(ks.size) if signs is None else np.asarray(signs, dtype=float)
        out = np.empty((ks.size, ks.size))
        scale = signs / self.W[ks]
        _by_ranges(_gather_block, ks.size, self._S, ks, cols, scale, out)
        tiles = -(-ks.size // _TILE)
        _by_ranges(_symmetrise_tiles, (tiles + 1) // 2, out, tiles, grain=1)
        return out

    def _columns(self, ks) -> np.ndarray:
        """Positions in ``_S`` of the columns of clusters ``ks`` (computed when missing: from
        the previous partition's sums when it had them, else from G; by chunks under a column
        limit)."""
        new = np.unique(ks[self._col[ks] < 0])
        for part in self._chunks(new.size):
            self._sums_of(new[part])
        return self._col[ks]

    def _sums_of(self, new) -> None:
        """Compute the cluster sums of the clusters ``new`` (none has them yet)."""
        slots = self.ensure(new)  # first: it may reallocate G
        used = int(self._col.max()) + 1
        if used + new.size > self._S.shape[1]:
            grown = np.empty((self.n_clusters, max(64, 2 * (used + new.size))), order="F")
            grown[:, :used] = self._S[:, :used]
            self._S = grown
        place = np.arange(used, used + new.size, dtype=np.int64)
        self._col[new] = place
        prev = self._previous
        old = np.full(new.size, -1, dtype=np.int64)
        if prev is not None:  # an unchanged cluster's sums, if the previous view had them
            unchanged = self._same[new]
            old[unchanged] = prev._col[self.parent[new[unchanged]]]
        keep = old >= 0
        if keep.any():
            _by_ranges(_inherit_sums, int(keep.sum()), prev._S, old[keep], self.parent, self._S,
                       place[keep], self.sums.G, slots[keep], self._summed_rows,
                       self.partition.labels, self.sums.s, self._summed, self.sibling)
        if (~keep).any():
            self._S[:, place[~keep]] = _cluster_sums(
                self.sums.G, slots[~keep], self.partition.labels, self.sums.s, self.n_clusters)


def _lexless(a1, a2, b1, b2) -> np.ndarray:
    """Elementwise ``(a1, a2) < (b1, b2)``."""
    return (a1 < b1) | ((a1 == b1) & (a2 < b2))


def _cluster_sums(G, slots, labels, s, K) -> np.ndarray:
    """``out[k, c] = sum_{i in C_k} s_i G[i, slots[c]]`` (K x len(slots), column ranges in
    threads)."""
    out = np.empty((K, slots.size), order="F")
    _by_ranges(_cluster_sums_range, slots.size, G, slots, labels, s, out)
    return out


def _cores() -> int:
    """Cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


_POOL: ThreadPoolExecutor | None = None


def _most_workers() -> int:
    """Size of the worker pool: one thread per core, at most four."""
    return max(1, min(4, _cores()))


def _workers() -> int:
    """Worker threads for kernel blocks and column ranges: :func:`_most_workers`, at most the
    run's thread budget (:func:`.threads.budget`)."""
    limit = budget()
    return _most_workers() if limit is None else max(1, min(_most_workers(), limit))


def _pool() -> ThreadPoolExecutor:
    """The process's worker threads (created on first use; tasks of concurrent runs queue)."""
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(_most_workers(), thread_name_prefix="aidopt-kernel")
    return _POOL


def _forget_pool() -> None:
    """In a forked child the parent's worker threads do not exist: start a new pool."""
    global _POOL
    _POOL = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _by_ranges(kernel, count, *args, grain=8) -> None:
    """``kernel(*args, lo, hi)`` over ``0..count-1`` split into one range per core (at most
    one per ``grain`` items; the compiled kernels release the GIL)."""
    threads = min(_workers(), max(1, count // grain))
    if threads <= 1:
        kernel(*args, 0, count)
        return
    edges = np.linspace(0, count, threads + 1).astype(np.int64)
    list(_pool().map(lambda r: kernel(*args, edges[r], edges[r + 1]), range(threads)))
