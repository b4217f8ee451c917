"""Benchmark of linear program chunking on the 1-norm LSVM (1.28): LPC at several chunk sizes,
the full LP (HiGHS interior point and dual simplex) and AID, side by side.

Each method runs in a subprocess of its own, so its peak resident memory (``ru_maxrss``) is its
own; the data are written once to ``.npy`` files, which LPC reads through a memmap (one block in
memory at a time) while the full LP and AID load them whole. Run one benchmark at a time: the
timings assume the machine is otherwise idle (on a shared machine, say so with the numbers).

    python -m aidopt.bench.lpc --n 200000 --m 32 --chunks 2 4 8 16 32 64
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

__all__ = ["bench_lpc", "run_one"]


def _peak_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_one(method: str, X_path: str, y_path: str, C: float, chunks: int = 8,
            time_limit: float | None = None) -> dict:
    """Run one method on the saved data and return its measurements (called in a subprocess)."""
    t0 = time.perf_counter()
    out: dict = {"method": method}
    if method == "lpc":
        from aidopt.api.lpc import solve_lsvm_lpc

        res = solve_lsvm_lpc(X_path, np.load(y_path), C=C, chunks=chunks, log=False,
                             time_limit=time_limit)
        hist = res.history
        out.update(objective=res.objective, lower=res.lower_bound, certified=res.certified,
                   termination=str(res.termination), iterations=len(hist),
                   max_rows=res.dimensions["max_rows_in_lp"],
                   final_kept=int(hist[-1].info["kept"]) if hist else 0,
                   build=sum(h.seconds.get("build", 0.0) for h in hist),
                   solve=sum(h.seconds.get("solve", 0.0) for h in hist),
                   check=sum(h.seconds.get("check", 0.0) for h in hist),
                   simplex=sum(int(h.info.get("simplex_iterations", 0)) for h in hist),
                   checks=res.dimensions["full_checks"])
    elif method.startswith("full-"):
        from aidopt import solvers
        from aidopt.models import lp_svm

        X, y = np.load(X_path), np.load(y_path)
        t1 = time.perf_counter()
        model = lp_svm.create_instance(X, y, None, C, "l1", form="primal")
        out["build"] = time.perf_counter() - t1
        options = {"solver": "ipm"} if method == "full-ipm" else {"solver": "simplex"}
        res = solvers.solve_model(model, "highs", options=options, time_limit=time_limit)
        out.update(objective=res.objective, termination=str(res.status), solve=res.seconds,
                   certified=None, simplex=int(res.extra.get("simplex_iterations", 0)))
    elif method == "aid":
        import aidopt

        X, y = np.load(X_path), np.load(y_path)
        res = aidopt.solve_svm(X, y, C=C, norm="l1", log=False, time_limit=time_limit)
        out.update(objective=res.objective, lower=res.lower_bound, certified=res.certified,
                   termination=str(res.termination), iterations=len(res.history))
    else:
        raise ValueError(f"unknown method {method!r}")
    out["seconds"] = time.perf_counter() - t0
    out["peak_mb"] = _peak_mb()
    return out


def _subprocess(method, X_path, y_path, C, chunks, time_limit) -> dict:
    code = ("import json, sys; from aidopt.bench.lpc import run_one; "
            f"print('RESULT', json.dumps(run_one({method!r}, {X_path!r}, {y_path!r}, {C!r}, "
            f"{chunks!r}, {time_limit!r})))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"method": method, "error": (proc.stderr or proc.stdout)[-300:]}


def bench_lpc(n: int = 200_000, m: int = 32, *, C: float = 1.0, separation: float = 1.0,
              seed: int = 0, chunks=(2, 4, 8, 16, 32, 64), full=("ipm", "simplex"),
              aid: bool = True, time_limit: float | None = None, workdir=None,
              out=print) -> list[dict]:
    """Time LPC (one run per number of blocks in ``chunks``), the full LP and AID on seeded LSVM
    data (:func:`aidopt.instances.svm_instance`) and print a markdown table; return the rows."""
    from aidopt.instances import svm_instance

    X, y = svm_instance(n=n, m=m, seed=seed, separation=separation)
    tmp = tempfile.TemporaryDirectory(dir=workdir)
    X_path, y_path = os.path.join(tmp.name, "X.npy"), os.path.join(tmp.name, "y.npy")
    np.save(X_path, X)
    np.save(y_path, y)
    data_mb = X.nbytes / 2**20
    del X, y
    rows = []
    plan = [("lpc", c) for c in chunks] + [(f"full-{f}", 0) for f in full] + ([("aid", 0)] if aid else [])
    out(f"LSVM (1.28), n={n}, m={m}, C={C}, separation={separation}, seed={seed}; "
        f"X is {data_mb:.0f} MB")
    out("")
    out("| method | chunk | time (s) | build (s) | solve (s) | check (s) | iterations | max rows in LP | "
        "kept at end | objective | certified | peak RSS (MB) |")
    out("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for method, c in plan:
        r = _subprocess(method, X_path, y_path, C, c, time_limit)
        r["chunk"] = f"1/{c}" if c else ""
        rows.append(r)
        if "error" in r:
            out(f"| {method} | {r['chunk']} | error: {r['error'].splitlines()[-1] if r['error'] else ''} |")
            continue

        def f(key, fmt=".1f", r=r):
            val = r.get(key)
            return "" if val is None else format(val, fmt)

        cert = {True: "yes", False: "no", None: "-"}[r.get("certified")]
        if r.get("termination") not in ("certified_optimal", "optimal"):
            cert += f" ({r.get('termination')})"
        out(f"| {method} | {r['chunk']} | {f('seconds')} | {f('build')} | {f('solve')} | {f('check')} | "
            f"{r.get('iterations', '')} | {r.get('max_rows', '')} | {r.get('final_kept', '')} | "
            f"{f('objective', '.8g')} | {cert} | {f('peak_mb', '.0f')} |")
    tmp.cleanup()
    return rows


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=200_000)
    p.add_argument("--m", type=int, default=32)
    p.add_argument("--C", type=float, default=1.0)
    p.add_argument("--separation", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--chunks", type=int, nargs="*", default=[2, 4, 8, 16, 32, 64])
    p.add_argument("--full", nargs="*", default=["ipm", "simplex"])
    p.add_argument("--no-aid", action="store_true")
    p.add_argument("--time-limit", type=float, default=None)
    a = p.parse_args(argv)
    bench_lpc(a.n, a.m, C=a.C, separation=a.separation, seed=a.seed, chunks=a.chunks,
              full=a.full, aid=not a.no_aid, time_limit=a.time_limit)


if __name__ == "__main__":
    main()
