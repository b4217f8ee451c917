r"""Branch-and-Benders-cut for the p-median and the UFL: the per-customer cuts of
:mod:`~aidopt.decomposition.plugins.facility_cuts`, separated lazily inside SCIP's branch and cut.

The master problem has one binary :math:`y_j` per site and one continuous :math:`\theta_i` per
customer (its cost):

.. math:: \min \textstyle\sum_i w_i \theta_i + f'y \quad \text{s.t.} \quad
          \textstyle\sum_j y_j = p \text{ (UFL: } \ge 1;\ \text{both: } 1 \le \cdot \le p),\quad
          y \in \{0, 1\}^s,\quad
          \theta_i \ge D_i^0,

and the cuts :math:`\theta_i + \sum_{j:\, c_{ij} < D} (D - c_{ij})\, y_j \ge D` for every level
:math:`D` of customer :math:`i` (the Benders cuts of the radius formulation, Durán-Mateluna, Alès
& Elloumi 2023; García, Labbé & Marín 2011). There are :math:`\sum_i G_i` of them; none is
written out. A SCIP constraint handler separates, at every LP solution (fractional or not) and
every candidate solution, each customer's most violated cut in one pass over its sorted sites
(:func:`separate`), so SCIP's own branching, bounding, reduced-cost fixing and heuristics run
on a model that holds only the cuts found so far. For an integral :math:`y` the tight cut is at
the customer's nearest open site, so a candidate that violates no cut is priced exactly:
SCIP's optimum is the original optimum, and its dual bound a bound on it.

Radii (:mod:`~aidopt.decomposition.plugins.facility_radius`) cap the levels separated: with
customer :math:`i`'s levels up to :math:`D_i^{k_i}` only, the master is the aggregated radius
problem, so the same code solves an AID iterate; at full radii (what
:class:`~aidopt.decomposition.plugins.facility_radius.FacilityRadiusProblem` uses with
``solver="benders"``) it is the original problem. The run starts from the cuts binding at the
optimum of the cutting-plane LP (:func:`~aidopt.decomposition.plugins.facility_cuts.lp_by_cuts`)
and from a feasible solution (SCIP keeps the better of it and its own).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

__all__ = ["BendersResult", "separate", "solve_benders"]

#: a cut is added (a candidate rejected) when it is violated by more than this, relative to
#: ``max(1, |D|)`` (SCIP's own feasibility tolerance is set to the same)
FEASIBILITY_TOL = 1e-9


@dataclass
class BendersResult:
    """What :func:`solve_benders` ends with.

    Attributes
    ----------
    y : ndarray (s,) or None
        The best solution's open sites (0/1), ``None`` when SCIP has none.
    objective, bound : float
        Its objective in the master (the aggregated objective at the radii given) and SCIP's
        dual bound on the master's optimum.
    status : str
        ``"optimal"``, ``"time_limit"``, ``"interrupted"`` or SCIP's own status.
    nodes, calls, cuts : int
        Branch-and-bound nodes, separation calls and cuts added.
    separation_seconds : float
        Time spent in :func:`separate` and in adding its cuts.
    """

    y: np.ndarray | None
    objective: float
    bound: float
    status: str
    nodes: int
    calls: int
    cuts: int
    separation_seconds: float


def critical_positions(levels, y: np.ndarray, cap: np.ndarray | None = None) -> np.ndarray:
    """Per customer, the first sorted position where the fractions ``y`` of its sites reach 1
    (the last position when they never do), at most ``cap[i]``. Reads only as many sorted
    positions as needed: a prefix that grows fourfold for the customers not yet covered."""
    n, s = levels.order.shape
    q = np.full(n, s - 1, dtype=np.int64)
    rows = np.arange(n)
    width, done = min(s, 32), 0
    carried = np.zeros(n)
    while rows.size:
        block = y[levels.order[rows, done:width]]
        cum = carried[rows, None] + np.cumsum(block, axis=1)
        reached = cum[:, -1] >= 1.0 - 1e-12
        first = np.argmax(cum >= 1.0 - 1e-12, axis=1)
        q[rows[reached]] = done + first[reached]
        if width == s:
            break
        carried[rows] = cum[:, -1]
        rows = rows[~reached]
        done, width = width, min(s, 4 * width)
    return q if cap is None else np.minimum(q, cap)


def separate(levels, y: np.ndarray, cap: np.ndarray | None = None):
    """The most violated cut of each customer at ``y``: ``(D, width, phi)``.

    ``D[i]`` is the cut's level, the cut's sites are customer ``i``'s sorted positions
    ``0 .. width[i] - 1`` (those cheaper than ``D[i]``) with coefficients ``D[i] - c``, and
    ``phi[i]`` is the cut's right-hand side minus its ``y`` part: the customer's cost in the
    LP relaxation at ``y`` (:math:`\\varphi_i(y)` of :mod:`.facility_cuts`), or at radii
    ``cap`` (sorted positions where each customer's levels stop) in the aggregated one.
    """
    q = critical_positions(levels, y, cap)
    rows = np.arange(levels.n)
    D = levels.sorted_costs[rows, q]
    span = int(q.max()) + 1
    prefix = levels.sorted_costs[:, :span]
    below = prefix < D[:, None]
    width = below.sum(axis=1)
    phi = D - ((D[:, None] - prefix) * y[levels.order[:, :span]] * below).sum(axis=1)
    return D, width, phi


def solve_benders(levels, w: np.ndarray, fixed: np.ndarray | None, p: int | None, *,
                  cap: np.ndarray | None = None, root_cuts=None, start: np.ndarray | None = None,
                  time_limit: float | None = None, mip_gap: float = 1e-7,
                  log: bool = False) -> BendersResult:
    """Solve the master of the module docstring by branch and cut in SCIP.

    Parameters
    ----------
    levels : CostLevels
        The model customers' sorted costs (:class:`~.facility_radius.CostLevels`).
    w : ndarray (n,)
        Their demands.
    fixed : ndarray (s,) or None
        Opening costs (UFL), or None (p-median).
    p : int or None
        Sites to open (p-median), or None (UFL).
    cap : ndarray of int (n,), optional
        Last sorted position each customer's cuts may use (the first position of its level
        :math:`k_i`); None: every level (the original problem).
    root_cuts : (ndarray, ndarray), optional
        ``(customer, level value D)`` pairs of cuts to put in the first LP (the cutting-plane
        LP's binding cuts).
    start : ndarray of int, optional
        Open sites of a feasible solution, given to SCIP as its first incumbent.
    time_limit : float, optional
        Seconds.
    mip_gap : float
        SCIP's relative gap limit.
    log : bool
        Show SCIP's log.
    """
    import pyscipopt as ps
    from pyscipopt import SCIP_RESULT, Conshdlr

    n, s = levels.order.shape
    w = np.asarray(w, dtype=float)
    # SCIP sees costs divided by the largest one (its tolerances are absolute below 1): the
    # same answer at any unit of cost
    scale = float(np.max(levels.sorted_costs[:, -1], initial=0.0))
    if fixed is not None:
        scale = max(scale, float(np.max(fixed, initial=0.0)))
    scale = scale if scale > 0 and math.isfinite(scale) else 1.0
    m = ps.Model()
    m.hideOutput(not log)
    m.setParam("numerics/feastol", FEASIBILITY_TOL)
    m.setParam("limits/gap", float(mip_gap))
    if time_limit is not None:
        m.setParam("limits/time", max(0.0, float(time_limit)))
    # the cuts SCIP does not see must not be reasoned away: no symmetry handling or dual
    # reductions over an incomplete model (the handler's locks cover the rest), no presolve
    # that would replace the variables the handler adds cuts on
    m.setParam("misc/usesymmetry", 0)
    m.setParam("presolving/maxrounds", 0)
    m.setParam("presolving/maxrestarts", 0)
    y = [m.addVar(vtype="B", name=f"y{j}",
                  obj=0.0 if fixed is None else float(fixed[j]) / scale) for j in range(s)]
    theta = [m.addVar(lb=float(levels.sorted_costs[i, 0]) / scale, obj=float(w[i]),
                      name=f"theta{i}") for i in range(n)]
    if p is not None and fixed is None:  # as good as "at most p": no site costs to open
        m.addCons(ps.quicksum(y) == p, name="open_p")
    elif p is not None:
        m.addCons(ps.quicksum(y) <= p, name="open_at_most_p")
        m.addCons(ps.quicksum(y) >= 1, name="open_one")
    else:
        m.addCons(ps.quicksum(y) >= 1, name="open_one")

    def add_cut(i: int, D: float, width: int, forced: bool) -> None:
        row = m.createEmptyRowUnspec(name=f"cut{i}", lhs=float(D) / scale, rhs=None,
                                     local=False, modifiable=False, removable=True)
        m.cacheRowExtensions(row)
        m.addVarToRow(row, theta[i], 1.0)
        sites = levels.order[i, :width]
        coef = (D - levels.sorted_costs[i, :width]) / scale
        for j, a in zip(sites.tolist(), coef.tolist(), strict=True):
            m.addVarToRow(row, y[j], a)
        m.flushRowExtensions(row)
        m.addCut(row, forcecut=forced)
        m.releaseRow(row)

    class Cuts(Conshdlr):
        calls = cuts = 0
        seconds = 0.0

        def violated(self, sol):
            t0 = time.perf_counter()
            yv = np.clip(np.array([m.getSolVal(sol, v) for v in y]), 0.0, 1.0)
            tv = np.array([m.getSolVal(sol, v) for v in theta])
            D, width, phi = separate(levels, yv, cap)
            bad = np.flatnonzero(phi / scale - tv
                                 > FEASIBILITY_TOL * np.maximum(1.0, np.abs(D) / scale))
            self.calls += 1
            self.seconds += time.perf_counter() - t0
            return bad, D, width

        def add(self, sol) -> bool:
            bad, D, width = self.violated(sol)
            t0 = time.perf_counter()
            for i in bad.tolist():
                add_cut(i, D[i], int(width[i]), True)
            self.cuts += bad.size
            self.seconds += time.perf_counter() - t0
            return bad.size > 0

        def consinitlp(self, constraints):
            if root_cuts is not None:
                t0 = time.perf_counter()
                for i, D in zip(*root_cuts, strict=True):
                    width = int(np.count_nonzero(levels.sorted_costs[i] < D))
                    add_cut(int(i), float(D), width, True)
                self.seconds += time.perf_counter() - t0
            return {"infeasible": False}

        def conscheck(self, constraints, solution, checkintegrality, checklprows, printreason,
                      completely):
            bad = self.violated(solution)[0]
            return {"result": SCIP_RESULT.INFEASIBLE if bad.size else SCIP_RESULT.FEASIBLE}

        def consenfolp(self, constraints, nusefulconss, solinfeasible):
            return {"result": SCIP_RESULT.SEPARATED if self.add(None) else SCIP_RESULT.FEASIBLE}

        def consenfops(self, constraints, nusefulconss, solinfeasible, objinfeasible):
            bad = self.violated(None)[0]
            return {"result": SCIP_RESULT.INFEASIBLE if bad.size else SCIP_RESULT.FEASIBLE}

        def conssepalp(self, constraints, nusefulconss):
            return {"result": SCIP_RESULT.SEPARATED if self.add(None) else SCIP_RESULT.DIDNOTFIND}

        def conslock(self, constraint, locktype, nlockspos, nlocksneg):
            # every cut is ">=" with non-negative coefficients: lowering a variable may violate it
            for v in y + theta:
                m.addVarLocks(v, nlockspos, nlocksneg)

    handler = Cuts()
    m.includeConshdlr(handler, "percustomer", "per-customer Benders cuts of the radius formulation",
                      sepapriority=1_000_000, enfopriority=-1_000_000, chckpriority=-1_000_000,
                      sepafreq=1, needscons=True)
    cons = m.createCons(handler, "cuts", initial=True, separate=True, enforce=True, check=True,
                        propagate=False, local=False, modifiable=False, dynamic=False,
                        removable=False, stickingatnode=False)
    m.addPyCons(cons)
    if start is not None and len(start):
        sol = m.createSol()
        is_open = np.zeros(s, dtype=bool)
        is_open[np.asarray(start, dtype=np.int64)] = True
        for j in range(s):
            m.setSolVal(sol, y[j], 1.0 if is_open[j] else 0.0)
        D, _, phi = separate(levels, is_open.astype(float), cap)
        for i in range(n):
            m.setSolVal(sol, theta[i], float(phi[i]) / scale)
        m.addSol(sol, free=True)
    m.optimize()
    status = str(m.getStatus())
    status = {"optimal": "optimal", "timelimit": "time_limit", "userinterrupt": "interrupted",
              "gaplimit": "optimal"}.get(status, status)
    best = m.getBestSol() if m.getNSols() else None
    values = None
    objective = math.inf
    if best is not None:
        values = np.array([m.getSolVal(best, v) for v in y]) > 0.5
        objective = float(m.getSolObjVal(best)) * scale
    bound = float(m.getDualbound()) * scale
    result = BendersResult(values.astype(float) if values is not None else None, objective, bound,
                           status, int(m.getNNodes()), handler.calls, handler.cuts,
                           handler.seconds)
    m.freeProb()
    return result
