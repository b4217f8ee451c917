r"""Write your own AID problem: rectilinear single-facility location (a complete plug-in).

Place one facility :math:`x \in \mathbb{R}^d` so that the weighted rectilinear (L1) distance to
``n`` customers at :math:`p_i \in \mathbb{R}^d` with demands :math:`s_i > 0` is smallest:

.. math::

    \min_x \; E(x) = \sum_{i=1}^n s_i \, \|p_i - x\|_1 = \sum_i \sum_j s_i |p_{ij} - x_j| .

It is an LP, and it fits Aggregate and Iterative Disaggregate (Park & Klabjan 2016, Algorithm 1)
exactly as LAD regression does: replace each cluster of customers by one customer at its
demand-weighted centroid :math:`\bar p_k` with demand :math:`W_k = \sum_{i \in C_k} s_i`. By the
triangle inequality :math:`\sum_{i \in C_k} s_i |p_{ij} - x_j| \ge W_k |\bar p_{kj} - x_j|`, so the
aggregated optimum is a lower bound on the original one; when no cluster has customers on both
sides of the facility (in any coordinate) the two objectives are equal and the facility is optimal.

This file is the walk-through of ``docs/plugins.md``. Run it with::

    python examples/l1_location.py

It defines

* :data:`ABSTRACT` / :func:`create_instance`: the Pyomo model, as the project's own models are
  written (an ``AbstractModel`` and a helper that makes a concrete instance from numpy data);
* :class:`Customers`: the data the plug-in partitions;
* :class:`L1LocationProblem`: the plug-in, one method per hook of
  :class:`aidopt.decomposition.AIDProblem`;
* :func:`certificate`: the optimality check on the original data (weak LP duality);
* :func:`main`: solve a random instance by AID and directly, and print both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo
from aidopt.decomposition import AIDProblem, Lifted, Partition, Split, one_step_kmeans

import aidopt
from aidopt import Certificate
from aidopt.solvers import ProblemClass, SolverCapabilityError

__all__ = ["ABSTRACT", "Aggregated", "Customers", "L1LocationProblem", "LocationState",
           "certificate", "create_instance", "main", "random_customers"]

SIGN_TOL = 1e-9


# --------------------------------------------------------------------------- 1. the Pyomo model
def _abstract_model() -> pyo.AbstractModel:
    r"""The weighted L1 location LP on rows K (customers, or cluster centroids) and coordinates D::

        min   sum_k w[k] * sum_d (e_plus[k,d] + e_minus[k,d])
        s.t.  fit[k,d]:  x[d] + e_plus[k,d] - e_minus[k,d] = p[k,d]
              e_plus, e_minus >= 0,  x free

    In Pyomo's dual sign convention (d objective / d rhs) the dual ``v[k,d]`` of ``fit[k,d]``
    satisfies ``sum_k v[k,d] = 0`` (stationarity in the free ``x[d]``) and ``|v[k,d]| <= w[k]``;
    ``sum_{k,d} p[k,d] v[k,d]`` is the dual objective.
    """
    model = pyo.AbstractModel(name="l1_location")
    model.K = pyo.Set(ordered=True, doc="customers (or clusters of customers)")
    model.D = pyo.Set(ordered=True, doc="coordinates")
    model.p = pyo.Param(model.K, model.D, doc="customer location (or cluster centroid)")
    model.w = pyo.Param(model.K, within=pyo.PositiveReals, doc="demand (cluster demand W_k)")
    model.x = pyo.Var(model.D, doc="facility location")
    model.e_plus = pyo.Var(model.K, model.D, within=pyo.NonNegativeReals)
    model.e_minus = pyo.Var(model.K, model.D, within=pyo.NonNegativeReals)
    model.fit = pyo.Constraint(
        model.K, model.D,
        rule=lambda m, k, d: m.x[d] + m.e_plus[k, d] - m.e_minus[k, d] == m.p[k, d],
        doc="x_d + e+_kd - e-_kd = p_kd",
    )
    model.distance = pyo.Objective(
        rule=lambda m: sum(m.w[k] * (m.e_plus[k, d] + m.e_minus[k, d]) for k in m.K for d in m.D),
        sense=pyo.minimize,
    )
    return model


ABSTRACT = _abstract_model()


def create_instance(points, weights=None) -> pyo.ConcreteModel:
    """A concrete instance of :data:`ABSTRACT` from numpy data.

    Parameters
    ----------
    points : ndarray of shape (K, d)
        Customer locations (or cluster centroids).
    weights : ndarray of shape (K,), optional
        Positive demands (default 1).
    """
    points = np.asarray(points, dtype=float)
    n_rows, dim = points.shape
    weights = np.ones(n_rows) if weights is None else np.asarray(weights, dtype=float)
    data = {
        "K": {None: list(range(n_rows))},
        "D": {None: list(range(dim))},
        "p": {(k, d): float(points[k, d]) for k in range(n_rows) for d in range(dim)},
        "w": dict(enumerate(weights.tolist())),
    }
    return ABSTRACT.create_instance(data={None: data})


def solution_from(model, duals) -> tuple[np.ndarray, np.ndarray]:
    """``(x, v)`` of a solved instance: the location (d,) and the duals of ``fit`` (K, d)."""
    x = np.array([model.x[d].value for d in model.D], dtype=float)
    v = np.array([[duals[model.fit[k, d]] for d in model.D] for k in model.K], dtype=float)
    return x, v


# --------------------------------------------------------------------------- 2. the data
@dataclass
class Customers:
    """Customer locations ``points`` (n, d) and positive demands ``demand`` (n,)."""

    points: np.ndarray
    demand: np.ndarray

    @property
    def n(self) -> int:
        return self.points.shape[0]

    @property
    def d(self) -> int:
        return self.points.shape[1]


def random_customers(n: int = 2000, d: int = 2, seed: int = 0) -> Customers:
    """Seeded customers: three towns (Gaussian clouds) with integer demands 1..9."""
    rng = np.random.default_rng(seed)
    towns = rng.uniform(-10.0, 10.0, size=(3, d))
    points = towns[rng.integers(0, 3, size=n)] + rng.normal(scale=2.0, size=(n, d))
    return Customers(points, rng.integers(1, 10, size=n).astype(float))


# --------------------------------------------------------------------------- 3. the plug-in
@dataclass
class Aggregated:
    """What ``aggregate`` returns: centroids (K, d) and cluster demands W (K,)."""

    points: np.ndarray
    demand: np.ndarray


@dataclass
class LocationState:
    """What one lifted solution carries to ``evaluate``, ``split`` and ``certify``: the
    aggregated duals ``v`` (K, d), the residuals ``p_i - x`` on the original data (n, d) and
    the tolerance of the sign test."""

    v: np.ndarray
    residual: np.ndarray
    eps: float


class L1LocationProblem(AIDProblem):
    """Rectilinear single-facility location under AID.

    The object holds configuration only (here: the share of customers in the first partition);
    everything one step hands to another is returned (``Lifted.state``), so one object can solve
    several data sets in turn.
    """

    name = "l1_location"
    problem_class = ProblemClass.LP
    needs_duals = True
    element = "customers"

    def __init__(self, r0: float = 0.02):
        if not 0 < r0 <= 1:
            raise ValueError(f"r0 must be in (0, 1], got {r0!r}")
        self.r0 = float(r0)

    # ------------------------------------------------------------------ setup
    def configure(self, solver_spec) -> None:
        """The certificate lifts the solver's duals: refuse a solver that returns none."""
        if solver_spec is not None and not solver_spec.duals:
            raise SolverCapabilityError(
                f"l1_location needs constraint duals, which {solver_spec.name!r} does not return; "
                "use solver='highs' or 'clarabel'")

    def size(self, data: Customers) -> int:
        return data.n

    def dimensions(self, data: Customers) -> dict[str, int]:
        return {"n": data.n, "d": data.d}

    def default_r0(self, size: int, data: Customers) -> float:
        return self.r0

    def min_clusters(self, data: Customers) -> int:
        return 2

    def initial_partition(self, data: Customers, n_clusters, rng, solve) -> Partition:
        """One k-means iteration on the customer locations."""
        if n_clusters >= data.n:
            return self.trivial_partition(data)
        return Partition.from_labels(one_step_kmeans(data.points, n_clusters, rng))

    # ------------------------------------------------------------------ one iteration
    def aggregate(self, data: Customers, partition: Partition, previous=None) -> Aggregated:
        W, (centroids,) = partition.weighted_means(data.demand, data.points)
        return Aggregated(centroids, W)

    def build(self, aggregated: Aggregated, form: str | None = None):
        return create_instance(aggregated.points, aggregated.demand)

    def fallbacks(self, solver: str) -> list[tuple[str, str | None]]:
        """If the solve fails, try the other of HiGHS (simplex / IPM) and Clarabel (IPM)."""
        return [("clarabel", None)] if solver != "clarabel" else [("highs", None)]

    def lift(self, model, outcome, partition, aggregated, data: Customers) -> Lifted:
        x, v = solution_from(model, outcome.duals)
        residual = data.points - x
        eps = SIGN_TOL * max(1.0, float(np.abs(data.points).max()), float(np.abs(x).max()))
        return Lifted({"x": x}, LocationState(v, residual, eps))

    def lower_bound(self, outcome, partition, data, lifted=None) -> float | None:
        """The aggregated LP optimum: the aggregated problem is a relaxation (module docstring)."""
        return outcome.bound

    def evaluate(self, data: Customers, lifted: Lifted) -> float:
        return float(data.demand @ np.abs(lifted.state.residual).sum(axis=1))

    def split(self, partition: Partition, data: Customers, lifted: Lifted) -> Split:
        """Split every cluster that has customers on both sides of ``x`` in some coordinate by
        the customers' sign pattern (up to 2^d children)."""
        r, eps = lifted.state.residual, lifted.state.eps
        mixed = np.zeros(partition.n_clusters, dtype=bool)
        for j in range(data.d):
            mixed |= partition.mixed(r[:, j], eps)
        if not mixed.any():
            return Split(None, 0)  # E = F: the facility is optimal
        pattern = ((r > eps) * (1 << np.arange(data.d))).sum(axis=1)
        return Split(partition.refine(np.where(mixed[partition.labels], pattern, 0)), int(mixed.sum()))

    # ------------------------------------------------------------------ the end
    def certify(self, data: Customers, best, *, bound, solve, tol, feasibility_tol,
                history) -> Certificate:
        """Lift the duals of the iterate with the best bound to the customers and check them."""
        v, agg = bound.lifted.state.v, bound.aggregated
        u = data.demand[:, None] * (v / agg.demand[:, None])[bound.partition.labels]
        return certificate(data, best.lifted.solution["x"], u, tol=tol,
                           feasibility_tol=feasibility_tol,
                           sign_condition=None if best.split is None else best.split.holds)


def certificate(data: Customers, x, u, *, tol: float, feasibility_tol: float = 1e-6,
                sign_condition=None) -> Certificate:
    r"""Check that ``x`` is optimal with the dual vector ``u`` (n, d) on the original data.

    Weak duality: for every :math:`u` with :math:`\sum_i u_{ij} = 0` and :math:`|u_{ij}| \le s_i`,
    and every :math:`x'`, :math:`E(x') \ge \sum_{ij} u_{ij}(p_{ij} - x'_j) = \sum_{ij} u_{ij}
    p_{ij}`. So when both conditions hold (to ``feasibility_tol``, scaled), the dual objective is
    a lower bound and the relative gap :math:`(E(x) - D) / \max(1, |E(x)|)` must be within ``tol``.
    """
    x, u = np.asarray(x, dtype=float), np.asarray(u, dtype=float)
    primal = float(data.demand @ np.abs(data.points - x).sum(axis=1))
    dual = float((data.points * u).sum())
    stationarity = float(np.abs(u.sum(axis=0)).max() / max(1.0, float(data.demand.sum())))
    box = float(np.maximum(np.abs(u) - data.demand[:, None], 0.0).max() / data.demand.max())
    gap = (primal - dual) / max(1.0, abs(primal))
    residuals = {"stationarity |sum_i u_i|": stationarity, "dual bound |u_i|<=s_i": box}
    return Certificate(
        method="solver_duals",
        certified=bool(stationarity <= feasibility_tol and box <= feasibility_tol and gap <= tol),
        primal_objective=primal, dual_objective=dual, relative_gap=float(gap),
        residuals=residuals, tol=tol, feasibility_tol=feasibility_tol,
        sign_condition=sign_condition, checked=list(residuals), dual_values={"u": u},
        condition="no cluster has customers on both sides of x: F = E",
    )


# --------------------------------------------------------------------------- 4. running it
def main(n: int = 2000, d: int = 2, seed: int = 0, log: bool = True):
    """Solve a random instance by AID and directly; return both results."""
    data = random_customers(n, d, seed)
    problem = L1LocationProblem()
    options = {"solver": "highs", "tol": 1e-6, "seed": seed, "log": log}
    aid = aidopt.solve(problem, data, **options)
    direct = aidopt.solve_direct(problem, data, **options)
    if log:
        print(f"\nAID    x = {aid.solution['x']}, E = {aid.objective:.6f} ({aid.termination})")
        print(f"direct x = {direct.solution['x']}, E = {direct.objective:.6f} "
              f"({direct.termination})")
    return aid, direct


if __name__ == "__main__":
    main()
