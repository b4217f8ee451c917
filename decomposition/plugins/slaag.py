r"""SLAAG (Dutt & Kumar, section 4): successive linear approximation for aggregate outputs.

The concave problem behind it is
:math:`\min_{w, b} R(w) + E \sum_j \min(\xi_j, z_j)` over the feasible set of
:mod:`aidopt.models.slaag` (every row is pushed to one side of the margin, whichever is cheaper).

1. **Start** (problem (3)): :math:`\min R(w) + C \sum_j a^j \xi_j + D \sum_j b^j z_j`, with
   :math:`a^j` (:math:`b^j`) the share of class-1 (class-0) rows in row j's collection.
2. **Step**: at :math:`(\xi^i, z^i)`, solve
   :math:`\min R(w) + E\,\delta(\min(\xi^i, z^i))'(\xi - \xi^i, z - z^i)` with the supergradient
   (2): (1, 0) if :math:`\xi^i_j < z^i_j`, (1/2, 1/2) if equal, (0, 1) if greater.
3. **Stop** when the accuracy with respect to the aggregate information does not increase
   (:meth:`aidopt.data.validate.AggregateData.count_accuracy`), returning the last point that increased it;
   also when the linearization cannot decrease the concave objective any more (a stationary
   point, (1.23) of the SLA loop, checked first: then the current point is kept even if the new
   one counts better), and at ``max_iter`` or the time limit (then the point of smallest concave
   objective is returned).

With ``offset="counts"`` (the default; not in the seed) every point's b is then re-chosen, w
fixed, to minimise the aggregate count error (:func:`count_offset`); ``offset="solver"`` keeps
the solved program's b, the seed's literal algorithm.

A point is a hyperplane (w, b); its slacks are the smallest feasible ones,
:math:`\xi_j = (1 - f_j)_+`, :math:`z_j = (1 + f_j)_+` (:math:`f_j = w x_j - b`): a slack whose cost
is 0 in a step is otherwise arbitrary in the solver's answer, and :math:`\min(\xi_j, z_j)` is
smallest at the smallest slacks. Every step changes only the hinge costs of one instance, kept in
a persistent solver handle: warm with HiGHS (the l1 LP), cold with Clarabel (the l2 QP's default,
which is faster than HiGHS's QP solver even warm). The seed writes :math:`\tfrac12\|w\|^2` in a "linear program":
``norm="l2"`` is that literal QP, ``norm="l1"`` the linear program with :math:`\|w\|_1`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from aidopt.decomposition.plugins.aggout import regularizer
from aidopt.decomposition.sla import SLAStep, StepResult
from aidopt.models import slaag

from aidopt.solvers import ProblemClass, SolverError, TimeLimitReached

__all__ = ["OFFSETS", "SLAAGStep", "SLAAGPoint", "class_costs", "count_offset"]

RETRY = ("unbounded", "infeasible_or_unbounded", "error")
"""Statuses of a step after which the QP is solved once more, cold, by Clarabel."""


#: how SLAAG's points get their offset b (:class:`SLAAGStep`)
OFFSETS = ("counts", "solver")


def count_offset(data, u: np.ndarray, b0: float) -> float:
    r"""The offset b that minimises the aggregate count error
    :math:`\sum_c |\hat y_c - y_c|` of the classifier :math:`u_i - b \ge 0` (``u = X w``, w
    fixed), the one nearest ``b0`` among the minimisers (``b0`` itself when it is one).

    Lowering b past a value of u makes its rows class 1, and the k-th row of a collection to
    turn (k = 0, 1, ...) changes that collection's error by +1 once k reaches its count, else by
    -1; so one sort by u, each row's rank within its collection and a cumulative sum give every
    threshold's error (O(n log n), no loop over rows). The error is constant on each
    interval :math:`(u_{(k+1)}, u_{(k)}]` between consecutive distinct values (and on
    :math:`(\max u, \infty)`, where no row is class 1).
    """
    u = np.asarray(u, dtype=float)
    order = np.argsort(-u, kind="stable")
    values, starts = np.unique(-u[order], return_index=True)
    values = -values  # distinct u, decreasing
    ends = np.r_[starts[1:], u.size]
    # the k-th row of a collection to turn class 1 (k = 0, 1, ...) adds 1 to the error once k
    # reaches the collection's count, else removes 1
    coll = data.collection[order]
    by_collection = np.argsort(coll, kind="stable")
    first = np.searchsorted(coll[by_collection], coll[by_collection])
    k = np.empty(u.size, dtype=np.int64)
    k[by_collection] = np.arange(u.size) - first
    step = np.where(k >= data.counts[coll], 1.0, -1.0)
    errors = float(np.sum(data.counts)) + np.r_[0.0, np.cumsum(step)[ends - 1]]  # [0]: none
    upper = np.r_[np.inf, values]  # interval k is (lower[k], upper[k]]
    lower = np.r_[values, -np.inf]
    best_b, best_distance = None, np.inf
    for k in np.flatnonzero(errors == errors.min()).tolist():
        lo, hi = lower[k], upper[k]
        if lo < b0 <= hi:
            return float(b0)
        if b0 > hi:
            b = hi
        else:  # b0 <= lo: the interval's inner point nearest b0
            b = 0.5 * (lo + hi) if np.isfinite(hi) else lo + 1.0
        if abs(b - b0) < best_distance:
            best_b, best_distance = float(b), abs(b - b0)
    return best_b


def class_costs(data) -> tuple[float, float]:
    """The seed's section 5 choice for problem (3): C = share of class-0 rows, D = share of
    class-1 rows (from the counts); both 1 when one class has no rows (the seed's choice would
    then weight the only class by 0)."""
    share = float(data.counts.sum()) / data.n
    if share in (0.0, 1.0):
        return 1.0, 1.0
    return 1.0 - share, share


@dataclass
class SLAAGPoint:
    """A hyperplane, its decision values on the training rows and its smallest slacks."""

    w: np.ndarray
    b: float
    f: np.ndarray
    xi: np.ndarray
    z: np.ndarray
    count_accuracy: float


class SLAAGStep(SLAStep):
    """The SLA step of SLAAG on :class:`~aidopt.data.validate.AggregateData` ``data``.

    Parameters
    ----------
    C, D : float
        Costs of problem (3)'s class-1 and class-0 hinges (weighted by the class shares).
    E : float
        Cost of the linearized step 2.
    norm : {"l2", "l1"}
        The seed's literal QP, or the 1-norm linear program.
    offset : {"counts", "solver"}
        ``"counts"``: every point's offset b is re-chosen, with its w, to minimise the aggregate
        count error (:func:`count_offset`); ``"solver"``: the solved program's b (the seed's
        literal algorithm).
    """

    name = "slaag"
    support_label = "class 1"

    def __init__(self, data, *, C: float, D: float, E: float, norm: str = "l2",
                 offset: str = "counts"):
        if offset not in OFFSETS:
            raise ValueError(f"offset must be one of {OFFSETS}, got {offset!r}")
        self.data, self.C, self.D, self.E, self.norm = data, float(C), float(D), float(E), norm
        self.offset = offset
        self.problem_class = ProblemClass.QP if norm == "l2" else ProblemClass.LP
        self.handle = self.model = None
        self.steps = self.retries = 0

    def point(self, w, b) -> SLAAGPoint:
        u = self.data.X @ w
        if self.offset == "counts":
            b = count_offset(self.data, u, b)
        f = u - b
        return SLAAGPoint(w, float(b), f, np.maximum(1.0 - f, 0.0), np.maximum(1.0 + f, 0.0),
                          self.data.count_accuracy(f >= 0.0))

    @staticmethod
    def supergradient(point: SLAAGPoint) -> tuple[np.ndarray, np.ndarray]:
        """(2): the supergradient of min(xi, z) at the point, per row."""
        g_xi = np.where(point.xi < point.z, 1.0, np.where(point.xi == point.z, 0.5, 0.0))
        return g_xi, 1.0 - g_xi

    # ------------------------------------------------------------------ the SLA step
    def start(self, run) -> SLAAGPoint:
        share = self.data.share()
        return self._solve(run, self.C * share, self.D * (1.0 - share), "problem (3)")

    def solve(self, run, point: SLAAGPoint) -> StepResult:
        g_xi, g_z = self.supergradient(point)
        new = self._solve(run, self.E * g_xi, self.E * g_z, f"step {self.steps}")
        how = "warm" if self.handle.warm else "cold"
        if self.retries:
            how += f" ({self.retries} cold retries)"
        return StepResult(new, self.linearization_at(new, point),
                          {"count_accuracy": new.count_accuracy, "retries": self.retries},
                          f"{how}, count acc {new.count_accuracy:.4f}")

    def objective(self, point: SLAAGPoint) -> float:
        return regularizer(point.w, self.norm) + self.E * float(np.minimum(point.xi, point.z).sum())

    def linearization_at(self, point: SLAAGPoint, at: SLAAGPoint) -> float:
        g_xi, g_z = self.supergradient(at)
        return regularizer(point.w, self.norm) + self.E * float(g_xi @ point.xi + g_z @ point.z)

    def stop(self, current: SLAAGPoint, new: SLAAGPoint) -> str | None:
        """Step (3): stop when the accuracy on the aggregate information does not increase."""
        if new.count_accuracy <= current.count_accuracy:
            return (f"the accuracy on the aggregate information did not increase "
                    f"({current.count_accuracy:.4f} -> {new.count_accuracy:.4f})")
        return None

    def support(self, point: SLAAGPoint) -> int:
        return int((point.f >= 0).sum())

    def solution(self, point: SLAAGPoint) -> dict:
        return {"w": point.w, "b": point.b, "decision": point.f,
                "labels": (point.f >= 0).astype(float), "count_accuracy": point.count_accuracy}

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None

    def _solve(self, run, p, q, what: str) -> SLAAGPoint:
        if self.handle is None:
            with run.timed("build"):
                self.model = slaag.create_instance(self.data.X, p, q, norm=self.norm)
                self.handle = run.persistent(self.model)
        else:
            slaag.set_costs(self.model, p, q)
            self.handle.update_objective()
        self.steps += 1
        outcome = self.handle.solve()
        if (outcome.status in RETRY and self.problem_class is ProblemClass.QP
                and outcome.solver != "clarabel"):
            # every step is feasible and its objective is >= 0: HiGHS's active-set QP solver
            # has been seen to report such a QP unbounded (docs/aggout.md); solve it cold with
            # the interior-point QP solver instead
            self.retries += 1
            outcome = run.solve(self.model, solver="clarabel")
        if not outcome.optimal:
            if outcome.status == "time_limit":
                raise TimeLimitReached(f"time limit reached in SLAAG's {what}")
            raise SolverError(f"SLAAG's {what}: {outcome.solver} returned {outcome.status} "
                              f"({outcome.message})")
        return self.point(*slaag.solution_from(self.model))
