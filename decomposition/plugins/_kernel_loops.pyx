# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The compiled loops of :mod:`.mean_kernel` (Cython, built at install).

Each function works on a range of its items (``lo..hi-1``) without the GIL, so that
:func:`.mean_kernel._by_ranges` can run ranges in threads. Layouts are part of the contract:
``G``, ``E``, ``S`` are Fortran-ordered (a column is contiguous), ``out`` of
:func:`gather_block` and :func:`symmetrise_tiles` C-ordered; index arrays are int64.
They are compiled ahead of time rather than by numba so that a process's first kernel AID
solve does not pay numba's start-up (docs/design.md).
"""

from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset

cdef Py_ssize_t _TILE = 32
#: tile edge of :func:`symmetrise_tiles`
TILE = _TILE


def cluster_sums_range(const double[::1, :] G, const int64_t[:] slots, const int64_t[:] labels,
                       const double[:] s, double[::1, :] out, Py_ssize_t lo, Py_ssize_t hi):
    """``out[k, c] = sum_{i in C_k} s_i G[i, slots[c]]`` for ``lo <= c < hi``: four columns
    per pass over the rows (a row's label and weight read once for four columns, whose four
    sums sit side by side in a K x 4 accumulator), then the columns left one by one."""
    cdef Py_ssize_t K = out.shape[0], n = G.shape[0], i, k, c
    cdef Py_ssize_t full = lo + (hi - lo) // 4 * 4
    cdef int64_t c0, c1, c2, c3, col
    cdef double si
    cdef double *acc = <double *> malloc(4 * max(K, 1) * sizeof(double))
    if acc == NULL:
        raise MemoryError()
    with nogil:
        c = lo
        while c < full:
            c0, c1, c2, c3 = slots[c], slots[c + 1], slots[c + 2], slots[c + 3]
            memset(acc, 0, 4 * K * sizeof(double))
            for i in range(n):
                k, si = labels[i], s[i]
                acc[4 * k] += si * G[i, c0]
                acc[4 * k + 1] += si * G[i, c1]
                acc[4 * k + 2] += si * G[i, c2]
                acc[4 * k + 3] += si * G[i, c3]
            for k in range(K):
                out[k, c] = acc[4 * k]
                out[k, c + 1] = acc[4 * k + 1]
                out[k, c + 2] = acc[4 * k + 2]
                out[k, c + 3] = acc[4 * k + 3]
            c += 4
        for c in range(full, hi):
            col = slots[c]
            for k in range(K):
                out[k, c] = 0.0
            for i in range(n):
                out[labels[i], c] += s[i] * G[i, col]
    free(acc)


def columns_dot(const double[::1, :] G, const int64_t[:] slots, const double[:] v,
                double[::1] out, Py_ssize_t lo, Py_ssize_t hi):
    """``out[lo:hi] += G[lo:hi, slots] @ v``: eight columns per pass over the rows (eight
    streams through memory at once, ``out`` read and written once per eight columns), then the
    columns left one by one."""
    cdef Py_ssize_t full = slots.shape[0] // 8 * 8, c = 0, i
    cdef int64_t g0, g1, g2, g3, g4, g5, g6, g7, col
    cdef double v0, v1, v2, v3, v4, v5, v6, v7, vc
    with nogil:
        while c < full:
            g0, g1, g2, g3 = slots[c], slots[c + 1], slots[c + 2], slots[c + 3]
            g4, g5, g6, g7 = slots[c + 4], slots[c + 5], slots[c + 6], slots[c + 7]
            v0, v1, v2, v3 = v[c], v[c + 1], v[c + 2], v[c + 3]
            v4, v5, v6, v7 = v[c + 4], v[c + 5], v[c + 6], v[c + 7]
            for i in range(lo, hi):
                out[i] += ((v0 * G[i, g0] + v1 * G[i, g1] + v2 * G[i, g2] + v3 * G[i, g3])
                           + (v4 * G[i, g4] + v5 * G[i, g5] + v6 * G[i, g6] + v7 * G[i, g7]))
            c += 8
        for c in range(full, slots.shape[0]):
            col, vc = slots[c], v[c]
            for i in range(lo, hi):
                out[i] += vc * G[i, col]


def segment_sums(const double[::1, :] E, const double[:] w, const int64_t[:] starts,
                 const int64_t[:] ends, double[::1, :] G, Py_ssize_t lo,
                 const int64_t[:] slots, double upper):
    """``G[lo + i, slots[g]] = sum_{starts[g] <= j < ends[g]} w_j min(E[i, j], upper)``,
    column by column (contiguous in ``E`` and ``G``)."""
    cdef Py_ssize_t b = E.shape[0], g, i, j, first
    cdef int64_t col
    cdef double wj, e
    with nogil:
        for g in range(starts.shape[0]):
            col, first = slots[g], starts[g]
            wj = w[first]
            for i in range(b):
                e = E[i, first]
                G[lo + i, col] = wj * (upper if upper < e else e)
            for j in range(first + 1, ends[g]):
                wj = w[j]
                for i in range(b):
                    e = E[i, j]
                    G[lo + i, col] += wj * (upper if upper < e else e)


def inherit_sums(const double[::1, :] S_old, const int64_t[:] old_cols, const int64_t[:] parent,
                 double[::1, :] S, const int64_t[:] cols, const double[::1, :] G,
                 const int64_t[:] slots, const int64_t[:] small_rows, const int64_t[:] labels,
                 const double[:] s, const int64_t[:] small, const int64_t[:] sibling,
                 Py_ssize_t lo, Py_ssize_t hi):
    """Cluster sums of a refined partition from the previous one's, columns ``lo..hi-1``: an
    unchanged cluster's entry is its parent's, a ``small`` cluster's is summed over its rows
    (``small_rows``), and the sibling of one (if any) is the parent's minus it."""
    cdef Py_ssize_t c, k, q, i
    cdef int64_t oc, col, slot
    with nogil:
        for c in range(lo, hi):
            oc, col, slot = old_cols[c], cols[c], slots[c]
            for k in range(parent.shape[0]):
                S[k, col] = S_old[parent[k], oc]
            for q in range(small.shape[0]):
                S[small[q], col] = 0.0
            for q in range(small_rows.shape[0]):
                i = small_rows[q]
                S[labels[i], col] += s[i] * G[i, slot]
            for q in range(small.shape[0]):
                k = small[q]
                if sibling[k] >= 0:
                    S[sibling[k], col] = S_old[parent[k], oc] - S[k, col]


def gather_block(const double[::1, :] S, const int64_t[:] ks, const int64_t[:] cols,
                 const double[:] scale, double[:, ::1] out, Py_ssize_t lo, Py_ssize_t hi):
    """Rows ``lo..hi-1`` of ``D Kbar[ks, ks] D`` transposed: ``out[c, r] = S[ks[r], cols[c]]
    scale[c] scale[r]`` (``S[k, cols[c]]``: cluster k against ``ks[c]``; ``scale = D / W``)."""
    cdef Py_ssize_t c, r
    cdef int64_t col
    cdef double sc
    with nogil:
        for c in range(lo, hi):
            col, sc = cols[c], scale[c]
            for r in range(ks.shape[0]):
                out[c, r] = S[ks[r], col] * sc * scale[r]


def symmetrise_tiles(double[:, ::1] out, Py_ssize_t tiles, Py_ssize_t lo, Py_ssize_t hi):
    """``out`` averaged with its transpose, tile by tile: item ``p`` in ``lo..hi-1`` takes the
    column tiles ``p`` and ``tiles - 1 - p`` (equal work per item) against every row tile up
    to them, so each pair of entries is touched by one item only."""
    cdef Py_ssize_t m = out.shape[0], p, second, tc, c0, r0, c, r
    cdef double v
    with nogil:
        for p in range(lo, hi):
            for second in range(2):
                tc = tiles - 1 - p if second else p
                if second and tc == p:
                    break
                c0 = tc * _TILE
                r0 = 0
                while r0 <= c0:
                    for c in range(c0, min(m, c0 + _TILE)):
                        for r in range(r0, min(c, r0 + _TILE)):
                            v = 0.5 * (out[r, c] + out[c, r])
                            out[r, c] = v
                            out[c, r] = v
                    r0 += _TILE


def subtract_columns(double[::1, :] G, const int64_t[:] a, const int64_t[:] b,
                     const int64_t[:] out, Py_ssize_t lo, Py_ssize_t hi):
    """``G[:, out[c]] = G[:, a[c]] - G[:, b[c]]`` for ``lo <= c < hi``."""
    cdef Py_ssize_t c, i
    cdef int64_t ac, bc, oc
    with nogil:
        for c in range(lo, hi):
            ac, bc, oc = a[c], b[c], out[c]
            for i in range(G.shape[0]):
                G[i, oc] = G[i, ac] - G[i, bc]
