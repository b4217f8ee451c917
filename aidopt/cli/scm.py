"""``aidopt scm``: Support Cluster Machines (Yuan, Li & Zhang 2006) on a data file;
``aidopt bench scm`` (:func:`run_bench`, the paper's Tables 1, 3 and 4)."""

from __future__ import annotations

__all__ = ["add_arguments", "run", "run_bench"]


def add_arguments(p) -> None:
    """Add the ``scm`` command to the ``aidopt`` subparsers."""
    from aidopt.api.scm import SCM
    from aidopt.decomposition.run import add_arguments

    p.description = ("Algorithm 1 of Yuan, Li & Zhang (2006): kernel k-means of the majority "
                     "class, the weighted SVM (6) on the cluster representatives (certified), "
                     "shrinking (11), until the negatives are at most --ratio times the positives. "
                     "The minority class is the positive class. Exit code 0 when the last "
                     "weighted SVM is certified optimal, 1 when not.")
    p.add_argument("--data", required=True, help="training data: CSV, Parquet, .npz (X, y) or "
                   "svmlight file, two classes")
    p.add_argument("--target", default=None, help="label column (default: last column)")
    p.add_argument("--validation", default=None, metavar="FILE",
                   help="a second file in the same format: its average precision is reported")
    SCM.add_arguments(p)
    add_arguments(p)
    p.add_argument("--output", metavar="JSON", default=None, help="write the result as JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run ``aidopt scm``; exit code 0 when the last weighted SVM (6) is certified, else 1."""
    import numpy as np

    from aidopt.api.scm import SCM, solve_scm
    from aidopt.cli.common import _options, report, write_outputs
    from aidopt.data.validate import load_table

    X, y, _ = load_table(args.data, target=args.target)
    validation = load_table(args.validation, target=args.target) if args.validation else None
    result = solve_scm(X, y, **SCM.cli_kwargs(args), **_options(args))
    report(result, args, certificate="weighted SVM (6) certificate")
    write_outputs(result, args)
    if result.svm is None:  # stopped before any weighted SVM (6): no decision function
        return 1
    positive = result.classes[1]
    sets = [("training", X, y)] + ([("validation", *validation[:2])] if validation else [])
    for name, Xs, ys in sets:
        labels = np.asarray(ys.to_numpy() if hasattr(ys, "to_numpy") else ys).reshape(-1)
        f = result.decision_function(np.asarray(Xs, dtype=float))
        print(f"{name}: average precision {_average_precision(labels == positive, f):.4f}, "
              f"accuracy {100 * float(np.mean((f > 0) == (labels == positive))):.2f} % "
              f"(positive class {positive!r}, the minority)")
    return 0 if result.certified else 1


def _average_precision(truth, score) -> float:
    """Average precision of ``score`` for the boolean ``truth`` (scikit-learn's definition:
    the mean of the precision at each positive, ties broken pessimistically by score groups)."""
    import numpy as np

    order = np.argsort(-score, kind="stable")
    truth, score = np.asarray(truth, dtype=bool)[order], np.asarray(score)[order]
    if not truth.any():
        return float("nan")
    last = np.r_[np.flatnonzero(np.diff(score)), truth.size - 1]  # end of each group of ties
    tp = np.cumsum(truth)[last]
    precision = tp / (last + 1)
    recall_step = np.diff(np.r_[0, tp]) / truth.sum()
    return float((precision * recall_step).sum())


def run_bench(args) -> int:
    """``aidopt bench scm``: ``--data`` a packaged imbalanced set (default sylva) or
    ``sine:NPOS:NNEG`` (the overlapping D2 at that imbalance) for Tables 3/4, with ``--C``,
    ``--kernel`` (default rbf), ``--repeat`` (draws of the random baseline; the paper: 10),
    ``--seed``, ``--time-limit``, ``--output``; ``--sizes table1`` (or values of n+ + n-) runs
    Table 1 instead."""
    from aidopt.bench.scm import bench_scm, bench_scm_table1

    if args.sizes_given:
        sizes = None if args.sizes == ["table1"] else [int(s) for s in args.sizes]
        bench_scm_table1(sizes=sizes, seed=args.seed, output=args.output,
                         time_limit=args.time_limit)
        return 0
    bench_scm(data=args.data or "sylva", C=args.C, kernel=args.kernel or "rbf", seed=args.seed,
              repeat=args.repeat, output=args.output, time_limit=args.time_limit)
    return 0
