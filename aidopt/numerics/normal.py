r"""The normal equations :math:`X^\top D X\,\Delta = r` of an interior point, factored once per
step: a dense Cholesky (LAPACK, through BLAS) for a dense X, a sparse one (CHOLMOD, from the
``cvxopt`` wheel) for a scipy sparse X.

Frisch–Newton (:mod:`aidopt.numerics.fn`) solves two systems with the same matrix at each step
(predictor and corrector). For a dense X the :math:`m \times m` matrix costs :math:`O(K m^2)`
flops to form and :math:`m^3/3` to factor. For a sparse X (text, one-hot categories) the matrix
:math:`X^\top D X` has a nonzero at :math:`(j, l)` only where columns j and l share a row, and
its sparsity pattern is the same at every step (D > 0 on the interior): the fill-reducing
ordering and the symbolic factorization are computed once (CHOLMOD's AMD / supernodal analysis),
each step refactors the values only. This is what R quantreg's ``rq.fit.sfn`` does with the
Ng–Peyton sparse Cholesky of SparseM.

**Memory.** The pattern is built column by column by a numba kernel (no full product
:math:`|X|^\top |X|`, no ``triu`` copies, int32 row indices). Through cvxopt, CHOLMOD holds
the matrix three times at a factorization (cvxopt's ``spmatrix``, the triangle
``cholmod.numeric`` copies out of it, the permuted copy CHOLMOD's factorize makes: 16 bytes an
entry each) beside the supernodal factor, whose diagonal blocks are stored square, and the
supernodal update workspace. Where :math:`X^\top X` is not very sparse the factor fills in to
about dense: at :math:`10^5 \times 10^4` text-like rows (``text:40``, X'X 19 % dense) the
supernodal factor took 0.77 GB and the numeric factorization 0.6 GB more. So a sparse X whose
:math:`X^\top X` stores at least :data:`DENSE_SHARE` (10 %) of its upper triangle, with at
least :data:`DENSE_COLUMNS` columns and an m x m matrix within :data:`DENSE_MEMORY` of the
physical memory, gets a dense factor instead: the upper triangle of :math:`X^\top D X`
filled from the sparse rows into one m x m array (:func:`_dense_values_kernel`), factored in
place by LAPACK (``dpotrf``), the same array reused at every step: :math:`8 m^2` bytes in all
(0.8 GB there). Its results equal the sparse factor's to rounding (another elimination order).

For a dense X a singular matrix stops the caller (as before this module: AID's aggregated
problems are dense and of full rank). For a sparse X, columns with no stored entry (a word that
no document holds) would make the matrix singular: they are left out of the system (their
coefficient is free in the LP and set to 0). A matrix that is numerically not positive definite
(rank-deficient X, or D spread over many orders of magnitude at the end of an interior point
run) is factored again with a small ridge :math:`\delta I`,
:math:`\delta = 10^{-12}\max_j (X^\top D X)_{jj}`, which changes the Newton direction only by
the rounding level; the caller's certificate is computed on the iterate and does not depend on
it.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import linalg, sparse

__all__ = ["NormalEquations", "sparse_cholesky_available"]

#: relative ridge added when the matrix is numerically not positive definite
RIDGE = 1e-12
#: a sparse X whose :math:`X^\top X` stores at least this share of its upper triangle, with at
#: least :data:`DENSE_COLUMNS` columns, is factored as a dense matrix (module docstring)
DENSE_SHARE = 0.1
#: the fewest columns (of X with a stored entry) for the dense factor of a sparse X (at
#: 2·10⁴ x 2,001 text-like rows the dense factor took 3.5 s against CHOLMOD's 4.1 s once its
#: kernel was compiled; at 10⁵ x 10⁴, 173 s against 208 s and under 1 GB: docs/benchmarks/sparse.md)
DENSE_COLUMNS = 2000
#: nor when the m x m matrix would take more than this share of the physical memory
DENSE_MEMORY = 0.25


def sparse_cholesky_available() -> bool:
    """Whether CHOLMOD (the ``cvxopt`` package) can be imported."""
    try:
        import cvxopt.cholmod  # noqa: F401
    except ImportError:
        return False
    return True


class NormalEquations:
    r"""Factor :math:`X^\top D X` for positive diagonals D and solve with it.

    Parameters
    ----------
    X : ndarray (K, m) or scipy sparse matrix
        A sparse X is kept as CSR (one conversion when given in another format) with its
        transpose as CSR (X by columns), and factored by CHOLMOD; a dense one by LAPACK.

    Notes
    -----
    ``factor(d)`` then ``solve(r)`` (any number of right-hand sides per factor). Raises
    ``numpy.linalg.LinAlgError`` when even the ridged matrix cannot be factored.

    For a sparse X the pattern of the upper triangle of :math:`X^\top X` (as CSR: column by
    column the lower triangle CHOLMOD reads) is that of :math:`|X|^\top |X|` (no cancellation
    can drop an entry), built once row by row (:func:`_upper_pattern_kernel`, a numba kernel:
    no full product and no copies of it, int32 column indices) and held in a CHOLMOD matrix;
    each ``factor`` computes the values of :math:`X^\top D X` in that pattern
    (:func:`_upper_values_kernel`) into a new buffer, assigns them, and frees the buffer before
    CHOLMOD factors. At a factor, per entry of the pattern: 4 bytes (the column indices kept
    here), 16 (cvxopt's matrix) and twice 16 more (the lower triangle ``cholmod.numeric``
    copies out of it, and the permuted matrix CHOLMOD's factorize makes), then the factor.
    Where that pattern holds :data:`DENSE_SHARE` of the triangle (``dense_factor`` True, module
    docstring) none of this is built: one m x m array, filled and factored in place at every
    step. Measured in docs/sparse.md ("Sparse Frisch–Newton's memory").
    """

    def __init__(self, X):
        self.sparse = sparse.issparse(X)
        self.dense_factor = False  # a sparse X factored as a dense matrix
        if not self.sparse:
            self.X = np.asarray(X, dtype=float)
            self._factor = None
            return
        import cvxopt
        from cvxopt import cholmod

        self._cvxopt, self._cholmod = cvxopt, cholmod
        self.X, self.used = _used_columns(X)
        X = self.X
        Xt = X.T.tocsr()
        Xt.sort_indices()
        self.Xt = Xt
        m = X.shape[1]
        # the upper triangle's pattern column by column (no full product, no temporaries of
        # its size): row indices int32, column pointers int64
        counts = np.zeros(m + 1, dtype=np.int64)
        mark = np.full(m, -1, dtype=np.int64)
        _upper_pattern()(Xt.indptr, Xt.indices, X.indptr, X.indices, mark, counts, counts,
                         np.zeros(0, dtype=np.int32), False)
        self.dense_factor = _dense_factor(m, int(counts.sum()))
        if self.dense_factor:  # the factor is about as dense: LAPACK in place, no CHOLMOD copies
            self._dense = np.zeros((m, m))
            return
        indptr = np.zeros(m + 1, dtype=np.int64)
        np.cumsum(counts[:m], out=indptr[1:])
        indices = np.empty(int(indptr[-1]), dtype=np.int32)
        mark[:] = -1
        _upper_pattern()(Xt.indptr, Xt.indices, X.indptr, X.indices, mark, counts, indptr,
                         indices, True)
        del counts, mark
        self._pattern = (indptr, indices)
        nnz = indices.size
        # the triplets go straight into cvxopt's own integer matrices (numpy views of them)
        rows = cvxopt.matrix(0, (nnz, 1), "i")
        np.asarray(rows)[:, 0] = indices
        columns = cvxopt.matrix(0, (nnz, 1), "i")
        _column_numbers()(indptr, np.asarray(columns)[:, 0])
        self._matrix = cvxopt.spmatrix(0.0, rows, columns, (m, m))
        del rows, columns
        self._acc = np.zeros(m)
        self._diagonal = indptr[1:] - 1  # the last entry of a column is its diagonal
        # the upper triangle: CHOLMOD's factorize permutes it with one transpose (the lower
        # one takes two, both held at once)
        self._symbolic = cholmod.symbolic(self._matrix, uplo="U")

    def factor(self, d) -> None:
        r"""Factor :math:`X^\top \mathrm{diag}(d) X` (``d`` > 0, one entry per row of X)."""
        if not self.sparse:
            self._factor = linalg.cho_factor((self.X * d[:, None]).T @ self.X, lower=True,
                                             check_finite=False)
            return
        if self.dense_factor:
            self._factor_dense(d)
            return
        cholmod = self._cholmod
        self._matrix.V = self._values(d)  # the buffer is freed before CHOLMOD copies the matrix
        try:
            cholmod.numeric(self._matrix, self._symbolic)
            return
        except ArithmeticError:
            pass
        values = self._values(d)
        view = np.asarray(values)[:, 0]
        view[self._diagonal] += RIDGE * max(float(view[self._diagonal].max()), 1e-300)
        self._matrix.V = values
        del values, view
        try:
            cholmod.numeric(self._matrix, self._symbolic)
        except ArithmeticError as exc:
            raise np.linalg.LinAlgError(f"X'DX is not positive definite: {exc}") from None

    def _factor_dense(self, d) -> None:
        """The dense factor of a sparse X: the upper triangle of X'DX (C order) filled in
        place, factored in place by LAPACK as the lower triangle of its (Fortran) transpose."""
        from scipy.linalg import lapack

        X, Xt, M = self.X, self.Xt, self._dense
        d = np.ascontiguousarray(d, dtype=float)
        _dense_values()(Xt.indptr, Xt.indices, Xt.data, X.indptr, X.indices, X.data, d, M)
        top = float(M.diagonal().max())
        _, info = lapack.dpotrf(M.T, lower=1, overwrite_a=1, clean=0)
        if info == 0:
            return
        _dense_values()(Xt.indptr, Xt.indices, Xt.data, X.indptr, X.indices, X.data, d, M)
        M.flat[::M.shape[0] + 1] += RIDGE * max(top, 1e-300)
        _, info = lapack.dpotrf(M.T, lower=1, overwrite_a=1, clean=0)
        if info != 0:
            raise np.linalg.LinAlgError(f"X'DX is not positive definite (LAPACK info {info})")

    def _values(self, d):
        r"""The values of :math:`X^\top \mathrm{diag}(d) X` in the pattern, in a new cvxopt
        matrix (filled through a numpy view of its buffer)."""
        X, Xt = self.X, self.Xt
        values = self._cvxopt.matrix(0.0, (self._pattern[1].size, 1))
        _upper_values()(Xt.indptr, Xt.indices, Xt.data, X.indptr, X.indices, X.data,
                        np.ascontiguousarray(d, dtype=float), *self._pattern,
                        np.asarray(values)[:, 0], self._acc)
        return values

    def solve(self, r) -> np.ndarray:
        r"""The solution of :math:`X^\top D X \Delta = r` with the last factor (``r`` of length
        m; entries of columns with no stored entry get 0)."""
        if not self.sparse:
            return linalg.cho_solve(self._factor, r, check_finite=False)
        full = np.asarray(r, dtype=float)
        out = np.zeros_like(full)
        if self.dense_factor:
            from scipy.linalg import lapack

            out[self.used] = lapack.dpotrs(self._dense.T, full[self.used], lower=1)[0]
            return out
        b = self._cvxopt.matrix(np.ascontiguousarray(full[self.used]))
        self._cholmod.solve(self._symbolic, b)
        out[self.used] = np.asarray(b).ravel()
        return out


def _dense_factor(m: int, entries: int) -> bool:
    """Whether the normal equations of m columns whose upper triangle stores ``entries`` are
    factored as a dense matrix (:data:`DENSE_SHARE`, :data:`DENSE_COLUMNS`,
    :data:`DENSE_MEMORY`)."""
    if m < DENSE_COLUMNS or entries < DENSE_SHARE * m * (m + 1) / 2:
        return False
    from aidopt.data.machine import physical_memory

    return 8.0 * m * m <= DENSE_MEMORY * physical_memory()


def _used_columns(X):
    """``(X', used)``: X as CSR float64 with sorted indices and no stored zeros, restricted to
    its columns with a stored entry ``used`` (renumbered in order). The caller's arrays are
    shared where nothing changes: a canonical CSR float64 X without stored zeros is used as it
    is, and when columns are dropped only the column indices are new."""
    X = sparse.csr_matrix(X, dtype=float)
    if not X.has_canonical_format or (X.data == 0).any():
        X = X.copy()
        X.sum_duplicates()  # sorts the indices too
        X.eliminate_zeros()  # stored zeros: no entry of the pattern, no empty diagonal
    m = X.shape[1]
    counts = np.bincount(X.indices, minlength=m)
    used = np.flatnonzero(counts)
    if used.size < m:
        position = np.zeros(m, dtype=np.int32)
        position[used] = np.arange(used.size, dtype=np.int32)
        X = sparse.csr_matrix((X.data, position[X.indices], X.indptr),
                              shape=(X.shape[0], used.size))  # sorted still: the order is kept
    return X, used


def _jit(kernel):
    import numba

    return numba.njit(cache=True)(kernel)


@functools.cache
def _upper_pattern():
    """The numba kernel :func:`_upper_pattern_kernel`, compiled on first use."""
    return _jit(_upper_pattern_kernel)


@functools.cache
def _column_numbers():
    """The numba kernel :func:`_column_numbers_kernel`, compiled on first use."""
    return _jit(_column_numbers_kernel)


def _upper_pattern_kernel(tp, ti, xp, xi, mark, counts, up, ui, fill):
    r"""The pattern of the upper triangle of :math:`|X|^\top |X|` by columns (column j: the
    rows :math:`k \le j` whose column of X shares a row with column j), without its values:
    with ``fill`` False, the entries of each column j into ``counts[j]``; with ``fill`` True,
    the sorted row indices of column j into ``ui[up[j]:up[j + 1]]``. ``(tp, ti)`` is X' as CSR
    (X by columns), ``(xp, xi)`` X as CSR with sorted indices, ``mark`` (length m) holds -1 on
    entry."""
    m = tp.size - 1
    for j in range(m):
        c = up[j] if fill else 0
        for a in range(tp[j], tp[j + 1]):
            i = ti[a]
            lo, hi = xp[i], xp[i + 1]
            for b in range(lo, lo + np.searchsorted(xi[lo:hi], j, side="right")):
                k = xi[b]
                if mark[k] != j:
                    mark[k] = j
                    if fill:
                        ui[c] = k
                    c += 1
        if fill:
            ui[up[j]:c].sort()
        else:
            counts[j] = c


def _column_numbers_kernel(up, out):
    """``out[c] = j`` for the entries c of column j of the CSC column pointers ``up``."""
    for j in range(up.size - 1):
        for c in range(up[j], up[j + 1]):
            out[c] = j


@functools.cache
def _upper_values():
    """The numba kernel :func:`_upper_values_kernel`, compiled on first use (``import aidopt``
    loads no numba)."""
    return _jit(_upper_values_kernel)


@functools.cache
def _dense_values():
    """The numba kernel :func:`_dense_values_kernel`, compiled on first use."""
    return _jit(_dense_values_kernel)


def _dense_values_kernel(tp, ti, tv, xp, xi, xv, d, M):
    r"""The upper triangle of :math:`X^\top D X` into the C-ordered m x m array ``M`` (row j,
    columns :math:`k \ge j`; the rest is left as it is): for each column j of X (row j of
    ``(tp, ti, tv)``, X'), the rows i holding it add :math:`(x_{ij} d_i) x_{ik}` for their
    columns :math:`k \ge j` (X's CSR ``(xp, xi, xv)``, sorted)."""
    m = tp.size - 1
    for j in range(m):
        M[j, j:] = 0.0
        for a in range(tp[j], tp[j + 1]):
            i = ti[a]
            f = tv[a] * d[i]
            lo, hi = xp[i], xp[i + 1]
            for b in range(lo + np.searchsorted(xi[lo:hi], j), hi):
                M[j, xi[b]] += f * xv[b]


def _upper_values_kernel(tp, ti, tv, xp, xi, xv, d, up, ui, out, acc):
    r"""The values of the upper triangle of :math:`X^\top D X` in the pattern ``(up, ui)``
    (CSC, sorted), into ``out``: for each column j of X (row j of ``(tp, ti, tv)``, X'), the
    rows i holding it add :math:`(x_{ik} d_i) x_{ij}` for their columns :math:`k \le j` (X's
    CSR ``(xp, xi, xv)``, sorted) to the accumulator ``acc`` (zero on entry and on exit): the
    rows of an entry in increasing order, each product rounded as :math:`(x_{ik} d_i) x_{ij}`
    (the sums a row-by-row computation of the lower triangle made, to the last bit)."""
    m = tp.size - 1
    for j in range(m):
        for a in range(tp[j], tp[j + 1]):
            i = ti[a]
            x = tv[a]
            di = d[i]
            lo, hi = xp[i], xp[i + 1]
            for b in range(lo, lo + np.searchsorted(xi[lo:hi], j, side="right")):
                acc[xi[b]] += (xv[b] * di) * x
        for c in range(up[j], up[j + 1]):
            k = ui[c]
            out[c] = acc[k]
            acc[k] = 0.0
