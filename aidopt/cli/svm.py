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
    import pandas as pd

    from aidopt.api.svm import SVM, solve_svm

    X, y = _load(args, sparse=True)  # an svmlight file stays sparse (the door densifies if needed)
    kwargs = SVM.cli_kwargs(args)
    joint = getattr(args, "multi_class", None) == "crammer_singer"  # one joint model, k >= 2
    if args.engine == "numpy" and (joint or pd.Series(np.asarray(y)).dropna().nunique() > 2):
        return cmd_svm_multiclass(X, y, kwargs, args)
    if joint:
        raise ValueError("--multi-class crammer_singer needs X in memory (--engine numpy)")
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


def cmd_svm_multiclass(X, y, kwargs, args) -> int:
    """k >= 3 classes, or ``--multi-class crammer_singer`` (k >= 2): :class:`aidopt.SVMClassifier`
    with ``--multi-class`` and ``--n-jobs``; prints one line per subproblem (classes,
    termination, objective, relative gap), or the joint problem's summary, and the training
    accuracy. Exit code 0 when every subproblem (the joint problem) is certified, else 1."""
    import warnings

    from aidopt.api.estimator import ConvergenceWarning
    from aidopt.api.multiclass import MULTICLASS
    from aidopt.api.svm import SVM, SVMClassifier
    from aidopt.cli.common import write_outputs

    binary_only = {name: value for name, value in kwargs.items()
                   if not SVM.params[name].estimator and value != SVM.params[name].default}
    if binary_only or args.bootstrap:
        flags = [SVM.params[name].cli_flag() for name in binary_only] + (
            ["--bootstrap"] if args.bootstrap else [])
        raise ValueError(f"{', '.join(flags)}: binary SVMs only; a target of more than two "
                         "classes is fitted by AID, one certified SVM per subproblem")
    params = {name: value for name, value in kwargs.items() if SVM.params[name].estimator}
    clf = SVMClassifier(**params, **MULTICLASS.cli_kwargs(args), **_options(args))
    with warnings.catch_warnings():  # the summary below says which subproblems are not certified
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    result = clf.result_
    print(result.summary())
    print(f"training accuracy {100 * clf.score(X, y):.2f} % ({len(clf.classes_)} classes)")
    write_outputs(result, args)
    return 0 if result.certified else 1


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``aidopt svm``."""
    p.add_argument("--data", required=True, help="CSV, Parquet, .npz (X, y) or svmlight/LIBSVM file; "
                   "with --engine dask a Zarr store, a .npy matrix or Parquet file(s)")
    p.add_argument("--target", default=None, help="label column (default: last column)")
    from aidopt.api.svm import SVM

    SVM.add_arguments(p)
    from aidopt.api.multiclass import MULTICLASS

    MULTICLASS.add_arguments(p)
    p.add_argument("--bootstrap", type=int, default=None, metavar="B",
                   help="standard errors of w and b from B certified refits on rows resampled "
                        "with replacement (linear SVMs)")
    add_engine_arguments(p)
    _common_solve_args(p)
    p.set_defaults(func=cmd_svm)
