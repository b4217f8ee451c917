"""Small seeded S2RLSC instances and an independent direct solve of min_c J(c, y)."""

from __future__ import annotations

import numpy as np
from aidopt.instances.s2rlsc import gaussian2c, ssl_split


def instance(l=6, u=24, d=8, seed=0, n_total=None):
    """Training points of Gaussian2C (``l`` labelled, ``u`` unlabelled), test points, truth."""
    n_total = n_total or 2 * (l + u)
    X, y = gaussian2c(n_total, d, seed=seed)
    return ssl_split(X, y, l, u, seed=seed)


def d_of(y, lam_prime=1.0):
    """Diagonal of D in (10) (labelled 1/l, unlabelled lam'/u) or (7) (no labels: 1/u)."""
    lab = y != 0
    l, u = int(lab.sum()), int((~lab).sum())
    if l == 0:
        return np.full(y.size, np.sqrt(1.0 / u))
    return np.where(lab, np.sqrt(1.0 / l), np.sqrt(lam_prime / u))


def direct_min_J(K, d, lam, y, L=None):
    """min_c ||D(y - Kc)||^2 + lam c'Kc as a linear least-squares problem in c, solved by
    ``numpy.linalg.lstsq`` on ``[DK; sqrt(lam) L'] c = [Dy; 0]`` with ``K = L L'`` (no eigen
    decomposition of DKD, no eq. 12); returns ``(value, c)``."""
    if L is None:
        w, Q = np.linalg.eigh(K)
        w = np.clip(w, 0.0, None)
        L = Q * np.sqrt(w)
    A = np.vstack([d[:, None] * K, np.sqrt(lam) * L.T])
    b = np.concatenate([d * y, np.zeros(L.shape[1])])
    c, *_ = np.linalg.lstsq(A, b, rcond=None)
    res = d * (y - K @ c)
    return float(res @ res + lam * c @ K @ c), c


def random_labels(rng, y, free):
    out = np.array(y, dtype=float)
    out[free] = np.where(rng.random(free.size) < 0.5, 1.0, -1.0)
    return out
