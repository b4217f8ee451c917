"""The labelling MIQP (models/s2rlsc.py): its objective is F at every labelling, and its
optimum (SCIP, Gurobi within its licence) is never above a local-search result."""

from __future__ import annotations

import itertools

import numpy as np
import pyomo.environ as pyo
import pytest
from aidopt.models import s2rlsc as model

from aidopt import solvers
from aidopt.api.s2rlsc import solve_miqp, solve_s2rlsc
from aidopt.numerics.kernels import rlsc_kernel as kernel_function
from aidopt.numerics.rlsc import Band, RLSCFitness, local_search, nystrom_fitness
from aidopt.results import Termination
from tests.s2rlsc._helpers import d_of, instance, random_labels


def _have(name):
    return solvers.availability(name) in ("full", "limited")


needs_scip = pytest.mark.skipif(not _have("scip"), reason="SCIP not installed: pip install 'aidopt[scip]'")
needs_gurobi = pytest.mark.skipif(not _have("gurobi"), reason="gurobipy not installed")
MIQP_SOLVERS = [pytest.param("scip", marks=needs_scip), pytest.param("gurobi", marks=needs_gurobi)]


@pytest.mark.parametrize("clustering", [False, True])
def test_miqp_objective_equals_F_at_random_labellings(clustering):
    Xtr, ytr, *_ = instance(l=5, u=15, d=6, seed=21)
    if clustering:
        ytr = np.zeros_like(ytr)
    fit = RLSCFitness.from_kernel(Xtr @ Xtr.T, d_of(ytr, 0.6), 0.8)
    free = np.flatnonzero(ytr == 0)
    m = model.create_instance(fit.matrix(), ytr, free, 0, free.size)
    rng = np.random.default_rng(0)
    for _ in range(6):
        y = random_labels(rng, ytr, free)
        for q in m.U:
            m.z[q].value = 1.0 if y[free[q]] > 0 else 0.0
        assert pyo.value(m.objective) == pytest.approx(fit(y), abs=1e-10)
    # z = 0 (all free labels -1) is the constant c0: no constant is dropped
    Q, p, c0 = model.miqp_data(fit.matrix(), ytr, free)
    y0 = ytr.copy()
    y0[free] = -1.0
    assert c0 == pytest.approx(fit(y0), abs=1e-12)
    assert np.linalg.eigvalsh(Q).min() > 0  # Q = 4 M_UU positive definite: a convex MIQP


def test_band_rows_are_the_count_range():
    Xtr, ytr, *_ = instance(l=4, u=10, d=4, seed=22)
    fit = RLSCFitness.from_kernel(Xtr @ Xtr.T, d_of(ytr), 1.0)
    free = np.flatnonzero(ytr == 0)
    m = model.create_instance(fit.matrix(), ytr, free, 3, 6)
    assert (pyo.value(m.lower.lower), pyo.value(m.upper.upper)) == (3, 6)


@pytest.mark.parametrize("solver", MIQP_SOLVERS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_optimum_is_below_every_local_search_and_matches_enumeration(solver, seed):
    Xtr, ytr, *_ = instance(l=4, u=12, d=30, seed=30 + seed)
    fit = RLSCFitness.from_kernel(Xtr @ Xtr.T, d_of(ytr), 1.0)
    free = np.flatnonzero(ytr == 0)
    band = Band.of(12, 0.5, 0.15)
    y_mip, F_mip, out = solve_miqp(fit, ytr, free, band, solver=solver)
    assert out.status == "optimal"
    assert F_mip == pytest.approx(out.objective, abs=1e-7)  # the constant c0 is in the model
    assert out.bound <= F_mip + 1e-7
    # brute force over the band (12 free labels: 4096 labellings)
    best = np.inf
    for bits in itertools.product((-1.0, 1.0), repeat=12):
        if band.contains(sum(b > 0 for b in bits)):
            y = ytr.copy()
            y[free] = bits
            best = min(best, fit(y))
    assert F_mip == pytest.approx(best, abs=1e-9)
    for search in ("1+1", "mu+nu"):
        for k in range(3):
            ls = local_search(fit, ytr, free, band, search=search, restarts=1, seed=k)
            assert F_mip <= ls.fitness + 1e-9


@pytest.mark.parametrize("solver", MIQP_SOLVERS)
def test_solve_s2rlsc_exact_is_certified_and_not_above_the_search(solver):
    Xtr, ytr, *_ = instance(l=5, u=18, d=40, seed=40)
    search = solve_s2rlsc(Xtr, ytr, restarts=2, search="1+1", log=False)
    exact = solve_s2rlsc(Xtr, ytr, restarts=2, search="1+1", method="exact", solver=solver,
                         log=False)
    assert exact.termination is Termination.CERTIFIED_OPTIMAL and exact.certified
    assert exact.fitness <= search.fitness + 1e-12
    assert exact.bound <= exact.fitness + 1e-9 and exact.gap <= 1e-6
    assert exact.mip["solver"] == solver
    free = np.flatnonzero(ytr == 0)
    assert exact.band.k_lo <= (exact.labels[free] > 0).sum() <= exact.band.k_hi


@needs_scip
def test_exact_with_nystrom_and_clustering():
    Xtr, ytr, *_ = instance(l=4, u=14, d=5, seed=41)
    kfun = kernel_function("rbf", sigma=3.0)
    res = solve_s2rlsc(Xtr, np.zeros_like(ytr), kernel="rbf", sigma=3.0, r=8, method="exact",
                       solver="scip", log=False, restarts=2)
    assert res.mode == "clustering" and res.certified
    fit, *_ = nystrom_fitness(kfun, Xtr, np.full(18, np.sqrt(1 / 18)), 1.0, res.params["landmarks"])
    assert res.fitness == pytest.approx(fit(res.labels), abs=1e-12)
    # the Nystrom prediction extends the training decision values
    assert np.allclose(res.decision_function(Xtr), res.decision, atol=1e-8)


@needs_gurobi
def test_gurobi_licence_refusal_falls_back_to_scip(monkeypatch):
    if not _have("scip"):
        pytest.skip("needs SCIP for the fallback")
    Xtr, ytr, *_ = instance(l=4, u=10, d=5, seed=42)
    fit = RLSCFitness.from_kernel(Xtr @ Xtr.T, d_of(ytr), 1.0)
    free = np.flatnonzero(ytr == 0)
    real = solvers.solve_model

    def refuse(model_, name, **kw):
        if name == "gurobi":
            raise solvers.LicenceLimitError("pretend the pip licence is too small")
        return real(model_, name, **kw)

    monkeypatch.setattr(solvers, "solve_model", refuse)
    y, F, out = solve_miqp(fit, ytr, free, Band.of(10, 0.5, 0.2), solver="gurobi")
    assert out.solver == "scip" and out.status == "optimal"


@pytest.mark.skipif(not (_have("scip") or _have("gurobi")), reason="no MIQP solver installed")
def test_the_exact_run_writes_its_model_through_the_run_framework(tmp_path):
    """One ``write_models`` for every algorithm: NNN_<model name>.lp/.mps in solve order (the
    MIQP used to overwrite a fixed name)."""
    Xtr, ytr, *_ = instance(l=4, u=10, d=3, seed=0)
    solve_s2rlsc(Xtr, ytr, method="exact", restarts=2, write_models=str(tmp_path), log=False)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 2 and names[0].startswith("001_") and names[0].endswith(".lp")


def test_the_summary_goes_to_the_log_not_to_print(capsys):
    """With a user's logging configuration the summary reaches their handler (the run's log),
    and nothing is printed past it."""
    import logging

    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("aidopt")
    logger.addHandler(handler)
    old = logger.level
    logger.setLevel(logging.INFO)
    try:
        Xtr, ytr, *_ = instance(l=4, u=10, d=3, seed=0)
        res = solve_s2rlsc(Xtr, ytr, restarts=2, log=True)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old)
    assert any(res.summary() == r.getMessage() for r in records)
    assert capsys.readouterr().out == ""


@needs_scip
def test_scip_bound_is_not_above_the_optimum_of_a_small_objective():
    """F of order 0.07, labellings 2e-8 apart: SCIP held its quadratic objective (moved into a
    constraint) to feastol 1e-6, absolute at this scale, and reported a "bound" 3e-7 relative
    above the enumerated optimum; the quadratic options (numerics/feastol 1e-9) make it valid."""
    rng = np.random.default_rng(13072)
    u, l = int(rng.integers(4, 11)), int(rng.integers(2, 6))
    X = rng.normal(size=(l + u, int(rng.integers(1, 5))))
    y = np.zeros(l + u)
    y[:l] = np.where(rng.random(l) < 0.5, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    res = solve_s2rlsc(X, y, method="exact", solver="scip", kernel="rbf", sigma=0.3, lam=0.01,
                       lam_prime=0.1, restarts=1, eps=0.3, log=False)
    fit = RLSCFitness.from_kernel(kernel_function("rbf", sigma=0.3)(X, X),
                                  np.where(y != 0, np.sqrt(1 / l), np.sqrt(0.1 / u)), 0.01)
    free = np.flatnonzero(y == 0)
    best = np.inf
    for bits in itertools.product((-1.0, 1.0), repeat=u):
        if res.band.contains(sum(b > 0 for b in bits)):
            labels = y.copy()
            labels[free] = bits
            best = min(best, fit(labels))
    assert res.bound <= best * (1 + 1e-9)
    assert res.certified and res.fitness == pytest.approx(best, rel=1e-9)


def test_quadratic_options_only_for_a_quadratic_objective():
    from aidopt.decomposition.mip import mip_options

    assert mip_options("scip", solvers.ProblemClass.MIQP)["numerics/feastol"] == 1e-9
    assert "numerics/feastol" not in mip_options("scip", solvers.ProblemClass.MILP)
    assert mip_options("highs", solvers.ProblemClass.MILP) == {"mip_rel_gap": 1e-6}


# ----------------------------------------------------------------------------- Ctrl-C
def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


def _exact_after_ctrl_c(monkeypatch, target, name):
    """``solve_s2rlsc(method="exact")`` with ``target.name`` replaced by Ctrl-C, and the same
    search without the MIQP (same seed: the same labels)."""
    Xtr, ytr, *_ = instance(l=5, u=18, d=40, seed=40)
    search = solve_s2rlsc(Xtr, ytr, restarts=2, search="1+1", log=False)
    monkeypatch.setattr(target, name, _interrupt)
    try:
        exact = solve_s2rlsc(Xtr, ytr, restarts=2, search="1+1", method="exact", solver="scip",
                             log=False)
    except KeyboardInterrupt:  # never abort the test session
        pytest.fail("Ctrl-C escaped solve_s2rlsc")
    return search, exact


def _assert_search_labels(search, exact):
    assert exact.termination is Termination.INTERRUPTED and not exact.certified
    assert exact.found_by == "search" and exact.fitness == search.fitness
    np.testing.assert_array_equal(exact.labels, search.labels)
    assert exact.bound == -np.inf and "interrupted" in exact.message
    assert np.isfinite(exact.decision).all()  # a usable predictor


@needs_scip
def test_ctrl_c_while_the_miqp_is_built_returns_the_search_labels(monkeypatch):
    """Ctrl-C after the search, while the MIQP model is built: the search's labels come back
    with termination ``interrupted`` (it raised KeyboardInterrupt)."""
    _assert_search_labels(*_exact_after_ctrl_c(monkeypatch, model, "create_instance"))


@needs_scip
def test_ctrl_c_in_the_miqp_solver_call_returns_the_search_labels(monkeypatch):
    _assert_search_labels(*_exact_after_ctrl_c(monkeypatch, solvers, "solve_model"))


@needs_scip
def test_an_miqp_its_solver_reports_interrupted_ends_interrupted(monkeypatch):
    """A MIP solver that handles Ctrl-C itself returns status ``interrupted`` without a
    labelling: termination ``interrupted`` with the search's labels (it raised SolverError)."""
    Xtr, ytr, *_ = instance(l=5, u=18, d=40, seed=40)
    search = solve_s2rlsc(Xtr, ytr, restarts=2, search="1+1", log=False)

    def interrupted(model, solver, **kwargs):
        return solvers.SolveOutcome(solvers.SolveStatus.INTERRUPTED, None, None, False, solver,
                                    "", 0.1, "user interrupt")

    monkeypatch.setattr(solvers, "solve_model", interrupted)
    exact = solve_s2rlsc(Xtr, ytr, restarts=2, search="1+1", method="exact", solver="scip",
                         log=False)
    _assert_search_labels(search, exact)
    assert exact.mip["status"] == "interrupted"
