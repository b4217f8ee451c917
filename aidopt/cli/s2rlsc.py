"""``aidopt s2rlsc``: semi- / unsupervised RLSC by local search (or exactly, small u) on a data
file; :func:`add_parser` adds the command to the ``aidopt`` subparsers."""

from __future__ import annotations

__all__ = ["add_arguments", "run"]


def _aggregate(text: str):
    value = float(text)
    return int(value) if value >= 1 and value.is_integer() else value


def add_arguments(p) -> None:
    from aidopt.api.s2rlsc import KERNELS, METHODS
    from aidopt.cli.common import _common_solve_args
    from aidopt.numerics.rlsc import SEARCHES

    p.description = ("Gieseke et al. (2012): labels for the unlabelled rows minimising the RLSC "
                     "fitness (11) under the balance band, by a restarted (mu+nu)-EA or "
                     "(1+1)-EA with O(n) (or Nystrom O(r)) flips; --method exact also solves the "
                     "convex MIQP (small u). All rows unlabelled: maximum margin clustering (7).")
    p.add_argument("--data", required=True, help="CSV, Parquet, .npz (X, y) or svmlight file; "
                   "labels -1 / +1, and 0 or empty (NaN) for unlabelled rows")
    p.add_argument("--target", default=None, help="label column (default: last column)")
    p.add_argument("--kernel", default="linear", choices=KERNELS)
    p.add_argument("--sigma", type=float, default=None,
                   help="RBF width (default 0.1 s, s = the paper's distance scale)")
    p.add_argument("--lam", type=float, default=1.0, help="lambda, weight of ||f||^2 (default 1)")
    p.add_argument("--lam-prime", type=float, default=1.0,
                   help="lambda', weight of the unlabelled loss (default 1)")
    p.add_argument("--eps", type=float, default=0.1, help="balance band half-width (default 0.1)")
    p.add_argument("--b-c", type=float, default=None,
                   help="balance band centre (default: share of +1 among the labels; 0.5 when "
                        "clustering)")
    p.add_argument("--r", type=int, default=None,
                   help="Nystrom approximation with r random landmarks (default: full kernel)")
    p.add_argument("--search", default="mu+nu", choices=SEARCHES)
    p.add_argument("--mu", type=int, default=5, help="(mu+nu)-EA population (default 5)")
    p.add_argument("--nu", type=int, default=25, help="(mu+nu)-EA offspring (default 25)")
    p.add_argument("--restarts", type=int, default=10, help="best of this many runs (default 10)")
    p.add_argument("--patience", type=int, default=None,
                   help="stop a run after this many generations/steps without change (default n)")
    p.add_argument("--aggregate", type=_aggregate, default=None, metavar="K",
                   help="aggregated warm start with K clusters (or a share of u in (0, 1))")
    p.add_argument("--method", default="search", choices=METHODS,
                   help="exact: also solve the convex MIQP (Gurobi within its licence, else "
                        "SCIP); small numbers of unlabelled rows only (at most 400)")
    p.add_argument("--mode", default="auto", choices=["auto", "semi-supervised", "clustering"])
    p.add_argument("--transduction", metavar="FILE", default=None,
                   help="write the -1 / +1 label of every row, one per line")
    _common_solve_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    """Exit code 0 when the run ended by its own rule (a local search that stopped after its
    patience, or an exact run with a certified optimum), 1 after a limit, a gap or a failure,
    130 when interrupted."""
    import numpy as np

    from aidopt.api.s2rlsc import solve_s2rlsc
    from aidopt.cli.common import EXIT_INTERRUPTED, _options, write_outputs
    from aidopt.data.validate import load_table
    from aidopt.results import Termination

    X, y, _ = load_table(args.data, target=args.target)
    result = solve_s2rlsc(
        X, y, kernel=args.kernel, sigma=args.sigma, lam=args.lam, lam_prime=args.lam_prime,
        eps=args.eps, b_c=args.b_c, r=args.r, search=args.search, mu=args.mu, nu=args.nu,
        restarts=args.restarts, patience=args.patience, aggregate=args.aggregate,
        method=args.method, mode=args.mode, **_options(args))
    if args.transduction:
        np.savetxt(args.transduction, result.labels, fmt="%d")
        print(f"labels of all rows written to {args.transduction}")
    write_outputs(result, args)
    if not args.log:
        print(result.summary())
    if result.termination is Termination.INTERRUPTED:
        return EXIT_INTERRUPTED
    ok = (Termination.CERTIFIED_OPTIMAL,) if args.method == "exact" else (
        Termination.NO_IMPROVEMENT, Termination.CERTIFIED_OPTIMAL)
    return 0 if result.termination in ok else 1
