r"""AID plug-in for the semi-supervised SVM (Park & Klabjan 2016, section 3.3).

The original problem is the big-M MIQP / MILP of :mod:`aidopt.models.s3vm` on all rows. Under AID
the labeled rows are grouped into label-pure clusters and the unlabeled rows into clusters that
share one binary :math:`\bar d_k`; the aggregated problem is the same model on the centroids,
weighted by the cluster sizes (eq. 15).

* **Initial partition**: one k-means on the unlabeled rows with ``ceil(r0 * size)`` clusters
  (at least ten); the labeled rows stay single unless there are more than
  ``aggregate_labeled_above`` (1000) of them, then one k-means per class likewise.
* **Lift** (Lemma 1): :math:`d_i = 1` iff :math:`w x_i + b \ge 0`, so every unlabeled row pays
  :math:`\max(0, 1 - |w x_i + b|)`; :math:`\xi_i` is the labeled hinge. ``E_t`` is the objective
  of this solution on the full data.
* **Split** (Step 3): a labeled cluster whose rows have both signs of :math:`1 - y_i(w x_i + b)` is
  split into two; an unlabeled cluster is split into up to four by the sign of
  :math:`w x_i + b` and the sign of :math:`1 - \tilde d_k (w x_i + b)`, with
  :math:`\tilde d_k = 2 \bar d_k - 1`.
* **Stop** (Prop. 5): no cluster needs splitting. Then every hinge is linear on every cluster, so
  ``E_t = F_t``, and with every aggregated MIP solved to optimality the solution is optimal among
  all labellings that are constant on the final clusters. This is the paper's optimality notion;
  it is **not** a global certificate: the unlabeled loss :math:`\max(0, 1 - |f|)` is not convex,
  so an aggregated problem is not a relaxation of the original, ``F_t`` is no lower bound and is
  not monotone (docs/s3vm.md). aidopt reports ``prop5_optimal`` and never ``certified_optimal``
  for an AID run; a direct solve reports the MIP solver's own bound.

Big-M (:func:`big_m`): every aggregated problem gets a bound on :math:`1 + |w x_k + b|` derived from
an objective value ``U`` that the optimum cannot exceed (the value of a known feasible point).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from aidopt.decomposition.clustering import kmeans_rows
from aidopt.decomposition.mip import cluster_certificate, mip_gap, mip_options, original_bound_certificate, row_norms
from aidopt.decomposition.partition import Partition
from aidopt.decomposition.protocol import AIDProblem, Iterate, Lifted, Split, Stop
from aidopt.models import s3vm
from scipy import sparse

from aidopt.results import Certificate, Termination
from aidopt.solvers import ProblemClass

__all__ = ["S3VMProblem", "AggregatedS3VM", "S3VMState", "big_m", "BALANCES"]

SIGN_TOL = 1e-9
KMEANS_ITER = 10
#: sparse centroids are made dense for the span reduction (:meth:`S3VMProblem.reduce`) up to
#: this many entries (8 MB)
REDUCE_DENSE_ENTRIES = 1_000_000
BALANCES = ("constraint", "cost", None)


@dataclass
class AggregatedS3VM:
    """The aggregated data of one iteration: labeled centroids ``Xl`` with labels ``yl`` and
    weights ``cl`` (sizes times balance cost), unlabeled centroids ``Xu`` with sizes ``cu``;
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
    trial_upper: float | None = None
    """Twice the previous iteration's aggregated optimum: the trial value the big-M of
    :meth:`S3VMProblem.build` starts from (verified after the solve by ``rebuild``)."""
    reduced: AggregatedS3VM | None = None
    """The same data in the span of the centroids (l2, K < m), else ``None``."""
    basis: np.ndarray | None = None
    """Orthonormal basis Q of that span: ``w = Q z``."""
    trivial: bool = False
    """Every row its own cluster: the aggregated model is the original one."""

    @property
    def model_data(self) -> AggregatedS3VM:
        """What the MIP is built on: the reduced data when there is one."""
        return self.reduced if self.reduced is not None else self


def big_m(agg: AggregatedS3VM, Ml: float, regularizer: str, upper: float | None = None) -> np.ndarray:
    r"""Valid big-M values for the aggregated (or original) S3VM: for every unlabeled row k a
    bound on :math:`1 + |w x_k + b|` at every optimum.

    With ``U`` (default ``agg.upper``) at least the optimal value, an optimum has :math:`R(w) \le U`, so
    :math:`\|w\|_2 \le \sqrt{2U}` (l2) or :math:`\|w\|_1 \le U` (l1), and
    :math:`|w z| \le \|w\| \|z\|_*` (:math:`\|\cdot\|_2` resp. :math:`\|\cdot\|_\infty`).
    With the balance row, :math:`b = \bar y - w \bar x_U`, so
    :math:`|w x_k + b| \le |\bar y| + \|w\| \|x_k - \bar x_U\|_*`. Without it, a labeled row j of
    class -1 pays :math:`M_l c_j \xi_j \ge M_l c_j (1 + b - \|w\| \|x_j\|_*)`, at most U, so
    :math:`b \le U / (M_l c_j) - 1 + \|w\| \|x_j\|_*`; symmetrically for class +1; and then
    :math:`|w x_k + b| \le \|w\| \|x_k\|_* + |b|`.
    """
    U = max(float(agg.upper if upper is None else upper), 0.0)
    w_bound = math.sqrt(2.0 * U) if regularizer == "l2" else U
    dual = "l2" if regularizer == "l2" else "inf"  # the dual norm; sparse rows: row_norms
    if agg.ybar is not None:
        mean_u = np.asarray(agg.cu @ agg.Xu).ravel() / agg.cu.sum()
        reach = abs(agg.ybar) + w_bound * row_norms(agg.Xu, dual, mean_u)
    else:
        per_row = U / (Ml * agg.cl) - 1.0 + w_bound * row_norms(agg.Xl, dual)
        b_bound = max(float(per_row[agg.yl == sign].min()) for sign in (-1.0, 1.0))
        reach = w_bound * row_norms(agg.Xu, dual) + max(b_bound, 0.0)
    return (1.0 + reach) * (1.0 + 1e-9) + 1e-9


@dataclass
class S3VMState:
    """Lemma 1's side of the hyperplane chosen for each unlabeled row's cluster (+1 / -1; 0 on
    labeled rows) and the sign tolerance."""

    side: np.ndarray
    eps: float


class S3VMProblem(AIDProblem):
    """Semi-supervised SVM under AID.

    Parameters
    ----------
    Ml, Mu : float
        Costs of the labeled and unlabeled hinges (paper: M_l = 5, M_u = 1).
    balance : {"constraint", "cost", None}
        ``"constraint"``: mean of ``w x + b`` over the unlabeled rows = mean labeled label
        (Park & Klabjan section 4, "balance constraint"), or ``2 positive_fraction - 1`` when
        that is given; ``"cost"``: the labeled rows of each class get the weight ``l_max / l_class`` (the
        minority class is weighted up to the majority's total); ``None``: neither.
    norm : {"l2", "l1"}
        ``"l2"``: 1/2 ||w||^2 (MIQP: Gurobi or SCIP); ``"l1"``: ||w||_1 (MILP: HiGHS too).
    big_M : float, optional
        Override the data-derived big-M (see :func:`big_m`). A value below the true bound
        changes the problem; it is used as given.
    positive_fraction : float, optional
        The share of the unlabeled rows known to be in class +1 (0 < value < 1), as in
        SVMlight's ``-p``: the balance constraint's right-hand side becomes its mean label
        ``2 positive_fraction - 1`` instead of the labeled rows' mean, which with few labels
        can be far from it (10 labels: a mean of 0.2 or 0.4 on classes of equal size).
        ``balance="constraint"`` only.
    aggregate_labeled_above : int, default 1000
        Labeled rows are clustered (k-means per class, ``ceil(r0 * size)`` clusters) only when
        there are more than this many; otherwise each is its own cluster at t = 1. They add
        continuous variables only (the binaries belong to the unlabeled clusters), and
        aggregating 100 labeled rows into two centroids lost what they carry (AID1 accuracy on
        the SSL sets, docs/s3vm.md).
    """

    name = "s3vm"
    needs_duals = False

    def __init__(self, Ml: float = 5.0, Mu: float = 1.0, balance: str | None = "constraint",
                 norm: str = "l2", big_M: float | None = None,
                 aggregate_labeled_above: int = 1000, positive_fraction: float | None = None):
        for name, val, positive in (("Ml", Ml, True), ("Mu", Mu, False)):
            if not (isinstance(val, numbers.Real) and not isinstance(val, bool) and np.isfinite(val)
                    and (val > 0 if positive else val >= 0)):
                raise ValueError(f"{name} must be a {'positive' if positive else 'non-negative'} "
                                 f"finite number, got {val!r}")
        if balance not in BALANCES:
            raise ValueError(f"balance must be 'constraint', 'cost' or None, got {balance!r}")
        if norm not in s3vm.REGULARIZERS:
            raise ValueError(f"norm must be 'l2' or 'l1', got {norm!r}")
        if big_M is not None and not (isinstance(big_M, numbers.Real) and np.isfinite(big_M)
                                      and big_M > 1):
            raise ValueError(f"big_M must be a finite number > 1, got {big_M!r}")
        if not (isinstance(aggregate_labeled_above, numbers.Integral) and aggregate_labeled_above >= 0):
            raise ValueError("aggregate_labeled_above must be a non-negative integer, got "
                             f"{aggregate_labeled_above!r}")
        if positive_fraction is not None:
            if not (isinstance(positive_fraction, numbers.Real) and not isinstance(positive_fraction, bool)
                    and 0.0 < positive_fraction < 1.0):
                raise ValueError("positive_fraction must be a number strictly between 0 and 1, "
                                 f"got {positive_fraction!r}")
            if balance != "constraint":
                raise ValueError("positive_fraction sets the balance constraint's right-hand "
                                 f"side: it needs balance='constraint', got balance={balance!r}")
        self.positive_fraction = None if positive_fraction is None else float(positive_fraction)
        self.aggregate_labeled_above = int(aggregate_labeled_above)
        self.Ml, self.Mu = float(Ml), float(Mu)
        self.balance = balance
        self.norm = norm
        self.big_M = None if big_M is None else float(big_M)
        self.problem_class = ProblemClass.MIQP if norm == "l2" else ProblemClass.MILP

    # ----------------------------------------------------------------- contract
    def solver_defaults(self, solver: str) -> dict:
        """MIP gap tolerances tighter than the solvers' defaults (most stop at 1e-4)."""
        return mip_options(solver, self.problem_class)

    def default_r0(self, size: int, data) -> float:
        """0.01 for n <= 10^4, else 0.0001: the smaller of the two rates Park & Klabjan tested
        in each range (section 4), as their section 5.2 recommends (the smallest rate whose
        aggregated problem is not trivial; ``min_clusters`` keeps at least 12 clusters). Applied
        to the labeled classes and the unlabeled rows separately. The former default 0.05 gave
        75 binaries on Digit1 (n = 1,500), an MIQP SCIP did not finish in 13 minutes."""
        return 0.01 if size <= 10_000 else 0.0001

    def min_clusters(self, data) -> int:
        return 12

    def cost(self, data) -> np.ndarray:
        """Per-row hinge weight: the balance cost on labeled rows, 1 elsewhere."""
        cost = np.ones(data.n)
        if self.balance == "cost":
            counts = {sign: int((data.y == sign).sum()) for sign in (-1.0, 1.0)}
            for sign, count in counts.items():
                cost[data.y == sign] = max(counts.values()) / count
        return cost

    def ybar(self, data) -> float | None:
        """The balance constraint's right-hand side: the mean label the unlabeled rows' ``w x + b``
        must average (``None`` without the constraint)."""
        if self.balance != "constraint":
            return None
        if self.positive_fraction is not None:
            return 2.0 * self.positive_fraction - 1.0
        return float(data.y[data.labeled].mean())

    def initial_partition(self, data, n_clusters, rng, solve) -> Partition:
        r0 = n_clusters / data.n
        labels = np.zeros(data.n, dtype=np.int64)
        offset = 0
        keep = data.n_labeled <= self.aggregate_labeled_above  # labeled rows stay single
        groups = [(data.y == -1.0, 1), (data.y == 1.0, 1), (~data.labeled, 10)]
        for mask, least in groups:
            rows = np.flatnonzero(mask)
            k = int(min(rows.size, max(least, math.ceil(r0 * rows.size))))
            if keep and mask is not groups[2][0]:
                k = rows.size
            if k == rows.size:
                part = np.arange(k)
            else:  # a sparse X: on a sketch of its rows (kmeans_rows)
                part = kmeans_rows(data.X[rows], k, rng, KMEANS_ITER)
            labels[rows] = offset + part
            offset += k
        return Partition.from_labels(labels)

    def aggregate(self, data, partition: Partition, previous: Iterate | None = None) -> AggregatedS3VM:
        """Centroids, sizes and balance costs; the upper bound from w = 0 and the previous
        iterate, the trial upper bound 2 F_{t-1} for the big-M, and the span reduction."""
        cost = self.cost(data)
        W, (Xbar, ybar_k, lab_k, cost_k) = partition.weighted_means(
            data.s, data.X, data.y, data.labeled.astype(float), cost)
        is_l = lab_k > 0.5
        l_index, u_index = np.flatnonzero(is_l), np.flatnonzero(~is_l)
        agg = AggregatedS3VM(
            Xl=Xbar[l_index], yl=np.sign(ybar_k[l_index]), cl=(W * cost_k)[l_index],
            Xu=Xbar[u_index], cu=W[u_index], l_index=l_index, u_index=u_index,
            ybar=self.ybar(data), upper=math.inf,
        )
        last = None if previous is None else (previous.lifted.solution["w"],
                                              previous.lifted.solution["b"])
        agg.upper = self._upper_bound(agg, last)
        agg.trivial = partition.n_clusters == data.n
        # the original model (every row its own cluster) always gets a big-M valid by
        # construction, so that its MIP bound is a bound even when the solve stops early
        if previous is not None and math.isfinite(previous.F_t) and not agg.trivial:
            agg.trial_upper = min(agg.upper, 2.0 * max(previous.F_t, 1.0))
        agg.reduced, agg.basis = self.reduce(agg)
        return agg

    def build(self, aggregated: AggregatedS3VM, form=None, upper: float | None = None):
        """The aggregated MIP. Its big-M comes from ``upper`` when given, else from the trial
        value ``aggregated.trial_upper`` (verified after the solve by :meth:`rebuild`), else from
        the known feasible point's objective ``aggregated.upper``."""
        a = aggregated.model_data
        if self.big_M is not None:
            M = np.full(a.Xu.shape[0], self.big_M)
        else:
            M = big_m(a, self.Ml, self.norm, upper=upper if upper is not None
                      else aggregated.trial_upper)
        return s3vm.create_instance(
            a.Xl, a.yl, a.cl, a.Xu, a.cu, Ml=self.Ml, Mu=self.Mu, bigM=M,
            regularizer=self.norm, ybar=a.ybar,
        )

    def rebuild(self, model, outcome, aggregated: AggregatedS3VM):
        r"""Verify the big-M of ``model`` after a solve; a model with a valid one if it fails.

        For any big-M the model's objective G(w, b) is at least the S3VM objective H(w, b) and
        equal where every :math:`1 + |w x_k + b| \le M_k`; so the solved value G* is at least
        the optimum H*, and every optimum of H has :math:`R(w) \le H^* \le G^*`. If the big-M
        :func:`big_m` derives from U = G* is not above the one used, then an optimum of H lies
        where G = H, hence G* = H* and the solution is optimal for H. Otherwise the model is
        rebuilt with the big-M of U = G* (valid) and solved once more.
        """
        if self.big_M is not None or outcome.objective is None or getattr(model, "_valid_big_m", False):
            return None  # a rebuilt model's big-M comes from an upper bound: valid, not re-checked
        G = float(outcome.objective) * (1.0 + 1e-6) + 1e-9
        needed = big_m(aggregated.model_data, self.Ml, self.norm, upper=G)
        if np.all(needed <= _big_m_of(model)):
            return None
        rebuilt = self.build(aggregated, upper=min(G, aggregated.upper))
        rebuilt._valid_big_m = True
        return rebuilt

    def on_nonoptimal(self, outcome) -> bool:
        """A MIP stopped at the time limit or by Ctrl-C: its incumbent is feasible (any (w, b)
        is)."""
        return outcome.stopped and outcome.has_solution

    def lift(self, model, outcome, partition, aggregated, data) -> Lifted:
        z, b, dbar = s3vm.solution_from(model)
        w = z if aggregated.basis is None else aggregated.basis @ z
        f = data.X @ w + b
        side_k = np.zeros(partition.n_clusters)
        side_k[aggregated.u_index] = 2.0 * dbar - 1.0
        objective, bound = outcome.objective, outcome.bound
        gap = mip_gap(objective, bound)
        solution = {"w": w, "b": b, "decision": f, "mip_gap": gap}
        state = S3VMState(side_k[partition.labels], SIGN_TOL * max(1.0, float(np.abs(f).max(initial=0.0))))
        M = _big_m_of(model)
        info = {"mip_gap": gap, "big_M": float(M.max(initial=0.0)),
                "big_M_verified": float(self._verified(M, aggregated, objective)),
                "mip_bound": math.nan if bound is None else float(bound)}
        return Lifted(solution, state, info)

    def _verified(self, M, aggregated: AggregatedS3VM, objective) -> bool:
        """Whether the big-M ``M`` of a solved model is valid for the S3VM it stands for: either
        derived from an upper bound known in advance (the objective of a feasible point), or
        checked after the solve: with U = the solve's objective (>= the model's optimum >= the
        S3VM's), ``big_m(U)`` must not exceed it (see :meth:`rebuild`). A user's ``big_M`` is
        only ever checked."""
        data = aggregated.model_data
        if self.big_M is None and np.all(M >= big_m(data, self.Ml, self.norm, upper=aggregated.upper)
                                         * (1.0 - 1e-12)):
            return True
        if objective is None or not math.isfinite(objective):
            return False
        U = float(objective) * (1.0 + 1e-6) + 1e-9
        return bool(np.all(big_m(data, self.Ml, self.norm, upper=U) <= M))

    def lower_bound(self, outcome, partition, data, lifted=None) -> float | None:
        """Only the MIP solver's dual bound on the *original* model (every row its own cluster,
        with a big-M valid by construction) bounds the optimum: an aggregated S3VM is not a
        relaxation (module docstring); a user's ``big_M`` may cut optima off, so it proves
        nothing in advance (``certify`` checks it after the solve)."""
        if partition.n_clusters != data.n or self.big_M is not None:
            return None
        return outcome.bound

    def evaluate(self, data, lifted: Lifted) -> float:
        f = lifted.solution["decision"]
        lab = data.labeled
        hinge = np.maximum(1.0 - data.y[lab] * f[lab], 0.0)
        unlabeled = np.maximum(1.0 - np.abs(f[~lab]), 0.0)
        return (self._regularizer_value(lifted.solution["w"])
                + self.Ml * float(self.cost(data)[lab] @ hinge) + self.Mu * float(unlabeled.sum()))

    def split(self, partition: Partition, data, lifted: Lifted) -> Split:
        f, eps, lab = lifted.solution["decision"], lifted.state.eps, data.labeled
        slack = np.where(lab, 1.0 - data.y * f, 0.0)  # labeled: inside the margin or not
        side = np.where(lab, 0.0, f)  # unlabeled: which side of the hyperplane (Lemma 1's d_i)
        active = np.where(lab, 0.0, 1.0 - lifted.state.side * f)  # unlabeled: hinge active
        mixed = (partition.mixed(slack, eps) | partition.mixed(side, eps)
                 | partition.mixed(active, eps))
        if not mixed.any():
            return Split(None, 0)
        group = (slack > eps).astype(np.int64) + (side > eps) + 2 * (active > eps)
        return Split(partition.refine(np.where(mixed[partition.labels], group, 0)), int(mixed.sum()))

    def certify(self, data, best: Iterate, *, bound: Iterate, solve, tol, feasibility_tol=1e-6,
                history=()) -> Certificate:
        # the original MIP's own branch-and-bound bound: a bound only with a valid big-M
        certificate, residuals = original_bound_certificate(
            data.n, best, bound, history, tol=tol, feasibility_tol=feasibility_tol,
            reference="docs/s3vm.md")
        if certificate is not None:
            return certificate
        return cluster_certificate(
            best.E_t, None if best.split is None else best.split.n_split, method="prop5",
            condition="Prop. 5", tol=tol, feasibility_tol=feasibility_tol, residuals=residuals,
            name="Prop. 5")

    def final_termination(self, stop: Stop, certificate, best) -> Termination:
        """``prop5_optimal`` when the loop stopped on Prop. 5 and the returned solution is the
        iterate at which it held; ``prop5_not_best`` when an earlier iterate is better."""
        if (stop is Stop.CONDITION and certificate is not None and not certificate.certified
                and certificate.method == "prop5"):
            return Termination.PROP5_OPTIMAL if certificate.sign_condition else Termination.PROP5_NOT_BEST
        return super().final_termination(stop, certificate, best)

    def fallbacks(self, solver: str) -> list[tuple[str, None]]:
        """SCIP when another solver fails or a size-limited licence refuses a (larger)
        aggregated model."""
        return [("scip", None)] if solver != "scip" else []

    # ----------------------------------------------------------------- helpers
    def reduce(self, agg: AggregatedS3VM) -> tuple[AggregatedS3VM | None, np.ndarray | None]:
        r"""The l2 model in the span of the centroids (representer theorem), when K < m.

        Every decision value :math:`w x_k` and the balance row depend on w only through its
        projection on the row space of the K centroids, and :math:`\tfrac12\|w\|^2` only grows
        with the orthogonal part, so an optimal w lies in that space: with an orthonormal basis
        Q (m x r, from the SVD of the centroids) the model is solved in ``z`` with features
        :math:`x_k Q` and ``w = Q z``, an exact reformulation with r <= K instead of m variables.
        The norms the big-M uses do not grow (:math:`\|x_k Q\| \le \|x_k\|`). Not for l1.
        Returns ``(reduced data, Q)`` or ``(None, None)``.

        Sparse centroids (a sparse X) are made dense for the SVD only when they are a derived
        piece: an aggregated problem (``agg.trivial`` False) of at most
        :data:`REDUCE_DENSE_ENTRIES` entries; otherwise (the original rows, or a large K x m)
        the model keeps w and the rows' stored entries (the same optimum, m variables).
        """
        K, m = agg.Xl.shape[0] + agg.Xu.shape[0], agg.Xl.shape[1]
        if self.norm != "l2" or K >= m:
            return None, None
        if sparse.issparse(agg.Xl):
            if agg.trivial or K * m > REDUCE_DENSE_ENTRIES:
                return None, None
            rows = sparse.vstack([agg.Xl, agg.Xu]).toarray()  # K x m centroids, not X
        else:
            rows = np.vstack([agg.Xl, agg.Xu])
        _, sing, vt = np.linalg.svd(rows, full_matrices=False)
        rank = int((sing > sing.max(initial=0.0) * 1e-12).sum())
        basis = vt[:rank].T
        reduced = AggregatedS3VM(
            Xl=agg.Xl @ basis, yl=agg.yl, cl=agg.cl, Xu=agg.Xu @ basis, cu=agg.cu,
            l_index=agg.l_index, u_index=agg.u_index, ybar=agg.ybar, upper=agg.upper,
        )
        return reduced, basis

    def _regularizer_value(self, w) -> float:
        return 0.5 * float(w @ w) if self.norm == "l2" else float(np.abs(w).sum())

    def _aggregated_objective(self, agg: AggregatedS3VM, w, b) -> float:
        hinge = np.maximum(1.0 - agg.yl * (agg.Xl @ w + b), 0.0)
        unlabeled = np.maximum(1.0 - np.abs(agg.Xu @ w + b), 0.0)
        return self._regularizer_value(w) + self.Ml * float(agg.cl @ hinge) + self.Mu * float(
            agg.cu @ unlabeled)

    def _upper_bound(self, agg: AggregatedS3VM, previous) -> float:
        """The aggregated objective of w = 0 (b = ybar with the balance row) and of the previous
        iterate's (w, b), which satisfies the same balance row: the optimum is at most the
        smaller."""
        m = agg.Xl.shape[1]
        candidates = [(np.zeros(m), agg.ybar if agg.ybar is not None else 0.0)]
        if previous is not None and previous[0].shape == (m,):
            candidates.append(previous)
        return min(self._aggregated_objective(agg, w, b) for w, b in candidates)


def _big_m_of(model) -> np.ndarray:
    """The big-M values a built S3VM model uses, in the order of its unlabeled rows."""
    return np.array([model.bigM[k] for k in model.U], dtype=float)
