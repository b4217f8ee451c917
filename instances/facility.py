"""Facility-location instances: OR-Library p-median files shipped with aidopt, an OR-Library-style
random graph generator, a seeded Euclidean p-median / UFL generator, TSPLIB coordinate sets and
spopt's San Francisco test data (loaded from the installed packages when present).

Every generator is seeded and documented so that each benchmark can be regenerated exactly.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

__all__ = ["InstanceNotFoundError", "ORLIB_PMED", "orlib_pmed", "orlib_style_pmed", "euclidean_instance",
           "tsplib_like_points", "tsplib_instance", "tsplib_path", "TSPLIB_PATHS", "DATA_DIR"]

DATA_DIR = Path(__file__).resolve().parent / "data"


class InstanceNotFoundError(FileNotFoundError, ValueError):
    """A facility instance that is neither an existing file nor a known set. Both a
    ``FileNotFoundError`` and a ``ValueError``: :func:`orlib_pmed` raised the one and
    :func:`tsplib_path` the other for any such name, and callers may catch either."""

#: OR-Library p-median instances shipped in ``instances/data`` and their known optima (pmedopt)
ORLIB_PMED = {
    "pmed1": (100, 5, 5819),
    "pmed2": (100, 10, 4093),
    "pmed3": (100, 10, 4250),
    "pmed4": (100, 20, 3034),
    "pmed5": (100, 33, 1355),
    "pmed6": (200, 5, 7824),
    "pmed7": (200, 10, 5631),
    "pmed8": (200, 20, 4445),
    "pmed9": (200, 40, 2734),
    "pmed10": (200, 67, 1255),
    "pmed11": (300, 5, 7696),
    "pmed12": (300, 10, 6634),
    "pmed13": (300, 30, 4374),
    "pmed14": (300, 60, 2968),
    "pmed15": (300, 100, 1729),
}


def orlib_pmed(name: str, *, method: str = "scipy"):
    """``(costs, p, optimum)`` of a shipped OR-Library instance (``"pmed1"`` ... ``"pmed15"``)
    or of any OR-Library p-median file path (``optimum`` ``None`` when unknown)."""
    from aidopt.data.facility import read_orlib_pmed

    path = DATA_DIR / f"{name}.txt" if name in ORLIB_PMED else Path(name)
    if not path.exists():
        if _path_like(name):
            raise InstanceNotFoundError(f"OR-Library file not found: {name}")
        raise InstanceNotFoundError(f"unknown OR-Library instance {name!r}: shipped are "
                                    f"{sorted(ORLIB_PMED)}, or pass a file path")
    costs, p = read_orlib_pmed(path, method=method)
    optimum = ORLIB_PMED[name][2] if name in ORLIB_PMED else None
    return costs, p, optimum


def orlib_style_graph(n: int, n_edges: int, seed: int = 0):
    """Edges ``(i, j, cost)`` of a connected random graph in the style of Beasley's p-median
    instances: a random spanning tree (each vertex k > 0 joined to a uniform earlier vertex of a
    random order) plus uniform random extra edges, integer costs uniform in 1..100. (Beasley's own
    generator is not published; these graphs have his sizes and cost range, not his numbers.)"""
    rng = np.random.default_rng(seed)
    if n_edges < n - 1:
        raise ValueError(f"a connected graph on {n} vertices needs at least {n - 1} edges")
    order = rng.permutation(n)
    parents = order[(rng.random(n - 1) * np.arange(1, n)).astype(np.int64)]
    edges = {(min(a, b), max(a, b)) for a, b in zip(order[1:].tolist(), parents.tolist(), strict=True)}
    while len(edges) < n_edges:
        a, b = (int(v) for v in rng.integers(0, n, size=2))
        if a != b:
            edges.add((min(a, b), max(a, b)))
    e = np.array(sorted(edges), dtype=np.int64)
    return e[:, 0], e[:, 1], rng.integers(1, 101, size=len(e)).astype(float)


def orlib_style_pmed(n: int = 900, p: int = 10, n_edges: int | None = None, seed: int = 0):
    """``(costs, p)``: shortest-path costs of :func:`orlib_style_graph` (default n_edges as in
    OR-Library's pmed36-40 for n = 900: 16,200, i.e. 18 n)."""
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import shortest_path

    i, j, c = orlib_style_graph(n, n_edges if n_edges is not None else 18 * n, seed)
    A = csr_array((c, (i, j)), shape=(n, n))
    return shortest_path(A, method="D", directed=False), p


def euclidean_instance(n_customers: int = 1000, n_sites: int = 200, *, kind: str = "ufl",
                       p: int | None = None, seed: int = 0, opening: float = 1.0,
                       demand: str = "integer"):
    """A seeded Euclidean instance in the unit square: ``dict(costs, demand, fixed_costs, p,
    customer_xy, site_xy)``.

    Customers and sites are uniform in [0, 1]^2; costs are Euclidean distances times 1000
    rounded to integers; demand is uniform in 1..10 (``demand="integer"``) or 1
    (``"unit"``). For ``kind="ufl"`` the opening costs are
    ``opening * 0.25 * 1000 * mean demand * n_customers / n_sites ** 0.5 * U(0.5, 1.5)`` rounded:
    with k open sites a customer is about 0.38 / sqrt(k) from the nearest, so the total
    ``k f + 380 n w / sqrt(k)`` is smallest at about ``k = (0.76 n w / f)^(2/3)``, i.e. a few
    dozen open sites for ``n_sites`` = 10^3 (the scale of the optimum is printed in
    docs/benchmarks_facility.md). For ``kind="p-median"`` ``p`` is required and there are no
    opening costs.
    """
    if kind not in ("ufl", "p-median"):
        raise ValueError(f"kind must be 'ufl' or 'p-median', got {kind!r}")
    if kind == "p-median" and p is None:
        raise ValueError("kind='p-median' needs p")
    rng = np.random.default_rng(seed)
    cxy = rng.random((n_customers, 2))
    sxy = rng.random((n_sites, 2))
    from aidopt.data.facility import euclidean_costs

    costs = np.round(euclidean_costs(cxy, sxy) * 1000.0)
    w = rng.integers(1, 11, size=n_customers).astype(float) if demand == "integer" else np.ones(n_customers)
    fixed = None
    if kind == "ufl":
        scale = opening * 0.25 * 1000.0 * w.mean() * n_customers / math.sqrt(n_sites)
        fixed = np.round(scale * rng.uniform(0.5, 1.5, size=n_sites))
    return {"costs": costs, "demand": w, "fixed_costs": fixed, "p": p if kind == "p-median" else None,
            "customer_xy": cxy, "site_xy": sxy}


#: where Debian's packages put the TSPLIB coordinate sets used here
#: (USCA312 ships in r-cran-tsp only as an R data file, USCA312.rda, which aidopt does not read)
TSPLIB_PATHS = {
    "d493": ["/usr/lib/R/site-library/TSP/examples/d493.tsp"],
    "fl1400": [str(Path(__file__).resolve().parent / "data" / "fl1400.tsp")],
    "u1432": [str(Path(__file__).resolve().parent / "data" / "u1432.tsp")],
}


def tsplib_like_points(kind: str, n: int, seed: int = 7) -> np.ndarray:
    """``n`` seeded points (n x 2) of one of the three kinds TSPLIB's instances of about a thousand
    cities come in, for testing on instances no run was tuned on.

    ``"uniform"``: uniform in [0, 10^4]^2 (like rl, pr). ``"clustered"``: 40 Gaussian clusters
    with centres uniform in [0, 10^4]^2, Dirichlet(1) shares of the points and scales uniform in
    20-300 (like fl). ``"lattice"``: n of the k x k lattice points at spacing 100,
    k = ceil(sqrt(1.15 n)), drawn without replacement (like the drilling boards u, pcb, d: many
    equal distances).
    """
    if not (isinstance(n, int | np.integer) and n >= 1):
        raise ValueError(f"n must be a positive integer, got {n!r}")
    rng = np.random.default_rng(seed)
    if kind == "uniform":
        return rng.random((n, 2)) * 10000.0
    if kind == "clustered":
        centres = rng.random((40, 2)) * 10000.0
        sizes = rng.multinomial(n, rng.dirichlet(np.ones(40)))
        return np.vstack([c + rng.normal(scale=rng.uniform(20, 300), size=(k, 2))
                          for c, k in zip(centres, sizes, strict=True)])
    if kind == "lattice":
        k = int(np.ceil(np.sqrt(n * 1.15)))
        grid = np.array([(i, j) for i in range(k) for j in range(k)], dtype=float) * 100.0
        return grid[rng.choice(len(grid), n, replace=False)]
    raise ValueError(f"kind must be 'uniform', 'clustered' or 'lattice', got {kind!r}")


def tsplib_path(name: str) -> Path:
    """Path of a TSPLIB file given directly, or of a set by name: ``fl1400`` and ``u1432`` are
    shipped, ``d493`` is searched where Debian's r-cran-tsp puts it.

    Raises
    ------
    InstanceNotFoundError
        A path (it has a suffix or a directory) that does not exist ("file not found"), or a
        name that is neither a file nor a known set (a ``FileNotFoundError`` and a
        ``ValueError``).
    FileNotFoundError
        A known set that is not installed.
    """
    direct = Path(name)
    if direct.exists():
        return direct
    if name not in TSPLIB_PATHS:
        if _path_like(name):
            raise InstanceNotFoundError(f"TSPLIB file not found: {name}")
        raise InstanceNotFoundError(f"unknown TSPLIB set {name!r}: known are "
                                    f"{sorted(TSPLIB_PATHS)}, or pass a file path")
    for candidate in TSPLIB_PATHS[name]:
        if Path(candidate).exists():
            return Path(candidate)
    raise FileNotFoundError(f"TSPLIB set {name!r} is not shipped with aidopt: Debian's r-cran-tsp "
                            f"installs it (apt-get install r-cran-tsp; looked in "
                            f"{TSPLIB_PATHS[name]})")


def _path_like(name: str) -> bool:
    """Whether ``name`` reads as a file path (a suffix or a directory part), not a set's name."""
    path = Path(name)
    return bool(path.suffix) or len(path.parts) > 1


def tsplib_instance(name: str, *, kind: str = "p-median", p: int | None = None,
                    opening: float = 1.0, rounding: str = "nint") -> dict:
    """A TSPLIB coordinate set as a p-median or UFL instance: every city is a customer (demand 1)
    and a candidate site, costs the file's distances (:func:`~aidopt.data.facility.tsplib_costs`;
    EUC_2D rounded by ``rounding``: ``"nint"``, TSPLIB's, or ``"floor"``, the exact p-median
    papers' convention). UFL opening costs (the same
    for every site) follow :func:`aidopt.data.facility.auto_fixed_costs`:
    ``opening * mean(c) * n / (2 sqrt(n))``."""
    from aidopt.data.facility import auto_fixed_costs, euclidean_costs, read_tsplib, tsplib_costs

    if kind not in ("p-median", "ufl"):
        raise ValueError(f"kind must be 'p-median' or 'ufl', got {kind!r}")
    xy, weight_type = read_tsplib(tsplib_path(name))
    if weight_type.upper() == "EUC_2D":
        costs = euclidean_costs(xy, round_to=0, rounding=rounding)
    else:  # CEIL_2D, ATT, GEO: the file's own distance
        costs = tsplib_costs(tsplib_path(name))
    fixed = None
    if kind == "ufl":
        fixed = np.round(opening * auto_fixed_costs(costs))
    elif p is None:
        raise ValueError("kind='p-median' needs p")
    return {"costs": costs, "p": p if kind == "p-median" else None, "fixed_costs": fixed,
            "demand": None, "customer_xy": xy, "site_xy": xy}


def san_francisco() -> dict:
    """spopt's San Francisco test data (shipped, BSD-3): ``dict(costs (205 x 16) street-network
    metres, demand (POP2000), customer_xy, site_xy (long, lat))``, tracts and stores sorted by
    name as in spopt's own test."""
    import pandas as pd

    dist = pd.read_csv(DATA_DIR / "sf_network_distance.csv")
    table = dist.pivot_table(values="distance", index="DestinationName", columns="name")
    demand = pd.read_csv(DATA_DIR / "sf_demand.csv").sort_values(by=["NAME"]).reset_index(drop=True)
    stores = pd.read_csv(DATA_DIR / "sf_stores.csv").sort_values(by=["NAME"]).reset_index(drop=True)
    if not (np.allclose(table.index.to_numpy(dtype=float), demand.NAME.to_numpy(dtype=float))
            and list(table.columns) == list(stores.NAME)):
        raise ValueError("San Francisco data: tract or store names do not match")
    return {"costs": table.to_numpy(dtype=float), "demand": demand.POP2000.to_numpy(dtype=float),
            "customer_xy": demand[["long", "lat"]].to_numpy(dtype=float),
            "site_xy": stores[["long", "lat"]].to_numpy(dtype=float)}
