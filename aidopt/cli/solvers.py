"""``aidopt solvers``: the table of solvers aidopt knows (version, licence, classes, duals)."""

from __future__ import annotations

import argparse


def cmd_solvers(args) -> int:
    from aidopt.solvers import solver_table

    rows = solver_table()
    cols = ["name", "version", "available", "licence", "classes", "duals", "install", "notes"]
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    print("  ".join(c.ljust(widths[c]) for c in cols))
    for r in rows:
        print("  ".join(str(r[c]).ljust(widths[c]) for c in cols))
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``aidopt solvers``."""
    p.set_defaults(func=cmd_solvers)
