"""Benchmark of the dask engine: AID on a synthetic data set streamed from a Zarr store or a
``.npy`` file.

The data set is written to a Zarr group (arrays ``X`` and ``y``), or to a ``.npy`` file with y
beside it (``NAME.y.npy``), chunk by chunk with seeded generators, so it is never held in memory;
the solve then reads X from the store with ``engine="dask"``. Reported: seconds, objective,
termination, certificate gap, passes over X, peak resident memory of this process during the
solve (``VmHWM`` after resetting it through ``/proc/self/clear_refs``, and a sampling thread on
``VmRSS`` where that is not possible; ``ru_maxrss`` for the whole process) and its growth over
the resident memory before the solve, also as a multiple of X's size. ``--compare-numpy`` also
solves with X in memory (when it fits) and reports the relative difference of the objectives.

    python -m aidopt.bench.dask --problem lad --n 200000 --m 10 --store /tmp/lad.zarr
    python -m aidopt.bench.dask --problem lad --n 200000 --m 10 --store /tmp/lad.npy
    python -m aidopt.bench.dask --problem svm --norm l1 --n 200000 --m 10 --store /tmp/svm.zarr

The Zarr arrays are uncompressed (random floats do not compress; passes then cost only I/O). On a
shared machine, say so next to the timings.
"""

from __future__ import annotations

import argparse
import json
import resource
import threading
import time
from pathlib import Path

import numpy as np

__all__ = ["write_store", "run_bench", "PeakMemory", "main", "y_path"]

PROBLEMS = ("lad", "svm")


def _chunk(problem: str, rng: np.random.Generator, rows: int, m: int, beta: np.ndarray):
    """One chunk ``(X, y)``: LAD set A with Laplace noise (column 0 the intercept), or two
    overlapping Gaussian classes (:func:`aidopt.instances.svm_instance`'s model)."""
    if problem == "lad":
        X = rng.standard_normal((rows, m))
        X[:, 0] = 1.0
        return X, X @ beta + rng.laplace(size=rows)
    y = np.where(rng.random(rows) < 0.5, 1.0, -1.0)
    return rng.standard_normal((rows, m)) + y[:, None] / np.sqrt(m), y


def _is_npy(path) -> bool:
    return str(path).lower().endswith(".npy")


def y_path(store) -> Path:
    """Where :func:`write_store` puts y beside a ``.npy`` matrix: ``NAME.y.npy``."""
    store = Path(store)
    return store.with_name(store.stem + ".y.npy")


def write_store(path, problem: str, n: int, m: int, *, seed: int = 0,
                chunk_rows: int | None = None) -> str:
    """Write a synthetic LAD or SVM data set of ``n x m``, chunk by chunk, to a Zarr group or
    (a path ending in ``.npy``) to a ``.npy`` matrix with y beside it (:func:`y_path`).

    Parameters
    ----------
    path : str or os.PathLike
        The store (a directory or a file, replaced if it exists).
    problem : {"lad", "svm"}
    n, m : int
    seed : int
        Chunk ``i`` is drawn from ``numpy.random.default_rng([seed, i])`` (the same data for the
        same ``seed`` and ``chunk_rows``).
    chunk_rows : int, optional
        Rows per chunk drawn and written (for Zarr, per Zarr chunk); default about 64 MiB of X.

    Returns
    -------
    str
        The path.
    """
    from aidopt.data.chunked import default_chunk_rows

    if problem not in PROBLEMS:
        raise ValueError(f"problem must be one of {PROBLEMS}, got {problem!r}")
    if not (n > m >= 2):
        raise ValueError(f"need n > m >= 2, got n={n}, m={m}")
    rows = chunk_rows or default_chunk_rows(m)
    beta = np.random.default_rng([seed, 2**32 - 1]).uniform(-1.0, 1.0, size=m)

    def chunks():
        for i, start in enumerate(range(0, n, rows)):
            stop = min(n, start + rows)
            Xc, yc = _chunk(problem, np.random.default_rng([seed, i]), stop - start, m, beta)
            if problem == "svm" and i == 0:
                yc[:2] = (1.0, -1.0)  # both classes present
            yield start, stop, Xc, yc

    if _is_npy(path):
        y = np.empty(n)
        with open(path, "wb") as fh:  # plain writes: no memory map of the file stays resident
            np.lib.format.write_array_header_1_0(
                fh, {"descr": "<f8", "fortran_order": False, "shape": (n, m)})
            for start, stop, Xc, yc in chunks():
                np.asarray(Xc, dtype="<f8").tofile(fh)
                y[start:stop] = yc
        np.save(y_path(path), y)
        return str(path)
    import zarr

    group = zarr.open_group(str(path), mode="w")
    X = group.create_array("X", shape=(n, m), chunks=(rows, m), dtype="f8", compressors=None)
    y = group.create_array("y", shape=(n,), chunks=(rows,), dtype="f8", compressors=None)
    for start, stop, Xc, yc in chunks():
        X[start:stop] = Xc
        y[start:stop] = yc
    group.attrs.update(problem=problem, seed=seed)
    return str(path)


def _status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


class PeakMemory:
    """Peak resident memory of this process over a ``with`` block, in MiB (``.peak_mb``), and
    its growth over the resident memory at the start (``.growth_mb``).

    Resets the kernel's high-water mark (``/proc/self/clear_refs``, Linux) and reads ``VmHWM``
    at the end; a thread also samples ``VmRSS`` every ``interval`` seconds, the only measure
    where the reset is not allowed.
    """

    def __init__(self, interval: float = 0.05):
        self.interval = interval
        self.peak_mb = self.growth_mb = float("nan")
        self._before = 0
        self._sampled = 0
        self._stop = threading.Event()
        self._reset = False

    def _sample(self):
        while not self._stop.wait(self.interval):
            self._sampled = max(self._sampled, _status_kb("VmRSS") or 0)

    def __enter__(self):
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")
            self._reset = True
        except OSError:
            self._reset = False
        self._sampled = self._before = _status_kb("VmRSS") or 0
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        hwm = _status_kb("VmHWM") if self._reset else None
        self.peak_mb = max(hwm or 0, self._sampled, _status_kb("VmRSS") or 0) / 1024.0
        self.growth_mb = self.peak_mb - self._before / 1024.0
        return False


def _solve(problem, X, y, engine, C, norm, options, bias="free"):
    import aidopt

    if problem == "lad":
        return aidopt.solve_lad(X, y, engine=engine, **options)
    return aidopt.solve_svm(X, y, C=C, norm=norm, engine=engine, bias=bias, **options)


def _measure(problem, X, y, engine, C, norm, options, bias="free", nbytes=None) -> dict:
    start = time.perf_counter()
    with PeakMemory() as memory:
        res = _solve(problem, X, y, engine, C, norm, options, bias)
    cert = res.certificate
    return {
        "engine": engine, "seconds": round(time.perf_counter() - start, 2),
        "objective": res.objective, "termination": res.termination.value,
        "gap": None if cert is None else cert.relative_gap, "iterations": len(res.history),
        "passes": res.dimensions.get("data_passes"), "peak_rss_mb": round(memory.peak_mb, 1),
        "growth_mb": round(memory.growth_mb, 1),
        "growth_x": round(memory.growth_mb * 2**20 / nbytes, 3) if nbytes else None,
        # the process's peak since the reset of PeakMemory (the whole process where not allowed)
        "ru_maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1),
    }


def _fits_in_memory(nbytes: int) -> bool:
    """True when three copies of ``nbytes`` fit in the available memory (Linux)."""
    try:
        with open("/proc/meminfo") as fh:
            available = next(int(line.split()[1]) * 1024 for line in fh
                             if line.startswith("MemAvailable:"))
    except (OSError, StopIteration):
        return False
    return 3 * nbytes < available


def run_bench(store, problem: str, *, C: float = 0.1, norm: str = "l2", bias: str = "free",
              compare_numpy: bool = False, **options) -> list[dict]:
    """Solve the data set in ``store`` with ``engine="dask"`` (and optionally numpy).

    Parameters
    ----------
    store : str or os.PathLike
        A Zarr group with arrays ``X`` and ``y``, or a ``.npy`` matrix with y beside it
        (:func:`write_store`). A ``.npy`` store's y is loaded before the solve (outside the
        memory measured); a Zarr store's is read by the solve.
    problem : {"lad", "svm"}
    C, norm, bias
        SVM cost, regularizer and offset (``bias="regularized"``: the modified SVM (1.35), with
        ``solver="sor"`` among ``options`` solved by AID + SOR).
    compare_numpy : bool
        Also solve with X loaded into memory, when three copies fit in the available memory.
    **options
        Common solve options (``time_limit``, ``tol``, ``log``, ...).

    Returns
    -------
    list of dict
        One row per engine: seconds, objective, termination, gap, iterations, passes, peak RSS
        during the solve and its growth over the RSS before it (MiB, and ``growth_x`` as a
        multiple of X's bytes); the numpy row adds ``rel_diff`` of the objectives.
    """
    import dask.array  # noqa: F401 - imported before the clock starts

    if _is_npy(store):
        y_all = np.load(y_path(store))
        head = np.load(store, mmap_mode="r")
        nbytes, first = head.nbytes, (np.array(head[:1000]), y_all[:1000])
        del head  # unmapped: only the header and the first rows were read

        def load():
            return np.load(store), y_all
    else:
        import zarr

        group = zarr.open_group(str(store), mode="r")
        y_all, nbytes, first = "y", group["X"].nbytes, (group["X"][:1000], group["y"][:1000])

        def load():
            return group["X"][...], group["y"][...]
    # warm-up on the first rows (imports, solver start-up), so that neither engine pays for it
    _solve(problem, *first, "numpy", C, norm, {**options, "log": False}, bias)
    rows = [_measure(problem, str(store), y_all, "dask", C, norm, options, bias, nbytes)]
    if compare_numpy:
        if not _fits_in_memory(nbytes):
            rows.append({"engine": "numpy", "termination": "skipped: X does not fit in memory"})
        else:
            X, y = load()
            row = _measure(problem, X, y, "numpy", C, norm, options, bias, nbytes)
            del X
            row["rel_diff"] = abs(row["objective"] - rows[0]["objective"]) / max(1.0, abs(row["objective"]))
            rows.append(row)
    return rows


def _table(rows: list[dict]) -> str:
    keys = ["engine", "seconds", "objective", "termination", "gap", "iterations", "passes",
            "peak_rss_mb", "growth_mb", "growth_x", "ru_maxrss_mb", "rel_diff"]
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for row in rows:
        cells = []
        for k in keys:
            v = row.get(k, "")
            cells.append(f"{v:.10g}" if isinstance(v, float) else str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aidopt.bench.dask", description=__doc__.split("\n")[0])
    parser.add_argument("--problem", choices=PROBLEMS, default="lad")
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--m", type=int, default=10)
    parser.add_argument("--store", required=True,
                        help="Zarr store, or a .npy file (y beside it as NAME.y.npy), to write "
                             "(or reuse with --reuse)")
    parser.add_argument("--reuse", action="store_true", help="solve the existing store, do not write it")
    parser.add_argument("--chunk-rows", type=int, default=None, help="rows per chunk written")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--C", type=float, default=0.1, help="svm: misclassification cost")
    parser.add_argument("--norm", default="l2", choices=["l2", "l1", "linf", "none"], help="svm norm")
    parser.add_argument("--bias", default="free", choices=["free", "regularized"],
                        help="svm offset: regularized = the modified SVM (1.35)")
    parser.add_argument("--solver", default=None, help="solver (svm --bias regularized: sor)")
    parser.add_argument("--tol", type=float, default=1e-6)
    parser.add_argument("--compare-numpy", action="store_true",
                        help="also solve with X in memory (skipped when it does not fit)")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="a dask.distributed scheduler (peak RSS is then this process's only)")
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--quiet", action="store_true", help="no iteration table")
    parser.add_argument("--output", default=None, help="append the rows as JSON lines to this file")
    args = parser.parse_args(argv)
    if not args.reuse:
        start = time.perf_counter()
        write_store(args.store, args.problem, args.n, args.m, seed=args.seed, chunk_rows=args.chunk_rows)
        print(f"wrote {args.n} x {args.m} {args.problem} data to {args.store} in "
              f"{time.perf_counter() - start:.1f} s", flush=True)
    elif not Path(args.store).exists():
        parser.error(f"--reuse: no store {args.store}")
    elif not _is_npy(args.store):
        import zarr

        written = zarr.open_group(args.store, mode="r").attrs.get("problem")
        if written not in (None, args.problem):
            parser.error(f"--reuse: {args.store} holds {written} data, not {args.problem}")
    client = None
    if args.scheduler:
        from distributed import Client

        client = Client(args.scheduler)
    try:
        rows = run_bench(args.store, args.problem, C=args.C, norm=args.norm, bias=args.bias,
                         compare_numpy=args.compare_numpy, time_limit=args.time_limit,
                         log=not args.quiet, solver=args.solver, tol=args.tol)
    finally:
        if client is not None:
            client.close()
    print(_table(rows))
    if args.output:
        with open(args.output, "a") as fh:
            if _is_npy(args.store):
                n, m = np.load(args.store, mmap_mode="r").shape
            else:
                import zarr

                n, m = zarr.open_group(args.store, mode="r")["X"].shape
            for row in rows:
                svm = args.problem == "svm"
                fh.write(json.dumps({**row, "problem": args.problem, "n": n, "m": m,
                                     "norm": args.norm if svm else None,
                                     "bias": args.bias if svm else None, "solver": args.solver,
                                     "tol": args.tol, "C": args.C if svm else None}) + "\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
