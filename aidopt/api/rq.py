r"""Regression quantiles at the door: the result of :func:`aidopt.solve_lad` with inference
(:class:`LADResult`, :class:`Inference`), and a sequence of levels fitted warm, each from its
neighbour's partition (:class:`QuantileResults`).

R quantreg is the model: ``rq(y ~ x, tau=...)`` is ``solve_lad(X, y, quantile=...)``,
``summary(fit, se=...)`` is ``result.summary(se=...)`` (the numbers in
``result.inference(se=...)``), ``rq(y ~ x, tau=c(...))`` is ``solve_lad(X, y, quantile=[...])``
and ``plot(summary(fits))`` is ``results.plot()``. The formulas are in docs/quantiles.md and
:mod:`aidopt.numerics.rq`.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aidopt.api import _front
from aidopt.data.chunked import ChunkedMatrix
from aidopt.data.validate import user_stacklevel
from aidopt.decomposition.plugins.lad import LADProblem, sign_tolerance
from aidopt.decomposition.run import RunConfig
from aidopt.log import run_logging
from aidopt.numerics import rq, rqrank
from aidopt.results import AIDResult, RunResult, Termination, pyplot

__all__ = ["LADResult", "Inference", "QuantileResults", "fit", "fit_sequence", "resample_counts",
           "SE_KINDS", "RANK_WARN_ROWS", "RANK_MAX_ROWS"]

#: the kinds of inference :meth:`LADResult.inference` computes: three standard errors and the
#: rank-inversion intervals
SE_KINDS = ("iid", "nid", "boot", "rank")

#: ``se="rank"`` warns above this many rows (of positive weight): every bound is a search of
#: about 10-25 simplex solves on all rows, each ~O(n p^2)
RANK_WARN_ROWS = 5_000
#: ``se="rank"`` is refused above this many rows: use ``"nid"`` or ``"boot"`` there
RANK_MAX_ROWS = 20_000
#: se="rank" refuses a sparse X whose dense copy (the intervals' LPs are built from it) exceeds this
RANK_DENSE_BYTES = 1e9


def resample_counts(n: int, B: int, seed: int):
    """The xy-pair bootstrap's draws: ``B`` vectors of how often each of the ``n`` rows is drawn
    when n rows are drawn with replacement (one seeded generator for all of them)."""
    rng = np.random.default_rng(seed)
    for _ in range(B):
        yield np.bincount(rng.integers(0, n, size=n), minlength=n).astype(float)


@dataclass(repr=False)
class LADResult(AIDResult):
    r"""The result of :func:`aidopt.solve_lad`: an :class:`~aidopt.results.AIDResult` with the
    level it fitted and the inference on its coefficients.

    ``objective`` is :math:`\sum_i s_i |r_i|` for LAD (``quantile`` None) and
    :math:`\sum_i s_i \rho_\tau(r_i)` for a quantile, quantreg's scale: :math:`\tau = 1/2` gives
    half the LAD objective at the same coefficients.

    The result keeps a reference to its validated data for :meth:`inference` (``iid`` and
    ``nid`` need X and the residuals, ``nid`` and ``boot`` refit); it is not serialised, nor
    pickled (an unpickled result gives coefficients, not standard errors).
    """

    quantile: float | None = None
    """:math:`\\tau`, or None for LAD."""

    # set by :func:`fit` (not fields: not compared, printed or serialised)
    _data: Any = field(default=None, init=False, repr=False, compare=False)
    _config: Any = field(default=None, init=False, repr=False, compare=False)
    _form: str = field(default="auto", init=False, repr=False, compare=False)
    _labels: Any = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def wrap(cls, result: AIDResult, quantile, data, config: RunConfig, form: str) -> LADResult:
        """``result`` as an LADResult of ``quantile``, remembering how it was fitted."""
        values = {f.name: getattr(result, f.name) for f in dataclasses.fields(AIDResult)}
        out = cls(**values, quantile=quantile)
        out._data, out._config, out._form = data, config, form
        partition = result.partition
        if partition is not None and partition.n == data.n:
            out._labels = partition.labels
        elif partition is not None:  # rows of zero weight were left out of the fit
            out._labels = np.full(data.n, -1, dtype=np.int64)
            out._labels[data.s > 0] = partition.labels
        return out

    @property
    def tau(self) -> float:
        """The level whose coefficients these are: ``quantile``, or 1/2 for LAD."""
        return 0.5 if self.quantile is None else self.quantile

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_data"] = None  # the data stay with the user, not in every pickle of a model
        return state

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "quantile": self.quantile}

    def __repr__(self) -> str:
        return super().__repr__().replace("AIDResult(", f"LADResult(quantile={self.quantile!r}, ", 1)

    # ------------------------------------------------------------------ inference
    def summary(self, coefficients: bool = True, se: str | None = None, **options) -> str:
        """The report of :meth:`AIDResult.summary`; with ``se`` the coefficient table of
        :meth:`inference` (estimate, standard error, t value, p-value, interval) in place of
        the plain one.

        Parameters
        ----------
        coefficients : bool, default True
        se : {"iid", "nid", "boot", "rank"}, optional
        **options
            ``alpha``, ``bandwidth``, ``B``, ``seed``, ``rank_scale``: see :meth:`inference`.
        """
        if se is None:
            return super().summary(coefficients)
        return super().summary(coefficients=False) + "\n" + str(self.inference(se, **options))

    def inference(self, se: str = "nid", *, alpha: float = 0.05, bandwidth: str = "hall-sheather",
                  B: int = 200, seed: int = 0, rank_scale: str = "iid") -> Inference:
        r"""Standard errors, t values, p-values and intervals of the coefficients, or
        rank-inversion intervals (R's ``summary(rq(...), se=...)``; formulas in
        docs/quantiles.md).

        Parameters
        ----------
        se : {"iid", "nid", "boot", "rank"}, default "nid"
            ``"iid"``: :math:`\tau(1-\tau)\hat s^2 (X'X)^{-1}`, the sparsity :math:`\hat s` from
            the residuals near zero; ``"nid"``: Koenker's sandwich
            :math:`\tau(1-\tau) H^{-1} X'X H^{-1}`, :math:`H = X'\hat F X`, the local densities
            from the fits at :math:`\tau \pm h` (two more certified fits, each started from this
            fit's partition and finished at the LP's vertex, as quantreg's "br" refits:
            :func:`aidopt.numerics.rq.vertex`); ``"boot"``: the xy-pair bootstrap (``B``
            certified refits with multinomial sample weights, each started from this fit's
            partition); ``"rank"``:
            no standard errors, the interval :math:`\{b : |T_j(b)| \le t_{n-p,1-\alpha/2}\}`
            of each coefficient, :math:`T_j(b)` the regression rankscore statistic of
            :math:`H_0: \beta_j = b` (Gutenbrunner, Jurečková, Koenker & Portnoy 1993, eq.
            (3.3); Koenker 1994), with quantreg's interpolation between the two ends of the
            last linear piece of :math:`b` inside (:mod:`aidopt.numerics.rqrank`; exact up to
            rounding, except that pieces narrower than 1e-11 relative may be passed over). For
            modest n: it warns above :data:`RANK_WARN_ROWS` rows and refuses above
            :data:`RANK_MAX_ROWS`.
        alpha : float, default 0.05
            The intervals' level is :math:`1 - \alpha` (quantreg's ``summary(se="rank")``
            defaults to ``alpha = 0.1``; pass it for R's numbers).
        bandwidth : {"hall-sheather", "bofinger"}, default "hall-sheather"
            The bandwidth :math:`h` of ``iid`` and ``nid`` (quantreg: ``hs=TRUE`` / ``FALSE``),
            and of ``rank`` with ``rank_scale="nid"``.
        B : int, default 200
            Bootstrap replicates (``boot``).
        seed : int, default 0
            Seed of the bootstrap draws.
        rank_scale : {"iid", "nid"}, default "iid"
            The scale :math:`q_j` of the rank statistic (``rank``): ``"iid"``
            :math:`1/[(X'SX)^{-1}]_{jj}`; ``"nid"`` the squared residual of :math:`x_j` on the
            other columns weighted by the local densities of ``nid`` (two more certified fits at
            :math:`\tau \pm h`). quantreg's ``iid=TRUE`` / ``FALSE``.

        Returns
        -------
        Inference

        Raises
        ------
        ValueError
            An unknown ``se``, ``bandwidth`` or ``rank_scale``, a result without its data
            (unpickled), X out of core, a singular matrix, ``rank`` on more than
            :data:`RANK_MAX_ROWS` rows or with no more rows than coefficients.
        RuntimeError
            A refit of ``nid``, ``boot`` or ``rank`` (``rank_scale="nid"``) that is not
            certified.
        """
        if se not in SE_KINDS:
            raise ValueError(f"se must be one of {', '.join(map(repr, SE_KINDS))}, got {se!r}")
        if bandwidth not in rq.BANDWIDTHS:
            raise ValueError(f"bandwidth must be one of {sorted(rq.BANDWIDTHS)}, got {bandwidth!r}")
        if not (isinstance(alpha, float | int) and not isinstance(alpha, bool) and 0 < alpha < 1):
            raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}")
        if rank_scale not in ("iid", "nid"):
            raise ValueError(f"rank_scale must be 'iid' or 'nid', got {rank_scale!r}")
        data = self._inference_data()
        names = [name for name, _ in self.coefficients()]
        beta = np.asarray(self.solution["beta"], dtype=float)
        tau, s = self.tau, data.s
        n = float(s.sum())
        details: dict[str, float] = {}
        draws = None
        if se == "rank":
            lower, upper = self._rank_intervals(data, beta, alpha, bandwidth, rank_scale, details)
            nan = np.full(beta.size, math.nan)
            return Inference(tau=tau, se=se, names=names, estimate=beta, std_error=nan,
                             covariance=np.full((beta.size, beta.size), math.nan), n=n,
                             rdf=n - beta.size, alpha=alpha, details=details,
                             interval=(lower, upper))
        if se == "boot":
            draws = self.bootstrap(B=B, seed=seed)
            covariance = np.atleast_2d(np.cov(draws, rowvar=False, ddof=1))
            details["B"] = int(B)
        else:
            h = rq.BANDWIDTHS[bandwidth](tau, n)
            if se == "iid":
                fitted = data.X @ beta
                sparsity, found = rq.iid_sparsity(data.y - fitted, s, beta.size, h,
                                                  sign_tolerance(data.y, fitted))
                covariance = rq.iid_covariance(data.X, s, tau, sparsity)
                details.update(bandwidth=float(h), sparsity=float(sparsity), **found)
            else:
                density, _ = self._local_density(h, "nid", details)
                covariance = rq.nid_covariance(data.X, s, tau, density)
        return Inference(tau=tau, se=se, names=names, estimate=beta,
                         std_error=np.sqrt(np.diag(covariance)), covariance=covariance, n=n,
                         rdf=n - beta.size, alpha=alpha, details=details, draws=draws)

    def _local_density(self, h: float, what: str, details: dict):
        """Hendricks & Koenker's local densities from certified refits at tau -/+ h (h halved
        until both levels are in (0, 1)); ``bandwidth`` and ``crossing`` go to ``details``."""
        tau, data = self.tau, self._data
        while tau - h < 0 or tau + h > 1:
            h /= 2
        (upper, exact_upper), (lower, exact_lower) = (self._vertex_refit(level)
                                                      for level in (tau + h, tau - h))
        difference = data.X @ (upper - lower)
        density, crossing = rq.nid_density(difference, h)
        if crossing:
            warnings.warn(f"se={what!r}: the fitted quantiles at tau -/+ h cross on "
                          f"{crossing} row(s); their local density is taken as 0",
                          RuntimeWarning, stacklevel=user_stacklevel())
        details.update(bandwidth=float(h), crossing=crossing,
                       vertices=int(exact_upper) + int(exact_lower))
        return density, h

    def _vertex_refit(self, quantile: float) -> tuple[np.ndarray, bool]:
        """The coefficients at level ``quantile`` as quantreg's refits (method "br") give them:
        the optimal vertex (:func:`aidopt.numerics.rq.vertex`, proven by its dual) reached from
        the certified refit by a few simplex pivots, ``(beta, True)``; when no vertex is proven
        (linearly dependent rows nearest the hyperplane, or too many pivots), the certified
        refit's coefficients, ``False``."""
        data = self._data
        beta = self._refit(quantile).solution["beta"]
        found = rq.vertex(data.X, data.y, data.s, quantile, beta)
        return (beta, False) if found is None else (found[0], True)

    def _rank_intervals(self, data, beta, alpha: float, bandwidth: str, scale: str,
                        details: dict):
        """The rank-inversion intervals (:func:`aidopt.numerics.rqrank.rank_intervals`), the
        size checked first."""
        import scipy.sparse as sp

        rows = int(np.count_nonzero(data.s > 0))
        if rows > RANK_MAX_ROWS:
            raise ValueError(f"se='rank' is for modest n: {rows} rows > {RANK_MAX_ROWS} (every "
                             "bound is a search of LPs on all rows); use se='nid' or 'boot'")
        if rows > RANK_WARN_ROWS:
            warnings.warn(f"se='rank' on {rows} rows (> {RANK_WARN_ROWS}): each bound solves "
                          "10-25 LPs on all rows; se='nid' is the large-n choice",
                          RuntimeWarning, stacklevel=user_stacklevel())
        if sp.issparse(data.X) and 8.0 * data.X.shape[0] * data.X.shape[1] > RANK_DENSE_BYTES:
            raise ValueError(f"se='rank' works on a dense copy of X, and this sparse X's would "
                             f"take {8e-9 * data.X.shape[0] * data.X.shape[1]:.3g} GB (> "
                             f"{RANK_DENSE_BYTES / 1e9:g} GB): use se='nid' or 'boot'")
        X = data.X.toarray() if sp.issparse(data.X) else np.asarray(data.X, dtype=float)
        s = data.s
        if scale == "iid":
            q = rqrank.iid_scale(X[s > 0], s[s > 0])
        else:
            h = rq.BANDWIDTHS[bandwidth](self.tau, float(s.sum()))
            density, _ = self._local_density(h, "rank", details)
            q = rqrank.nid_scale(X[s > 0], s[s > 0], density[s > 0])
        lower, upper, found = rqrank.rank_intervals(X, data.y, s, self.tau, beta, alpha, q)
        details.update(scale=scale, **found)
        return lower, upper

    def bootstrap(self, B: int = 200, seed: int = 0) -> np.ndarray:
        """Coefficients of ``B`` xy-pair bootstrap refits: refit j draws n rows with
        replacement (:func:`resample_counts`), i.e. sample weights :math:`k_i s_i`, and is
        started from this fit's final partition (restricted to the rows drawn).

        Returns
        -------
        ndarray of shape (B, p)

        Raises
        ------
        RuntimeError
            A refit that is not certified (its coefficients would not be the resample's
            estimate).
        """
        if isinstance(B, bool) or not isinstance(B, int | np.integer) or B < 2:
            raise ValueError(f"B must be an integer >= 2, got {B!r}")
        data = self._inference_data()
        rows = []
        for j, counts in enumerate(resample_counts(data.n, int(B), seed)):
            refit = self._refit(self.quantile, data.s * counts, what=f"bootstrap refit {j}")
            rows.append(refit.solution["beta"])
        return np.asarray(rows, dtype=float)

    def _inference_data(self):
        data = self._data
        if data is None:
            raise ValueError("this result does not hold its data (it was unpickled or made by "
                             "hand): refit with solve_lad to compute standard errors")
        if isinstance(data.X, ChunkedMatrix):
            raise ValueError("standard errors need X in memory: fit with engine='numpy'")
        return data

    def _refit(self, quantile, weights=None, what: str | None = None) -> LADResult:
        """The same fit at another level or with other sample weights, started from this fit's
        partition; it must be certified."""
        data = self._data
        if weights is not None:
            data = type(data)(data.X, data.y, weights, data.feature_names)
        config = dataclasses.replace(self._config, log=False, write_models=None)
        result = fit(data, quantile, config, self._form, self._labels)
        if not result.certified:
            raise RuntimeError(f"{what or f'the refit at tau = {quantile:g}'} ended "
                               f"{result.termination.value}, not certified: raise time_limit or "
                               "check the data")
        return result


def fit(data, quantile, config: RunConfig, form: str = "auto", labels=None,
        start_beta=None, start: str = "kmeans", start_previous=None) -> LADResult:
    """One LAD / quantile fit of validated ``data``: AID from ``labels`` (a partition of the
    rows) when given, else from the initial partition ``start`` of
    :class:`~aidopt.decomposition.LADProblem`, seeded by ``start_beta`` (and
    ``start_previous``) when given."""
    problem = LADProblem(form=form, quantile=quantile, start_beta=start_beta, start=start,
                         start_previous=start_previous)
    result = _front.decorate(_front.run_rows(problem, data, config, labels), data)
    return LADResult.wrap(result, problem.quantile, data, config, form)


#: the initial partition of every level of :func:`fit_sequence` (``LADProblem(start=...)``)
SEQUENCE_START = "band"


def fit_sequence(data, quantiles, config: RunConfig, form: str = "auto",
                 start: str = SEQUENCE_START) -> QuantileResults:
    """The fits of the increasing levels ``quantiles``, each warm from the previous level's.

    ``start="band"`` (default): Portnoy & Koenker's band as AID's initial partition
    (:meth:`aidopt.decomposition.LADProblem.band_partition`): the first level's around a fit on
    a random sample, every later level's around the previous level's coefficients, ranked also
    by the spread between the two levels before it (least squares stands in for the level
    before the first). ``start="kmeans"``: the paper's k-means step on the residuals at the
    previous level's coefficients (the first level's at a fit on a random sample).

    Not from the previous level's final partition: that partition is refined around the previous
    level's hyperplane, every level refines it further and the aggregated problems grow (five
    levels at 2e5 x 50: 4.7x the time of five cold fits; docs/quantiles.md)."""
    begun = time.perf_counter()
    results: list[LADResult] = []
    for i, tau in enumerate(quantiles):
        warm = results[-1] if results and results[-1].solution.get("beta") is not None else None
        with run_logging(config.log) as log:
            log.info("regression quantile %d of %d: tau = %g%s", i + 1, len(quantiles), tau,
                     "" if warm is None else f", started from {'a band around ' if start == 'band' else ''}"
                     f"the fit at tau = {warm.quantile:g}")
        previous = None  # the level before the neighbour, for the band start's spread
        if start == "band" and warm is not None and len(results) >= 2:
            previous = results[-2].solution.get("beta")
        results.append(fit(data, tau, config, form, start=start,
                           start_beta=None if warm is None else warm.solution["beta"],
                           start_previous=previous))
    return QuantileResults(results, seconds=time.perf_counter() - begun)


@dataclass(eq=False)
class Inference:
    r"""Standard errors and tests of regression quantile coefficients (R's ``summary.rq``).

    ``str()`` prints the table as R does, with the interval added: estimate, standard error,
    t value, :math:`P(|T| > |t|)` for Student's t with :math:`n - p` degrees of freedom, and
    the interval :math:`\hat\beta_j \pm t_{n-p,\,1-\alpha/2}\,\mathrm{se}_j`. For
    ``se="rank"`` it holds the rank-inversion intervals (``interval``) and no standard errors
    (``std_error``, ``covariance``, ``t_value``, ``p_value`` are NaN), and prints R's table:
    coefficients, lower bd, upper bd (an unbounded side is ``inf``).

    Attributes
    ----------
    tau : float
    se : str
        ``"iid"``, ``"nid"``, ``"boot"`` or ``"rank"``.
    names : list of str
    estimate, std_error : ndarray (p,)
    covariance : ndarray (p, p)
    n : float
        :math:`\sum_i s_i` (sample weights count as repeated rows).
    rdf : float
        Residual degrees of freedom :math:`n - p`.
    alpha : float
    details : dict
        ``bandwidth`` (h), ``sparsity`` and ``zeros`` (iid), ``crossing`` and ``vertices`` (nid:
        how many of the two refits at tau -/+ h ended at a proven vertex, 0-2), ``B`` (boot);
        ``scale``, ``cutoff`` (the critical value c) and ``solves`` (LPs) for rank.
    draws : ndarray (B, p) or None
        The bootstrap coefficients (boot).
    interval : tuple of two ndarrays (p,) or None
        ``(lower, upper)`` given (rank); otherwise computed from the standard errors.
    t_value, p_value, lower, upper : ndarray (p,)
    """

    tau: float
    se: str
    names: list[str]
    estimate: np.ndarray
    std_error: np.ndarray
    covariance: np.ndarray
    n: float
    rdf: float
    alpha: float = 0.05
    details: dict = field(default_factory=dict)
    draws: np.ndarray | None = field(default=None, repr=False)
    interval: tuple | None = field(default=None, repr=False)
    t_value: np.ndarray = field(init=False)
    p_value: np.ndarray = field(init=False)
    lower: np.ndarray = field(init=False)
    upper: np.ndarray = field(init=False)

    def __post_init__(self):
        if self.interval is not None:
            self.lower, self.upper = (np.asarray(b, dtype=float) for b in self.interval)
            self.t_value = np.full(len(self.estimate), math.nan)
            self.p_value = np.full(len(self.estimate), math.nan)
            return
        tests = rq.coefficient_tests(self.estimate, self.std_error, self.rdf, self.alpha)
        self.t_value, self.p_value = tests["t"], tests["p"]
        self.lower, self.upper = tests["lower"], tests["upper"]

    def frame(self):
        """The table as a pandas DataFrame, one row per coefficient: ``estimate``,
        ``std_error``, ``t_value``, ``p_value``, ``lower``, ``upper``."""
        import pandas as pd

        return pd.DataFrame({"estimate": self.estimate, "std_error": self.std_error,
                             "t_value": self.t_value, "p_value": self.p_value,
                             "lower": self.lower, "upper": self.upper}, index=list(self.names))

    def how(self) -> str:
        """One line: the level, the kind of standard error and its parameters."""
        d = self.details
        if self.se == "rank":
            return (f"tau = {self.tau:g}   rank-inversion intervals ({d.get('scale', 'iid')} "
                    f"scale, {100 * (1 - self.alpha):g}%); n = {self.n:g}, {self.rdf:g} "
                    "residual df")
        if self.se == "boot":
            kind = f"xy-pair bootstrap, B = {d.get('B')}"
        else:
            kind = f"bandwidth h = {d.get('bandwidth', math.nan):.4g}"
            if self.se == "iid":
                kind += f", sparsity {d.get('sparsity', math.nan):.4g}"
        return (f"tau = {self.tau:g}   standard errors: {self.se} ({kind}); n = {self.n:g}, "
                f"{self.rdf:g} residual df")

    def __str__(self) -> str:
        level = f"{100 * (1 - self.alpha):g}%"
        if self.se == "rank":
            head = ["coefficients", "lower bd", "upper bd"]
            cells = [[f"{v + 0.0:.6g}", f"{lo + 0.0:.6g}", f"{hi + 0.0:.6g}"]
                     for v, lo, hi in zip(self.estimate, self.lower, self.upper, strict=True)]
        else:
            head = ["Value", "Std. Error", "t value", "Pr(>|t|)", f"lower {level}",
                    f"upper {level}"]
            cells = [[f"{v + 0.0:.6g}", f"{e:.5g}", f"{t:.3f}", _pvalue(p), f"{lo + 0.0:.6g}",
                      f"{hi + 0.0:.6g}"]
                     for v, e, t, p, lo, hi in zip(self.estimate, self.std_error, self.t_value,
                                                   self.p_value, self.lower, self.upper,
                                                   strict=True)]
        name_width = max(12, *(len(n) for n in self.names))
        widths = [max(len(h), *(len(row[j]) for row in cells)) for j, h in enumerate(head)]
        lines = [self.how(), "", "Coefficients:",
                 " " * name_width + "  " + "  ".join(h.rjust(w) for h, w in zip(head, widths, strict=True))]
        for name, row in zip(self.names, cells, strict=True):
            lines.append(name.ljust(name_width) + "  "
                         + "  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))
        return "\n".join(lines)


def _pvalue(p: float) -> str:
    """A p-value as R's ``format.pval`` shows it: ``<2e-16`` below the machine epsilon."""
    if not math.isfinite(p):
        return "NA"
    return "<2e-16" if p < np.finfo(float).eps else f"{p:.4g}"


class QuantileResults(RunResult):
    r"""The fits of a sequence of levels :math:`\tau_1 < \dots < \tau_T`
    (``solve_lad(X, y, quantile=[...])``; R's ``rq(y ~ x, tau=c(...))``), each AID run started
    from the final partition of its neighbour :math:`\tau_{j-1}`.

    Iterating gives the :class:`LADResult` of each level, in increasing order; ``results[j]``
    is the j-th. :meth:`coefficients` is the table of coefficients by level, :meth:`summary`
    and :meth:`inference` the tables with standard errors, :meth:`plot` R's
    ``plot(summary(fits))``.

    Attributes
    ----------
    results : list of LADResult
    quantiles : ndarray
    seconds : float
        The whole sequence.
    """

    def __init__(self, results: list[LADResult], seconds: float):
        self.results = list(results)
        self.quantiles = np.array([r.quantile for r in self.results], dtype=float)
        self.seconds = float(seconds)

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self):
        return iter(self.results)

    def __getitem__(self, j) -> LADResult:
        return self.results[j]

    @property
    def certified(self) -> bool:
        """Every level's certificate passed."""
        return all(r.certified for r in self.results)

    @property
    def certificate(self):
        """None: each level has its own (``results[j].certificate``)."""
        return None

    @property
    def termination(self) -> Termination:
        """``certified_optimal`` when every level is, else the first level's that is not."""
        return next((r.termination for r in self.results if not r.certified),
                    Termination.CERTIFIED_OPTIMAL)

    @property
    def message(self) -> str:
        return "; ".join(f"tau = {r.quantile:g}: {r.message}" for r in self.results if r.message)

    def coefficients(self):
        r"""The coefficients by level: a pandas DataFrame, one row per :math:`\tau` (the index,
        named ``tau``), one column per coefficient."""
        import pandas as pd

        names = [name for name, _ in self.results[0].coefficients()]
        values = [[v for _, v in r.coefficients()] for r in self.results]
        return pd.DataFrame(values, index=pd.Index(self.quantiles, name="tau"), columns=names)

    def inference(self, se: str = "nid", **options) -> list[Inference]:
        """:meth:`LADResult.inference` of every level, in order."""
        return [r.inference(se, **options) for r in self.results]

    def summary(self, coefficients: bool = True, se: str | None = None, **options) -> str:
        """One line per level (termination, objective, gap, iterations, clusters, time), then the
        coefficients by level or, with ``se``, each level's table of :meth:`inference`."""
        first = self.results[0]
        dims = ", ".join(f"{k}={v}" for k, v in first.dimensions.items())
        lines = [f"aidopt regression quantiles: {dims}, {len(self)} levels, solver={first.solver}, "
                 f"{'AID' if first.aid else 'direct'}, {self.seconds:.2f} s",
                 f"termination {self.termination.value}",
                 f"{'tau':>8} {'termination':>18} {'objective':>16} {'gap':>10} {'iter':>5} "
                 f"{'clusters':>9} {'time':>8}"]
        for r in self.results:
            clusters = r.history[-1].n_clusters if r.history else 0
            lines.append(f"{r.quantile:>8g} {r.termination.value:>18} {r.objective:>16.10g} "
                         f"{r.gap:>10.3e} {len(r.history):>5d} {clusters:>9d} {r.seconds:>8.2f}")
        if se is not None:
            lines += ["", *(f"{inf}\n" for inf in self.inference(se, **options))]
        elif coefficients:
            lines += ["", "coefficients by tau:", self.coefficients().to_string()]
        return "\n".join(lines)

    def history_rows(self) -> list[dict[str, Any]]:
        """Every level's iterations, with a ``tau`` column."""
        return [{"tau": r.quantile, **row} for r in self.results for row in r.history_rows()]

    def to_dict(self) -> dict[str, Any]:
        return {"quantiles": self.quantiles.tolist(), "termination": self.termination.value,
                "seconds": self.seconds, "results": [r.to_dict() for r in self.results]}

    def plot(self, path=None, *, se: str = "nid", level: float = 0.9, ols: bool = True, **options):
        r"""The coefficients against :math:`\tau`, one panel per coefficient, as R's
        ``plot(summary(fits))``: the estimates joined by a line inside the shaded interval of
        level ``level`` (from :meth:`inference` with ``se``; ``se=None``: no band), and, with
        ``ols``, the weighted least-squares estimate (solid line) and its interval (dashed).

        Parameters
        ----------
        path : str or path, optional
            Write the figure there (PNG, PDF, ... by the suffix).
        se : {"iid", "nid", "boot", "rank"} or None, default "nid"
        level : float, default 0.9
        ols : bool, default True
        **options
            Passed to :meth:`inference` (``bandwidth``, ``B``, ``seed``, ``rank_scale``).

        Returns
        -------
        matplotlib.figure.Figure
        """
        plt = pyplot()
        frame = self.coefficients()
        p = frame.shape[1]
        cols = min(p, 3)
        rows = math.ceil(p / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
        bands = (None if se is None else
                 self.inference(se, alpha=1 - level, **options))
        least = _least_squares(self.results[0], 1 - level) if ols else None
        for j, name in enumerate(frame.columns):
            ax = axes[j // cols][j % cols]
            if bands is not None:
                ax.fill_between(self.quantiles, [b.lower[j] for b in bands],
                                [b.upper[j] for b in bands], color="0.8", linewidth=0)
            ax.plot(self.quantiles, frame[name], "o-", color="black", markersize=3)
            if least is not None:
                ax.axhline(least[0][j], color="red")
                for bound in least[1:]:
                    ax.axhline(bound[j], color="red", linestyle="--")
            ax.set_title(name)
            ax.set_xlabel("tau")
        for j in range(p, rows * cols):
            axes[j // cols][j % cols].set_visible(False)
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=120)
            plt.close(fig)
        return fig


def _least_squares(result: LADResult, alpha: float):
    """Weighted least squares on the fit's data: ``(estimate, lower, upper)`` with the classical
    intervals of level 1 - alpha (t with n - p degrees of freedom); None without the data."""
    from scipy import stats

    data = result._data
    if data is None or isinstance(data.X, ChunkedMatrix):
        return None
    root = np.sqrt(data.s)
    beta, *_ = np.linalg.lstsq(data.X * root[:, None], data.y * root, rcond=None)
    n, p = float(data.s.sum()), beta.size
    sigma2 = float(data.s @ (data.y - data.X @ beta) ** 2) / (n - p)
    se = np.sqrt(np.diag(sigma2 * np.linalg.pinv(rq.gram(data.X, data.s))))
    q = float(stats.t.ppf(1 - alpha / 2, n - p))
    return beta, beta - q * se, beta + q * se
