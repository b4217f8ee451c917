"""``aidopt bench busy``: the native methods and their anchors alone, then under a background mix.

Users run several jobs at once, so a method's time on an idle machine is half the story. This
benchmark times a panel of default solves and the tools they are compared with, each in a fresh
process and only the solve (the data are made in the process), first on the otherwise idle
machine, then while a background mix runs, and reports the slowdown busy / alone of each.

The panel (:data:`PANEL`): the 2-norm SVM by AID (``fm``) at 3e4 x 30 and, with LIBSVM on the same
data, at 1e4 x 30; LAD by AID (``fn``) at 2e5 x 50, set B, with R quantreg's ``rq.fit(method="fn")``
when ``Rscript`` and the package are installed; kernel AID (rbf) at 2e4 x 20 with LIBSVM's rbf SVC;
the p-median by branch-and-Benders-cut (SCIP) on TSPLIB fl1400 (p = 100) and u1432 (p = 50).

The background mix (:func:`start_mix`): ``load`` workers at ``nice 19``, each in a session of its
own, as jobs started from other terminals are. On Linux with automatic scheduling groups
(``/proc/sys/kernel/sched_autogroup_enabled``) each session is a group that gets an equal share of
the CPU whatever its nice value. Even workers run loops of short processes that import aidopt and
solve three small models (the modified SVM by SOR with numba, LAD with SCIP when installed or
HiGHS, the 2-norm SVM with Clarabel), as a fuzz campaign does; odd workers multiply 400 x 400
matrices, as a test suite's numerical work does. The busy timings start after a warm-up.

``AIDOPT_BLAS_THREADS`` in the environment reaches the timed processes, so the default of
:mod:`aidopt.decomposition.threads` can be compared with another thread count.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

from aidopt.bench.lad import _run, environment, run_json

__all__ = ["PANEL", "bench_busy", "start_mix", "stop_mix"]

#: (label, module, method, n, m, instance, extra arguments of the module's worker)
SVM_ARGS = (0.1, "l2", 1e-6, "none", "free", "default")
KERNEL_ARGS = (1.0, "l2", 1e-6, "rbf", "free", "default")
PANEL = [
    ("2-norm SVM 3e4 x 30, AID (`fm`)", "aidopt.bench.svm", "aid", 30_000, 30, "gauss", SVM_ARGS),
    ("2-norm SVM 1e4 x 30, AID (`fm`)", "aidopt.bench.svm", "aid", 10_000, 30, "gauss", SVM_ARGS),
    ("2-norm SVM 1e4 x 30, LIBSVM", "aidopt.bench.svm", "libsvm", 10_000, 30, "gauss", SVM_ARGS),
    ("LAD 2e5 x 50 (set B), AID (`fn`)", "aidopt.bench.lad", "aid", 200_000, 50, "B", ()),
    ("LAD 2e5 x 50 (set B), R quantreg fn", "aidopt.bench.lad", "quantreg", 200_000, 50, "B", ()),
    ("kernel SVM rbf 2e4 x 20, AID", "aidopt.bench.svm", "aid", 20_000, 20, "gauss",
     KERNEL_ARGS),
    ("kernel SVM rbf 2e4 x 20, LIBSVM", "aidopt.bench.svm", "libsvm", 20_000, 20, "gauss",
     KERNEL_ARGS),
    ("p-median fl1400 p=100 (floor), benders", "aidopt.bench.facility", "benders", 1400, 1400,
     "fl1400-p100-floor", ()),
    ("p-median u1432 p=50 (floor), benders", "aidopt.bench.facility", "benders", 1432, 1432,
     "u1432-p50-floor", ()),
]

SHORT_JOB = """
import numpy as np, aidopt
from aidopt.solvers.registry import availability
rng = np.random.default_rng()
X = rng.normal(size=(60, 3)); y = np.where(X[:, 0] > 0, 1.0, -1.0)
aidopt.solve_svm(X, y, bias="regularized", solver="sor", log=False, raise_on_failure=False)
lad = "scip" if availability("scip") == "full" else "highs"
aidopt.solve_lad(X, X[:, 1], solver=lad, log=False, raise_on_failure=False)
aidopt.solve_svm(X, y, solver="clarabel", log=False, raise_on_failure=False)
"""

PRODUCTS = """
import numpy as np
rng = np.random.default_rng()
while True:
    A = rng.normal(size=(400, 400))
    for _ in range(20):
        A = np.tanh(A @ A / 400.0)
"""

WORKER = f"""
import subprocess, sys
while True:
    subprocess.run([sys.executable, "-c", {SHORT_JOB!r}], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
"""


def start_mix(load: int) -> list[subprocess.Popen]:
    """Start ``load`` background workers at nice 19, each in a session of its own."""
    procs = []
    for i in range(load):
        code = WORKER if i % 2 == 0 else PRODUCTS
        procs.append(subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, preexec_fn=lambda: os.nice(19)))
    return procs


def stop_mix(procs: list[subprocess.Popen]) -> None:
    """Stop the workers and everything they started (their sessions' process groups)."""
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for p in procs:
        p.wait()


def _time(entry, seed: int, time_limit: float) -> dict:
    label, module, method, n, m, instance, extra = entry
    if method == "quantreg" and shutil.which("Rscript") is None:
        return {"skipped": "Rscript not installed (apt-get install r-cran-quantreg)"}
    if module == "aidopt.bench.facility":  # its worker: METHOD NAME TIME_LIMIT TOL SEED
        return run_json([sys.executable, "-m", module, method, instance, str(time_limit), "1e-06",
                         str(seed)], time_limit)
    return _run(method, n, m, instance, seed, time_limit, module, extra)


def _seconds(out: dict) -> str:
    if "seconds" not in out:
        return out.get("skipped", "no time")
    done = out.get("termination", "done")
    mark = "" if done in ("done", "certified_optimal") else f" ({done})"
    return f"{out['seconds']:.2f}{mark}"


def bench_busy(load: int = 6, warmup: float = 20.0, repeat: int = 1, seed: int = 0,
               time_limit: float = 600.0, works: list[str] | None = None,
               output: str | None = None) -> list[dict]:
    """Time :data:`PANEL` alone, then under :func:`start_mix`; print (and append) the table.

    Parameters
    ----------
    load : int
        Background workers.
    warmup : float
        Seconds the mix runs before the first busy timing.
    repeat : int
        Timings of each work in each condition (the table shows the median).
    seed : int
        Seed of the instances.
    time_limit : float
        Time limit of each timed solve, seconds.
    works : list of str, optional
        Substrings of the panel's labels to keep (default: all).
    output : str, optional
        Append the markdown table to this file.

    Returns
    -------
    list of dict
        Per work: ``label``, ``alone`` and ``busy`` (the workers' JSON results) and ``load``
        (the 1-minute load average after the busy timings).
    """
    import statistics

    panel = [e for e in PANEL if not works or any(w in e[0] for w in works)]
    rows = [{"label": e[0], "alone": [], "busy": []} for e in panel]
    for _ in range(repeat):
        for row, entry in zip(rows, panel, strict=True):
            row["alone"].append(_time(entry, seed, time_limit))
    procs = start_mix(load)
    try:
        time.sleep(warmup)
        for _ in range(repeat):
            for row, entry in zip(rows, panel, strict=True):
                row["busy"].append(_time(entry, seed, time_limit))
                row["load"] = os.getloadavg()[0]
    finally:
        stop_mix(procs)

    def median(outs):
        times = [o["seconds"] for o in outs if "seconds" in o]
        return statistics.median(times) if times else None

    blas = os.environ.get("AIDOPT_BLAS_THREADS", "default")
    lines = [f"Environment: {environment()}; background: {load} workers (nice 19, own "
             f"sessions), warm-up {warmup:g} s; AIDOPT_BLAS_THREADS={blas}; median of {repeat}",
             "", "| work | alone (s) | busy (s) | slowdown | load (1 min) |", "|---|---|---|---|---|"]
    for row in rows:
        alone, busy = median(row["alone"]), median(row["busy"])
        ratio = f"{busy / alone:.1f}x" if alone and busy else "-"
        shown_alone = f"{alone:.2f}" if alone is not None else _seconds(row["alone"][0])
        shown_busy = f"{busy:.2f}" if busy is not None else _seconds(row["busy"][0])
        bad = [o.get("termination") for o in row["alone"] + row["busy"]
               if o.get("termination") not in (None, "done", "certified_optimal")]
        note = f" ({', '.join(map(str, bad))})" if bad else ""
        lines.append(f"| {row['label']}{note} | {shown_alone} | {shown_busy} | {ratio} | "
                     f"{row.get('load', 0.0):.1f} |")
    text = "\n".join(lines)
    print(text, flush=True)
    if output:
        with open(output, "a") as fh:
            fh.write(text + "\n\n")
    return rows
