r"""AID plug-in for weighted LAD regression (Park & Klabjan 2016, section 3.1) and regression
quantiles (the same LP with Koenker's check function :math:`\rho_\tau` as the loss).

* **Aggregate**: cluster centroids :math:`\bar x_k, \bar y_k` (sample-weighted means) and weights
  :math:`W_k = \sum_{i \in C_k} s_i` (= |C_k| for unit sample weights).
* **Initial partition**: LAD on a random sample gives :math:`\beta^0`; one k-means iteration on
  :math:`(y_i - x_i\beta^0, y_i)` groups the rows (paper section 3.1). Or (``start="band"``,
  a sequence of quantile levels' default) Portnoy & Koenker's band: the rows near the fit
  alone, the rows above and below it in two clusters (:meth:`LADProblem.band_partition`).
* **Split**: a cluster whose residuals :math:`r_i = y_i - x_i\beta^t` take both signs is split into
  :math:`\{r_i > \epsilon\}` and :math:`\{r_i \le \epsilon\}`; when no cluster is mixed,
  :math:`F_t = E_t` and :math:`\beta^t` is optimal (the paper's Proposition 3).
* **Aggregated solver**: any LP solver through the Pyomo model (HiGHS by default), or
  ``solver="fn"``: :func:`aidopt.numerics.fn.frisch_newton`, the interior point of R quantreg's
  ``rq.fit.fnb`` on the same dual LP with dense m x m normal equations, on the arrays (no Pyomo
  model is built unless ``write_models`` asks for it).
* **Certificate**: the aggregated dual :math:`v` is lifted to :math:`u_i = s_i v_k / W_k`
  (:math:`i \in C_k`); on the full data we check :math:`X^\top u = 0` and :math:`|u_i| \le s_i`
  (for a quantile :math:`s_i(\tau - 1) \le u_i \le s_i \tau`), and then :math:`y^\top u` is a
  lower bound on the optimum, so :math:`E(\beta) - y^\top u` is a certified gap.
* **Quantiles** (``quantile=tau``): the loss :math:`\rho_\tau` is convex and positively
  homogeneous, so the aggregated problem is still a relaxation (Jensen), and linear on each
  side of zero, so a cluster whose residuals share a sign is priced exactly: the split rule
  and the certificate are LAD's with the dual box :math:`[s(\tau - 1), s\tau]`.

The sign tolerance :math:`\epsilon = 10^{-9} \max(1, \max_i |y_i|, \max_i |x_i\beta|)` is relative to
the magnitude of the fitted values, so that the m rows a vertex solution interpolates (residual
zero up to rounding) count as zero.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from aidopt.decomposition.clustering import one_step_kmeans, sample_rows
from aidopt.decomposition.partition import SIGN_PURE, Partition
from aidopt.decomposition.protocol import GAP_FLOOR, AIDProblem, Iterate, Lifted, Split, solve_own
from aidopt.models import lad

from aidopt.data.validate import check_quantile
from aidopt.numerics.fn import FNResult, frisch_newton
from aidopt.numerics.rq import check_loss, slopes
from aidopt.results import Certificate
from aidopt.solvers import ProblemClass, SolveOutcome, SolverError, SolveStatus, TimeLimitReached

__all__ = ["LADProblem", "AggregatedLAD", "LADState", "band_labels", "certificate", "gap_floor",
           "sign_tolerance", "spread_ratio"]

SIGN_TOL = 1e-9
#: the initial partitions of :class:`LADProblem` (``start=``)
STARTS = ("kmeans", "band")
#: a band start's random sample, times :math:`((m+1) n)^{2/3}` rows (quantreg pfn's sample size
#: times this factor: with half pfn's rows the cold start's fit is cheaper, and its band still
#: held the optimum's sign changes on set B, 2e5 x 50: one AID iteration)
SAMPLE_FACTOR = 0.5
#: a cold band start's band, times the sample's rows (quantreg pfn's ``Mm.factor``)
BAND_COLD = 0.8
#: a warm band start's band, times :math:`\sqrt{nm}` rows
BAND_WARM = 2.0


@dataclass
class AggregatedLAD:
    """Centroids ``X`` (K, m), ``y`` (K,), weights ``w`` (K,)."""

    X: np.ndarray
    y: np.ndarray
    w: np.ndarray


@dataclass
class LADState:
    r"""What one lifted LAD solution carries to ``evaluate`` / ``split`` / ``certify``: the
    aggregated dual ``v`` (None for solvers without duals), the full-data objective
    :math:`E = \sum_i s_i |r_i|`, the sign tolerance ``eps`` and each residual's side of it.

    The residuals themselves are not kept: the driver holds several iterates at once (the
    previous, the best, the one with the best bound), and one byte per row instead of eight is
    what keeps them small at tens of millions of rows (docs/dask.md, memory model).

    Attributes
    ----------
    v : ndarray of shape (K,) or None
    side : ndarray of int8, shape (n,)
        +1 where :math:`r_i > \epsilon`, -1 where :math:`r_i < -\epsilon`, 0 in between.
    objective : float
        :math:`E = \sum_i s_i |r_i|`.
    eps : float
    """

    v: np.ndarray | None
    side: np.ndarray
    objective: float
    eps: float

    @classmethod
    def from_residual(cls, v, residual, eps: float, s, *, overwrite: bool = False,
                      quantile: float | None = None) -> LADState:
        r"""The state of residuals ``residual`` with sign tolerance ``eps`` and sample weights
        ``s``; ``overwrite=True`` computes :math:`|r_i|` in ``residual``'s memory (then lost).
        ``quantile`` :math:`\tau`: the objective is the check loss
        :math:`\sum_i s_i \rho_\tau(r_i) = \tfrac12 \sum_i s_i |r_i| + (\tau - \tfrac12)
        \sum_i s_i r_i` (no second n-vector)."""
        side = (residual > eps).view(np.int8) - (residual < -eps).view(np.int8)
        signed = 0.0 if quantile is None else float(np.dot(s, residual))
        total = float(np.dot(s, np.abs(residual, out=residual if overwrite else None)))
        objective = total if quantile is None else 0.5 * total + (quantile - 0.5) * signed
        return cls(v, side, objective, eps)


#: relative gap of the Frisch–Newton fit on the random sample that seeds the initial partition
SAMPLE_GAP = 1e-6


class LADProblem(AIDProblem):
    r"""Weighted LAD, or a weighted regression quantile, under AID.

    Parameters
    ----------
    form : {"auto", "dual", "primal"}
        LP form solved for each aggregated problem. ``"auto"`` takes the dual (m rows, much
        faster under HiGHS IPM) when the solver returns duals, else the primal (whose
        certificate then solves the aggregated dual LP as its own model).
    quantile : float, optional
        :math:`\tau \in (0, 1)`: minimise :math:`\sum_i s_i \rho_\tau(y_i - x_i\beta)`.
        None (default): LAD, :math:`\sum_i s_i |y_i - x_i\beta|` (twice the scale of
        :math:`\tau = 1/2`).
    start_beta : ndarray (m,), optional
        Coefficients that seed the initial partition in place of the fit on a random sample:
        those of a related fit (the neighbouring level of a sequence of quantiles, the full
        data of a bootstrap replicate). The run is the same AID run from a better start; the
        certificate does not depend on it.
    start : {"kmeans", "band"}
        The initial partition. ``"kmeans"`` (default): one k-means step on
        :math:`(y_i - x_i\beta^0, y_i)` (the paper's). ``"band"``: Portnoy & Koenker's (1997)
        preprocessing as a partition (:meth:`band_partition`): the rows within a band around
        the fit :math:`\beta^0` are clusters of their own, the rows above it one cluster and
        the rows below another ("globs"); :meth:`split` then takes a glob's few rows on the
        wrong side of a later fit out as clusters of their own.
    start_previous : ndarray (m,), optional
        With ``start="band"`` and ``start_beta``: the coefficients of the level before
        ``start_beta``'s in a sequence (:meth:`band_partition`); None: least squares on a
        random sample stands in for them.
    """

    name = "lad"
    problem_class = ProblemClass.LP
    needs_duals = True
    native_methods = ("fn",)

    def __init__(self, form: str = "auto", quantile: float | None = None, start_beta=None,
                 start: str = "kmeans", start_previous=None):
        if form not in ("auto", "dual", "primal"):
            raise ValueError(f"form must be 'auto', 'dual' or 'primal', got {form!r}")
        if start not in STARTS:
            raise ValueError(f"start must be one of {STARTS}, got {start!r}")
        if start_previous is not None and (start_beta is None or start != "band"):
            raise ValueError("start_previous needs start_beta and start='band'")
        self.start = start
        self.start_previous = (None if start_previous is None
                               else np.asarray(start_previous, dtype=float))
        self.quantile = check_quantile(quantile)
        if self.quantile is not None:
            self.name = f"quantile regression tau={self.quantile:g}"
        self.start_beta = None if start_beta is None else np.asarray(start_beta, dtype=float)
        self.requested_form = form
        self.form = "dual" if form == "auto" else form
        self.method: str | None = None

    # ----------------------------------------------------------------- contract
    def configure(self, solver_spec) -> None:
        self.method = solver_spec.name if (
            solver_spec is not None and solver_spec.name in self.native_methods) else None
        has_duals = solver_spec is None or solver_spec.duals
        if self.requested_form == "auto":
            self.form = "dual" if has_duals else "primal"
        elif self.requested_form == "dual" and not has_duals:
            raise SolverError(
                f"form='dual' reads beta from duals, which {solver_spec.name!r} does not return; "
                "use form='primal' or 'auto'"
            )
        self.needs_duals = self.form == "dual" or has_duals

    def solver_defaults(self, solver: str) -> dict:
        """HiGHS: interior point with crossover (a vertex solution: exact residual signs; on the
        dense dual form faster than simplex) and presolve off (its dependent-equation search on
        m dense rows took a third of the solve time and removes nothing: docs/design.md)."""
        if solver == "clarabel":  # its relative gap tight enough for the certificate
            from aidopt.solvers.clarabel import TIGHT_GAP

            return dict(TIGHT_GAP)
        return {"solver": "ipm", "presolve": "off"} if solver == "highs" else {}

    def fallbacks(self, solver: str) -> list[tuple[str, None]]:
        """HiGHS (interior point with crossover) when another solver fails or a size-limited
        licence refuses the model; Clarabel when HiGHS fails. Same LP form."""
        return [("clarabel", None)] if solver == "highs" else [("highs", None)]

    def counters(self, data) -> dict[str, int]:
        """The passes over an out-of-core X (``data.counters()``; none in memory)."""
        return data.counters()

    def gap_floor(self, data) -> float:
        """:data:`~.protocol.GAP_FLOOR` times E(0) = sum_i s_i |y_i| (sum_i s_i rho_tau(y_i))."""
        return gap_floor(data, self.quantile)

    def default_r0(self, size: int, data) -> float:
        """The paper's r0: max(2m/n, 0.005), or max(3m/n, 0.0005) when m*n > 5e8."""
        n, m = size, data.m
        if m * n > 5e8:
            return max(3 * m / n, 0.0005)
        return max(2 * m / n, 0.005)

    def min_clusters(self, data) -> int:
        return data.m

    def initial_partition(self, data, n_clusters, rng, solve) -> tuple[Partition, Lifted]:
        """Clusters of (residual, y) after a LAD fit on a random sample (or at ``start_beta``),
        or the band start (``start="band"``, :meth:`band_partition`); returns that fit too."""
        if n_clusters >= data.n:
            return self.trivial_partition(data)
        if self.start_beta is not None and self.start_beta.shape != (data.m,):
            raise ValueError(f"start_beta has shape {self.start_beta.shape}, the data have "
                             f"{data.m} columns")
        if self.start_previous is not None and self.start_previous.shape != (data.m,):
            raise ValueError(f"start_previous has shape {self.start_previous.shape}, the data "
                             f"have {data.m} columns")
        if self.start == "band":
            return self.band_partition(data, n_clusters, rng, solve)
        beta0 = self.start_beta if self.start_beta is not None else self._sample_fit(
            data, n_clusters, rng, solve)
        residual, eps = _residual(data, beta0)
        features = np.column_stack([residual, data.y])
        fit = _lifted(data, beta0, None, self.quantile, (residual, eps))  # overwrites them
        del residual  # one n-vector less during the k-means
        return Partition.from_labels(one_step_kmeans(features, n_clusters, rng)), fit

    def band_partition(self, data, n_clusters, rng, solve) -> tuple[Partition, Lifted]:
        r"""Portnoy & Koenker's (1997) preprocessing as AID's initial partition: a band of rows
        around a fit :math:`\beta^0` stays disaggregated (one cluster per row), the rows above
        the band form one cluster and the rows below it another.

        Cold (no ``start_beta``): :math:`\beta^0` is the Frisch–Newton fit on a random sample of
        :data:`SAMPLE_FACTOR` :math:`((m+1) n)^{2/3}` rows (quantreg's ``rq.fit.pfn`` takes
        :math:`((m+1) n)^{2/3}`), and the band holds :data:`BAND_COLD` times that many rows
        (pfn's ``Mm.factor``): those whose residual lies between its order statistics around
        :math:`\tau n` (:func:`band_labels`). Warm (``start_beta``: a neighbouring level's fit
        in a sequence of levels): :data:`BAND_WARM` :math:`\sqrt{nm}` rows, and the residuals
        are ranked twice: as they are, and divided by the spread
        :math:`d_i = x_i(\beta^0 - \beta^-)` between the neighbour and the level before it
        (``start_previous``; least squares on a random sample when None;
        :func:`spread_ratio`). Under a location-scale model the next level's fit is
        :math:`x_i\beta^0 + c\,d_i` for a constant c, so the ratio ranks the rows by their
        distance from it where the errors' scale varies with x; for i.i.d. errors
        :math:`d_i` is a constant plus noise and the plain residual ranks better. A row joins a
        glob only when both rankings put it outside their bands on the same side.

        The certificate on the full data checks every row's side whatever the start, and
        :meth:`split` moves a glob's misplaced rows out.
        """
        n, m = data.n, data.m
        rows = SAMPLE_FACTOR * ((m + 1) * n) ** (2 / 3)
        if self.start_beta is not None:
            beta0, size = self.start_beta, BAND_WARM * math.sqrt(n * m)
        else:
            beta0, size = self._sample_fit(data, int(4 * rows), rng, solve), BAND_COLD * rows
        size = int(max(size, n_clusters))
        tau = 0.5 if self.quantile is None else self.quantile
        residual, eps = _residual(data, beta0)
        labels = band_labels(residual, tau, size)
        if self.start_beta is not None:
            previous = self.start_previous
            if previous is None:
                previous = _sample_least_squares(data, int(rows), rng)
            ratio = spread_ratio(data, residual, beta0 - previous)
            same = band_labels(ratio, tau, size) == labels
            del ratio
            same &= labels < 2  # in a glob by both rankings
            same = ~same
            labels[same] = 2 + np.arange(int(same.sum()))
            del same
        fit = _lifted(data, beta0, None, self.quantile, (residual, eps))  # overwrites them
        return Partition.from_labels(labels), fit

    def _sample_fit(self, data, n_clusters, rng, solve) -> np.ndarray:
        """The coefficients of the fit on a random sample of max(5m, 1000, n_clusters / 4) rows."""
        idx = sample_rows(data.n, max(5 * data.m, 1000, n_clusters // 4), rng)
        sample = AggregatedLAD(data.X[idx], data.y[idx], data.s[idx])
        beta0 = None
        if self.method == "fn":
            res = frisch_newton(sample.X, sample.y, sample.w, quantile=self.quantile,
                                tol=SAMPLE_GAP,
                                floor=GAP_FLOOR * check_loss(sample.y, sample.w, self.quantile))
            if res.status == "optimal" and np.all(np.isfinite(res.beta)):
                beta0 = res.beta
        if beta0 is None:  # a Pyomo solver (HiGHS when Frisch-Newton missed, e.g. on an exact fit)
            model = self.build(sample)
            outcome = solve_own(solve, model, "initial sample LAD", need_duals=self.needs_duals,
                                **({"solver": "highs"} if self.method == "fn" else {}))
            beta0, _ = lad.solution_from(model, outcome.duals)
        return beta0

    def aggregate(self, data, partition: Partition, previous=None) -> AggregatedLAD:
        W, (Xbar, ybar) = partition.weighted_means(data.s, data.X, data.y)
        return AggregatedLAD(Xbar, ybar, W)

    def build(self, aggregated: AggregatedLAD, form: str | None = None):
        return lad.create_instance(aggregated.X, aggregated.y, aggregated.w, form=form or self.form,
                                   quantile=self.quantile)

    def solve_native(self, method, aggregated: AggregatedLAD, previous, partition, *, tol,
                     time_limit, options) -> tuple[FNResult, SolveOutcome]:
        """Frisch–Newton (:func:`aidopt.numerics.fn.frisch_newton`) on the aggregated dual LP, to a gap
        100 times below ``tol`` (``solver_options``: ``tol``, ``max_iter``)."""
        from aidopt._version import __version__

        unknown = sorted(set(options) - {"tol", "max_iter"})
        if unknown:
            raise ValueError(f"solver='fn' takes solver_options tol and max_iter, got {unknown}")
        if time_limit is not None and time_limit <= 0:
            raise TimeLimitReached("time limit reached before the Frisch-Newton solve")
        start = time.perf_counter()
        floor = GAP_FLOOR * check_loss(aggregated.y, aggregated.w, self.quantile)
        res = frisch_newton(aggregated.X, aggregated.y, aggregated.w, quantile=self.quantile,
                            tol=options.get("tol", min(1e-9, tol / 100)),
                            max_iter=options.get("max_iter", 100), time_limit=time_limit,
                            floor=floor)
        status = {"optimal": SolveStatus.OPTIMAL, "time_limit": SolveStatus.TIME_LIMIT,
                  "iteration_limit": SolveStatus.ITERATION_LIMIT}.get(res.status, SolveStatus.ERROR)
        return res, SolveOutcome(
            status, res.objective, None, True, "fn", f"aidopt {__version__}",
            time.perf_counter() - start,
            f"{res.status} after {res.iterations} iterations (gap {res.gap:.2e}, "
            f"|X'v| {res.infeasibility:.1e})",
            extra={"iterations": res.iterations}, bound=res.dual if status == "optimal" else None)

    def lift(self, model, outcome, partition, aggregated, data) -> Lifted:
        if isinstance(model, FNResult):
            return _lifted(data, model.beta, model.v, self.quantile)
        beta, v = lad.solution_from(model, outcome.duals)
        if beta is None:
            raise SolverError("the dual LAD form needs constraint duals from the solver")
        return _lifted(data, beta, v, self.quantile)

    def lower_bound(self, outcome, partition, data, lifted=None) -> float | None:
        """The aggregated LP optimum: the aggregated LAD (or quantile) problem is a relaxation
        (paper, Prop. 1; the check function is convex and positively homogeneous too)."""
        return outcome.bound

    def evaluate(self, data, lifted: Lifted) -> float:
        r""":math:`E = \sum_i s_i |r_i|` (a quantile: :math:`\sum_i s_i \rho_\tau(r_i)`), summed
        by ``lift`` while it had the residuals."""
        return lifted.state.objective

    def split(self, partition: Partition, data, lifted: Lifted) -> Split:
        """Split the mixed clusters by the sign of the residual (the paper's rule). From a band
        start, the rows on the minority side of each mixed cluster (a glob's misplaced rows)
        become clusters of their own, as long as they are at most as many as the clusters
        (:meth:`Partition.split_mixed`, quantreg pfn's "fixup"): kept together they would form
        a cluster near the hyperplane, mixed again at the next iteration."""
        isolate = partition.n_clusters if self.start == "band" else 0
        return Split(*partition.split_mixed(lifted.state.side, 0, isolate=isolate))

    def certify(self, data, best: Iterate, *, bound: Iterate, solve, tol, feasibility_tol=1e-6,
                history=()) -> Certificate:
        v, method = bound.lifted.state.v, "solver_duals"
        aggregated, partition = bound.aggregated, bound.partition
        if v is None:  # solver without duals: solve the aggregated dual LP as a model of its own
            model = lad.create_instance(aggregated.X, aggregated.y, aggregated.w, form="dual",
                                        quantile=self.quantile)
            solve_own(solve, model, "the dual LP for the certificate", need_duals=False)
            _, v = lad.solution_from(model, None)
            method = "dual_lp"
        u = (v / aggregated.w)[partition.labels]
        u *= data.s  # in place: u_i = s_i v_k / W_k without a second n-vector
        return certificate(
            data, best.lifted.solution["beta"], u, tol=tol, feasibility_tol=feasibility_tol,
            method=method, sign_condition=None if best.split is None else best.split.holds,
            quantile=self.quantile,
        )

    # ----------------------------------------------------------------- helpers
    @staticmethod
    def mixed_clusters(partition: Partition, lifted: Lifted) -> np.ndarray:
        """Boolean (K,): clusters holding both a residual > eps and a residual < -eps."""
        return partition.mixed(lifted.state.side, 0)


def band_labels(score, tau: float, size: int) -> np.ndarray:
    r"""Labels of a band start: 0 for the rows whose ``score`` lies below the band, 1 above it,
    and ``2, 3, ...`` (one each) for the rows between the order statistics
    :math:`\ell = \lfloor \tau n - size/2 \rfloor` and :math:`\ell + size` (inclusive: ties at
    either end join the band); every row its own label when the band would hold almost all."""
    n = score.size
    if size >= n - 2:
        return np.arange(n, dtype=np.int64)
    lo = min(max(0, int(tau * n - size / 2)), n - 1 - size)
    low, high = np.partition(score, [lo, lo + size])[[lo, lo + size]]
    labels = (score > high).astype(np.int64)
    band = score >= low
    band &= score <= high
    labels[band] = 2 + np.arange(int(band.sum()))
    return labels


def spread_ratio(data, residual, spread) -> np.ndarray:
    r""":math:`r_i / d_i` with :math:`d_i = x_i` ``spread`` turned positive at its median and
    floored at a tenth of the median's magnitude (where two levels' fits nearly meet or cross,
    the ratio is large rather than unbounded or of the wrong sign)."""
    scale = np.asarray(data.X @ spread, dtype=float)
    middle = float(np.median(scale))
    if middle < 0:  # the spread points towards the lower levels
        np.negative(scale, out=scale)
    np.maximum(scale, max(0.1 * abs(middle), np.finfo(float).tiny), out=scale)
    return np.divide(residual, scale, out=scale)


def _sample_least_squares(data, size: int, rng) -> np.ndarray:
    """Weighted least squares on a random sample of ``size`` rows (at least 5m), by LAPACK's
    QR-based ``gelsy`` (rank-revealing; a third of the SVD's ``gelsd`` time)."""
    from scipy import linalg

    idx = sample_rows(data.n, max(size, 5 * data.m), rng)
    X = data.X[idx]
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=float)
    root = np.sqrt(data.s[idx])
    return linalg.lstsq(X * root[:, None], data.y[idx] * root, lapack_driver="gelsy")[0]


def gap_floor(data, quantile: float | None = None) -> float:
    """The relative gap's floor for LAD (or the quantile ``quantile``): :data:`~.protocol.GAP_FLOOR`
    times the objective of beta = 0 (scale-invariant: the units of y and s cancel)."""
    return max(GAP_FLOOR * check_loss(data.y, data.s, quantile), np.finfo(float).tiny)


def sign_tolerance(y, fitted) -> float:
    """The tolerance below which a residual counts as zero: :data:`SIGN_TOL` times the data's own
    scale, ``max(|y|, |X beta|)`` (y in any unit: a floor of 1 called every residual of y x 1e-9
    zero and the split could never certify)."""
    return SIGN_TOL * max(_abs_max(y), _abs_max(fitted), np.finfo(float).tiny)


def _residual(data, beta) -> tuple[np.ndarray, float]:
    """The full-data residuals ``y - X beta`` (one pass over X) and the tolerance of their signs."""
    fitted = data.X @ beta
    eps = sign_tolerance(data.y, fitted)
    return np.subtract(data.y, fitted, out=fitted), eps  # in place: one n-vector, not two


def _lifted(data, beta, v, quantile=None, fit=None) -> Lifted:
    """``beta`` on the full data (``fit``: its ``_residual`` when already computed; the
    residuals' memory is reused for their magnitudes)."""
    residual, eps = _residual(data, beta) if fit is None else fit
    return Lifted({"beta": beta}, LADState.from_residual(v, residual, eps, data.s, overwrite=True,
                                                         quantile=quantile))


def _abs_max(a: np.ndarray) -> float:
    """``max |a_i|`` without the n-vector ``np.abs(a)``."""
    return max(float(a.max()), -float(a.min())) if a.size else 0.0


def _weighted_loss(residual, quantile, out) -> np.ndarray:
    r""":math:`\rho(r_i)` in ``out``: :math:`|r_i|` (LAD), or :math:`\tau r_i^+ + (1 - \tau)
    r_i^-` (one boolean n-vector besides)."""
    np.abs(residual, out=out)
    if quantile is not None:
        above, below = slopes(quantile)
        positive = residual > 0
        np.multiply(out, above, out=out, where=positive)
        np.multiply(out, below, out=out, where=~positive)
    return out


def certificate(
    data, beta, u, *, tol: float, feasibility_tol: float = 1e-6, method: str = "given",
    sign_condition=None, quantile: float | None = None,
) -> Certificate:
    r"""Check that ``beta`` is optimal for the full-data LAD (or the regression quantile
    ``quantile``), with dual vector ``u``.

    Weak duality: with the slopes ``(a, b)`` of the loss (:func:`aidopt.numerics.rq.slopes`:
    (1, 1) for LAD, :math:`(\tau, 1 - \tau)` for a quantile), for every beta' and every u with
    :math:`X^\top u = 0` and :math:`-b s_i \le u_i \le a s_i`,
    :math:`E(\beta') \ge \sum_i u_i (y_i - x_i \beta') = y^\top u` (row by row,
    :math:`s_i(a r^+ + b r^-) \ge u_i r`). So if both checks hold (to ``feasibility_tol``),
    :math:`y^\top u` is a lower bound and the relative gap
    :math:`(E(\beta) - y^\top u) / \max(\phi, E(\beta))` must be within ``tol``, with the floor
    :math:`\phi = 10^{-9} E(0)` (:func:`gap_floor`: scale-invariant).

    Residuals are scaled: stationarity :math:`\max_j |(X^\top u)_j| / \max_j \sum_i s_i|x_{ij}|`,
    box :math:`\max_i (u_i - a s_i, -b s_i - u_i)_+ / \max_i s_i` (for LAD
    :math:`\max_i (|u_i| - s_i)_+ / \max_i s_i`), complementarity
    :math:`\max_i (s_i (a r_i^+ + b r_i^-) - u_i r_i) / \max(\phi, E)` (each term is >= 0 inside
    the box; they sum to the gap).
    """
    beta = np.asarray(beta, dtype=float)
    u = np.asarray(u, dtype=float)
    above, below = slopes(quantile)
    floor = gap_floor(data, quantile)
    # two n-vectors besides u, updated in place (out-of-core data: docs/dask.md, memory model)
    residual = data.X @ beta
    residual = np.subtract(data.y, residual, out=residual)
    work = _weighted_loss(residual, quantile, np.empty_like(residual))
    primal = float(np.dot(data.s, work))
    dual = float(np.dot(data.y, u))
    # relative to the columns' size sum_i s_i |x_ij| (no floor at 1: scale-invariant)
    stationarity = float(np.abs(data.X.T @ u).max()
                         / max(float(data.column_scale.max()), np.finfo(float).tiny))
    # max_i (u_i - a s_i, -b s_i - u_i)_+ / max_i s_i  (LAD: max_i (|u_i| - s_i)_+ / max_i s_i)
    work = np.multiply(data.s, above, out=work)
    outside = float(np.subtract(u, work, out=work).max())
    work = np.multiply(data.s, -below, out=work)
    outside = max(outside, float(np.subtract(work, u, out=work).max()))
    bound = float(max(outside, 0.0) / data.s.max())
    slack = _weighted_loss(residual, quantile, work)
    slack *= data.s
    slack -= np.multiply(u, residual, out=residual)  # s_i rho(r_i) - u_i r_i
    scale = max(floor, abs(primal))
    complementarity = float(max(0.0, slack.max()) / scale)
    rel_gap = (primal - dual) / scale
    certified = bool(
        stationarity <= feasibility_tol and bound <= feasibility_tol and rel_gap <= tol
    )
    box = "dual bound |u|<=s" if quantile is None else "box s(tau-1)<=u<=s tau"
    return Certificate(
        method=method,
        certified=certified,
        primal_objective=primal,
        dual_objective=dual,
        relative_gap=float(rel_gap),
        residuals={
            "stationarity |X'u|": stationarity,
            box: bound,
            "complementarity": complementarity,
        },
        tol=tol,
        feasibility_tol=feasibility_tol,
        sign_condition=sign_condition, condition=SIGN_PURE,
        checked=["stationarity |X'u|", box],
        dual_values={"u": u},
    )
