r"""Semi- and unsupervised regularized least-squares classification (S²RLSC; Gieseke, Kramer,
Airola & Pahikkala 2012): :func:`solve_s2rlsc`, :class:`S2RLSCClassifier`, the exact MIQP for
small problems (:func:`solve_miqp`) and :class:`S2RLSCResult`. The fitness and the local search
are in :mod:`aidopt.numerics.rlsc` (the paper's notation is stated there); the parameters are
declared once in :data:`S2RLSC`."""

from __future__ import annotations

import dataclasses
import math
import numbers
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aidopt import solvers
from aidopt.api._params import Family, Param
from aidopt.api.estimator import ConvergenceWarning, _BaseEstimator, _ClassifierMixin
from aidopt.data.validate import _check_finite, _rows
from aidopt.decomposition.mip import mip_gap, mip_options
from aidopt.decomposition.protocol import relative_gap
from aidopt.decomposition.run import Run, RunConfig, run_scope
from aidopt.numerics.kernels import DEFAULT_SIGMA_FACTOR, RLSC_KERNELS, rbf_scale, rlsc_kernel
from aidopt.numerics.rlsc import (
    _ACCEPT_RTOL,
    SEARCHES,
    Band,
    RLSCFitness,
    SearchOutcome,
    _symmetric_kernel,
    aggregated_start,
    local_search,
    nystrom_fitness,
)
from aidopt.results import RunResult, Termination, pyplot

__all__ = ['METHODS', 'RLSC_KERNELS', 'EXACT_MAX_U', 'solve_miqp', 'S2RLSCResult', 'solve_s2rlsc', 'S2RLSCClassifier']
METHODS = ("search", "exact")
EXACT_MAX_U = 400
"""The largest u for ``method="exact"``: the MIQP objective has :math:`u(u+1)/2` quadratic terms,
built one by one as Pyomo expressions (80,000 at u = 400), and the MIP solvers prove optimality
within minutes only for tens of unlabelled points (docs/s2rlsc.md). Checked before any kernel is
built."""


# ----------------------------------------------------------------------------------------------
# the exact MIQP


def _check_exact_size(method: str, u: int) -> None:
    if method == "exact" and u > EXACT_MAX_U:
        raise ValueError(
            f"method='exact' builds an MIQP with u(u+1)/2 = {u * (u + 1) // 2} quadratic terms "
            f"for u = {u} unlabelled points; at most EXACT_MAX_U = {EXACT_MAX_U} are accepted "
            "(MIP solvers prove optimality only for tens): use method='search'")


def _miqp_solver(name: str | None, u: int) -> str:
    """The MIQP solver: the one asked for, else Gurobi when installed and its licence fits
    (u <= 200 binaries with quadratic terms under the pip licence), else SCIP."""
    if name is not None:
        solvers.check_solver(name, solvers.ProblemClass.MIQP)
        return name
    gurobi = solvers.availability("gurobi")
    if gurobi == "full" or (gurobi == "limited" and u <= 200):
        return "gurobi"
    if solvers.availability("scip") in ("full", "limited"):
        return "scip"
    raise solvers.SolverUnavailableError(
        "method='exact' solves an MIQP: install SCIP (pip install 'aidopt[scip]') or Gurobi "
        "(pip install 'aidopt[gurobi]')")


def solve_miqp(fitness: RLSCFitness, y, free, band: Band, *, solver: str | None = None,
               run: Run | None = None, time_limit: float | None = None, threads=None,
               tee: bool = False, options: dict | None = None, fallback: bool = True,
               write: str | None = None):
    """Solve the labelling MIQP :math:`\\min y'My` over the band (:mod:`aidopt.models.s2rlsc`);
    ``ValueError`` for more than :data:`EXACT_MAX_U` free points.

    ``run``: the :class:`~aidopt.decomposition.run.Run` of a :func:`solve_s2rlsc` call (its time
    left, options, ``write_models`` and fallback policy: SCIP after a failed or refused solve);
    without one, a run of its own is made from ``time_limit``, ``threads``, ``tee``,
    ``options``, ``fallback`` and ``write`` (a folder for the model as ``.lp`` / ``.mps``, named
    as ``write_models`` names them).

    Returns
    -------
    y : ndarray (n,) or None
        The MIP solver's labelling (None when it found none).
    fitness : float
        F at that labelling, in closed form (NaN without one).
    outcome : aidopt.solvers.SolveOutcome
        ``objective`` (= F up to the solver's tolerances: the constant c0 is in the model),
        ``bound`` (a proven lower bound on min F over the band), status.
    """
    from aidopt.models import s2rlsc as model_module

    free = np.asarray(free, dtype=np.int64)
    _check_exact_size("exact", free.size)
    name = _miqp_solver(solver, free.size)
    model = model_module.create_instance(fitness.matrix(), y, free, band.k_lo, band.k_hi)
    if run is None:
        config = RunConfig(solver=name, time_limit=time_limit, threads=threads, tee=tee,
                           solver_options=dict(options or {}), fallback=fallback, log=False,
                           write_models=write)
        run = Run("s2rlsc", solvers.ProblemClass.MIQP, config, fallbacks=_miqp_fallbacks,
                  defaults=lambda which: mip_options(which, solvers.ProblemClass.MIQP))
    outcome = run.solve_or_retry(model, solver=name, problem_class=solvers.ProblemClass.MIQP)
    if not outcome.has_solution:
        return None, math.nan, outcome
    labels = np.array(y, dtype=float)
    labels[free] = model_module.solution_from(model)
    return labels, fitness(labels), outcome


# ----------------------------------------------------------------------------------------------
# the result


@dataclass
class S2RLSCResult(RunResult):
    """What :func:`solve_s2rlsc` returns.

    Attributes
    ----------
    labels : ndarray (n,)
        -1 / +1 for every training point: the given labels on the labelled ones, the found
        labels (transduction) on the others.
    fitness : float
        F(labels), eq. (11) / (15) in closed form (13) / (16).
    termination : aidopt.results.Termination
        ``no_improvement`` (every restart stopped by its rule: a local search, never optimal),
        ``certified_optimal`` (``method="exact"``: the MIP solver's bound is within ``tol`` of
        ``fitness``), ``time_limit``, ``iteration_limit``, ``interrupted``, ``gap_tolerance``
        (exact, the MIP solver stopped with a larger gap) or ``solver_failure``.
    method : {"search", "exact"}
    found_by : {"search", "miqp"}
        Which produced ``labels`` (exact mode keeps the better of the search and the MIQP).
    bound : float
        A proven lower bound on F over the band (the MIQP's), ``-inf`` without one.
    gap : float
        ``(fitness - bound) / max(1, |fitness|)`` (``inf`` without a bound).
    coef : ndarray (n,)
        :math:`c^*` of eq. (12): :math:`f(x) = \\sum_i c_i k(x_i, x)` (under Nyström with
        :math:`\\tilde k`, see ``decision_function``).
    decision : ndarray (n,)
        f at the training points.
    mode : {"semi-supervised", "clustering"}
    band : Band
    search : dict
        Search settings and statistics (restart fitness values, evaluations, seconds, the
        aggregated warm start).
    mip : dict or None
        The MIQP solve: solver, status, objective, bound, mip_gap, seconds, fitness.
    params : dict
        kernel, sigma, lam, lam_prime, eps, b_c, r (and the landmarks under Nyström).
    seconds : float
    message : str
    """

    labels: np.ndarray
    fitness: float
    termination: Termination
    method: str
    found_by: str
    bound: float
    gap: float
    coef: np.ndarray
    decision: np.ndarray
    mode: str
    band: Band
    search: dict
    mip: dict | None
    params: dict
    seconds: float
    message: str = ""
    predictor: Any = field(default=None, repr=False)
    """``(kfun, basis, weights)``: :math:`f(x) = K(x, basis) \\cdot weights`."""

    @property
    def transduction(self) -> np.ndarray:
        return self.labels

    @property
    def certified(self) -> bool:
        """True only for a proven optimum (``termination == "certified_optimal"``)."""
        return self.termination is Termination.CERTIFIED_OPTIMAL

    def decision_function(self, X) -> np.ndarray:
        r""":math:`f(x) = \sum_i c^*_i k(x_i, x)`; under Nyström the consistent extension
        :math:`f(x) = k_R(x)' B L' c^*` of :math:`\tilde k` (equal to ``decision`` on the training
        points)."""
        from aidopt.data.validate import _to_float_matrix
        from aidopt.numerics.kernels import kernel_matrix

        kfun, basis, weights = self.predictor
        X, _ = _to_float_matrix(X)
        if X.ndim != 2 or X.shape[1] != basis.shape[1]:
            raise ValueError(f"X has shape {X.shape}, expected (n, {basis.shape[1]}) as in the fit")
        _check_finite(X, "X")
        return kernel_matrix(kfun, X, basis) @ weights

    def predict(self, X) -> np.ndarray:
        """-1 / +1 by the sign of the decision function (0 counts as +1)."""
        return np.where(self.decision_function(X) >= 0, 1.0, -1.0)

    def to_dict(self) -> dict:
        def plain(value):
            if isinstance(value, np.ndarray):
                return value.tolist()
            if isinstance(value, dict):
                return {k: plain(v) for k, v in value.items()}
            return getattr(value, "__name__", "callable") if callable(value) else value

        params, search = plain(self.params), plain(self.search)
        return {
            "problem": "s2rlsc", "termination": self.termination.value, "method": self.method,
            "found_by": self.found_by, "fitness": self.fitness, "bound": self.bound,
            "gap": self.gap, "mode": self.mode, "band": self.band.to_dict(),
            "labels": self.labels.tolist(), "coef": self.coef.tolist(),
            "search": search, "mip": self.mip, "params": params, "seconds": self.seconds,
            "message": self.message,
        }

    #: no dual certificate: a local search proves nothing, and an exact run's proof is the MIQP
    #: solver's gap (``mip``, ``bound``, ``gap``)
    certificate = None

    def history_rows(self) -> list[dict]:
        """One row per restart of the search: its final fitness."""
        return [{"restart": i + 1, "fitness": float(f)}
                for i, f in enumerate(self.search.get("restart_fitness", []))]

    def plot(self, path=None):
        """The fitness of every restart (sorted), the returned fitness and the MIQP bound."""
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6, 3.5))
        values = np.sort(np.asarray(self.search.get("restart_fitness", []), dtype=float))
        ax.plot(np.arange(1, values.size + 1), values, "o-", label="restarts (sorted)")
        ax.axhline(self.fitness, color="k", ls="--", label=f"returned F = {self.fitness:.6g}")
        if math.isfinite(self.bound):
            ax.axhline(self.bound, color="r", ls=":", label=f"MIQP bound {self.bound:.6g}")
        ax.set_xlabel("restart (sorted by F)")
        ax.set_ylabel("fitness F(y)")
        ax.legend()
        ax.set_title(f"S2RLSC ({self.mode}, {self.method}): {self.termination.value}")
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=120)
            plt.close(fig)
        return fig

    def summary(self) -> str:
        s = self.search
        lines = [
            f"aidopt s2rlsc ({self.mode}): n={self.labels.size}, u={self.band.u}, "
            f"kernel={self.params['kernel']}, lam={self.params['lam']:g}"
            + (f", lam'={self.params['lam_prime']:g}" if self.mode == "semi-supervised" else "")
            + (f", Nystrom r={self.params['r']}" if self.params.get("r") else ", full kernel"),
            f"termination             {self.termination.value}"
            + (f"  ({self.message})" if self.message else ""),
            f"fitness F(y)            {self.fitness:.10g}   (found by {self.found_by})",
            f"lower bound             {self.bound:.10g}" if math.isfinite(self.bound)
            else "lower bound             none (a local search proves nothing)",
            f"relative gap            {self.gap:.3e}",
            f"band                    {self.band.k_lo} <= #(+1 among unlabelled) <= "
            f"{self.band.k_hi}  (b_c={self.band.b_c:.4g}, eps={self.band.eps:g}); "
            f"found {int((self.labels[self.search['free']] > 0).sum())}",
            f"search                  {s['search']}"
            + (f" (mu={s['mu']}, nu={s['nu']})" if s["search"] == "mu+nu" else " (round robin)")
            + f", best of {len(s['restart_fitness'])} restarts, {s['evaluations']} evaluations, "
            f"{s['seconds']:.2f} s",
        ]
        if s.get("aggregate"):
            a = s["aggregate"]
            lines.append(f"aggregated warm start   {a['clusters']} clusters, F(lifted) "
                         f"{a['fitness']:.6g}, {a['seconds']:.2f} s")
        if self.mip is not None:
            m = self.mip
            lines.append(f"MIQP                    {m['solver']} {m['status']}, objective "
                         f"{m['objective']}, bound {m['bound']}, {m['seconds']:.2f} s")
        lines.append(f"time                    {self.seconds:.2f} s")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"S2RLSCResult(mode={self.mode!r}, termination={self.termination.value!r}, "
                f"fitness={self.fitness:.10g}, gap={self.gap:.2e}, found_by={self.found_by!r})")


# ----------------------------------------------------------------------------------------------
# input validation


def _positive(name, value, *, integer=False, allow_none=False, upper=None):
    if value is None and allow_none:
        return None
    if integer:
        ok = isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1
    else:
        ok = (isinstance(value, numbers.Real) and not isinstance(value, bool)
              and math.isfinite(value) and value > 0)
    if not ok:
        raise ValueError(f"{name} must be a positive {'integer' if integer else 'finite number'}"
                         f"{' or None' if allow_none else ''}, got {value!r}")
    if upper is not None and value > upper:
        raise ValueError(f"{name} must be at most {upper}, got {value!r}")
    return int(value) if integer else float(value)


def _labels(X, y, mode: str):
    """Validated ``X`` (float), labels ``y`` (-1 / +1, 0 unlabelled) and the labelled mask."""
    if mode not in ("auto", "semi-supervised", "clustering"):
        raise ValueError(f"mode must be 'auto', 'semi-supervised' or 'clustering', got {mode!r}")
    if y is None:
        n = np.asarray(X).shape[0] if hasattr(X, "shape") or isinstance(X, list | tuple) else 0
        y = np.zeros(n)
    X, yv, _, _ = _rows(X, y, None, None)
    try:
        yv = yv.astype(float)
    except (TypeError, ValueError) as exc:
        raise ValueError("y must be numeric: -1 / +1 for labelled points, 0 or NaN for "
                         "unlabelled ones") from exc
    bad = np.isinf(yv) | (np.isfinite(yv) & ~np.isin(yv, (-1.0, 0.0, 1.0)))
    if bad.any():
        raise ValueError(f"labels must be -1 or +1 (0 or NaN for unlabelled points); got "
                         f"{int(bad.sum())} other value(s): {np.unique(yv[bad])[:10].tolist()}")
    labelled = np.isfinite(yv) & (yv != 0)
    yv = np.where(labelled, yv, 0.0)
    if labelled.all():
        raise ValueError("no unlabelled points: every point is labelled, there is nothing to "
                         "search (that is supervised RLSC)")
    if mode == "clustering" and labelled.any():
        raise ValueError(f"mode='clustering' uses no labels, but y labels {int(labelled.sum())} "
                         "point(s); pass y with zeros (or mode='semi-supervised')")
    if mode == "semi-supervised" and not labelled.any():
        raise ValueError("mode='semi-supervised' needs labelled points; y has none (use "
                         "mode='clustering' or 'auto')")
    return X, yv, labelled


# ----------------------------------------------------------------------------------------------
# the front door


def _count_or_share(text: str) -> int | float:
    """CLI value of ``aggregate``: a count of clusters (an integer >= 1) or a share of u."""
    value = float(text)
    return int(value) if value >= 1 and value.is_integer() else value


#: the parameters of S2RLSC: the one declaration behind solve_s2rlsc, S2RLSCClassifier and
#: ``aidopt s2rlsc``
S2RLSC = Family(
    "s2rlsc",
    Param("kernel", "linear",
          "Linear (17), RBF (18) :math:`\\exp(-\\|a - b\\|^2/(2\\sigma^2))`, or any Mercer kernel "
          "``K(A, B) -> len(A) x len(B)`` (symmetric, positive semidefinite: checked).",
          kind="{\"linear\", \"rbf\"} or callable", choices=RLSC_KERNELS),
    Param("sigma", None,
          "RBF width; default 0.1 s with s the paper's distance scale (:func:`rbf_scale`).",
          kind="float", parse=float),
    Param("lam", 1.0,
          ":math:`\\lambda`, the weight of :math:`\\|f\\|^2` (Gieseke et al. (2012), section 4.4).",
          kind="float"),
    Param("lam_prime", 1.0,
          ":math:`\\lambda'`, the weight of the unlabelled loss (semi-supervised only; (7) has "
          "none).",
          kind="float"),
    Param("eps", 0.1,
          "Band half-width :math:`\\varepsilon` (the non-realistic scenario's value).",
          kind="float"),
    Param("b_c", None,
          "Band centre; default the share of +1 among the labelled points (0.5 for clustering).",
          kind="float", parse=float),
    Param("r", None,
          "Nyström approximation (14) with ``r`` landmarks drawn uniformly from all points "
          "(O(r) per flip, Theorem 2); default the full kernel (O(n) per flip, Theorem 1).",
          kind="int", parse=int),
    Param("search", "mu+nu",
          "The (μ+ν)-EA of Algorithm 2 (random parent and coordinate) or the (1+1)-EA with "
          "round-robin coordinates.",
          kind="{\"mu+nu\", \"1+1\"}", choices=SEARCHES),
    Param("mu", 5,
          "(μ+ν)-EA population size (the paper's section 4.2.1.2).",
          kind="int"),
    Param("nu", 25,
          "(μ+ν)-EA offspring per generation (the paper's section 4.2.1.2).",
          kind="int"),
    Param("restarts", 10,
          "Best of this many runs (the paper: 10 during model selection, 50 for final models).",
          kind="int"),
    Param("patience", None,
          "Stop a run after this many generations / steps without change (default n).",
          kind="int", parse=int),
    Param("aggregate", None,
          "AID-style warm start (:func:`aggregated_start`): cluster the unlabelled points into "
          "this many clusters (a float in (0, 1]: that share of u), search the weighted problem"
          " on the cluster representatives, and start the first run from its lifted labels.",
          kind="int or float", parse=_count_or_share, metavar="K"),
    Param("method", "search",
          "``\"exact\"`` also solves the convex MIQP (:mod:`aidopt.models.s2rlsc`) with "
          "``solver`` (default Gurobi within its licence, else SCIP) and keeps the better "
          "labelling; it is ``certified_optimal`` when the MIP solver's bound is within "
          "``tol``. Small u only (tens of unlabelled points): more than :data:`EXACT_MAX_U` "
          "(400) unlabelled points is refused with ``ValueError`` before any kernel is built.",
          kind="{\"search\", \"exact\"}", choices=METHODS),
    Param("mode", "auto",
          "``\"auto\"``: clustering when no point is labelled.",
          kind="{\"auto\", \"semi-supervised\", \"clustering\"}", choices=("auto", "semi-supervised", "clustering")),
)


@S2RLSC.door()
def solve_s2rlsc(X, y=None, *, p, **options) -> S2RLSCResult:
    r"""Semi-supervised (10) or unsupervised (7) RLSC: labels for the unlabelled points by
    recurrent local search on the closed-form fitness (13) / (16), or exactly by an MIQP.

    Parameters
    ----------
    X : array-like of shape (n, m)
    y : array-like of shape (n,), optional
        -1 / +1 on labelled points, 0 or NaN on unlabelled ones (as :func:`aidopt.solve_s3vm`);
        all unlabelled (or ``None``) is maximum margin clustering (7).
    solver, tol, max_iter, time_limit, seed, write_models, log, solver_options, threads, tee,
    fallback
        Common options: the MIQP solver, its accepted relative gap, the cap on generations /
        steps per run, the wall-clock limit of the whole call (the search gets at most half of
        it with ``method="exact"``), the seed of every random choice (landmarks, initial labels,
        mutations, clusters), where to write the MIQP; ``aid``, ``feasibility_tol`` and ``r0``
        are not used.

    Returns
    -------
    S2RLSCResult

    Examples
    --------
    >>> import numpy as np, aidopt
    >>> from aidopt.instances.s2rlsc import gaussian2c, ssl_split
    >>> X, y = gaussian2c(200, 20, seed=0)
    >>> Xtr, ytr, Xte, yte, _ = ssl_split(X, y, l=10, u=90, seed=0)
    >>> res = solve_s2rlsc(Xtr, ytr, log=False)
    >>> float(np.mean(res.predict(Xte) == yte)) > 0.9
    True
    """
    config = RunConfig.from_kwargs(options, caller="solve_s2rlsc")
    if p.search not in SEARCHES:
        raise ValueError(f"search must be one of {SEARCHES}, got {p.search!r}")
    if p.method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {p.method!r}")
    p.lam = _positive("lam", p.lam)
    p.lam_prime = _positive("lam_prime", p.lam_prime)
    p.eps = _positive("eps", p.eps)
    p.mu = _positive("mu", p.mu, integer=True)
    p.nu = _positive("nu", p.nu, integer=True)
    p.restarts = _positive("restarts", p.restarts, integer=True)
    p.patience = _positive("patience", p.patience, integer=True, allow_none=True)
    if p.sigma is not None:
        p.sigma = _positive("sigma", p.sigma)
    if p.b_c is not None and not (isinstance(p.b_c, numbers.Real) and not isinstance(p.b_c, bool)
                                and 0.0 <= p.b_c <= 1.0):
        raise ValueError(f"b_c must be a number in [0, 1] or None, got {p.b_c!r}")
    if not (callable(p.kernel) or p.kernel in RLSC_KERNELS):
        raise ValueError(f"kernel must be one of {RLSC_KERNELS} or a callable K(A, B), got {p.kernel!r}")
    X, yv, labelled = _labels(X, y, p.mode)
    n = X.shape[0]
    free = np.flatnonzero(~labelled)
    u, l = free.size, int(labelled.sum())
    clustering = l == 0
    _check_exact_size(p.method, u)
    if p.r is not None:
        p.r = _positive("r", p.r, integer=True)
        if p.r > n:
            raise ValueError(f"r = {p.r} landmarks, but there are only n = {n} points (r <= n)")
    if p.aggregate is not None:
        if isinstance(p.aggregate, numbers.Integral) and not isinstance(p.aggregate, bool):
            k_agg = _positive("aggregate", p.aggregate, integer=True, upper=u)
        elif isinstance(p.aggregate, numbers.Real) and not isinstance(p.aggregate, bool) and 0 < p.aggregate <= 1:
            k_agg = max(1, int(round(p.aggregate * u)))
        else:
            raise ValueError(f"aggregate must be a number of clusters (1..u={u}), a share of u in "
                             f"(0, 1], or None; got {p.aggregate!r}")
    if p.b_c is None:
        if clustering:
            p.b_c = 0.5
        else:
            share = float(np.mean(yv[labelled] > 0))
            if share in (0.0, 1.0):
                raise ValueError("b_c cannot be estimated from labels of one class only (it would "
                                 "force every unlabelled point into that class); pass b_c")
            p.b_c = share
    band = Band.of(u, float(p.b_c), p.eps)
    if p.method == "exact":
        solver_name = _miqp_solver(config.solver, u)
    with run_scope(config):
        run = Run("s2rlsc", solvers.ProblemClass.MIQP if p.method == "exact" else None,
                  dataclasses.replace(config, solver=solver_name) if p.method == "exact" else config,
                  dimensions={"n": n, "u": u}, fallbacks=_miqp_fallbacks,
                  defaults=lambda which: mip_options(which, solvers.ProblemClass.MIQP),
                  mode="local search" + (" and the exact MIQP" if p.method == "exact" else ""))
        result = None
        with run.guard():  # Ctrl-C outside the search and the MIQP (both stop by themselves)
            result = _run_s2rlsc(run, p, X, yv, labelled, free, band, clustering,
                                 k_agg if p.aggregate is not None else None)
        if result is None:
            raise KeyboardInterrupt
        run.log.info(result.summary())
        return result


def _miqp_fallbacks(solver: str) -> list[tuple[str, None]]:
    """The run's fallback policy for the exact MIQP: SCIP when another solver fails (e.g. a
    size-limited licence refuses the model)."""
    return [] if solver == "scip" else [("scip", None)]


def _run_s2rlsc(run: Run, p, X, yv, labelled, free, band: Band, clustering: bool,
                k_agg) -> S2RLSCResult:
    """The search (and the exact MIQP) of :func:`solve_s2rlsc` on validated inputs, under the
    run's clock, log and solver policy."""
    config = run.config
    n, u, l = X.shape[0], free.size, int(labelled.sum())
    solver_name = config.solver


    kfun = rlsc_kernel(p.kernel, p.sigma, X)
    if p.kernel == "rbf" and p.sigma is None:
        p.sigma = DEFAULT_SIGMA_FACTOR * rbf_scale(X)

    # D of (7) / (10)
    w_u = (1.0 / u) if clustering else (p.lam_prime / u)
    d = np.where(labelled, math.sqrt(1.0 / max(l, 1)), math.sqrt(w_u))
    rng = np.random.default_rng(config.seed)
    if p.r is None:
        fitness = RLSCFitness.from_kernel(_symmetric_kernel(kfun, X), d, p.lam, overwrite=True)
        landmarks = None
    else:
        landmarks = np.sort(rng.choice(n, size=p.r, replace=False))
        fitness, B, L = nystrom_fitness(kfun, X, d, p.lam, landmarks)
    y_fixed = yv.copy()
    search_limit = config.time_limit
    if p.method == "exact" and search_limit is not None:
        search_limit = 0.5 * search_limit
    starts, agg_info = [], None
    if p.aggregate is not None:
        agg_info = aggregated_start(fitness, y_fixed, free, band, k_agg, unlabelled_weight=w_u,
                                    lam=p.lam, search=p.search, mu=p.mu, nu=p.nu, restarts=p.restarts,
                                    seed=int(rng.integers(2**31 - 1)), time_limit=search_limit)
        if agg_info["y"] is not None:
            starts = [agg_info["y"]]
    spent = run.elapsed()
    if agg_info is not None and agg_info["stop"] == "interrupted":  # Ctrl-C: no second search
        outcome = SearchOutcome(agg_info["y"], agg_info["fitness"], [], 0, agg_info["seconds"],
                                "interrupted")
    else:
        with run.timed("search"), run.alive(f"local search, {p.restarts} restarts"):
            outcome = local_search(
                fitness, y_fixed, free, band, search=p.search, mu=p.mu, nu=p.nu,
                restarts=p.restarts, patience=p.patience, max_iter=config.max_iter,
                seed=int(rng.integers(2**31 - 1)),
                time_limit=None if search_limit is None else max(search_limit - spent, 1e-3),
                starts=starts)
    labels, F, found_by = outcome.y, outcome.fitness, "search"
    termination = {"patience": Termination.NO_IMPROVEMENT, "max_iter": Termination.ITERATION_LIMIT,
                   "time_limit": Termination.TIME_LIMIT,
                   "interrupted": Termination.INTERRUPTED}[outcome.stop]
    bound, gap, mip, message = -math.inf, math.inf, None, ""
    if outcome.stop == "patience":
        message = "local search: every restart stopped after its patience without change"
    out = None
    if p.method == "exact" and outcome.stop != "interrupted":
        try:
            y_mip, F_mip, out = solve_miqp(fitness, y_fixed, free, band, solver=solver_name,
                                           run=run)
        except KeyboardInterrupt:  # while the MIQP is built, or in the solver's Python code
            termination = Termination.INTERRUPTED
            message = "interrupted (Ctrl-C) during the MIQP: the local search's labels"
            run.log.info("interrupted (Ctrl-C): finishing with the local search's labels")
    if out is not None:
        mip = {"solver": out.solver, "status": str(out.status), "objective": out.objective,
               "bound": out.bound, "seconds": out.seconds, "fitness": F_mip,
               "mip_gap": mip_gap(out.objective, out.bound)}
        if y_mip is not None and F_mip < F - _ACCEPT_RTOL * fitness.const:  # not a rounding tie
            labels, F, found_by = y_mip, F_mip, "miqp"
        if out.bound is not None and math.isfinite(out.bound):
            bound = min(float(out.bound), F)
            gap = relative_gap(F, bound)  # the run framework's one definition
            if out.bound > F + config.tol * max(1.0, abs(F)):
                message = (f"the MIP bound {out.bound:.10g} exceeds the fitness {F:.10g}: solver "
                           "tolerance; not certified")
                bound, gap = -math.inf, math.inf
        if math.isfinite(gap) and gap <= config.tol:
            termination = Termination.CERTIFIED_OPTIMAL
            message = (f"MIQP ({out.solver}): bound within {gap:.1e} of F; optimal over the band "
                       "for this kernel matrix")
        elif str(out.status) == "time_limit":
            termination = Termination.TIME_LIMIT
            message = f"MIQP stopped at the time limit, relative gap {gap:.3e}"
        elif str(out.status) == "interrupted":  # the MIP solver's own Ctrl-C handling
            termination = Termination.INTERRUPTED
            message = (f"MIQP interrupted (Ctrl-C), relative gap {gap:.3e}: the better of its "
                       "incumbent and the local search's labels")
        elif out.status == "optimal" or math.isfinite(gap):
            termination = Termination.GAP_TOLERANCE
            message = f"MIQP ({out.solver}, {out.status}) relative gap {gap:.3e} > tol {config.tol:g}"
        else:
            if config.raise_on_failure and y_mip is None:
                from aidopt.solvers import SolverError

                raise SolverError(f"MIQP solver {out.solver} returned {out.status} "
                                  f"({out.message}); pass raise_on_failure=False to keep the "
                                  "search's labels")
            termination = Termination.SOLVER_FAILURE
            message = f"MIQP solver {out.solver} returned {out.status}; the search's labels are kept"
    coef = fitness.coefficients(labels)
    if landmarks is None:
        predictor = (kfun, X, coef)
    else:
        predictor = (kfun, X[landmarks], B @ (L.T @ coef))
    search_info = {
        "search": p.search, "mu": p.mu, "nu": p.nu, "restarts": p.restarts,
        "patience": n if p.patience is None else p.patience, "restart_fitness": outcome.restart_fitness,
        "evaluations": outcome.evaluations, "seconds": outcome.seconds,
        "fitness": outcome.fitness, "stop": outcome.stop, "free": free,
        "aggregate": None if agg_info is None else {k: v for k, v in agg_info.items() if k != "y"},
        "rank": fitness.r,
    }
    params = {"kernel": p.kernel, "sigma": p.sigma, "lam": p.lam, "lam_prime": p.lam_prime, "eps": p.eps,
              "b_c": band.b_c, "r": p.r, "landmarks": landmarks}
    result = S2RLSCResult(
        labels=labels, fitness=F, termination=termination, method=p.method, found_by=found_by,
        bound=bound, gap=gap, coef=coef, decision=fitness.decision(labels),
        mode="clustering" if clustering else "semi-supervised", band=band, search=search_info,
        mip=mip, params=params, seconds=run.elapsed(), message=message,
        predictor=predictor)
    return result


class S2RLSCClassifier(_ClassifierMixin, _BaseEstimator):
    """Semi-supervised (or, with no labels, clustering) regularized least-squares classifier.

    ``fit(X, y)`` takes ``y`` = -1 / +1 on labelled points and 0 or NaN on unlabelled ones (as
    :class:`aidopt.S3VMClassifier`); the labels found for the unlabelled points are
    ``transduction_``. The decision function is the RLSC expansion :math:`f(x) = \\sum_i c^*_i
    k(x_i, x)` of eq. (9) / (12) (no offset, as in the paper).

    Parameters
    ----------
    kernel : {"linear", "rbf"} or callable, default "linear"
    sigma : float, optional
        RBF width (default 0.1 s, :func:`aidopt.numerics.kernels.rbf_scale`).
    lam, lam_prime : float, default 1 and 1
        :math:`\\lambda` and :math:`\\lambda'` of (10).
    eps : float, default 0.1
    b_c : float, optional
        Default: the share of +1 among the labels (0.5 when clustering).
    r : int, optional
        Nyström landmarks (default: the full kernel).
    search : {"mu+nu", "1+1"}, default "mu+nu"
    mu, nu, restarts, patience
        As in :func:`aidopt.api.s2rlsc.solve_s2rlsc` (5, 25, best of 10, n).
    aggregate : int or float, optional
        AID-style aggregated warm start (number or share of clusters).
    method : {"search", "exact"}, default "search"
    mode : {"auto", "semi-supervised", "clustering"}, default "auto"

    Attributes
    ----------
    classes_ : ndarray ``[-1, 1]``
    transduction_ : ndarray of shape (n_samples,)
        -1 / +1 for every training point (the given labels on the labelled ones).
    dual_coef_ : ndarray of shape (n_samples,)
        :math:`c^*` of eq. (12).
    fitness_ : float
        F(transduction_), eq. (11).
    result_ : aidopt.api.s2rlsc.S2RLSCResult
    n_iter_ : int
        Local-search runs (restarts) that ran.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        The column names, when X was a DataFrame with string column names.

    Notes
    -----
    A binary model, with no multi-class form (docs/multiclass.md): the search (or the exact
    MIQP) chooses one label in {-1, +1} per unlabelled point under one class balance
    :math:`b_c`, and with no labels it splits the data into two clusters. Separate binary
    searches would label the unlabelled points independently, with nothing making them agree.
    Labels other than -1 / +1 / 0 / NaN are refused (``labels must be -1 or +1``).

    Not a standard scikit-learn classifier: the labels are -1 / +1 and 0 / NaN marks the
    unlabelled points, at least one of which is required (as :class:`aidopt.S3VMClassifier`).
    scikit-learn's common checks (which fit fully labelled data with arbitrary labels, 0 among
    them) are therefore skipped (``tags._skip_test``); ``tests/unit/test_sklearn_checks.py`` runs
    the checks that need no fit and tests the conventions (features, fitted state, pickling) on
    semi-supervised data.

    Examples
    --------
    >>> import numpy as np
    >>> from aidopt import S2RLSCClassifier
    >>> from aidopt.instances.s2rlsc import gaussian2c, ssl_split
    >>> X, y = gaussian2c(200, 20, seed=0)
    >>> Xtr, ytr, Xte, yte, truth = ssl_split(X, y, l=10, u=90, seed=0)
    >>> clf = S2RLSCClassifier(search="1+1").fit(Xtr, ytr)
    >>> clf.score(Xte, yte) > 0.9
    True
    """

    _options_note = '``aid``, ``feasibility_tol`` and ``r0`` are not used'
    _family = S2RLSC
    #: the kernel function of the fit (a local function): left out of pickles and rebuilt from
    #: ``_kernel_spec`` (:meth:`_BaseEstimator.__getstate__` / :meth:`_restore`)
    _transient = ("_kfun",)
    _sparse_input = True
    _sklearn_checks_skipped = (
        "semi-supervised: y is -1 / +1 on labelled points and 0 / NaN on unlabelled ones, at "
        "least one unlabelled; the common checks fit fully labelled y with arbitrary labels (0 "
        "among them)")

    def fit(self, X, y=None):
        """Fit on labelled and unlabelled points together.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), optional
            -1 / +1 on labelled points, 0 or NaN on unlabelled ones; None: no labels
            (clustering).

        Returns
        -------
        self
        """
        X, y = self._validate_fit(X, y, target=None if y is None else "labels")
        result = solve_s2rlsc(X, y, **self._solve_kwargs())
        # not _after_fit: S2RLSCResult has no history (a local search, not AID iterations)
        self.result_, self.n_iter_ = result, len(result.search["restart_fitness"])
        # the width as used (the default 0.1 s resolved on X): the kernel can be rebuilt
        self._kernel_spec = (self.kernel, result.params["sigma"])
        self._kfun = result.predictor[0]
        self.classes_ = np.array([-1, 1])
        self._record_features(X, int(result.predictor[1].shape[1]))
        self.transduction_ = result.labels.astype(int)
        self.dual_coef_ = result.coef.copy()
        self.fitness_ = float(result.fitness)
        if self.method == "exact" and result.termination is not Termination.CERTIFIED_OPTIMAL:
            warnings.warn(f"S2RLSC exact fit ended {result.termination.value!r} (relative gap "
                          f"{result.gap:.2e}): not proven optimal", ConvergenceWarning, stacklevel=2)
        return self

    def __getstate__(self):
        state = super().__getstate__()  # without _kfun
        result = state.get("result_")
        if result is not None:
            state["result_"] = dataclasses.replace(result, predictor=(None, *result.predictor[1:]))
        return state

    def _restore(self) -> None:
        """The kernel function of the fit, in ``_kfun`` and ``result_.predictor`` (after
        unpickling)."""
        kernel, sigma = self._kernel_spec
        self._kfun = rlsc_kernel(kernel, sigma if kernel == "rbf" else None)
        self.result_.predictor = (self._kfun, *self.result_.predictor[1:])

    def decision_function(self, X) -> np.ndarray:
        """:math:`f(x) = \\sum_i c^*_i k(x_i, x)` (Nyström: :math:`\\tilde k`); > 0 means +1.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        ValueError
            NaN / inf, or other features (count, or names with scikit-learn) than in fit.
        """
        X = self._check_X(X)  # before result_ is read: NotFittedError
        return self.result_.decision_function(X)

    def predict(self, X) -> np.ndarray:
        """Labels -1 / +1 (0 counts as +1)."""
        return np.where(self.decision_function(X) >= 0, 1, -1)  # checks that it is fitted
