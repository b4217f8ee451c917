"""Independent reference solves with Clarabel's native API, and seeded instances."""

from __future__ import annotations

import clarabel
import numpy as np
import scipy.sparse as sp


def _settings():
    s = clarabel.DefaultSettings()
    s.verbose = False
    s.tol_gap_abs = 1e-11
    s.tol_gap_rel = 1e-11
    s.tol_feas = 1e-11
    s.tol_ktratio = 1e-9
    s.max_iter = 500
    return s


def _solve(P, q, A, b, cones):
    solver = clarabel.DefaultSolver(sp.csc_matrix(sp.triu(P)), q, sp.csc_matrix(A), b, cones, _settings())
    sol = solver.solve()
    assert sol.status in (clarabel.SolverStatus.Solved, clarabel.SolverStatus.AlmostSolved), sol.status
    return np.asarray(sol.x), float(sol.obj_val)


def box_qp(M, upper):
    """``min 1/2 u'Mu - e'u  s.t.  0 <= u <= upper`` (1.45); returns ``(u, objective)``."""
    m = M.shape[0]
    upper = np.broadcast_to(np.asarray(upper, dtype=float), (m,))
    A = sp.vstack([-sp.eye(m), sp.eye(m)])
    b = np.concatenate([np.zeros(m), upper])
    return _solve(sp.csc_matrix(M), -np.ones(m), A, b, [clarabel.NonnegativeConeT(2 * m)])


def primal_135(A, d, nu, weights=None):
    """(1.35) in ``x = [w; gamma; y]``; returns ``(w, gamma, objective)``."""
    m, n = A.shape
    s = np.ones(m) if weights is None else np.asarray(weights, dtype=float)
    P = sp.diags(np.concatenate([np.ones(n + 1), np.zeros(m)]))
    q = np.concatenate([np.zeros(n + 1), nu * s])
    # D(Aw - e gamma) + y >= e   <=>   [-DA, d, -I] x + s = -e,  s >= 0 ;   y >= 0  <=>  [0, 0, -I] x <= 0
    rows1 = sp.hstack([sp.csc_matrix(-d[:, None] * A), sp.csc_matrix(d[:, None]), -sp.eye(m)])
    rows2 = sp.hstack([sp.csc_matrix((m, n + 1)), -sp.eye(m)])
    Acon = sp.vstack([rows1, rows2])
    b = np.concatenate([-np.ones(m), np.zeros(m)])
    x, obj = _solve(P, q, Acon, b, [clarabel.NonnegativeConeT(2 * m)])
    return x[:n], float(x[n]), obj


def data(seed, m=None, n=None, sep=1.0):
    """Two overlapping Gaussian classes, labels +-1 (both classes present)."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(30, 151)) if m is None else m
    n = int(rng.integers(2, 9)) if n is None else n
    d = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    d[0], d[1] = 1.0, -1.0
    A = rng.normal(size=(m, n)) + sep * d[:, None] * rng.normal(size=n) / np.sqrt(n)
    return A, d


def rbf(A, width):
    sq = np.sum(A * A, axis=1)
    return np.exp(-np.maximum(sq[:, None] + sq[None, :] - 2 * A @ A.T, 0.0) / width)
