r"""``aidopt bench lad``: AID against baselines run side by side, in the paper's Table 2 layout.

Every method runs in its own subprocess on the same seeded instance (regenerated from the seed in
the worker), one after the other, never two at once; each reports wall time of the solve only
(instance generation excluded), the full-data objective and its peak resident memory. Columns:
n, m, r0, rT, T (AID iterations), time AID, baseline, time baseline, Delta (relative objective
difference, baseline minus AID), rho (time baseline / time AID), and peak memory over the size of X.

Baselines:

* ``highs-<form>-<algorithm>[-nopresolve]``: the full LAD LP built with numpy and solved by
  ``highspy`` directly (no Pyomo in the timing; only ``Highs.run()`` is timed), primal or dual
  form, simplex or IPM, with or without presolve. ``highs`` means all five variants.
* ``pyomo``: aidopt's own direct solve (``aid=False``), Pyomo model construction included.
* ``sklearn``: ``QuantileRegressor(quantile=0.5, alpha=0, solver="highs")``.
* ``quantreg``: R's ``quantreg::rq.fit(method="fn")`` (Frisch-Newton), when ``Rscript`` and the
  package are installed (``apt-get install r-cran-quantreg``); only the fit is timed, inside R.
  ``quantreg-pfn``: ``method="pfn"`` (Portnoy-Koenker preprocessing, then fn).
  ``quantreg-sfn``: ``rq.fit.sfn`` (sparse Frisch-Newton on SparseM's ``matrix.csr``, a sparse
  Cholesky), given X's stored entries only; for the sparse ``text`` sets.
* ``fn``: aidopt's own Frisch-Newton (:mod:`aidopt.numerics.fn`) on the full data (``aid=False,
  solver="fn"``), certified.
* ``aid-<solver>``: AID with another aggregated solver, e.g. ``aid-highs`` when the AID column
  runs ``--solver fn``.

The AID column runs ``solve_lad`` with the default solver, or the one given as ``solver``.

Instance sets: LAD sets ``A``, ``B``, ``C`` (:func:`aidopt.instances.lad_instance`), or
``text`` / ``text:NNZ``: sparse text-like regression data, the tf-idf documents of
:func:`aidopt.instances.text.text_instance` (``NNZ`` distinct words each, default 40) over m - 1
words plus an intercept column, :math:`y = X\beta + e` with :math:`\beta_j \sim N(0, 1)` and
Laplace errors; X stays a CSR matrix in every worker. ``onehot`` / ``onehot:K``: the same with
the one-hot table of :func:`aidopt.instances.onehot.onehot_instance` (K categorical columns,
default 10, their reference levels dropped, plus 10 numeric columns) in place of the words.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date

import numpy as np

HIGHS_VARIANTS = ["highs-dual-ipm", "highs-dual-ipm-nopresolve", "highs-dual-simplex",
                  "highs-primal-ipm", "highs-primal-simplex"]


# --------------------------------------------------------------------------- workers
def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


#: the step times of an AID history shown in the tables
STEPS = ("cluster", "aggregate", "build", "solve", "lift", "evaluate", "split", "certify")


def _objective(X, y, beta) -> float:
    return float(np.abs(y - X @ np.asarray(beta, dtype=float)).sum())


def _worker_aid(X, y, time_limit, solver=None):
    import aidopt

    t0 = time.perf_counter()
    res = aidopt.solve_lad(X, y, log=False, time_limit=time_limit, raise_on_failure=False,
                           solver=solver)
    seconds = time.perf_counter() - t0
    hist = res.history
    return {
        "seconds": seconds,
        "objective": res.objective,
        "certified": res.certified,
        "termination": res.termination.value,
        "r0": hist[0].r_t if hist else None,
        "rT": hist[-1].r_t if hist else None,
        "T": len(hist),
        "steps": {k: round(sum(r.seconds.get(k, 0.0) for r in hist), 2)
                  for k in STEPS},
    }


def _worker_pyomo(X, y, time_limit, solver=None):
    import aidopt

    t0 = time.perf_counter()
    res = aidopt.solve_lad(X, y, aid=False, log=False, time_limit=time_limit,
                           raise_on_failure=False, solver=solver)
    return {"seconds": time.perf_counter() - t0, "objective": res.objective,
            "certified": res.certified, "termination": res.termination.value}


def _worker_highs(X, y, time_limit, form, algorithm, presolve=True):
    import highspy
    from scipy import sparse

    n, m = X.shape
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    if form == "dual":  # max y'v  s.t. X'v = 0, -1 <= v <= 1  (beta = row duals)
        A = sparse.csc_matrix(X.T)
        lp.num_col_, lp.num_row_ = n, m
        lp.col_cost_ = -y
        lp.col_lower_, lp.col_upper_ = -np.ones(n), np.ones(n)
        lp.row_lower_ = lp.row_upper_ = np.zeros(m)
    else:  # min 1'(e+ + e-)  s.t. X beta + e+ - e- = y
        A = sparse.hstack([sparse.csc_matrix(X), sparse.eye(n), -sparse.eye(n)]).tocsc()
        lp.num_col_, lp.num_row_ = m + 2 * n, n
        lp.col_cost_ = np.r_[np.zeros(m), np.ones(2 * n)]
        lp.col_lower_ = np.r_[np.full(m, -inf), np.zeros(2 * n)]
        lp.col_upper_ = np.full(m + 2 * n, inf)
        lp.row_lower_ = lp.row_upper_ = y
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
    del A
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("solver", "ipm" if algorithm == "ipm" else "simplex")
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("presolve", "on" if presolve else "off")
    h.passModel(lp)
    t0 = time.perf_counter()
    h.run()
    seconds = time.perf_counter() - t0
    status = h.modelStatusToString(h.getModelStatus())
    sol = h.getSolution()
    # the dual form minimises -y'v, so its row duals d(-E)/d(rhs) are -beta
    beta = -np.asarray(sol.row_dual) if form == "dual" else np.asarray(sol.col_value[:m])
    obj = _objective(X, y, beta) if status == "Optimal" else float("nan")
    return {"seconds": seconds, "objective": obj, "termination": status}


def _worker_sklearn(X, y, time_limit):
    from sklearn.linear_model import QuantileRegressor

    t0 = time.perf_counter()
    est = QuantileRegressor(quantile=0.5, alpha=0.0, fit_intercept=False, solver="highs")
    est.fit(X, y)
    return {"seconds": time.perf_counter() - t0, "objective": _objective(X, y, est.coef_),
            "termination": "done"}


#: the start of an R script run by :func:`run_r`: quantreg, and X and y read from their files
R_READ = r"""
suppressMessages(library(quantreg))
args <- commandArgs(trailingOnly = TRUE)
n <- as.integer(args[2]); m <- as.integer(args[3])
X <- matrix(readBin(args[1], "double", n * m), nrow = n, ncol = m, byrow = TRUE)
y <- readBin(args[4], "double", n)
"""

R_SCRIPT = R_READ + r"""
t <- system.time(fit <- rq.fit(X, y, tau = 0.5, method = args[5]))[["elapsed"]]
cat(sprintf("%.6f\n", t)); cat(sprintf("%.17g\n", coef(fit)))
"""

#: rq.fit.sfn on a CSR matrix read as its three arrays (SparseM's matrix.csr is 1-based CSR)
R_SFN = r"""
suppressMessages({library(quantreg); library(SparseM)})
args <- commandArgs(trailingOnly = TRUE)
n <- as.integer(args[1]); m <- as.integer(args[2]); nnz <- as.integer(args[3])
ra <- readBin(args[4], "double", nnz)
ja <- readBin(args[5], "integer", nnz) + 1L
ia <- readBin(args[6], "integer", n + 1L) + 1L
y <- readBin(args[7], "double", n)
X <- new("matrix.csr", ra = ra, ja = ja, ia = ia, dimension = c(n, m))
# the Cholesky's work arrays sized for a dense factor (the defaults stop text-like X:
# "Increase tmpmax")
big <- as.integer(min(m * m + m, .Machine$integer.max %/% 2))
ctl <- sfn.control(tmpmax = big, nnzlmax = big, nsubmax = big)
before <- gc(reset = TRUE)  # R heap in MiB (column 2: used; column 6: max used since reset)
t <- system.time(fit <- rq.fit.sfn(X, y, tau = 0.5, control = ctl))[["elapsed"]]
peak <- sum(gc()[, 6]) - sum(before[, 2])
cat(sprintf("%.6f\n", t)); cat(sprintf("%.3f\n", peak)); cat(sprintf("%.17g\n", fit$coef))
"""


def _worker_quantreg_sfn(X, y, time_limit):
    """``rq.fit.sfn`` in R on X's stored entries: its fit time, objective, and in ``r_peak_mb``
    the R heap's growth during the fit (``gc()``'s "max used" since a reset before the fit,
    minus the heap then; sfn's work arrays are R vectors, so they are in it), MiB."""
    from scipy import sparse

    if shutil.which("Rscript") is None:
        return {"skipped": "Rscript not installed (apt-get install r-cran-quantreg)"}
    X = sparse.csr_matrix(X)
    with tempfile.TemporaryDirectory() as tmp:
        files = [os.path.join(tmp, f) for f in ("ra.bin", "ja.bin", "ia.bin", "y.bin", "fit.R")]
        X.data.astype("<f8").tofile(files[0])
        X.indices.astype("<i4").tofile(files[1])
        X.indptr.astype("<i4").tofile(files[2])
        np.asarray(y, dtype="<f8").tofile(files[3])
        with open(files[4], "w") as fh:
            fh.write(R_SFN)
        proc = subprocess.run(
            ["Rscript", files[4], str(X.shape[0]), str(X.shape[1]), str(X.nnz), *files[:4]],
            capture_output=True, text=True, timeout=time_limit,
        )
    if proc.returncode != 0:
        return {"skipped": f"quantreg sfn failed: {proc.stderr.strip()[-200:]}"}
    values = [float(v) for v in proc.stdout.split()]
    return {"seconds": values[0], "objective": _objective(X, y, values[2:]), "termination": "done",
            "r_peak_mb": values[1]}


def _nbytes(X) -> int:
    """Bytes of X's arrays (a sparse X: its stored entries and indices)."""
    if hasattr(X, "indptr"):
        return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    return X.nbytes


def instance(instance_set: str, n: int, m: int, seed: int):
    """``(X, y)`` of a LAD set (``A``, ``B``, ``C``) or of the sparse ``text[:NNZ]`` or
    ``onehot[:K]`` sets (module docstring)."""
    from aidopt.instances import lad_instance

    if not instance_set.startswith(("text", "onehot")):
        return lad_instance(instance_set, n=n, m=m, seed=seed)
    from scipy import sparse

    kind, _, value = instance_set.partition(":")
    if kind == "onehot":  # reference levels dropped: with the intercept the blocks are not collinear
        from aidopt.instances.onehot import onehot_instance

        words, _ = onehot_instance(n, m - 1, int(value) if value else 10, seed=seed,
                                   drop_first=True)
    else:
        from aidopt.instances.text import text_instance

        words, _ = text_instance(n, m - 1, float(value) if value else 40.0, seed=seed)
    X = sparse.hstack([sparse.csr_matrix(np.ones((n, 1))), words], format="csr")
    rng = np.random.default_rng(seed + 1)
    return X, X @ rng.normal(size=m) + rng.laplace(size=n)


def run_r(script: str, X, y, args, time_limit: float) -> subprocess.CompletedProcess:
    """``Rscript script X.bin n m y.bin *args`` on dense ``X`` and ``y`` written as
    little-endian doubles (X by rows) to a temporary directory."""
    with tempfile.TemporaryDirectory() as tmp:
        xf, yf, rf = (os.path.join(tmp, f) for f in ("X.bin", "y.bin", "fit.R"))
        np.ascontiguousarray(X, dtype="<f8").tofile(xf)
        np.asarray(y, dtype="<f8").tofile(yf)
        with open(rf, "w") as fh:
            fh.write(script)
        return subprocess.run(
            ["Rscript", rf, xf, str(X.shape[0]), str(X.shape[1]), yf, *args],
            capture_output=True, text=True, timeout=time_limit,
        )


def _worker_quantreg(X, y, time_limit, method="fn"):
    if shutil.which("Rscript") is None:
        return {"skipped": "Rscript not installed (apt-get install r-cran-quantreg)"}
    proc = run_r(R_SCRIPT, X, y, [method], time_limit)
    if proc.returncode != 0:
        return {"skipped": f"quantreg failed: {proc.stderr.strip()[-200:]}"}
    values = [float(v) for v in proc.stdout.split()]
    return {"seconds": values[0], "objective": _objective(X, y, values[1:]), "termination": "done"}


def worker(method: str, n: int, m: int, instance_set: str, seed: int, time_limit: float) -> dict:
    """Run one method on the seeded instance; return timing, objective and peak memory."""
    rss0 = _rss_mb()
    X, y = instance(instance_set, n, m, seed)
    if method == "aid" or method.startswith("aid-"):
        out = _worker_aid(X, y, time_limit, solver=method[4:] or None)
    elif method == "pyomo":
        out = _worker_pyomo(X, y, time_limit)
    elif method == "fn":
        out = _worker_pyomo(X, y, time_limit, solver="fn")
    elif method.startswith("highs-"):
        _, form, algorithm, *rest = method.split("-")
        out = _worker_highs(X, y, time_limit, form, algorithm, presolve=rest != ["nopresolve"])
    elif method == "sklearn":
        out = _worker_sklearn(X, y, time_limit)
    elif method == "quantreg-sfn":
        out = _worker_quantreg_sfn(X, y, time_limit)
    elif method in ("quantreg", "quantreg-pfn"):
        out = _worker_quantreg(X, y, time_limit, "pfn" if method.endswith("pfn") else "fn")
    else:
        raise ValueError(f"unknown bench method {method!r}")
    out["peak_over_X"] = (_rss_mb() - rss0) * 2**20 / _nbytes(X)
    out["X_mb"] = _nbytes(X) / 2**20
    return out


def _run(method, n, m, instance_set, seed, time_limit, module="aidopt.bench.lad", extra=()) -> dict:
    """Run ``python -m module method n m set seed time_limit *extra`` and read its JSON line."""
    return run_json([sys.executable, "-m", module, method, str(n), str(m), instance_set, str(seed),
                     str(time_limit), *map(str, extra)], time_limit)


def run_json(cmd: list[str], time_limit: float) -> dict:
    """Run a benchmark worker's command in a fresh process and read its last (JSON) line."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=time_limit + 600)
    except subprocess.TimeoutExpired:
        return {"skipped": f"no answer within {time_limit + 600:.0f} s"}
    if proc.returncode != 0:
        return {"skipped": f"failed: {proc.stderr.strip().splitlines()[-1:]}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- driver
def environment() -> str:
    import highspy  # noqa: F401
    import pyomo

    from aidopt import solvers
    from aidopt._version import __version__

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if "model name" in line)
    except (OSError, StopIteration):
        pass
    return (
        f"{date.today().isoformat()}, {os.cpu_count()} cores ({cpu}), Python "
        f"{platform.python_version()}, aidopt {__version__}, Pyomo {pyomo.version.version}, "
        f"HiGHS {solvers.version('highs')}, numpy {np.__version__}"
    )


def bench_lad(sizes, instance_set="A",
              baselines=("highs-dual-ipm", "highs-dual-ipm-nopresolve", "quantreg"), repeat=1,
              seed=0, output=None, time_limit=3600.0, solver=None):
    """Run AID (with ``solver``, default HiGHS) and the baselines on each ``(n, m)``; print
    (and append) a markdown table."""
    methods = []
    for b in baselines:
        methods.extend(HIGHS_VARIANTS if b == "highs" else [b])
    header = ("| set | n | m | r0 | rT | T | time AID (s) | AID steps (s) | baseline | "
              "time baseline (s) | Δ | ρ = base/AID | peak mem / X (AID, base) |")
    lines = [f"Environment: {environment()}, AID solver {solver or 'highs'}", "", header,
             "|" + "---|" * 13]
    cases = [(n, m, seed + rep) for n, m in sizes for rep in range(repeat)]
    aid = "aid" if solver is None else f"aid-{solver}"
    return side_by_side(
        cases, methods,
        lambda method, c: _run(aid if method == "aid" else method, c[0], c[1], instance_set,
                               c[2], time_limit),
        lambda c, aid, method, base: _row(instance_set, c[0], c[1], aid, method, base),
        lines, output,
    )


def emit_table(table: str, output=None) -> str:
    """Print a finished markdown table and append it to ``output`` when given."""
    print(table)
    if output:
        with open(output, "a") as fh:
            fh.write("\n" + table + "\n")
    return table


def _progress(method, case, out: dict) -> str:
    """One line per finished run while a benchmark goes on (the table comes at the end)."""
    if "skipped" in out:
        return f"  {method} {case}: skipped ({out['skipped']})"
    seconds = out.get("seconds")
    verdict = out.get("termination", "")
    return f"  {method} {case}: " + (f"{seconds:.2f} s" if seconds is not None else "") + (
        f", {verdict}" if verdict else "")


def side_by_side(cases, methods, run, row, lines, output=None) -> str:
    """Run AID, then each baseline, on every case (one subprocess at a time, never two at once);
    append one table row per baseline to ``lines``; print the table and append it to ``output``."""
    print(lines[0], flush=True)
    for case in cases:
        aid = run("aid", case)
        print(_progress("aid", case, aid), flush=True)
        for method in methods:
            base = run(method, case)
            print(_progress(method, case, base), flush=True)
            lines.append(row(case, aid, method, base))
    return emit_table("\n".join(lines), output)


def _row(instance_set, n, m, aid, method, base) -> str:
    def f(v, fmt):
        return "—" if v is None else format(v, fmt)

    if "skipped" in aid:
        return f"| {instance_set} | {n} | {m} | AID skipped: {aid['skipped']} |" + " |" * 9
    if "skipped" in base:
        return (f"| {instance_set} | {n} | {m} | {f(aid['r0'], '.4g')} | {f(aid['rT'], '.4g')} | "
                f"{aid['T']} | {aid['seconds']:.2f} | {_steps(aid)} | {method} | "
                f"{base['skipped']} | | | {aid['peak_over_X']:.2f}, — |")
    delta = (base["objective"] - aid["objective"]) / max(1.0, abs(aid["objective"]))
    rho = base["seconds"] / aid["seconds"]
    status = "" if base.get("termination") in ("Optimal", "done", "certified_optimal") else (
        f" ({base.get('termination')})")
    return (f"| {instance_set} | {n} | {m} | {f(aid['r0'], '.4g')} | {f(aid['rT'], '.4g')} | "
            f"{aid['T']} | {aid['seconds']:.2f} | {_steps(aid)} | {method} | "
            f"{base['seconds']:.2f}{status} | {delta:.1e} | {rho:.2f} | "
            f"{aid['peak_over_X']:.2f}, {base['peak_over_X']:.2f} |")


def _steps(aid) -> str:
    s = aid.get("steps", {})
    return " ".join(f"{k[:4]} {v:.1f}" for k, v in s.items() if v >= 0.05)


if __name__ == "__main__":
    method, n, m, instance_set, seed, time_limit = sys.argv[1:7]
    result = worker(method, int(n), int(m), instance_set, int(seed), float(time_limit))
    print(json.dumps(result))
