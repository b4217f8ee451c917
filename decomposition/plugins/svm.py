r"""AID plug-in for linear soft-margin SVMs: 2-norm (QP), 1-norm, infinity-norm and RLP (LPs).

Park & Klabjan (2016), section 3.2. All four share the hinge loss
:math:`C \sum_i s_i \max(0, 1 - y_i(w x_i + b))` and differ in the regularizer
:math:`R(w) = \tfrac12\|w\|_2^2,\ \|w\|_1,\ \|w\|_\infty` or 0, so one plug-in serves them:

* **Aggregate**: label-pure clusters; centroids :math:`\bar x_k` (sample-weighted), label
  :math:`y_k`, weight :math:`W_k = \sum_{i \in C_k} s_i`.
* **Initial partition**: the same SVM on a random sample (cost scaled by n / sample size) gives a
  hyperplane; within each class, one k-means iteration on the distances to it.
* **Split**: a cluster holding both a row with :math:`1 - y_i(w x_i + b) > \epsilon` and one with
  :math:`< -\epsilon` is split into :math:`\{1 - y_i(w x_i + b) > \epsilon\}` and the rest. When no
  cluster is mixed, the aggregated hinge equals the full hinge, so :math:`F_t = E_t` and
  :math:`(w, b)` is optimal.
* **Certificate**: the aggregated duals (the QP's :math:`\bar\alpha`, the LPs' margin duals) are
  lifted to :math:`\alpha_i = s_i \bar\alpha_k / W_k`; on the full data we check
  :math:`0 \le \alpha_i \le C s_i`, :math:`\sum_i \alpha_i y_i = 0` and, with
  :math:`g = \sum_i \alpha_i y_i x_i`, the dual objective
  :math:`\sum_i \alpha_i - R^*(g)`: :math:`\tfrac12\|g\|^2` (2-norm), and for the LPs the dual-norm
  condition :math:`\|g\|_\infty \le 1` (1-norm), :math:`\|g\|_1 \le 1` (infinity-norm),
  :math:`g = 0` (RLP). For the two norm balls, :math:`\alpha` is divided by
  :math:`\max(1, \|g\|_*)`, which keeps it feasible and makes the bound rigorous.
  See :func:`certificate`.

The sign tolerance :math:`\epsilon = 10^{-9}\max(1, \max_i |w x_i + b|)` counts rows on the margin
(the support vectors a vertex / KKT solution puts exactly there, up to rounding) as on it.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass

import numpy as np
from aidopt.decomposition.clustering import one_step_kmeans, sample_rows
from aidopt.decomposition.partition import SIGN_PURE, Partition
from aidopt.decomposition.protocol import GAP_FLOOR, AIDProblem, Iterate, Lifted, Split, solve_own
from aidopt.models import lp_svm, svm
from scipy import sparse

from aidopt import solvers
from aidopt.numerics import fm
from aidopt.numerics.fm import FMResult, ferris_munson
from aidopt.results import Certificate
from aidopt.solvers import ProblemClass, SolverError

__all__ = ["SVMProblem", "AggregatedSVM", "SVMState", "certificate", "hinge_certificate",
           "polished_dual", "refined_l1_certificate", "regularizer_value", "solve_fm", "NORMS"]

SIGN_TOL = 1e-9
#: relative gap of the interior-point solve on the random sample that gives the initial plane
SAMPLE_GAP = 1e-6
NORMS = ("l2", "l1", "linf", "none")


@dataclass
class AggregatedSVM:
    """Centroids ``X`` (K, m), labels ``y`` (K,) in {-1, +1}, weights ``w`` (K,)."""

    X: np.ndarray
    y: np.ndarray
    w: np.ndarray


def regularizer_value(w, norm: str, weights=None) -> float:
    """R(w): 1/2 ||w||_2^2, ||w||_1 (weighted: sum_j r_j |w_j|), ||w||_inf or 0."""
    w = np.asarray(w, dtype=float)
    if norm == "l2":
        return 0.5 * float(w @ w)
    if norm == "l1":
        return float(np.abs(w).sum() if weights is None else np.abs(w) @ weights)
    if norm == "linf":
        return float(np.abs(w).max(initial=0.0))
    return 0.0


@dataclass
class SVMState:
    """Margin slacks ``1 - y_i (w x_i + b)`` on the full data and the sign tolerance."""

    slack: np.ndarray
    eps: float


class SVMProblem(AIDProblem):
    """Linear soft-margin SVM under AID.

    Parameters
    ----------
    C : float
        Misclassification cost (M in Park & Klabjan, nu in Bradley & Mangasarian).
    norm : {"l2", "l1", "linf", "none"}
        Regularizer; "none" is RLP.
    form : {"auto", "dual", "primal"}
        Which form of the aggregated QP / LP is solved. ``"auto"`` takes the dual when the solver
        returns duals, else the primal: the 2-norm dual because HiGHS's QP solver fails on the
        primal of overlapping data; the LP duals because they have m + 1 rows instead of |K| + 2m
        (docs/svm.md has the measurement).
    sample_size : int, optional
        Rows of the random sample whose SVM gives the initial hyperplane (default
        ``min(2000, max(10 m, 1000))``).
    feature_weights : array-like of shape (m,), optional
        Positive weights r of a weighted 1-norm ``sum_j r_j |w_j|`` (``norm="l1"`` only): one
        step (1.22) of FSV's successive linearization is this LP.
    """

    needs_duals = True
    per_element_keys = ("alpha",)
    #: ``"free"``: the offset b is not regularized (Park & Klabjan eq. 9); ``"regularized"`` adds
    #: 1/2 b^2 (the modified SVM (1.35), :class:`~.modified_svm.ModifiedSVMProblem`)
    bias = "free"

    def __init__(self, C: float = 1.0, norm: str = "l2", form: str = "auto",
                 sample_size: int | None = None, feature_weights=None):
        #: the 2-norm SVM offers the Ferris-Munson interior point (``solver="fm"``) and dual
        #: coordinate descent (``solver="dcd"``, for the full data of sparse or wide inputs)
        self.native_methods = ("fm", "dcd") if norm == "l2" else ()
        self.method: str | None = None
        if norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
        if not (isinstance(C, numbers.Real) and not isinstance(C, bool) and np.isfinite(C) and C > 0):
            raise ValueError(f"C must be a positive finite number, got {C!r}")
        if form not in ("auto", "dual", "primal"):
            raise ValueError(f"form must be 'auto', 'dual' or 'primal', got {form!r}")
        if sample_size is not None and not (
            isinstance(sample_size, numbers.Integral) and sample_size >= 2
        ):
            raise ValueError(f"sample_size must be an integer >= 2, got {sample_size!r}")
        if feature_weights is not None:
            feature_weights = np.asarray(feature_weights, dtype=float)
            if norm != "l1":
                raise ValueError("feature_weights apply to the 1-norm SVM (norm='l1') only")
            if feature_weights.ndim != 1 or not (np.all(np.isfinite(feature_weights))
                                                 and np.all(feature_weights > 0)):
                raise ValueError("feature_weights must be a 1-d array of positive finite numbers")
        self.feature_weights = feature_weights
        self.sample_size = sample_size
        self.C = float(C)
        self.norm = norm
        self.requested_form = form
        self.form = "dual" if form == "auto" else form
        self.problem_class = ProblemClass.QP if norm == "l2" else ProblemClass.LP
        self.name = f"svm_{norm}" if norm != "none" else "svm_rlp"

    # ----------------------------------------------------------------- contract
    def configure(self, solver_spec) -> None:
        self.method = solver_spec.name if (
            solver_spec is not None and solver_spec.name in self.native_methods) else None
        has_duals = solver_spec is None or solver_spec.duals
        if self.requested_form == "auto":
            self.form = "dual" if has_duals else "primal"
        elif self.form == "dual" and not has_duals:
            raise SolverError(
                f"form='dual' reads (w, b) or b from duals, which {solver_spec.name!r} does not "
                "return; use form='primal' or 'auto'"
            )
        self.needs_duals = has_duals

    def solver_defaults(self, solver: str) -> dict:
        """HiGHS: interior point without presolve for the LPs (as for LAD); the QP has one method
        (active set) and must not be given ``"solver": "ipm"`` (HiGHS would drop the Hessian)."""
        if solver == "highs" and self.norm != "l2":
            return {"solver": "ipm", "presolve": "off"}
        if solver == "clarabel":  # its relative gap tight enough for the scale-invariant certificate
            from aidopt.solvers.clarabel import TIGHT_GAP

            return dict(TIGHT_GAP)
        return {}

    def counters(self, data) -> dict[str, int]:
        """The passes over an out-of-core X (``data.counters()``; none in memory)."""
        return data.counters()

    def dimensions(self, data) -> dict[str, int]:
        """``n`` and ``m``, and ``nnz`` (stored entries) when X is a scipy sparse matrix."""
        dims = super().dimensions(data)
        if sparse.issparse(data.X):
            dims["nnz"] = int(data.X.nnz)
        return dims

    def gap_floor(self, data) -> float:
        """:func:`gap_floor` (none but for RLP: the gap is relative to E > 0)."""
        return gap_floor(data, self.C, self.norm)

    def default_r0(self, size: int, data) -> float:
        """The paper's r0 for SVM: max(1.1 m / n, 0.0001)."""
        return max(1.1 * data.m / size, 0.0001)

    def min_clusters(self, data) -> int:
        return 2

    def initial_partition(self, data, n_clusters, rng, solve) -> tuple[Partition, Lifted]:
        """Label-pure clusters of the distances to the plane of an SVM on a random sample;
        returns that plane too."""
        if n_clusters >= data.n:
            return self.trivial_partition(data)
        size = self.sample_size or min(2000, max(10 * data.m, 1000))
        idx = sample_rows(data.n, size, rng)
        if len(np.unique(data.y[idx])) < 2:  # make sure both classes are in the sample
            idx = np.union1d(idx, [np.flatnonzero(data.y < 0)[0], np.flatnonzero(data.y > 0)[0]])
        sample = AggregatedSVM(data.X[idx], data.y[idx], data.s[idx] * (data.s.sum() / data.s[idx].sum()))
        w, b = self._sample_plane(sample, solve)
        fit = _lifted(data, w, b, None)
        distance = data.y * (1.0 - fit.state.slack)  # = X w + b (y = +-1)
        labels = np.zeros(data.n, dtype=np.int64)
        offset = 0
        for sign in (-1.0, 1.0):  # label-pure clusters, sized by class weight
            rows = np.flatnonzero(data.y == sign)
            share = data.s[rows].sum() / data.s.sum()
            k = max(1, min(rows.size, round(n_clusters * share)))
            labels[rows] = offset + one_step_kmeans(distance[rows], k, rng)
            offset += k
        return Partition.from_labels(labels), fit

    def _sample_plane(self, sample: AggregatedSVM, solve) -> tuple[np.ndarray, float]:
        """``(w, b)`` of the SVM on the random sample, solved with the run's solver."""
        if self.method in ("fm", "dcd"):  # the sample is small and dense: the interior point
            res = ferris_munson(sample.X, sample.y, self.C * sample.w, bias=self.bias, tol=SAMPLE_GAP)
            return res.w, res.b
        model = self.build(sample)
        outcome = solve_own(solve, model, "initial sample SVM", need_duals=self.needs_duals)
        w, b, _ = self._read(model, outcome)
        return w, 0.0 if b is None else b

    def aggregate(self, data, partition: Partition, previous=None) -> AggregatedSVM:
        if sparse.issparse(data.X):  # the direct solve of sparse rows: the rows themselves
            if partition.n_clusters != partition.n:
                raise ValueError("AID's centroids need X dense: the SVM door densifies sparse X "
                                 "for AID; a scipy sparse X is solved directly (aid=False)")
            return AggregatedSVM(data.X, data.y, data.s)
        W, (Xbar, ybar) = partition.weighted_means(data.s, data.X, data.y)
        return AggregatedSVM(Xbar, np.sign(ybar), W)

    def build(self, aggregated: AggregatedSVM, form: str | None = None):
        if self.norm == "l2":  # a sparse X (the direct solve): rows of its stored entries
            return svm.create_instance(
                aggregated.X, aggregated.y, aggregated.w, self.C, form=form or self.form,
                bias=self.bias,
            )
        return lp_svm.create_instance(
            aggregated.X, aggregated.y, aggregated.w, self.C, self.norm, form=form or self.form,
            r=self.feature_weights,
        )

    def solve_native(self, method, aggregated: AggregatedSVM, previous, partition, *, tol,
                     time_limit, options) -> tuple[FMResult, solvers.SolveOutcome]:
        """The Ferris–Munson interior point (:func:`aidopt.numerics.fm.ferris_munson`) on the aggregated
        dual (:func:`solve_fm`), or dual coordinate descent (:func:`aidopt.numerics.dcd.dcd`) on
        CSR rows: on the full data (the trivial partition) it stops at half of ``tol``, the
        gap the certificate then checks."""
        if self.bias == "free" and len(np.unique(aggregated.y)) < 2:
            raise SolverError("the aggregated SVM has one class only")
        if method == "dcd":
            from aidopt.numerics.dcd import dcd

            rows = sparse.csr_matrix(aggregated.X)  # no copy for CSR float64 rows
            direct = partition.n_clusters == partition.n
            return solve_fm(lambda **kw: dcd(rows, aggregated.y, self.C * aggregated.w,
                                             bias=self.bias, **kw),
                            tol=tol, time_limit=time_limit, options=options, method="dcd",
                            max_iter=None, target=tol / 2 if direct else None)
        return solve_fm(lambda **kw: ferris_munson(aggregated.X, aggregated.y,
                                                   self.C * aggregated.w, bias=self.bias, **kw),
                        tol=tol, time_limit=time_limit, options=options)

    def on_nonoptimal(self, outcome: solvers.SolveOutcome) -> bool:
        """An interior-point or coordinate-descent iterate stopped by a limit (or Ctrl-C) is in
        the box and balanced: its plane is feasible and its dual value a valid bound, so it is
        lifted and evaluated."""
        return outcome.solver in ("fm", "dcd") and outcome.has_solution

    def lift(self, model, outcome, partition, aggregated, data) -> Lifted:
        w, b, alpha_bar = self._read(model, outcome)
        if w is None or b is None:
            raise SolverError("the dual SVM forms read (w, b) or b from duals; the solver gave none")
        alpha = None
        if alpha_bar is not None:
            alpha = data.s * (alpha_bar / aggregated.w)[partition.labels]
        return _lifted(data, w, b, alpha)

    def lower_bound(self, outcome, partition, data, lifted=None) -> float | None:
        """The aggregated optimum: the aggregated SVM is a relaxation (paper, section 3.2)."""
        return outcome.bound

    def evaluate(self, data, lifted: Lifted) -> float:
        hinge = np.maximum(lifted.state.slack, 0.0)
        b = lifted.solution["b"]
        offset = 0.5 * b * b if self.bias == "regularized" else 0.0
        return (regularizer_value(lifted.solution["w"], self.norm, self.feature_weights) + offset
                + self.C * float(data.s @ hinge))

    def split(self, partition: Partition, data, lifted: Lifted) -> Split:
        return Split(*partition.split_mixed(lifted.state.slack, lifted.state.eps))

    def certify(self, data, best: Iterate, *, bound: Iterate, solve, tol, feasibility_tol=1e-6,
                history=()) -> Certificate:
        """The certificate with the lifted duals of the bound iterate. For the LP norms, when
        they fail and came from an interior point (Clarabel: a dual slightly outside the
        dual-norm ball loses its excess from the bound), the same aggregated LP is re-solved
        by HiGHS for vertex duals, and the better certificate is kept."""
        alpha, method = bound.lifted.solution["alpha"], "solver_duals"
        if alpha is None:
            alpha, method = self._lifted_dual(bound, data, solve)

        def check(alpha, method):
            sol = best.lifted.solution
            return certificate(
                data, sol["w"], sol["b"], alpha, C=self.C, norm=self.norm, tol=tol,
                feasibility_tol=feasibility_tol, method=method,
                sign_condition=None if best.split is None else best.split.holds,
                weights=self.feature_weights, bias=self.bias,
            )

        cert = check(alpha, method)
        if not cert.certified and self.norm != "l2" and method == "solver_duals" \
                and bound.solver != "highs":
            vertex = check(*self._lifted_dual(bound, data, solve))
            if vertex.certified or vertex.relative_gap < cert.relative_gap:
                cert = vertex
        if not cert.certified and self.norm == "l1":
            cert = refined_l1_certificate(cert, check, data, best.lifted.solution["w"], C=self.C,
                                          weights=self.feature_weights)
        return cert

    def public_solution(self, best: Iterate, certificate: Certificate | None) -> dict:
        """The best (w, b); ``alpha`` from the certificate when the solver returned no duals."""
        solution = dict(best.lifted.solution)
        if solution["alpha"] is None and certificate is not None and certificate.dual_values:
            solution["alpha"] = certificate.dual_values["alpha"]
        return solution

    def fallbacks(self, solver: str) -> list[tuple[str, str | None]]:
        """The other form with the same solver (if it returns duals), then both forms with the
        other of HiGHS / Clarabel. An SVM is never infeasible nor unbounded: such a verdict is a
        solver's numerical failure (Clarabel reports the dual QP of a badly scaled weighted SVM
        "dual infeasible"), which the other form escapes."""
        if solver == "dcd":  # the full data: a Pyomo model would hold every entry of X
            return []
        if solver in self.native_methods:
            return [("clarabel", "dual"), ("clarabel", "primal")]
        other = "highs" if solver == "clarabel" else "clarabel"
        flip = "primal" if self.form == "dual" else "dual"
        spec = solvers.SOLVERS.get(solver)
        same = [(solver, flip)] if spec is None or spec.duals else []
        return [*same, (other, "dual"), (other, "primal")]

    # ----------------------------------------------------------------- helpers
    def _read(self, model, outcome):
        if isinstance(model, FMResult):
            return model.w, model.b, model.alpha
        if self.norm == "l2":
            return svm.solution_from(model, outcome.duals)
        return lp_svm.solution_from(model, outcome.duals)

    def _lifted_dual(self, bound: Iterate, data, solve):
        """Full-data alpha from the aggregated duals of :meth:`_dual_without_duals`."""
        alpha_bar, method = self._dual_without_duals(bound.aggregated, solve)
        return data.s * (alpha_bar / bound.aggregated.w)[bound.partition.labels], method

    def _dual_without_duals(self, aggregated, solve):
        """Aggregated dual values when the loop's solver returns no duals (SCIP).

        2-norm: solve the dual QP form with the same solver (its alpha are variables). LPs:
        re-solve the same aggregated LP with HiGHS, which returns duals.
        """
        what = "the solve for the certificate's duals"
        if self.norm == "l2":
            model = self.build(aggregated, form="dual")
            outcome = solve_own(solve, model, what, need_duals=False)
            method = "dual_qp"
        else:
            model = self.build(aggregated)
            outcome = solve_own(solve, model, what, need_duals=True, solver="highs")
            method = "highs_duals"
        alpha_bar = self._read(model, outcome)[2]
        return alpha_bar, method

    @staticmethod
    def mixed_clusters(partition: Partition, lifted: Lifted) -> np.ndarray:
        """Boolean (K,): clusters with a row strictly inside the margin or beyond it
        (slack > eps) and a row strictly outside (slack < -eps)."""
        return partition.mixed(lifted.state.slack, lifted.state.eps)


def check_native_call(method: str, options: dict, time_limit) -> None:
    """A native SVM method takes ``solver_options`` ``tol`` and ``max_iter`` only, and does not
    start when the time limit is already reached."""
    unknown = sorted(set(options) - {"tol", "max_iter"})
    if unknown:
        raise ValueError(f"solver={method!r} takes solver_options tol and max_iter, got {unknown}")
    if time_limit is not None and time_limit <= 0:
        raise solvers.TimeLimitReached(f"time limit reached before the {method} solve")


def solve_fm(ipm, *, tol, time_limit, options, method: str = "fm", max_iter: int | None = 200,
             target: float | None = None) -> tuple[FMResult, solvers.SolveOutcome]:
    """Run ``ipm(tol=, max_iter=, time_limit=)`` (:mod:`aidopt.numerics.fm`, or :mod:`aidopt.numerics.smo` with
    ``method="smo"``) to the relative gap ``target`` (default: 100 times below ``tol``, at most
    1e-9) unless ``solver_options`` (``tol``, ``max_iter``) say otherwise; a solve that stalled
    on rounding is accepted as optimal when its gap is within ``tol / 10``. Its dual value is
    the outcome's bound at any status (``alpha`` is in the box and balanced)."""
    from aidopt._version import __version__

    check_native_call(method, options, time_limit)
    start = time.perf_counter()
    target = min(1e-9, tol / 100) if target is None else target
    res = ipm(tol=options.get("tol", target),
              max_iter=options.get("max_iter", max_iter), time_limit=time_limit)
    status = {"optimal": solvers.SolveStatus.OPTIMAL, "time_limit": solvers.SolveStatus.TIME_LIMIT,
              "iteration_limit": solvers.SolveStatus.ITERATION_LIMIT,
              "interrupted": solvers.SolveStatus.INTERRUPTED,
              }.get(res.status, solvers.SolveStatus.ERROR)
    note = ""
    if res.status == "stalled" and res.gap <= tol / 10:  # rounding-limited, still well within tol
        status, note = solvers.SolveStatus.OPTIMAL, f", accepted: within tol / 10 = {tol / 10:.1e}"
    finite = bool(np.isfinite(res.objective) and np.isfinite(res.dual))
    return res, solvers.SolveOutcome(
        status, res.objective, None, finite, method, f"aidopt {__version__}",
        time.perf_counter() - start,
        f"{res.status} after {res.iterations} iterations (relative gap {res.gap:.2e}{note})",
        extra={"iterations": res.iterations}, bound=res.dual if finite else None)


def _lifted(data, w, b, alpha) -> Lifted:
    """The plane ``(w, b)`` on the full data: slacks ``1 - y (x w + b)`` and the tolerance of
    their signs."""
    f = data.X @ w + b
    eps = SIGN_TOL * max(1.0, float(np.abs(f).max()))
    return Lifted({"w": w, "b": b, "alpha": alpha}, SVMState(1.0 - data.y * f, eps))


def certificate(
    data, w, b, alpha, *, C: float, norm: str, tol: float, feasibility_tol: float = 1e-6,
    method: str = "given", sign_condition=None, weights=None, bias: str = "free",
) -> Certificate:
    r"""Check that ``(w, b)`` is optimal for the full-data SVM, with dual vector ``alpha``.

    Weak duality: for every :math:`\alpha` with :math:`0 \le \alpha_i \le C s_i` and
    :math:`\sum_i \alpha_i y_i = 0`, and :math:`g = \sum_i \alpha_i y_i x_i`, every ``(w', b')``
    has :math:`E(w', b') \ge \sum_i \alpha_i - R^*(g)` (Lagrangian of the hinge constraints, with
    :math:`R^*` the conjugate of the regularizer: :math:`\tfrac12\|g\|^2`; the indicator of
    :math:`\|g\|_\infty \le 1` (weighted 1-norm :math:`\sum_j r_j |w_j|`: :math:`|g_j| \le r_j`),
    :math:`\|g\|_1 \le 1`, or :math:`g = 0`). For the norm balls
    ``alpha`` is first divided by :math:`t = \max(1, \|g\|_*)`, which keeps it feasible, so the
    bound is rigorous; for RLP, :math:`\|g\|_\infty` is a residual that must be within
    ``feasibility_tol`` (scaled by the column sizes).

    ``alpha`` is clipped to :math:`[0, C s_i]` and then the class with the larger total is scaled
    down so that :math:`\sum \alpha_i y_i = 0` holds exactly (an unbalanced alpha bounds nothing:
    the Lagrangian is unbounded in b) before anything is computed from it. RLP's condition
    :math:`g = 0` cannot be restored that way: its bound holds up to
    :math:`\|g\|_\infty \|w^*\|_1`, which the checked stationarity residual keeps small.
    Checked (within ``feasibility_tol``): how far the given ``alpha`` was outside the box, scaled
    by :math:`\max(1, C \max_i s_i)` (absolute for small C: HiGHS's QP duals overshoot by its
    absolute tolerance, ~1e-7), :math:`|\sum \alpha_i y_i| / \max(1, \sum \alpha_i)` of the clipped
    ``alpha`` (before rebalancing), and for RLP :math:`\|g\|_\infty`. Reported: the dual-norm
    excess :math:`t - 1`, stationarity :math:`\|w - g\|_\infty` (2-norm), and complementarity:
    the largest term of
    :math:`\sum_i [(C s_i - \alpha_i)\xi_i + \alpha_i(\xi_i - 1 + y_i(w x_i + b))]`, the per-row
    decomposition of the gap. Stationarity and complementarity are implied by a small gap (for the
    2-norm, :math:`\tfrac12\|w - g\|^2 \le E - D`). ``certified`` requires the checked residuals
    and the relative gap :math:`(E - D)/\max(\phi, |E|)` within ``tol`` (:func:`gap_floor`:
    :math:`\phi` is 0 but for RLP).
    """
    w = np.asarray(w, dtype=float)
    f = data.X @ w + b
    regularized = bias == "regularized"
    if regularized and norm != "l2":
        raise ValueError("bias='regularized' is the modified 2-norm SVM (1.35): norm must be 'l2'")

    def dual_value(alpha, residuals):
        g = data.X.T @ (alpha * data.y)
        total = float(alpha.sum())
        if norm == "l2":
            residuals["stationarity |w - X'Dalpha|"] = float(
                np.abs(w - g).max(initial=0.0) / max(1.0, float(np.abs(w).max(initial=0.0)))
            )
            offset = float(alpha @ data.y) if regularized else 0.0  # b = sum alpha y in (1.37)
            return total - 0.5 * (float(g @ g) + offset * offset), []
        if norm in ("l1", "linf"):
            if norm == "l1":  # weighted 1-norm sum r_j |w_j|: its dual ball is |g_j| <= r_j
                t = float((np.abs(g) / (1.0 if weights is None else weights)).max(initial=0.0))
            else:
                t = float(np.abs(g).sum())
            residuals["dual norm excess"] = max(1.0, t) - 1.0
            return total / max(1.0, t), []
        stationarity = float(np.abs(g).max(initial=0.0) / max(1.0, C * float(data.column_scale.max())))
        residuals["stationarity |X'Dalpha|"] = stationarity
        return total, ["stationarity |X'Dalpha|"]

    regularizer = regularizer_value(w, norm, weights) + (0.5 * b * b if regularized else 0.0)
    return hinge_certificate(
        data, f, alpha, C=C, regularizer=regularizer, dual_value=dual_value,
        tol=tol, feasibility_tol=feasibility_tol, method=method, sign_condition=sign_condition,
        balanced=not regularized, floor=gap_floor(data, C, norm),
    )


#: :func:`polished_dual` solves its system only when it has at most this many entries
POLISH_ENTRIES = 4_000_000


def polished_dual(data, w, alpha, *, C: float, weights=None, rel: float = 1e-9):
    r"""The 1-norm SVM's dual vertex recomputed from its optimality conditions (an exact final
    step for an ill-conditioned basis).

    At an optimal vertex every column ``j`` with :math:`w_j \ne 0` has
    :math:`g_j = \sum_i \alpha_i y_i x_{ij} = r_j \operatorname{sign}(w_j)` (:math:`r_j`: the
    feature weight, 1 by default) and :math:`\sum_i \alpha_i y_i = 0`, with the rows strictly
    inside the box (:math:`0 < \alpha_i < C s_i`) free. A solver's duals meet those equations
    to the conditioning of its basis, not to its tolerance (the checkerboard's rank-28 kernel:
    :math:`\|g\|_\infty - 1 = 2.4 \cdot 10^{-6}`, which the certificate's scaling charges to the
    bound). The free rows' least-squares correction to the residuals of those equations, clipped
    to the box, is returned; :func:`certificate` then checks it like any dual point (so it is
    only as good as the bound it gives, never wrong). None when there is nothing to solve or the
    system has more than :data:`POLISH_ENTRIES` entries.
    """
    w = np.asarray(w, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    cap = C * data.s
    J = np.flatnonzero(np.abs(w) > rel * max(float(np.abs(w).max(initial=0.0)), np.finfo(float).tiny))
    B = np.flatnonzero((alpha > rel * cap) & (alpha < (1.0 - rel) * cap))
    if J.size == 0 or B.size == 0 or (J.size + 1) * B.size > POLISH_ENTRIES:
        return None
    XJ = data.X[:, J]
    XJ = XJ.toarray() if hasattr(XJ, "toarray") else np.asarray(XJ)
    r = np.ones(J.size) if weights is None else np.asarray(weights, dtype=float)[J]
    ay = alpha * data.y
    residual = np.concatenate([r * np.sign(w[J]) - XJ.T @ ay, [-float(ay.sum())]])
    system = np.vstack([(XJ[B] * data.y[B, None]).T, data.y[B][None, :]])
    step = np.linalg.lstsq(system, residual, rcond=None)[0]
    out = alpha.copy()
    out[B] = np.clip(alpha[B] + step, 0.0, cap[B])
    return out


def refined_l1_certificate(cert: Certificate, check, data, w, *, C: float,
                           weights=None) -> Certificate:
    """The better of ``cert`` and the certificate of its :func:`polished_dual`
    (``check(alpha, method) -> Certificate``), for a 1-norm SVM certificate that failed: the
    direct solve, AID and column generation over features (:mod:`aidopt.decomposition.colgen`)
    share it."""
    refined = polished_dual(data, w, cert.dual_values["alpha"], C=C, weights=weights)
    if refined is None:
        return cert
    again = check(refined, cert.method + "+polished")
    return again if again.certified or again.relative_gap < cert.relative_gap else cert


def gap_floor(data, C: float, norm: str = "l2") -> float:
    """The relative gap's floor for a hinge-loss SVM. With a regularizer and both classes present
    the objective is never 0 (w = 0 and no slack would need y_i b >= 1 for every row), and it can
    be many orders below that of w = 0, C sum_i s_i (nearly separable data, large features): no
    floor (the smallest positive float), the gap is relative to E. RLP (``norm="none"``) has
    E = 0 on separable data: :data:`~.protocol.GAP_FLOOR` times C sum_i s_i."""
    if norm == "none":
        return max(GAP_FLOOR * C * float(np.sum(data.s)), np.finfo(float).tiny)
    return np.finfo(float).tiny


def hinge_certificate(
    data, f, alpha, *, C: float, regularizer: float, dual_value, tol: float,
    feasibility_tol: float, method: str, sign_condition=None, balanced: bool = True,
    floor: float = np.finfo(float).tiny,
) -> Certificate:
    r"""The checks every hinge-loss SVM certificate shares (linear and kernel).

    ``f`` are the decision values on the full data, ``regularizer`` the value R of the primal
    solution, ``dual_value(alpha, residuals) -> (D, checked)`` the dual objective of the
    (clipped) lifted ``alpha``; it adds its own residuals and names those that must be within
    ``feasibility_tol`` for the bound to hold. ``balanced=False``: the dual has no
    :math:`\sum_i \alpha_i y_i = 0` (the offset is regularized), so none is checked or imposed.
    ``floor``: the gap is ``(E - D) / max(floor, |E|)`` (:func:`gap_floor`).
    """
    alpha = given = np.asarray(alpha, dtype=float)
    xi = np.maximum(1.0 - data.y * f, 0.0)
    primal = regularizer + C * float(data.s @ xi)
    cap = C * data.s
    excess = max(np.maximum(alpha - cap, 0.0).max(), np.maximum(-alpha, 0.0).max())
    bound = float(excess / max(1.0, cap.max()))
    alpha = np.clip(alpha, 0.0, cap)  # within rounding (checked above): make the box exact
    residuals = {"dual bound 0<=alpha<=Cs": bound}
    checked = ["dual bound 0<=alpha<=Cs"]
    if balanced:
        residuals["balance |sum alpha y|"] = abs(float(alpha @ data.y)) / max(1.0, float(alpha.sum()))
        checked.append("balance |sum alpha y|")
        alpha = fm.balanced(alpha, data.y)  # make sum alpha y = 0 exact: the bound needs it for any b
    dual, extra_checks = dual_value(alpha, residuals)
    checked += extra_checks
    feasible = all(residuals[key] <= feasibility_tol for key in checked)
    slack_terms = (cap - alpha) * xi + alpha * (xi - 1.0 + data.y * f)
    scale = max(floor, abs(primal))
    residuals["complementarity"] = float(max(0.0, slack_terms.max()) / scale)
    rel_gap = (primal - dual) / scale
    return Certificate(
        method=method,
        certified=bool(feasible and rel_gap <= tol),
        primal_objective=primal,
        dual_objective=dual,
        relative_gap=float(rel_gap),
        residuals=residuals,
        tol=tol,
        feasibility_tol=feasibility_tol,
        sign_condition=sign_condition, condition=SIGN_PURE,
        checked=checked,
        dual_values={"alpha": given},
    )
