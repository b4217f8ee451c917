"""Small seeded data sets shared by the SCM tests."""

from __future__ import annotations

import numpy as np


def far_negatives(seed: int = 0):
    """30 positives N(0, 0.5^2 I), 300 negatives on a ring of radius 0.5..2 around them and 600
    negatives at radius 8..10: with the RBF kernel (gamma 0.5) the far rows see no support
    cluster, so f = b there, and with C = 0.1 the offset is b = -1.19, inside gamma = 1.3 of
    rule (11): rule (11) of Yuan, Li & Zhang (2006) stalls."""
    rng = np.random.default_rng(seed)
    P = rng.normal(scale=0.5, size=(30, 2))
    ang = rng.uniform(0, 2 * np.pi, 300)
    ring = np.c_[np.cos(ang), np.sin(ang)] * rng.uniform(0.5, 2.0, 300)[:, None]
    ang = rng.uniform(0, 2 * np.pi, 600)
    far = np.c_[np.cos(ang), np.sin(ang)] * rng.uniform(8.0, 10.0, 600)[:, None]
    return np.vstack([P, ring, far]), np.r_[np.ones(30), -np.ones(900)]


def wrong_side_negatives(seed: int = 0):
    """30 positives N(0, 0.5^2 I), 585 negatives N((4, 0), 0.7^2 I) and 15 negatives
    N((-2, 0), 0.3^2 I) behind the positives: with the linear kernel (C = 1) those 15 are
    misclassified with f > gamma = 1.3, so rule (11) on both sides removes them. Returns X, y and
    the index of the 15."""
    rng = np.random.default_rng(seed)
    P = rng.normal(size=(30, 2)) * 0.5
    N = np.r_[rng.normal(size=(585, 2)) * 0.7 + [4.0, 0.0], rng.normal(size=(15, 2)) * 0.3 + [-2.0, 0.0]]
    return np.vstack([P, N]), np.r_[np.ones(30), -np.ones(600)], np.arange(615, 630)
