"""``aidopt fsv``: feature selection concave on a data file (:func:`aidopt.solve_fsv`)."""

from __future__ import annotations

import argparse

from aidopt.cli.common import (
    EXIT_INTERRUPTED,
    _common_solve_args,
    _finish,
    _options,
)


def cmd_fsv(args) -> int:
    from aidopt.api.fsv import FSV, solve_fsv
    from aidopt.data.validate import load_table

    X, y, names = load_table(args.data, target=args.target, sparse=True)  # svmlight: CSR
    result = solve_fsv(X, y, **FSV.cli_kwargs(args), **_options(args))
    if _finish(result, args) == EXIT_INTERRUPTED:
        return EXIT_INTERRUPTED
    support = result.solution.get("support", [])
    features = result.solution.get("feature_names", [])
    print(f"selected features ({len(support)} of {len(features)}): "
          + ", ".join(str(features[j]) for j in support))
    return 0 if result.termination.value == "stationary" else 1


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``aidopt fsv``."""
    p.add_argument("--data", required=True, help="CSV, Parquet, .npz (X, y) or svmlight/LIBSVM file")
    p.add_argument("--target", default=None, help="label column (default: last column)")
    from aidopt.api.fsv import FSV

    FSV.add_arguments(p)
    _common_solve_args(p, aid=None)
    p.set_defaults(func=cmd_fsv)
