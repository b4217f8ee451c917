"""``aidopt s2rlsc``: semi- / unsupervised RLSC by local search (or exactly, small u) on a data
file; :func:`add_parser` adds the command to the ``aidopt`` subparsers."""

from __future__ import annotations

__all__ = ["add_arguments", "run"]


def add_arguments(p) -> None:
    from aidopt.api.s2rlsc import S2RLSC
    from aidopt.cli.common import _common_solve_args

    p.description = ("Gieseke et al. (2012): labels for the unlabelled rows minimising the RLSC "
                     "fitness (11) under the balance band, by a restarted (mu+nu)-EA or "
                     "(1+1)-EA with O(n) (or Nystrom O(r)) flips; --method exact also solves the "
                     "convex MIQP (small u). All rows unlabelled: maximum margin clustering (7).")
    p.add_argument("--data", required=True, help="CSV, Parquet, .npz (X, y) or svmlight file; "
                   "labels -1 / +1, and 0 or empty (NaN) for unlabelled rows")
    p.add_argument("--target", default=None, help="label column (default: last column)")
    S2RLSC.add_arguments(p)
    p.add_argument("--transduction", metavar="FILE", default=None,
                   help="write the -1 / +1 label of every row, one per line")
    _common_solve_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    """Exit code 0 when the run ended by its own rule (a local search that stopped after its
    patience, or an exact run with a certified optimum), 1 after a limit, a gap or a failure,
    130 when interrupted."""
    import numpy as np

    from aidopt.api.s2rlsc import S2RLSC, solve_s2rlsc
    from aidopt.cli.common import EXIT_INTERRUPTED, _options, report, say, write_outputs
    from aidopt.data.validate import load_table
    from aidopt.results import Termination

    X, y, _ = load_table(args.data, target=args.target)
    result = solve_s2rlsc(X, y, **S2RLSC.cli_kwargs(args), **_options(args))
    if args.transduction:
        np.savetxt(args.transduction, result.labels, fmt="%d")
        say(args, f"labels of all rows written to {args.transduction}")
    report(result, args)
    write_outputs(result, args)
    if result.termination is Termination.INTERRUPTED:
        return EXIT_INTERRUPTED
    ok = (Termination.CERTIFIED_OPTIMAL,) if args.method == "exact" else (
        Termination.NO_IMPROVEMENT, Termination.CERTIFIED_OPTIMAL)
    return 0 if result.termination in ok else 1
