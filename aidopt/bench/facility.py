"""``aidopt bench facility``: AID against the direct MIP and spopt, side by side.

Every method runs in its own subprocess on the same instance (rebuilt from its name in the
worker), one after the other, never two at once; each reports the wall time of the solve
(instance construction excluded; model construction included), the objective, the proven lower
bound, the relative gap and its peak resident memory. Methods:

* ``aid``: :func:`aidopt.api.facility.solve_facility_location` (AID over each customer's cost levels,
  the default ``aggregation="radius"``, HiGHS, the run's ``tol`` and time limit);
* ``benders``: the same plug-in with ``solver="benders"``: branch-and-Benders-cut in SCIP
  (per-customer cuts separated inside one branch and cut, docs/facility.md);
* ``aid-sites``: the same with ``aggregation="sites"`` (AID over clusters of sites);
* ``highs``: the textbook strong MIP of the full model (every x_ij, x_ij <= y_j) built with
  numpy and solved by ``highspy`` directly (no Pyomo), ``mip_rel_gap = tol``;
* ``aidopt-direct``: aidopt's own direct solve (``aid=False``: the same Pyomo model on the
  trivial partition, with the safe pair pruning of docs/facility.md);
* ``gurobi``, ``cplex``, ``xpress``: aidopt's direct solve with that solver (the pip licences
  refuse all but small models: reported as such);
* ``spopt``: ``spopt.locate.PMedian.from_cost_matrix(...).solve(pulp.PULP_CBC_CMD())``, what a
  Python user picks today (PuLP with its default solver, CBC), with ``timeLimit`` and
  ``gapRel = tol``; p-median only (spopt has no UFL model). CBC's bound is not exposed by PuLP:
  the gap column is ``<= tol`` when CBC reports optimal, else unknown.

Instances (names for ``--instances``): ``pmed1`` ... ``pmed15`` (shipped OR-Library
files); ``orl{n}-p{p}`` (OR-Library-style random graph, :func:`aidopt.instances.facility.orlib_style_pmed`);
``euclid-ufl-{n}x{s}`` and ``euclid-pmed-{n}x{s}-p{p}`` (:func:`~aidopt.instances.facility.euclidean_instance`);
``uniform-{n}-p{p}``, ``clustered-{n}-p{p}``, ``lattice-{n}-p{p}`` (TSPLIB-like points,
:func:`~aidopt.instances.facility.tsplib_like_points` with its fixed seed 7, so that a name is
one instance; floor(Euclidean) as a matrix);
``xy-{n}-p{p}`` (n uniform points in a 1000 x 1000 square, every point a customer and a site,
nearest-integer distances given as :class:`aidopt.data.facility.EuclideanCosts`: no cost
matrix; ``benders`` only); ``grid-{k}-p{p}`` (a k x k grid graph, every node a customer and a
site, integer edge lengths 1-99 drawn with the seed, shortest paths given as
:class:`aidopt.data.facility.GraphCosts`: no cost matrix; ``benders`` only);
``fl1400-p{p}``, ``u1432-p{p}`` (shipped), ``d493-p{p}``, ``d493-ufl`` (TSPLIB coordinates,
every city a customer and a site, TSPLIB's nearest-integer distances; a ``-floor`` suffix, e.g.
``fl1400-p5-floor``, truncates instead; UFL opening costs by
:func:`aidopt.data.facility.auto_fixed_costs`);
``sf-p{p}`` (spopt's San Francisco data: 205 census tracts weighted by population, 16 candidate
stores, network distances).
"""

from __future__ import annotations

import json
import math
import re
import resource
import subprocess
import sys
import time

import numpy as np

__all__ = ["bench_facility", "load_instance", "direct_highs", "DEFAULT_INSTANCES"]

DEFAULT_INSTANCES = ("pmed1", "pmed5", "pmed10", "sf-p4", "d493-p10", "orl900-p90",
                     "euclid-ufl-5000x1000")


def load_instance(name: str, seed: int = 0) -> dict:
    """``dict(costs, p, fixed_costs, demand, customer_xy, site_xy, optimum)`` of a bench name."""
    from aidopt.instances import facility as inst

    out = {"p": None, "fixed_costs": None, "demand": None, "customer_xy": None, "site_xy": None,
           "optimum": None}
    if name in inst.ORLIB_PMED:
        costs, p, opt = inst.orlib_pmed(name)
        out.update(costs=costs, p=p, optimum=opt)
        return out
    m = re.fullmatch(r"orl(\d+)-p(\d+)", name)
    if m:
        costs, p = inst.orlib_style_pmed(int(m[1]), int(m[2]), seed=seed)
        out.update(costs=costs, p=p)
        return out
    m = re.fullmatch(r"euclid-(ufl|pmed)-(\d+)x(\d+)(?:-p(\d+))?", name)
    if m:
        kind = "ufl" if m[1] == "ufl" else "p-median"
        d = inst.euclidean_instance(int(m[2]), int(m[3]), kind=kind,
                                    p=int(m[4]) if m[4] else None, seed=seed)
        out.update(d)
        return out
    m = re.fullmatch(r"grid-(\d+)-p(\d+)", name)
    if m:  # a k x k grid graph, integer lengths 1..99, shortest paths computed when needed
        import networkx as nx

        from aidopt.data.facility import GraphCosts

        rng = np.random.default_rng(seed)
        g = nx.grid_2d_graph(int(m[1]), int(m[1]))
        for u, v in g.edges:
            g.edges[u, v]["weight"] = int(rng.integers(1, 100))
        out.update(costs=GraphCosts(g), p=int(m[2]))
        return out
    m = re.fullmatch(r"xy-(\d+)-p(\d+)", name)
    if m:  # uniform points in a 1000 x 1000 square, nearest-integer distances, no matrix
        from aidopt.data.facility import EuclideanCosts

        xy = np.random.default_rng(seed).random((int(m[1]), 2)) * 1000.0
        out.update(costs=EuclideanCosts(xy, round_to=0), p=int(m[2]))
        return out
    m = re.fullmatch(r"(uniform|clustered|lattice)-(\d+)-p(\d+)", name)
    if m:  # TSPLIB-like points, every point a customer and a site, floor(Euclidean), a matrix
        from aidopt.data.facility import euclidean_costs

        xy = inst.tsplib_like_points(m[1], int(m[2]))
        out.update(costs=np.floor(euclidean_costs(xy)), p=int(m[3]))
        return out
    m = re.fullmatch(r"sf-p(\d+)", name)
    if m:
        d = inst.san_francisco()
        out.update(costs=d["costs"], demand=d["demand"], p=int(m[1]), customer_xy=d["customer_xy"],
                   site_xy=d["site_xy"])
        return out
    m = re.fullmatch(r"(\w+?)-(ufl|p(\d+))(-floor)?", name)
    if m:
        d = inst.tsplib_instance(m[1], kind="ufl" if m[2] == "ufl" else "p-median",
                                 p=int(m[3]) if m[3] else None,
                                 rounding="floor" if m[4] else "nint")
        out.update(d)
        return out
    raise ValueError(f"unknown facility instance {name!r}")


def direct_highs(costs, p=None, fixed=None, demand=None, *, gap=1e-4, time_limit=600.0,
                 threads=None):
    """The textbook strong MIP (all n x s pairs) built with numpy and solved by highspy:
    ``dict(objective, bound, status, seconds, build_seconds)``."""
    import highspy
    from scipy import sparse

    t0 = time.perf_counter()
    c = np.asarray(costs, dtype=float)
    n, s = c.shape
    w = np.ones(n) if demand is None else np.asarray(demand, dtype=float)
    nx = n * s
    xi = np.arange(nx)
    cost = np.concatenate([(w[:, None] * c).ravel(), np.zeros(s) if fixed is None else fixed])
    rows = [np.repeat(np.arange(n), s), n + xi, n + xi]
    cols = [xi, xi, nx + np.tile(np.arange(s), n)]
    vals = [np.ones(nx), np.ones(nx), -np.ones(nx)]
    n_rows = n + nx
    if p is not None:
        rows.append(np.full(s, n_rows))
        cols.append(nx + np.arange(s))
        vals.append(np.ones(s))
        n_rows += 1
    A = sparse.csc_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(n_rows, nx + s))
    del rows, cols, vals
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = nx + s, n_rows
    lp.col_cost_ = cost
    lp.col_lower_ = np.zeros(nx + s)
    lp.col_upper_ = np.ones(nx + s)
    lp.row_lower_ = np.concatenate([np.ones(n), np.full(n_rows - n, -inf)])
    lp.row_upper_ = np.concatenate([np.ones(n), np.zeros(nx)] + ([[float(p)]] if p is not None else []))
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
    lp.integrality_ = ([highspy.HighsVarType.kContinuous] * nx
                       + [highspy.HighsVarType.kInteger] * s)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("mip_rel_gap", float(gap))
    h.setOptionValue("time_limit", float(time_limit))
    if threads:
        h.setOptionValue("threads", int(threads))
    h.passModel(lp)
    build = time.perf_counter() - t0
    h.run()
    info = h.getInfo()
    status = h.modelStatusToString(h.getModelStatus())
    objective = float(info.objective_function_value) if h.getSolution().value_valid else math.inf
    return {"objective": objective, "bound": float(info.mip_dual_bound), "status": status,
            "seconds": time.perf_counter() - t0, "build_seconds": build}


def _gap(objective, bound):
    if not (math.isfinite(objective) and bound is not None and math.isfinite(bound)):
        return math.inf
    return max(0.0, objective - bound) / max(1.0, abs(objective))


def _worker(method: str, name: str, time_limit: float, tol: float, seed: int) -> dict:
    inst = load_instance(name, seed)
    costs, p, fixed, w = inst["costs"], inst["p"], inst["fixed_costs"], inst["demand"]
    t0 = time.perf_counter()
    out = {}
    if method in ("aid", "benders", "aid-sites", "aidopt-direct", "gurobi", "cplex", "xpress"):
        from aidopt.api.facility import solve_facility_location

        solver = "highs" if method in ("aid", "aid-sites", "aidopt-direct") else method
        aggregation = "radius" if method in ("aid", "benders") else "sites"
        try:
            res = solve_facility_location(costs, p=p, fixed_costs=fixed, demand=w,
                                          site_xy=inst["site_xy"],
                                          aid=method in ("aid", "benders", "aid-sites"),
                                          aggregation=aggregation,
                                          solver=solver, tol=tol, time_limit=time_limit,
                                          log=False, raise_on_failure=False)
        except Exception as exc:  # noqa: BLE001 - a licence refusal is a result here
            return {"skipped": f"{type(exc).__name__}: {str(exc)[:120]}"}
        hist = res.history
        if res.termination.value == "solver_failure" and "licen" in res.message.lower():
            return {"skipped": f"{solver} licence refuses the full model ({res.message[:90]})"}
        out = {"objective": res.objective, "bound": res.lower_bound,
               "termination": res.termination.value, "iterations": len(hist),
               "clusters": hist[-1].n_clusters if hist else 0,
               "note": res.message[:120] if res.message and "licen" in res.message else ""}
        if method == "aid" and hist:
            out["note"] = (f"T={len(hist)}, largest MIP {int(max(h.info.get('rows', 0) for h in hist))} rows, "
                           f"{int(max(h.info.get('nonzeros', 0) for h in hist))} nonzeros")
        if method == "benders" and hist:
            info = hist[-1].info
            out["note"] = (f"{int(info.get('nodes', 0))} nodes"
                           f" ({int(info.get('ball_branchings', 0))} ball branchings), "
                           f"{int(info.get('cuts', 0))} cuts, "
                           f"separation {info.get('separation_seconds', 0.0):.1f} s")
        if method == "aid-sites" and hist:
            out["note"] = (f"T={len(hist)}, |K| {hist[0].n_clusters}->{hist[-1].n_clusters}, "
                           f"largest model {int(max(h.info.get('pairs', 0) for h in hist))} pairs")
    elif method == "highs":
        r = direct_highs(costs, p, fixed, w, gap=tol, time_limit=time_limit)
        out = {"objective": r["objective"], "bound": r["bound"], "termination": r["status"],
               "note": f"model built in {r['build_seconds']:.1f} s"}
    elif method == "spopt":
        if fixed is not None:
            return {"skipped": "spopt has no UFL model (PMedian only)"}
        import pulp
        from spopt.locate import PMedian

        weights = np.ones(costs.shape[0]) if w is None else w
        model = PMedian.from_cost_matrix(costs, weights, p_facilities=p)
        model = model.solve(pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit, gapRel=tol))
        status = pulp.LpStatus[model.problem.status]
        objective = float(pulp.value(model.problem.objective))
        out = {"objective": objective, "bound": objective if status == "Optimal" else None,
               "termination": status, "note": "CBC via PuLP; bound not exposed"}
    else:
        raise ValueError(f"unknown method {method!r}")
    out["seconds"] = time.perf_counter() - t0
    out["gap"] = _gap(out["objective"], out.get("bound"))
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return out


def run_one(method: str, name: str, time_limit: float, tol: float, seed: int = 0) -> dict:
    """One method on one instance in a subprocess (hard-stopped 120 s after its time limit)."""
    cmd = [sys.executable, "-m", "aidopt.bench.facility", method, name, str(time_limit), str(tol),
           str(seed)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=time_limit + 120)
    except subprocess.TimeoutExpired:
        return {"skipped": f"killed {time_limit + 120:.0f} s after start"}
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        return {"skipped": f"failed: {tail[0][:160]}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bench_facility(instances=DEFAULT_INSTANCES, methods=("aid", "highs", "spopt"), *,
                   time_limit: float = 600.0, tol: float = 1e-4, output=None, seed: int = 0) -> list:
    """Run every method on every instance; print (and append to ``output``) a markdown table.

    Columns: instance, size, method, time (s), objective, lower bound, gap, certified (gap <=
    tol), termination, peak memory (MB), notes; ``speed-up`` is the direct HiGHS time over AID's
    (when both certify) for the AID row.
    """
    from aidopt.bench.lad import environment

    lines = [f"Environment: {environment()}", f"tol {tol:g}, time limit {time_limit:g} s per run", "",
             "| instance | customers x sites | p / kind | method | time (s) | objective | lower bound | "
             "gap | certified | termination | peak MB | notes |", "|" + "---|" * 12]
    print("\n".join(lines), flush=True)
    records = []
    for name in instances:
        inst = load_instance(name, seed)
        n, s = inst["costs"].shape
        kind = f"p={inst['p']}" if inst["p"] is not None else "UFL"
        del inst
        for method in methods:
            r = run_one(method, name, time_limit, tol, seed)
            r.update(instance=name, method=method)
            records.append(r)
            if "skipped" in r:
                line = f"| {name} | {n} x {s} | {kind} | {method} | - | - | - | - | - | skipped | - | {r['skipped']} |"
            else:
                bound = r.get("bound")
                line = (f"| {name} | {n} x {s} | {kind} | {method} | {r['seconds']:.1f} | "
                        f"{r['objective']:.10g} | {'-' if bound is None else f'{bound:.10g}'} | "
                        f"{r['gap']:.1e} | {'yes' if r['gap'] <= tol else 'no'} | "
                        f"{r.get('termination', '')} | {r['peak_mb']:.0f} | {r.get('note', '')} |")
            lines.append(line)
            print(line, flush=True)
    if output:
        with open(output, "a") as fh:
            fh.write("\n".join(lines) + "\n\n")
    return records


if __name__ == "__main__":  # the worker: python -m aidopt.bench.facility METHOD NAME TL TOL SEED
    method, name, tl, tol, seed = sys.argv[1:6]
    result = _worker(method, name, float(tl), float(tol), int(seed))
    print(json.dumps(result, default=float))
