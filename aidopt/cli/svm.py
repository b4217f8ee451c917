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
    from aidopt.api.svm import SVM, solve_svm

    X, y = _load(args, sparse=True)  # an svmlight file stays sparse (the door densifies if needed)
    kwargs = SVM.cli_kwargs(args)
    accuracy = None
    with _dask_client(args):
        result = solve_svm(X, y, **kwargs, engine=args.engine, **_options(args))
        if result.solution.get("w") is not None and result.solution.get("b") is not None:
            from aidopt.data.validate import as_classification_data

            data = as_classification_data(X, y, engine=args.engine, sparse=True)
            f = data.X @ np.asarray(result.solution["w"]) + float(result.solution["b"])
            share = float(np.mean(np.where(f > 0, 1.0, -1.0) == data.y))
            accuracy = (f"training accuracy {100 * share:.2f} % (classes {data.classes.tolist()}, "
                        f"w x + b > 0 means {data.classes.tolist()[1]!r})")
    code = _finish(result, args, refit=lambda: _bootstrap(solve_svm, X, y, args, **kwargs))
    if accuracy is not None:
        print(accuracy)
    return code


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``aidopt svm``."""
    p.add_argument("--data", required=True, help="CSV, Parquet, .npz (X, y) or svmlight/LIBSVM file; "
                   "with --engine dask a Zarr store, a .npy matrix or Parquet file(s)")
    p.add_argument("--target", default=None, help="label column (default: last column)")
    from aidopt.api.svm import SVM

    SVM.add_arguments(p)
    p.add_argument("--bootstrap", type=int, default=None, metavar="B",
                   help="standard errors of w and b from B certified refits on rows resampled "
                        "with replacement (linear SVMs)")
    add_engine_arguments(p)
    _common_solve_args(p)
    p.set_defaults(func=cmd_svm)
