"""``aidopt svm``: soft-margin SVMs on a data file (:func:`aidopt.solve_svm`)."""

from __future__ import annotations

import argparse

import numpy as np

from aidopt.cli.common import (
    _bootstrap,
    _common_solve_args,
    _dask_client,
    _finish,
    _load,
    _options,
    add_engine_arguments,
)


def cmd_svm(args) -> int:
    from aidopt.api.svm import solve_svm

    X, y = _load(args)
    gamma = args.gamma if args.gamma == "scale" else float(args.gamma)
    kwargs = {"C": args.C, "norm": args.norm, "kernel": args.kernel, "gamma": gamma,
              "degree": args.degree, "coef0": args.coef0, "cache_size": args.cache_size,
              "method": args.method, "bias": args.bias}
    with _dask_client(args):
        result = solve_svm(X, y, **kwargs, engine=args.engine, **_options(args))
        if result.solution.get("w") is not None and result.solution.get("b") is not None:
            from aidopt.data.validate import as_classification_data

            data = as_classification_data(X, y, engine=args.engine)
            f = data.X @ np.asarray(result.solution["w"]) + float(result.solution["b"])
            accuracy = float(np.mean(np.where(f > 0, 1.0, -1.0) == data.y))
            print(f"training accuracy {100 * accuracy:.2f} % (classes {data.classes.tolist()}, "
                  f"w x + b > 0 means {data.classes.tolist()[1]!r})")
    return _finish(result, args, refit=lambda: _bootstrap(solve_svm, X, y, args, **kwargs))


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``aidopt svm``."""
    p.add_argument("--data", required=True, help="CSV, Parquet, .npz (X, y) or svmlight/LIBSVM file; "
                   "with --engine dask a Zarr store, a .npy matrix or Parquet file(s)")
    p.add_argument("--target", default=None, help="label column (default: last column)")
    p.add_argument("--C", type=float, default=1.0, help="misclassification cost (default 1)")
    p.add_argument("--norm", default="l2", choices=["l2", "l1", "linf", "none"],
                   help="regularizer: l2 (QP), l1 / linf (LPs), none (RLP)")
    p.add_argument("--kernel", default=None, choices=["linear", "rbf", "poly"],
                   help="kernel AID (2-norm only)")
    p.add_argument("--gamma", default="scale", help="kernel gamma (default 'scale')")
    p.add_argument("--degree", type=int, default=3, help="polynomial kernel degree")
    p.add_argument("--coef0", type=float, default=1.0, help="polynomial kernel constant")
    p.add_argument("--cache-size", type=float, default=None, metavar="MB",
                   help="kernel AID: MB for cached mean-kernel columns (default: a third of the memory)")
    p.add_argument("--method", default="aid", choices=["aid", "lpc", "sor"],
                   help="aid, lpc (linear program chunking; norm l1) or sor (successive "
                        "overrelaxation for the modified SVM (1.35) with gamma^2 regularized, not "
                        "LIBSVM's problem; norm l2, linear; --tol is its relative duality gap, "
                        "--max-iter its sweeps, --option omega=W its relaxation factor)")
    p.add_argument("--bootstrap", type=int, default=None, metavar="B",
                   help="standard errors of w and b from B certified refits on rows resampled "
                        "with replacement (linear SVMs)")
    p.add_argument("--bias", default="free", choices=["free", "regularized"],
                   help="regularized: the modified SVM (1.35) with 1/2 b^2 in the objective "
                        "(LIBLINEAR's problem), by AID with SOR as the aggregated solver "
                        "(--solver sor, the default for it; any QP solver works)")
    add_engine_arguments(p)
    _common_solve_args(p)
    p.set_defaults(func=cmd_svm)
