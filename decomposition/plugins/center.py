r"""The p-center and the p-dispersion (docs/facility.md): the tests of one distance level each,
for the bisection of :func:`aidopt.decomposition.levels.level_search`.

**p-center** (key: the radius R). Open p sites so that the largest weighted distance
:math:`\max_i w_i \min_{j \text{ open}} d_{ij}` is least. Level R is feasible when p sites
cover every point, point i being covered by site j when :math:`w_i d_{ij} \le R`: the test is
the LSCP at R (:mod:`aidopt.models.covering`) on the exactly aggregated coverage rows
(:mod:`aidopt.data.coverage`), feasible when its optimum is at most p and proven infeasible
when its dual bound, rounded up, exceeds p. The search starts from the bound
:math:`\max_i w_i \min_j d_{ij}` (every point needs a site) and a greedy solution.

With ``subset=True`` (the default) the test is the client-subset relaxation of Contardo, Iori &
Kramer (2019, "A scalable exact algorithm for the vertex p-center problem", *Computers & OR*
103): the decision LSCP "can p sites cover the points of S?" (``most=p`` in
:mod:`aidopt.models.covering`) on a subset S of the points only. Its answer "no" is a proof for
every point (a cover of all points covers S: the subset problem is a relaxation); its answer
"yes" gives at most p sites, completed greedily to p, that either cover every point (checked on
the original distances: level R feasible) or leave some uncovered, which join S (those with
pairwise disjoint coverage sets first, the smallest sets first) before the next round. S is
kept from level to level: the points that bind at one radius tend to bind at the next. It
starts from the points the greedy solution was built around. A swap heuristic
(:func:`swap_cover`) repairs covers that miss points, from the last feasible level's sites
before any MIP and from each subset MIP's sites; a subset MIP stopped at :data:`NODE_CAP`
branch-and-bound nodes (HiGHS) hands over to the decision LSCP on every point.

**p-dispersion** (key: minus the smallest distance D between two chosen sites). Choose p
sites whose pairwise distances are all at least D, D largest: level D is feasible when the
conflict graph (sites closer than D) has an independent set of p sites containing the forced
ones, the packing MIP of :mod:`aidopt.models.dispersion`. The search starts from the bound
"D is at most the p-th largest of the sites' (p-1)-th largest distances" (each chosen site
has p-1 others at least D away) and a greedy (farthest-point) solution.
"""

from __future__ import annotations

import math

import numpy as np
from aidopt.decomposition.levels import LevelTest, Start, Verdict
from aidopt.decomposition.plugins.covering import mip_gap_options
from aidopt.decomposition.protocol import GAP_FLOOR
from aidopt.decomposition.run import release
from aidopt.models import covering as cmodel
from aidopt.models import dispersion as dmodel

from aidopt.data.coverage import aggregate_rows, coverage_sets, drop_dominated, spread
from aidopt.data.levels import DistanceRows, clique_cover

__all__ = ["PCenterTest", "PDispersionTest"]

#: columns of the distances read at a time when a solution is evaluated
COLUMN_BLOCK = 256

#: the p-center's budget for dropping dominated rows (:func:`~aidopt.data.coverage.drop_dominated`):
#: ten times the LSCP's, since the search solves an LSCP per level (on TSPLIB u1432 at p = 10,
#: 0.2 s drop a third of the rows and halve HiGHS's time, shared machine)
CENTER_DOMINANCE_BUDGET = 2e8

#: most uncovered points that join the client subset per round (those with pairwise disjoint
#: coverage sets first, then the others)
SUBSET_ADD = 64

#: branch-and-bound nodes of a level's first decision MIPs (HiGHS's ``mip_max_nodes``; other
#: solvers run uncapped): a subset MIP that reaches it hands over to the decision MIP on every
#: point, and when that reaches it too the cap grows fourfold and the subset MIP runs again.
#: Neither dominates on TSPLIB u1432: at p = 20, radius 707, the subset proves infeasibility
#: where all points take over a minute; at p = 50, radius 412, all points take 0.7 s where
#: the growing subset took over 100 s (shared machine)
NODE_CAP = 1000

#: solve statuses that prove a decision LSCP has no cover (its objective is 0: it cannot be
#: unbounded, so "infeasible or unbounded" is infeasible)
NO_COVER = ("infeasible", "infeasible_or_unbounded")

#: swaps the primal heuristic (:func:`swap_cover`) tries per open site before it gives up
SWAPS_PER_SITE = 10


class _MIPLevels(LevelTest):
    """What both tests share: the MIP gap, the fallback to HiGHS, the fixed sites."""

    def __init__(self, p: int, fixed_open, mip_gap: float):
        self.p = int(p)
        self.fixed_open = np.asarray(fixed_open, dtype=np.int64)
        self.mip_gap = float(mip_gap)
        self.floor = 1.0

    def solver_defaults(self, solver: str) -> dict:
        return mip_gap_options(solver, self.mip_gap)

    def fallbacks(self, solver: str) -> list:
        return [] if solver == "highs" else [("highs", None)]

    def gap_floor(self) -> float:
        return self.floor

    def _solve(self, run, build):
        """``(chosen model indices or None, bound, status)`` of one level's MIP."""
        model, outcome = run.solve_with_fallbacks(build, need_duals=False)
        chosen = cmodel.open_sites(model) if outcome.has_solution else None
        release(model)
        bound = outcome.bound if outcome.bound is not None else math.nan
        return chosen, float(bound), str(outcome.status)

    def residuals(self, solution) -> dict[str, float]:
        S = np.asarray(solution, dtype=np.int64)
        return {"forced sites not open": float(np.setdiff1d(self.fixed_open, S).size),
                "open sites other than p": float(abs(np.unique(S).size - self.p))}


# --------------------------------------------------------------------------- p-center
class PCenterTest(_MIPLevels):
    """The p-center's level test (module docstring).

    Parameters
    ----------
    costs : ndarray (n, s) or a cost oracle
        The points with a positive weight only (the others never bind).
    weight : ndarray (n,)
        Their positive weights (1 each without ``demand``).
    p : int
    fixed_open : ndarray of int64
        Sites open in every solution (at most p).
    mip_gap : float
        Relative gap of each LSCP.
    subset : bool
        The client-subset relaxation (module docstring); ``False``: each level's LSCP on every
        point (the method before it, kept for comparison).

    Attributes
    ----------
    clients : ndarray of int64
        The client subset S (sorted point indices), kept across levels; ``rounds`` counts the
        decision MIPs solved, ``best_sites`` are the sites of the last feasible level (the
        primal heuristic's start at the next).
    """

    name = "p-center"
    key_name = "radius"
    worse_one, worse_all = "the radius just below", "every smaller radius"

    def __init__(self, costs, weight, p, fixed_open, mip_gap: float = 1e-7, subset: bool = True):
        super().__init__(p, fixed_open, mip_gap)
        self.costs = costs
        self.weight = np.ascontiguousarray(weight, dtype=float)
        self.dist = DistanceRows(costs, self.weight)
        self.subset = bool(subset)
        self.clients = np.zeros(0, dtype=np.int64)
        self.rounds = 0
        self.best_sites = None
        self.node_cap = None

    def dimensions(self) -> dict:
        dims = {"points": self.dist.n, "sites": self.dist.s, "p": self.p}
        if self.fixed_open.size:
            dims["fixed_open"] = int(self.fixed_open.size)
        return dims

    def _nearest_open(self, S) -> np.ndarray:
        """Each point's weighted distance to its nearest site of ``S`` (inf for an empty S)."""
        return _nearest(self.dist, S)

    def greedy(self, S, farthest: list | None = None) -> np.ndarray:
        """``S`` completed to p sites: each time, the nearest free site of the point farthest
        (weighted) from the open ones (appended to ``farthest`` when given, with the point
        farthest from the final sites)."""
        S = [int(j) for j in S]
        far = self._nearest_open(S)
        while len(S) < self.p:
            i = int(np.argmax(far))
            if farthest is not None:
                farthest.append(i)
            row = self.dist.rows([i])[0]
            row[S] = np.inf
            j = int(np.argmin(row))
            S.append(j)
            np.minimum(far, self.dist.columns([j])[:, 0], out=far)
        if farthest is not None:
            farthest.append(int(np.argmax(far)))
        return np.asarray(sorted(S), dtype=np.int64)

    def start(self, run) -> Start:
        lower = float(self.dist.row_minima(run.deadline).max())
        farthest: list = []
        S = self.greedy(self.fixed_open, farthest)
        self.clients = np.unique(np.asarray(farthest, dtype=np.int64))
        self.best_sites = S
        self.floor = max(GAP_FLOOR * lower, np.finfo(float).tiny)
        return Start(lower, f"every radius below {lower:.10g}, the largest weighted distance "
                            "from a point to its nearest site, leaves that point uncovered", S)

    def levels(self, lo, lo_closed, hi, deadline):
        return self.dist.levels_between(lo, hi, lower_closed=lo_closed, upper_closed=False,
                                        deadline=deadline)

    def evaluate(self, solution) -> float:
        return float(self._nearest_open(solution).max())

    def test(self, run, key: float) -> Verdict:
        R = key
        coverage = coverage_sets(self.costs, R, scale=self.weight, deadline=run.deadline)
        keep = (~coverage.covered(self.fixed_open) if self.fixed_open.size
                else np.ones(coverage.n_points, dtype=bool))
        lonely = np.flatnonzero(keep & (coverage.sizes() == 0))
        if lonely.size:  # below the start's bound: never tested, but proven all the same
            return Verdict(False, proof=f"point {int(lonely[0])} has no site within it")
        if self.subset:
            return self._test_subset(run, R, coverage, keep)
        rows, _ = drop_dominated(aggregate_rows(coverage, None, keep, deadline=run.deadline),
                                 CENTER_DOMINANCE_BUDGET)
        if rows.n_rows == 0:
            return self._feasible(self.fixed_open, R, 0, math.nan)
        data = cmodel.CoveringModelData("lscp", rows.indptr, rows.sites, self.dist.s,
                                        fixed_open=self.fixed_open)
        chosen, bound, status = self._solve(
            run, lambda form: cmodel.create_instance(data, name="p_center_lscp"))
        self.rounds += 1
        if chosen is not None and chosen.size <= self.p:
            return self._feasible(chosen, R, rows.n_rows, bound)
        if math.isfinite(bound):
            need = math.ceil(bound - 1e-6 * max(1.0, abs(bound)))
            if need > self.p:
                return Verdict(False, proof=f"covering every point needs at least {need} sites "
                               f"(LSCP dual bound {bound:.6g}) > p = {self.p}",
                               rows=rows.n_rows, bound=bound)
        return Verdict(None, status=status if status != "optimal" else "solver_failure",
                       rows=rows.n_rows, bound=bound)

    def solver_defaults(self, solver: str) -> dict:
        options = super().solver_defaults(solver)
        if self.node_cap is not None and solver == "highs":
            options = {**options, "mip_max_nodes": int(self.node_cap)}
        return options

    def _decide(self, run, coverage, points, cap):
        """``(sites or None, status, rows)`` of the decision LSCP "can p sites cover
        ``points``?" (a boolean mask), its branch and bound capped at ``cap`` nodes (HiGHS)."""
        rows, _ = drop_dominated(aggregate_rows(coverage, None, points, deadline=run.deadline),
                                 CENTER_DOMINANCE_BUDGET)
        if rows.n_rows == 0:
            return self.fixed_open, "optimal", 0
        data = cmodel.CoveringModelData("lscp", rows.indptr, rows.sites, self.dist.s,
                                        fixed_open=self.fixed_open, most=self.p)
        self.node_cap = cap
        try:
            chosen, _, status = self._solve(
                run, lambda form: cmodel.create_instance(data, name="p_center_decision"))
        finally:
            self.node_cap = None
        self.rounds += 1
        if chosen is not None and chosen.size > self.p:
            chosen = None
        return chosen, status, rows.n_rows

    def _test_subset(self, run, R, coverage, keep) -> Verdict:
        """Level ``R`` by the client-subset relaxation (module docstring): decision LSCPs on
        the subset ``self.clients``, grown by uncovered points until the answer holds for all;
        a subset MIP stopped by the node cap hands over to the decision LSCP on every point
        under the same cap, the cap growing fourfold each time both stop."""
        rounds = 0
        by_site = _transpose(coverage, keep)
        rng = np.random.default_rng(self.rounds)
        if self.best_sites is not None:  # the last feasible sites, repaired at R: no MIP
            S, miss = swap_cover(coverage, by_site, keep, self.best_sites, self.fixed_open, rng,
                                 SWAPS_PER_SITE * self.p)
            if not miss.size:
                return self._feasible(S, R, 0, math.nan, {"subset": float(self.clients.size),
                                                         "subset_rounds": 0.0})
        cap = NODE_CAP
        while True:
            rounds += 1
            inside = np.zeros(coverage.n_points, dtype=bool)
            inside[self.clients] = True
            chosen, status, n_rows = self._decide(run, coverage, keep & inside, cap)
            info = {"subset": float(self.clients.size), "subset_rounds": float(rounds)}
            if status in NO_COVER:
                return Verdict(False, rows=n_rows, info=info, proof=(
                    f"no {self.p} sites cover even the {self.clients.size} points of a "
                    f"subset of them (the decision LSCP on their {n_rows} rows is "
                    "infeasible; a cover of every point would cover the subset)"))
            if chosen is None and status == "iteration_limit":  # the node cap: try every point
                chosen, status, n_rows = self._decide(run, coverage, keep, cap)
                info["all_points"] = 1.0
                if status in NO_COVER:
                    return Verdict(False, rows=n_rows, info=info, proof=(
                        f"no {self.p} sites cover every point (the decision LSCP on their "
                        f"{n_rows} rows is infeasible)"))
                if chosen is not None:
                    return self._feasible(chosen, R, n_rows, math.nan, info)
                if status == "iteration_limit":
                    cap *= 4
                    continue
            if chosen is None:
                return Verdict(None, rows=n_rows, info=info,
                               status=status if status != "optimal" else "solver_failure")
            S = self.greedy(chosen)
            miss = np.flatnonzero(keep & ~coverage.covered(S))  # none of them in the subset
            if miss.size:
                S, left = swap_cover(coverage, by_site, keep, S, self.fixed_open, rng,
                                     SWAPS_PER_SITE * self.p)
            if not miss.size or not left.size:
                return self._feasible(S, R, n_rows, math.nan, info)
            new = np.setdiff1d(spread(coverage, miss, SUBSET_ADD), self.clients)
            if not new.size:  # a solver's cover that misses a point of the subset
                return Verdict(None, status="solver_failure", rows=n_rows, info=info)
            self.clients = np.union1d(self.clients, new)
            if run.time_up():
                return Verdict(None, status="time_limit", rows=n_rows, info=info)

    def _feasible(self, chosen, R, n_rows, bound, info=None) -> Verdict:
        S = self.greedy(chosen)
        if self.evaluate(S) > R:  # the MIP's sites do not cover on the original data
            return Verdict(None, status="solver_failure", rows=n_rows, bound=bound,
                           info=dict(info or {}))
        self.best_sites = S
        return Verdict(True, solution=S, rows=n_rows, bound=bound, info=dict(info or {}))

    def public_solution(self, solution, key: float) -> dict:
        S = [int(j) for j in solution]
        return {"open": S, "kind": "p-center", "radius": float(key)}


# --------------------------------------------------------------------------- p-dispersion
class PDispersionTest(_MIPLevels):
    """The p-dispersion's level test (module docstring); keys are minus the distances.

    Parameters
    ----------
    distances : ndarray (s, s) or EuclideanCosts
        Site-site distances (validated: square, symmetric, zero diagonal, finite).
    p : int
        At least 2.
    fixed_open : ndarray of int64
        Sites chosen in every solution (at most p).
    mip_gap : float
        Relative gap of each packing MIP.
    """

    name = "p-dispersion"
    key_name = "smallest distance"
    worse_one, worse_all = "the next larger distance", "every larger distance"

    def __init__(self, distances, p, fixed_open, mip_gap: float = 1e-7):
        super().__init__(p, fixed_open, mip_gap)
        self.dist = DistanceRows(distances, pairs=True)

    def dimensions(self) -> dict:
        dims = {"sites": self.dist.s, "p": self.p}
        if self.fixed_open.size:
            dims["fixed_open"] = int(self.fixed_open.size)
        return dims

    def display(self, key: float) -> float:
        return -key

    def _smallest(self, S) -> float:
        """The smallest distance between two sites of ``S``."""
        S = np.asarray(S, dtype=np.int64)
        d = self.dist.rows(S)[:, S]
        return float(d[np.triu_indices(S.size, 1)].min())

    def _nearest_chosen(self, S) -> np.ndarray:
        """Each site's distance to its nearest site of ``S`` (inf for an empty S)."""
        return _nearest(self.dist, S)

    def greedy(self, S) -> np.ndarray:
        """``S`` completed to p sites, each time the site farthest from the chosen ones (from
        the two farthest apart sites when ``S`` is empty)."""
        S = [int(j) for j in S]
        if not S:
            far = self.dist.row_kth_largest(1)
            j0 = int(np.argmax(far))
            row = self.dist.rows([j0])[0]
            row[j0] = -np.inf
            S = [j0, int(np.argmax(row))]
        near = self._nearest_chosen(S)
        while len(S) < self.p:
            near[S] = -np.inf
            j = int(np.argmax(near))
            S.append(j)
            np.minimum(near, self.dist.columns([j])[:, 0], out=near)
        return np.asarray(sorted(S), dtype=np.int64)

    def start(self, run) -> Start:
        p = self.p
        kth = self.dist.row_kth_largest(p - 1, run.deadline)
        upper = float(np.sort(kth)[-p])
        proof = (f"no {p} sites are all more than {upper:.10g} apart: each chosen site needs "
                 f"{p - 1} others at least that far, and {upper:.10g} is the {p}-th largest of "
                 f"the sites' {p - 1}-th largest distances")
        if self.fixed_open.size >= 2:
            forced = self._smallest(self.fixed_open)
            if forced < upper:
                upper = forced
                proof = f"two forced sites are {forced:.10g} apart"
        S = self.greedy(self.fixed_open)
        self.floor = max(GAP_FLOOR * upper, np.finfo(float).tiny)
        return Start(-upper, proof, S)

    def levels(self, lo, lo_closed, hi, deadline):
        d, exact = self.dist.levels_between(-hi, -lo, lower_closed=False, upper_closed=lo_closed,
                                            deadline=deadline)
        return -d[::-1], exact

    def evaluate(self, solution) -> float:
        return -self._smallest(solution)

    def conflicts(self, D: float, deadline=None) -> np.ndarray:
        """The conflict graph at ``D``: sites closer than ``D`` (s x s booleans)."""
        s = self.dist.s
        A = np.zeros((s, s), dtype=bool)
        for start in range(0, s, 1024):
            rows = np.arange(start, min(s, start + 1024))
            A[rows] = self.dist.rows(rows) < D
            A[rows, rows] = False
        return A

    def test(self, run, key: float) -> Verdict:
        D = -key
        A = self.conflicts(D)
        fixed = self.fixed_open
        free = np.ones(self.dist.s, dtype=bool)
        free[fixed] = False
        if fixed.size:
            free &= ~A[fixed].any(axis=0)
        need = self.p - fixed.size
        if need == 0:
            return self._feasible(fixed, D, 0, math.nan)
        idx = np.flatnonzero(free)
        if idx.size < need:
            return Verdict(False, proof=f"only {idx.size} sites are at least that far from every "
                           f"forced site, fewer than the {need} to choose")
        cliques = clique_cover(A[np.ix_(idx, idx)])
        if not cliques:
            return self._feasible(np.concatenate([fixed, idx[:need]]), D, 0, math.nan)
        data = dmodel.DispersionModelData(idx.size, cliques, need)
        chosen, bound, status = self._solve(
            run, lambda form: dmodel.create_instance(data))
        if chosen is not None and chosen.size >= need:
            return self._feasible(np.concatenate([fixed, idx[chosen[:need]]]), D, len(cliques),
                                  bound)
        if math.isfinite(bound):
            most = math.floor(bound + 1e-6 * max(1.0, abs(bound)))
            if most < need:
                return Verdict(False, proof=f"at most {most + fixed.size} sites are pairwise at "
                               f"least that far apart (packing MIP bound {bound:.6g}"
                               + (f" + {fixed.size} forced" if fixed.size else "")
                               + f") < p = {self.p}", rows=len(cliques), bound=bound)
        return Verdict(None, status=status if status != "optimal" else "solver_failure",
                       rows=len(cliques), bound=bound)

    def _feasible(self, S, D, n_rows, bound) -> Verdict:
        S = np.sort(np.asarray(S, dtype=np.int64))
        if self._smallest(S) < D:  # the MIP's sites conflict on the original data
            return Verdict(None, status="solver_failure", rows=n_rows, bound=bound)
        return Verdict(True, solution=S, rows=n_rows, bound=bound)

    def public_solution(self, solution, key: float) -> dict:
        return {"open": [int(j) for j in solution], "kind": "p-dispersion",
                "dispersion": -float(key)}


def _transpose(coverage, keep) -> tuple[np.ndarray, np.ndarray]:
    """``(indptr, points)``: the points of ``keep`` each site covers (site j's are
    ``points[indptr[j]:indptr[j + 1]]``)."""
    owner = np.repeat(np.arange(coverage.n_points), coverage.sizes())
    take = keep[owner]
    sites, owner = coverage.sites[take], owner[take]
    order = np.argsort(sites, kind="stable")
    indptr = np.zeros(coverage.n_sites + 1, dtype=np.int64)
    np.cumsum(np.bincount(sites, minlength=coverage.n_sites), out=indptr[1:])
    return indptr, owner[order]


def swap_cover(coverage, by_site, keep, S, fixed, rng, moves: int):
    """A primal heuristic for one level: sites ``S`` improved by swaps (one open site out, one
    site covering an uncovered point in) towards covering every point of ``keep``.

    Each move picks an uncovered point at random and makes the best swap among the sites that
    cover it (in) and the open sites not in ``fixed`` (out), counted in points left uncovered;
    a swap that leaves as many uncovered is taken too (a sideways step), one that leaves more
    is not. It stops when every point is covered or after ``moves`` moves.

    Returns
    -------
    (ndarray, ndarray)
        The sites with the fewest uncovered points found (sorted) and those points.
    """
    col_ptr, col_pts = by_site
    S = np.unique(np.asarray(S, dtype=np.int64))
    count = np.zeros(coverage.n_points, dtype=np.int64)
    for j in S.tolist():
        count[col_pts[col_ptr[j]:col_ptr[j + 1]]] += 1
    miss = np.flatnonzero(keep & (count == 0))
    best, best_miss = S.copy(), miss
    is_fixed = np.zeros(coverage.n_sites, dtype=bool)
    is_fixed[np.asarray(fixed, dtype=np.int64)] = True
    last_in = -1
    for _ in range(moves):
        if not miss.size:
            break
        i = int(miss[rng.integers(miss.size)])
        outs = S[~is_fixed[S] & (S != last_in)]
        if not outs.size:
            break
        # the one open site covering each singly covered point (-1 elsewhere)
        only = np.full(coverage.n_points, -1, dtype=np.int64)
        for j in outs.tolist():
            pts = col_pts[col_ptr[j]:col_ptr[j + 1]]
            single = pts[count[pts] == 1]
            only[single] = j
        slot = np.full(coverage.n_sites, -1, dtype=np.int64)  # each out site's place in outs
        slot[outs] = np.arange(outs.size)
        alone = np.bincount(slot[only[only >= 0]], minlength=outs.size)
        choice = None
        for k in coverage.sites[coverage.indptr[i]:coverage.indptr[i + 1]].tolist():
            if k in S:
                continue
            pts = col_pts[col_ptr[k]:col_ptr[k + 1]]
            gain = int(np.count_nonzero(count[pts] == 0))
            # the points site j alone covers are lost, unless k covers them too
            kept = only[pts]
            lost = alone - np.bincount(slot[kept[kept >= 0]], minlength=outs.size)
            a = int(np.argmin(lost))
            delta = gain - int(lost[a])
            if choice is None or delta > choice[0]:
                choice = (delta, int(outs[a]), k)
        if choice is None or choice[0] < 0:
            continue
        _, j, k = choice
        count[col_pts[col_ptr[j]:col_ptr[j + 1]]] -= 1
        count[col_pts[col_ptr[k]:col_ptr[k + 1]]] += 1
        S = np.sort(np.append(S[S != j], k))
        last_in = k
        miss = np.flatnonzero(keep & (count == 0))
        if miss.size < best_miss.size:
            best, best_miss = S.copy(), miss
    return best, best_miss


def _nearest(dist, S) -> np.ndarray:
    """Each row's smallest entry of ``dist`` over the columns ``S`` (inf for an empty S), read
    :data:`COLUMN_BLOCK` columns at a time."""
    S = np.asarray(S, dtype=np.int64)
    best = np.full(dist.n, np.inf)  # the rows: points, or sites for the site distances
    for k in range(0, S.size, COLUMN_BLOCK):
        np.minimum(best, dist.columns(S[k:k + COLUMN_BLOCK]).min(axis=1), out=best)
    return best
