"""The ``aidopt`` command: ``demo | solvers | lad | svm | s3vm | fsv | facility | aggout | gsvm |
s2rlsc | scm | bench``.

Each command is one module of :mod:`aidopt.cli` with an ``add_arguments(parser)`` that declares its
flags and sets its handler; this module only lists them (:data:`COMMANDS`). The parser fills in
the flags of the command being run and no other, so ``aidopt --help`` imports no solver, Pyomo or
numerical library. The CLI calls the same public functions as the Python API, so both agree.
"""

from __future__ import annotations

import argparse
import importlib
import sys

__all__ = ["COMMANDS", "build_parser", "main"]

#: every command: its name (and module ``aidopt.cli.<name>``) and the line ``aidopt --help`` shows
COMMANDS = {
    "demo": "AID on a built-in LAD instance (aggregated LPs by aidopt's Frisch-Newton, fn, unless "
            "--solver), with the iteration table and the certificate",
    "solvers": 'table of solvers: version, licence, classes, duals',
    "lad": 'LAD regression on a data file',
    "svm": 'soft-margin SVM (2-norm, 1-norm, inf-norm, RLP, kernel) on a data file',
    "s3vm": 'semi-supervised SVM (MIQP / MILP) on a data file',
    "fsv": 'feature selection concave (FSV) by successive linearization',
    "facility": 'p-median / uncapacitated facility location by AID, certified (CSV, TSPLIB, OR-Library, edge list)',
    "aggout": 'learn a classifier from class-1 counts per collection (aggregate outputs)',
    "gsvm": 'generalized SVM with any kernel (LPs (1.11)/(1.12), QP (1.10))',
    "s2rlsc": 'semi-/unsupervised regularized least-squares classification (S2RLSC)',
    "scm": 'Support Cluster Machines for large imbalanced data (Yuan, Li & Zhang 2006)',
    "bench": 'benchmarks against baselines run side by side',
}
EXIT_INTERRUPTED = 130  # as aidopt.cli.common's, which this light module does not import


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``aidopt`` parser: every command listed; the flags of ``command`` only (``None``: of
    every command)."""
    from aidopt._version import __version__

    parser = argparse.ArgumentParser(
        prog="aidopt", description="Exact large-scale ML optimization with AID and certificates",
        epilog="exit codes: 0 certified optimal (or the run's accepted verdict), 1 finished "
               "without a certificate (a limit, a gap, a failed solve: see the summary), 2 an "
               "error before or during the run (one line on stderr), 130 interrupted (Ctrl-C: the "
               "best solution so far is printed)",
    )
    parser.add_argument("--version", action="version", version=f"aidopt {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in COMMANDS.items():
        p = sub.add_parser(name, help=text)
        if command is None or command == name:
            importlib.import_module(f"aidopt.cli.{name}").add_arguments(p)
    return parser


def _command(argv: list[str]) -> str | None:
    """The command named on the command line (the first word that is not an option)."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def main(argv=None) -> int:
    """Run the CLI. Exit codes: 0 certified (or the run's accepted verdict), 1 finished without a
    certificate (a limit, a gap, a failed solve: see the summary), 2 an error before or during
    the run (one line on stderr), 130 interrupted (Ctrl-C; the best solution so far is printed)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    command = _command(argv)
    parser = build_parser(command) if command is not None else build_parser("")
    args = parser.parse_args(argv)
    from aidopt.cli.common import check_outputs
    from aidopt.solvers import SolverError

    try:
        check_outputs(args)
        return args.func(args)
    except KeyboardInterrupt:
        print("aidopt: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (ValueError, TypeError, OSError, ImportError, SolverError) as exc:
        print(f"aidopt: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
