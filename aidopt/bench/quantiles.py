r"""``aidopt bench quantiles``: regression quantiles at several levels, aidopt against R quantreg.

Every method runs in its own subprocess on the same seeded instance (regenerated from the seed in
the worker), one after the other, never two at once. Each reports, per level, the wall and the
process CPU time of the fit alone (instance generation excluded), the full-data objective
:math:`\sum_i \rho_\tau(y_i - x_i\hat\beta)` and, for aidopt, whether the fit was certified.
CPU time is the steadier figure on a shared machine (a wall time includes waiting for a core).

Methods:

* ``sequence``: ``solve_lad(X, y, quantile=levels)``, aidopt's sequence of levels (the band
  start of docs/quantiles.md, "A sequence of levels"); its time is the whole call's, shared
  out per level by each level's own run time.
* ``sequence-kmeans``: the same sequence started as before the band start (the paper's k-means
  step at the previous level's coefficients; :func:`aidopt.api.rq.fit_sequence`,
  ``start="kmeans"``), for comparison.
* ``single``: one ``solve_lad(X, y, quantile=tau)`` per level, each cold.
* ``fn``, ``pfn``, ``br``: R quantreg's ``rq.fit(X, y, tau, method=...)`` per level, timed
  inside R by ``system.time`` (elapsed, and user + system CPU); ``br`` (simplex) only for
  n <= :data:`BR_MAX_ROWS`. Needs ``Rscript`` and quantreg (``apt-get install r-cran-quantreg``).

Instance sets: ``B``, LAD set B (:func:`aidopt.instances.lad_instance`: i.i.d. t(2) errors),
and ``B-het``: the same X with heteroscedastic t(3) errors of scale
:math:`1 + 0.1 (x_1 + \dots + x_5)` (:func:`instance`).

Columns of the table: set, n, m, method, wall and CPU seconds (all levels), the objective per
level, the largest relative objective difference against quantreg's best at each level
(method minus best, over max(1, best)), whether every level was certified (aidopt), and the
CPU and wall ratios against quantreg's reference: per level the faster of ``fn`` and ``pfn``
(by CPU; by wall for the wall ratio), summed over the levels.
"""

from __future__ import annotations

import json
import shutil
import sys
import time

import numpy as np

from aidopt.bench.lad import R_READ, emit_table, environment, run_json, run_r

#: the levels of the issue's target
DEFAULT_LEVELS = (0.1, 0.25, 0.5, 0.75, 0.9)
DEFAULT_SIZES = ((200_000, 50),)
SETS = ("B", "B-het")
AIDOPT_METHODS = ("sequence", "sequence-kmeans", "single")
QUANTREG_METHODS = ("fn", "pfn", "br")
METHODS = AIDOPT_METHODS + QUANTREG_METHODS
DEFAULT_METHODS = ("sequence", "single", "fn", "pfn")
#: ``br`` (quantreg's simplex) runs only up to this many rows
BR_MAX_ROWS = 20_000


def instance(instance_set: str, n: int, m: int, seed: int):
    """``(X, y)``: LAD set B, or ``B-het``: the same X and coefficients with errors
    :math:`(1 + 0.1 \\sum_{j=1}^{5} x_j)\\, t_3` (the columns 1..5 that exist)."""
    from aidopt.instances import lad_instance

    if instance_set not in SETS:
        raise ValueError(f"unknown quantiles instance set {instance_set!r}; choose from {SETS}")
    X, y = lad_instance("B", n=n, m=m, seed=seed)
    if instance_set == "B-het":
        beta = np.random.default_rng(seed).uniform(-1.0, 1.0, size=m)  # lad_instance's first draw
        rng = np.random.default_rng(seed + 1)
        scale = 1.0 + 0.1 * X[:, 1:6].sum(axis=1)
        y = X @ beta + scale * rng.standard_t(3.0, size=n)
    return X, y


def objective(X, y, beta, tau: float) -> float:
    r""":math:`\sum_i \rho_\tau(y_i - x_i\beta)` on the full data."""
    from aidopt.numerics.rq import check_loss

    return float(check_loss(y - X @ np.asarray(beta, dtype=float), np.ones(len(y)), tau))


# --------------------------------------------------------------------------- workers
def _worker_sequence(X, y, levels, time_limit, start=None) -> dict:
    import aidopt

    wall, cpu = time.perf_counter(), time.process_time()
    if start is None:
        fits = list(aidopt.solve_lad(X, y, quantile=list(levels), log=False,
                                     time_limit=time_limit, raise_on_failure=False))
    else:  # the same call with another start of the levels
        from aidopt.api import rq
        from aidopt.api.lad import DEFAULT_SOLVER
        from aidopt.data.validate import as_regression_data
        from aidopt.decomposition.run import RunConfig

        config = RunConfig.from_kwargs({"log": False, "time_limit": time_limit,
                                        "raise_on_failure": False}, caller="bench",
                                       solver=DEFAULT_SOLVER)
        data = as_regression_data(X, y, None, fit_intercept=False, engine="numpy")
        fits = list(rq.fit_sequence(data, tuple(levels), config, start=start))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    own = np.array([fit.seconds for fit in fits], dtype=float)  # each level's run, wall
    share = own / own.sum() if own.sum() > 0 else np.full(len(fits), 1.0 / len(fits))
    return {"levels": [_level(X, y, f, tau, wall * w, cpu * w)
                       for f, tau, w in zip(fits, levels, share, strict=True)]}


def _level(X, y, fit, tau, wall, cpu) -> dict:
    beta = fit.solution.get("beta")
    return {"tau": tau, "wall": wall, "cpu": cpu, "certified": bool(fit.certified),
            "termination": fit.termination.value,
            "objective": None if beta is None else objective(X, y, beta, tau),
            "clusters": fit.history[-1].n_clusters if fit.history else None,
            "iterations": len(fit.history)}


def _worker_single(X, y, levels, time_limit) -> dict:
    import aidopt

    out = []
    for tau in levels:
        wall, cpu = time.perf_counter(), time.process_time()
        fit = aidopt.solve_lad(X, y, quantile=tau, log=False, time_limit=time_limit,
                               raise_on_failure=False)
        out.append(_level(X, y, fit, tau, time.perf_counter() - wall, time.process_time() - cpu))
    return {"levels": out}


#: one ``rq.fit`` per level, each timed (elapsed, user + system CPU) and its coefficients
R_SCRIPT = R_READ + r"""
taus <- as.numeric(strsplit(args[6], ",")[[1]])
for (tau in taus) {
  t <- system.time(fit <- rq.fit(X, y, tau = tau, method = args[5]))
  cat(sprintf("%.6f %.6f", t[["elapsed"]], t[["user.self"]] + t[["sys.self"]]))
  cat(sprintf(" %.17g", coef(fit))); cat("\n")
}
"""


def _worker_quantreg(X, y, levels, time_limit, method) -> dict:
    """quantreg's ``rq.fit`` per level in one R process, each fit timed inside R."""
    if shutil.which("Rscript") is None:
        return {"skipped": "Rscript not installed (apt-get install r-cran-quantreg)"}
    if method == "br" and X.shape[0] > BR_MAX_ROWS:
        return {"skipped": f"br (simplex) only up to n = {BR_MAX_ROWS}"}
    values = run_r(R_SCRIPT, X, y, [method, ",".join(repr(float(t)) for t in levels)], time_limit)
    if isinstance(values, dict):
        return {"skipped": f"quantreg {method}: {values['skipped']}"}
    out = []
    for tau, row in zip(levels, np.reshape(values, (len(levels), -1)), strict=True):
        out.append({"tau": tau, "wall": float(row[0]), "cpu": float(row[1]), "certified": None,
                    "objective": objective(X, y, row[2:], tau)})
    return {"levels": out}


def worker(method: str, n: int, m: int, instance_set: str, seed: int, time_limit: float,
           levels=DEFAULT_LEVELS) -> dict:
    """Run one method on the seeded instance at every level."""
    X, y = instance(instance_set, n, m, seed)
    levels = tuple(float(t) for t in levels)
    if method == "sequence":
        return _worker_sequence(X, y, levels, time_limit)
    if method == "sequence-kmeans":
        return _worker_sequence(X, y, levels, time_limit, start="kmeans")
    if method == "single":
        return _worker_single(X, y, levels, time_limit)
    if method in QUANTREG_METHODS:
        return _worker_quantreg(X, y, levels, time_limit, method)
    raise ValueError(f"unknown quantiles bench method {method!r}; choose from {METHODS}")


# --------------------------------------------------------------------------- driver
def reference(results: dict) -> dict:
    """quantreg's reference from ``{method: worker output}``: per level the best objective of
    the quantreg methods that ran, and the sums over the levels of the faster of ``fn`` and
    ``pfn`` by CPU and by wall (None when neither ran)."""
    ran = {k: v["levels"] for k, v in results.items() if k in QUANTREG_METHODS and "levels" in v}
    best = None
    if ran:
        best = [min(levels[i]["objective"] for levels in ran.values())
                for i in range(len(next(iter(ran.values()))))]
    timed = [ran[k] for k in ("fn", "pfn") if k in ran]
    cpu = wall = None
    if timed:
        cpu = sum(min(levels[i]["cpu"] for levels in timed) for i in range(len(timed[0])))
        wall = sum(min(levels[i]["wall"] for levels in timed) for i in range(len(timed[0])))
    return {"objective": best, "cpu": cpu, "wall": wall}


def row(instance_set: str, n: int, m: int, method: str, out: dict, ref: dict) -> str:
    """One table row of a method's worker output against quantreg's ``reference``."""
    if "skipped" in out:
        return f"| {instance_set} | {n} | {m} | {method} | {out['skipped']} |" + " |" * 6
    levels = out["levels"]
    wall = sum(level["wall"] for level in levels)
    cpu = sum(level["cpu"] for level in levels)
    objectives = " ".join("—" if lv["objective"] is None else f"{lv['objective']:.10g}"
                          for lv in levels)
    delta = "—"
    if ref["objective"] is not None and all(lv["objective"] is not None for lv in levels):
        delta = max(abs(lv["objective"] - b) / max(1.0, abs(b))
                    for lv, b in zip(levels, ref["objective"], strict=True))
        delta = f"{delta:.1e}"
    certified = ("—" if levels[0]["certified"] is None
                 else "yes" if all(lv["certified"] for lv in levels)
                 else "no: " + ", ".join(f"{lv['tau']:g} {lv['termination']}" for lv in levels
                                         if not lv["certified"]))
    ratio_cpu = "—" if not ref["cpu"] else f"{cpu / ref['cpu']:.2f}"
    ratio_wall = "—" if not ref["wall"] else f"{wall / ref['wall']:.2f}"
    return (f"| {instance_set} | {n} | {m} | {method} | {wall:.2f} | {cpu:.2f} | {objectives} | "
            f"{delta} | {certified} | {ratio_cpu} | {ratio_wall} |")


HEADER = ("| set | n | m | method | wall (s) | CPU (s) | objective per level | "
          "max rel. Δ vs quantreg's best | certified | CPU / quantreg | wall / quantreg |")


def bench_quantiles(sizes=DEFAULT_SIZES, sets=SETS, levels=DEFAULT_LEVELS,
                    methods=DEFAULT_METHODS, seed=0, output=None, time_limit=3600.0,
                    run=None) -> str:
    """Run every method on every set and size, one subprocess at a time; print (and append to
    ``output``) a markdown table. ``run(method, n, m, set)`` replaces the subprocess (tests)."""
    levels = tuple(float(t) for t in levels)
    if not levels or any(not 0 < t < 1 for t in levels) or list(levels) != sorted(set(levels)):
        raise ValueError(f"levels must be increasing, distinct and in (0, 1), got {levels}")
    bad = [mth for mth in methods if mth not in METHODS]
    if bad:
        raise ValueError(f"unknown quantiles bench method(s) {bad}; choose from {METHODS}")
    bad = [s for s in sets if s not in SETS]
    if bad:
        raise ValueError(f"unknown quantiles instance set(s) {bad}; choose from {SETS}")
    if run is None:
        def run(method, n, m, instance_set):
            return run_json([sys.executable, "-m", "aidopt.bench.quantiles", method, str(n),
                             str(m), instance_set, str(seed), str(time_limit),
                             ",".join(map(repr, levels))], time_limit)
    lines = [f"Environment: {environment()}; levels {', '.join(f'{t:g}' for t in levels)}", "",
             HEADER, "|" + "---|" * 11]
    print(lines[0], flush=True)
    for instance_set in sets:
        for n, m in sizes:
            results = {}
            for method in methods:
                results[method] = run(method, n, m, instance_set)
                print(f"  {instance_set} {n}x{m} {method}: "
                      + (results[method].get("skipped") or "done"), flush=True)
            ref = reference(results)
            lines.extend(row(instance_set, n, m, method, results[method], ref)
                         for method in methods)
    return emit_table("\n".join(lines), output)


if __name__ == "__main__":
    method, n, m, instance_set, seed, time_limit, levels = sys.argv[1:8]
    print(json.dumps(worker(method, int(n), int(m), instance_set, int(seed), float(time_limit),
                            [float(t) for t in levels.split(",")])))
