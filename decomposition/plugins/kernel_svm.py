r"""AID plug-in for the kernel 2-norm SVM (Park & Klabjan 2016, Appendix B).

* **Aggregate**: label-pure clusters; the mean kernel between clusters
  :math:`\bar K_{kq}` and, for every row, the mean kernel to every cluster
  :math:`H_{ik} = \sum_{j \in C_k} s_j K(x_i, x_j) / W_k`, held by a lazy
  :class:`~.mean_kernel.MeanKernel`: a column is computed only when a solve or the lift needs
  it, a split cluster's larger child is its parent's column minus the smaller child's, and the
  n x n kernel is never held.
* **Solve**: the aggregated dual (21) (:mod:`aidopt.models.kernel_svm`; the whole
  :math:`\bar K` for a Pyomo solver), or without a Pyomo model (written only under
  ``write_models``) by column generation over clusters (:meth:`KernelSVMProblem.solve_native`)
  with ``solver="smo"`` (the default: :func:`aidopt.numerics.smo.smo`, warm-started), ``"fm"``
  (:func:`aidopt.numerics.fm.ferris_munson_kernel`) or ``"libsvm"`` (scikit-learn's ``SVC`` on the
  precomputed mean kernel with sample weights :math:`W_k`, the paper's choice) on the working
  set's :math:`Q = D_y \bar K D_y`.
* **Lift**: :math:`f(x_i) = \sum_k \bar\alpha_k y_k H_{ik} + b`; the primal solution is the
  feature-space :math:`w = \sum_k \bar\alpha_k y_k \bar\phi_k`, so
  :math:`\|w\|^2 = (\bar\alpha y)^\top \bar K (\bar\alpha y)` and
  :math:`E = \tfrac12\|w\|^2 + C\sum_i s_i \max(0, 1 - y_i f(x_i))`.
* **Split** by the sign of :math:`1 - y_i f(x_i)`, as in the linear case.
* **Certificate**: :math:`\alpha_i = s_i \bar\alpha_k / W_k` is feasible for the full dual, whose
  objective :math:`\sum_i \alpha_i - \tfrac12 (\bar\alpha y)^\top \bar K (\bar\alpha y)` is the
  bound (the lifted :math:`\alpha` gives the same feature-space vector as the aggregated one).

**Sparse X** (scipy CSR, from the door) is never densified: the kernel blocks come from the
stored entries (:func:`aidopt.numerics.kernels.gram`: sparse products, row norms from the
stored entries; each block of at most about 10^6 kernel values is dense), ``gamma="scale"``'s
variance from the stored entries, the initial k-means on sparse rows with dense centres only
(:func:`aidopt.decomposition.clustering.one_step_kmeans`), and the first working set from the
dense K x m centroids (:func:`_near_other_class`). Those are the only pieces made dense.
"""

from __future__ import annotations

import numbers
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from aidopt.decomposition.clustering import one_step_kmeans
from aidopt.decomposition.partition import Partition
from aidopt.decomposition.plugins.mean_kernel import KernelSums, MeanKernel
from aidopt.decomposition.plugins.svm import SIGN_TOL, check_native_call, gap_floor, hinge_certificate, solve_fm
from aidopt.decomposition.protocol import AIDProblem, Iterate, Lifted, Split
from aidopt.models import kernel_svm, svm
from scipy import sparse
from scipy.spatial.distance import cdist

from aidopt import solvers
from aidopt.data.machine import physical_memory
from aidopt.numerics.fm import FMResult, ferris_munson_kernel, gap_of
from aidopt.numerics.kernels import SVC_KERNELS, svc_kernel
from aidopt.numerics.smo import smo
from aidopt.results import Certificate
from aidopt.solvers import ProblemClass, SolveOutcome, SolverError

__all__ = ["KernelSVMProblem", "AggregatedKernelSVM", "KernelSVMState"]

#: a cluster with aggregated alpha above ACTIVE * its bound C W_k starts the next working set
ACTIVE = 1e-6
#: a cluster outside the working set joins it when its margin y_k fbar_k < 1 - JOIN_TOL
JOIN_TOL = 1e-9
#: a round adds at most JOIN_SHARE x the working set's size (at least one) of those clusters,
#: the smallest margins first: each cluster that joins costs a mean-kernel column
JOIN_SHARE = 0.5
#: the loosest relative gap to which smo solves an aggregated dual while AID is far from done
#: (then a hundredth of the last iteration's E_t - F_t, never below tol / 10)
LOOSE = 1e-4
#: LIBSVM's stopping tolerance (its KKT violation) and SMO iteration limit (at least 100 per
#: column) for the aggregated kernel QPs
LIBSVM_TOL, LIBSVM_MAX_ITER = 1e-8, 100_000

class AggregatedKernelSVM:
    """The aggregated kernel SVM of one partition: labels ``y`` (K,), weights ``w`` (K,), the
    mean kernels ``mean`` (:class:`~.mean_kernel.MeanKernel`, columns computed on demand), the
    kernel (``gamma`` resolved on the data) and ``start``, the clusters (bool, K) the aggregated
    QP's working set starts from, ``warm`` the aggregated alpha inherited from the previous
    iteration (or None)."""

    def __init__(self, mean: MeanKernel, y, w, gamma: float, kernel: Callable, start,
                 warm=None):
        self.mean, self.y, self.w, self.gamma, self.kernel = mean, y, w, gamma, kernel
        self.start, self.warm = start, warm

    @property
    def Kbar(self) -> np.ndarray:
        """The full K x K mean kernel (every column computed: for a Pyomo model, a PSD check)."""
        Kbar = self.mean.kbar(np.arange(self.y.size))
        return 0.5 * (Kbar + Kbar.T)

    @property
    def H(self) -> np.ndarray:
        """The full n x K mean kernel of the rows to the clusters."""
        return self.mean.H(np.arange(self.y.size))

    def kbar_block(self, ks, signs=None) -> np.ndarray:
        r""":math:`\bar K_{ks, ks}` (times the ``signs`` on both sides), symmetrised."""
        return self.mean.kbar_block(ks, signs)


@dataclass
class KernelSVMState:
    """Decision values ``f`` and margin slacks on the full data, ``(alpha y)' Kbar (alpha y)``
    (= ||w||^2 in feature space), the sign tolerance, and whether the aggregated solve was
    stopped at a gap looser than ``tol / 10`` (:data:`LOOSE`)."""

    f: np.ndarray
    slack: np.ndarray
    quad: float
    eps: float
    loose: bool = False


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
    cache_size : float or None
        Memory for the cached mean-kernel columns, in MB (as scikit-learn's ``SVC``): each
        column takes 8 n bytes. Past it the columns used least recently are dropped and
        recomputed when needed again (more kernel values, same answer). ``None``: a third of the
        machine's physical memory. Not counted in it: the clusters' K x K mean-kernel sums, the
        working set's block, the kernel blocks being computed and, for the RBF kernel, an
        n x (m + 2) copy of X.
    """

    problem_class = ProblemClass.QP
    needs_duals = True
    per_element_keys = ("alpha",)
    native_methods = ("smo", "libsvm", "fm")
    table_info = ("working_set", "rounds")  # the column generation's, per iteration

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=1.0, rank_tol=1e-12,
                 cache_size=None):
        if not (isinstance(C, numbers.Real) and not isinstance(C, bool) and np.isfinite(C) and C > 0):
            raise ValueError(f"C must be a positive finite number, got {C!r}")
        if not callable(kernel) and kernel not in SVC_KERNELS:
            raise ValueError(f"kernel must be one of {SVC_KERNELS} or a callable, got {kernel!r}")
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
        if cache_size is not None and not (
            isinstance(cache_size, numbers.Real) and not isinstance(cache_size, bool)
            and np.isfinite(cache_size) and cache_size > 0
        ):
            raise ValueError(f"cache_size must be a positive number of MB or None, got {cache_size!r}")
        self.C = float(C)
        self.kernel, self.gamma, self.degree, self.coef0 = kernel, gamma, int(degree), float(coef0)
        self.rank_tol = rank_tol
        self.cache_size = cache_size
        self.name = f"kernel_svm_{kernel if isinstance(kernel, str) else 'callable'}"

    def max_columns(self, n: int) -> int:
        """How many n-row mean-kernel columns ``cache_size`` holds (at least 16)."""
        budget = self.cache_size * 2**20 if self.cache_size is not None else physical_memory() / 3
        return max(16, int(budget // (8 * n)))

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
        if sparse.issparse(data.X):  # Var over all n m entries, from the stored ones
            size = float(data.X.shape[0]) * data.X.shape[1]
            mean = float(data.X.data.sum()) / size
            var = max(float(data.X.data @ data.X.data) / size - mean * mean, 0.0)
        else:
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
        """Labels, weights and the mean kernels of ``partition`` (columns computed when a solve
        or the lift asks for them; those ``previous`` computed are reused). The working set of
        the aggregated QP starts from the clusters that carry :math:`\\alpha > 0` in
        ``previous`` (a child inherits its parent's), or, at the first iteration, from the
        clusters nearest the other class (:func:`_near_other_class`)."""
        K = partition.n_clusters
        ybar = np.sign(np.bincount(partition.labels, weights=data.y * data.s, minlength=K))
        if previous is None:
            gamma = self.resolved_gamma(data)
            kfun = svc_kernel(self.kernel, gamma, self.degree, self.coef0)
            # rbf on dense rows: one product of augmented rows per block (n x (m + 2) kept);
            # sparse rows: kfun on each block, from the stored entries (never densified)
            fast_rbf = self.kernel == "rbf" and not sparse.issparse(data.X)
            sums = KernelSums(data.X, data.s, kfun, gamma if fast_rbf else None,
                              max_columns=self.max_columns(data.n))
            mean = MeanKernel(sums, partition)
            start, warm = _near_other_class(data, partition, ybar), None
        else:
            old = previous.aggregated
            gamma, kfun = old.gamma, old.kernel
            mean = MeanKernel(old.mean.sums, partition, old.mean)
            warm = np.bincount(partition.labels, weights=previous.lifted.solution["alpha"],
                               minlength=K)  # a child inherits its parent's alpha by weight
            # and the clusters whose rows were inside the margin (they will carry alpha > 0)
            inside = np.bincount(partition.labels, weights=previous.lifted.state.slack > 0,
                                 minlength=K) > 0
            start = (warm > ACTIVE * self.C * mean.W) | inside
        return AggregatedKernelSVM(mean, ybar, mean.W, gamma, kfun, start, warm)

    def build(self, aggregated: AggregatedKernelSVM, form: str | None = None):
        return kernel_svm.create_instance(
            aggregated.Kbar, aggregated.y, aggregated.w, self.C, self.rank_tol
        )

    def solve_native(self, method, aggregated: AggregatedKernelSVM, previous, partition, *, tol,
                     time_limit, options) -> tuple[FMResult, SolveOutcome]:
        """The aggregated dual by column generation over clusters: solve it on a working set W
        (the other clusters at :math:`\\bar\\alpha = 0`) with ``"fm"``
        (:func:`aidopt.numerics.fm.ferris_munson_kernel` on :math:`Q_{WW}`, :func:`~.svm.solve_fm`) or
        ``"libsvm"`` (:func:`libsvm_kernel` on :math:`\\bar K_{WW}`), then check every other
        cluster against the solution (only the columns of W are needed): the clusters with
        :math:`y_k \\bar f_k < 1` at W's own offset :math:`b` (the multiplier of
        :math:`y^\\top\\alpha = 0` in W's solution) join W (at most :data:`JOIN_SHARE` x |W| per round, the
        smallest margins first), until none does or the relative gap of the whole
        aggregated problem (:func:`aidopt.numerics.fm.gap_of`, from the columns of W) is within
        ``tol / 10``. The answer is judged on the whole aggregated problem."""
        if len(np.unique(aggregated.y)) < 2:
            raise SolverError("the aggregated SVM has one class only")
        start = time.perf_counter()
        y, u = aggregated.y, self.C * aggregated.w
        target = self._target(method, previous, tol)
        inside = _with_both_classes(aggregated.start, y, aggregated.mean.W)
        rounds, iterations, outcome = 0, 0, None
        alpha = np.zeros(y.size) if aggregated.warm is None else aggregated.warm
        while True:
            remaining = None if time_limit is None else max(
                0.0, time_limit - (time.perf_counter() - start))
            if rounds and remaining is not None and remaining <= 0:
                # out of time between rounds: the last round's answer is feasible (alpha zero
                # outside its working set) and its bound valid; it is not called optimal
                outcome = replace(outcome, status=solvers.SolveStatus.TIME_LIMIT,
                                  termination_condition=None,  # derived again from the status
                                  message=f"{outcome.message}; time limit reached before the "
                                  "working set was complete")
                break
            rounds += 1
            ks = np.flatnonzero(inside)
            QWW = aggregated.kbar_block(ks, y[ks])
            remaining = None if time_limit is None else max(
                0.0, time_limit - (time.perf_counter() - start))
            res, outcome = self._restricted(method, QWW, y[ks], aggregated.w[ks], alpha[ks],
                                            tol=tol, target=target, time_limit=remaining,
                                            options=options)
            iterations += int(outcome.extra.get("iterations", 0))
            alpha = np.zeros(y.size)
            alpha[ks] = res.alpha
            # Q[:, ks] a = D_y Kbar[:, ks] D_y[ks] a: only the columns of the working set; the
            # product with this round's answer is computed once (the gap and the join test)
            def product(a, ks=ks):
                return y * aggregated.mean.kbar_dot(ks, y[ks] * a)

            Qa = product(res.alpha)
            judged = gap_of(lambda a, Qa=Qa, a0=res.alpha: Qa if np.array_equal(a, a0)
                            else product(a), y, u, alpha, res.b, columns=ks)
            # the join test is the optimality condition of alpha_k = 0 at the working set's own
            # offset res.b (the multiplier of y'alpha = 0 at its optimum), not at judged.b: the
            # best offset for alpha over every cluster can buy the outside clusters' margins
            # with the working set's hinge, and then nothing joins at a point far from the
            # optimum (scikit-learn's duplicated-rows check: gap 0.48 with every margin >= 1)
            margin = Qa + res.b * y
            join = np.flatnonzero(~inside & (margin < 1.0 - JOIN_TOL))
            if not outcome.optimal or not join.size or judged.gap <= target:
                break
            most = max(1, int(JOIN_SHARE * ks.size))
            inside[join[np.argsort(margin[join], kind="stable")[:most]]] = True
        note = (f"{outcome.message}; working set {ks.size} of {y.size} clusters after {rounds} "
                f"round(s), relative gap of the aggregated problem {judged.gap:.2e}")
        res = FMResult(None, judged.b, judged.alpha, judged.objective, judged.dual, judged.gap,
                       iterations, res.status)
        return res, SolveOutcome(
            outcome.status, judged.objective, None, outcome.has_solution, outcome.solver,
            outcome.version, time.perf_counter() - start, note,
            extra={"iterations": iterations, "rounds": rounds, "working_set": int(ks.size),
                   "kernel_values": aggregated.mean.sums.evaluations,
                   "columns_dropped": aggregated.mean.sums.dropped, "target": target,
                   "loose": target > tol / 10},
            bound=judged.dual if np.isfinite(judged.dual) else None)

    @staticmethod
    def _target(method, previous, tol) -> float:
        """The relative gap the aggregated dual is solved to: ``tol / 10`` (the certificate's
        gap is the last aggregated solve's when no cluster is mixed, so a factor 10 remains),
        but for ``smo`` while AID is far from done a hundredth of the last iteration's
        :math:`(E_t - F_t)/E_t`, at most :data:`LOOSE` (a cheap rough solve early). A loose
        solve at which no cluster is mixed is solved again to ``tol / 10`` (:meth:`split`)."""
        if method != "smo":
            return tol / 10
        if previous is None:
            return max(tol / 10, LOOSE)
        if previous.split.partition is previous.partition:  # the re-solve :meth:`split` asked
            return tol / 10
        E, F = previous.E_t, previous.F_t
        progress = (E - F) / max(abs(E), np.finfo(float).tiny) if np.isfinite(F) else 1.0
        return float(min(LOOSE, max(tol / 10, progress / 100)))

    def _restricted(self, method, Q, y, w, alpha0, *, tol, target, time_limit, options):
        """The aggregated dual on a working set (``Q`` = :math:`D_y \\bar K D_y`, ``y``, ``w``
        restricted; ``alpha0`` the start of ``"smo"``, which hands a solve it did not finish to
        ``"fm"``)."""
        u = self.C * w
        if method == "libsvm":
            return libsvm_kernel(Q * np.outer(y, y), y, w, self.C, tol=tol, time_limit=time_limit,
                                 options=options)
        if method == "smo":
            start = time.perf_counter()
            res, outcome = solve_fm(lambda **kw: smo(Q, y, u, alpha0, **kw), tol=tol,
                                    time_limit=time_limit, options=options, method="smo",
                                    max_iter=None, target=target)
            if outcome.optimal or outcome.status == solvers.SolveStatus.TIME_LIMIT:
                return res, outcome
            if time_limit is not None:
                time_limit -= time.perf_counter() - start
            note = f"smo {outcome.status} ({outcome.message}); "
        res, outcome = solve_fm(lambda **kw: ferris_munson_kernel(Q, y, u, **kw), tol=tol,
                                time_limit=time_limit, options=options)
        if method == "smo":
            outcome.message = note + "fm: " + outcome.message
        return res, outcome

    def fallbacks(self, solver: str) -> list[tuple[str, str | None]]:
        """Clarabel after a native method (``fm``, ``libsvm``); none otherwise."""
        return [("clarabel", None)] if solver in self.native_methods else []

    def on_nonoptimal(self, outcome: SolveOutcome) -> bool:
        """As :meth:`~.svm.SVMProblem.on_nonoptimal`: a stopped ``fm`` or ``smo`` answer is
        feasible (alpha in the box and balanced, zero outside the working set)."""
        return outcome.solver in ("fm", "smo") and outcome.has_solution

    def lift(self, model, outcome, partition, aggregated, data) -> Lifted:
        if isinstance(model, FMResult):
            b, alpha_bar = model.b, model.alpha
        else:
            _, b, alpha_bar = svm.solution_from(model, outcome.duals)
        if b is None:
            raise SolverError("kernel AID needs the dual of 'balance' for b")
        coef = alpha_bar * aggregated.y
        support = np.flatnonzero(coef)  # only these columns of H are needed
        f = aggregated.mean.H_dot(support, coef[support]) + b
        slack = 1.0 - data.y * f
        solution = {"alpha": data.s * (alpha_bar / aggregated.w)[partition.labels], "b": float(b),
                    "gamma": aggregated.gamma}
        # (alpha y)' Kbar (alpha y) = sum_k coef_k mean_{C_k}(f - b), from f in O(n)
        quad = float(data.s @ ((coef / aggregated.w)[partition.labels] * (f - b)))
        state = KernelSVMState(f, slack, quad, SIGN_TOL * max(1.0, float(np.abs(f).max())),
                               bool(outcome.extra.get("loose", False)))
        # the column generation's work: working set, rounds, kernel values computed and columns
        # dropped (cache_size) so far, and the relative gap the aggregated dual was solved to
        # (a solve of the whole aggregated model: every cluster in one round)
        info = {"working_set": float(partition.n_clusters), "rounds": 1.0}
        info.update({key: float(outcome.extra[key]) for key in (
            "working_set", "rounds", "kernel_values", "columns_dropped", "target")
            if key in outcome.extra})
        return Lifted(solution, state, info)

    def lower_bound(self, outcome, partition, data, lifted=None) -> float | None:
        """The aggregated optimum (a relaxation, paper Appendix B)."""
        return outcome.bound

    def evaluate(self, data, lifted: Lifted) -> float:
        hinge = np.maximum(lifted.state.slack, 0.0)
        return 0.5 * lifted.state.quad + self.C * float(data.s @ hinge)

    def split(self, partition: Partition, data, lifted: Lifted) -> Split:
        """Split the mixed clusters; when none is mixed but the aggregated solve was loose
        (:meth:`_target`), the same partition again (nothing split): its solve to ``tol / 10``
        decides."""
        refined, n_split = partition.split_mixed(lifted.state.slack, lifted.state.eps)
        if refined is None and lifted.state.loose:
            return Split(partition, 0)
        return Split(refined, n_split)

    def certify(self, data, best: Iterate, *, bound: Iterate, solve, tol, feasibility_tol=1e-6,
                history=()) -> Certificate:
        partition, aggregated = bound.partition, bound.aggregated

        def dual_value(alpha, residuals):
            totals = np.bincount(partition.labels, weights=alpha, minlength=partition.n_clusters)
            coef = totals * aggregated.y
            support = np.flatnonzero(coef)
            value = float(alpha.sum()) - 0.5 * float(
                coef[support] @ aggregated.kbar_block(support) @ coef[support])
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
    ``alpha``, :func:`aidopt.numerics.fm.best_offset`) are judged as :func:`aidopt.numerics.fm.ferris_munson_kernel`
    judges its own (:func:`aidopt.numerics.fm.gap_of`): the outcome is optimal only when the rigorous
    relative gap of the aggregated problem is within ``tol / 4`` (as SOR's default); its bound is
    the dual value of ``alpha`` at any status. LIBSVM caches kernel values in single precision,
    so its gaps stop near 1e-7 whatever its own ``tol``: fine for AID's default ``tol = 1e-6``, a
    fallback to Clarabel below ~4e-7. ``solver_options``: ``tol`` (LIBSVM's, default
    :data:`LIBSVM_TOL`), ``max_iter`` (default ``max(LIBSVM_MAX_ITER, 100 K)``: SMO can crawl on
    badly scaled kernels, e.g. a linear kernel in units of 1e3).
    """
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


def _near_other_class(data, partition: Partition, y) -> np.ndarray:
    """The first working set (bool, K): in each class, the tenth of its clusters (at least 2)
    whose centroids lie nearest a centroid of the other class. A guess only: column generation
    adds every cluster it leaves out wrongly."""
    _, (centroids,) = partition.weighted_means(data.s, data.X)
    if sparse.issparse(centroids):  # the K x m centroids of sparse rows: dense (K << n)
        centroids = centroids.toarray()
    start = np.zeros(y.size, dtype=bool)
    for sign in (-1.0, 1.0):
        mine, other = np.flatnonzero(y == sign), np.flatnonzero(y != sign)
        if mine.size <= 2 or other.size == 0:
            start[mine] = True
            continue
        near = cdist(centroids[mine], centroids[other]).min(axis=1)
        start[mine[np.argsort(near, kind="stable")[:max(2, mine.size // 10)]]] = True
    return start


def _with_both_classes(start, y, W) -> np.ndarray:
    """``start`` with, for a class it lacks, that class's heaviest cluster added."""
    inside = np.array(start, dtype=bool)
    for sign in (-1.0, 1.0):
        mine = np.flatnonzero(y == sign)
        if mine.size and not inside[mine].any():
            inside[mine[np.argmax(W[mine])]] = True
    return inside
