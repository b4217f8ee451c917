r"""``aidopt bench location``: aidopt's location models against PySAL spopt on the same instances.

Every (instance, model) pair runs aidopt, then each baseline, each in its own subprocess (the
instance rebuilt from its name in the worker), one after the other, never two at once. A
markdown row per pair gives aidopt's time, whether it certified, its objective; spopt's time
(its model build and its solve, both timed, shown as ``build + solve``), objective, whether it
equals aidopt's within ``tol`` (relative), and the ratio spopt time / aidopt time.

**What is timed.** aidopt: the call of :func:`aidopt.api.facility.solve_facility_location` on
the coordinates (``EuclideanCosts``: aidopt needs no cost matrix; the coverage sets, levels and
cuts are computed inside the timer). spopt: ``Model.from_cost_matrix(...)`` (the PuLP model) and
``.solve(pulp.PULP_CBC_CMD(msg=False, timeLimit=T))``, CBC being spopt's default; the dense
``n x s`` cost matrix spopt users pass is built **outside** its timer (it is input to spopt).
LSCP-B's ``from_cost_matrix`` solves its LSCP stage itself, so its "build" holds that solve. A
run that reaches the time limit is shown as ``time limit``; a run killed 120 s after it, or
failing (e.g. memory), as such.

**Objectives compared** (the model's natural value, as both report it): MCLP the covered
weight; LSCP and the capacitated LSCPs the number of sites; LSCP-B the number of points covered
at least twice, counted on spopt's open sites (spopt's own objective also counts the points that
only one site can cover, whose backup variable no constraint binds); p-center the radius;
p-dispersion the smallest distance between chosen sites; p-median the total distance.

**Instances** (names for ``--instances``; demand weight 1 per point):

* ``uniform`` (``uniform-N-S-seedK``): N demand points and S candidate sites, independent and
  uniform in [0, 10^4]^2 (:func:`uniform_sites`, seed K);
* ``clustered`` (``clustered-N-S-seedK``): N demand points in 40 Gaussian clusters
  (:func:`aidopt.instances.facility.tsplib_like_points`, like TSPLIB's fl sets), S candidate
  sites uniform in [0, 10^4]^2;
* ``fl1400``, ``u1432`` (``fl1400-S-seedK``): the shipped TSPLIB coordinate sets, every city a
  demand point, S of its cities (a seeded sample; all when S >= n) the candidate sites, TSPLIB's
  nearest-integer distances.

Costs are Euclidean distances (exact for the random sets). The default radius is the largest
distance from a point to its nearest site for the MCLP, 1.5 times it for the LSCP models (so
that they are feasible); ``--radius`` sets it for all. The capacitated
LSCP gives each site the capacity ``ceil(4 n / s)`` (demand 1 per point); p-dispersion uses the
sites' distances (the uniform and clustered instances of one seed share their sites).

**Single-sourcing** (``sclscp``): the points get seeded integer demands in 1..4
(:func:`bench_demand`; with unit demand and integer capacities single-sourcing would cost
nothing over split demand) and each site the capacity ``ceil(4 D / s)``, ``D`` the total
demand. spopt 0.7 has no single-sourcing option: its reference is spopt's own CLSCP-SO model
(``LSCP.from_cost_matrix`` with the demand and capacities) with the assignment variables
``z[i, j]`` made binary after it is built, solved by CBC (an unaggregated n x s binary MIP).
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np

__all__ = ["MODELS", "bench_location", "load_instance", "spopt_solve", "uniform_sites"]

#: the models of the bench: ``clscp`` is the capacitated LSCP, ``sclscp`` its single-sourcing
#: variant, ``lscp-b`` backup coverage
MODELS = ("mclp", "lscp", "clscp", "sclscp", "lscp-b", "p-center", "p-median", "p-dispersion")
DEFAULT_MODELS = ("mclp", "lscp", "p-center", "p-median", "p-dispersion")
DEFAULT_INSTANCES = ("uniform", "clustered", "fl1400", "u1432")
BASELINES = ("spopt",)


def uniform_sites(n: int, seed: int) -> np.ndarray:
    """``n`` points uniform in [0, 10^4]^2 (the candidate sites; a stream separate from the
    demand points' by the seed offset 10^6)."""
    return np.random.default_rng(seed + 1_000_000).random((n, 2)) * 10000.0


def load_instance(name: str) -> dict:
    """``dict(customer_xy, site_xy, round_to)`` of a bench instance name
    (``uniform-N-S-seedK``, ``clustered-N-S-seedK``, ``fl1400-S-seedK``, ``u1432-S-seedK``)."""
    from aidopt.instances import facility as inst

    m = re.fullmatch(r"(uniform|clustered)-(\d+)-(\d+)-seed(\d+)", name)
    if m:
        n, s, seed = int(m[2]), int(m[3]), int(m[4])
        cxy = (np.random.default_rng(seed).random((n, 2)) * 10000.0 if m[1] == "uniform"
               else inst.tsplib_like_points("clustered", n, seed=seed))
        return {"customer_xy": cxy, "site_xy": uniform_sites(s, seed), "round_to": None}
    m = re.fullmatch(r"(fl1400|u1432)-(\d+)-seed(\d+)", name)
    if m:
        from aidopt.data.facility import read_tsplib

        xy = read_tsplib(inst.tsplib_path(m[1]))[0]
        s, seed = int(m[2]), int(m[3])
        pick = (np.arange(len(xy)) if s >= len(xy)
                else np.sort(np.random.default_rng(seed).choice(len(xy), s, replace=False)))
        return {"customer_xy": xy, "site_xy": xy[pick], "round_to": 0}
    raise ValueError(f"unknown location instance {name!r}")


def instance_name(kind: str, n: int, s: int, seed: int) -> str:
    """The bench name of ``kind`` (``uniform``, ``clustered``, ``fl1400``, ``u1432``) at n points
    (ignored by the TSPLIB sets: their cities) and s sites."""
    if kind in ("uniform", "clustered"):
        return f"{kind}-{n}-{s}-seed{seed}"
    if kind in ("fl1400", "u1432"):
        return f"{kind}-{s}-seed{seed}"
    raise ValueError(f"unknown location instance {kind!r}: choose from {DEFAULT_INSTANCES}")


def default_radius(costs, model: str) -> float:
    """The largest distance from a point to its nearest site, times 1.5 for the LSCP models
    (every point coverable, with room for backups and capacities) and 1 for the MCLP (so that
    p sites rarely cover every point)."""
    from scipy.spatial import cKDTree

    d = cKDTree(costs.site_xy).query(costs.customer_xy)[0]
    if costs.round_to is not None:
        d = np.round(d, costs.round_to)
    return float((1.0 if model == "mclp" else 1.5) * d.max())


def capacities(n: int, s: int, demand=None) -> np.ndarray:
    """The capacitated LSCP's capacity of every site: ``ceil(4 D / s)``, ``D`` the total demand
    (``n`` for demand 1 per point)."""
    total = n if demand is None else float(np.sum(demand))
    return np.full(s, float(math.ceil(4 * total / s)))


def bench_demand(model: str, n: int):
    """The points' demand: 1 each (``None``), except for the single-sourcing capacitated LSCP
    (``sclscp``), whose points get seeded integer demands in 1..4 (with unit demand and integer
    capacities single-sourcing costs nothing over split demand)."""
    if model != "sclscp":
        return None
    return np.random.default_rng(n).integers(1, 5, size=n).astype(float)


# --------------------------------------------------------------------------- spopt
def spopt_solve(model: str, costs: np.ndarray, *, p=None, radius=None, demand=None,
                capacity=None, time_limit=None) -> dict:
    """One spopt model on a dense cost matrix (``model`` as in :data:`MODELS`; p-dispersion:
    ``costs`` is the site x site matrix), solved by PuLP's CBC.

    Returns
    -------
    dict
        ``objective`` (the natural value, see the module docstring; None without a solution),
        ``raw_objective`` (PuLP's objective value),
        ``open`` (the selected sites), ``status`` (PuLP's), ``build_seconds``,
        ``solve_seconds``.
    """
    import pulp
    from spopt.locate import LSCP, LSCPB, MCLP, PCenter, PDispersion, PMedian

    costs = np.asarray(costs, dtype=float)
    n = costs.shape[0]
    w = np.ones(n) if demand is None else np.asarray(demand, dtype=float)
    kwargs = {"msg": False}
    if time_limit is not None:
        kwargs["timeLimit"] = float(time_limit)
    solver = pulp.PULP_CBC_CMD(**kwargs)
    t0 = time.perf_counter()
    if model == "mclp":
        obj = MCLP.from_cost_matrix(costs, w, service_radius=radius, p_facilities=p)
    elif model == "lscp":
        obj = LSCP.from_cost_matrix(costs, service_radius=radius)
    elif model in ("clscp", "sclscp"):
        obj = LSCP.from_cost_matrix(costs, service_radius=radius, demand_quantity_arr=w,
                                    facility_capacity_arr=np.asarray(capacity, dtype=float))
        if model == "sclscp":  # spopt has no single-sourcing option: its z made binary
            for z in obj.cli_assgn_vars.ravel():
                z.cat, z.lowBound, z.upBound = pulp.LpInteger, 0, 1
    elif model == "lscp-b":
        obj = LSCPB.from_cost_matrix(costs, service_radius=radius, solver=solver)
    elif model == "p-center":
        obj = PCenter.from_cost_matrix(costs, p_facilities=p)
    elif model == "p-median":
        obj = PMedian.from_cost_matrix(costs, w, p_facilities=p)
    elif model == "p-dispersion":
        obj = PDispersion.from_cost_matrix(costs, p_facilities=p)
    else:
        raise ValueError(f"unknown model {model!r}; choose from {MODELS}")
    t1 = time.perf_counter()
    try:
        if model == "lscp-b":
            obj.solve(results=False)
        elif model == "p-dispersion":
            obj.solve(solver)
        else:
            obj.solve(solver, results=False)
    except RuntimeError:  # spopt's check_status: not solved to optimality
        pass
    t2 = time.perf_counter()
    prob = obj.problem
    status = pulp.LpStatus[prob.status]
    sol_status = pulp.LpSolution.get(prob.sol_status, str(prob.sol_status))
    values = [v.value() for v in obj.fac_vars]
    has = all(v is not None for v in values) and prob.sol_status in (1, 2)
    open_ = [j for j, v in enumerate(values) if v is not None and v > 0.5]
    objective = raw = None
    if has:
        objective = raw = float(pulp.value(prob.objective))
        if model == "lscp-b":  # count on the open sites: spopt's objective also counts the
            # points one site alone covers (their backup variable is unconstrained)
            objective = float(w[((costs[:, open_] <= radius).sum(axis=1) >= 2)].sum())
    return {"objective": objective, "raw_objective": raw, "open": open_, "status": status,
            "solution": sol_status,
            "optimal": prob.sol_status == pulp.LpSolutionOptimal,
            "build_seconds": t1 - t0, "solve_seconds": t2 - t1}


# --------------------------------------------------------------------------- aidopt
def _problem(model, name, p, radius):
    """The instance's aidopt arguments and spopt's matrix inputs (built untimed)."""
    from aidopt.data.facility import EuclideanCosts

    inst = load_instance(name)
    costs = EuclideanCosts(inst["customer_xy"], inst["site_xy"], round_to=inst["round_to"])
    n, s = costs.shape
    radius = default_radius(costs, model) if radius is None else float(radius)
    return costs, n, s, radius


def _aidopt(model, costs, n, s, p, radius, tol, time_limit) -> dict:
    from aidopt.api.facility import solve_facility_location

    kw = dict(tol=tol, time_limit=time_limit, log=False, raise_on_failure=False)
    if model == "p-dispersion":
        from aidopt.data.facility import EuclideanCosts

        sites = EuclideanCosts(costs.site_xy, round_to=costs.round_to)
        res = solve_facility_location(sites, p=p, model="p-dispersion", **kw)
        value = res.solution.get("dispersion")
    elif model == "p-median":
        res = solve_facility_location(costs, p=p, **kw)
        value = res.objective
    elif model == "p-center":
        res = solve_facility_location(costs, p=p, model="p-center", **kw)
        value = res.objective
    elif model == "mclp":
        res = solve_facility_location(costs, p=p, model="mclp", radius=radius, **kw)
        value = res.solution.get("covered")
    elif model in ("clscp", "sclscp"):
        demand = bench_demand(model, n)
        res = solve_facility_location(costs, model="lscp", radius=radius, demand=demand,
                                      capacity=capacities(n, s, demand),
                                      single_source=model == "sclscp", **kw)
        value = res.objective
    elif model == "lscp-b":
        res = solve_facility_location(costs, model="lscp-b", radius=radius, **kw)
        value = res.solution.get("backup")
    elif model == "lscp":
        res = solve_facility_location(costs, model="lscp", radius=radius, **kw)
        value = res.objective
    else:
        raise ValueError(f"unknown model {model!r}; choose from {MODELS}")
    return {"objective": None if value is None or not math.isfinite(value) else float(value),
            "certified": bool(res.certified), "termination": res.termination.value,
            "open": [int(j) for j in res.solution.get("open", [])]}


def _worker(method, model, name, p, radius, tol, time_limit) -> dict:
    costs, n, s, radius = _problem(model, name, p, radius)
    if method == "aidopt":
        t0 = time.perf_counter()
        out = _aidopt(model, costs, n, s, p, radius, tol, time_limit)
        out["seconds"] = time.perf_counter() - t0
    elif method == "spopt":
        from aidopt.data.facility import EuclideanCosts

        # the dense matrix spopt takes, built outside its timer
        if model == "p-dispersion":
            C = EuclideanCosts(costs.site_xy, round_to=costs.round_to).rows(np.arange(s))
        else:
            C = costs.rows(np.arange(n))
        demand = bench_demand(model, n)
        out = spopt_solve(model, C, p=p, radius=radius, demand=demand,
                          capacity=capacities(n, s, demand), time_limit=time_limit)
        out["seconds"] = out["build_seconds"] + out["solve_seconds"]
    else:
        raise ValueError(f"unknown method {method!r}")
    out.update(n=n, s=s, radius=radius)
    return out


def run_one(method, model, name, p, radius, tol, time_limit) -> dict:
    """One method on one (instance, model) in a subprocess (killed 120 s after its limit)."""
    cmd = [sys.executable, "-m", "aidopt.bench.location", method, model, name, str(p),
           "none" if radius is None else repr(float(radius)), str(tol), str(time_limit)]
    # its own process group: a kill must also stop the solver it started (PuLP's CBC is a child
    # process that outlived a killed worker and took a core from the runs after it)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=time_limit + 120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"failed": f"killed {time_limit + 120:.0f} s after start"}
    if proc.returncode != 0:
        tail = stderr.strip().splitlines()[-1:] or [f"exit code {proc.returncode}"]
        return {"failed": f"failed: {tail[0][:160]}"}
    return json.loads(stdout.strip().splitlines()[-1])


def _equal(a, b, tol) -> bool:
    return a is not None and b is not None and abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def _spopt_cells(r, ours, tol, time_limit):
    if "failed" in r:
        return [r["failed"], "-", "-", "-"]
    time_cell = f"{r['build_seconds']:.2f} + {r['solve_seconds']:.2f}"
    if r["seconds"] >= 0.95 * time_limit:
        time_cell += " (time limit)"
    elif not r["optimal"]:
        time_cell += f" ({r['status']}: {r['solution']})"
    obj = "-" if r["objective"] is None else f"{r['objective']:.10g}"
    equal = "yes" if _equal(r["objective"], ours, tol) else "no"
    return [time_cell, obj, equal, None]


def bench_location(instances=DEFAULT_INSTANCES, models=DEFAULT_MODELS, *, points=(1000,),
                   sites=100, p=5, radius=None, baselines=BASELINES, time_limit=600.0,
                   tol=1e-6, seed=0, output=None) -> list:
    """Every model on every instance (at every size of ``points`` for the random sets), aidopt
    and each baseline in their own subprocesses; print (and append to ``output``) a markdown
    table. Columns: instance, n x s, model, aidopt time (s), certified, objective, then per
    baseline: time (s, build + solve), objective, equal (within ``tol``), ratio (baseline time
    / aidopt time)."""
    from aidopt.bench.lad import environment

    bad = [m for m in models if m not in MODELS]
    if bad:
        raise ValueError(f"unknown location model(s) {bad}; choose from {MODELS}")
    bad = [b for b in baselines if b not in BASELINES]
    if bad:
        raise ValueError(f"unknown location baseline(s) {bad}; choose from {BASELINES}")
    head = ["instance", "n x s", "model", "aidopt s", "certified", "aidopt objective"]
    for b in baselines:
        head += [f"{b} s (build + solve)", f"{b} objective", "equal", "ratio"]
    lines = [f"Environment: {environment()}",
             f"p {p}, radius {'default (module docstring)' if radius is None else radius}, "
             f"tol {tol:g}, time limit {time_limit:g} s per run; spopt's cost matrix built "
             "outside its timer", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    print("\n".join(lines), flush=True)
    names = []
    for kind in instances:
        sizes = points if kind in ("uniform", "clustered") else points[:1]
        names += [instance_name(kind, int(n), int(sites), seed) for n in sizes]
    records = []
    for name in names:
        for model in models:
            ours = run_one("aidopt", model, name, p, radius, tol, time_limit)
            row = [name, "-" if "failed" in ours else f"{ours['n']} x {ours['s']}", model]
            if "failed" in ours:
                row += [ours["failed"], "-", "-"]
            else:
                row += [f"{ours['seconds']:.2f}", "yes" if ours["certified"] else
                        f"no ({ours['termination']})",
                        "-" if ours["objective"] is None else f"{ours['objective']:.10g}"]
            rec = {"instance": name, "model": model, "aidopt": ours}
            for b in baselines:
                r = run_one(b, model, name, p, radius, tol, time_limit)
                rec[b] = r
                cells = _spopt_cells(r, ours.get("objective"), tol, time_limit)
                if cells[3] is None:
                    cells[3] = (f"{r['seconds'] / ours['seconds']:.1f}"
                                if "seconds" in ours and ours["seconds"] > 0 else "-")
                row += cells
            records.append(rec)
            line = "| " + " | ".join(row) + " |"
            lines.append(line)
            print(line, flush=True)
    if output:
        with open(output, "a") as fh:
            fh.write("\n".join(lines) + "\n\n")
    return records


if __name__ == "__main__":  # the worker: python -m aidopt.bench.location METHOD MODEL NAME P R TOL TL
    method, model, name, p, radius, tol, tl = sys.argv[1:8]
    result = _worker(method, model, name, int(p), None if radius == "none" else float(radius),
                     float(tol), float(tl))
    print(json.dumps(result, default=float))
