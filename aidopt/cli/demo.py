"""``aidopt demo``: AID on a built-in LAD instance (the paper's synthetic sets), printing the
iteration table and the certificate."""

from __future__ import annotations

import argparse

from aidopt.cli.common import (
    _common_solve_args,
    _finish,
    _options,
    say,
)


def cmd_demo(args) -> int:
    from aidopt.api.lad import DEFAULT_SOLVER, solve_lad
    from aidopt.instances import lad_instance

    X, y = lad_instance(args.set, n=args.n, m=args.m, seed=args.seed)
    options = _options(args)
    solver = options.get("solver") or DEFAULT_SOLVER
    say(args, f"aidopt demo: LAD regression on the paper's synthetic set {args.set} "
              f"(n={args.n}, m={args.m}, seed={args.seed}) with {solver}"
              + (" (the default)" if not options.get("solver") else "") + "\n")
    result = solve_lad(X, y, **options)
    return _finish(result, args)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``aidopt demo``."""
    p.add_argument("--set", default="A", choices=["A", "B", "C"],
                   help="synthetic set: A Gaussian design and noise, B uniform design with "
                        "Student-t noise, C integer design with ties and outliers (default A)")
    p.add_argument("--n", type=int, default=100_000, help="rows (default 100000)")
    p.add_argument("--m", type=int, default=20,
                   help="columns, the first is the intercept (default 20)")
    _common_solve_args(p)
    p.set_defaults(func=cmd_demo)
