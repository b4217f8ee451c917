"""A time limit always holds: every installed MIP solver returns within ``time_limit + 10`` s.

Each solve runs in a child process (a solver that hangs must fail the test, not the suite). The
SCIP case is the one that hung: Pyomo's ``scip_direct`` captures output through pipes while
PySCIPOpt's ``optimize`` holds the GIL, so a solve writing more than a pipe buffer (here full
verbosity, a line per node) blocked forever in a pipe write.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from aidopt import solvers

LIMIT = 2.0
GRACE = 10.0

_CHILD = r"""
import json, sys, time
import numpy as np, pyomo.environ as pyo
from aidopt.solvers import solve_model

solver, limit, options = sys.argv[1], float(sys.argv[2]), json.loads(sys.argv[3])
rng = np.random.default_rng(0)
n, k = 300, 30                      # a multi-dimensional knapsack no solver closes in seconds
W = rng.integers(100, 1000, (k, n)); v = rng.integers(100, 1000, n)
m = pyo.ConcreteModel()
m.x = pyo.Var(range(n), domain=pyo.Binary)
m.c = pyo.Constraint(range(k), rule=lambda m, j: sum(int(W[j, i]) * m.x[i] for i in range(n))
                     <= int(W[j].sum() // 2))
m.o = pyo.Objective(expr=sum(int(v[i]) * m.x[i] for i in range(n)), sense=pyo.maximize)
t = time.perf_counter()
out = solve_model(m, solver=solver, problem_class="MILP", time_limit=limit, options=options)
print(json.dumps({"seconds": time.perf_counter() - t, "status": out.status.value,
                  "objective": out.objective}))
"""


def _installed(name):
    return solvers.availability(name) in ("full", "limited")


CASES = [("highs", {}), ("scip", {}),
         # full verbosity, a display line per node: megabytes of captured output
         ("scip", {"display/verblevel": 5, "display/freq": 1}),
         ("gurobi", {}), ("cplex", {}), ("xpress", {})]


@pytest.mark.parametrize("solver,options", CASES, ids=[f"{s}-{i}" for i, (s, _) in enumerate(CASES)])
def test_mip_solve_returns_within_its_time_limit(solver, options):
    if not _installed(solver):
        pytest.skip(f"{solver} not installed")
    try:
        proc = subprocess.run([sys.executable, "-c", _CHILD, solver, str(LIMIT), json.dumps(options)],
                              capture_output=True, text=True, timeout=LIMIT + GRACE + 30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{solver} with time_limit={LIMIT} did not return (killed after "
                    f"{LIMIT + GRACE + 30} s)")
    if proc.returncode != 0 and "licen" in proc.stderr.lower():
        pytest.skip(f"{solver}: licence refuses the model")
    assert proc.returncode == 0, proc.stderr[-2000:]
    # the child's JSON line; SCIP's C-level output (full verbosity) can be flushed after it
    got = json.loads(next(line for line in reversed(proc.stdout.splitlines())
                          if line.startswith('{"seconds"')))
    assert got["seconds"] <= LIMIT + GRACE, got
    assert got["status"] in ("time_limit", "optimal", "feasible"), got


def test_scip_watchdog_stops_an_overrun_and_reports_a_time_limit(monkeypatch):
    """The watchdog interrupts SCIP past its limit (forced here by a negative grace) and the
    solve reports a time limit, not a user interrupt."""
    if not _installed("scip"):
        pytest.skip("scip not installed")
    import time

    import numpy as np
    import pyomo.environ as pyo

    from aidopt.solvers import scip as S
    from aidopt.solvers import solve_model

    monkeypatch.setattr(S, "WATCHDOG_GRACE", -4.0)  # interrupt 1 s into a 5 s limit
    rng = np.random.default_rng(1)
    n, k = 300, 30
    W = rng.integers(100, 1000, (k, n))
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Binary)
    m.c = pyo.Constraint(range(k), rule=lambda m, j: sum(int(W[j, i]) * m.x[i] for i in range(n))
                         <= int(W[j].sum() // 2))
    m.o = pyo.Objective(expr=sum(int(rng.integers(100, 1000)) * m.x[i] for i in range(n)),
                        sense=pyo.maximize)
    t = time.perf_counter()
    out = solve_model(m, solver="scip", problem_class="MILP", time_limit=5.0)
    assert time.perf_counter() - t < 4.0
    assert out.status.value == "time_limit"
