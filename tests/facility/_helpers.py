"""Small facility-location instances with known optima (brute force over site subsets)."""

from __future__ import annotations

import itertools

import numpy as np

from aidopt.data.facility import as_facility_data


def brute_force(costs, p=None, fixed=None, demand=None) -> float:
    """The optimum by enumerating every set of open sites (at most p for the p-median)."""
    costs = np.asarray(costs, dtype=float)
    n, s = costs.shape
    w = np.ones(n) if demand is None else np.asarray(demand, dtype=float)
    f = np.zeros(s) if fixed is None else np.asarray(fixed, dtype=float)
    best = np.inf
    sizes = range(1, (s if p is None else p) + 1)
    for k in sizes:
        for subset in itertools.combinations(range(s), k):
            idx = list(subset)
            value = f[idx].sum() + w @ costs[:, idx].min(axis=1)
            best = min(best, value)
    return float(best)


def small_instance(seed: int, *, kind: str, n: int = 12, s: int = 8, p: int | None = None,
                   ties: bool = False, duplicate_sites: bool = False):
    """A seeded small instance: ``dict(costs, p, fixed_costs, demand, optimum)``.

    ``ties``: integer costs in 0..4 (many equal costs); ``duplicate_sites``: two pairs of sites
    with identical cost columns and opening costs.
    """
    rng = np.random.default_rng(seed)
    if ties:
        costs = rng.integers(0, 5, size=(n, s)).astype(float)
    else:
        cxy, sxy = rng.random((n, 2)), rng.random((s, 2))
        costs = np.round(np.sqrt(((cxy[:, None] - sxy[None]) ** 2).sum(-1)) * 100)
    fixed = None
    if kind == "ufl":
        fixed = rng.integers(20, 120, size=s).astype(float)
    demand = rng.integers(1, 5, size=n).astype(float)
    if duplicate_sites:
        costs[:, 1] = costs[:, 0]
        costs[:, 3] = costs[:, 2]
        if fixed is not None:
            fixed[1], fixed[3] = fixed[0], fixed[2]
    if kind == "p-median" and p is None:
        p = 2
    if kind == "ufl":
        p = None
    return {"costs": costs, "p": p, "fixed_costs": fixed, "demand": demand,
            "optimum": brute_force(costs, p, fixed, demand)}


def data_of(inst):
    return as_facility_data(inst["costs"], p=inst["p"], fixed_costs=inst["fixed_costs"],
                            demand=inst["demand"])
