r"""A small real plug-in that can be told to misbehave: the weighted L1 location on a line.

.. math::  \min_\beta \sum_i s_i |y_i - \beta|

(the weighted median). Aggregated: centroids :math:`\bar y_k` with weights :math:`W_k`; a
relaxation by the triangle inequality, so the aggregated LP optimum is a proven lower bound.
Split: a cluster with :math:`y_i - \beta` of both signs is cut at :math:`\beta`; when none is
mixed, E = F and :math:`\beta` is optimal. Certificate: the aggregated duals lifted to
:math:`u_i = s_i v_k / W_k` satisfy :math:`\sum u_i = 0, |u_i| \le s_i` and :math:`y^\top u` is a
lower bound.

Everything the tests need to drive the driver's paths is *configuration* of :class:`FakeLocation`
(knobs in the constructor) plus a :class:`Script` owned by the test, which counts hook calls and
fires faults (an exception, a sleep, a NaN) at a given call. The plug-in object itself keeps no
state between runs: the conformance check runs on it too.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pyomo.environ as pyo

from aidopt.decomposition.partition import Partition
from aidopt.decomposition.protocol import AIDProblem, Lifted, Split
from aidopt.results import Certificate
from aidopt.solvers import ProblemClass, SolverError, TimeLimitReached

__all__ = ["FakeLocation", "LineData", "Script", "line_data", "weighted_median_objective"]

SIGN_TOL = 1e-9


@dataclass
class LineData:
    """Points ``y`` (n,) on a line with positive weights ``s`` (n,)."""

    y: np.ndarray
    s: np.ndarray

    @property
    def n(self) -> int:
        return int(self.y.size)

    @property
    def m(self) -> int:
        return 1


def line_data(n: int = 120, seed: int = 0) -> LineData:
    rng = np.random.default_rng(seed)
    y = np.round(rng.normal(size=n) * 10.0 + rng.standard_cauchy(n), 6)
    return LineData(y, rng.integers(1, 5, size=n).astype(float))


def weighted_median_objective(data: LineData) -> float:
    """The optimum, computed independently: E at a weighted median."""
    order = np.argsort(data.y)
    cum = np.cumsum(data.s[order])
    beta = data.y[order][np.searchsorted(cum, 0.5 * cum[-1])]
    return float(data.s @ np.abs(data.y - beta))


@dataclass
class Script:
    """Test-owned call counter and fault injector.

    ``faults[(hook, call)]`` fires at the ``call``-th call (1-based) of ``hook``: an exception
    class or instance is raised, ``("sleep", seconds)`` sleeps, a callable is called, ``"nan"``
    makes ``evaluate`` return NaN. ``calls`` lists ``(hook, detail)`` in call order.
    """

    faults: dict = field(default_factory=dict)
    calls: list = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)

    def hit(self, hook: str, detail=None):
        self.counts[hook] += 1
        self.calls.append((hook, detail))
        action = self.faults.get((hook, self.counts[hook]))
        if action is None:
            return None
        if isinstance(action, tuple) and action[0] == "sleep":
            time.sleep(action[1])
            return None
        if isinstance(action, type) and issubclass(action, BaseException) or isinstance(action, BaseException):
            raise action
        if callable(action):
            action()
            return None
        return action

    def named(self, hook: str) -> list:
        return [detail for name, detail in self.calls if name == hook]


@dataclass
class AggregatedLine:
    y: np.ndarray
    w: np.ndarray


@dataclass
class LineState:
    v: np.ndarray
    residual: np.ndarray
    eps: float


class FakeLocation(AIDProblem):
    """The weighted L1 location on a line, with knobs for every driver path.

    Parameters
    ----------
    script : Script, optional
        Counts calls and fires faults (owned by the test).
    r0 : float
        Initial aggregation rate.
    sample_solve : bool
        ``initial_partition`` solves the LP on a sample with ``solve`` (so a time limit reached
        there raises :class:`TimeLimitReached`).
    bound : bool
        ``lower_bound`` returns the aggregated optimum (``outcome.bound``); ``False``: ``None``.
    certify_mode : {"duals", "dual_lp", "none"}
        Lift the solver's duals; solve the aggregated dual LP with ``solve``; or certify nothing.
    broken_form : str or None
        The form whose model is infeasible (``"primal"``: the configured one; ``None``: none).
    fallback_list : list of (solver, form)
        What ``fallbacks`` returns.
    infeasible_at : int or None
        The aggregated build (1-based call of ``build``) that gets an infeasible model.
    trial : bool
        ``build`` returns a *trial* model whose beta is fixed at a wrong value, and ``rebuild``
        replaces it by the real one (the pattern of a big-M verified after the solve).
    keep_incumbent : bool
        ``on_nonoptimal`` accepts a time-limited solve's incumbent.
    hard_at : int or None
        The aggregated build (1-based call of ``build``) that gets an independent block of
        binaries (a market-split MILP, Cornuejols & Dawande 1999) in the objective: HiGHS finds
        incumbents at once but cannot close the gap within seconds, so a real time limit stops
        that solve with a feasible point. The plug-in is then a MILP.
    verdict : callable, optional
        ``final_termination`` returns ``verdict(stop, certificate, best)``.
    """

    name = "fake_location"
    problem_class = ProblemClass.LP
    needs_duals = True
    element = "points"

    def __init__(self, script: Script | None = None, *, r0: float = 0.1, sample_solve: bool = True,
                 bound: bool = True, certify_mode: str = "duals", broken_form: str | None = None,
                 fallback_list=(), infeasible_at: int | None = None, trial: bool = False,
                 keep_incumbent: bool = False, verdict=None, hard_at: int | None = None):
        if (infeasible_at is not None or hard_at is not None) and script is None:
            raise ValueError("infeasible_at and hard_at count build calls: give a Script")
        self.script = script
        self.r0 = r0
        self.sample_solve = sample_solve
        self.bound = bound
        self.certify_mode = certify_mode
        self.broken_form = broken_form
        self.fallback_list = list(fallback_list)
        self.infeasible_at = infeasible_at
        self.trial = trial
        self.keep_incumbent = keep_incumbent
        self.verdict = verdict
        self.hard_at = hard_at
        if hard_at is not None:
            self.problem_class = ProblemClass.MILP

    def _hit(self, hook, detail=None):
        return None if self.script is None else self.script.hit(hook, detail)

    # ------------------------------------------------------------------ setup
    def configure(self, solver_spec) -> None:
        self._hit("configure", None if solver_spec is None else solver_spec.name)

    def default_r0(self, size, data) -> float:
        return self.r0

    def min_clusters(self, data) -> int:
        return 2

    def initial_partition(self, data, n_clusters, rng, solve) -> Partition:
        self._hit("initial_partition", n_clusters)
        if n_clusters >= data.n:
            return self.trivial_partition(data)
        beta0 = float(np.median(data.y))
        if self.sample_solve:
            idx = np.sort(rng.choice(data.n, size=max(2, data.n // 4), replace=False))
            model = _line_model(data.y[idx], data.s[idx])
            outcome = solve(model, need_duals=True)
            if outcome.status == "time_limit":
                raise TimeLimitReached("time limit reached in the sample LP")
            if not outcome.optimal:
                raise SolverError(f"sample LP failed: {outcome.status}")
            beta0 = float(model.beta.value)
        # clusters that straddle nothing around beta0, but mix everything else: a few iterations
        above = data.y > beta0
        labels = np.where(above, 0, n_clusters) + rng.integers(0, max(1, n_clusters // 2), size=data.n)
        return Partition.from_labels(labels)

    # ------------------------------------------------------------------ one iteration
    def aggregate(self, data, partition, previous=None) -> AggregatedLine:
        self._hit("aggregate", None if previous is None else previous.t)
        W, (ybar,) = partition.weighted_means(data.s, data.y)
        return AggregatedLine(ybar, W)

    def build(self, aggregated, form=None):
        self._hit("build", form)
        n_build = 0 if self.script is None else self.script.counts["build"]
        form = form or "primal"
        model = _line_model(aggregated.y, aggregated.w)
        if form == self.broken_form or (self.infeasible_at is not None and n_build == self.infeasible_at):
            model.broken = pyo.Constraint(expr=model.beta >= float(aggregated.y.max()) + 1.0)
            model.broken2 = pyo.Constraint(expr=model.beta <= float(aggregated.y.min()) - 1.0)
        if self.hard_at is not None and n_build == self.hard_at:
            _add_market_split(model, rows=5, cols=40, seed=0, weight=100.0)
        if self.trial and form == "primal":
            model.beta.fix(float(aggregated.y.max()) + 100.0)  # a wrong trial model
            model.name = "trial"
        return model

    def rebuild(self, model, outcome, aggregated):
        self._hit("rebuild", (model.name, str(outcome.status)))
        if self.trial and model.name == "trial":
            return _line_model(aggregated.y, aggregated.w)
        return None

    def fallbacks(self, solver):
        self._hit("fallbacks", solver)
        return list(self.fallback_list)

    def on_nonoptimal(self, outcome) -> bool:
        self._hit("on_nonoptimal", str(outcome.status))
        return self.keep_incumbent and outcome.status == "time_limit"

    def lift(self, model, outcome, partition, aggregated, data) -> Lifted:
        self._hit("lift", model.name)
        beta = float(model.beta.value)
        v = None
        if outcome.duals is not None:
            v = np.array([outcome.duals.get(model.fit[k], 0.0) for k in model.K])
        residual = data.y - beta
        eps = SIGN_TOL * max(1.0, float(np.abs(data.y).max()))
        return Lifted({"beta": np.array([beta])}, LineState(v, residual, eps),
                      {"beta": beta})

    def lower_bound(self, outcome, partition, data, lifted=None):
        self._hit("lower_bound")
        return outcome.bound if self.bound else None

    def evaluate(self, data, lifted) -> float:
        if self._hit("evaluate", float(lifted.solution["beta"][0])) == "nan":
            return math.nan
        return float(data.s @ np.abs(lifted.state.residual))

    def split(self, partition, data, lifted) -> Split:
        self._hit("split")
        return Split(*partition.split_mixed(lifted.state.residual, lifted.state.eps))

    # ------------------------------------------------------------------ the end
    def certify(self, data, best, *, bound, solve, tol, feasibility_tol, history) -> Certificate:
        self._hit("certify", None if bound is None else bound.t)
        beta = float(best.lifted.solution["beta"][0])
        primal = float(data.s @ np.abs(data.y - beta))
        if self.certify_mode == "none":
            return Certificate("none", False, primal, -math.inf, math.inf, {}, tol, feasibility_tol)
        agg, partition = bound.aggregated, bound.partition
        v, method = bound.lifted.state.v, "solver_duals"
        if self.certify_mode == "dual_lp" or v is None:
            model = _dual_model(agg.y, agg.w)
            outcome = solve(model, need_duals=False)
            if outcome.status == "time_limit":
                raise TimeLimitReached("time limit reached in the certificate's dual LP")
            if not outcome.optimal:
                raise SolverError(f"dual LP failed: {outcome.status}")
            v, method = np.array([model.v[k].value for k in model.K]), "dual_lp"
        u = data.s * (v / agg.w)[partition.labels]
        dual = float(data.y @ u)
        stationarity = abs(float(u.sum())) / max(1.0, float(data.s.sum()))
        box = float(np.maximum(np.abs(u) - data.s, 0.0).max() / data.s.max())
        gap = (primal - dual) / max(1.0, abs(primal))
        residuals = {"stationarity": stationarity, "box": box}
        return Certificate(method, bool(stationarity <= feasibility_tol and box <= feasibility_tol
                                        and gap <= tol),
                           primal, dual, float(gap), residuals, tol, feasibility_tol,
                           sign_condition=None if best.split is None else best.split.holds,
                           checked=list(residuals), dual_values={"u": u})

    def final_termination(self, stop, certificate, best):
        self._hit("final_termination", (stop, certificate, best))
        if self.verdict is not None:
            return self.verdict(stop, certificate, best)
        return super().final_termination(stop, certificate, best)


def _line_model(y, w) -> pyo.ConcreteModel:
    """min sum_k w_k (e+_k + e-_k)  s.t.  beta + e+_k - e-_k = y_k (dual of fit[k]: v_k)."""
    model = pyo.ConcreteModel(name="line")
    model.K = pyo.RangeSet(0, len(y) - 1)
    model.beta = pyo.Var()
    model.ep = pyo.Var(model.K, within=pyo.NonNegativeReals)
    model.em = pyo.Var(model.K, within=pyo.NonNegativeReals)
    model.fit = pyo.Constraint(model.K, rule=lambda m, k: m.beta + m.ep[k] - m.em[k] == float(y[k]))
    model.obj = pyo.Objective(expr=sum(float(w[k]) * (model.ep[k] + model.em[k]) for k in model.K))
    return model


def _dual_model(y, w) -> pyo.ConcreteModel:
    """max sum_k y_k v_k  s.t.  sum_k v_k = 0, -w_k <= v_k <= w_k."""
    model = pyo.ConcreteModel(name="line_dual")
    model.K = pyo.RangeSet(0, len(y) - 1)
    model.v = pyo.Var(model.K, bounds=lambda m, k: (-float(w[k]), float(w[k])))
    model.balance = pyo.Constraint(expr=sum(model.v[k] for k in model.K) == 0)
    model.obj = pyo.Objective(expr=sum(float(y[k]) * model.v[k] for k in model.K), sense=pyo.maximize)
    return model


def _add_market_split(model, *, rows: int, cols: int, seed: int, weight: float) -> None:
    """min weight * sum |a_i z - d_i| over binaries z, with a_ij in 0..99 and d_i = sum_j a_ij / 2:
    hard to prove optimal by branch and bound, trivially feasible."""
    rng = np.random.default_rng(seed)
    A = rng.integers(0, 100, size=(rows, cols))
    d = A.sum(axis=1) // 2
    model.MI = pyo.RangeSet(0, rows - 1)
    model.MJ = pyo.RangeSet(0, cols - 1)
    model.z = pyo.Var(model.MJ, within=pyo.Binary)
    model.sp = pyo.Var(model.MI, within=pyo.NonNegativeReals)
    model.sm = pyo.Var(model.MI, within=pyo.NonNegativeReals)
    model.market = pyo.Constraint(model.MI, rule=lambda m, i: sum(
        int(A[i, j]) * m.z[j] for j in m.MJ) + m.sp[i] - m.sm[i] == int(d[i]))
    model.obj.expr = model.obj.expr + weight * sum(model.sp[i] + model.sm[i] for i in model.MI)
