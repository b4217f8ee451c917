"""``aidopt lad``: LAD regression on a data file (:func:`aidopt.solve_lad`)."""

from __future__ import annotations

import argparse

from aidopt.cli.common import (
    _bootstrap,
    _common_solve_args,
    _dask_client,
    _finish,
    _load,
    _options,
    add_engine_arguments,
)


def cmd_lad(args) -> int:
    from aidopt.api.lad import LAD, solve_lad

    X, y = _load(args)
    params = LAD.cli_kwargs(args)
    with _dask_client(args):
        result = solve_lad(X, y, **params, engine=args.engine, **_options(args))
    return _finish(result, args, refit=lambda: _bootstrap(solve_lad, X, y, args, **params))


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``aidopt lad``."""
    p.add_argument("--data", required=True, help="CSV, Parquet, .npz (X, y) or svmlight file; "
                   "with --engine dask a Zarr store, a .npy matrix or Parquet file(s)")
    p.add_argument("--target", default=None, help="response column (default: last column)")
    from aidopt.api.lad import LAD

    LAD.add_arguments(p)
    p.add_argument("--no-intercept", action="store_false", dest="fit_intercept",
                   help=argparse.SUPPRESS)  # the former flag: now the default
    p.add_argument("--bootstrap", type=int, default=None, metavar="B",
                   help="standard errors of the coefficients from B certified refits on rows "
                        "resampled with replacement (as integer sample weights)")
    add_engine_arguments(p)
    _common_solve_args(p)
    p.set_defaults(func=cmd_lad)
