r"""The capacitated LSCP with split demand, with HiGHS: a bound from the capacities, a cover by
diving on the LP relaxation, then the MIP from that cover (docs/facility.md, "The capacitated
LSCP: the capacity bound and an LP dive").

On the exactly aggregated rows r (demand :math:`W_r`, sites :math:`N_r`) with capacities
:math:`Q_j` and opening costs :math:`f_j` (:mod:`aidopt.models.covering`), every feasible set of
open sites must hold the total demand :math:`D = \sum_r W_r`, and a site can hold at most the
demand of the rows it reaches, :math:`\bar Q_j = \min(Q_j, \sum_{r \ni j} W_r)`. So

.. math:: \textstyle B = \min \{\sum_j f_j y_j : \sum_j \bar Q_j y_j \ge D,\ 0 \le y \le 1,\
          y_j = 1\ (j \in J_0)\}

(a fractional knapsack, solved exactly by taking sites in increasing :math:`f_j / \bar Q_j`) is
a lower bound on the optimum, rounded up when every cost is an integer. It is tight when the
capacities are (the open sites full), which is where HiGHS's branch and bound is slowest: it
proves the bound at its root and then searches long for a cover that attains it.

:func:`solve_capacitated`

1. solves the LP relaxation (interior point, then crossover to a vertex and its basis) and dives:
   the site of largest fractional LP value is fixed open and the LP solved again from the last
   basis, until no site is fractional (a cover, the demand assigned by the LP) or the LP is
   infeasible (no cover); at most :data:`DIVE_SECONDS` and :data:`DIVE_SHARE` of the time left;
2. when that cover's cost meets :math:`B`, it is optimal (the bound proves it) and no MIP runs;
3. otherwise the MIP runs from the cover, its bound the larger of the MIP's dual bound and
   :math:`B`.

The answer is checked on every original point like any other (the covering plug-in's
certificate: every point's demand served within the radius, no site above its capacity).
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from aidopt.solvers.highs import run_for

__all__ = ["DIVE_SECONDS", "DIVE_SHARE", "capacity_bound", "solve_capacitated"]

#: the LP relaxation and the dive run for at most this many seconds ...
DIVE_SECONDS = 120.0

#: ... and at most this share of the time left
DIVE_SHARE = 0.4

#: an LP value within this of 0 or 1 counts as integral
INTEGRAL_TOL = 1e-6


def capacity_bound(cost, capacity, reach, demand: float, forced=()) -> float:
    r"""The least cost of sites whose capacities hold ``demand`` (module docstring, :math:`B`):
    ``reach[j]`` is the demand site j's rows hold (its useful capacity is at most that), the
    sites of ``forced`` are open. ``inf`` when all sites together cannot hold it."""
    cost = np.asarray(cost, dtype=float)
    useful = np.minimum(np.asarray(capacity, dtype=float), np.asarray(reach, dtype=float))
    is_forced = np.zeros(cost.size, dtype=bool)
    is_forced[np.asarray(forced, dtype=np.int64)] = True
    bound = float(cost[is_forced].sum())
    need = float(demand) - float(useful[is_forced].sum())
    if need <= 0:
        return bound
    free = np.flatnonzero(~is_forced & (useful > 0))
    order = free[np.argsort(cost[free] / useful[free], kind="stable")]
    held = np.cumsum(useful[order])
    if not order.size or held[-1] < need * (1 - 1e-9):  # 1e-9: the sums' rounding
        return math.inf
    k = min(int(np.searchsorted(held, need)), order.size - 1)  # the first prefix that holds it
    before = float(held[k - 1]) if k else 0.0
    last = float(cost[order[k]]) / float(useful[order[k]])  # cost per unit of the last site
    # less the sums' rounding (relative 1e-9 of the demand) priced at that site: still a bound
    return (bound + float(cost[order[:k]].sum()) + last * max(need - before, 0.0)
            - last * 1e-9 * max(float(demand), 1.0))


def dive(prog, cols, options, seconds):
    """Step 1 of the module docstring on the relaxation of ``prog`` (``cols``: its site columns):
    the cover's column values, or ``None`` (an infeasible LP, or ``seconds`` used up)."""
    import highspy

    from aidopt.solvers.highs import new_highs, pass_program

    t0 = time.perf_counter()

    def left():
        return None if seconds is None else seconds - (time.perf_counter() - t0)

    h = new_highs(options={**options, "solver": "ipm", "run_crossover": "on"})
    pass_program(h, dataclasses.replace(prog, integrality=None))
    if run_for(h, left()) != highspy.HighsModelStatus.kOptimal:
        return None
    h.setOptionValue("solver", "simplex")  # the dive's LPs from the last basis
    while True:
        values = np.asarray(h.getSolution().col_value)
        y = values[cols]
        fractional = np.flatnonzero((y > INTEGRAL_TOL) & (y < 1 - INTEGRAL_TOL))
        if not fractional.size:  # the assignment again with the sites exactly 0 or 1
            x = np.round(y)
            h.changeColsBounds(cols.size, cols.astype(np.int32), x, x)
            if run_for(h, left()) != highspy.HighsModelStatus.kOptimal:
                return None
            values = np.asarray(h.getSolution().col_value)
            values[cols] = x
            return values
        if left() is not None and left() <= 0:
            return None
        h.changeColBounds(int(cols[fractional[np.argmax(y[fractional])]]), 1.0, 1.0)
        if run_for(h, left()) != highspy.HighsModelStatus.kOptimal:
            return None


def solve_capacitated(model, *, cost, capacity, reach, demand, forced, integral, time_limit,
                      options, mip_gap):
    """Steps 1-3 of the module docstring on the Pyomo ``model`` of the capacitated LSCP (split
    demand: its integer columns are the sites'); ``cost``, ``capacity``, ``reach``,
    ``demand``, ``forced``: :func:`capacity_bound`'s. Returns the
    :class:`~aidopt.solvers.SolveOutcome`, its values loaded into ``model``; ``extra`` holds
    ``capacity_bound``, ``dive_seconds``, ``dive_cost`` (``nan``: no cover) and ``mip`` (1: the
    MIP ran)."""
    import highspy

    from aidopt.solvers import SolveOutcome, SolveStatus
    from aidopt.solvers.highs import highs_version, new_highs, pass_program, run, set_time_limit
    from aidopt.solvers.reader import linear_program

    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit

    def left():
        return None if deadline is None else max(deadline - time.perf_counter(), 0.0)

    prog = linear_program(model)
    cols = np.flatnonzero(prog.integrality)
    bound = capacity_bound(cost, capacity, reach, demand, forced)
    if integral and math.isfinite(bound):
        bound = float(math.ceil(bound - 1e-9 * max(1.0, abs(bound))))
    seconds = DIVE_SECONDS if deadline is None else min(DIVE_SECONDS, DIVE_SHARE * left())
    cover = dive(prog, cols, options, seconds)
    value = math.nan if cover is None else float(prog.c @ cover + prog.offset)
    extra = {"capacity_bound": bound, "dive_seconds": time.perf_counter() - t0,
             "dive_cost": value, "mip": 0.0}
    if cover is not None and math.isfinite(bound):
        tol = 1e-9 * max(1.0, abs(value))
        if value < bound - tol:  # a cover below the bound: a numerical failure, bound dropped
            bound = extra["capacity_bound"] = -math.inf
        elif value <= bound + tol:  # the cover meets the bound: optimal, no MIP
            for var, val in zip(prog.columns, cover, strict=True):
                var.set_value(float(val), skip_validation=True)
            return SolveOutcome(SolveStatus.OPTIMAL, value, None, True, "highs",
                                highs_version(), time.perf_counter() - t0, "the LP dive's "
                                "cover meets the capacity bound: no MIP", extra=extra,
                                bound=bound)
    extra["mip"] = 1.0
    mip = new_highs(options={"mip_rel_gap": mip_gap, **options})
    pass_program(mip, prog)
    if cover is not None:
        start = highspy.HighsSolution()
        start.col_value = list(cover)
        mip.setSolution(start)
    seconds = left()
    if "time_limit" not in options:  # the caller's own HiGHS limit stands, as on Pyomo's path
        set_time_limit(mip, seconds)
    outcome = run(mip, prog.columns, prog.rows, need_duals=False, is_mip=True, t0=t0,
                  read_seconds=0.0, extra=extra, deadline=seconds, abandon=True)
    if math.isfinite(bound):
        outcome = dataclasses.replace(
            outcome, bound=bound if outcome.bound is None else max(outcome.bound, bound))
    return outcome
