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
        X = sparse.csr_matrix(X, dtype=float)
        counts = np.bincount(X.indices, minlength=X.shape[1])
        self.used = np.flatnonzero(counts)  # columns with a stored entry
        if self.used.size < X.shape[1]:
            X = X[:, self.used]
        self.X, self.Xt = X, X.T.tocsr()
        self._symbolic = None
        self._numeric = None
        self._lower = None  # positions of the lower triangle in the product's CSR data

    # ------------------------------------------------------------------ public
    def factor(self, d) -> None:
        r"""Factor :math:`X^\top \mathrm{diag}(d) X` (``d`` > 0, one entry per row of X)."""
        if not self.sparse:
            self._factor = linalg.cho_factor((self.X * d[:, None]).T @ self.X, lower=True,
                                             check_finite=False)
            return
        A = sparse.tril(self.Xt @ sparse.diags(d) @ self.X, format="coo")
        self._numeric = self._sparse_factor(A)

    def _sparse_factor(self, A):
        cvxopt, cholmod = self._cvxopt, self._cholmod
        m = A.shape[0]
        M = cvxopt.spmatrix(cvxopt.matrix(A.data), cvxopt.matrix(A.row.astype(np.int64)),
                            cvxopt.matrix(A.col.astype(np.int64)), (m, m))
        if self._symbolic is None:
            self._symbolic = cholmod.symbolic(M, uplo="L")
        try:
            cholmod.numeric(M, self._symbolic)
            return self._symbolic
        except ArithmeticError:
            pass
        diag = A.data[A.row == A.col]
        ridge = RIDGE * max(float(diag.max()) if diag.size else 1.0, 1e-300)
        M = M + cvxopt.spmatrix(ridge, range(m), range(m), (m, m))
        try:
            cholmod.numeric(M, self._symbolic)
        except ArithmeticError as exc:
            raise np.linalg.LinAlgError(f"X'DX is not positive definite: {exc}") from None
        return self._symbolic

    def solve(self, r) -> np.ndarray:
        r"""The solution of :math:`X^\top D X \Delta = r` with the last factor (``r`` of length
        m; entries of columns with no stored entry get 0)."""
        if not self.sparse:
            return linalg.cho_solve(self._factor, r, check_finite=False)
        full = np.asarray(r, dtype=float)
        b = self._cvxopt.matrix(np.ascontiguousarray(full[self.used]))
        self._cholmod.solve(self._numeric, b)
        out = np.zeros_like(full)
        out[self.used] = np.asarray(b).ravel()
        return out
