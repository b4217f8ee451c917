"""``aidopt lad``: LAD regression and regression quantiles on a data file (:func:`aidopt.solve_lad`)."""

from __future__ import annotations

import argparse

from aidopt.cli.common import (
    EXIT_INTERRUPTED,
    _common_solve_args,
    _dask_client,
    _finish,
    _load,
    _options,
    add_engine_arguments,
    report,
    say,
    write_outputs,
)

#: bootstrap replicates of ``--se boot`` when ``--bootstrap`` does not say
DEFAULT_B = 200


def cmd_lad(args) -> int:
    from aidopt.api.lad import LAD, solve_lad
    from aidopt.api.rq import QuantileResults

    if args.se is not None and args.engine == "dask":
        raise ValueError("--se needs X in memory: use it with --engine numpy")
    X, y = _load(args, sparse=True)  # an svmlight file stays sparse (the door chooses the method)
    params = LAD.cli_kwargs(args)
    with _dask_client(args):
        result = solve_lad(X, y, **params, engine=args.engine, **_options(args))
    sequence = isinstance(result, QuantileResults)
    se = args.se or ("boot" if sequence and args.bootstrap else None)
    if sequence or se is not None:
        return _finish_inference(result, args, se, {"B": args.bootstrap or DEFAULT_B,
                                                    "seed": args.seed})
    return _finish(result, args, refit=lambda: result.bootstrap(
        B=args.bootstrap, seed=args.seed).std(axis=0, ddof=1))


def _finish_inference(result, args, se: str | None, inference: dict) -> int:
    """A sequence of levels (the coefficients by level, or with ``se`` each level's table) or
    one fit with ``se`` (R's coefficient table); standard errors only for certified fits."""
    from aidopt.api.rq import QuantileResults

    report(result, args)
    if se is not None and not result.certified:
        say(args, "standard errors are computed for certified fits only")
        se = None
    if se == "rank":
        say(args, "rank-inversion intervals (se=rank) ...")
    elif se is not None:
        say(args, f"standard errors: {se}" + (f", {inference['B']} certified bootstrap refits ..."
                                               if se == "boot" else " ..."))
    if isinstance(result, QuantileResults):
        print(result.summary(se=se, **(inference if se else {})))
    elif se is not None:
        print(result.inference(se, **inference))
    elif result.coefficients():
        print(result.coefficient_table())
    write_outputs(result, args)
    if result.termination.value == "interrupted":
        return EXIT_INTERRUPTED
    return 0 if result.certified else 1


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``aidopt lad``."""
    p.add_argument("--data", required=True, help="CSV, Parquet, .npz (X, y) or svmlight file; "
                   "with --engine dask a Zarr store, a .npy matrix or Parquet file(s)")
    p.add_argument("--target", default=None, help="response column (default: last column)")
    from aidopt.api.lad import LAD

    LAD.add_arguments(p)
    p.add_argument("--no-intercept", action="store_false", dest="fit_intercept",
                   help=argparse.SUPPRESS)  # the former flag: now the default
    p.add_argument("--se", choices=["iid", "nid", "boot", "rank"], default=None,
                   help="print the coefficient table of R's summary(rq(...), se=...): estimate, "
                        "standard error, t value, p-value and 95%% interval (docs/quantiles.md); "
                        "boot uses --bootstrap B replicates (default 200); rank prints the 95%% "
                        "rank-inversion intervals (estimate, lower bd, upper bd; for modest n). "
                        "With several --quantile levels, one table per level")
    p.add_argument("--bootstrap", type=int, default=None, metavar="B",
                   help="standard errors of the coefficients from B certified refits on rows "
                        "resampled with replacement (as integer sample weights), each started "
                        "from the fit's final partition (with several --quantile levels: --se "
                        "boot)")
    add_engine_arguments(p)
    _common_solve_args(p)
    p.set_defaults(func=cmd_lad)
