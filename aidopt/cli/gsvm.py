"""``aidopt gsvm``: a generalized SVM (any kernel) on a data file; ``aidopt bench gsvm``."""

from __future__ import annotations

__all__ = ["add_arguments", "cmd_gsvm", "run_bench"]


def _param(text: str):
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ValueError(f"--kernel-param takes KEY=VALUE, got {text!r}")
    return key, float(value)


def add_arguments(p) -> None:
    from aidopt.api.gsvm import GSVM
    from aidopt.cli.common import _common_solve_args
    from aidopt.numerics.kernels import KERNELS

    p.description = ("Mangasarian's generalized SVM on the kernel matrix K(A, A'): no symmetry "
                     "or definiteness is assumed. Kernels: " + ", ".join(
                         f"{k} ({', '.join(v) or 'no parameters'})" for k, v in KERNELS.items()))
    p.add_argument("--data", required=True, help="CSV, Parquet, .npz (X, y) or svmlight file; "
                   "labels -1 / +1")
    p.add_argument("--target", default=None, help="label column (default: last column)")
    GSVM.add_arguments(p)
    p.add_argument("--kernel-param", action="append", default=[], metavar="KEY=VALUE",
                   help="a kernel parameter (kernel_params), e.g. --kernel-param d=6 "
                        "--kernel-param lam=100")
    _common_solve_args(p)
    p.set_defaults(func=cmd_gsvm)


def cmd_gsvm(args) -> int:
    import numpy as np

    from aidopt.api.gsvm import GSVM, solve_gsvm
    from aidopt.cli.common import _finish, _options
    from aidopt.data.validate import load_table

    X, y, _ = load_table(args.data, target=args.target)
    params = dict(_param(t) for t in args.kernel_param)
    result = solve_gsvm(X, y, **GSVM.cli_kwargs(args), kernel_params=params, **_options(args))
    code = _finish(result, args)
    if "decision" in result.solution:
        labels = np.asarray(y, dtype=float).reshape(-1)
        accuracy = float(np.mean(np.where(result.solution["decision"] >= 0, 1.0, -1.0) == labels))
        u = result.solution["u"]
        support = int((np.abs(u) > 1e-8 * max(float(np.abs(u).max()), 1e-300)).sum())
        print(f"gamma {result.solution['gamma'] + 0.0:.6g}; {support} support vectors (u != 0); "
              f"training accuracy {100 * accuracy:.2f} %")
    return code


def run_bench(args) -> int:
    from aidopt.bench.gsvm import bench_gsvm, bench_gsvm_ku, bench_gsvm_lp

    if args.table == "ku":  # (1.12) on Fig. 1.2's kernel: the SVD factor against K itself
        sizes = [int(s) for s in args.sizes] if args.sizes_given else [1000, 5000]
        limit = args.time_limit if args.time_limit != 3600.0 else 600.0
        bench_gsvm_ku(sizes, args.seed, time_limit=limit, output=args.output)
        return 0
    if args.table == "lp":  # the LPs at several m with a PSD kernel, beside SVC
        sizes = [int(s) for s in args.sizes] if args.sizes_given else [1000, 2000, 5000]
        limit = args.time_limit if args.time_limit != 3600.0 else 600.0
        bench_gsvm_lp(sizes, args.seed, time_limit=limit, output=args.output)
        return 0
    n = int(args.sizes[0]) if args.sizes_given else 1000
    bench_gsvm(n, args.seed, tol=args.tol, output=args.output, plot=args.plot)
    return 0
