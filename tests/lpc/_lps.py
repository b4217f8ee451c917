"""Seeded linear programs min c'x s.t. Hx >= b (and bounds) with known structure."""

from __future__ import annotations

import numpy as np
from aidopt.models import lpc as lpc_models

from aidopt import solvers


def spread_rows(rng, m, k, blocks=8):
    """``k`` row ids in as many different blocks of ``m`` rows as possible."""
    edges = np.linspace(0, m, blocks + 1).round().astype(int)
    chosen = []
    for t in range(k):
        l = t % blocks
        chosen.append(int(rng.integers(edges[l], edges[l + 1])))
    return np.unique(chosen)


def vertex_lp(seed, m=400, n=5, extra_tight=0, duplicates=0, blocks=8):
    """A unique optimal vertex x* whose n tight rows (positive multipliers) lie in n different
    blocks; ``extra_tight`` more rows through x* (zero multipliers: a degenerate vertex) and
    ``duplicates`` copies of tight rows elsewhere."""
    rng = np.random.default_rng(seed)
    H = rng.normal(size=(m, n))
    x_star = rng.normal(size=n)
    b = H @ x_star - rng.exponential(size=m) - 0.05
    tight = spread_rows(rng, m, n + extra_tight, blocks)
    b[tight] = H[tight] @ x_star
    support = tight[:n] if tight.size >= n else tight
    c = H[support].T @ (0.5 + rng.random(support.size))
    for _ in range(duplicates):
        src, dst = rng.choice(support), int(rng.integers(0, m))
        H[dst], b[dst] = H[src], b[src]
    return c, H, b


def cone_lp(seed, m=300, n=4):
    """A random feasible LP bounded because c is in the cone of a few rows."""
    rng = np.random.default_rng(seed)
    H = rng.normal(size=(m, n))
    x0 = rng.normal(size=n)
    b = H @ x0 - rng.exponential(size=m)
    S = rng.choice(m, size=n + 2, replace=False)
    c = H[S].T @ rng.random(S.size)
    return c, H, b


def boxed_lp(seed, m=300, n=6):
    """Bounds 0 <= x <= 3 make any c bounded; rows cut off part of the box."""
    rng = np.random.default_rng(seed)
    H = rng.normal(size=(m, n))
    b = H @ np.full(n, 1.5) - rng.exponential(scale=2.0, size=m)
    c = rng.normal(size=n)
    return c, H, b, [(0.0, 3.0)] * n


def full_lp(c, H, b, bounds=None):
    """Objective of the whole LP solved at once by HiGHS (the reference)."""
    n = len(c)
    lower = upper = None
    if bounds is not None:
        lower = np.array([lo for lo, _ in bounds], dtype=float)
        upper = np.array([hi for _, hi in bounds], dtype=float)
    model = lpc_models.chunk_lp(c, lower, upper)
    lpc_models.add_rows(model, np.arange(len(b)), H, b)
    out = solvers.solve_model(model, "highs")
    assert out.optimal, out
    assert n == len(model.x)
    return out.objective
