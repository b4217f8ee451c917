r"""AID plug-in for the kernel 2-norm SVM (Park & Klabjan 2016, Appendix B).

* **Aggregate**: label-pure clusters; the mean kernel between clusters
  :math:`\bar K_{kq}` and, for every row, the mean kernel to every cluster
  :math:`H_{ik} = \sum_{j \in C_k} s_j K(x_i, x_j) / W_k`, computed in row blocks (the full
  n x n kernel is never held). Only the columns of clusters that changed since the last iteration
  are recomputed: a split leaves every other column of H as it was.
* **Solve**: the aggregated dual (21) (:mod:`aidopt.models.kernel_svm`).
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
from dataclasses import dataclass

import numpy as np
from aidopt.models import kernel_svm, svm
from scipy import sparse

from aidopt.solvers import ProblemClass, SolverError

from .clustering import one_step_kmeans
from .partition import Partition
from .svm import SIGN_TOL, SVMProblem, hinge_certificate

__all__ = ["KernelSVMProblem", "AggregatedKernelSVM"]

_BLOCK_ENTRIES = 1 << 23  # kernel entries computed per block (64 MB of float64)


@dataclass
class AggregatedKernelSVM:
    """Mean kernels ``H`` (n, K) and ``Kbar`` (K, K), labels ``y`` (K,), weights ``w`` (K,)."""

    H: np.ndarray
    Kbar: np.ndarray
    y: np.ndarray
    w: np.ndarray


class KernelSVMProblem:
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
    solver_defaults: dict = {}
    #: solution arrays with one entry per data row
    row_keys = ("alpha",)

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
        self._kfun = None
        self._cache = None  # (labels, counts, H) of the last aggregated partition

    # ----------------------------------------------------------------- protocol
    def configure(self, solver_spec) -> None:
        if solver_spec is not None and not solver_spec.duals:
            raise SolverError(
                f"kernel AID reads b from a dual, which {solver_spec.name!r} does not return; "
                "use solver='clarabel', 'highs' or 'gurobi'"
            )

    @staticmethod
    def default_r0(n: int, m: int) -> float:
        """max(0.01, 20 / n): the aggregated dual has a dense |K| x |K| kernel."""
        return max(0.01, 20.0 / n)

    @staticmethod
    def min_clusters(data) -> int:
        return 2

    def kernel_of(self, data):
        """The kernel function, with ``gamma="scale"`` resolved on ``data``."""
        if getattr(self, "_data", None) is not data:  # new data: nothing cached applies
            self._data, self._kfun, self._cache = data, None, None
        if self._kfun is None:
            gamma = self.gamma
            if gamma == "scale":
                var = float(data.X.var())
                gamma = 1.0 / (data.m * var) if var > 0 else 1.0
            self.gamma_ = float(gamma)
            self._kfun = kernel_svm.kernel_function(self.kernel, self.gamma_, self.degree, self.coef0)
        return self._kfun

    def initial_partition(self, data, n_clusters, rng, solve) -> Partition:
        """Within each class, one k-means iteration on the features (label-pure clusters)."""
        self._cache = None
        if n_clusters >= data.n:
            return Partition(np.arange(data.n, dtype=np.int64), np.ones(data.n, dtype=np.int64))
        labels = np.zeros(data.n, dtype=np.int64)
        offset = 0
        for sign in (-1.0, 1.0):
            rows = np.flatnonzero(data.y == sign)
            k = max(1, min(rows.size, round(n_clusters * data.s[rows].sum() / data.s.sum())))
            labels[rows] = offset + one_step_kmeans(data.X[rows], k, rng)
            offset += k
        return Partition.from_labels(labels)

    def aggregate(self, data, partition: Partition) -> AggregatedKernelSVM:
        H = self._mean_kernel_columns(data, partition)
        W = np.bincount(partition.labels, weights=data.s, minlength=partition.n_clusters)
        Kbar = (partition.indicator(data.s) @ H) / W[:, None]
        ybar = np.sign(np.bincount(partition.labels, weights=data.y * data.s,
                                   minlength=partition.n_clusters))
        return AggregatedKernelSVM(H, 0.5 * (Kbar + Kbar.T), ybar, W)

    def build(self, aggregated: AggregatedKernelSVM, form: str | None = None):
        return kernel_svm.create_instance(
            aggregated.Kbar, aggregated.y, aggregated.w, self.C, self.rank_tol
        )

    def lift(self, model, outcome, partition, aggregated, data) -> dict:
        _, b, alpha_bar = svm.solution_from(model, outcome.duals)
        if b is None:
            raise SolverError("kernel AID needs the dual of 'balance' for b")
        coef = alpha_bar * aggregated.y
        f = aggregated.H @ coef + b
        slack = 1.0 - data.y * f
        return {
            "alpha": data.s * (alpha_bar / aggregated.w)[partition.labels],
            "b": float(b),
            "_quad": float(coef @ aggregated.Kbar @ coef),
            "_f": f,
            "_slack": slack,
            "_eps": SIGN_TOL * max(1.0, float(np.abs(f).max())),
        }

    def evaluate(self, data, solution) -> float:
        hinge = np.maximum(solution["_slack"], 0.0)
        return 0.5 * solution["_quad"] + self.C * float(data.s @ hinge)

    split = SVMProblem.split
    mixed_clusters = staticmethod(SVMProblem.mixed_clusters)

    def certify(self, data, solution, *, dual_solution, partition, aggregated, solve, tol,
                feasibility_tol=1e-6):
        def dual_value(alpha, residuals):
            totals = np.bincount(partition.labels, weights=alpha, minlength=partition.n_clusters)
            coef = totals * aggregated.y
            # weak duality needs a positive semidefinite kernel: a negative eigenvalue of the
            # mean kernel proves a (user) kernel is not, and fails the certificate
            lam = np.linalg.eigvalsh(aggregated.Kbar)
            residuals["kernel PSD (min eig / max eig)"] = max(0.0, -lam[0] / max(lam[-1], 1e-300))
            bound = float(alpha.sum()) - 0.5 * float(coef @ aggregated.Kbar @ coef)
            return bound, ["kernel PSD (min eig / max eig)"]

        return hinge_certificate(
            data, solution["_f"], dual_solution["alpha"], C=self.C, regularizer=0.5 * solution["_quad"],
            dual_value=dual_value, tol=tol, feasibility_tol=feasibility_tol,
            method="solver_duals", sign_condition=dual_solution.get("_sign_condition"),
        )

    @staticmethod
    def public_solution(solution) -> dict:
        return {"alpha": solution["alpha"], "b": solution["b"]}

    # ----------------------------------------------------------------- helpers
    def _mean_kernel_columns(self, data, partition: Partition) -> np.ndarray:
        """``H[i, k] = sum_{j in C_k} s_j K(x_i, x_j) / W_k``, reusing unchanged columns."""
        kfun = self.kernel_of(data)
        n, K = data.n, partition.n_clusters
        H = np.empty((n, K))
        todo = np.ones(K, dtype=bool)
        if self._cache is not None:
            old_labels, old_counts, old_H = self._cache
            first = np.unique(partition.labels, return_index=True)[1]
            parent = old_labels[first]
            if old_labels.shape == partition.labels.shape and np.array_equal(
                parent[partition.labels], old_labels
            ):  # a refinement: a child as large as its parent is the same cluster
                same = partition.counts == old_counts[parent]
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
        self._cache = (partition.labels, partition.counts, H)
        return H
