r"""The covering models of facility location, MCLP and LSCP (docs/facility.md), solved exactly on
their aggregated rows and certified by the MIP solver's bound.

The aggregation (:mod:`aidopt.data.coverage`) is exact, so there is nothing to disaggregate:
the run is one solve of the aggregated MIP (:mod:`aidopt.models.covering`) on the trivial
partition (``solve_direct``). Its optimum is the original optimum and its open sites an optimal
solution of the original problem; the certificate (method ``mip_bound``) checks the open sites
on the original points (uncovered weight, every point covered, p sites, the forced sites open)
and their gap to the solver's dual bound, rounded up when every objective value is an integer.

MCLP is reported as a minimisation of the uncovered weight (``objective`` and ``lower_bound``
are uncovered weight; ``solution["covered"]`` is the covered weight).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from aidopt.decomposition.protocol import GAP_FLOOR, AIDProblem, Iterate, Lifted, Split
from aidopt.models import covering as cmodel

from aidopt.data.coverage import Coverage, CoverRows
from aidopt.results import Certificate
from aidopt.solvers import ProblemClass, TimeLimitReached

__all__ = ["CoveringData", "CoveringProblem", "mip_gap_options"]


def mip_gap_options(solver: str, gap: float) -> dict:
    """The relative MIP gap ``gap`` in ``solver``'s own option name (nothing for others)."""
    return {"gurobi": {"MIPGap": gap}, "highs": {"mip_rel_gap": gap}, "scip": {"limits/gap": gap},
            "cplex": {"mip_tolerances_mipgap": gap}, "xpress": {"miprelstop": gap}}.get(solver, {})


@dataclass
class CoveringData:
    """A validated covering problem with its coverage sets and aggregated rows.

    Attributes
    ----------
    kind : {"mclp", "lscp"}
    coverage : Coverage or None
        Every point's coverage set (``None`` when the time limit stopped its computation).
    rows : CoverRows or None
        The aggregated rows of the model.
    weight : ndarray (n_points,)
        MCLP: the points' weights (1 each for LSCP).
    p : int or None
        MCLP: sites to open.
    fixed : ndarray (n_sites,) or None
        LSCP: opening costs (``None``: 1 each).
    fixed_open : ndarray of int64
        Sites forced open (sorted, distinct).
    n_points, n_sites : int
    dropped : int
        LSCP: rows left out as dominated.
    stopped : str
        Why the coverage computation stopped (empty: it finished).
    """

    kind: str
    coverage: Coverage | None
    rows: CoverRows | None
    weight: np.ndarray
    p: int | None
    fixed: np.ndarray | None
    fixed_open: np.ndarray
    n_points: int
    n_sites: int
    dropped: int = 0
    stopped: str = ""

    @property
    def integral(self) -> bool:
        """Every objective value is an integer (integer weights / opening costs)."""
        values = self.weight if self.kind == "mclp" else self.fixed
        return values is None or bool(np.array_equal(values, np.round(values)))

    def site_cost(self) -> np.ndarray:
        return np.ones(self.n_sites) if self.fixed is None else self.fixed


class CoveringProblem(AIDProblem):
    """MCLP or LSCP on exactly aggregated rows, one MIP solve (run with ``aid=False``).

    Parameters
    ----------
    kind : {"mclp", "lscp"}
    mip_gap : float
        Relative gap the MIP is solved to (keep it well below the run's ``tol``).
    """

    problem_class = ProblemClass.MILP
    needs_duals = False
    element = "sites"

    def __init__(self, kind: str, mip_gap: float = 1e-7):
        if kind not in ("mclp", "lscp"):
            raise ValueError(f"kind must be 'mclp' or 'lscp', got {kind!r}")
        if not (isinstance(mip_gap, float | int) and not isinstance(mip_gap, bool) and 0 <= mip_gap < 1):
            raise ValueError(f"mip_gap must be in [0, 1), got {mip_gap!r}")
        self.kind = kind
        self.name = kind
        self.mip_gap = float(mip_gap)

    # ------------------------------------------------------------------ setup
    def solver_defaults(self, solver: str) -> dict:
        return mip_gap_options(solver, self.mip_gap)

    def fallbacks(self, solver: str) -> list[tuple[str, str | None]]:
        return [] if solver == "highs" else [("highs", None)]

    def size(self, data: CoveringData) -> int:
        return data.n_sites

    def dimensions(self, data: CoveringData) -> dict[str, int]:
        dims = {"points": data.n_points, "sites": data.n_sites}
        if data.rows is not None:
            dims["rows"] = data.rows.n_rows
        if data.p is not None:
            dims["p"] = data.p
        if data.fixed_open.size:
            dims["fixed_open"] = int(data.fixed_open.size)
        return dims

    def gap_floor(self, data: CoveringData) -> float:
        """:data:`~.protocol.GAP_FLOOR` times the objective of a trivial solution (MCLP: nothing
        covered; LSCP: every site open)."""
        trivial = float(data.weight.sum()) if self.kind == "mclp" else float(data.site_cost().sum())
        return max(GAP_FLOOR * trivial, np.finfo(float).tiny)

    def initial_bound(self, data: CoveringData) -> float:
        """MCLP: the weight of the points no site covers; LSCP: the forced sites' cost."""
        if data.coverage is None:
            return 0.0
        if self.kind == "mclp":
            return float(data.weight[data.coverage.sizes() == 0].sum())
        return float(data.site_cost()[data.fixed_open].sum())

    def default_r0(self, size: int, data) -> float:
        return 1.0

    def initial_partition(self, data, n_clusters, rng, solve):
        return self.trivial_partition(data)

    # ------------------------------------------------------------------ the solve
    def aggregate(self, data: CoveringData, partition, previous):
        """The data itself: its rows are already exactly aggregated."""
        if data.stopped:
            raise TimeLimitReached(data.stopped)
        return data

    def build(self, data: CoveringData, form=None):
        rows = data.rows
        return cmodel.create_instance(cmodel.CoveringModelData(
            self.kind, rows.indptr, rows.sites, data.n_sites, weight=rows.weight, p=data.p,
            fixed=data.fixed, fixed_open=data.fixed_open))

    def on_nonoptimal(self, outcome) -> bool:
        """A MIP stopped with an incumbent: its open sites are a feasible answer."""
        return outcome.stopped and outcome.has_solution

    def lift(self, model, outcome, partition, data: CoveringData, original) -> Lifted:
        open_ = cmodel.open_sites(model)
        info = {"rows": float(data.rows.n_rows), "mip_gap": _relative(outcome, self.gap_floor(data))}
        return Lifted({"open": open_}, None, info)

    def lower_bound(self, outcome, partition, data: CoveringData, lifted=None) -> float | None:
        """The MIP's dual bound (never its incumbent) plus what the model leaves out (MCLP: the
        uncoverable points' weight), rounded up when every objective value is an integer."""
        b = outcome.bound
        if b is None or not math.isfinite(b):
            return None
        if self.kind == "mclp":
            b += self.initial_bound(data)
        if data.integral:
            b = float(math.ceil(b - 1e-6 * max(1.0, abs(b))))
        return float(b)

    def evaluate(self, data: CoveringData, lifted: Lifted) -> float:
        """MCLP: the weight of the original points no open site covers; LSCP: the open sites'
        cost."""
        open_ = lifted.solution["open"]
        if self.kind == "mclp":
            return float(data.weight[~data.coverage.covered(open_)].sum())
        return float(data.site_cost()[open_].sum())

    def split(self, partition, data, lifted) -> Split:
        return Split(None)  # the aggregation is exact: nothing to split

    # ------------------------------------------------------------------ the end
    def certify(self, data: CoveringData, best: Iterate, *, bound: Iterate, solve, tol,
                feasibility_tol=1e-6, history=()) -> Certificate:
        E = best.E_t
        open_ = np.asarray(best.lifted.solution["open"], dtype=np.int64)
        residuals = {"forced sites not open": float(np.setdiff1d(data.fixed_open, open_).size)}
        if self.kind == "mclp":
            residuals["open sites other than p"] = float(abs(open_.size - data.p))
        else:
            residuals["points not covered"] = float((~data.coverage.covered(open_)).sum())
        checked = list(residuals)
        lower = (-math.inf if bound is None or bound.bound is None
                 else min(max(bound.bound, self.initial_bound(data)), E))
        rel = (E - lower) / max(self.gap_floor(data), abs(E)) if math.isfinite(lower) else math.inf
        feasible = all(v == 0 for v in residuals.values())
        return Certificate(
            method="mip_bound", certified=bool(feasible and rel <= tol), primal_objective=E,
            dual_objective=lower, relative_gap=float(rel), residuals=residuals, tol=tol,
            feasibility_tol=feasibility_tol, sign_condition=True, checked=checked,
            condition_name="exact aggregation",
            condition="the aggregated MIP has the original's optimum (docs/facility.md)",
            note="bound = the MIP solver's dual bound on the exactly aggregated "
                 + ("MCLP (uncovered weight)" if self.kind == "mclp" else "LSCP")
                 + ("; rounded up: every objective value is an integer" if data.integral else ""),
        )

    def public_solution(self, best: Iterate, certificate) -> dict:
        open_ = [int(j) for j in best.lifted.solution["open"]]
        sol = {"open": open_, "kind": self.kind}
        if self.kind == "mclp":
            sol["uncovered"] = float(best.E_t)
        else:
            sol["n_open"] = len(open_)
            sol["cost"] = float(best.E_t)
        return sol


def _relative(outcome, floor: float) -> float:
    if outcome.objective is None or outcome.bound is None or not math.isfinite(outcome.bound):
        return math.nan
    return max(0.0, outcome.objective - outcome.bound) / max(floor, abs(outcome.objective))
