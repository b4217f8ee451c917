r"""AID plug-in for the kernel 2-norm SVM (Park & Klabjan 2016, Appendix B).

* **Aggregate**: label-pure clusters; the mean kernel between clusters
  :math:`\bar K_{kq}` and, for every row, the mean kernel to every cluster
  :math:`H_{ik} = \sum_{j \in C_k} s_j K(x_i, x_j) / W_k`, computed in row blocks (the full
  n x n kernel is never held). Only the columns of clusters that changed since the last iteration
  are recomputed: a split leaves every other column of H as it was.
* **Solve**: the aggregated dual (21) (:mod:`aidopt.models.kernel_svm`), or without a Pyomo
  model (written only under ``write_models``): ``solver="libsvm"``, LIBSVM's SMO (scikit-learn's
  ``SVC``) on the precomputed mean kernel :math:`\bar K` with sample weights :math:`W_k` (the
  paper's choice), or ``solver="fm"``, the interior point
  :func:`aidopt.fm.ferris_munson_kernel` on the dense :math:`Q = D_y \bar K D_y`.
* **Lift**: :math:`f(x_i) = \sum_k \bar\alpha_k y_k H_{ik} + b`; the primal solution is the
  feature-space :math:`w = \sum_k \bar\alpha_k y_k \bar\phi_k`, so
  :math:`\|w\|^2 = (\bar\alpha y)^\top \bar K (\bar\alpha y)` and
  :math:`E = \tfrac12\|w\|^2 + C\sum_i s_i \max(0, 1 - y_i f(x_i))`.
* **Split** by the sign of :math:`1 - y_i f(x_i)`, as in the linear case.
* **Certificate**: :math:`\alpha_i = s_i \bar\alpha_k / W_k` is feasible for the full dual, whose
  objective :math:`\sum_i \alpha_i - \tfrac12 (\bar\alpha y)^\top \bar K (\bar\alpha y)` is the
  bound (the lifted :math:`\alpha` gives the same feature-space vector as the aggregated one).
"""

from __future__ import annotations

import numbers
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from aidopt.models import kernel_svm, svm
from scipy import sparse

from aidopt import solvers
from aidopt.fm import FMResult, ferris_munson_kernel
from aidopt.results import Certificate
from aidopt.solvers import ProblemClass, SolveOutcome, SolverError

from .clustering import one_step_kmeans
from .partition import Partition
from .protocol import AIDProblem, Iterate, Lifted, Split
from .run import BUILTIN_METHODS
from .svm import SIGN_TOL, check_native_call, gap_floor, hinge_certificate, solve_fm

__all__ = ["KernelSVMProblem", "AggregatedKernelSVM", "KernelSVMState"]

_BLOCK_ENTRIES = 1 << 23  # kernel entries computed per block (64 MB of float64)
#: LIBSVM's stopping tolerance (its KKT violation) and SMO iteration limit (at least 100 per
#: column) for the aggregated kernel QPs
LIBSVM_TOL, LIBSVM_MAX_ITER = 1e-8, 100_000

BUILTIN_METHODS.setdefault("libsvm", solvers.SolverSpec(
    name="libsvm", pyomo_name="", classes=frozenset({ProblemClass.QP}), duals=True,
    extra="scikit-learn", module="sklearn",
    notes="LIBSVM's SMO (scikit-learn SVC) on kernel AID's precomputed mean kernel",
    backend="native"))


@dataclass
class AggregatedKernelSVM:
    """Mean kernels ``H`` (n, K) and ``Kbar`` (K, K), labels ``y`` (K,), weights ``w`` (K,), and
    the kernel (``gamma`` resolved on the data) they were computed with."""

    H: np.ndarray
    Kbar: np.ndarray
    y: np.ndarray
    w: np.ndarray
    gamma: float
    kernel: Callable


@dataclass
class KernelSVMState:
    """Decision values ``f`` and margin slacks on the full data, ``(alpha y)' Kbar (alpha y)``
    (= ||w||^2 in feature space) and the sign tolerance."""

    f: np.ndarray
    slack: np.ndarray
    quad: float
    eps: float


class KernelSVMProblem(AIDProblem):
    """Kernel 2-norm soft-margin SVM under AID.

    Parameters
    ----------
    C : float
    kernel : {"rbf", "poly", "linear"} or callable
        A callable maps ``(A, B)`` to the ``len(A) x len(B)`` kernel matrix.
    gamma : float or "scale"
        RBF / polynomial scale; "scale" is ``1 / (m Var(X))`` as in scikit-learn.
    degree, coef0 : polynomial kernel ``(gamma x'z + coef0)^degree``.
    rank_tol : float
        Relative eigenvalue cut-off of the aggregated kernel factor (see the model module).
    """

    problem_class = ProblemClass.QP
    needs_duals = True
    per_element_keys = ("alpha",)
    native_methods = ("libsvm", "fm")

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=1.0, rank_tol=1e-12):
        if not (isinstance(C, numbers.Real) and not isinstance(C, bool) and np.isfinite(C) and C > 0):
            raise ValueError(f"C must be a positive finite number, got {C!r}")
        if not callable(kernel) and kernel not in kernel_svm.KERNELS:
            raise ValueError(f"kernel must be one of {kernel_svm.KERNELS} or a callable, got {kernel!r}")
        if not (isinstance(gamma, str) and gamma == "scale") and not (
            isinstance(gamma, numbers.Real) and not isinstance(gamma, bool) and gamma > 0
        ):
            raise ValueError(f"gamma must be 'scale' or a positive number, got {gamma!r}")
        if not (isinstance(degree, numbers.Integral) and not isinstance(degree, bool) and degree >= 1):
            raise ValueError(f"degree must be a positive integer, got {degree!r}")
        if kernel == "poly" and not coef0 >= 0:
            raise ValueError(
                f"the polynomial kernel needs coef0 >= 0 to be positive semidefinite, got {coef0!r}"
            )
        self.C = float(C)
        self.kernel, self.gamma, self.degree, self.coef0 = kernel, gamma, int(degree), float(coef0)
        self.rank_tol = rank_tol
        self.name = f"kernel_svm_{kernel if isinstance(kernel, str) else 'callable'}"

    # ----------------------------------------------------------------- contract
    def configure(self, solver_spec) -> None:
        if solver_spec is not None and not solver_spec.duals:
            raise SolverError(
                f"kernel AID reads b from a dual, which {solver_spec.name!r} does not return; "
                "use solver='clarabel', 'highs' or 'gurobi'"
            )

    def gap_floor(self, data) -> float:
        """None: the gap is relative to E > 0 (:func:`~.svm.gap_floor`)."""
        return gap_floor(data, self.C, "l2")

    def default_r0(self, size: int, data) -> float:
        """max(0.01, 20 / n): the aggregated dual has a dense |K| x |K| kernel."""
        return max(0.01, 20.0 / size)

    def min_clusters(self, data) -> int:
        return 2

    def resolved_gamma(self, data) -> float:
        """``gamma``, with ``"scale"`` resolved on ``data`` (1 / (m Var(X)))."""
        if self.gamma != "scale":
            return float(self.gamma)
        var = float(data.X.var())
        return 1.0 / (data.m * var) if var > 0 else 1.0

    def initial_partition(self, data, n_clusters, rng, solve) -> Partition:
        """Within each class, one k-means iteration on the features (label-pure clusters)."""
        if n_clusters >= data.n:
            return self.trivial_partition(data)
        labels = np.zeros(data.n, dtype=np.int64)
        offset = 0
        for sign in (-1.0, 1.0):
            rows = np.flatnonzero(data.y == sign)
            k = max(1, min(rows.size, round(n_clusters * data.s[rows].sum() / data.s.sum())))
            labels[rows] = offset + one_step_kmeans(data.X[rows], k, rng)
            offset += k
        return Partition.from_labels(labels)

    def aggregate(self, data, partition: Partition, previous: Iterate | None = None
                  ) -> AggregatedKernelSVM:
        """Mean kernels of ``partition``; the columns of clusters that ``previous`` already had
        (a split leaves them unchanged) are taken from its ``H``."""
        if previous is None:
            gamma = self.resolved_gamma(data)
            kfun = kernel_svm.kernel_function(self.kernel, gamma, self.degree, self.coef0)
            reuse = None
        else:
            gamma, kfun = previous.aggregated.gamma, previous.aggregated.kernel
            reuse = (previous.partition, previous.aggregated.H)
        H = _mean_kernel_columns(data, partition, kfun, reuse)
        W = np.bincount(partition.labels, weights=data.s, minlength=partition.n_clusters)
        Kbar = (partition.indicator(data.s) @ H) / W[:, None]
        ybar = np.sign(np.bincount(partition.labels, weights=data.y * data.s,
                                   minlength=partition.n_clusters))
        return AggregatedKernelSVM(H, 0.5 * (Kbar + Kbar.T), ybar, W, gamma, kfun)

    def build(self, aggregated: AggregatedKernelSVM, form: str | None = None):
        return kernel_svm.create_instance(
            aggregated.Kbar, aggregated.y, aggregated.w, self.C, self.rank_tol
        )

    def solve_native(self, method, aggregated: AggregatedKernelSVM, previous, partition, *, tol,
                     time_limit, options) -> tuple[FMResult, SolveOutcome]:
        """``"fm"``: :func:`aidopt.fm.ferris_munson_kernel` on :math:`Q = D_y \bar K D_y`
        (:func:`~.svm.solve_fm`); ``"libsvm"``: :func:`libsvm_kernel` on :math:`\bar K`."""
        if len(np.unique(aggregated.y)) < 2:
            raise SolverError("the aggregated SVM has one class only")
        y = aggregated.y
        if method == "libsvm":
            return libsvm_kernel(aggregated.Kbar, y, aggregated.w, self.C, tol=tol,
                                 time_limit=time_limit, options=options)
        Q = aggregated.Kbar * np.outer(y, y)
        return solve_fm(lambda **kw: ferris_munson_kernel(Q, y, self.C * aggregated.w, **kw),
                        tol=tol, time_limit=time_limit, options=options)

    def fallbacks(self, solver: str) -> list[tuple[str, str | None]]:
        """Clarabel after a native method (``fm``, ``libsvm``); none otherwise."""
        return [("clarabel", None)] if solver in self.native_methods else []

    def on_nonoptimal(self, outcome: SolveOutcome) -> bool:
        """As :meth:`~.svm.SVMProblem.on_nonoptimal`: a stopped ``fm`` iterate is feasible."""
        return outcome.solver == "fm" and outcome.has_solution

    def lift(self, model, outcome, partition, aggregated, data) -> Lifted:
        if isinstance(model, FMResult):
            b, alpha_bar = model.b, model.alpha
        else:
            _, b, alpha_bar = svm.solution_from(model, outcome.duals)
        if b is None:
            raise SolverError("kernel AID needs the dual of 'balance' for b")
        coef = alpha_bar * aggregated.y
        f = aggregated.H @ coef + b
        slack = 1.0 - data.y * f
        solution = {"alpha": data.s * (alpha_bar / aggregated.w)[partition.labels], "b": float(b),
                    "gamma": aggregated.gamma}
        state = KernelSVMState(f, slack, float(coef @ aggregated.Kbar @ coef),
                               SIGN_TOL * max(1.0, float(np.abs(f).max())))
        return Lifted(solution, state)

    def lower_bound(self, outcome, partition, data) -> float | None:
        """The aggregated optimum (a relaxation, paper Appendix B)."""
        return outcome.bound

    def evaluate(self, data, lifted: Lifted) -> float:
        hinge = np.maximum(lifted.state.slack, 0.0)
        return 0.5 * lifted.state.quad + self.C * float(data.s @ hinge)

    def split(self, partition: Partition, data, lifted: Lifted) -> Split:
        return Split(*partition.split_mixed(lifted.state.slack, lifted.state.eps))

    def certify(self, data, best: Iterate, *, bound: Iterate, solve, tol, feasibility_tol=1e-6,
                history=()) -> Certificate:
        partition, aggregated = bound.partition, bound.aggregated

        def dual_value(alpha, residuals):
            totals = np.bincount(partition.labels, weights=alpha, minlength=partition.n_clusters)
            coef = totals * aggregated.y
            value = float(alpha.sum()) - 0.5 * float(coef @ aggregated.Kbar @ coef)
            if not callable(self.kernel):  # linear, rbf, poly with coef0 >= 0: PSD by theorem
                return value, []
            # weak duality needs a positive semidefinite kernel: a negative eigenvalue of the
            # mean kernel proves a user kernel is not, and fails the certificate
            lam = np.linalg.eigvalsh(aggregated.Kbar)
            residuals["kernel PSD (min eig / max eig)"] = max(0.0, -lam[0] / max(lam[-1], 1e-300))
            return value, ["kernel PSD (min eig / max eig)"]

        return hinge_certificate(
            data, best.lifted.state.f, bound.lifted.solution["alpha"], C=self.C,
            regularizer=0.5 * best.lifted.state.quad, dual_value=dual_value, tol=tol,
            feasibility_tol=feasibility_tol, method="solver_duals",
            sign_condition=None if best.split is None else best.split.holds,
        )


def libsvm_kernel(Kbar, y, W, C, *, tol, time_limit, options) -> tuple[FMResult, SolveOutcome]:
    """The aggregated kernel dual by LIBSVM (scikit-learn's ``SVC(kernel="precomputed")``) with
    ``sample_weight = W`` (bounds :math:`C W_k`): the paper's choice for kernel AID.

    Its ``alpha`` (clipped to the box and balanced) and ``b`` (or the best offset for that
    ``alpha``, :func:`aidopt.fm.best_offset`) are judged as :func:`aidopt.fm.ferris_munson_kernel`
    judges its own (:func:`aidopt.fm.gap_of`): the outcome is optimal only when the rigorous
    relative gap of the aggregated problem is within ``tol / 4`` (as SOR's default); its bound is
    the dual value of ``alpha`` at any status. LIBSVM caches kernel values in single precision,
    so its gaps stop near 1e-7 whatever its own ``tol``: fine for AID's default ``tol = 1e-6``, a
    fallback to Clarabel below ~4e-7. ``solver_options``: ``tol`` (LIBSVM's, default
    :data:`LIBSVM_TOL`), ``max_iter`` (default ``max(LIBSVM_MAX_ITER, 100 K)``: SMO can crawl on
    badly scaled kernels, e.g. a linear kernel in units of 1e3).
    """
    from aidopt.fm import gap_of

    try:
        import sklearn
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.svm import SVC
    except ImportError as exc:
        raise solvers.SolverUnavailableError(
            "solver='libsvm' needs scikit-learn (pip install scikit-learn)") from exc
    check_native_call("libsvm", options, time_limit)
    start = time.perf_counter()
    est = SVC(kernel="precomputed", C=C, tol=options.get("tol", LIBSVM_TOL),
              max_iter=options.get("max_iter", max(LIBSVM_MAX_ITER, 100 * y.size)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # judged by the gap below
        est.fit(Kbar, y, sample_weight=W)
    alpha = np.zeros(y.size)
    alpha[est.support_] = np.abs(est.dual_coef_.ravel())
    Q = Kbar * np.outer(y, y)
    res = gap_of(Q, y, C * W, alpha, float(est.intercept_[0]))
    iterations = int(np.sum(est.n_iter_))
    ok = res.gap <= tol / 4
    status = solvers.SolveStatus.OPTIMAL if ok else solvers.SolveStatus.ITERATION_LIMIT
    res = FMResult(None, res.b, res.alpha, res.objective, res.dual, res.gap, iterations,
                   "optimal" if ok else "iteration_limit")
    return res, SolveOutcome(
        status, res.objective, None, True, "libsvm", f"scikit-learn {sklearn.__version__}",
        time.perf_counter() - start,
        f"{iterations} SMO iterations, relative gap {res.gap:.2e} "
        f"({'within' if ok else 'above'} tol / 4 = {tol / 4:.1e})",
        extra={"iterations": iterations}, bound=res.dual)


def _mean_kernel_columns(data, partition: Partition, kfun, reuse) -> np.ndarray:
    """``H[i, k] = sum_{j in C_k} s_j K(x_i, x_j) / W_k``; with ``reuse = (old_partition, old_H)``
    the columns of clusters that the refinement left unchanged are copied."""
    n, K = data.n, partition.n_clusters
    H = np.empty((n, K))
    todo = np.ones(K, dtype=bool)
    if reuse is not None:
        old, old_H = reuse
        first = np.unique(partition.labels, return_index=True)[1]
        parent = old.labels[first]
        if old.labels.shape == partition.labels.shape and np.array_equal(
            parent[partition.labels], old.labels
        ):  # a refinement: a child as large as its parent is the same cluster
            same = partition.counts == old.counts[parent]
            H[:, same] = old_H[:, parent[same]]
            todo = ~same
    cols = np.flatnonzero(todo)
    if cols.size:
        rows = np.flatnonzero(todo[partition.labels])
        position = np.full(K, -1)
        position[cols] = np.arange(cols.size)
        W = np.bincount(partition.labels, weights=data.s, minlength=K)
        k_of_row = partition.labels[rows]
        S = sparse.csr_matrix(
            (data.s[rows] / W[k_of_row], (np.arange(rows.size), position[k_of_row])),
            shape=(rows.size, cols.size),
        )
        Xr = data.X[rows]
        block = max(1, _BLOCK_ENTRIES // max(1, rows.size))
        for start in range(0, n, block):
            stop = min(n, start + block)
            H[start:stop, cols] = (S.T @ kfun(data.X[start:stop], Xr).T).T
    return H
