r"""Column generation over features for the 1-norm SVM (1.26 / 1.28) on wide data (m >> n).

Notation of :mod:`aidopt.models.lp_svm`: rows ``A`` with labels ``d``, row weights ``c`` (the
sample weights), ``nu`` (the public ``C``), feature weights ``r`` (1: the 1-norm). The LP::

    min  nu sum_k c_k y_k + sum_j r_j s_j   s.t.  d_k (A_k w - gamma) + y_k >= 1,  -s <= w <= s,  y >= 0

has the dual ``max sum_k u_k`` s.t. ``0 <= u_k <= nu c_k``, ``sum_k d_k u_k = 0`` and, with
``v = A'(d * u)``, ``|v_j| <= r_j`` for every feature ``j``. At an optimum most ``w_j`` are 0 when
m >> n (a vertex has at most as many nonzero ``w_j`` as margin rows), so the LP is solved on a
**working set** J' of features, ``w_j = s_j = 0`` outside it:

1. **Restricted LP**: the same model (:func:`aidopt.models.lp_svm.create_instance`) on the
   columns ``A[:, J']`` (CSR columns stay CSR: the model holds their stored entries only), in
   the form the plug-in solves (:class:`~aidopt.decomposition.plugins.svm.SVMProblem`: the dual
   by default, |J'| + 1 rows, the form HiGHS's interior point solves fastest), with the run's
   solver, time left and fallbacks. Its margin duals ``u`` (the dual form's variables) and its
   ``(w_J', b)``.
2. **Pricing**: one sparse product ``v = A'(d * u)`` over *all* m features (``u`` first clipped
   to its box and balanced, exactly as the certificate does). A feature outside J' with
   ``|v_j| > r_j (1 + price_tol)`` is a violated dual row, i.e. a column of the primal with a
   negative reduced cost; the most violated are added, at most ``max(start, |J'|)`` of them per
   round (most violated first).
3. **Stop** when no feature violates, or earlier when the certificate below already holds.

**Why the answer is certified on the original data.** ``(w, gamma, y)`` with ``w`` zero outside
J' and ``y`` its hinge slacks is feasible for the full LP, so its full-data objective E is an
upper bound. ``u`` (clipped to ``0 <= u <= nu c``, the heavier class scaled so that
``sum d u = 0`` holds exactly) divided by ``t = max(1, max_j |v_j| / r_j)`` over **all** m
features is feasible for the full dual, so ``D = sum u / t`` is a lower bound (weak duality).
When no feature violates, ``t <= 1 + price_tol`` and the gap is the restricted LP's own gap plus
at most ``price_tol`` relative. Both are computed on the full data by the SVM certificate of the
direct solve and of AID (:func:`aidopt.decomposition.plugins.svm.certificate`, docs/svm.md), so
``certified_optimal`` means what it means there; every iteration's bound is also that
certificate's, so the table's gap is the true one at each round (Farley's bound).

**Why this is a loop on** :class:`~aidopt.decomposition.run.Run` **and not an AID plug-in.**
AID's contract (:mod:`~aidopt.decomposition.protocol`) aggregates the elements of a partition
into a problem that is a *relaxation* (its optimum F_t is a lower bound, its solution lifts to
every element, the split refines the partition). Fixing the features outside J' at 0 is a
*restriction*: the restricted optimum is an upper bound, nothing lifts to the features outside
(they are not aggregated into anything), and the step that grows J' reads the duals against
all columns, which no partition of the rows or the columns expresses. So column generation is
its own loop on the shared run framework, as LP chunking (:mod:`~aidopt.decomposition.lpc`) and
successive linearization (:mod:`~aidopt.decomposition.sla`) are: the run's clock
(``time_limit`` checked between rounds and passed to every solve; a build stopped at the limit),
its solver calls and fallbacks, Ctrl-C, the iteration table (|J'|, the features added and the
largest violation), model writing, and the result. No extension of the framework was needed.

The infinity-norm SVM is not solved this way: its optimum is dense in ``w`` (docs/svm.md:
on wide random data every ``w_j`` was nonzero, about 90 % of them at ``|w_j| = sigma``), so the
working set would grow to all features. RLP's dual condition is ``v = 0`` (no slack in a
feature's dual row, and the certificate's condition is a residual, not a scaling): see
docs/svm.md.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np
from aidopt.decomposition.run import Column, Run, RunConfig, pause_gc, release, run_scope
from aidopt.models import lp_svm
from scipy import sparse

from aidopt import solvers
from aidopt.numerics.fm import balanced
from aidopt.results import AIDResult, IterationRecord, Termination
from aidopt.solvers import ProblemClass

__all__ = ["solve_l1_colgen", "start_features", "START_MIN", "START_SHARE", "COLUMNS"]

#: the working set starts with at least this many features (all of them when m is smaller)
START_MIN = 50
#: ... and with ``n * START_SHARE`` features when that is more (n: rows with positive weight)
START_SHARE = 0.25

COLUMNS = [
    Column("iter", 5, "d"), Column("|J'|", 8, "d"), Column("added", 7, "d"),
    Column("max viol", 10, ".3e"), Column("E (full data)", 16, ".9g"),
    Column("dual bound", 16, ".9g"), Column("rel gap", 10, ".2e"),
]


def start_features(data, C: float, size: int, weights=None) -> np.ndarray:
    r"""The ``size`` features of the first working set: the largest :math:`|v_j| / r_j` at the
    dual point of the plane ``w = 0``, :math:`u = \nu c` with the heavier class scaled down to
    balance, :math:`v = A'(d \circ u)`. This is the first pricing round started from ``w = 0``
    (with unit weights and balanced classes, the largest entries of :math:`|A'd|`): one sparse
    product, and it ranks the features by how much the hinge at ``w = 0`` pulls on them."""
    u = balanced(C * data.s, data.y)
    score = np.abs(np.asarray(data.X.T @ (u * data.y)).ravel())
    if weights is not None:
        score = score / weights
    size = min(int(size), score.size)
    top = np.argpartition(-score, size - 1)[:size] if size < score.size else np.arange(score.size)
    return np.sort(top)


def solve_l1_colgen(problem, data, config: RunConfig, *, start=None, batch: int | None = None,
                    price_tol: float | None = None) -> AIDResult:
    """The 1-norm SVM of ``problem`` on ``data`` by column generation over features (module
    docstring), certified on the full data.

    Parameters
    ----------
    problem : aidopt.decomposition.SVMProblem
        ``norm="l1"``, free offset; its ``C``, ``feature_weights`` (r), ``form``, solver
        defaults and fallbacks are used.
    data : ClassificationData
        Validated, every sample weight positive (the door leaves zero-weight rows out); X dense
        or CSR (kept as it is).
    config : RunConfig
        The common options; ``solver`` must return duals (the pricing reads them). ``max_iter``
        counts restricted LPs.
    start : int or array-like of int, optional
        The first working set: a number of features (chosen by :func:`start_features`) or the
        feature indices themselves. Default ``max(START_MIN, START_SHARE * n)`` features.
    batch : int, optional
        Most features added per round (most violated first). Default ``max(|start|, |J'|)``: the
        working set at most doubles per round.
    price_tol : float, optional
        A feature violates when ``|v_j| > r_j (1 + price_tol)``. Default ``tol / 10``: what is
        left costs the bound at most that share (module docstring).

    Returns
    -------
    AIDResult
        ``solution``: ``w`` (m; zero outside the working set), ``b``, ``alpha`` (the margin
        duals, one per row) and ``working_set`` (the feature indices of the last restricted LP).
    """
    from aidopt.decomposition.plugins.svm import certificate, gap_floor, refined_l1_certificate

    if getattr(problem, "norm", None) != "l1" or getattr(problem, "bias", "free") != "free":
        raise ValueError("column generation over features solves the 1-norm SVM with a free "
                         "offset (norm='l1'); the infinity-norm optimum is dense in w and RLP's "
                         "dual condition is v = 0 (docs/svm.md)")
    m = data.m
    if batch is not None and not (isinstance(batch, numbers.Integral) and not isinstance(batch, bool)
                                  and batch >= 1):
        raise ValueError(f"batch must be a positive integer, got {batch!r}")
    if price_tol is None:
        price_tol = config.tol / 10
    elif not (isinstance(price_tol, numbers.Real) and not isinstance(price_tol, bool)
              and 0 <= price_tol < 1):
        raise ValueError(f"price_tol must be a number in [0, 1), got {price_tol!r}")
    C, r = problem.C, problem.feature_weights
    if r is not None and r.shape != (m,):
        raise ValueError(f"feature_weights has {r.shape[0]} entries, X has {m} columns")
    if start is None:
        start = max(START_MIN, math.ceil(START_SHARE * data.n))
    if isinstance(start, numbers.Integral) and not isinstance(start, bool):
        if start < 1:
            raise ValueError(f"start must be a positive number of features or feature indices, "
                             f"got {start!r}")
        J = start_features(data, C, start, r)
        how = f"the {J.size} largest |A'(d u)| / r at w = 0"
    else:
        J = np.asarray(start)
        if J.ndim != 1 or J.size == 0 or not np.issubdtype(J.dtype, np.integer) \
                or J.min() < 0 or J.max() >= m:
            raise ValueError(f"start must be a positive number of features or a non-empty 1-d "
                             f"array of feature indices in [0, {m}), got {start!r}")
        J = np.unique(J)
        how = f"{J.size} given features"
    if config.solver is None:
        config = dataclasses.replace(config, solver=solvers.DEFAULT_SOLVER)
    if config.solver in solvers.NATIVE_METHODS:
        raise ValueError(f"column generation solves its restricted LPs with an LP solver; "
                         f"{config.solver!r} is one of aidopt's own methods (not for the 1-norm "
                         "LP): use highs, clarabel, gurobi, cplex or xpress")
    spec = solvers.SOLVERS.get(config.solver)
    if spec is not None and not spec.duals:
        raise ValueError(f"column generation prices features with the restricted LP's duals, "
                         f"which {config.solver!r} does not return: use highs, clarabel, gurobi, "
                         "cplex or xpress")
    dims = {**problem.dimensions(data)}
    with run_scope(config):
        run = Run(problem.name, ProblemClass.LP, config, defaults=problem.solver_defaults,
                  dimensions=dims, fallbacks=problem.fallbacks,
                  mode=(f"column generation over features ({problem.form} form of the restricted "
                        f"LP; start: {how}; X {'CSR' if sparse.issparse(data.X) else 'dense'})"))
        problem.configure(run.spec)
        loop = _ColumnGeneration(run, problem, data, J, batch, price_tol, C, r)
        run.intro()
        run.header(COLUMNS)
        with run.guard():
            loop.iterate(certificate)
        if run.interrupted and loop.stop is None:
            loop.stop = (Termination.INTERRUPTED, "interrupted (Ctrl-C): the best iterate so far")
        return loop.finish(certificate, refined_l1_certificate, gap_floor(data, C, "l1"))


class _ColumnGeneration:
    """The loop's state: the working set, the best point (smallest E), the best bound."""

    def __init__(self, run, problem, data, J, batch, price_tol, C, r):
        self.run, self.problem, self.data = run, problem, data
        self.J, self.batch, self.price_tol, self.C, self.r = J, batch, price_tol, C, r
        self.first = J.size
        self.history: list[IterationRecord] = []
        self.stop: tuple[Termination, str] | None = None
        self.best = None        # (E, w, b, t) of the smallest full-data objective
        self.bound = None       # (D, alpha, t) of the largest certified-feasible bound
        self.last = None        # the last iteration's certificate
        self.condition = False  # no feature violated at the last pricing

    def _restricted(self, J):
        """``build(form)`` of the restricted LP on the columns J."""
        data, problem = self.data, self.problem
        XJ = data.X[:, J]
        rJ = None if self.r is None else self.r[J]

        def build(form):
            return lp_svm.create_instance(XJ, data.y, data.s, self.C, "l1",
                                          form=form or problem.form, r=rJ)
        return build

    def iterate(self, certificate) -> None:
        run, data, config = self.run, self.data, self.run.config
        t = 0
        while True:
            if run.time_up():
                self.stop = (Termination.TIME_LIMIT, f"{run.elapsed():.1f} s, before the "
                             f"restricted LP of round {t + 1}")
                return
            t += 1
            J = self.J
            try:
                with pause_gc():
                    model, outcome = run.solve_with_fallbacks(self._restricted(J), need_duals=True)
            except solvers.TimeLimitReached as exc:
                self.stop = (Termination.TIME_LIMIT, str(exc))
                return
            except solvers.SolverError as exc:
                stop, text = run.error(exc)
                self.stop = (Termination(stop), text)
                return
            if not outcome.optimal:
                release(model)
                stop, text = run.failure(outcome)
                self.stop = (Termination(stop), f"round {t}: {text}")
                return
            wJ, b, u = lp_svm.solution_from(model, outcome.duals)
            release(model)
            if wJ is None or b is None or u is None:
                raise solvers.SolverError("the restricted LP's solve returned no duals")
            w = np.zeros(data.m)
            w[J] = wJ
            with run.timed("price"):
                alpha = balanced(np.clip(u, 0.0, self.C * data.s), data.y)
                v = np.asarray(data.X.T @ (alpha * data.y)).ravel()
                ratio = np.abs(v) if self.r is None else np.abs(v) / self.r
                outside = np.ones(data.m, dtype=bool)
                outside[J] = False
                excess = np.where(outside, ratio - 1.0, -np.inf)
                worst = float(excess.max(initial=-np.inf))
                violated = np.flatnonzero(excess > self.price_tol)
            with run.timed("certificate"):
                cert = certificate(data, w, b, u, C=self.C, norm="l1", tol=config.tol,
                                   feasibility_tol=config.feasibility_tol, method="colgen_duals",
                                   weights=self.r)
            E, D = cert.primal_objective, cert.dual_objective
            self.last = cert
            if self.best is None or E < self.best[0]:
                self.best = (E, w, b, J.copy())
            feasible = all(cert.residuals[k] <= cert.feasibility_tol for k in cert.checked)
            if feasible and (self.bound is None or D > self.bound[0]):
                self.bound = (D, u)
            cap = self.batch if self.batch is not None else max(self.first, J.size)
            add = violated
            if violated.size > cap:  # the most violated first
                add = violated[np.argpartition(-excess[violated], cap - 1)[:cap]]
            lower = -math.inf if self.bound is None else self.bound[0]
            gap = (self.best[0] - lower) / max(abs(self.best[0]), np.finfo(float).tiny)
            self.history.append(IterationRecord(
                t=t, n_clusters=int(J.size), r_t=J.size / data.m, F_t=float(outcome.objective),
                E_t=E, E_best=self.best[0], lower_bound=lower, gap=gap, n_split=int(add.size),
                seconds=run.take_seconds(), solver=outcome.solver,
                info={"features": int(J.size), "added": int(add.size),
                      "violated": int(violated.size), "max_violation": max(worst, 0.0)}))
            run.row(t, int(J.size), int(add.size), max(worst, 0.0), E, D, gap)
            if violated.size == 0:
                self.condition = True
                self.stop = (Termination.CERTIFIED_OPTIMAL,
                             f"no feature violates |v_j| <= r_j (1 + {self.price_tol:.1e}) after "
                             f"{t} restricted LP(s); largest violation {max(worst, 0.0):.2e}")
                return
            if cert.certified:
                self.stop = (Termination.CERTIFIED_OPTIMAL,
                             f"relative gap {cert.relative_gap:.2e} <= tol after {t} restricted "
                             f"LP(s), {violated.size} feature(s) still violating by at most "
                             f"{worst:.2e}")
                return
            if run.interrupted:
                return
            self.J = np.union1d(J, add)
            if config.max_iter is not None and t >= config.max_iter:
                self.stop = (Termination.ITERATION_LIMIT, f"{t} restricted LPs")
                return

    def finish(self, certificate, refine, floor) -> AIDResult:
        run, data, config = self.run, self.data, self.run.config
        termination, message = self.stop or (Termination.SOLVER_FAILURE, "stopped")
        run.dimensions.update(rounds=len(self.history),
                              working_set=int(self.J.size) if self.best is None else
                              int(self.best[3].size))
        if self.best is None:
            if termination == Termination.CERTIFIED_OPTIMAL:
                termination = Termination.SOLVER_FAILURE
            return run.result(termination, message, history=self.history, aid=False, floor=floor)
        E, w, b, J = self.best
        u = self.last.dual_values["alpha"] if self.bound is None else self.bound[1]
        with run.guard():
            cert = certificate(data, w, b, u, C=self.C, norm="l1", tol=config.tol,
                               feasibility_tol=config.feasibility_tol, method="colgen_duals",
                               weights=self.r)
            if not cert.certified:
                cert = refine(cert, lambda a, method: certificate(
                    data, w, b, a, C=self.C, norm="l1", tol=config.tol,
                    feasibility_tol=config.feasibility_tol, method=method, weights=self.r),
                    data, w, C=self.C, weights=self.r)
        cert, agree = run.check_objective(cert, E, floor)
        if cert.certified:
            termination = Termination.CERTIFIED_OPTIMAL
            message = f"{message}; certified on the full data (relative gap {cert.relative_gap:.2e})"
        elif termination == Termination.CERTIFIED_OPTIMAL:  # the loop's reason, not a passed check
            termination = Termination.GAP_TOLERANCE
            message = (f"{message}, but the answer is not certified on the full data (relative gap "
                       f"{cert.relative_gap:.2e} > tol {config.tol:g} or a dual residual above "
                       f"feasibility_tol): not shown optimal")
        feasible = all(cert.residuals[k] <= cert.feasibility_tol for k in cert.checked)
        lower = min(cert.dual_objective, E) if feasible and agree else -math.inf
        message += (f"; column generation over features: {J.size} of {data.m} features in the "
                    f"last restricted LP, {int(np.count_nonzero(w))} nonzero")
        alpha = cert.dual_values["alpha"]
        return run.result(termination, message, objective=E, lower=lower,
                          solution={"w": w, "b": b, "alpha": alpha, "working_set": J},
                          certificate=cert, history=self.history, aid=False, floor=floor)
