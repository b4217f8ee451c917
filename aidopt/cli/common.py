"""What the ``aidopt`` commands share: the common options' flags (from ``RunConfig``), output
flags and their checks before any run, loading a data file, the out-of-core engine flags, the
bootstrap, and printing / writing a result with the CLI's exit codes."""

from __future__ import annotations

import argparse

EXIT_INTERRUPTED = 130


def _common_solve_args(p: argparse.ArgumentParser, **defaults) -> None:
    """The common options, generated from :class:`aidopt.decomposition.RunConfig` (the same
    definition the API and the estimators use), plus the output flags of every solve command."""
    from aidopt.decomposition.run import add_arguments

    add_arguments(p, defaults=defaults)
    out = p.add_argument_group("output")
    out.add_argument("--output", metavar="JSON", default=None, help="write the result as JSON")
    out.add_argument("--plot", metavar="PNG", default=None, help="write the convergence plot")


def check_writable(path, what: str) -> None:
    """Fail before any solve when ``path`` cannot be written: a directory, a missing or read-only
    parent directory, or a read-only existing file (the result would be lost after the run)."""
    import os
    from pathlib import Path

    if path is None:
        return
    target = Path(path)
    if target.is_dir():
        raise ValueError(f"{what} {path}: is a directory, give a file name")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"{what} {path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise ValueError(f"{what} {path}: not writable")


def check_outputs(args) -> None:
    """Check every output path of a parsed command line before anything runs."""
    from pathlib import Path

    check_writable(getattr(args, "output", None), "--output")
    check_writable(getattr(args, "plot", None), "--plot")
    check_writable(getattr(args, "transduction", None), "--transduction")
    models = getattr(args, "write_models", None)
    if models is not None:
        target = Path(models)
        if target.exists() and not target.is_dir():
            raise ValueError(f"--write-models {models}: exists and is not a directory")
        existing = target
        while not existing.exists():  # the run creates the missing directories
            existing = existing.parent
        import os

        if not os.access(existing, os.W_OK):
            raise ValueError(f"--write-models {models}: {existing} is not writable")


def _options(args) -> dict:
    """The common options of a parsed command line, as ``solve_*`` keyword arguments; the CLI
    returns the best solution so far on a solver failure instead of raising."""
    from aidopt.decomposition.run import config_from_args

    return {**config_from_args(args), "raise_on_failure": False}


def _bootstrap(solve, X, y, args, **kwargs):
    """Standard errors of the coefficients from ``args.bootstrap`` certified refits."""
    from aidopt.api.lad import bootstrap_coefficients
    from aidopt.decomposition.run import config_from_args

    options = {k: v for k, v in config_from_args(args).items()
               if k not in ("log", "seed", "write_models")}
    draws = bootstrap_coefficients(solve, X, y, B=args.bootstrap, seed=args.seed,
                                   **kwargs, **options)
    return draws.std(axis=0, ddof=1)


def say(args, text: str) -> None:
    """Print a note that is not the result (a banner, a file written, a step under way), unless
    ``--quiet``."""
    if getattr(args, "log", True):
        print(text)


def result_line(result, certificate: str = "certificate") -> str:
    """The result in one line, what ``--quiet`` prints: the termination, the objective (or the
    fitness) and the relative gap where the result has them, whether its certificate passed
    (results that carry one; ``certificate`` names it) and the time."""
    import math

    parts = [str(getattr(result.termination, "value", result.termination))]
    for name in ("objective", "fitness"):
        value = getattr(result, name, None)
        if isinstance(value, float | int) and math.isfinite(value):
            parts.append(f"{name} {value + 0.0:.10g}")
    gap = getattr(result, "gap", None)
    if isinstance(gap, float | int) and math.isfinite(gap):
        parts.append(f"relative gap {gap:.3e}")
    if getattr(result, "certificate", None) is not None:
        parts.append(f"{certificate} " + ("passed" if result.certificate.certified
                                          else "not passed"))
    parts.append(f"{result.seconds:.2f} s")
    return "result: " + ", ".join(parts)


def report(result, args, **line) -> None:
    """What every solve command prints of the result itself: under ``--quiet`` its one line
    (:func:`result_line`, with ``line`` its keywords; otherwise the run's log has shown the
    termination block)."""
    if not args.log:
        print(result_line(result, **line))


def write_outputs(result, args) -> None:
    """Write the result's JSON (``--output``) and plot (``--plot``), when asked (paths were checked
    before the run by :func:`check_outputs`)."""
    if getattr(args, "output", None):
        result.to_json(args.output)
        say(args, f"result written to {args.output}")
    if getattr(args, "plot", None):
        result.plot(args.plot)
        say(args, f"plot written to {args.plot}")


def _finish(result, args, refit=None) -> int:
    """Print the result (:func:`report`) and the fitted coefficients (with bootstrap standard
    errors when ``--bootstrap`` asked for them and the fit is certified), write the outputs, and
    return the exit code."""
    report(result, args)
    if getattr(args, "bootstrap", None) and result.certified and result.coefficients():
        say(args, f"bootstrap: {args.bootstrap} certified refits on resampled rows ...")
        print(result.coefficient_table(standard_errors=refit()))
    elif result.coefficients():
        print(result.coefficient_table())  # the run's log showed the rest of the summary
    write_outputs(result, args)
    if result.termination.value == "interrupted":
        return EXIT_INTERRUPTED
    return 0 if result.certified else 1


def add_engine_arguments(p: argparse.ArgumentParser) -> None:
    """``--engine`` and ``--scheduler`` of ``aidopt lad`` / ``aidopt svm`` (docs/dask.md)."""
    g = p.add_argument_group("out-of-core data (docs/dask.md)")
    g.add_argument("--engine", default="numpy", choices=["numpy", "dask"],
                   help="numpy (default): load --data into memory; dask: stream X chunk by chunk "
                        "from a Zarr store, a .npy matrix or Parquet file(s); --target then names "
                        "y in the store (a Parquet column, default the last; an array of a Zarr "
                        "group, default y) or a .npy file holding y")
    g.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="with --engine dask: run the passes over the data on this "
                        "dask.distributed scheduler (e.g. tcp://scheduler:8786); its workers "
                        "must be able to read --data")


def _load(args, *, sparse: bool = False):
    """``(X, y)`` for the solve: the table in memory (an svmlight file's X as a scipy CSR matrix
    with ``sparse``), or with ``--engine dask`` the store's path and y (its name in the store, or
    an array)."""
    from aidopt.data.validate import load_table, store_inputs

    if args.scheduler is not None and args.engine != "dask":
        raise ValueError("--scheduler runs the dask engine's passes: add --engine dask")
    if args.engine == "dask":
        if getattr(args, "bootstrap", None):
            raise ValueError("--bootstrap refits in memory: use it with --engine numpy")
        return store_inputs(args.data, args.target)
    X, y, _ = load_table(args.data, target=args.target, sparse=sparse)
    return X, y


def _dask_client(args):
    """A ``dask.distributed.Client`` on ``--scheduler`` (closed on exit), or no context."""
    import contextlib

    if args.scheduler is None:
        return contextlib.nullcontext()
    from distributed import Client

    return Client(args.scheduler)
