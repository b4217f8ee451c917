"""``bench_warm``: warm re-solves through a persistent handle against cold rebuilds.

The LP is the feature-selection SVM of Bradley & Mangasarian (FSV, 1998) on ``rows`` seeded
points in ``cols`` dimensions (two overlapping Gaussian classes)::

    min   (1 - lam) * sum_i y_i / rows  +  lam * sum_j c_j v_j
    s.t.  d_i (x_i w - gamma) + y_i >= 1      i = 1..rows      (one row per point)
          -v_j <= w_j <= v_j                   j = 1..cols
          y >= 0

Two updates, as the algorithms that motivate persistent handles make them:

* **SLA objective change** (successive linearization of the concave term
  ``sum_j (1 - exp(-alpha v_j))``): each step sets ``c_j = alpha exp(-alpha v_j)`` from the last
  solution (mutable ``Param`` s), then re-solves. Warm: ``h.update_objective(); h.solve()``.
* **LPC row addition** (linear-programming chunking): the LP is first solved on the first
  ``rows - chunk`` points (the rest deactivated), then the next ``chunk`` rows are activated.
  Warm: ``h.add_constraints(new_rows); h.solve()``.

Cold is :func:`aidopt.solvers.solve_model` of the same updated model: read it again and solve it in
a fresh HiGHS. Both use HiGHS's simplex (``solver="simplex"``) with ``threads`` threads: cold runs
HiGHS's default dual simplex; the handle picks primal simplex after an objective-only change (the
old basis stays primal feasible) and dual simplex after added rows (it stays dual feasible). Warm
times include the update call, cold times the model read. One process, one timing at a time;
each case is repeated ``repeat`` times on a fresh model and the median reported.
"""

from __future__ import annotations

import platform
import statistics
import time
from datetime import date

import numpy as np

__all__ = ["bench_warm", "fsv_model"]


def fsv_model(rows: int = 20_000, cols: int = 50, seed: int = 0, lam: float = 0.1,
              alpha: float = 5.0):
    """The seeded FSV LP of this benchmark (a concrete Pyomo model; costs ``c`` mutable)."""
    import pyomo.environ as pyo
    from pyomo.core.expr.numeric_expr import LinearExpression

    rng = np.random.default_rng(seed)
    d = np.where(rng.random(rows) < 0.5, 1.0, -1.0)
    informative = max(1, cols // 5)
    X = rng.normal(size=(rows, cols))
    X[:, :informative] += 0.6 * d[:, None]
    m = pyo.ConcreteModel(name="fsv_lp")
    m.I = pyo.RangeSet(0, rows - 1)
    m.J = pyo.RangeSet(0, cols - 1)
    m.c = pyo.Param(m.J, initialize=alpha, mutable=True, doc="SLA weight alpha exp(-alpha v_j)")
    m.w = pyo.Var(m.J)
    m.gamma = pyo.Var()
    m.v = pyo.Var(m.J, within=pyo.NonNegativeReals)
    m.y = pyo.Var(m.I, within=pyo.NonNegativeReals)
    w = list(m.w.values())

    def fit(m, i):
        body = LinearExpression(
            constant=0.0,
            linear_coefs=[*(d[i] * X[i]).tolist(), -float(d[i]), 1.0],
            linear_vars=[*w, m.gamma, m.y[i]],
        )
        return body >= 1.0

    m.fit = pyo.Constraint(m.I, rule=fit)
    m.upper = pyo.Constraint(m.J, rule=lambda m, j: m.w[j] - m.v[j] <= 0)
    m.lower = pyo.Constraint(m.J, rule=lambda m, j: m.w[j] + m.v[j] >= 0)
    m.obj = pyo.Objective(
        expr=(1 - lam) / rows * sum(m.y.values()) + lam * sum(m.c[j] * m.v[j] for j in m.J))
    m.alpha = alpha
    return m


def _sla_step(m) -> None:
    """Set the SLA weights from the current solution."""
    for j in m.J:
        m.c[j] = m.alpha * float(np.exp(-m.alpha * max(0.0, m.v[j].value or 0.0)))


def _case_sla(rows, cols, seed, threads):
    from aidopt import solvers

    opts = {"solver": "simplex"}
    m = fsv_model(rows, cols, seed)
    h = solvers.persistent(m, "highs", threads=threads, options=opts)
    first = h.solve()
    assert first.optimal, first.message
    _sla_step(m)
    t0 = time.perf_counter()
    h.update_objective()
    warm = h.solve()
    t_warm = time.perf_counter() - t0
    t0 = time.perf_counter()
    cold = solvers.solve_model(m, "highs", threads=threads, options=opts)
    t_cold = time.perf_counter() - t0
    h.close()
    return t_warm, t_cold, warm, cold


def _case_lpc(rows, cols, seed, threads, chunk):
    from aidopt import solvers

    opts = {"solver": "simplex"}
    m = fsv_model(rows, cols, seed)
    _sla_step(m)  # any fixed costs; the objective does not change in this case
    new = [m.fit[i] for i in range(rows - chunk, rows)]
    for con in new:
        con.deactivate()
    h = solvers.persistent(m, "highs", threads=threads, options=opts)
    first = h.solve()
    assert first.optimal, first.message
    for con in new:
        con.activate()
    t0 = time.perf_counter()
    h.add_constraints(new)
    warm = h.solve()
    t_warm = time.perf_counter() - t0
    t0 = time.perf_counter()
    cold = solvers.solve_model(m, "highs", threads=threads, options=opts)
    t_cold = time.perf_counter() - t0
    h.close()
    return t_warm, t_cold, warm, cold


def bench_warm(rows: int = 20_000, cols: int = 50, seed: int = 0, repeat: int = 3,
               output: str | None = None, threads: int | None = 1, chunk: int | None = None) -> str:
    """Time warm re-solves (persistent HiGHS handle) against cold rebuilds; print a table.

    Parameters
    ----------
    rows, cols : int
        Points (one LP row each) and features of the FSV LP.
    seed : int
        Data seed.
    repeat : int
        Repetitions of each case (fresh model each time); the median is reported.
    output : str, optional
        Markdown file the table is appended to.
    threads : int, optional
        HiGHS threads (1 by default, so that one timing uses one core).
    chunk : int, optional
        Rows added in the LPC case (default: a quarter of ``rows``).

    Returns
    -------
    str
        The markdown table.
    """
    import highspy  # noqa: F401
    import pyomo

    from aidopt import solvers
    from aidopt._version import __version__

    chunk = chunk or max(1, rows // 4)
    cases = [
        ("SLA objective change (50 costs)".replace("50", str(cols)),
         lambda: _case_sla(rows, cols, seed, threads)),
        (f"LPC row addition ({rows - chunk} + {chunk} rows)",
         lambda: _case_lpc(rows, cols, seed, threads, chunk)),
    ]
    lines = [
        f"FSV LP, {rows} points x {cols} features ({rows + 2 * cols} rows, {rows + 2 * cols + 1} "
        f"columns), seed {seed}; HiGHS {solvers.version('highs')} simplex (cold: dual; warm: primal "
        f"after the objective change, dual after the row addition), threads={threads}; "
        f"median of {repeat}; aidopt {__version__}, Pyomo {pyomo.version.version}, "
        f"Python {platform.python_version()}, {date.today().isoformat()}",
        "",
        "| update | warm (s) | cold (s) | cold / warm | simplex iterations warm, cold | "
        "objectives equal |",
        "|---|---|---|---|---|---|",
    ]
    for label, run in cases:
        results = [run() for _ in range(repeat)]
        t_warm = statistics.median(r[0] for r in results)
        t_cold = statistics.median(r[1] for r in results)
        _, _, warm, cold = results[-1]
        equal = all(r[2].optimal and r[3].optimal and abs(r[2].objective - r[3].objective)
                    <= 1e-7 * max(1.0, abs(r[3].objective)) for r in results)
        lines.append(
            f"| {label} | {t_warm:.3f} | {t_cold:.3f} | {t_cold / t_warm:.1f} | "
            f"{warm.extra['simplex_iterations']}, {cold.extra['simplex_iterations']} | "
            f"{'yes' if equal else 'NO'} ({warm.objective:.9g}) |"
        )
    table = "\n".join(lines)
    print(table)
    if output:
        with open(output, "a") as fh:
            fh.write(table + "\n\n")
    return table
