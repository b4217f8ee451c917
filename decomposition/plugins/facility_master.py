r"""The SCIP side of the facility branch and cut (:func:`~.facility_benders.solve_benders`): the
master model, the constraint handler that separates the per-customer cuts, and the rule that
branches on balls. Imported only when a branch and cut runs (``import aidopt`` loads no solver).

The master (:class:`Master`) holds one binary :math:`y_j` per site and one :math:`\theta_i` per
customer, every cost divided by ``scale`` (SCIP's tolerances are absolute below 1). The handler
(:class:`PerCustomerCuts`) checks and enforces each candidate by
:func:`~.facility_cuts.separate` — exact for an integral :math:`y`, so SCIP's incumbents are
priced exactly — and separates the most violated cut of every customer at every LP solution.
Past ``deadline`` it stops SCIP (``interruptSolve``) and rejects what it has not checked: the
time spent in separation counts against the run's limit, like SCIP's own.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pyscipopt as ps
from aidopt.decomposition.plugins.facility_cuts import branching_ball, separate
from pyscipopt import SCIP_RESULT, Branchrule, Conshdlr

__all__ = ["BallBranching", "FEASIBILITY_TOL", "Master", "PerCustomerCuts"]

#: a cut is added (a candidate rejected) when it is violated by more than this, relative to
#: ``max(1, |D|)`` (SCIP's own feasibility tolerance is set to the same)
FEASIBILITY_TOL = 1e-9


class Master:
    """SCIP's master problem of the branch and cut.

    Parameters
    ----------
    levels : NearestSites
        The model customers' sorted sites.
    w : ndarray (n,)
        Their demands.
    fixed : ndarray (s,) or None
        Opening costs (UFL), or None (p-median).
    p : int or None
        Sites to open (p-median; at most p with opening costs), or None (UFL).
    scale : float
        SCIP sees every cost divided by it (positive, finite).
    mip_gap : float
    time_limit : float or None
        Seconds.
    log : bool
        Show SCIP's log.
    """

    def __init__(self, levels, w, fixed, p, *, scale: float, mip_gap: float,
                 time_limit: float | None, log: bool):
        self.levels, self.scale = levels, float(scale)
        n, s = levels.n, levels.n_sites
        m = self.model = ps.Model()
        m.hideOutput(not log)
        m.setParam("numerics/feastol", FEASIBILITY_TOL)
        m.setParam("limits/gap", float(mip_gap))
        if time_limit is not None and math.isfinite(time_limit):  # SCIP refuses inf and > 1e20
            m.setParam("limits/time", min(max(0.0, float(time_limit)), 1e20))
        # the cuts SCIP does not see must not be reasoned away: no symmetry handling over an
        # incomplete model (the handler's locks keep dual reductions valid), no presolve that
        # would replace the variables the handler adds cuts on
        m.setParam("misc/usesymmetry", 0)
        m.setParam("presolving/maxrounds", 0)
        m.setParam("presolving/maxrestarts", 0)
        self.y = [m.addVar(vtype="B", name=f"y{j}",
                           obj=0.0 if fixed is None else float(fixed[j]) / self.scale)
                  for j in range(s)]
        self.theta = [m.addVar(lb=float(levels.sorted_costs[i, 0]) / self.scale, obj=float(w[i]),
                               name=f"theta{i}") for i in range(n)]
        if p is not None and fixed is None:  # as good as "at most p": no site costs to open
            m.addCons(ps.quicksum(self.y) == p, name="open_p")
        elif p is not None:
            m.addCons(ps.quicksum(self.y) <= p, name="open_at_most_p")
            m.addCons(ps.quicksum(self.y) >= 1, name="open_one")
        else:
            m.addCons(ps.quicksum(self.y) >= 1, name="open_one")

    def add_cut(self, i: int, D: float, width: int, forced: bool) -> None:
        r""":math:`\theta_i + \sum_{q < width} (D - c_{i,q}) y_{j_q} \ge D` as a SCIP cut."""
        m = self.model
        row = m.createEmptyRowUnspec(name=f"cut{i}", lhs=float(D) / self.scale, rhs=None,
                                     local=False, modifiable=False, removable=True)
        m.cacheRowExtensions(row)
        m.addVarToRow(row, self.theta[i], 1.0)
        sites = self.levels.order[i, :width]
        # in float64: the sorted costs may be stored as float32 (exact integers), their
        # quotients by the scale must be rounded like the cut's side
        coef = (float(D) - self.levels.sorted_costs[i, :width].astype(float)) / self.scale
        for j, a in zip(sites.tolist(), coef.tolist(), strict=True):
            m.addVarToRow(row, self.y[j], a)
        m.flushRowExtensions(row)
        m.addCut(row, forcecut=forced)
        m.releaseRow(row)

    def y_at(self, sol) -> np.ndarray:
        """The sites' values at ``sol`` (None: the LP solution), clipped to [0, 1]."""
        return np.clip(np.array([self.model.getSolVal(sol, v) for v in self.y]), 0.0, 1.0)

    def theta_at(self, sol) -> np.ndarray:
        return np.array([self.model.getSolVal(sol, v) for v in self.theta])

    def add_start(self, start) -> None:
        """The open sites ``start`` as SCIP's first incumbent, each customer priced at its
        nearest open site (from the open sites' cost columns: with few sites open, the sorted
        sites would have to reach far down every customer's list)."""
        m, s = self.model, self.levels.n_sites
        sol = m.createSol()
        start = np.unique(np.asarray(start, dtype=np.int64))
        is_open = np.zeros(s, dtype=bool)
        is_open[start] = True
        for j in range(s):
            m.setSolVal(sol, self.y[j], 1.0 if is_open[j] else 0.0)
        data = self.levels.data
        phi = data.cost_columns(start)[self.levels.customers].min(axis=1)
        for i, v in enumerate(self.theta):
            m.setSolVal(sol, v, float(phi[i]) / self.scale)
        m.addSol(sol, free=True)


class PerCustomerCuts(Conshdlr):
    """Checks, enforces and separates the per-customer cuts of the radius formulation.

    Parameters
    ----------
    master : Master
    root_cuts : (ndarray, ndarray, ndarray) or None
        ``(customer, level D, width)`` of cuts to put in the first LP.
    deadline : float or None
        ``time.perf_counter()`` value after which the handler stops SCIP.
    """

    def __init__(self, master: Master, root_cuts=None, deadline: float | None = None):
        super().__init__()
        self.master, self.root_cuts, self.deadline = master, root_cuts, deadline
        self.calls = self.cuts = 0
        self.seconds = 0.0
        self.out_of_time = False

    def _late(self) -> bool:
        """Past the deadline: stop SCIP (once) and say so. SCIP refuses ``interruptSolve`` in its
        INITSOLVE stage (while it checks the start solution; calling it there made the whole
        solve fail): there the candidate is only rejected, and the next call, in the solving
        stage, stops SCIP."""
        if self.deadline is not None and time.perf_counter() > self.deadline:
            model = self.master.model
            if not self.out_of_time and model.getStage() != ps.SCIP_STAGE.INITSOLVE:
                self.out_of_time = True
                model.interruptSolve()
            return True
        return False

    def violated(self, sol):
        """The customers whose cut ``sol`` violates, with every customer's level and width."""
        t0 = time.perf_counter()
        master = self.master
        D, width, phi = separate(master.levels, master.y_at(sol))
        scale = master.scale
        bad = np.flatnonzero(phi / scale - master.theta_at(sol)
                             > FEASIBILITY_TOL * np.maximum(1.0, np.abs(D) / scale))
        self.calls += 1
        self.seconds += time.perf_counter() - t0
        return bad, D, width

    def add(self, sol) -> bool:
        bad, D, width = self.violated(sol)
        t0 = time.perf_counter()
        for i in bad.tolist():
            self.master.add_cut(i, D[i], int(width[i]), True)
        self.cuts += bad.size
        self.seconds += time.perf_counter() - t0
        return bad.size > 0

    def consinitlp(self, constraints):
        if self.root_cuts is not None:
            t0 = time.perf_counter()
            self.master.levels.ensure(int(np.max(self.root_cuts[2], initial=0)))
            for i, D, width in zip(*self.root_cuts, strict=True):
                self.master.add_cut(int(i), float(D), int(width), True)
            self.seconds += time.perf_counter() - t0
        return {"infeasible": False}

    def conscheck(self, constraints, solution, checkintegrality, checklprows, printreason,
                  completely):
        if self._late():  # unchecked: never accepted
            return {"result": SCIP_RESULT.INFEASIBLE}
        bad = self.violated(solution)[0]
        return {"result": SCIP_RESULT.INFEASIBLE if bad.size else SCIP_RESULT.FEASIBLE}

    def consenfolp(self, constraints, nusefulconss, solinfeasible):
        if self._late():
            return {"result": SCIP_RESULT.INFEASIBLE}
        return {"result": SCIP_RESULT.SEPARATED if self.add(None) else SCIP_RESULT.FEASIBLE}

    def consenfops(self, constraints, nusefulconss, solinfeasible, objinfeasible):
        if self._late():
            return {"result": SCIP_RESULT.INFEASIBLE}
        bad = self.violated(None)[0]
        return {"result": SCIP_RESULT.INFEASIBLE if bad.size else SCIP_RESULT.FEASIBLE}

    def conssepalp(self, constraints, nusefulconss):
        if self._late():
            return {"result": SCIP_RESULT.DIDNOTRUN}
        return {"result": SCIP_RESULT.SEPARATED if self.add(None) else SCIP_RESULT.DIDNOTFIND}

    def conslock(self, constraint, locktype, nlockspos, nlocksneg):
        # every cut is ">=" with non-negative coefficients: lowering a variable may violate it
        for v in self.master.y + self.master.theta:
            self.master.model.addVarLocks(v, nlockspos, nlocksneg)


class BallBranching(Branchrule):
    """Branch on a ball of :func:`~.facility_cuts.branching_ball`: every site of it closed / at
    least one open (a local row); SCIP's own rules where no ball is fractional."""

    def __init__(self, master: Master, w: np.ndarray):
        super().__init__()
        self.master, self.w = master, w
        self.calls = 0

    def branchexeclp(self, allowaddcons):
        master = self.master
        m = master.model
        ball = branching_ball(master.levels, master.y_at(None), self.w)
        if ball is None:
            return {"result": SCIP_RESULT.DIDNOTRUN}
        sites = [m.getTransformedVar(master.y[j]) for j in ball.tolist()]
        self.calls += 1
        estimate = m.getLocalEstimate()
        closed = m.createChild(0.0, estimate)
        for v in sites:
            m.chgVarUbNode(closed, v, 0.0)
        m.addConsNode(m.createChild(0.0, estimate), ps.quicksum(sites) >= 1, name="ball")
        return {"result": SCIP_RESULT.BRANCHED}

    def branchexecps(self, allowaddcons):  # no LP solution: SCIP's own rules
        return {"result": SCIP_RESULT.DIDNOTRUN}

    def branchexecext(self, allowaddcons):
        return {"result": SCIP_RESULT.DIDNOTRUN}
