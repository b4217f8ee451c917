r"""AID plug-in for the Crammer–Singer multi-class SVM: one joint QP (2-norm) or LP (1-norm)
over all k classes (:mod:`aidopt.models.crammer_singer`).

The problem, with rows :math:`x_i`, classes :math:`y_i \in \{0..k-1\}`, sample weights
:math:`s_i` and the piece values :math:`v_{ir} = 1 - \delta_{r y_i} + (w_r - w_{y_i})' x_i`
(:math:`v_{i y_i} = 0`)::

    min_w  R(w) + C sum_i s_i max_r v_ir        R = 1/2 sum_r ||w_r||^2  or  sum_r ||w_r||_1

* **Aggregate**: clusters of rows of one class; centroid :math:`\bar x_G` (sample-weighted),
  class :math:`y_G`, weight :math:`W_G = \sum_{i \in G} s_i`: one set of k - 1 margin rows per
  cluster. :math:`h(x) = \max_r v_r(x)` is a maximum of affine functions of x, hence convex, so
  :math:`W_G h(\bar x_G) \le \sum_{i \in G} s_i h(x_i)` (Jensen) for every w: the aggregated
  objective is below the original one everywhere, and the aggregated optimum is a lower bound.
* **Initial partition**: the same model on a stratified random sample (costs scaled by the
  total weight over the sample's) gives w; within each class, one k-means iteration on the
  scores :math:`(w_1' x_i, \dots, w_k' x_i)`.
* **Split**: the active pieces of row i are :math:`A_i = \{r : v_{ir} \ge \max_q v_{iq} -
  \epsilon\}` (piece :math:`y_i` is the zero of the hinge). A cluster whose rows share an active
  piece (:math:`\bigcap_{i \in G} A_i \ne \emptyset`) satisfies the condition; the others are split
  by the rows' first active piece (``argmax``). When no cluster violates it, the aggregated
  objective equals the original one at w, so w is optimal (docs/multiclass.md, "Crammer–Singer").
* **Certificate**: the aggregated duals :math:`\bar\alpha_{Gr}` are lifted to
  :math:`\alpha_{ir} = s_i \bar\alpha_{Gr} / W_G`, a feasible dual point of the original problem
  with the same dual objective; :func:`certificate` checks it on all rows.

The sign tolerance :math:`\epsilon = 10^{-9} \max(1, \max_{i,r} |w_r' x_i|)`, as the binary SVM's.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from aidopt.decomposition.clustering import one_step_kmeans, sample_rows
from aidopt.decomposition.partition import Partition
from aidopt.decomposition.protocol import AIDProblem, Iterate, Lifted, Split, solve_own
from aidopt.models import crammer_singer as model_cs
from scipy import sparse

from aidopt.results import Certificate
from aidopt.solvers import ProblemClass, SolverError

__all__ = ["AggregatedCS", "CSState", "CrammerSingerProblem", "certificate", "default_sample_size",
           "dual_weights", "piece_values", "NORMS", "SIGN_TOL"]

NORMS = model_cs.NORMS
SIGN_TOL = 1e-9
#: what the split condition holding means (the certificate's summary)
SHARED_PIECE = ("every cluster's rows share an active piece of max(0, max_r 1 + (w_r - w_y)'x): "
                "F = E at this solution")


def default_sample_size(m: int, k: int) -> int:
    """Rows of the random sample whose fit gives the initial partition:
    ``min(1000, max(10 m, 20 k, 200))`` (the joint model on 1,000 rows of 54 features and 7
    classes took Clarabel about 10 s on the shared machine)."""
    return min(1000, max(10 * m, 20 * k, 200))


@dataclass
class AggregatedCS:
    """Centroids ``X`` (K, m) (a CSR matrix for sparse rows), class indices ``y`` (K,), weights
    ``w`` (K,), and the number of classes ``k``."""

    X: object
    y: np.ndarray
    w: np.ndarray
    k: int


@dataclass
class CSState:
    """Piece values ``v`` (n, k) on the full data (:func:`piece_values`) and the sign
    tolerance."""

    values: np.ndarray
    eps: float


def piece_values(X, y, w) -> tuple[np.ndarray, float]:
    """``v[i, r] = 1 - [r = y_i] + (w_r - w_{y_i})' x_i`` (so ``v[i, y_i] = 0``) and the sign
    tolerance ``SIGN_TOL * max(1, max |X w'|)``."""
    scores = np.asarray(X @ np.asarray(w, dtype=float).T)
    rows = np.arange(scores.shape[0])
    eps = SIGN_TOL * max(1.0, float(np.abs(scores).max(initial=0.0)))
    values = scores - scores[rows, y][:, None] + 1.0
    values[rows, y] = 0.0
    return values, eps


def regularizer_value(w, norm: str) -> float:
    """``1/2 sum_r ||w_r||^2`` or ``sum_r ||w_r||_1``."""
    w = np.asarray(w, dtype=float)
    return 0.5 * float(np.sum(w * w)) if norm == "l2" else float(np.abs(w).sum())


def dual_weights(X, y, alpha) -> np.ndarray:
    r"""``v`` of shape (k, m): :math:`v_q = \sum_i \sum_{r \ne y_i} \alpha_{ir}(1[q = y_i] -
    1[q = r]) x_i` (one sparse or dense product :math:`M' X`)."""
    alpha = np.asarray(alpha, dtype=float)
    M = -alpha.copy()
    rows = np.arange(alpha.shape[0])
    M[rows, y] = alpha.sum(axis=1) - alpha[rows, y]
    return np.asarray((X.T @ M).T)


class CrammerSingerProblem(AIDProblem):
    """The Crammer–Singer multi-class SVM under AID (module docstring).

    Parameters
    ----------
    C : float
        Misclassification cost.
    norm : {"l2", "l1"}
        The regularizer: :math:`\\tfrac12 \\sum_r \\|w_r\\|^2` (a QP) or
        :math:`\\sum_r \\|w_r\\|_1` (an LP).
    sample_size : int, optional
        Rows of the random sample whose fit gives the initial partition (default
        :func:`default_sample_size`), every class represented.
    """

    needs_duals = True
    #: ``alpha`` is (n, k): one row per element (the first axis)
    per_element_keys = ("alpha",)

    def __init__(self, C: float = 1.0, norm: str = "l2", sample_size: int | None = None):
        if norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS} for the Crammer-Singer SVM, got {norm!r}")
        if not (isinstance(C, numbers.Real) and not isinstance(C, bool) and np.isfinite(C) and C > 0):
            raise ValueError(f"C must be a positive finite number, got {C!r}")
        if sample_size is not None and not (
                isinstance(sample_size, numbers.Integral) and sample_size >= 2):
            raise ValueError(f"sample_size must be an integer >= 2, got {sample_size!r}")
        self.C = float(C)
        self.norm = norm
        self.sample_size = sample_size
        self.problem_class = ProblemClass.QP if norm == "l2" else ProblemClass.LP
        self.name = f"crammer_singer_{norm}"

    # ----------------------------------------------------------------- contract
    def configure(self, solver_spec) -> None:
        """The certificate reads the margin rows' duals: a solver that returns none is refused."""
        if solver_spec is not None and not solver_spec.duals:
            raise SolverError(f"the Crammer-Singer SVM certifies with the duals of its margin rows, "
                              f"which {solver_spec.name!r} does not return: use 'clarabel' or "
                              "'highs' (or another solver with duals)")

    def solver_defaults(self, solver: str) -> dict:
        """Clarabel: its relative gap tight enough for the scale-invariant certificate. HiGHS
        (the LP): interior point with crossover (a vertex, for exact active pieces), 2.4x
        faster than its default simplex on a 1,000-row covertype-like LP with k = 7 (15.1 s
        against 6.2 s, one run on the shared machine; presolve off: 7.0 s)."""
        if solver == "highs" and self.norm == "l1":
            return {"solver": "ipm"}
        if solver == "clarabel":
            from aidopt.solvers.clarabel import TIGHT_GAP

            return dict(TIGHT_GAP)
        return {}

    def dimensions(self, data) -> dict[str, int]:
        """``n``, ``m``, the classes ``k`` and ``nnz`` for a sparse X."""
        dims = {"n": int(data.n), "m": int(data.m), "k": int(data.k)}
        if sparse.issparse(data.X):
            dims["nnz"] = int(data.X.nnz)
        return dims

    def gap_floor(self, data) -> float:
        """No floor: with two classes present the objective is never 0 (w = 0 costs
        ``C sum_i s_i``, and any w with no loss has R(w) > 0)."""
        return np.finfo(float).tiny

    def default_r0(self, size: int, data) -> float:
        """The binary SVM's rate, ``max(1.1 m / n, 0.0001)``, with at least one cluster per class."""
        return min(1.0, max(1.1 * data.m / size, 0.0001))

    def min_clusters(self, data) -> int:
        return int(data.k)

    def initial_partition(self, data, n_clusters, rng, solve) -> Partition | tuple[Partition, Lifted]:
        """Class-pure clusters of the scores of a fit on a stratified random sample; returns that
        fit too."""
        if n_clusters >= data.n:
            return self.trivial_partition(data)
        size = self.sample_size or default_sample_size(data.m, data.k)
        idx = sample_rows(data.n, size, rng)
        missing = np.setdiff1d(np.arange(data.k), data.y[idx])
        if missing.size:  # every class in the sample
            first = np.array([np.flatnonzero(data.y == c)[0] for c in missing])
            idx = np.union1d(idx, first)
        s = data.s[idx] * (data.s.sum() / data.s[idx].sum())
        sample = AggregatedCS(data.X[idx], data.y[idx], s, data.k)
        model = self.build(sample)
        outcome = solve_own(solve, model, "initial sample Crammer-Singer SVM", need_duals=True)
        w, _ = model_cs.solution_from(model, outcome.duals)
        fit = _lifted(data, w, None)
        scores = np.asarray(data.X @ w.T)
        labels = np.zeros(data.n, dtype=np.int64)
        offset = 0
        total = data.s.sum()
        for c in range(data.k):  # class-pure clusters, sized by class weight
            rows = np.flatnonzero(data.y == c)
            count = max(1, min(rows.size, round(n_clusters * data.s[rows].sum() / total)))
            labels[rows] = offset + one_step_kmeans(scores[rows], count, rng)
            offset += count
        return Partition.from_labels(labels), fit

    def aggregate(self, data, partition: Partition, previous=None) -> AggregatedCS:
        if partition.n_clusters == partition.n and np.array_equal(
                partition.labels, np.arange(partition.n)):  # the direct solve: the rows themselves
            return AggregatedCS(data.X, data.y, data.s, data.k)
        W, (Xbar,) = partition.weighted_means(data.s, data.X)
        y = partition.max(data.y).astype(np.int64)
        if not np.array_equal(partition.min(data.y).astype(np.int64), y):
            raise ValueError("a cluster holds rows of two classes: the Crammer-Singer partition "
                             "must be class-pure")
        return AggregatedCS(Xbar, y, W, data.k)

    def build(self, aggregated: AggregatedCS, form: str | None = None):
        return model_cs.create_instance(aggregated.X, aggregated.y, aggregated.k, aggregated.w,
                                        self.C, self.norm)

    def lift(self, model, outcome, partition, aggregated, data) -> Lifted:
        w, alpha_bar = model_cs.solution_from(model, outcome.duals)
        alpha = None
        if alpha_bar is not None:
            alpha = data.s[:, None] * (alpha_bar / aggregated.w[:, None])[partition.labels]
        return _lifted(data, w, alpha)

    def lower_bound(self, outcome, partition, data, lifted=None) -> float | None:
        """The aggregated optimum: the aggregated model is a relaxation (module docstring)."""
        return outcome.bound

    def evaluate(self, data, lifted: Lifted) -> float:
        hinge = lifted.state.values.max(axis=1)  # >= 0: the piece y_i is 0
        return regularizer_value(lifted.solution["w"], self.norm) + self.C * float(data.s @ hinge)

    def split(self, partition: Partition, data, lifted: Lifted) -> Split:
        violating = self.violating_clusters(partition, lifted)
        if not violating.any():
            return Split(None, 0)
        group = np.where(violating[partition.labels], lifted.state.values.argmax(axis=1), 0)
        return Split(partition.refine(group), int(violating.sum()))

    def certify(self, data, best: Iterate, *, bound: Iterate, solve, tol, feasibility_tol=1e-6,
                history=()) -> Certificate:
        """:func:`certificate` of the best w with the lifted duals of the bound iterate."""
        alpha = bound.lifted.solution["alpha"]
        if alpha is None:
            raise SolverError("the Crammer-Singer certificate needs the margin rows' duals; the "
                              "solver returned none")
        return certificate(data, best.lifted.solution["w"], alpha, C=self.C, norm=self.norm,
                           tol=tol, feasibility_tol=feasibility_tol,
                           sign_condition=None if best.split is None else best.split.holds)

    # ----------------------------------------------------------------- helpers
    @staticmethod
    def violating_clusters(partition: Partition, lifted: Lifted) -> np.ndarray:
        """Boolean (K,): clusters whose rows share no active piece (within ``eps``)."""
        values, eps = lifted.state.values, lifted.state.eps
        active = values >= values.max(axis=1, keepdims=True) - eps
        shared = partition.sum(active.astype(float))  # (K, k): rows of G active in piece r
        return ~(shared >= partition.counts[:, None] - 0.5).any(axis=1)


def _lifted(data, w, alpha) -> Lifted:
    """The weights ``w`` (k, m) on the full data: piece values and their tolerance."""
    values, eps = piece_values(data.X, data.y, w)
    return Lifted({"w": np.asarray(w, dtype=float), "alpha": alpha},
                  CSState(values, eps))


def certificate(data, w, alpha, *, C: float, norm: str, tol: float, feasibility_tol: float = 1e-6,
                method: str = "solver_duals", sign_condition=None) -> Certificate:
    r"""Check that ``w`` (k, m) is optimal for the Crammer–Singer SVM on ``data``, with the dual
    point ``alpha`` (n, k).

    Weak duality: for every :math:`\alpha \ge 0` with :math:`\sum_{r \ne y_i} \alpha_{ir} \le C
    s_i` and :math:`v = ` :func:`dual_weights`, every w' has :math:`E(w') \ge \sum_{i,r}
    \alpha_{ir} - R^*(v)`: the Lagrangian of the margin rows (multipliers :math:`\alpha_{ir}`) and
    of :math:`\xi \ge 0` (multipliers :math:`C s_i - \sum_r \alpha_{ir} \ge 0`) is
    :math:`\sum \alpha + R(w) - \sum_q v_q' w_q`, and its minimum over w is
    :math:`\sum\alpha - R^*(v)`, with :math:`R^*(v) = \tfrac12 \|v\|_F^2` (2-norm) or 0 when
    :math:`\max_{q,j} |v_{qj}| \le 1` (1-norm; :math:`-\infty` otherwise).

    Before anything is computed, ``alpha`` is made exactly feasible: its own-class column is
    zeroed, negatives clipped, and each row whose sum exceeds :math:`C s_i` scaled down to it;
    for the 1-norm, all of it is divided by :math:`t = \max(1, \max |v|)`. Each step keeps it
    feasible, so the dual value is a rigorous bound. Checked (within ``feasibility_tol``): how far
    the given ``alpha`` was outside its set (negatives, an own-class entry, row sums above
    :math:`C s_i`), scaled by :math:`\max(1, C \max_i s_i)`. Reported: the dual-norm excess
    :math:`t - 1` (1-norm), stationarity :math:`\max |w - v| / \max(1, \max |w|)` (2-norm).
    ``certified`` requires the checked residual and the relative gap :math:`(E - D) / |E|` within
    ``tol``; :math:`E` is computed on all rows.
    """
    w = np.asarray(w, dtype=float)
    given = np.asarray(alpha, dtype=float)
    n = data.n
    if given.shape != (n, data.k) or w.shape != (data.k, data.m):
        raise ValueError(f"alpha must be (n, k) = ({n}, {data.k}) and w (k, m) = ({data.k}, "
                         f"{data.m}); got {given.shape} and {w.shape}")
    values, _ = piece_values(data.X, data.y, w)
    primal = regularizer_value(w, norm) + C * float(data.s @ values.max(axis=1))
    rows = np.arange(n)
    cap = C * data.s
    own = np.abs(given[rows, data.y])
    alpha = np.maximum(given, 0.0)
    alpha[rows, data.y] = 0.0
    total = alpha.sum(axis=1)
    excess = max(float(np.maximum(-given, 0.0).max(initial=0.0)), float(own.max(initial=0.0)),
                 float(np.maximum(total - cap, 0.0).max(initial=0.0)))
    scale = np.where(total > cap, cap / np.where(total > 0, total, 1.0), 1.0)
    alpha *= scale[:, None]
    residuals = {"dual bound alpha>=0, sum_r alpha_ir<=Cs_i": excess / max(1.0, float(cap.max()))}
    checked = list(residuals)
    v = dual_weights(data.X, data.y, alpha)
    if norm == "l2":
        dual = float(alpha.sum()) - 0.5 * float(np.sum(v * v))
        residuals["stationarity |w - v|"] = float(
            np.abs(w - v).max(initial=0.0) / max(1.0, float(np.abs(w).max(initial=0.0))))
    else:
        t = float(np.abs(v).max(initial=0.0))
        residuals["dual norm excess"] = max(1.0, t) - 1.0
        dual = float(alpha.sum()) / max(1.0, t)
    feasible = all(residuals[key] <= feasibility_tol for key in checked)
    rel_gap = (primal - dual) / max(np.finfo(float).tiny, abs(primal))
    return Certificate(
        method=method, certified=bool(feasible and rel_gap <= tol), primal_objective=primal,
        dual_objective=dual, relative_gap=float(rel_gap), residuals=residuals, tol=tol,
        feasibility_tol=feasibility_tol, sign_condition=sign_condition, checked=checked,
        dual_values={"alpha": given}, condition=SHARED_PIECE,
    )
