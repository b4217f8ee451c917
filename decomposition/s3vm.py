r"""AID plug-in for the semi-supervised SVM (Park & Klabjan 2016, section 3.3).

The original problem is the big-M MIQP / MILP of :mod:`aidopt.models.s3vm` on all rows. Under AID
the labelled rows are grouped into label-pure clusters and the unlabelled rows into clusters that
share one binary :math:`\bar d_k`; the aggregated problem is the same model on the centroids,
weighted by the cluster sizes (eq. 15).

* **Initial partition**: one k-means on the unlabelled rows with ``ceil(r0 * size)`` clusters
  (at least ten); the labelled rows stay single unless there are more than
  ``aggregate_labelled_above`` (1000) of them, then one k-means per class likewise.
* **Lift** (Lemma 1): :math:`d_i = 1` iff :math:`w x_i + b \ge 0`, so every unlabelled row pays
  :math:`\max(0, 1 - |w x_i + b|)`; :math:`\xi_i` is the labelled hinge. ``E_t`` is the objective
  of this solution on the full data.
* **Split** (Step 3): a labelled cluster whose rows have both signs of :math:`1 - y_i(w x_i + b)` is
  split into two; an unlabelled cluster is split into up to four by the sign of
  :math:`w x_i + b` and the sign of :math:`1 - \tilde d_k (w x_i + b)`, with
  :math:`\tilde d_k = 2 \bar d_k - 1`.
* **Stop** (Prop. 5): no cluster needs splitting. Then every hinge is linear on every cluster, so
  ``E_t = F_t``, and with every aggregated MIP solved to optimality the solution is optimal among
  all labellings that are constant on the final clusters. This is the paper's optimality notion;
  it is **not** a global certificate: the unlabelled loss :math:`\max(0, 1 - |f|)` is not convex,
  so an aggregated problem is not a relaxation of the original, ``F_t`` is no lower bound and is
  not monotone (docs/s3vm.md). aidopt reports ``prop5_optimal`` and never ``certified_optimal``
  for an AID run; a direct solve reports the MIP solver's own bound.

Big-M (:func:`big_m`): every aggregated problem gets a bound on :math:`1 + |w x_k + b|` derived from
an objective value ``U`` that the optimum cannot exceed (the value of a known feasible point).
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from aidopt.models import s3vm

from aidopt.results import Certificate, Termination
from aidopt.solvers import ProblemClass

from .partition import Partition

__all__ = ["S3VMProblem", "AggregatedS3VM", "big_m", "BALANCES"]

SIGN_TOL = 1e-9
KMEANS_ITER = 10
BALANCES = ("constraint", "cost", None)


@dataclass
class AggregatedS3VM:
    """The aggregated data of one iteration: labelled centroids ``Xl`` with labels ``yl`` and
    weights ``cl`` (sizes times balance cost), unlabelled centroids ``Xu`` with sizes ``cu``;
    ``l_index`` / ``u_index`` are their cluster numbers in the partition."""

    Xl: np.ndarray
    yl: np.ndarray
    cl: np.ndarray
    Xu: np.ndarray
    cu: np.ndarray
    l_index: np.ndarray
    u_index: np.ndarray
    ybar: float | None
    upper: float
    """The aggregated objective of a known feasible point: the optimum is at most this."""


def big_m(agg: AggregatedS3VM, Ml: float, regularizer: str, upper: float | None = None) -> np.ndarray:
    r"""Valid big-M values for the aggregated (or original) S3VM: for every unlabelled row k a
    bound on :math:`1 + |w x_k + b|` at every optimum.

    With ``U`` (default ``agg.upper``) at least the optimal value, an optimum has :math:`R(w) \le U`, so
    :math:`\|w\|_2 \le \sqrt{2U}` (l2) or :math:`\|w\|_1 \le U` (l1), and
    :math:`|w z| \le \|w\| \|z\|_*` (:math:`\|\cdot\|_2` resp. :math:`\|\cdot\|_\infty`).
    With the balance row, :math:`b = \bar y - w \bar x_U`, so
    :math:`|w x_k + b| \le |\bar y| + \|w\| \|x_k - \bar x_U\|_*`. Without it, a labelled row j of
    class -1 pays :math:`M_l c_j \xi_j \ge M_l c_j (1 + b - \|w\| \|x_j\|_*)`, at most U, so
    :math:`b \le U / (M_l c_j) - 1 + \|w\| \|x_j\|_*`; symmetrically for class +1; and then
    :math:`|w x_k + b| \le \|w\| \|x_k\|_* + |b|`.
    """
    U = max(float(agg.upper if upper is None else upper), 0.0)
    if regularizer == "l2":
        w_bound = math.sqrt(2.0 * U)

        def dual_norm(Z):
            return np.linalg.norm(Z, axis=1)
    else:
        w_bound = U

        def dual_norm(Z):
            return np.abs(Z).max(axis=1, initial=0.0)
    if agg.ybar is not None:
        mean_u = agg.cu @ agg.Xu / agg.cu.sum()
        reach = abs(agg.ybar) + w_bound * dual_norm(agg.Xu - mean_u)
    else:
        per_row = U / (Ml * agg.cl) - 1.0 + w_bound * dual_norm(agg.Xl)
        b_bound = max(float(per_row[agg.yl == sign].min()) for sign in (-1.0, 1.0))
        reach = w_bound * dual_norm(agg.Xu) + max(b_bound, 0.0)
    return (1.0 + reach) * (1.0 + 1e-9) + 1e-9


class S3VMProblem:
    """Semi-supervised SVM under AID.

    Parameters
    ----------
    Ml, Mu : float
        Costs of the labelled and unlabelled hinges (paper: M_l = 5, M_u = 1).
    balance : {"constraint", "cost", None}
        ``"constraint"``: mean of ``w x + b`` over the unlabelled rows = mean labelled label;
        ``"cost"``: the labelled rows of each class get the weight ``l_max / l_class`` (the
        minority class is weighted up to the majority's total); ``None``: neither.
    regularizer : {"l2", "l1"}
        ``"l2"``: 1/2 ||w||^2 (MIQP: Gurobi or SCIP); ``"l1"``: ||w||_1 (MILP: HiGHS too).
    big_M : float, optional
        Override the data-derived big-M (see :func:`big_m`). A value below the true bound
        changes the problem; it is used as given.
    aggregate_labelled_above : int, default 1000
        Labelled rows are clustered (k-means per class, ``ceil(r0 * size)`` clusters) only when
        there are more than this many; otherwise each is its own cluster at t = 1. They add
        continuous variables only (the binaries belong to the unlabelled clusters), and
        aggregating 100 labelled rows into two centroids lost what they carry: AID1 accuracy on
        USPS / BCI / Digit1 with l = 100 was 71.7 / 54.7 / 84.3 % against 88.1 / 68.7 / 91.5 %
        unaggregated (paper: 87.1 / 69.1 / 90.4; docs/s3vm.md).
    """

    name = "s3vm"
    needs_duals = False
    #: F_t of an aggregated S3VM is not a lower bound of the original problem (see module doc)
    aggregated_bound = False
    condition_termination = Termination.PROP5_OPTIMAL
    #: a MIP stopped at the time limit still has a usable incumbent (any (w, b) is feasible)
    accept_incumbent = True
    #: MIP gap tolerances tighter than the solvers' defaults (Gurobi and HiGHS stop at 1e-4)
    solver_defaults = {"gurobi": {"MIPGap": 1e-6}, "highs": {"mip_rel_gap": 1e-6}}
    row_keys = ("decision",)

    def __init__(self, Ml: float = 5.0, Mu: float = 1.0, balance: str | None = "constraint",
                 regularizer: str = "l2", big_M: float | None = None,
                 aggregate_labelled_above: int = 1000):
        for name, val, positive in (("Ml", Ml, True), ("Mu", Mu, False)):
            if not (isinstance(val, numbers.Real) and not isinstance(val, bool) and np.isfinite(val)
                    and (val > 0 if positive else val >= 0)):
                raise ValueError(f"{name} must be a {'positive' if positive else 'non-negative'} "
                                 f"finite number, got {val!r}")
        if balance not in BALANCES:
            raise ValueError(f"balance must be 'constraint', 'cost' or None, got {balance!r}")
        if regularizer not in s3vm.REGULARIZERS:
            raise ValueError(f"regularizer must be 'l2' or 'l1', got {regularizer!r}")
        if big_M is not None and not (isinstance(big_M, numbers.Real) and np.isfinite(big_M)
                                      and big_M > 1):
            raise ValueError(f"big_M must be a finite number > 1, got {big_M!r}")
        if not (isinstance(aggregate_labelled_above, numbers.Integral) and aggregate_labelled_above >= 0):
            raise ValueError("aggregate_labelled_above must be a non-negative integer, got "
                             f"{aggregate_labelled_above!r}")
        self.aggregate_labelled_above = int(aggregate_labelled_above)
        self.Ml, self.Mu = float(Ml), float(Mu)
        self.balance = balance
        self.regularizer = regularizer
        self.big_M = None if big_M is None else float(big_M)
        self.problem_class = ProblemClass.MIQP if regularizer == "l2" else ProblemClass.MILP
        self._reset()

    def _reset(self):
        self.mip_gaps: list[float] = []
        self.big_ms: list[float] = []
        self._previous = None
        self._previous_F = None
        self._basis = None
        self._reduced = None
        self._model_M = None

    # ----------------------------------------------------------------- protocol
    def configure(self, solver_spec) -> None:
        self._reset()

    @staticmethod
    def default_r0(n: int, m: int) -> float:
        """0.05 for n <= 10^4, else 0.01 (applied to the labelled classes and the unlabelled rows
        separately)."""
        return 0.05 if n <= 10_000 else 0.01

    @staticmethod
    def min_clusters(data) -> int:
        return 12

    def cost(self, data) -> np.ndarray:
        """Per-row hinge weight: the balance cost on labelled rows, 1 elsewhere."""
        cost = np.ones(data.n)
        if self.balance == "cost":
            counts = {sign: int((data.y == sign).sum()) for sign in (-1.0, 1.0)}
            for sign, count in counts.items():
                cost[data.y == sign] = max(counts.values()) / count
        return cost

    def ybar(self, data) -> float | None:
        return float(data.y[data.labelled].mean()) if self.balance == "constraint" else None

    def initial_partition(self, data, n_clusters, rng, solve) -> Partition:
        from scipy.cluster.vq import kmeans2

        r0 = n_clusters / data.n
        labels = np.zeros(data.n, dtype=np.int64)
        offset = 0
        keep = data.n_labelled <= self.aggregate_labelled_above  # labelled rows stay single
        groups = [(data.y == -1.0, 1), (data.y == 1.0, 1), (~data.labelled, 10)]
        for mask, least in groups:
            rows = np.flatnonzero(mask)
            k = int(min(rows.size, max(least, math.ceil(r0 * rows.size))))
            if keep and mask is not groups[2][0]:
                k = rows.size
            if k == rows.size:
                part = np.arange(k)
            else:
                with warnings.catch_warnings():  # empty clusters disappear in from_labels
                    warnings.simplefilter("ignore")
                    part = kmeans2(data.X[rows], k, iter=KMEANS_ITER, minit="++", seed=rng)[1]
            labels[rows] = offset + part
            offset += k
        return Partition.from_labels(labels)

    def aggregate(self, data, partition: Partition) -> AggregatedS3VM:
        cost = self.cost(data)
        W, (Xbar, ybar_k, lab_k, cost_k) = partition.weighted_means(
            data.s, data.X, data.y, data.labelled.astype(float), cost)
        is_l = lab_k > 0.5
        l_index, u_index = np.flatnonzero(is_l), np.flatnonzero(~is_l)
        agg = AggregatedS3VM(
            Xl=Xbar[l_index], yl=np.sign(ybar_k[l_index]), cl=(W * cost_k)[l_index],
            Xu=Xbar[u_index], cu=W[u_index], l_index=l_index, u_index=u_index,
            ybar=self.ybar(data), upper=math.inf,
        )
        agg.upper = self._upper_bound(agg)
        return agg

    def build(self, aggregated: AggregatedS3VM, upper: float | None = None, form=None):
        """The aggregated MIP. Its big-M comes from ``upper`` when given, else from a trial
        value (twice the previous F_t) that :meth:`rebuild` verifies after the solve."""
        a = self._reduce(aggregated)
        if self.big_M is not None:
            M = np.full(a.Xu.shape[0], self.big_M)
        else:
            if upper is None and self._previous_F is not None:
                upper = min(a.upper, 2.0 * max(self._previous_F, 1.0))
            M = big_m(a, self.Ml, self.regularizer, upper=upper)
        self._model_M = M
        self.big_ms.append(float(M.max(initial=0.0)))
        return s3vm.create_instance(
            a.Xl, a.yl, a.cl, a.Xu, a.cu, Ml=self.Ml, Mu=self.Mu, bigM=M,
            regularizer=self.regularizer, ybar=a.ybar,
        )

    def rebuild(self, model, outcome, aggregated: AggregatedS3VM):
        r"""Verify the trial big-M after a solve; a model with a valid one if it fails.

        For any big-M the model's objective G(w, b) is at least the S3VM objective H(w, b) and
        equal where every :math:`1 + |w x_k + b| \le M_k`; so the solved value G* is at least
        the optimum H*, and every optimum of H has :math:`R(w) \le H^* \le G^*`. If the big-M
        :func:`big_m` derives from U = G* is not above the one used, then an optimum of H lies
        where G = H, hence G* = H* and the solution is optimal for H. Otherwise the model is
        rebuilt with the big-M of U = G* (valid) and solved once more.
        """
        if self.big_M is not None or outcome.objective is None:
            return None
        G = float(outcome.objective) * (1.0 + 1e-6) + 1e-9
        needed = big_m(self._reduce(aggregated), self.Ml, self.regularizer, upper=G)
        if np.all(needed <= self._model_M):
            return None
        return self.build(aggregated, upper=min(G, aggregated.upper))

    def lift(self, model, outcome, partition, aggregated, data) -> dict:
        z, b, dbar = s3vm.solution_from(model)
        w = z if self._basis is None else self._basis @ z
        self._previous, self._previous_F = (w, b), outcome.objective
        f = data.X @ w + b
        side_k = np.zeros(partition.n_clusters)
        side_k[aggregated.u_index] = 2.0 * dbar - 1.0
        objective, bound = outcome.objective, outcome.extra.get("mip_gap_bound")
        gap = math.nan
        if objective is not None and bound is not None and math.isfinite(bound):
            gap = max(0.0, objective - bound) / max(1.0, abs(objective))
        self.mip_gaps.append(gap)
        solution = {
            "w": w, "b": b, "decision": f, "_side": side_k[partition.labels],
            "_eps": SIGN_TOL * max(1.0, float(np.abs(f).max(initial=0.0))), "_mip_gap": gap,
        }
        if partition.n_clusters == data.n and bound is not None:  # the original problem itself
            solution["_lower_bound"] = float(bound)
        return solution

    def evaluate(self, data, solution) -> float:
        f = solution["decision"]
        lab = data.labelled
        hinge = np.maximum(1.0 - data.y[lab] * f[lab], 0.0)
        unlabelled = np.maximum(1.0 - np.abs(f[~lab]), 0.0)
        return (self._regularizer_value(solution["w"]) + self.Ml * float(self.cost(data)[lab] @ hinge)
                + self.Mu * float(unlabelled.sum()))

    def split(self, partition: Partition, data, solution) -> tuple[Partition | None, int]:
        f, eps, lab = solution["decision"], solution["_eps"], data.labelled
        slack = np.where(lab, 1.0 - data.y * f, 0.0)  # labelled: inside the margin or not
        side = np.where(lab, 0.0, f)  # unlabelled: which side of the hyperplane (Lemma 1's d_i)
        active = np.where(lab, 0.0, 1.0 - solution["_side"] * f)  # unlabelled: hinge active
        mixed = (partition.mixed(slack, eps) | partition.mixed(side, eps)
                 | partition.mixed(active, eps))
        solution["_violations"] = int(mixed.sum())
        if not mixed.any():
            return None, 0
        group = (slack > eps).astype(np.int64) + (side > eps) + 2 * (active > eps)
        return partition.refine(np.where(mixed[partition.labels], group, 0)), int(mixed.sum())

    def certify(self, data, solution, *, dual_solution, partition, aggregated, solve, tol,
                feasibility_tol=1e-6) -> Certificate:
        E = self.evaluate(data, solution)
        gaps = [g for g in self.mip_gaps if math.isfinite(g)]
        residuals = {"largest aggregated MIP gap": max(gaps, default=math.nan)}
        if "_lower_bound" in solution:  # direct solve: the MIP solver's bound is a real bound
            bound = min(solution["_lower_bound"], E)
            rel = (E - bound) / max(1.0, abs(E))
            return Certificate(
                method="mip_bound", certified=bool(rel <= tol), primal_objective=E,
                dual_objective=bound, relative_gap=float(rel), residuals=residuals, tol=tol,
                feasibility_tol=feasibility_tol, checked=[],
                note="bound = the MIP solver's branch-and-bound bound on the full big-M model "
                     f"(largest big-M {self.big_ms[-1]:.4g}, valid by construction: docs/s3vm.md)",
            )
        violations = solution.get("_violations")
        residuals["clusters violating Prop. 5"] = math.nan if violations is None else float(violations)
        holds = violations == 0
        note = ("no dual certificate exists for this non-convex MIP; F_t is not a lower bound. "
                + ("Prop. 5 holds for the returned solution: E = F and every aggregated MIP "
                   "was solved to optimality, so it is optimal among labellings constant on the "
                   "final clusters (not a global optimality proof)" if holds else
                   "Prop. 5 does not hold for the returned solution: no optimality claim"))
        return Certificate(
            method="prop5", certified=False, primal_objective=E, dual_objective=-math.inf,
            relative_gap=math.inf, residuals=residuals, tol=tol, feasibility_tol=feasibility_tol,
            sign_condition=bool(holds), note=note, checked=[],
        )

    @staticmethod
    def public_solution(solution) -> dict:
        f = solution["decision"]
        return {"w": solution["w"], "b": solution["b"], "decision": f,
                "mip_gap": solution["_mip_gap"]}

    def fallbacks(self, solver: str) -> list[tuple[str, None]]:
        """SCIP when Gurobi fails or its size-limited licence refuses a (larger) aggregated
        model; SCIP for the l1 MILP when HiGHS fails."""
        return [("scip", None)] if solver != "scip" else []

    # ----------------------------------------------------------------- helpers
    def _reduce(self, agg: AggregatedS3VM) -> AggregatedS3VM:
        r"""The l2 model in the span of the centroids (representer theorem), when K < m.

        Every decision value :math:`w x_k` and the balance row depend on w only through its
        projection on the row space of the K centroids, and :math:`\tfrac12\|w\|^2` only grows
        with the orthogonal part, so an optimal w lies in that space: with an orthonormal basis
        Q (m x r, from the SVD of the centroids) the model is solved in ``z`` with features
        :math:`x_k Q` and ``w = Q z``, an exact reformulation with r <= K instead of m variables.
        The norms the big-M uses do not grow (:math:`\|x_k Q\| \le \|x_k\|`). Not for l1.
        """
        if self._reduced is not None and self._reduced[0] is agg:  # build and rebuild share one SVD
            self._basis = self._reduced[2]
            return self._reduced[1]
        self._basis = None
        rows = np.vstack([agg.Xl, agg.Xu])
        reduced = agg
        if self.regularizer == "l2" and rows.shape[0] < rows.shape[1]:
            _, sing, vt = np.linalg.svd(rows, full_matrices=False)
            rank = int((sing > sing.max(initial=0.0) * 1e-12).sum())
            self._basis = vt[:rank].T
            reduced = AggregatedS3VM(
                Xl=agg.Xl @ self._basis, yl=agg.yl, cl=agg.cl, Xu=agg.Xu @ self._basis, cu=agg.cu,
                l_index=agg.l_index, u_index=agg.u_index, ybar=agg.ybar, upper=agg.upper,
            )
        self._reduced = (agg, reduced, self._basis)
        return reduced

    def _regularizer_value(self, w) -> float:
        return 0.5 * float(w @ w) if self.regularizer == "l2" else float(np.abs(w).sum())

    def _aggregated_objective(self, agg: AggregatedS3VM, w, b) -> float:
        hinge = np.maximum(1.0 - agg.yl * (agg.Xl @ w + b), 0.0)
        unlabelled = np.maximum(1.0 - np.abs(agg.Xu @ w + b), 0.0)
        return self._regularizer_value(w) + self.Ml * float(agg.cl @ hinge) + self.Mu * float(
            agg.cu @ unlabelled)

    def _upper_bound(self, agg: AggregatedS3VM) -> float:
        """The aggregated objective of w = 0 (b = ybar with the balance row) and of the previous
        iterate's (w, b), which satisfies the same balance row: the optimum is at most the
        smaller."""
        m = agg.Xl.shape[1]
        candidates = [(np.zeros(m), agg.ybar if agg.ybar is not None else 0.0)]
        if self._previous is not None and self._previous[0].shape == (m,):
            candidates.append(self._previous)
        return min(self._aggregated_objective(agg, w, b) for w, b in candidates)
