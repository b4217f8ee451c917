"""Scale benchmark of the covering models (MCLP, LSCP): seeded instances of up to 10^7 demand
points and 10^3 candidate sites, solved in memory or through the dask engine.

Instances (docs/facility.md, "Covering models at scale"):

* ``"uniform"``: demand points and candidate sites uniform in the unit square;
* ``"clustered"``: a Gaussian mixture of :data:`CLUSTERS` components (centres uniform in
  ``[0.1, 0.9]^2``, standard deviations uniform in ``[0.01, 0.05]``, Dirichlet(1) weights) plus
  a share :data:`BACKGROUND` of uniform points.

The candidate sites are uniform in the unit square for both (the same sites: only the demand
differs).

Points are drawn :data:`GEN_ROWS` at a time, chunk ``i`` from ``default_rng([seed, i])``, so the
first n points are the same for every total size and a file of 10^7 points is written chunk by
chunk (:func:`write_points`) without ever holding it. The mixture and the sites come from
``default_rng([seed, 2**31 - 1])``.

The radius: MCLP's :func:`mclp_radius` is the radius at which ``p`` disjoint discs cover a
``share`` of the unit square, ``R = sqrt(share / (p pi))`` (``p = 50``, ``share = 0.5``: R =
0.0564, about 10 sites within R of a uniform point); p sites then cover at most about that share
of uniform demand (partial coverage), more of clustered demand. LSCP's :func:`lscp_radius` is
the smallest radius at which every point has a site, ``max_i min_j d_ij`` (a k-d tree query per
chunk), times ``1 + margin`` (default 1 %), and at least the MCLP radius.

Reported per run: the CPU time of this process (``time.process_time``: user + system of every
thread, the figure to read on a shared machine), wall seconds, distinct rows after aggregation,
dominated rows dropped (LSCP), objective, termination, gap, and the peak resident memory of the
solve (``VmHWM`` after a reset, :class:`aidopt.bench.dask.PeakMemory`).

    aidopt bench covering --points 1000000 --sites 1000 --p 50 --kinds uniform clustered
    aidopt bench covering --points 10000000 --sites 1000 --p 50 --engine dask --store /data/p.npy
    aidopt bench covering --points 1000000 --sites 1000 --p 50 --models mclp --plain-mip
    aidopt bench covering --points 1000000 --sites 1000 --models lscp --radius 0.08

(``--points``, ``--sites``, ``--p`` and ``--models`` are shared with ``aidopt bench location``
and default to its small sizes: 1,000 points, 100 sites, p = 5.)
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np

__all__ = ["KINDS", "covering_points", "covering_sites", "covering_instance", "mclp_radius",
           "lscp_radius", "write_points", "bench_covering", "add_bench_arguments", "run_bench"]

KINDS = ("uniform", "clustered")

#: points drawn per seeded chunk (the first n points do not depend on the total)
GEN_ROWS = 1 << 16

#: components of the clustered instances' Gaussian mixture
CLUSTERS = 30

#: share of uniform background points in the clustered instances
BACKGROUND = 0.1

#: candidate sites of the benchmark's instances
N_SITES = 1000


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")


def _mixture(seed: int):
    """``(centres, sigmas, cumulative weights)`` of the clustered instances' mixture."""
    rng = np.random.default_rng([seed, 2**31 - 1])
    centres = rng.uniform(0.1, 0.9, size=(CLUSTERS, 2))
    sigmas = rng.uniform(0.01, 0.05, size=CLUSTERS)
    return centres, sigmas, np.cumsum(rng.dirichlet(np.ones(CLUSTERS)))


def _draw(kind: str, rng: np.random.Generator, rows: int, mixture) -> np.ndarray:
    """``rows`` points of ``kind``."""
    if kind == "uniform":
        return rng.random((rows, 2))
    centres, sigmas, cum = mixture
    pts = rng.random((rows, 2))  # the background; the others overwritten below
    clustered = rng.random(rows) >= BACKGROUND
    k = np.minimum(np.searchsorted(cum, rng.random(int(clustered.sum()))), CLUSTERS - 1)
    pts[clustered] = centres[k] + sigmas[k, None] * rng.standard_normal((k.size, 2))
    return pts


def _chunks(kind: str, n: int, seed: int):
    """The first ``n`` points of ``kind``, chunk by chunk (:data:`GEN_ROWS` each)."""
    _check_kind(kind)
    mixture = _mixture(seed) if kind == "clustered" else None
    for i, start in enumerate(range(0, n, GEN_ROWS)):
        pts = _draw(kind, np.random.default_rng([seed, i]), GEN_ROWS, mixture)
        yield pts[:min(GEN_ROWS, n - start)]


def covering_points(n: int, kind: str = "uniform", seed: int = 0) -> np.ndarray:
    """The first ``n`` demand points (n x 2) of the seeded instance ``kind``."""
    if not (isinstance(n, int | np.integer) and n >= 1):
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return np.concatenate(list(_chunks(kind, int(n), seed)))


def covering_sites(kind: str = "uniform", seed: int = 0, n_sites: int = N_SITES) -> np.ndarray:
    """The candidate sites (n_sites x 2) of the seeded instance ``kind``: uniform in the unit
    square for both kinds."""
    _check_kind(kind)
    return np.random.default_rng([seed, 2**31 - 2]).random((int(n_sites), 2))


def mclp_radius(p: int, share: float = 0.5) -> float:
    """The radius at which ``p`` disjoint discs cover ``share`` of the unit square:
    ``sqrt(share / (p pi))``."""
    if not (0 < share <= 1) or p < 1:
        raise ValueError(f"need p >= 1 and 0 < share <= 1, got p={p!r}, share={share!r}")
    return float(np.sqrt(share / (p * np.pi)))


def lscp_radius(points, sites, margin: float = 0.01, least: float = 0.0) -> float:
    """The smallest radius at which every point has a site within it, ``max_i min_j d_ij``,
    times ``1 + margin`` and at least ``least``. ``points`` may be a memory map: it is read
    :data:`GEN_ROWS` rows at a time."""
    from scipy.spatial import cKDTree

    tree = cKDTree(np.asarray(sites, dtype=float))
    far = 0.0
    for start in range(0, len(points), GEN_ROWS):
        d = tree.query(np.asarray(points[start:start + GEN_ROWS], dtype=float), k=1)[0]
        far = max(far, float(d.max()))
    return max(far * (1.0 + margin), float(least))


def covering_instance(n: int, kind: str = "uniform", *, seed: int = 0, p: int = 50,
                      share: float = 0.5, n_sites: int = N_SITES, model: str = "mclp") -> dict:
    """A seeded covering instance in memory: ``points``, ``sites`` and the ``radius`` of
    ``model`` (:func:`mclp_radius` for ``"mclp"``, :func:`lscp_radius` for ``"lscp"``), and
    ``p``."""
    points, sites = covering_points(n, kind, seed), covering_sites(kind, seed, n_sites)
    radius = mclp_radius(p, share)
    if model == "lscp":
        radius = lscp_radius(points, sites, least=radius)
    elif model != "mclp":
        raise ValueError(f"model must be 'mclp' or 'lscp', got {model!r}")
    return {"points": points, "sites": sites, "radius": radius, "p": int(p)}


def write_points(path, n: int, kind: str = "uniform", seed: int = 0) -> str:
    """Write the first ``n`` points of ``kind`` to a ``.npy`` file (n x 2 float64), chunk by
    chunk (never the whole set in memory). Returns the path."""
    path = Path(path)
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(int(n), 2))
    start = 0
    for pts in _chunks(kind, int(n), seed):
        out[start:start + len(pts)] = pts
        start += len(pts)
    out.flush()
    del out
    return str(path)


# ----------------------------------------------------------------------------- the bench
def _solve(points, sites, model, radius, p, engine, chunk_rows, time_limit, fixing=True,
           rows="auto"):
    import aidopt
    from aidopt.data.facility import EuclideanCosts

    kw = dict(p=p, fixing=fixing) if model == "mclp" else {"rows": rows}
    kw["time_limit"] = time_limit
    if engine == "dask":
        from aidopt.data.chunked import to_dask

        xy = to_dask(points, chunk_rows) if not isinstance(points, str) else points
        return aidopt.solve_facility_location(customer_xy=xy, site_xy=sites, model=model,
                                              radius=radius, engine="dask", log=False, **kw)
    return aidopt.solve_facility_location(EuclideanCosts(points, sites), model=model,
                                          radius=radius, log=False, **kw)


def bench_covering(*, points=(10**6,), kinds=KINDS, models=("mclp", "lscp"), p: int = 50,
                   share: float = 0.5, n_sites: int = N_SITES, seed: int = 0,
                   engine: str = "numpy", store=None,
                   chunk_rows: int | None = None, time_limit: float | None = None, output=None,
                   raw=None, fixing: bool = True, radius: float | None = None,
                   lscp_rows: str = "auto") -> list[dict]:
    """Solve every (size, kind, model) and print a markdown table (see the module docstring).

    ``radius``: every model's radius (default: :func:`mclp_radius` and :func:`lscp_radius`).
    ``lscp_rows``: the LSCP's ``rows=`` (``"auto"``, ``"all"``: one MIP on every row, ``"subset"``:
    AID over the rows).

    ``engine="dask"`` writes the points to ``store`` (a ``.npy`` path, default a temporary
    file; kept when given) and solves from it chunk by chunk; ``"numpy"`` holds them in memory.
    ``fixing=False``: the MCLP by one plain MIP solve rather than the reduced-cost fixing method
    (docs/facility.md, "The MCLP's MIP").
    """
    import tempfile

    from aidopt.bench.dask import PeakMemory

    given = radius
    if given is not None and not (math.isfinite(given) and given > 0):
        raise ValueError(f"radius must be positive and finite, got {given!r}")
    rows = []
    for n in points:
        for kind in kinds:
            sites = covering_sites(kind, seed, n_sites)
            tmp = None
            if engine == "dask":
                path = store or str(Path(tmp := tempfile.mkdtemp()) / f"{kind}.npy")
                write_points(path, n, kind, seed)
                pts = np.load(path, mmap_mode="r")
            else:
                pts = covering_points(n, kind, seed)
            for model in models:
                if given is not None:
                    radius = given
                else:
                    radius = mclp_radius(p, share)
                    if model == "lscp":
                        radius = lscp_radius(pts, sites, least=radius)
                cpu, wall = time.process_time(), time.perf_counter()
                with PeakMemory() as mem:
                    res = _solve(pts, sites, model, radius, p, engine, chunk_rows, time_limit,
                                 fixing, lscp_rows)
                row = {"n": n, "kind": kind, "model": model, "engine": engine,
                       "fixing": bool(fixing and model == "mclp"),
                       "rows_method": lscp_rows if model == "lscp" else "",
                       "radius": round(radius, 6), "cpu_s": round(time.process_time() - cpu, 2),
                       "wall_s": round(time.perf_counter() - wall, 2),
                       "rows": res.dimensions.get("rows"), "objective": res.objective,
                       "termination": res.termination.value, "gap": res.gap,
                       "peak_rss_gb": round(mem.peak_mb / 1024.0, 3),
                       "message": res.message}
                rows.append(row)
                print(json.dumps(row), flush=True)
            if tmp is not None:
                del pts
                Path(path).unlink(missing_ok=True)
    table = _table(rows)
    print(table)
    if output:
        with open(output, "a") as fh:
            fh.write(table + "\n")
    if raw:
        Path(raw).write_text(json.dumps(rows, indent=1))
    return rows


def _table(rows: list[dict]) -> str:
    head = ("| n | kind | model | engine | method | radius | CPU s | wall s | rows | objective | "
            "termination | gap | peak RSS GB |")
    lines = [head, "|" + "---|" * 13]
    for r in rows:
        lines.append(f"| {r['n']} | {r['kind']} | {r['model']} | {r['engine']} | "
                     f"{_method(r)} | {r['radius']} "
                     f"| {r['cpu_s']} | {r['wall_s']} | {r['rows']} | {r['objective']:.10g} | "
                     f"{r['termination']} | {r['gap']:.1e} | {r['peak_rss_gb']} |")
    return "\n".join(lines)


def _method(row: dict) -> str:
    """The table's method: the MCLP's ``fixing`` or plain MIP, the LSCP's ``rows=``."""
    if row["model"] == "mclp":
        return "fixing" if row.get("fixing") else "plain MIP"
    return f"rows={row.get('rows_method') or 'auto'}"


def add_bench_arguments(p) -> None:
    """The flags of ``aidopt bench covering`` of its own; ``--points``, ``--sites``, ``--p`` and
    ``--models`` are those of ``aidopt bench location`` (shared), ``--seed``,
    ``--time-limit``, ``--output`` and ``--raw`` those of ``aidopt bench``."""
    g = p.add_argument_group("covering (aidopt bench covering; also --points, --sites, --p, "
                             "--models mclp lscp)")
    g.add_argument("--rows", dest="lscp_rows", choices=["auto", "all", "subset"], default="auto",
                   help="covering: the LSCP's rows= (all: one MIP on every aggregated row; "
                        "subset: AID over the rows; auto: by their number)")
    g.add_argument("--kinds", nargs="+", choices=KINDS, default=None,
                   help="covering: uniform and/or clustered points (default both)")
    g.add_argument("--share", type=float, default=0.5,
                   help="covering: MCLP's radius is the one at which p disjoint discs cover "
                        "this share of the square (default 0.5)")
    g.add_argument("--engine", dest="cover_engine", choices=["numpy", "dask"], default="numpy",
                   help="covering: points in memory, or written to --store and streamed")
    g.add_argument("--store", default=None,
                   help="covering --engine dask: the .npy file of the points (default a "
                        "temporary file)")
    g.add_argument("--chunk-rows", type=int, default=None,
                   help="covering --engine dask: points per chunk")
    g.add_argument("--plain-mip", dest="cover_plain", action="store_true",
                   help="covering: MCLP by one plain HiGHS MIP solve, without the LP, heuristic "
                        "and reduced-cost fixing (fixing=False)")


def run_bench(args) -> int:
    """``aidopt bench covering`` (the issue's sizes: ``--points 1000000 --sites 1000 --p 50``)."""
    models = args.models or ["mclp", "lscp"]
    bad = [m for m in models if m not in ("mclp", "lscp")]
    if bad:
        raise ValueError(f"bench covering runs the models mclp and lscp, got {bad}")
    bench_covering(points=args.points, kinds=args.kinds or KINDS, models=models, p=args.p,
                   share=args.share, n_sites=args.location_sites, seed=args.seed,
                   engine=args.cover_engine, store=args.store, chunk_rows=args.chunk_rows,
                   time_limit=args.time_limit, output=args.output, raw=args.raw,
                   fixing=not getattr(args, "cover_plain", False),
                   radius=getattr(args, "radius", None), lscp_rows=getattr(args, "lscp_rows", "auto"))
    return 0
