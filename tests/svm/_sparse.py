"""Sparse SVM instances and an independent reference for tests/svm/test_svm_sparse.py and
tests/decomposition/test_dcd.py.

The reference is Clarabel called through its own Python interface on the *primal* weighted SVM
QP (w, b, xi) built here from the sparse rows, not from aidopt's models, dual forms or
certificate.
"""

from __future__ import annotations

import clarabel
import numpy as np
import scipy.sparse as sp


def random_rows(n, m, density, seed, *, shift=0.5):
    """``(X, y)``: CSR rows with about ``density m`` stored entries each (normal values, the
    class shifting the first fifth of the columns by ``shift``), labels in {-1, +1}."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    X = sp.random(n, m, density=density, format="csr", random_state=rng,
                  data_rvs=rng.standard_normal)
    X = X.tolil()
    signal = max(1, m // 5)
    for i in range(n):  # every row has an entry in the class-dependent columns
        X[i, int(rng.integers(0, signal))] = shift * y[i] + rng.standard_normal()
    return sp.csr_matrix(X), y


def sparse_rows(n, m, per_row, seed):
    """``(X, y)``: about ``per_row`` uniformly placed entries per row (duplicates summed) and
    labels that depend on a few columns, built without any n x m array."""
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), per_row)
    cols = rng.integers(0, m, size=rows.size)
    X = sp.csr_matrix((rng.random(rows.size), (rows, cols)), shape=(n, m))
    X.sum_duplicates()
    score = X @ rng.standard_normal(m)
    y = np.where(score + 0.3 * rng.standard_normal(n) > np.median(score), 1.0, -1.0)
    return X, y


def reference(X, y, u):
    """The optimal value of ``1/2 ||w||^2 + sum_i u_i max(0, 1 - y_i (x_i w + b))`` (b free),
    evaluated exactly at Clarabel's (w, b)."""
    X = sp.csr_matrix(X)
    n, m = X.shape
    # variables [w (m), b, xi (n)]; -y (X w + b) - xi + s = -1 and -xi + s = 0 with s >= 0
    P = sp.block_diag([sp.eye(m), sp.csc_matrix((1 + n, 1 + n))]).tocsc()
    q = np.concatenate([np.zeros(m + 1), u])
    A = sp.vstack([sp.hstack([-sp.diags(y) @ X, sp.csc_matrix(-y[:, None]), -sp.eye(n)]),
                   sp.hstack([sp.csc_matrix((n, m + 1)), -sp.eye(n)])]).tocsc()
    rhs = np.concatenate([-np.ones(n), np.zeros(n)])
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_rel = settings.tol_gap_abs = 1e-11
    settings.tol_feas = 1e-11
    sol = clarabel.DefaultSolver(P, q, A, rhs, [clarabel.NonnegativeConeT(2 * n)], settings).solve()
    x = np.asarray(sol.x)
    return objective(X, y, u, x[:m], x[m])


def objective(X, y, u, w, b):
    """The SVM objective at (w, b), computed here from scratch."""
    return 0.5 * float(w @ w) + float(u @ np.maximum(0.0, 1.0 - y * (X @ w + b)))
