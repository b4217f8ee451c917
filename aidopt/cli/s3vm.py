"""``aidopt s3vm``: the semi-supervised SVM on a data file (:func:`aidopt.solve_s3vm`)."""

from __future__ import annotations

import argparse

import numpy as np

from aidopt.cli.common import (
    EXIT_INTERRUPTED,
    _common_solve_args,
    _finish,
    _options,
    say,
)


def cmd_s3vm(args) -> int:
    from aidopt.api.s3vm import S3VM, solve_s3vm
    from aidopt.data.validate import load_table

    X, y, names = load_table(args.data, target=args.target, sparse=True)  # svmlight: CSR
    result = solve_s3vm(X, y, **S3VM.cli_kwargs(args), **_options(args))
    if args.transduction:
        np.savetxt(args.transduction, result.solution.get("transduction", []), fmt="%d")
        say(args, f"labels of all rows written to {args.transduction}")
    if _finish(result, args) == EXIT_INTERRUPTED:
        return EXIT_INTERRUPTED
    ok = (result.termination.value in ("certified_optimal", "prop5_optimal")
          or (args.max_iter is not None and result.termination.value == "iteration_limit"))
    return 0 if ok else 1


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``aidopt s3vm``."""
    p.add_argument("--data", required=True, help="CSV, Parquet, .npz (X, y) or svmlight file; "
                   "labels -1 / +1, and 0 or empty (NaN) for unlabeled rows")
    p.add_argument("--target", default=None, help="label column (default: last column)")
    from aidopt.api.s3vm import S3VM

    S3VM.add_arguments(p)
    p.add_argument("--transduction", metavar="FILE", default=None,
                   help="write the -1 / +1 label of every row, one per line")
    _common_solve_args(p)
    p.set_defaults(func=cmd_s3vm)
