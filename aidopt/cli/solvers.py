"""``aidopt solvers``: the table of solvers aidopt knows (version, licence, classes, duals), then
aidopt's own methods (``fn``, ``fm``, ``smo``, ``sor``, ``libsvm``, ``benders``: what each solves,
installed or not)."""

from __future__ import annotations

import argparse


def cmd_solvers(args) -> int:
    from aidopt.solvers import solver_table

    rows = solver_table(native=True)
    cols = ["name", "version", "available", "licence", "classes", "duals", "install", "notes"]
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    for r in [dict(zip(cols, cols, strict=True)), *rows]:
        print("  ".join(str(r[c]).ljust(widths[c]) for c in cols).rstrip())
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``aidopt solvers``."""
    p.description = ("The solvers aidopt knows (installed and licensed here or not), then the "
                     "methods aidopt runs itself (solver=fn, fm, smo, sor, libsvm, benders), each "
                     "with what it solves.")
    p.set_defaults(func=cmd_solvers)
