"""The AID plug-in protocol: what a problem must provide so that the one driver can solve it.

The driver (:mod:`aidopt.decomposition.aid`) owns configuration, the initial partition call, the
loop, the stopping tests, timing, the iteration log, LP/MPS writing and the result. A problem
plug-in owns only the mathematics, in the steps below (cvxpy's ``Reduction.apply``/``invert`` is
the model for ``aggregate``/``lift``). A new problem needs one formulation module in ``models/``,
one plug-in class implementing this protocol, and nothing in the driver.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from aidopt.results import Certificate
from aidopt.solvers import ProblemClass, SolveOutcome

from .partition import Partition

#: ``solve(model, need_duals=False) -> SolveOutcome``: the driver's configured solver call
#: (solver name, options, remaining time), handed to plug-in steps that must solve a side model.
SolveFn = Callable[..., SolveOutcome]


@runtime_checkable
class AIDProblem(Protocol):
    """One optimization problem under AID."""

    name: str
    problem_class: ProblemClass
    needs_duals: bool
    """Whether the aggregated solves must return duals (set by :meth:`configure`)."""

    def configure(self, solver_spec) -> None:
        """Adapt to the chosen solver before anything is built (e.g. pick an LP form that does
        not need duals when the solver has none). ``solver_spec`` may be ``None`` (unknown
        solver passed through to Pyomo)."""

    def default_r0(self, n: int, m: int) -> float:
        """The paper's default initial aggregation rate r0 = |K_0| / n."""

    def min_clusters(self, data) -> int:
        """Fewest clusters the initial partition may have (e.g. m for LAD)."""

    def initial_partition(self, data, n_clusters: int, rng, solve: SolveFn) -> Partition:
        """The initial partition with about ``n_clusters`` clusters."""

    def aggregate(self, data, partition: Partition) -> Any:
        """Aggregated data (centroids, weights = cluster sizes, label information)."""

    def build(self, aggregated) -> Any:
        """A concrete Pyomo model of the aggregated problem (no solving)."""

    def lift(self, model, outcome: SolveOutcome, partition: Partition, aggregated, data) -> dict:
        """The full-data solution from a solved aggregated model (public arrays plus any
        private ``_``-prefixed arrays the later steps need)."""

    def evaluate(self, data, solution: dict) -> float:
        """The objective E of ``solution`` on the original data (vectorised, O(nm))."""

    def split(self, partition: Partition, data, solution: dict) -> tuple[Partition | None, int]:
        """``(new_partition, n_split)``, or ``(None, 0)`` when the paper's optimality condition
        holds and nothing needs splitting."""

    def certify(
        self,
        data,
        solution: dict,
        *,
        dual_solution: dict,
        partition: Partition,
        aggregated,
        solve: SolveFn,
        tol: float,
        feasibility_tol: float,
    ) -> Certificate:
        """Check optimality of ``solution`` (the best E) on the original data (duals / KKT).

        ``dual_solution`` is the lifted solution of the iteration with the best lower bound, and
        ``partition`` / ``aggregated`` are that iteration's: its duals give the certificate's bound.
        """

    def public_solution(self, solution: dict) -> dict:
        """The arrays returned to users in ``AIDResult.solution``."""
