r"""AID plug-in for learning from aggregate outputs: the Musicant et al. MIQP / MILP of
:mod:`aidopt.models.aggout`, solved exactly or by aggregating rows *within* collections.

The objective of a hyperplane. For fixed :math:`(w, b)` the best labelling is found exactly,
collection by collection: labelling row i as class 1 costs :math:`C\,h^1_i`,
:math:`h^1_i = (1 - f_i)_+`, as class 0 :math:`C\,h^0_i`, :math:`h^0_i = (1 + f_i)_+`
(:math:`f_i = w x_i - b`); with k rows of collection c in class 1 the best choice is the k rows of
smallest :math:`h^1_i - h^0_i`, so the collection costs
:math:`C \sum_{i \in c} h^0_i + \min_{0 \le k \le |c|} [\,C \cdot (\text{sum of the k smallest})
+ D |y_c - k|\,]`. With a valid big-M the MIP's optimal value is the minimum of
:math:`E(w, b) = R(w) + \sum_c (\ldots)` (:func:`objective`), and :func:`best_labels` is the
exact lift of a hyperplane.

Under AID the rows of one collection are clustered (never across collections), a cluster shares one
binary :math:`\bar d_k` and its count weight is its size; the aggregated MIP is the model on the
centroids. For labellings constant on the clusters it is a *relaxation* (Jensen: a hinge at the
centroid is at most the mean hinge), but not of the original problem.

* **Split**: a cluster is split by the exact lift's label :math:`d^*_i` and by the sign of the hinge
  :math:`1 - \tilde d_k f_i` of its aggregated side (:math:`\tilde d_k = 2 \bar d_k - 1`), into up
  to four parts.
* **Stop** (the cluster condition): no cluster needs splitting. Then the hinge of every cluster's
  side is linear on it, so the aggregated optimum ``F_t`` is the original objective of
  :math:`(w, b, \bar d)`; :math:`d^*` is constant on the clusters, so ``E_t`` is the original
  objective of a cluster-constant labelling, which ``F_t`` bounds from below: ``E_t = F_t`` and,
  with every aggregated MIP solved to optimality (within the solver's MIP gap, 1e-6 by default,
  and the split's sign tolerance), the solution is optimal among labellings constant on the final
  clusters. With a user's ``big_M`` no such claim is made. Not a global proof: only a solve of the original model (every
  row its own cluster) has a bound, the MIP solver's (``mip_bound`` certificate).

Big-M (:func:`big_m`): with ``U`` at least the optimal value, :math:`R(w) \le U` bounds
:math:`\|w\|`. For fixed w and d the objective does not decrease in b beyond
:math:`\max_k w x_k + 1` (every :math:`f_k \le -1`: the class-0 hinges are 0, the class-1 ones grow)
nor below :math:`\min_k w x_k - 1`; so some optimum has b in between, and there
:math:`|f_k| \le 1 + \|w\| \max_l \|x_k - x_l\|_*`, so
:math:`M_k = 2 + \|w\|_{\max} \max_l \|x_k - x_l\|_*` is valid at that optimum, so the big-M model has the same
optimal value and its bound is a bound. ``U`` is the objective of a known feasible point, so the
big-M is valid by construction.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from aidopt.decomposition.clustering import kmeans_rows
from aidopt.decomposition.mip import (
    SPARSE_SLACK,
    cluster_certificate,
    max_outside_rows,
    mip_gap,
    mip_options,
    original_bound_certificate,
    row_norms,
)
from aidopt.decomposition.partition import Partition
from aidopt.decomposition.protocol import AIDProblem, Iterate, Lifted, Split, Stop
from aidopt.models import aggout
from scipy import sparse

from aidopt.results import Certificate, Termination
from aidopt.solvers import ProblemClass

__all__ = ["AggregateOutputProblem", "AggregatedCollections", "best_labels", "big_m", "objective"]

SIGN_TOL = 1e-9
KMEANS_ITER = 10


def regularizer(w, norm: str) -> float:
    """R(w): 1/2 ||w||^2 (``"l2"``) or ||w||_1 (``"l1"``)."""
    return 0.5 * float(w @ w) if norm == "l2" else float(np.abs(w).sum())


def best_labels(f, collection, counts, C: float, D: float):
    r"""The best labelling of rows with decision values ``f`` and its loss.

    Parameters
    ----------
    f : ndarray (n,)
        :math:`w x_i - b`.
    collection : ndarray of int (n,)
        Collection ``0..C-1`` of every row.
    counts : ndarray of int (C,)
        :math:`y_c`.
    C, D : float
        Hinge and count-deviation costs.

    Returns
    -------
    loss : float
        :math:`\sum_c \min_d [C \sum_{i \in c} h_i(d_i) + D |y_c - \sum_{i \in c} d_i|]`.
    d : ndarray (n,)
        A labelling attaining it (0/1).
    """
    f = np.asarray(f, dtype=float)
    collection = np.asarray(collection, dtype=np.int64)
    counts = np.asarray(counts, dtype=float)
    h1, h0 = np.maximum(1.0 - f, 0.0), np.maximum(1.0 + f, 0.0)
    delta = C * (h1 - h0)
    order = np.lexsort((delta, collection))
    coll = collection[order]
    sizes = np.bincount(collection, minlength=counts.size)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    position = np.arange(f.size) - starts[coll]  # k - 1 for the k-th smallest of its collection
    total = np.cumsum(delta[order])
    before = np.concatenate([[0.0], total])[starts][coll]  # cumulative sum before the collection
    cost = total - before + D * np.abs(counts[coll] - (position + 1))  # k = position + 1
    empty_cost = D * counts  # k = 0
    present = sizes > 0
    best = empty_cost.copy()
    if f.size:
        best_taken = np.minimum.reduceat(cost, starts[present])
        best[present] = np.minimum(empty_cost[present], best_taken)
    # k* = 1 + the position of the first row reaching the minimum, or 0 when k = 0 is best
    hit = np.flatnonzero(cost <= best[coll])
    first = np.full(counts.size, np.iinfo(np.int64).max)
    np.minimum.at(first, coll[hit], position[hit])
    take = (first < np.iinfo(np.int64).max) & (best < empty_cost)
    k_star = np.where(take, first + 1, 0)
    d = np.zeros(f.size)
    d[order] = (position < k_star[coll]).astype(float)
    loss = float(C * h0.sum() + best.sum())
    return loss, d


def objective(data, w, b, C: float, D: float, norm: str) -> tuple[float, np.ndarray]:
    """``(E(w, b), best labelling)`` on :class:`~aidopt.data.validate.AggregateData` ``data``."""
    f = data.X @ w - b
    loss, d = best_labels(f, data.collection, data.counts, C, D)
    return regularizer(w, norm) + loss, d


def sign_loss(f, n, collection, counts, C: float, D: float) -> float:
    """The loss of the feasible labelling :math:`d_k = [f_k \\ge 0]` of weighted rows (an upper
    bound on the best labelling's loss)."""
    d = (f >= 0).astype(float)
    hinge = np.where(d > 0, np.maximum(1.0 - f, 0.0), np.maximum(1.0 + f, 0.0))
    counted = np.bincount(collection, weights=n * d, minlength=len(counts))
    return float(C * (n @ hinge) + D * np.abs(counts - counted).sum())


@dataclass
class AggregatedCollections:
    """One iteration's aggregated data: centroids ``X`` with sizes ``n`` and their collection
    ``collection``; the counts ``y``; ``upper``, the objective of a known feasible point."""

    X: np.ndarray
    n: np.ndarray
    collection: np.ndarray
    y: np.ndarray
    upper: float


def reach(X, norm: str, exact_below: int = 5000) -> np.ndarray:
    r"""Per row, :math:`\max_l \|x_k - x_l\|_*` (the dual norm: 2-norm for ``"l2"``,
    :math:`\infty`-norm for ``"l1"``), or the bound :math:`r_k + \max_l r_l`
    (:math:`r_k = \|x_k - \bar x\|_2`) for the 2-norm above ``exact_below`` rows.

    A sparse X (CSR) is never made dense: :func:`_sparse_reach`."""
    if sparse.issparse(X):
        return _sparse_reach(X, norm, exact_below)
    if norm == "l1":  # max_l max_j |x_kj - x_lj| = max_j max(x_kj - min_j, max_j - x_kj)
        return np.maximum(X - X.min(axis=0), X.max(axis=0) - X).max(axis=1, initial=0.0)
    X = X - X.mean(axis=0)  # translation-invariant; centring avoids cancellation below
    if X.shape[0] > exact_below:
        r = np.linalg.norm(X, axis=1)
        return r + r.max(initial=0.0)
    sq = np.einsum("ij,ij->i", X, X)
    out = np.zeros(X.shape[0])
    for start in range(0, X.shape[0], 1024):
        block = X[start:start + 1024]
        d2 = sq[start:start + 1024, None] + sq[None, :] - 2.0 * block @ X.T
        out[start:start + 1024] = np.sqrt(np.maximum(d2.max(axis=1), 0.0))
    return out


def _sparse_reach(X, norm: str, exact_below: int) -> np.ndarray:
    r""":func:`reach` of a CSR ``X`` from its stored entries. The :math:`\infty`-norm exactly:
    with :math:`g_j(x) = \max(x - \min_l x_{lj}, \max_l x_{lj} - x)`, the stored entries'
    :math:`g_j(x_{kj})`, and :math:`g_j(0)` over the row's other columns
    (:func:`~aidopt.decomposition.mip.max_outside_rows`). The 2-norm from
    :math:`\|x_k - x_l\|^2 = \|x_k\|^2 + \|x_l\|^2 - 2 x_k x_l` by blocks of rows (a block
    of nonzero products at a time, up to ``exact_below`` rows), raised by ``SPARSE_SLACK`` times the
    squares against rounding; above, :math:`r_k + \max_l r_l` with the centred norms
    :func:`~aidopt.decomposition.mip.row_norms`."""
    X = sparse.csr_matrix(X)
    n = X.shape[0]
    if norm == "l1":
        lo = X.min(axis=0).toarray().ravel()
        hi = X.max(axis=0).toarray().ravel()
        row = np.repeat(np.arange(n), np.diff(X.indptr))
        stored = np.maximum(X.data - lo[X.indices], hi[X.indices] - X.data)
        out = np.zeros(n)
        np.maximum.at(out, row, stored)
        return np.maximum(out, max_outside_rows(X, np.maximum(-lo, hi)))
    if n > exact_below:
        r = row_norms(X, "l2", np.asarray(X.mean(axis=0)).ravel())
        return r + r.max(initial=0.0)
    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    top = float(sq.max(initial=0.0))
    out = np.zeros(n)
    for start in range(0, n, 256):
        P = sparse.csr_matrix(X[start:start + 256] @ X.T)  # the block's nonzero products
        mine = sq[start:start + 256]
        row = np.repeat(np.arange(P.shape[0]), np.diff(P.indptr))
        d2 = mine + max_outside_rows(P, sq)  # x_k x_l = 0: ||x_k||^2 + ||x_l||^2
        np.maximum.at(d2, row, mine[row] + sq[P.indices] - 2.0 * P.data)
        out[start:start + 256] = np.sqrt(np.maximum(d2, 0.0) + SPARSE_SLACK * (mine + top))
    return out


def big_m(agg: AggregatedCollections, norm: str, upper: float | None = None) -> np.ndarray:
    """Big-M values valid at some optimum of the aggregated (or original) model (module
    docstring): ``2 + ||w||_max max_l ||x_k - x_l||_*``, with ``upper`` (default ``agg.upper``)
    at least the optimal value."""
    U = max(float(agg.upper if upper is None else upper), 0.0)
    w_bound = math.sqrt(2.0 * U) if norm == "l2" else U
    return (2.0 + w_bound * reach(agg.X, norm)) * (1.0 + 1e-9) + 1e-9


class AggregateOutputProblem(AIDProblem):
    """Learning from aggregate outputs (Musicant et al.) under AID.

    Parameters
    ----------
    C : float
        Cost of the hinges :math:`\\xi_i, z_i`.
    D : float
        Cost of a collection's count deviation :math:`\\eta_c`.
    norm : {"l2", "l1"}
        ``"l2"``: 1/2 ||w||^2 (the seed's MIQP: Gurobi, SCIP, CPLEX, Xpress); ``"l1"``: ||w||_1
        (an MILP: HiGHS too).
    big_M : float, optional
        Use this big-M instead of the data-derived one. A value below a valid bound changes the
        problem; it is used as given, and then no bound is claimed.
    """

    name = "aggregate_outputs"
    needs_duals = False

    def __init__(self, C: float = 1.0, D: float = 1.0, norm: str = "l2",
                 big_M: float | None = None):
        for name, val in (("C", C), ("D", D)):
            if not (isinstance(val, numbers.Real) and not isinstance(val, bool)
                    and math.isfinite(val) and val >= 0):
                raise ValueError(f"{name} must be a non-negative finite number, got {val!r}")
        if norm not in aggout.NORMS:
            raise ValueError(f"norm must be 'l2' or 'l1', got {norm!r}")
        if big_M is not None and not (isinstance(big_M, numbers.Real) and math.isfinite(big_M)
                                      and big_M > 1):
            raise ValueError(f"big_M must be a finite number > 1, got {big_M!r}")
        self.C, self.D, self.norm = float(C), float(D), norm
        self.big_M = None if big_M is None else float(big_M)
        self.problem_class = ProblemClass.MIQP if norm == "l2" else ProblemClass.MILP

    # ----------------------------------------------------------------- contract
    def solver_defaults(self, solver: str) -> dict:
        return mip_options(solver, self.problem_class)

    def dimensions(self, data) -> dict[str, int]:
        return {"n": int(data.n), "m": int(data.m), "collections": data.n_collections}

    def default_r0(self, size: int, data) -> float:
        """0.01: one cluster per collection of up to 100 rows."""
        return 0.01

    def min_clusters(self, data) -> int:
        """A cluster never spans two collections."""
        return data.n_collections

    def initial_partition(self, data, n_clusters, rng, solve) -> Partition:
        """``ceil(r0 |c|)`` clusters in every collection c (``r0 = n_clusters / n``): the whole
        collection, or a k-means of its rows."""
        r0 = n_clusters / data.n
        k = np.maximum(1, np.ceil(r0 * data.sizes - 1e-9)).astype(np.int64)
        labels = data.collection * data.n  # unique per collection; refined below
        for c in np.flatnonzero(k > 1):
            rows = np.flatnonzero(data.collection == c)
            if k[c] >= rows.size:
                part = np.arange(rows.size)
            else:  # a sparse X: on a sketch of its rows (kmeans_rows)
                part = kmeans_rows(data.X[rows], int(k[c]), rng, KMEANS_ITER)
            labels[rows] += part
        return Partition.from_labels(labels)

    def aggregate(self, data, partition: Partition, previous: Iterate | None = None):
        W, (Xbar, coll) = partition.weighted_means(data.s, data.X, data.collection.astype(float))
        agg = AggregatedCollections(X=Xbar, n=W, collection=np.rint(coll).astype(np.int64),
                                    y=data.counts.astype(float), upper=math.inf)
        candidates = [(np.zeros(data.m), -1.0), (np.zeros(data.m), 1.0)]
        if previous is not None:
            candidates.append((previous.lifted.solution["w"], previous.lifted.solution["b"]))
        agg.upper = min(regularizer(w, self.norm) + sign_loss(
            agg.X @ w - b, agg.n, agg.collection, agg.y, self.C, self.D) for w, b in candidates)
        return agg

    def build(self, aggregated: AggregatedCollections, form=None):
        M = (np.full(aggregated.n.size, self.big_M) if self.big_M is not None
             else big_m(aggregated, self.norm))
        return aggout.create_instance(aggregated.X, aggregated.n, aggregated.collection,
                                      aggregated.y, C=self.C, D=self.D, bigM=M, norm=self.norm)

    def on_nonoptimal(self, outcome) -> bool:
        """A MIP stopped at the time limit or by Ctrl-C: its incumbent's (w, b) is a feasible
        hyperplane."""
        return outcome.stopped and outcome.has_solution

    def lift(self, model, outcome, partition, aggregated, data) -> Lifted:
        w, b, dbar = aggout.solution_from(model)
        f = data.X @ w - b  # one pass over X: E and the split both use f
        loss, labels = best_labels(f, data.collection, data.counts, self.C, self.D)
        E = regularizer(w, self.norm) + loss
        gap = mip_gap(outcome.objective, outcome.bound)
        M = np.array([model.bigM[k] for k in model.K], dtype=float)
        solution = {"w": w, "b": b, "decision": f, "labels": labels, "objective": E,
                    "mip_gap": gap}
        info = {"mip_gap": gap, "big_M": float(M.max(initial=0.0)),
                "big_M_verified": float(self.big_M is None),
                "mip_bound": math.nan if outcome.bound is None else float(outcome.bound)}
        side = (2.0 * dbar - 1.0)[partition.labels]
        return Lifted(solution, side, info)

    def lower_bound(self, outcome, partition, data, lifted=None) -> float | None:
        """The MIP solver's bound, on the original model only (every row its own cluster) and
        only with the data-derived big-M: an aggregated model is not a relaxation."""
        if partition.n_clusters != data.n or self.big_M is not None:
            return None
        return outcome.bound

    def evaluate(self, data, lifted: Lifted) -> float:
        """E of the lifted hyperplane with its best labelling, computed exactly in ``lift``."""
        return lifted.solution["objective"]

    def split(self, partition: Partition, data, lifted: Lifted) -> Split:
        f = lifted.solution["decision"]
        eps = SIGN_TOL * max(1.0, float(np.abs(f).max(initial=0.0)))
        label = lifted.solution["labels"] - 0.5  # the exact lift's class
        active = 1.0 - lifted.state * f  # the hinge of the cluster's aggregated side
        mixed = partition.mixed(label, 0.25) | partition.mixed(active, eps)
        if not mixed.any():
            return Split(None, 0)
        group = (label > 0).astype(np.int64) + 2 * (active > eps)
        return Split(partition.refine(np.where(mixed[partition.labels], group, 0)),
                     int(mixed.sum()))

    def certify(self, data, best: Iterate, *, bound: Iterate, solve, tol, feasibility_tol=1e-6,
                history=()) -> Certificate:
        # the original MIP's own branch-and-bound bound: a bound only with a valid big-M
        certificate, residuals = original_bound_certificate(
            data.n, best, bound, history, tol=tol, feasibility_tol=feasibility_tol,
            reference="docs/aggout.md")
        if certificate is not None:
            return certificate
        violations = None if best.split is None else best.split.n_split
        condition = "the cluster condition"
        if self.big_M is not None:
            # with a user's big-M the aggregated MIP may not be a relaxation of the restricted
            # problem, so the condition proves nothing
            violations, condition = None, "the cluster condition (not applicable: user big_M)"
        if violations and history and history[-1].n_split == 0 and best.E_t <= history[-1].E_t:
            # it held at the last iterate, which is optimal among labellings constant on the
            # final clusters; the returned (earlier) solution is no worse than that optimum
            violations, condition = 0, ("the cluster condition (at the last iterate, which the "
                                        "returned earlier solution does not exceed)")
        return cluster_certificate(best.E_t, violations, method="cluster_condition",
                                   condition=condition, tol=tol, feasibility_tol=feasibility_tol,
                                   residuals=residuals)

    def final_termination(self, stop: Stop, certificate, best) -> Termination:
        """``cluster_optimal`` when the loop stopped on the cluster condition and it holds for
        the returned solution."""
        if (stop is Stop.CONDITION and certificate is not None and not certificate.certified
                and certificate.method == "cluster_condition" and certificate.sign_condition):
            return Termination.CLUSTER_OPTIMAL
        return super().final_termination(stop, certificate, best)

    def fallbacks(self, solver: str) -> list[tuple[str, None]]:
        """SCIP when another solver fails or a size-limited licence refuses the model."""
        return [("scip", None)] if solver != "scip" else []

    def public_solution(self, best: Iterate, certificate) -> dict:
        return {k: v for k, v in best.lifted.solution.items() if k != "objective"}
