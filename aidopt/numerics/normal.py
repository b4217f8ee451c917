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
    column the lower triangle CHOLMOD reads) is computed once from :math:`|X|^\top |X|` (no
    cancellation can drop an entry) and held in a CHOLMOD matrix; each ``factor`` computes the
    values of :math:`X^\top D X` in that pattern (:func:`_upper_values`, a numba kernel) and
    assigns them in place.
    """

    def __init__(self, X):
        self.sparse = sparse.issparse(X)
        if not self.sparse:
            self.X = np.asarray(X, dtype=float)
            self._factor = None
            return
        import cvxopt
        from cvxopt import cholmod

        self._cvxopt, self._cholmod = cvxopt, cholmod
        X = sparse.csr_matrix(X, dtype=float, copy=True)
        X.eliminate_zeros()  # stored zeros: no entry of the pattern, no empty diagonal
        counts = np.bincount(X.indices, minlength=X.shape[1])
        self.used = np.flatnonzero(counts)  # columns with a stored entry
        if self.used.size < X.shape[1]:
            X = X[:, self.used]
        if not X.has_sorted_indices:
            X = X.sorted_indices()
        Xt = X.T.tocsr()
        Xt.sort_indices()
        self.X, self.Xt = X, Xt
        m = X.shape[1]
        U = sparse.triu(abs(Xt) @ abs(X), format="csr")
        U.sort_indices()
        self._pattern = (U.indptr.astype(np.int64), U.indices.astype(np.int64))
        self._values = np.zeros(U.nnz)
        self._acc = np.zeros(m)
        # CHOLMOD's lower triangle, column by column: the upper triangle's rows
        columns = np.repeat(np.arange(m, dtype=np.int64), np.diff(U.indptr))
        self._matrix = cvxopt.spmatrix(U.data, U.indices.astype(np.int64), columns, (m, m))
        self._diagonal = U.indptr[:-1].astype(np.int64)  # the first entry of a row is its diagonal
        self._symbolic = cholmod.symbolic(self._matrix, uplo="L")

    def factor(self, d) -> None:
        r"""Factor :math:`X^\top \mathrm{diag}(d) X` (``d`` > 0, one entry per row of X)."""
        if not self.sparse:
            self._factor = linalg.cho_factor((self.X * d[:, None]).T @ self.X, lower=True,
                                             check_finite=False)
            return
        X, Xt = self.X, self.Xt
        _upper_values()(Xt.indptr, Xt.indices, Xt.data, X.indptr, X.indices, X.data,
                      np.ascontiguousarray(d, dtype=float), *self._pattern, self._values,
                      self._acc)
        cvxopt, cholmod = self._cvxopt, self._cholmod
        self._matrix.V = cvxopt.matrix(self._values)
        try:
            cholmod.numeric(self._matrix, self._symbolic)
            return
        except ArithmeticError:
            pass
        ridge = RIDGE * max(float(self._values[self._diagonal].max()), 1e-300)
        values = self._values.copy()
        values[self._diagonal] += ridge
        self._matrix.V = cvxopt.matrix(values)
        try:
            cholmod.numeric(self._matrix, self._symbolic)
        except ArithmeticError as exc:
            raise np.linalg.LinAlgError(f"X'DX is not positive definite: {exc}") from None

    def solve(self, r) -> np.ndarray:
        r"""The solution of :math:`X^\top D X \Delta = r` with the last factor (``r`` of length
        m; entries of columns with no stored entry get 0)."""
        if not self.sparse:
            return linalg.cho_solve(self._factor, r, check_finite=False)
        full = np.asarray(r, dtype=float)
        b = self._cvxopt.matrix(np.ascontiguousarray(full[self.used]))
        self._cholmod.solve(self._symbolic, b)
        out = np.zeros_like(full)
        out[self.used] = np.asarray(b).ravel()
        return out


@functools.cache
def _upper_values():
    """The numba kernel :func:`_upper_values_kernel`, compiled on first use (``import aidopt``
    loads no numba)."""
    import numba

    return numba.njit(cache=True)(_upper_values_kernel)


def _upper_values_kernel(tp, ti, tv, xp, xi, xv, d, up, ui, out, acc):
    r"""The values of the upper triangle of :math:`X^\top D X` in the pattern ``(up, ui)``
    (CSR, sorted), into ``out``: for each column j of X (row j of ``(tp, ti, tv)``, X'), the
    rows i holding it add :math:`d_i x_{ij} x_{ik}` for their columns :math:`k \ge j` (X's
    CSR ``(xp, xi, xv)``, sorted) to the accumulator ``acc`` (zero on entry and on exit)."""
    m = tp.size - 1
    for j in range(m):
        for a in range(tp[j], tp[j + 1]):
            i = ti[a]
            f = tv[a] * d[i]
            lo, hi = xp[i], xp[i + 1]
            start = lo + np.searchsorted(xi[lo:hi], j)
            for b in range(start, hi):
                acc[xi[b]] += f * xv[b]
        for c in range(up[j], up[j + 1]):
            k = ui[c]
            out[c] = acc[k]
            acc[k] = 0.0
