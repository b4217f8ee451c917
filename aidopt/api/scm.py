r"""Support Cluster Machines (Yuan, Li & Zhang, "Learning concepts from large scale imbalanced data
sets using support cluster machines", ACM MM 2006): kernel k-means of the majority class, a
weighted SVM on the cluster representatives, shrinking, repeat (their Algorithm 1).

With a label-pure partition :math:`\{\pi_c\}_{c=1}^k` of the training rows and a representative
:math:`u_c` of every cluster, the SCM is the dual (6)

.. math::

    \min_{\alpha_\pi} G_\pi(\alpha_\pi) = \tfrac12 \alpha_\pi^\top Q_\pi \alpha_\pi - e^\top\alpha_\pi
    \quad\text{s.t.}\quad 0 \le \alpha_{\pi c} \le |\pi_c| C,\ \ \alpha_\pi^\top y_\pi = 0,
    \qquad Q_{\pi, hl} = y_h y_l \langle \Phi(u_h), \Phi(u_l) \rangle,

which is aidopt's weighted 2-norm SVM with row weights :math:`|\pi_c|`
(:mod:`aidopt.models.svm` on explicit representatives, :mod:`aidopt.models.kernel_svm` on their
kernel matrix). Theorem 2: (6) has the optimal value of the *duplicate* SVM (7), the SVM on the
n rows with every row replaced by its cluster's representative. Theorem 4: the best
representative (smallest :math:`\|Q - \tilde Q\|_F`) is the feature-space centroid (8)
:math:`\Phi(u_c) = m_c`, used through the precomputed kernel
:math:`\langle m_h, m_l\rangle = \sum_{i \in \pi_h}\sum_{j \in \pi_l} K_{ij} / (|\pi_h||\pi_l|)`;
the paper's implementation uses the pseudo-centre, the member nearest to the centroid in feature
space, :math:`\arg\min_{x_i \in \pi_c} \|\Phi(x_i) - m_c\|^2 = \arg\min_{x_i \in \pi_c}
K_{ii} - 2\sum_{x_j \in \pi_c} K(x_i, x_j) / |\pi_c|`, which is (10)
:math:`u_c = \arg\max_{x_i \in \pi_c} \sum_{x_j \in \pi_c} K(x_i, x_j)` when :math:`K_{ii}` is
constant (RBF). Theorem 5: kernel k-means (4) is the relaxed minimizer of :math:`\|Q - \tilde Q\|_F`.

One round of Algorithm 1 (:func:`solve_scm`):

1. partition the majority class :math:`\mathcal D^-` by kernel k-means (4) into
   :math:`k^- = \lceil r_0 |\mathcal D^-| \rceil` clusters (:math:`r_0 = 0.1`: the paper's
   :math:`k^- = |\mathcal D^-| / 10`); on imbalanced data every positive is its own cluster
   (:math:`k^+ = |\mathcal D^+|`, or ``k_pos`` clusters); on balanced data both classes are
   clustered;
2. solve (6) on the representatives and report its certificate;
3. evaluate :math:`f(x) = \langle w, \Phi(x)\rangle + b` on the current rows;
4. shrink (11): remove the rows with :math:`|f(x)| > \gamma` (:math:`\gamma = 1.3`; with
   ``shrink_side="margin"`` only those with :math:`y f(x) > \gamma`) from the majority class, and
   on balanced data from both classes;
5. stop when the negatives are at most ``ratio`` (5) times the positives (imbalanced data), when
   the positive miss rate exceeds ``max_miss_rate`` (the Neyman-Pearson rule), when the shrink
   stalls, or at ``max_iter`` / ``time_limit``.

**Stall.** With an RBF kernel, :math:`f(x) \to b` far from every support cluster; when
:math:`|b| \le \gamma` rule (11) never removes those rows and the loop cannot reach its ratio
stop. A round whose shrink removes fewer than ``stall_fraction`` of the clustered rows is a
stall: ``shrink="eq11"`` stops there (termination ``"stalled"``, with the count of rows whose
:math:`|f - b|` vanished), ``shrink="auto"`` switches that round to the rank shrink, and
``shrink="rank"`` always uses it: keep the ``rank_keep`` share of the clustered rows with the
smallest margin :math:`y_i f(x_i)` (the likeliest support vectors: inside or beyond the margin
first), never fewer than ``ratio`` times the positives, so every round removes rows. On balanced
data, where both classes are shrunk, it keeps the rows nearest the margin (smallest
:math:`|y_i f(x_i) - 1|`: the most misclassified rows of both classes alone give an inverted
SVM), and no class goes below its round-0 number of clusters, in the rank shrink or in rule (11);
a round at those floors removes nothing and ends the loop (``"stalled"``).

**What is certified.** The weighted SVM (6) of every round: its duality gap and dual
feasibility, checked with the exact kernel matrix of the representatives
(:func:`aidopt.decomposition.plugins.svm.hinge_certificate`). The round's :math:`\alpha_{\pi c}` spread
as :math:`\alpha_i = \alpha_{\pi c}/|\pi_c|` over the cluster (and 0 on shrunk rows) is feasible
for the SVM dual (2) on **all** training rows, so ``SCMResult.full_certificate`` reports SCM's
duality gap as an SVM on the full training set (weak duality: SCM's :math:`(w, b)` against that
dual point): an a-posteriori measure of how far SCM is from the full SVM, not a claim that it is
optimal (it rarely is; the paper's Theorem 3 bounds the difference by
:math:`\|Q - \tilde Q\|_F`). For centroid representatives the lift has SCM's :math:`w`; for
pseudo-centres its :math:`w = \sum_c \alpha_{\pi c} y_c m_c` differs from SCM's
:math:`\sum_c \alpha_{\pi c} y_c \Phi(u_c)`, so the gap is valid but looser. SCM itself is a
heuristic: its stop rules prove nothing.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import time
import types
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from aidopt import solvers
from aidopt.api._params import COEF0, DEGREE, GAMMA, Family, Param, none_or_float
from aidopt.api.estimator import ConvergenceWarning, _BaseEstimator
from aidopt.api.multiclass import _MulticlassMixin
from aidopt.data.validate import as_classification_data
from aidopt.decomposition.plugins.svm import certificate as svm_certificate
from aidopt.decomposition.plugins.svm import hinge_certificate
from aidopt.decomposition.run import Column, Run, RunConfig, clocked, release, run_scope
from aidopt.models import kernel_svm, svm
from aidopt.numerics.kernel_kmeans import (
    BLOCK_ENTRIES,
    KernelGram,
    KMeansResult,
    _within_sums,
    kernel_diagonal,
    kernel_kmeans,
)
from aidopt.numerics.kernels import SVC_KERNELS, kernel_matrix, svc_kernel
from aidopt.results import Certificate, RunResult, pyplot

__all__ = ["CLUSTERINGS", "REPRESENTATIVES", "SHRINKS", "SHRINK_SIDES", "FINALS", "STOPS", "RepresentativeSVM",
           "solve_representative_svm", "SCMIteration", "SCMResult", "solve_scm", "SCMClassifier"]


CLUSTERINGS = ("kernel", "input")
"""``"kernel"``: k-means in the kernel's feature space (4) (the paper's SCMs); ``"input"``: plain
k-means in the input space (the paper's SCMs_I)."""
REPRESENTATIVES = ("centroid", "pseudo")
"""``"centroid"``: the feature-space centroid (8) (Theorem 4); ``"pseudo"``: the pseudo-centre (10)."""
SHRINKS = ("eq11", "rank", "auto")
SHRINK_SIDES = ("both", "margin")
"""Where rule (11) removes rows: ``"both"``: :math:`|f(x)| > \\gamma` (the rule as printed: far on
the correct side and deep on the wrong side); ``"margin"``: only :math:`y f(x) > \\gamma`, far on
the correct side (rows beyond the margin on the wrong side are support vectors and stay)."""
FINALS = ("last", "refit")
"""``"last"``: the decision function of the last round (Algorithm 1); ``"refit"``: one more
weighted SVM on the rows left after the last shrink, every row its own cluster."""
#: SCM's iteration table (the run framework adds the time)
COLUMNS = [Column("round", 5, "d"), Column("pos", 7, "d"), Column("neg", 8, "d"),
           Column("k+", 6, "d"), Column("k-", 6, "d"), Column("km", 4, "d"),
           Column("SVM (6) obj", 14, ".8g"), Column("(6) gap", 10, ".2e"), Column("miss", 7, ".4f"),
           Column("removed", 8, "d"), Column("shrink", 6, "s")]
STOPS = ("ratio", "miss_rate", "stalled", "iteration_limit", "time_limit", "interrupted",
         "solver_failure", "direct")
"""Why :func:`solve_scm` stopped: the imbalance ratio was reached; the positive miss rate exceeded
its threshold; the shrink stalled (rule (11) removed too few rows with ``shrink="eq11"``, or
every shrunk class is at its floor); ``max_iter`` / ``time_limit``; a solve
failed (``raise_on_failure=False``); Ctrl-C (the last finished round is returned); or
``aid=False`` (one SVM on all rows, no clustering)."""
#: ``final="refit"`` solves (6) on every row left, each its own cluster: with an interior-point
#: solver (Clarabel) on a dense kernel matrix that is :math:`O(n^3)` per iteration, so it is
#: skipped (with a warning) above this many rows unless ``solver="libsvm"``
REFIT_MAX_ROWS = 2000
#: a representative whose alpha is at most this share of its box |pi_c| C is left out of the
#: kernel expansion used for prediction (interior-point solvers never return exact zeros)
EXPANSION_CUTOFF = 1e-9


# --------------------------------------------------------------------------- the weighted SVM (6)


@dataclass
class RepresentativeSVM:
    """The weighted SVM (6) on one round's representatives, and its certificate.

    Attributes
    ----------
    alpha : ndarray of shape (k,)
        :math:`\\alpha_\\pi`, ``0 <= alpha <= weights * C``.
    b : float
    y, weights : ndarray of shape (k,)
        Labels :math:`y_c` and box weights :math:`|\\pi_c|`.
    w : ndarray or None
        :math:`w = \\sum_c \\alpha_c y_c u_c` for the linear kernel (explicit representatives).
    certificate : Certificate
        Of problem (6): duality gap and dual feasibility with the exact representative kernel.
    status : str
        The solver's verdict (``SolveStatus``; LIBSVM: ``"converged"`` or ``"max_iter"``).
    solver : str
    seconds : float
    psd_residual : float or None
        For a user kernel: :math:`\\max(0, -\\lambda_{min}/\\lambda_{max})` of the representative
        kernel, which weak duality needs to be 0 (checked by the certificate); ``None`` for the
        built-in kernels, positive semidefinite by construction.
    """

    alpha: np.ndarray
    b: float
    y: np.ndarray
    weights: np.ndarray
    w: np.ndarray | None
    certificate: Certificate
    status: str
    solver: str
    seconds: float
    psd_residual: float | None = None

    @property
    def objective(self) -> float:
        """The primal objective of (6): :math:`\\tfrac12\\|w\\|^2 + C\\sum_c |\\pi_c| \\xi_c`
        (:math:`= -G_\\pi(\\alpha_\\pi^*)` at the optimum)."""
        return self.certificate.primal_objective


def _weighted_data(y, s):
    """What :func:`hinge_certificate` reads of a data set: labels and row weights."""
    return types.SimpleNamespace(y=np.asarray(y, dtype=float), s=np.asarray(s, dtype=float))


def _kernel_certificate(y, s, f, alpha, Kpi, aggregate, C, tol, feasibility_tol, method,
                        psd_residual=None, Kdual=None) -> Certificate:
    """:func:`hinge_certificate` for a kernel expansion :math:`f = \\sum_c \\alpha_c y_c
    K_\\pi(\\cdot, c) + b` whose dual vector ``alpha`` aggregates to the representatives by
    ``aggregate(alpha) -> alpha_pi`` (the identity for (6) itself). ``Kpi`` gives the primal's
    :math:`\\|w\\|^2`; ``Kdual`` (default ``Kpi``) the dual's quadratic term of the aggregated
    alpha (the centroids' kernel when the representatives are pseudo-centres). ``psd_residual``
    (user kernels): weak duality needs a positive semidefinite kernel, so it is a checked
    residual."""
    Kdual = Kpi if Kdual is None else Kdual

    def dual_value(a, residuals):
        coef = aggregate(a) * ypi
        checked = []
        if psd_residual is not None:
            residuals["kernel PSD (min eig / max eig)"] = psd_residual
            checked.append("kernel PSD (min eig / max eig)")
        return float(a.sum()) - 0.5 * float(coef @ Kdual @ coef), checked

    ypi = aggregate.y
    coef0 = aggregate(np.asarray(alpha, dtype=float)) * ypi
    return hinge_certificate(
        _weighted_data(y, s), f, alpha, C=C, regularizer=0.5 * float(coef0 @ Kpi @ coef0),
        dual_value=dual_value, tol=tol, feasibility_tol=feasibility_tol, method=method)


class _Identity:
    """The aggregation of (6)'s own alpha (itself), carrying the representative labels."""

    def __init__(self, y):
        self.y = y

    def __call__(self, a):
        return a


class _ClusterSum:
    """Aggregate a lifted alpha over the training rows to the clusters: :math:`\\alpha_c =
    \\sum_{i \\in \\pi_c} \\alpha_i` (exact for a lift constant within each cluster, as the
    certificate's clipping and class rescaling keep it)."""

    def __init__(self, cluster_of, k, y):
        self.cluster_of, self.k, self.y = cluster_of, k, y

    def __call__(self, a):
        inside = self.cluster_of >= 0
        return np.bincount(self.cluster_of[inside], weights=a[inside], minlength=self.k)


def solve_representative_svm(y, weights, C, run: Run | RunConfig, *, U=None, Kpi=None,
                             psd_check: bool = False) -> RepresentativeSVM:
    """Solve the weighted SVM (6) on explicit representatives ``U`` (linear kernel) or on their
    kernel matrix ``Kpi``, with the run's solver (a QP solver with duals through its Pyomo
    model, or ``"libsvm"``), and certify it (``psd_check``: a user kernel, whose
    representative matrix is checked for positive semidefiniteness).

    ``run`` is the :class:`~aidopt.decomposition.run.Run` of an SCM solve (its clock, solver
    options, fallback policy and ``write_models``), or a ``RunConfig`` for a solve of its own.

    Raises
    ------
    SolverError
        The solve did not end optimal (LIBSVM: never raised; its status is reported).
    """
    if not isinstance(run, Run):
        run = Run("scm", solvers.ProblemClass.QP, run)
    config = run.config
    y = np.asarray(y, dtype=float)
    weights = np.asarray(weights, dtype=float)
    t0 = time.perf_counter()
    solver = config.solver
    w = None
    if solver == "libsvm":
        from sklearn.svm import SVC

        options = {"tol": 1e-3, "cache_size": 200, **config.solver_options}
        est = SVC(C=C, kernel="linear" if U is not None else "precomputed", **options)
        est.fit(U if U is not None else Kpi, y, sample_weight=weights)
        alpha = np.zeros(y.size)
        alpha[est.support_] = est.dual_coef_[0] * y[est.support_]
        b = float(est.intercept_[0])
        status = "converged" if est.fit_status_ == 0 else "max_iter"
    else:
        model = (svm.create_instance(U, y, weights, C, form="dual") if U is not None
                 else kernel_svm.create_instance(Kpi, y, weights, C))
        outcome = run.solve_or_retry(model, need_duals=True)  # the time left, written first
        if outcome.status == "time_limit":
            release(model)
            raise solvers.TimeLimitReached(f"time limit reached in the weighted SVM (6) on "
                                           f"{y.size} representatives")
        if not outcome.optimal:
            release(model)
            raise solvers.SolverError(
                f"the weighted SVM (6) on {y.size} representatives: {solver} returned "
                f"{outcome.status} ({outcome.message})")
        _, b, alpha = svm.solution_from(model, outcome.duals)
        release(model)
        if b is None:
            raise solvers.SolverError(f"{solver} returned no dual for the balance row (b)")
        status = str(outcome.status)
    seconds = time.perf_counter() - t0
    if U is not None:
        w = U.T @ (alpha * y)
        data = as_classification_data(U, y, sample_weight=weights)
        cert = svm_certificate(data, w, b, alpha, C=C, norm="l2", tol=config.tol,
                               feasibility_tol=config.feasibility_tol, method="solver_duals")
    psd = None
    if U is None:
        if psd_check:
            lam = np.linalg.eigvalsh(Kpi)
            psd = max(0.0, float(-lam[0] / max(lam[-1], 1e-300)))
        f = Kpi @ (alpha * y) + b
        cert = _kernel_certificate(y, weights, f, alpha, Kpi, _Identity(y), C, config.tol,
                                   config.feasibility_tol, "solver_duals", psd)
    return RepresentativeSVM(alpha, float(b), y, weights, w, cert, status, solver, seconds, psd)



# --------------------------------------------------------------------------- results


@dataclass
class SCMIteration:
    """One round of Algorithm 1."""

    t: int
    n_pos: int
    n_neg: int
    k_pos: int
    k_neg: int
    kmeans_iterations: int
    kmeans_objective: float
    svm_objective: float
    svm_gap: float
    svm_certified: bool
    miss_rate: float
    shrink: str
    removed: int
    vanished: int
    stalled: bool
    seconds: dict[str, float] = field(default_factory=dict)


@dataclass
class SCMResult(RunResult):
    """What :func:`solve_scm` returns.

    The decision function is the kernel expansion
    :math:`f(x) = \\sum_i \\beta_i K(x, s_i) + b` over the members :math:`s_i` of the support
    clusters (for the linear kernel :math:`f(x) = w^\\top x + b`); :math:`f > 0` means the
    positive (minority) class ``classes[1]``.

    Attributes
    ----------
    termination : str
        One of :data:`STOPS`.
    message : str
    classes : list
        ``[negative label, positive label]``: the positive class is the minority class (the
        paper's convention; the sorted second label on a tie).
    support_vectors, dual_coef : ndarray
        The expansion's rows :math:`s_i` and coefficients :math:`\\beta_i`.
    intercept : float
        :math:`b`.
    w : ndarray or None
        Linear kernel only.
    kernel : callable
    gamma : float or None
        The kernel scale used (``"scale"`` resolved on the training data).
    svm : RepresentativeSVM or None
        The weighted SVM (6) behind the returned decision function, with its certificate;
        ``None`` when the run stopped (time limit, a failed solve with
        ``raise_on_failure=False``) before round 0's SVM was solved: there is then no decision
        function (:meth:`decision_function` raises), ``certified`` is False and
        ``support_vectors`` / ``dual_coef`` are empty.
    full_certificate : Certificate or None
        SCM's solution as an SVM on all training rows: its duality gap against the lifted dual
        point of (2) (Theorem 2's :math:`\\alpha_i = \\alpha_{\\pi c}/|\\pi_c|`), a valid bound
        by weak duality. For pseudo-centres the lift's :math:`w` (the centroids') differs from
        SCM's, so the gap is looser.
    kept : ndarray of bool
        The training rows left after the last shrink.
    history : list of SCMIteration
    seconds : float
    cluster_of : ndarray of int
        The cluster (the row of ``svm.alpha``) of every training row in the round behind the
        decision function, -1 for rows shrunk before it.
    pseudo_centres : ndarray of int or None
        The training row of each cluster's pseudo-centre (10) (``representative="pseudo"``).
    """

    termination: str
    message: str
    classes: list
    support_vectors: np.ndarray
    dual_coef: np.ndarray
    intercept: float
    w: np.ndarray | None
    kernel: object
    gamma: float | None
    svm: RepresentativeSVM | None
    full_certificate: Certificate | None
    kept: np.ndarray
    history: list[SCMIteration]
    seconds: float
    config: dict = field(default_factory=dict)
    cluster_of: np.ndarray | None = None
    pseudo_centres: np.ndarray | None = None

    @property
    def certified(self) -> bool:
        """Whether the weighted SVM (6) behind the decision function is certified optimal (not
        a statement about the full-data SVM: see ``full_certificate``); False without one."""
        return self.svm is not None and self.svm.certificate.certified

    def decision_function(self, X) -> np.ndarray:
        """:math:`f(x)`; > 0 means ``classes[1]`` (the minority class).

        Raises
        ------
        RuntimeError
            The run stopped before any weighted SVM (6) was solved (``svm is None``).
        """
        if self.svm is None:
            raise RuntimeError(
                f"SCM has no decision function: termination {self.termination!r}"
                + (f" ({self.message})" if self.message else "")
                + "; raise time_limit or check the solver")
        X = np.asarray(X, dtype=float)
        if self.w is not None:
            return X @ self.w + self.intercept
        out = np.empty(X.shape[0])
        step = max(1, BLOCK_ENTRIES // max(1, self.support_vectors.shape[0]))
        for s in range(0, X.shape[0], step):
            K = kernel_matrix(self.kernel, X[s:s + step], self.support_vectors)
            out[s:s + step] = K @ self.dual_coef
        return out + self.intercept

    @property
    def certificate(self) -> Certificate | None:
        """The certificate of the weighted SVM (6) behind the decision function (None without
        one)."""
        return None if self.svm is None else self.svm.certificate

    def history_rows(self) -> list[dict]:
        """One row per round, a ``sec_<step>`` column per step time."""
        rows = []
        for it in self.history:
            row = {k: v for k, v in it.__dict__.items() if k != "seconds"}
            row.update({f"sec_{k}": v for k, v in it.seconds.items()})
            rows.append(row)
        return rows

    def plot(self, path=None):
        """Rows of each class left per round, and the weighted SVM's objective per round."""
        plt = pyplot()
        frame = self.history_frame()
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
        axes[0].plot(frame.t, frame.n_neg, "o-", label="negatives (majority)")
        axes[0].plot(frame.t, frame.n_pos, "s-", label="positives (minority)")
        axes[0].set_xlabel("round")
        axes[0].set_ylabel("rows left")
        axes[0].legend()
        axes[1].plot(frame.t, frame.svm_objective, "o-")
        axes[1].set_xlabel("round")
        axes[1].set_ylabel("objective of the weighted SVM (6)")
        fig.suptitle(f"SCM: {self.termination}")
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=120)
            plt.close(fig)
        return fig

    def to_dict(self) -> dict:
        """Everything but the kernel function, as plain Python values."""
        from dataclasses import asdict

        def cert(c):
            return None if c is None else {k: v for k, v in asdict(c).items() if k != "dual_values"}

        return {
            "termination": self.termination, "message": self.message,
            "classes": [c.item() if hasattr(c, "item") else c for c in self.classes],
            "intercept": self.intercept, "gamma": self.gamma,
            "w": None if self.w is None else np.asarray(self.w).tolist(),
            "support_vectors": self.support_vectors.tolist(), "dual_coef": self.dual_coef.tolist(),
            "svm": None if self.svm is None else {
                "alpha": self.svm.alpha.tolist(), "b": self.svm.b, "y": self.svm.y.tolist(),
                "weights": self.svm.weights.tolist(), "status": self.svm.status,
                "solver": self.svm.solver, "seconds": self.svm.seconds,
                "certificate": cert(self.svm.certificate)},
            "full_certificate": cert(self.full_certificate),
            "kept": np.flatnonzero(self.kept).tolist(),
            "cluster_of": None if self.cluster_of is None else self.cluster_of.tolist(),
            "history": [it.__dict__ for it in self.history], "seconds": self.seconds,
            "config": self.config,
        }

    def summary(self) -> str:
        lines = [f"SCM: termination {self.termination}" + (f" ({self.message})" if self.message else ""),
                 f"  rounds {len(self.history)}, {self.kept.sum()} of {self.kept.size} training rows "
                 f"kept, {self.support_vectors.shape[0]} expansion rows, {self.seconds:.2f} s"]
        if self.svm is None:
            lines.append("  no weighted SVM (6) solved: no decision function")
        else:
            lines.append("  weighted SVM (6) on the representatives, solver " + self.svm.solver + ":")
            lines += ["    " + line for line in self.svm.certificate.summary().splitlines()]
        if self.full_certificate is not None:
            c = self.full_certificate
            lines.append(f"  as an SVM on all training rows: objective {c.primal_objective:.6g}, "
                         f"dual bound {c.dual_objective:.6g}, relative gap {c.relative_gap:.3e} "
                         "(a measure of SCM's distance to the full SVM, not certified)"
                         if not c.certified else
                         f"  as an SVM on all training rows: certified optimal (relative gap "
                         f"{c.relative_gap:.3e})")
        return "\n".join(lines)


# --------------------------------------------------------------------------- Algorithm 1


def _positive_number(value, name, *, allow_zero=False, upper=None):
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    ok = ok and (value >= 0 if allow_zero else value > 0) and (upper is None or value <= upper)
    if not ok:
        bound = f" and at most {upper}" if upper is not None else ""
        raise ValueError(f"{name} must be a {'non-negative' if allow_zero else 'positive'} finite "
                         f"number{bound}, got {value!r}")
    return float(value)


def _optional_count(value, name):
    if value is None:
        return None
    if not (isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1):
        raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
    return int(value)


def _resolve_kernel(kernel, gamma, degree, coef0, X):
    """``(kfun, gamma, explicit)``; ``gamma="scale"`` is ``1 / (m Var(X))`` as in scikit-learn."""
    if not callable(kernel) and kernel not in SVC_KERNELS:
        raise ValueError(f"kernel must be one of {SVC_KERNELS} or a callable, got {kernel!r}")
    if isinstance(gamma, str):
        if gamma != "scale":
            raise ValueError(f"gamma must be 'scale' or a positive number, got {gamma!r}")
        var = float(X.var())
        gamma = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
    else:
        gamma = _positive_number(gamma, "gamma")
    if not (isinstance(degree, numbers.Integral) and not isinstance(degree, bool) and degree >= 1):
        raise ValueError(f"degree must be a positive integer, got {degree!r}")
    if kernel == "poly" and not (isinstance(coef0, numbers.Real) and coef0 >= 0):
        raise ValueError(f"the polynomial kernel needs coef0 >= 0 to be positive semidefinite, "
                         f"got {coef0!r}")
    kfun = svc_kernel(kernel, gamma, int(degree), float(coef0))
    return kfun, (None if kernel == "linear" or callable(kernel) else gamma), kernel == "linear"


def _check_solver(name) -> None:
    if name == "libsvm":
        try:
            import sklearn  # noqa: F401
        except ImportError as exc:
            raise solvers.SolverUnavailableError(
                "solver='libsvm' uses scikit-learn's SVC: pip install scikit-learn") from exc
        return
    spec = solvers.check_solver(name, solvers.ProblemClass.QP, need_duals=True)
    if spec is not None and not spec.duals:
        raise solvers.SolverError(f"SCM reads b from a dual, which {name!r} does not return; use "
                                  "solver='clarabel', 'highs', 'gurobi' or 'libsvm'")


@dataclass
class _Round:
    """A solved round: the rows ``D`` it used, their clusters, representation and the SVM."""

    D: np.ndarray
    cluster_of: np.ndarray  # cluster of every row of D
    R: sparse.csr_matrix  # len(D) x k representation (centroid weights or pseudo-centre picks)
    Kpi: np.ndarray | None
    rep: RepresentativeSVM
    f: np.ndarray  # decision values on D
    centres: np.ndarray | None = None  # pseudo-centres (10): their positions in D


#: the parameters of Support Cluster Machines: the one declaration behind solve_scm,
#: SCMClassifier and ``aidopt scm``
SCM = Family(
    "scm",
    Param("C", 1.0,
          "The SVM's misclassification cost; cluster c's box is :math:`|\\pi_c| C` (6).",
          kind="float"),
    Param("kernel", "rbf",
          "The SVM's kernel, also used by the kernel k-means (the paper's setting (a)).",
          kind="{\"rbf\", \"linear\", \"poly\"} or callable", choices=("rbf", "linear", "poly")),
    GAMMA,
    DEGREE,
    COEF0,
    Param("k_neg", None,
          ":math:`k^-`, clusters of the negatives in every round (capped at their number); "
          "default :math:`\\lceil r_0 |\\mathcal D^-_t| \\rceil` with ``r0`` (default 0.1, the "
          "paper's :math:`|\\mathcal D^-| / 10`).",
          kind="int", parse=int),
    Param("k_pos", None,
          ":math:`k^+`. Default: every positive its own cluster when the data are imbalanced "
          "(:math:`|\\mathcal D^-| >` ``ratio`` :math:`|\\mathcal D^+|`), else :math:`\\lceil r_0 "
          "|\\mathcal D^+| \\rceil` (balanced data: both classes clustered and shrunk). It only "
          "sets the number of clusters: whether the positives are shrunk and whether the ratio "
          "stop applies depend on the imbalance alone (imbalanced: positives never shrunk, "
          "ratio stop; balanced: both classes shrunk, no ratio stop).",
          kind="int", parse=int),
    Param("clustering", "kernel",
          "k-means in feature space (SCMs) or in input space (SCMs_I).",
          kind="{\"kernel\", \"input\"}", choices=CLUSTERINGS),
    Param("representative", "centroid",
          "Feature-space centroid (8), or the pseudo-centre: the member nearest to the centroid"
          " in feature space, :math:`\\arg\\min_{i \\in \\pi_c} K_{ii} - 2\\sum_{j \\in \\pi_c} K_{ij}"
          " / |\\pi_c|`, which is (10) when :math:`K_{ii}` is constant (RBF).",
          kind="{\"centroid\", \"pseudo\"}", choices=REPRESENTATIVES),
    Param("shrink", "eq11",
          "Rule (11) with ``shrink_gamma``; the rank shrink; or (11) switching to the rank "
          "shrink in a round where (11) stalls.",
          kind="{\"eq11\", \"rank\", \"auto\"}", choices=SHRINKS),
    Param("shrink_gamma", 1.3,
          ":math:`\\gamma` of (11), default 1.3 (the paper's setting (c)).",
          kind="float"),
    Param("shrink_side", "both",
          "Rule (11) as printed, :math:`|f(x)| > \\gamma` removed (default), or only the rows "
          "far on the correct side, :math:`y f(x) > \\gamma` (:data:`SHRINK_SIDES`).",
          kind="{\"both\", \"margin\"}", choices=SHRINK_SIDES),
    Param("ratio", 5.0,
          "Stop when :math:`|\\mathcal D^-_t| \\le` ``ratio`` :math:`|\\mathcal D^+|` (setting "
          "(e): 5).",
          kind="float"),
    Param("max_miss_rate", None,
          "The Neyman-Pearson rule: stop when the share of positives with :math:`f \\le 0` "
          "exceeds it; the last round within it is returned (the first round if none is).",
          kind="float", parse=none_or_float),
    Param("rank_keep", 0.5,
          "Share of the clustered rows a rank shrink keeps, in (0, 1); it never keeps fewer "
          "than ``ratio`` times the positives (imbalanced data) or, on balanced data, than the "
          "round-0 number of clusters of the class.",
          kind="float"),
    Param("stall_fraction", 0.05,
          "A shrink that removes fewer than this share of the clustered rows is a stall.",
          kind="float"),
    Param("kmeans_iter", 10,
          "Lloyd iterations of the kernel k-means per round.",
          kind="int"),
    Param("final", "last",
          "Return the last round's decision function (Algorithm 1), or solve the weighted SVM "
          "once more on the rows left after the last shrink, every row its own cluster. With a "
          "solver other than ``\"libsvm\"`` the refit is skipped (a warning, and the message says"
          " so) when more than :data:`REFIT_MAX_ROWS` rows are left (after a stall of rule (11)"
          " that can be every row of the round).",
          kind="{\"last\", \"refit\"}", choices=FINALS),
)


@SCM.door()
@clocked  # the input's checks and round 0's kernel values count against time_limit
def solve_scm(X, y, *, p, **options) -> SCMResult:
    r"""Support Cluster Machines (Yuan, Li & Zhang 2006, Algorithm 1) on rows ``X``, labels ``y``.

    Parameters
    ----------
    X : array-like of shape (n, m)
    y : array-like of shape (n,)
        Two labels; the minority class is the positive class :math:`\mathcal D^+` (the sorted
        second label on a tie).
    solver : str
        ``"clarabel"`` (default) or another QP solver with duals, through aidopt's Pyomo model of
        (6); or ``"libsvm"``: scikit-learn's SVC (LIBSVM's SMO, ``sample_weight`` = the box weights
        :math:`|\pi_c|`), stopped at its KKT tolerance (``solver_options={"tol": 1e-3}``); its
        certificate is computed and reported all the same. ``time_limit`` is not passed to
        LIBSVM (it has none): it is checked between rounds only.
    aid : bool
        False: no clustering and no shrinking, the SVM on all rows (the paper's "Whole").
    r0 : float
        :math:`k / |\mathcal D|` of a clustered class (default 0.1).
    max_iter, time_limit
        Rounds of Algorithm 1, and wall-clock seconds from the call: checked between rounds,
        between blocks of kernel values (the Gram matrix, the kernel k-means, the
        representatives' kernel) and passed to every Pyomo solve (not to LIBSVM). A time limit
        is a result, whatever ``raise_on_failure`` says (as in every run: a time limit is not a
        solver failure): the last finished round, or, when round 0's weighted SVM was not
        solved, a result with termination ``"time_limit"`` and no decision function
        (``svm is None``).

    Returns
    -------
    SCMResult

    Raises
    ------
    ValueError
        Bad data (one class, NaN/inf, shapes) or parameters (``k_neg`` larger than the class,
        ``shrink_gamma <= 0``, ...), before anything is computed.
    """
    # ---------------------------------------------------------------- validation, before solving
    config = RunConfig.from_kwargs(options, caller="solve_scm", solver="clarabel")
    _check_parameters(p)
    data = as_classification_data(X, y)
    counts = {s: int((data.y == s).sum()) for s in (-1.0, 1.0)}
    flip = counts[1.0] > counts[-1.0]  # the positive class is the minority class
    yy = -data.y if flip else data.y.copy()
    classes = [data.classes[1], data.classes[0]] if flip else [data.classes[0], data.classes[1]]
    pos, neg = np.flatnonzero(yy > 0), np.flatnonzero(yy < 0)
    if p.k_neg is not None and p.k_neg > neg.size:
        raise ValueError(f"k_neg = {p.k_neg} is larger than the negative (majority) class "
                         f"({neg.size} rows)")
    if p.k_pos is not None and p.k_pos > pos.size:
        raise ValueError(f"k_pos = {p.k_pos} is larger than the positive (minority) class "
                         f"({pos.size} rows)")
    _check_solver(config.solver)
    with run_scope(config):
        return _SCMLoop(p, config, data.X, yy, pos, neg, classes).execute()


def _check_parameters(p) -> None:
    """Check (and normalise) the parameters of :func:`solve_scm` before anything is computed."""
    p.C = _positive_number(p.C, "C")
    for name, allowed in (("clustering", CLUSTERINGS), ("representative", REPRESENTATIVES),
                          ("shrink", SHRINKS), ("final", FINALS), ("shrink_side", SHRINK_SIDES)):
        if getattr(p, name) not in allowed:
            raise ValueError(f"{name} must be one of {allowed}, got {getattr(p, name)!r}")
    p.shrink_gamma = _positive_number(p.shrink_gamma, "shrink_gamma (gamma of eq. 11)")
    p.ratio = _positive_number(p.ratio, "ratio")
    p.rank_keep = _positive_number(p.rank_keep, "rank_keep", upper=1.0)
    if p.rank_keep >= 1.0:
        raise ValueError(f"rank_keep must be below 1 (a rank shrink must remove rows), got {p.rank_keep}")
    p.stall_fraction = _positive_number(p.stall_fraction, "stall_fraction", allow_zero=True, upper=1.0)
    if p.max_miss_rate is not None:
        p.max_miss_rate = _positive_number(p.max_miss_rate, "max_miss_rate", allow_zero=True, upper=1.0)
    p.kmeans_iter = _optional_count(p.kmeans_iter, "kmeans_iter")
    if p.kmeans_iter is None:
        raise ValueError("kmeans_iter must be a positive integer")
    p.k_neg, p.k_pos = _optional_count(p.k_neg, "k_neg"), _optional_count(p.k_pos, "k_pos")


class _SCMLoop:
    """Algorithm 1 on the run framework: the rounds (cluster, represent, solve (6), shrink (11)),
    the stop rules, the optional refit and the result. One object per :func:`solve_scm` call."""

    def __init__(self, p, config: RunConfig, X, yy, pos, neg, classes):
        self.p, self.config, self.classes = p, config, classes
        # positives first: every class is a contiguous range of the (cached) Gram matrix
        self.order = np.concatenate([pos, neg])
        Xp, self.yp = X[self.order], yy[self.order]
        self.n, self.n_pos = Xp.shape[0], pos.size
        self.r0 = 0.1 if config.r0 is None else float(config.r0)
        self.imbalanced = neg.size > p.ratio * pos.size
        self.shrink_pos = not self.imbalanced  # balanced data: both classes shrunk, no ratio stop
        self.cluster_pos = p.k_pos is not None or self.shrink_pos  # k+ (else singletons)
        self.kfun, self.gamma_used, self.explicit = _resolve_kernel(p.kernel, p.gamma, p.degree,
                                                                    p.coef0, X)
        self.run = Run("scm", solvers.ProblemClass.QP, config,
                       dimensions={"n": self.n, "m": Xp.shape[1]},
                       mode="Algorithm 1" if config.aid else "one SVM on all rows")
        self.Xp = Xp
        # the Gram matrices (:meth:`_grams`) are made in round 0, against the run's clock
        self.gram: KernelGram | None = None
        self.kgram: KernelGram | None = None
        self.rng = np.random.default_rng(config.seed)
        self.history: list[SCMIteration] = []
        self.kept_pos, self.kept_neg = np.arange(self.n_pos), np.arange(self.n_pos, self.n)
        self.best: _Round | None = None
        self.previous: _Round | None = None
        self.stop, self.message = None, ""
        self.floors: dict[str, int] = {}  # the fewest rows a rank shrink keeps, per shrunk class

    def _grams(self) -> None:
        """The SVM's Gram matrix of the training rows (cached when it fits: O(n^2) kernel
        values, computed in blocks that stop at the run's deadline) and the k-means one."""
        p = self.p
        # rbf and linear values of finite data are finite: only other kernels are checked
        self.gram = KernelGram(self.Xp, self.kfun, explicit=self.explicit,
                               check=p.kernel not in ("rbf", "linear"),
                               diag=kernel_diagonal(p.kernel, self.gamma_used, int(p.degree),
                                                    float(p.coef0)),
                               deadline=self.run.deadline)
        # the k-means Gram: the SVM's kernel, or the input space's (SCMs_I)
        self.kgram = self.gram if p.clustering == "kernel" or self.explicit else KernelGram(
            self.Xp, svc_kernel("linear", 1.0), explicit=True, deadline=self.run.deadline)

    # ------------------------------------------------------------------ driver
    def execute(self) -> SCMResult:
        p, config, run = self.p, self.config, self.run
        run.log.info("SCM | n=%d (positives %d, negatives %d) m=%d | kernel %s | C %g | "
                     "clustering %s, representative %s, shrink %s (gamma %g, %s), ratio %g | "
                     "solver %s%s", self.n, self.n_pos, self.n - self.n_pos, self.Xp.shape[1],
                     p.kernel if isinstance(p.kernel, str) else "callable", p.C, p.clustering,
                     p.representative, p.shrink, p.shrink_gamma, p.shrink_side, p.ratio,
                     config.solver, "" if config.aid else " | aid=False: one SVM on all rows")
        run.header(COLUMNS)
        t = 0
        with run.guard():  # Ctrl-C: the last finished round is returned
            while self.stop is None:
                self._round(t)
                t += 1
        if run.interrupted:
            if self.best is None and self.previous is None:
                raise KeyboardInterrupt  # nothing finished: no decision function to return
            self.best = self.best or self.previous
            self.stop, self.message = "interrupted", "interrupted (Ctrl-C): the last finished round"
        kept = np.concatenate([self.kept_pos, self.kept_neg])
        if self.best is None:  # stopped before round 0's weighted SVM: no decision function
            result = _no_solution(self.Xp.shape[1], self.n, self.order, config, self.stop,
                                  self.message, self.classes, self.kfun, self.gamma_used,
                                  kept, self.history, run)
        else:
            self._refit()
            # the result of a round that finished: its decision values and full-data
            # certificate are computed to the end, as every run certifies its answer
            self.gram.deadline = None
            result = _result(self.best, self.gram, self.yp, self.order, p.C, config, self.stop,
                             self.message, self.classes, self.kfun, self.gamma_used, kept,
                             self.history, run)
        run.log.info("-" * sum(c.width + 1 for c in run.columns))
        run.log.info(result.summary())
        return result

    # ------------------------------------------------------------------ one round
    def _clusters(self, npos: int, nneg: int) -> tuple[int, int]:
        """``(k+, k-)`` of a round with ``npos`` / ``nneg`` rows left."""
        p = self.p
        if not self.config.aid:
            return npos, nneg
        kp = (min(p.k_pos, npos) if p.k_pos is not None else math.ceil(self.r0 * npos)) \
            if self.cluster_pos else npos
        kn = min(p.k_neg, nneg) if p.k_neg is not None else math.ceil(self.r0 * nneg)
        return kp, kn

    def _round(self, t: int) -> None:
        """Cluster, solve (6), record round ``t`` and decide whether to stop (``self.stop``)."""
        p, config, run = self.p, self.config, self.run
        seconds: dict[str, float] = {}
        clock = time.perf_counter()
        D = np.concatenate([self.kept_pos, self.kept_neg])
        npos, nneg = self.kept_pos.size, self.kept_neg.size
        kp, kn = self._clusters(npos, nneg)
        if t == 0:  # balanced data: no class shrinks below its round-0 number of clusters
            self.floors = {"pos": kp, "neg": kn if self.shrink_pos else math.ceil(p.ratio * npos)}
        try:  # the kernel values stop at the deadline (TimeLimitReached), as the solve does
            if self.gram is None:
                self._grams()
            g = self.gram.subset(D)  # this round's rows (a view in round 0, one gather later)
            kg = g if self.kgram is self.gram else self.kgram.subset(D)
            km_pos = kernel_kmeans(kg, slice(0, npos), kp, self.rng, p.kmeans_iter)
            km_neg = kernel_kmeans(kg, slice(npos, D.size), kn, self.rng, p.kmeans_iter)
            seconds["cluster"] = time.perf_counter() - clock
            round_ = _solve_round(g, D, km_pos, km_neg, p.representative, p.C, run, seconds,
                                  kg is g, callable(p.kernel))
        except solvers.TimeLimitReached as exc:
            # a time limit is a result, whatever raise_on_failure says (Run.error)
            self.best = self.previous
            self.stop = "time_limit"
            self.message = (f"time_limit = {config.time_limit:g} s; " + (
                f"the last finished round ({t - 1}) is returned" if self.previous is not None
                else f"reached in round 0 before its weighted SVM (6) was solved ({exc}): no "
                     "decision function"))
            return
        except solvers.SolverError as exc:
            if config.raise_on_failure:
                raise
            self.best = self.previous
            self.stop = "solver_failure"
            self.message = ("a weighted SVM solve failed; the last round is returned"
                            if self.previous is not None else
                            f"round 0's weighted SVM (6) failed ({exc}): no decision function")
            return
        rep, f = round_.rep, round_.f
        miss = float(np.mean(f[:npos] <= 0.0))
        clock = time.perf_counter()
        values = {"neg": f[npos:], **({"pos": f[:npos]} if self.shrink_pos else {})}
        keep, removed, used, stalled, vanished = _shrink(  # rule (11), or by rank
            values, rep.b, shrink=p.shrink, gamma=p.shrink_gamma, side=p.shrink_side,
            rank_keep=p.rank_keep, stall_fraction=p.stall_fraction, floors=self.floors,
            explicit=self.explicit, both_classes=self.shrink_pos)
        seconds["shrink"] = time.perf_counter() - clock
        self.history.append(SCMIteration(
            t=t, n_pos=npos, n_neg=nneg, k_pos=kp, k_neg=kn,
            kmeans_iterations=max(km_pos.iterations, km_neg.iterations),
            kmeans_objective=km_pos.objective + km_neg.objective,
            svm_objective=rep.objective, svm_gap=rep.certificate.relative_gap,
            svm_certified=rep.certificate.certified, miss_rate=miss,
            shrink=used if config.aid else "none", removed=removed if config.aid else 0,
            vanished=vanished, stalled=bool(stalled and config.aid),
            seconds={k: round(v, 6) for k, v in seconds.items()}))
        run.row(t, npos, nneg, kp, kn, self.history[-1].kmeans_iterations, rep.objective,
                rep.certificate.relative_gap, miss, self.history[-1].removed,
                self.history[-1].shrink + ("!" if stalled and config.aid else ""))
        self._stop_rules(t, round_, miss, keep, removed, stalled, vanished, values)

    # ------------------------------------------------------------------ stop rules
    def _stop_rules(self, t, round_, miss, keep, removed, stalled, vanished, values) -> None:
        """Algorithm 1's stop rules after round ``t``; otherwise shrink the rows kept."""
        p, config = self.p, self.config
        if not config.aid:
            self.best, self.stop, self.message = round_, "direct", "aid=False: the SVM on all rows"
            return
        if p.max_miss_rate is not None and miss > p.max_miss_rate:
            self.best = self.previous if self.previous is not None else round_
            self.stop = "miss_rate"
            self.message = (f"positive miss rate {miss:.4f} > {p.max_miss_rate:g} in round {t}; "
                            + (f"round {t - 1} is returned" if self.previous is not None
                               else "no earlier round: round 0 is returned"))
            return
        self.best = round_
        if stalled and p.shrink == "eq11":
            n_shrinkable = sum(v.size for v in values.values())
            self.stop = "stalled"
            self.message = (f"rule (11) removed {removed} of {n_shrinkable} clustered rows "
                            f"(< {p.stall_fraction:g} of them)")
            if vanished:
                b = round_.rep.b
                self.message += (f"; {vanished} have f = b within 1e-3 (the kernel vanished far "
                                 f"from every support cluster) and |b| = {abs(b):.3g}"
                                 + (f" <= gamma = {p.shrink_gamma:g}" if abs(b) <= p.shrink_gamma
                                    else ""))
            self.message += "; shrink='rank' or 'auto' proceeds by rank"
            return
        self.kept_neg = self.kept_neg[keep["neg"]]
        if "pos" in keep:
            self.kept_pos = self.kept_pos[keep["pos"]]
        self.previous = round_
        kept_pos, kept_neg = self.kept_pos, self.kept_neg
        if kept_neg.size == 0 or kept_pos.size == 0:
            self.stop = "stalled"
            self.message = "the shrink removed every row of a class; the last round is returned"
        elif removed == 0:  # a rank shrink at its floors
            self.stop = "stalled"
            self.message = ("the rank shrink removed no row: every shrunk class is at its floor ("
                            + ", ".join(f"{self.floors[c]} {name}" for c, name in
                                        (("pos", "positives"), ("neg", "negatives")) if c in values)
                            + ")")
        elif self.imbalanced and kept_neg.size <= p.ratio * kept_pos.size:
            self.stop = "ratio"
            self.message = f"{kept_neg.size} negatives <= {p.ratio:g} x {kept_pos.size} positives"
        elif config.max_iter is not None and t + 1 >= config.max_iter:
            self.stop, self.message = "iteration_limit", f"max_iter = {config.max_iter} rounds"
        elif self.run.time_up():
            self.stop, self.message = "time_limit", f"time_limit = {config.time_limit:g} s"

    # ------------------------------------------------------------------ the end
    def _refit(self) -> None:
        """``final="refit"``: one more SVM (6) on every row left, each its own cluster."""
        p, config, run = self.p, self.config, self.run
        kept_pos, kept_neg = self.kept_pos, self.kept_neg
        refit = p.final == "refit" and self.stop in ("ratio", "stalled", "iteration_limit") \
            and kept_pos.size and kept_neg.size
        if refit and config.solver != "libsvm" and kept_pos.size + kept_neg.size > REFIT_MAX_ROWS:
            skipped = (f"refit skipped: {kept_pos.size + kept_neg.size} rows left > REFIT_MAX_ROWS "
                       f"= {REFIT_MAX_ROWS} for solver {config.solver!r} (a dense kernel QP); "
                       "use solver='libsvm' or raise aidopt.api.scm.REFIT_MAX_ROWS")
            self.message += "; " + skipped
            run.log.warning(skipped)
            warnings.warn(skipped, stacklevel=5)  # the caller of solve_scm
            return
        if not refit:
            return
        D = np.concatenate([kept_pos, kept_neg])
        singles = [KMeansResult(np.arange(m), 0.0, 0, True, np.zeros(m))
                   for m in (kept_pos.size, kept_neg.size)]
        try:
            refitted = _solve_round(self.gram.subset(D), D, *singles, p.representative, p.C, run,
                                    {}, True, callable(p.kernel))
        except solvers.TimeLimitReached:  # the last round stands
            self.message += "; refit not finished: time limit reached"
            run.log.info("refit not finished: time limit reached; the last round is returned")
            return
        self.best = refitted
        self.message += f"; refit on the {D.size} rows left"
        run.log.info("refit on %d rows: SVM (6) objective %.8g, gap %.2e", D.size,
                     self.best.rep.objective, self.best.rep.certificate.relative_gap)


def _shrink(values, b, *, shrink, gamma, side, rank_keep, stall_fraction, floors, explicit,
            both_classes=False):
    """Shrink the shrunk classes (``values``: ``"neg"`` / ``"pos"`` -> their decision values
    :math:`f`). Rule (11) keeps :math:`|f| \\le \\gamma` (``side="both"``) or
    :math:`y f \\le \\gamma` (``side="margin"``); a round that removes fewer than
    ``stall_fraction`` of the rows (or none) stalls; the rank shrink keeps the ``rank_keep`` share
    with the smallest margin :math:`y f`, at least ``floors[class]`` rows of each class.
    ``both_classes`` (balanced data, both classes shrunk): the rank is by :math:`|y f - 1|`
    (nearest the margin first), and rule (11) too keeps at least ``floors[class]`` rows (those it
    keeps, then the removed ones nearest the margin).

    Returns
    -------
    keep : dict of boolean masks, removed : int, used : {"eq11", "rank"}, stalled : bool,
    vanished : int
        The rows with :math:`f = b` within :math:`10^{-3}` of the largest :math:`|f - b|` (the
        kernel vanished: no support cluster sees them); 0 for the linear kernel.
    """
    n = sum(v.size for v in values.values())
    vanished = 0 if explicit else sum(
        int((np.abs(v - b) <= 1e-3 * max(float(np.abs(v - b).max()), 1e-300)).sum())
        for v in values.values() if v.size)
    sign = {"pos": 1.0, "neg": -1.0}

    def first(name, v, n_keep, before=None):
        """The ``n_keep`` rows of the rank (``before``: these rows ahead of all others)."""
        margin = sign[name] * v
        # imbalanced: small y f first (inside or beyond the margin); balanced: nearest the margin
        # y f = 1 (keeping the most misclassified rows of both classes inverts the SVM)
        key = np.abs(margin - 1.0) if both_classes else margin
        if before is not None:
            key = np.where(before, -np.inf, key)
        mask = np.zeros(v.size, dtype=bool)
        mask[np.argsort(key, kind="stable")[:n_keep]] = True
        return mask

    keep = {name: (np.abs(v) if side == "both" else sign[name] * v) <= gamma
            for name, v in values.items()}
    if both_classes:  # balanced data: rule (11) leaves every class at least its floor
        for name, v in values.items():
            floor = min(v.size, floors.get(name, 1))
            if keep[name].sum() < floor:
                keep[name] = first(name, v, floor, before=keep[name])
    removed = sum(int((~mask).sum()) for mask in keep.values())
    stalled = shrink != "rank" and (removed == 0 or removed < stall_fraction * n)
    used = "rank" if shrink == "rank" or (stalled and shrink == "auto") else "eq11"
    if used == "rank":
        for name, v in values.items():
            keep[name] = first(name, v, min(v.size, max(math.ceil(rank_keep * v.size),
                                                        floors.get(name, 1))))
        removed = sum(int((~mask).sum()) for mask in keep.values())
    return keep, removed, used, stalled, vanished


def _solve_round(g: KernelGram, D, km_pos, km_neg, representative, C, run: Run, seconds,
                 same_kernel, psd_check) -> _Round:
    """Representatives of the clusters of the round's rows ``D`` (positives first; ``g`` is
    their Gram), the weighted SVM (6) on them, and the decision values on ``D``."""
    clock = time.perf_counter()
    kp, kn = int(km_pos.labels.max(initial=-1)) + 1, int(km_neg.labels.max(initial=-1)) + 1
    cluster_of = np.concatenate([km_pos.labels, kp + km_neg.labels])
    k = kp + kn
    sizes = np.bincount(cluster_of, minlength=k).astype(float)
    ypi = np.concatenate([np.ones(kp), -np.ones(kn)])
    singletons = bool(np.all(sizes == 1))
    if representative == "centroid" or singletons:
        R = sparse.csr_matrix((1.0 / sizes[cluster_of], (np.arange(D.size), cluster_of)),
                              shape=(D.size, k))
    else:  # pseudo-centre: the member nearest to the cluster's centroid in feature space,
        # ||phi_i - m_c||^2 = K_ii - 2 r_i / |pi_c| + ||m_c||^2 (the last term is the cluster's);
        # (10)'s largest within-cluster kernel sum r_i when K_ii is constant (RBF)
        within = (np.concatenate([km_pos.within, km_neg.within]) if same_kernel
                  else _within_sums(g, cluster_of, k))  # the SVM's kernel
        score = g.diag(None) - 2.0 * within / sizes[cluster_of]
        order = np.lexsort((score, cluster_of))
        first = order[np.r_[True, cluster_of[order][1:] != cluster_of[order][:-1]]]
        R = sparse.csr_matrix((np.ones(k), (first, cluster_of[first])), shape=(D.size, k))
    U = np.asarray(R.T @ g.X) if g.explicit else None
    Kpi = None if g.explicit else g.sandwich(R)
    seconds["represent"] = time.perf_counter() - clock
    if run.time_up():
        raise solvers.TimeLimitReached(
            f"time_limit = {run.config.time_limit:g} s reached before the weighted SVM (6) of this "
            "round was solved")
    rep = solve_representative_svm(ypi, sizes, C, run, U=U, Kpi=Kpi, psd_check=psd_check)
    seconds["solve"] = rep.seconds
    seconds["certify"] = time.perf_counter() - clock - seconds["represent"] - rep.seconds
    clock = time.perf_counter()
    if rep.w is not None:
        f = g.X @ rep.w + rep.b
    else:
        beta = R @ (rep.alpha * ypi)
        support = np.flatnonzero(beta != 0.0)
        f = (g.times(None, None, beta) if support.size > D.size // 4
             else g.times(None, support, beta[support])) + rep.b
    seconds["predict"] = time.perf_counter() - clock
    centres = None if representative == "centroid" or singletons else first
    return _Round(D, cluster_of, R, Kpi, rep, f, centres)


def _no_solution(m, n, order, config, stop, message, classes, kfun, gamma_used, kept, history,
                 run: Run) -> SCMResult:
    """The result of a run that stopped before round 0's weighted SVM (6) was solved: no
    decision function (``svm`` None, an empty expansion), the rows it had kept, in the caller's
    row order."""
    kept_mask = np.zeros(n, dtype=bool)
    kept_mask[order[kept]] = True
    return SCMResult(
        termination=stop, message=message, classes=list(classes),
        support_vectors=np.empty((0, m)), dual_coef=np.empty(0), intercept=math.nan, w=None,
        kernel=kfun, gamma=gamma_used, svm=None, full_certificate=None, kept=kept_mask,
        history=history, seconds=run.elapsed(), config=config.as_dict())


def _result(best: _Round, gram: KernelGram, yp, order, C, config, stop, message, classes, kfun,
            gamma_used, kept, history, run: Run) -> SCMResult:
    """The decision function of ``best`` over the (class-ordered) training rows, the full-data
    certificate of its lift, and the result in the caller's row order (``order``)."""
    rep = best.rep
    ypi = rep.y
    alpha_used = np.where(rep.alpha > EXPANSION_CUTOFF * rep.weights * C, rep.alpha, 0.0)
    beta = best.R @ (alpha_used * ypi)
    rows = np.flatnonzero(beta != 0.0)
    support = best.D[rows]  # rows of the class-ordered data
    n = gram.n
    # Theorem 2's lift, alpha_i = alpha_c / |pi_c| on the round's rows and 0 on shrunk rows: a
    # feasible point of the full dual (2), certified against SCM's own (w, b) by weak duality
    sizes = np.bincount(best.cluster_of, minlength=ypi.size).astype(float)
    alpha_lift = np.zeros(n)
    alpha_lift[best.D] = (rep.alpha / sizes)[best.cluster_of]
    if gram.explicit:  # the dual term from the rows themselves, the primal from SCM's w
        data = as_classification_data(gram.X, yp)
        full = svm_certificate(data, rep.w, rep.b, alpha_lift, C=C, norm="l2", tol=config.tol,
                               feasibility_tol=config.feasibility_tol, method="scm_lift")
    else:
        cluster_of = np.full(n, -1)
        cluster_of[best.D] = best.cluster_of
        exact = best.R @ (rep.alpha * ypi)  # the certificate's f: every alpha, none cut off
        nz = np.flatnonzero(exact != 0.0)
        f_all = gram.times(None, best.D[nz], exact[nz]) + rep.b
        Kdual, psd = None, rep.psd_residual
        if best.centres is not None:  # pseudo-centres: the lift's w is the centroids' (8)
            Kdual = gram.sandwich(sparse.csr_matrix(
                (1.0 / sizes[best.cluster_of], (best.D, best.cluster_of)), shape=(n, ypi.size)))
            if psd is not None:
                lam = np.linalg.eigvalsh(Kdual)
                psd = max(psd, max(0.0, float(-lam[0] / max(lam[-1], 1e-300))))
        full = _kernel_certificate(yp, np.ones(n), f_all, alpha_lift, best.Kpi,
                                   _ClusterSum(cluster_of, ypi.size, ypi), C, config.tol,
                                   config.feasibility_tol, "scm_lift", psd, Kdual=Kdual)
    kept_mask = np.zeros(n, dtype=bool)
    kept_mask[order[kept]] = True
    cluster_of = np.full(n, -1)
    cluster_of[order[best.D]] = best.cluster_of
    return SCMResult(
        termination=stop, message=message, classes=list(classes),
        support_vectors=gram.X[support], dual_coef=beta[rows], intercept=rep.b,
        w=rep.w, kernel=kfun, gamma=gamma_used, svm=rep, full_certificate=full, kept=kept_mask,
        history=history, seconds=run.elapsed(), config=config.as_dict(),
        cluster_of=cluster_of,
        pseudo_centres=None if best.centres is None else order[best.D[best.centres]])


# --------------------------------------------------------------------------- estimator


class SCMClassifier(_MulticlassMixin, _BaseEstimator):
    """Support Cluster Machines (Yuan, Li & Zhang 2006) as a scikit-learn classifier.

    ``fit`` runs :func:`solve_scm`; ``decision_function`` is the SCM's :math:`f` oriented so that
    > 0 means ``classes_[1]`` (scikit-learn's convention, which ``average_precision`` scoring
    reads), whichever class is the minority. More than two classes are one SCM per class against
    the rest (``multi_class="ovr"``, the default: the imbalanced problems SCM is made for) or per
    pair of classes (``"ovo"``), each choosing its own minority class (docs/multiclass.md).

    Parameters
    ----------
    C, kernel, gamma, degree, coef0, k_neg, k_pos, clustering, representative, shrink,
    shrink_gamma, shrink_side, ratio, max_miss_rate, rank_keep, stall_fraction, kmeans_iter, final
        As in :func:`solve_scm`.

    Attributes
    ----------
    classes_ : ndarray of shape (k,)
    support_vectors_, dual_coef_ : two classes: the expansion :math:`f(x) = \\sum_i`
        ``dual_coef_[i]`` :math:`K(` ``support_vectors_[i]`` :math:`, x) +` ``intercept_``
        (oriented to ``classes_[1]``).
    intercept_ : ndarray of shape (1,) or (n_subproblems,)
    coef_ : ndarray of shape (1, n_features) or (n_subproblems, n_features)
        Linear kernel only.
    result_ : SCMResult or MulticlassResult
        k classes: :class:`aidopt.api.multiclass.MulticlassResult`.
    results_ : list of SCMResult
        One per subproblem (``[result_]`` for two classes); each is ``certified`` when the
        weighted SVM (6) on its representatives is.
    certified_ : bool
        Every subproblem's weighted SVM (6) is certified optimal.
    estimators_ : list of SCMClassifier
        k classes: the binary SCM of each subproblem (labels -1 / +1).
    n_iter_ : int
        Rounds of Algorithm 1 (``len(result_.history)``; k classes: the most of any subproblem).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        The column names, when X was a DataFrame with string column names.

    Examples
    --------
    >>> from aidopt import SCMClassifier
    >>> from aidopt.instances.scm import sine_set
    >>> X, y = sine_set("D2", n_pos=50, n_neg=500, seed=0)
    >>> clf = SCMClassifier(kernel="linear", C=1.0).fit(X, y)
    >>> clf.result_.certified, clf.score(X, y) > 0.9
    (True, True)
    """

    _family = SCM
    #: the kernel function of the fit (a local function): left out of pickles and rebuilt from
    #: ``_kernel_spec`` (:meth:`_BaseEstimator.__getstate__` / :meth:`_restore`)
    _transient = ("_kfun",)
    _sparse_input = True

    #: one-vs-rest with every kernel: each subproblem is then the imbalanced problem SCM is made
    #: for (a class against a larger rest, which it clusters); measured more accurate than
    #: one-vs-one on iris, wine, digits and blobs (docs/multiclass.md)
    _default_strategy = "ovr"

    def fit(self, X, y):
        """Fit by Algorithm 1.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes, any labels (the minority class is SCM's positive class); more classes:
            one SCM per subproblem (``multi_class``).

        Returns
        -------
        self
        """
        return self._fit_classes(X, y)

    def _fit_binary(self, X, y, sample_weight=None) -> None:
        """One SCM on validated two-class data (``sample_weight`` is always None)."""
        result = solve_scm(X, y, **self._solve_kwargs())
        if result.svm is None:  # stopped before round 0's weighted SVM: nothing to fit
            raise RuntimeError(f"SCM fit found no solution: termination {result.termination!r} "
                               f"({result.message}); raise time_limit or check the solver")
        # not _after_fit: SCMResult's termination is one of STOPS (a str, no gap), and SCM's own
        # warning below is about the certificate of its last weighted SVM
        self.result_, self.n_iter_ = result, len(result.history)
        self._kernel_spec = (self.kernel, result.gamma, self.degree, self.coef0)
        self._kfun = result.kernel
        self.classes_ = np.asarray(sorted(result.classes))
        # SCM's f > 0 means the minority class result.classes[1]; orient it to classes_[1]
        self._sign = 1.0 if result.classes[1] == self.classes_[1] else -1.0
        self._record_features(X, int(result.support_vectors.shape[1]))
        self.support_vectors_ = result.support_vectors
        self.dual_coef_ = self._sign * result.dual_coef[None, :]
        self.intercept_ = np.array([self._sign * result.intercept])
        if result.w is not None:
            self.coef_ = self._sign * np.asarray(result.w)[None, :]
        svm_ = result.svm
        if svm_.status not in ("optimal", "converged") or (
                svm_.solver != "libsvm" and not svm_.certificate.certified):
            warnings.warn(
                f"SCM's last weighted SVM (6) ended {svm_.status!r} with relative gap "
                f"{svm_.certificate.relative_gap:.2e}: not certified optimal", ConvergenceWarning,
                stacklevel=2)

    def __getstate__(self):
        state = super().__getstate__()  # without _kfun
        if isinstance(state.get("result_"), SCMResult):
            state["result_"] = dataclasses.replace(state["result_"], kernel=None)
        return state

    def _restore(self) -> None:
        """The kernel function of the fit, in ``_kfun`` and ``result_.kernel`` (after unpickling;
        k classes: each subproblem's estimator has its own)."""
        if len(self.classes_) == 2:
            self._kfun = self.result_.kernel = svc_kernel(*self._kernel_spec)

    def _decision(self, X) -> np.ndarray:
        """Signed score on validated X; > 0 means ``classes_[1]``."""
        return self._sign * self.result_.decision_function(X)
