"""SOR as AID's aggregated solver: the modified SVM (1.35) by AID (``bias="regularized"``).

Checked against independent Clarabel solves of (1.35) (``_ref.primal_135``), against the same AID
run with Clarabel on the Pyomo model, and the row-order / shrinking variants of ``sor_linear``.
"""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.decomposition import ModifiedSVMProblem, RunConfig, solve
from aidopt.decomposition.protocol import Iterate

import aidopt
from aidopt.data.validate import as_classification_data
from aidopt.numerics.sor import sor_linear
from aidopt.results import Termination

from ._ref import data, primal_135

SEEDS = range(20)


def _instance(seed, n=None):
    A, d = data(900 + seed, m=n if n is not None else 300 + 40 * (seed % 5), n=2 + seed % 5)
    return A, d


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("order", "shrinking"), [("cyclic", True), ("random", False),
                                                   ("random", True)])
def test_order_and_shrinking_reach_the_clarabel_optimum(seed, order, shrinking):
    A, d = _instance(seed)
    nu = [0.05, 0.3, 1.0, 3.0][seed % 4]
    weights = None if seed % 2 else 1.0 + (np.arange(len(d)) % 3)
    _, _, p_ref = primal_135(A, d, nu, weights)
    res = sor_linear(A, d, nu, tol=0.0, gap_tol=1e-9, order=order, shrinking=shrinking,
                     weights=weights, max_sweeps=200_000, seed=seed)
    assert np.all(res.u >= 0) and np.all(res.u <= nu * (1.0 if weights is None else weights))
    assert res.rel_gap <= 1e-9 * max(1.0, res.primal) / res.primal + 1e-15
    assert res.dual <= p_ref * (1 + 1e-8) and res.primal >= p_ref * (1 - 1e-8)
    assert res.primal == pytest.approx(p_ref, rel=1e-7)


def test_shrinking_is_not_the_seed_order_but_the_same_problem():
    """Same optimum, fewer row visits: the shrunk sweeps are cheap ones."""
    A, d = _instance(3, n=2000)
    plain = sor_linear(A, d, 1.0, tol=0.0, gap_tol=1e-8, max_sweeps=100_000)
    shrunk = sor_linear(A, d, 1.0, tol=0.0, gap_tol=1e-8, max_sweeps=100_000, shrinking=True)
    assert shrunk.primal == pytest.approx(plain.primal, rel=1e-7)


@pytest.mark.parametrize("kwargs", [{"order": "backwards"}, {"shrinking": "yes"}])
def test_bad_order_or_shrinking(kwargs):
    A, d = _instance(0)
    with pytest.raises(ValueError, match="order|shrinking"):
        sor_linear(A, d, 1.0, **kwargs)


def test_random_order_needs_memory(tmp_path):
    A, d = _instance(0)
    np.save(tmp_path / "A.npy", A)
    with pytest.raises(ValueError, match="in memory"):
        sor_linear(tmp_path / "A.npy", d, 1.0, order="random")
    streamed = sor_linear(tmp_path / "A.npy", d, 1.0, tol=1e-8)
    assert streamed.primal == pytest.approx(sor_linear(A, d, 1.0, tol=1e-8).primal, rel=1e-10)


# --------------------------------------------------------------------------- AID with SOR inside
@pytest.mark.parametrize("seed", range(8))
def test_aid_sor_is_certified_and_equals_clarabel(seed):
    A, d = _instance(seed, n=1500)
    C = [0.05, 0.3, 1.0, 3.0][seed % 4]
    s = None if seed % 2 else 1.0 + (np.arange(len(d)) % 4)
    _, _, p_ref = primal_135(A, d, C, s)
    res = aidopt.solve_svm(A, d, C=C, bias="regularized", solver="sor", sample_weight=s, log=False, r0=0.01)
    # SOR solves the aggregated problems; one past its sweep budget goes to Clarabel
    assert res.history[0].solver == "sor"
    assert {h.solver for h in res.history} <= {"sor", "clarabel"}
    assert res.termination is Termination.CERTIFIED_OPTIMAL, res.summary()
    assert res.certificate.relative_gap <= 1e-6
    assert "balance |sum alpha y|" not in res.certificate.residuals  # no equality in (1.37)
    assert res.objective == pytest.approx(p_ref, rel=2e-6)
    assert res.lower_bound <= p_ref * (1 + 1e-8)
    for h in res.history:  # every proven bound below the optimum, every E above it
        assert h.lower_bound <= p_ref * (1 + 1e-8)
        assert h.E_t >= p_ref * (1 - 1e-8)
    w, b = res.solution["w"], res.solution["b"]
    xi = np.maximum(0.0, 1.0 - d * (A @ w + b))
    weights = np.ones(len(d)) if s is None else s
    assert res.objective == pytest.approx(0.5 * (w @ w + b * b) + C * (weights @ xi), rel=1e-12)
    pyomo = aidopt.solve_svm(A, d, C=C, bias="regularized", sample_weight=s, log=False, r0=0.01,
                             solver="clarabel")
    assert pyomo.termination is Termination.CERTIFIED_OPTIMAL
    assert pyomo.objective == pytest.approx(res.objective, rel=2e-6)


def test_aid_sor_splits_and_warm_starts():
    """Several iterations; each aggregated SOR solve starts from the previous (w, b) exactly."""
    A, d = _instance(1, n=4000)
    problem = ModifiedSVMProblem(C=0.5)
    data_ = as_classification_data(A, d)
    res = solve(problem, data_, RunConfig(solver="sor", log=False, r0=0.002))
    assert res.termination is Termination.CERTIFIED_OPTIMAL
    assert len(res.history) >= 3 and sum(h.n_split for h in res.history) >= 2
    # warm start: u0 of the next partition reproduces the lifted (w, b) of the previous iterate
    problem.configure(aidopt.decomposition.run.BUILTIN_METHODS["sor"])
    part, _ = problem.initial_partition(data_, 10, np.random.default_rng(0), None)
    agg = problem.aggregate(data_, part)
    sol, outcome = problem.solve_native("sor", agg, None, part, tol=1e-6, time_limit=None, options={})
    lifted = problem.lift(sol, outcome, part, agg, data_)
    split = problem.split(part, data_, lifted)
    assert split.partition is not None
    prev = Iterate(t=1, partition=part, aggregated=agg, lifted=lifted, F_t=outcome.objective,
                   bound=outcome.bound, E_t=problem.evaluate(data_, lifted), split=split, solver="sor")
    new = split.partition
    agg2 = problem.aggregate(data_, new)
    start, _ = problem.solve_native("sor", agg2, prev, new, tol=1e-6, time_limit=None,
                                    options={"max_sweeps": 1, "gap_tol": 0.0})
    u0 = np.bincount(new.labels, weights=lifted.solution["alpha"], minlength=new.n_clusters)
    assert np.all(u0 <= 0.5 * agg2.w * (1 + 1e-12))
    H = agg2.y[:, None] * np.hstack([agg2.X, -np.ones((len(agg2.y), 1))])
    np.testing.assert_allclose(H.T @ u0, np.append(lifted.solution["w"], -lifted.solution["b"]),
                               atol=1e-9)
    assert start.sweeps == 1


def test_aid_sor_bound_holds_at_an_unconverged_solve():
    """One sweep per aggregated solve and no fallback: the run stops (not optimal), but the
    stopped solve's point is kept and its dual value still bounds the optimum."""
    A, d = _instance(2, n=1500)
    _, _, p_ref = primal_135(A, d, 1.0)
    res = aidopt.solve_svm(A, d, C=1.0, bias="regularized", solver="sor", log=False, r0=0.01, fallback=False,
                           raise_on_failure=False, solver_options={"max_sweeps": 1})
    assert res.termination is Termination.SOLVER_FAILURE
    assert "incumbent of the stopped solve" in res.message
    assert np.isfinite(res.objective) and res.objective >= p_ref * (1 - 1e-9)
    assert res.lower_bound <= p_ref * (1 + 1e-9)


def test_aid_sor_falls_back_to_clarabel_when_sor_misses_its_gap():
    A, d = _instance(2, n=1500)
    _, _, p_ref = primal_135(A, d, 1.0)
    res = aidopt.solve_svm(A, d, C=1.0, bias="regularized", solver="sor", log=False, r0=0.01,
                           solver_options={"max_sweeps": 1})
    assert res.termination is Termination.CERTIFIED_OPTIMAL, res.summary()
    assert "retried with clarabel" in res.message
    assert res.objective == pytest.approx(p_ref, rel=2e-6)


def test_aid_sor_options_and_writing(tmp_path):
    A, d = _instance(0, n=600)
    with pytest.raises(ValueError, match="solver_options"):
        aidopt.solve_svm(A, d, bias="regularized", solver="sor", log=False, solver_options={"omegaa": 1.5})
    with pytest.raises(ValueError, match="omega"):
        aidopt.solve_svm(A, d, bias="regularized", solver="sor", log=False, solver_options={"omega": 2.5})
    res = aidopt.solve_svm(A, d, bias="regularized", solver="sor", log=False, write_models=tmp_path, max_iter=1)
    written = sorted(p.name for p in tmp_path.iterdir())
    assert any(n.endswith("svm_l2rb_dual.lp") for n in written), written
    assert res.history


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"bias": "both"}, "bias"),
    ({"bias": "regularized", "norm": "l1"}, "norm='l2'"),
    ({"bias": "regularized", "kernel": "rbf"}, "kernel"),
])
def test_bias_validation(kwargs, match):
    A, d = _instance(0, n=100)
    with pytest.raises(ValueError, match=match):
        aidopt.solve_svm(A, d, log=False, **kwargs)


def test_sor_is_refused_by_a_plugin_that_does_not_offer_it():
    A, d = _instance(0, n=100)
    with pytest.raises(ValueError, match="native"):
        aidopt.solve_svm(A, d, log=False, solver="sor")


def test_the_default_aggregated_solver_of_the_modified_svm_is_fm():
    """fm is the measured default (0.30x SOR's time at 1e5 x 20); it certifies the same optimum."""
    A, d = _instance(1, n=1500)
    _, _, p_ref = primal_135(A, d, 1.0)
    res = aidopt.solve_svm(A, d, C=1.0, bias="regularized", log=False)
    assert res.history[0].solver == "fm"
    assert res.termination is Termination.CERTIFIED_OPTIMAL
    assert res.objective == pytest.approx(p_ref, rel=2e-6)
