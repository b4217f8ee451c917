"""The Musicant et al. aggregate-output MIQP / MILP against a brute-force optimum.

For tiny data every labelling d in {0,1}^n is enumerated; with d fixed the count deviations are
constants and what remains is a convex SVM-type program in (w, b), solved here without aidopt
(Clarabel's own API for the QP, scipy's linprog for the 1-norm LP). The MIP answers of
``solve_aggregate_outputs`` must match the minimum over all labellings.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from aidopt.decomposition.plugins.aggout import best_labels, objective
from scipy.optimize import linprog

import aidopt
from aidopt import solvers
from aidopt.data.validate import as_aggregate_data

clarabel = pytest.importorskip("clarabel")

REL = 1e-5


def _have(name):
    return solvers.availability(name) in ("full", "limited")


needs_scip = pytest.mark.skipif(not _have("scip"), reason="SCIP not installed")
needs_gurobi = pytest.mark.skipif(not _have("gurobi"), reason="gurobipy not installed")
#: the tests that read the l2 enumerations (cached in _BRUTE) run on one xdist worker
l2_enumerations = pytest.mark.xdist_group("aggout_l2_enumerations")


# --------------------------------------------------------------------------- independent solvers
def svm_l2(X, s, C):
    """min 1/2 ||w||^2 + C sum_i max(0, 1 - s_i (w x_i - b)) via Clarabel's native API."""
    n, m = X.shape
    nv = m + 1 + n  # w, b, xi
    P = sp.csc_matrix(sp.block_diag([sp.eye(m), sp.csc_matrix((1 + n, 1 + n))]))
    q = np.concatenate([np.zeros(m + 1), C * np.ones(n)])
    # -s_i x_i w + s_i b - xi_i <= -1 ;  -xi_i <= 0
    A1 = sp.hstack([sp.csc_matrix(-s[:, None] * X), sp.csc_matrix(s[:, None]), -sp.eye(n)])
    A2 = sp.hstack([sp.csc_matrix((n, m + 1)), -sp.eye(n)])
    A = sp.csc_matrix(sp.vstack([A1, A2]))
    rhs = np.concatenate([-np.ones(n), np.zeros(n)])
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = 1e-11
    settings.tol_gap_rel = 1e-11
    settings.tol_feas = 1e-11
    sol = clarabel.DefaultSolver(P, q, A, rhs, [clarabel.NonnegativeConeT(2 * n)], settings).solve()
    assert str(sol.status) in ("Solved", "AlmostSolved"), sol.status
    x = np.asarray(sol.x)
    w, b = x[:m], x[m]
    # the exact primal value at the returned point (slacks recomputed)
    return 0.5 * float(w @ w) + C * float(np.maximum(0.0, 1.0 - s * (X @ w - b)).sum()), nv


def svm_l1(X, s, C):
    """min ||w||_1 + C sum_i max(0, 1 - s_i (w x_i - b)) as an LP (scipy linprog)."""
    n, m = X.shape
    # variables: w+ (m), w- (m), b, xi (n)
    c = np.concatenate([np.ones(2 * m), [0.0], C * np.ones(n)])
    SX = s[:, None] * X
    A = np.hstack([-SX, SX, s[:, None], -np.eye(n)])
    bounds = [(0, None)] * (2 * m) + [(None, None)] + [(0, None)] * n
    res = linprog(c, A_ub=A, b_ub=-np.ones(n), bounds=bounds, method="highs")
    assert res.status == 0, res.message
    return float(res.fun)


def brute_force(X, collection, counts, C, D, norm):
    """min over d in {0,1}^n of [convex program given d] + D sum_c |y_c - sum_{i in c} d_i|."""
    n = X.shape[0]
    best = math.inf
    for bits in itertools.product((0, 1), repeat=n):
        d = np.array(bits)
        s = 2.0 * d - 1.0
        dev = D * float(np.abs(counts - np.bincount(collection, weights=d, minlength=counts.size)).sum())
        if dev >= best:
            continue  # the convex part is >= 0
        val = svm_l2(X, s, C)[0] if norm == "l2" else svm_l1(X, s, C)
        best = min(best, val + dev)
    return best


def labelling_loss_enumerated(f, collection, counts, C, D):
    """min over d of C sum_i h_i(d_i) + D sum_c |y_c - sum d|, enumerated."""
    h1, h0 = np.maximum(0.0, 1.0 - f), np.maximum(0.0, 1.0 + f)
    best = math.inf
    for bits in itertools.product((0, 1), repeat=f.size):
        d = np.array(bits, dtype=float)
        hinge = C * float(np.where(d > 0, h1, h0).sum())
        dev = D * float(np.abs(counts - np.bincount(collection, weights=d, minlength=counts.size)).sum())
        best = min(best, hinge + dev)
    return best


def tiny(seed):
    """<= 10 rows, 2 features, 2-3 collections, with counts of a noisy linear truth."""
    rng = np.random.default_rng(seed)
    sizes = [(3, 3, 2), (4, 4), (3, 2, 3), (4, 3, 2)][seed % 4]
    n = sum(sizes)
    X = rng.normal(size=(n, 2)) * np.array([1.0, 2.0]) + np.array([0.3, -0.2])
    truth = (X[:, 0] + 0.4 * X[:, 1] + 0.7 * rng.normal(size=n) > 0).astype(int)
    collection = np.repeat(np.arange(len(sizes)), sizes)
    counts = np.bincount(collection, weights=truth).astype(int)
    return X, collection, counts


CASES = [(0, 1.0, 1.0), (1, 1.0, 1.0), (2, 0.5, 2.0), (3, 2.0, 0.3)]
CASE_IDS = [f"seed{s}-C{c}-D{d}" for s, c, d in CASES]

_BRUTE = {}


def brute(seed, C, D, norm):
    key = (seed, C, D, norm)
    if key not in _BRUTE:
        X, collection, counts = tiny(seed)
        _BRUTE[key] = brute_force(X, collection, counts, C, D, norm)
    return _BRUTE[key]


def _rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


# --------------------------------------------------------------------------- the tests
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_best_labels_matches_enumeration(seed):
    """best_labels (the exact lift of a hyperplane) = enumeration of all labellings."""
    rng = np.random.default_rng(100 + seed)
    X, collection, counts = tiny(seed)
    for C, D in [(1.0, 1.0), (0.5, 2.0), (2.0, 0.1), (1.0, 0.0)]:
        for _ in range(3):
            w, b = rng.normal(size=2) * 1.5, float(rng.normal())
            f = X @ w - b
            loss, d = best_labels(f, collection, counts, C, D)
            expect = labelling_loss_enumerated(f, collection, counts, C, D)
            assert loss == pytest.approx(expect, rel=1e-12, abs=1e-12)
            # the labelling returned attains the loss
            assert set(np.unique(d)) <= {0.0, 1.0}
            h = np.where(d > 0, np.maximum(0, 1 - f), np.maximum(0, 1 + f))
            dev = np.abs(counts - np.bincount(collection, weights=d, minlength=counts.size)).sum()
            assert C * h.sum() + D * dev == pytest.approx(loss, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_objective_function_matches_enumeration(norm):
    X, collection, counts = tiny(0)
    data = as_aggregate_data(X, collection, counts)
    w, b = np.array([0.7, -0.4]), 0.25
    E, d = objective(data, w, b, 1.3, 0.8, norm)
    reg = 0.5 * float(w @ w) if norm == "l2" else float(np.abs(w).sum())
    assert E == pytest.approx(reg + labelling_loss_enumerated(X @ w - b, collection, counts, 1.3, 0.8),
                              rel=1e-12)


def _check_direct(res, X, collection, counts, C, D, norm, opt):
    assert res.termination == "certified_optimal", (res.termination, res.message
                                                    if hasattr(res, "message") else "")
    assert res.certificate.certified
    assert res.certificate.method == "mip_bound"
    assert 0.0 <= res.certificate.relative_gap <= 1e-6
    assert res.gap <= 1e-6
    assert _rel(res.objective, opt) <= REL, (res.objective, opt)
    w, b = np.asarray(res.solution["w"], dtype=float), float(res.solution["b"])
    f = X @ w - b
    np.testing.assert_allclose(res.solution["decision"], f, rtol=1e-9, atol=1e-9)
    # the returned hyperplane attains the optimum (independent re-evaluation)
    reg = 0.5 * float(w @ w) if norm == "l2" else float(np.abs(w).sum())
    E_wb = reg + labelling_loss_enumerated(f, collection, counts, C, D)
    assert _rel(E_wb, opt) <= REL, (E_wb, opt)
    # the returned labels are a best labelling of that hyperplane
    d = np.asarray(res.solution["labels"], dtype=float)
    assert set(np.unique(d)) <= {0.0, 1.0}
    h = np.where(d > 0, np.maximum(0, 1 - f), np.maximum(0, 1 + f))
    dev = np.abs(counts - np.bincount(collection, weights=d, minlength=counts.size)).sum()
    assert _rel(reg + C * h.sum() + D * dev, opt) <= REL
    # the certificate's bound is a bound of the brute-force optimum
    assert res.certificate.dual_objective <= opt * (1 + REL) + REL


def _check_aid(res, X, collection, counts, C, D, norm, opt):
    assert res.objective >= opt - REL * max(1.0, abs(opt)), (res.objective, opt)
    w, b = np.asarray(res.solution["w"], dtype=float), float(res.solution["b"])
    data = as_aggregate_data(X, collection, counts)
    E, _ = objective(data, w, b, C, D, norm)
    if res.termination == "cluster_optimal":
        assert _rel(res.objective, E) <= 1e-9, (res.objective, E)
    else:
        assert res.termination in ("certified_optimal", "no_improvement", "iteration_limit",
                                   "time_limit", "cluster_optimal"), res.termination
    # whatever the termination, the reported objective is that of the returned hyperplane
    assert res.objective == pytest.approx(E, rel=1e-7, abs=1e-9)
    if res.termination == "cluster_optimal":
        # the claim: optimal among labellings constant on the final clusters; check it by
        # enumerating those labellings (the final partition is result.partition, or the
        # collections themselves when there is one cluster per collection)
        if res.partition is not None:
            clusters = np.unique(np.asarray(res.partition.labels), return_inverse=True)[1].reshape(-1)
        else:
            assert res.history[-1].n_clusters == counts.size
            clusters = collection
        # a cluster never spans two collections
        for k in np.unique(clusters):
            assert np.unique(collection[clusters == k]).size == 1
        restricted = math.inf
        for bits in itertools.product((0, 1), repeat=int(clusters.max()) + 1):
            d = np.array(bits, dtype=float)[clusters]
            dev = D * float(np.abs(counts - np.bincount(collection, weights=d,
                                                        minlength=counts.size)).sum())
            s = 2.0 * d - 1.0
            val = svm_l2(X, s, C)[0] if norm == "l2" else svm_l1(X, s, C)
            restricted = min(restricted, val + dev)
        assert res.objective <= restricted * (1 + REL) + REL, (res.objective, restricted)


@l2_enumerations
@needs_scip
@pytest.mark.parametrize(("seed", "C", "D"), CASES, ids=CASE_IDS)
def test_miqp_l2_scip_matches_bruteforce(seed, C, D):
    X, collection, counts = tiny(seed)
    opt = brute(seed, C, D, "l2")
    res = aidopt.solve_aggregate_outputs(X, collection, counts, method="miqp", C=C, D=D, norm="l2",
                                         aid=False, solver="scip", log=False)
    _check_direct(res, X, collection, counts, C, D, "l2", opt)
    res = aidopt.solve_aggregate_outputs(X, collection, counts, method="miqp", C=C, D=D, norm="l2",
                                         aid=True, solver="scip", log=False)
    _check_aid(res, X, collection, counts, C, D, "l2", opt)


@l2_enumerations
@needs_gurobi
def test_miqp_l2_gurobi_matches_bruteforce():
    seed, C, D = CASES[2]
    X, collection, counts = tiny(seed)
    opt = brute(seed, C, D, "l2")
    res = aidopt.solve_aggregate_outputs(X, collection, counts, method="miqp", C=C, D=D, norm="l2",
                                         aid=False, solver="gurobi", log=False)
    _check_direct(res, X, collection, counts, C, D, "l2", opt)


@pytest.mark.parametrize(("seed", "C", "D"), CASES, ids=CASE_IDS)
def test_miqp_l1_highs_matches_bruteforce(seed, C, D):
    X, collection, counts = tiny(seed)
    opt = brute(seed, C, D, "l1")
    res = aidopt.solve_aggregate_outputs(X, collection, counts, method="miqp", C=C, D=D, norm="l1",
                                         aid=False, solver="highs", log=False)
    _check_direct(res, X, collection, counts, C, D, "l1", opt)
    res = aidopt.solve_aggregate_outputs(X, collection, counts, method="miqp", C=C, D=D, norm="l1",
                                         aid=True, solver="highs", log=False)
    _check_aid(res, X, collection, counts, C, D, "l1", opt)


@l2_enumerations
def test_bruteforce_is_not_trivial():
    """Guard on the fixtures: the optimum is not reached by the trivial hyperplanes w = 0 and
    the count deviations matter (otherwise the comparisons above prove little)."""
    for seed, C, D in CASES:
        X, collection, counts = tiny(seed)
        opt = brute(seed, C, D, "l2")
        trivial = min(labelling_loss_enumerated(np.full(X.shape[0], -b), collection, counts, C, D)
                      for b in np.linspace(-3, 3, 61))
        assert opt < trivial - 1e-3, (seed, opt, trivial)


@needs_scip
@pytest.mark.parametrize("seed", [0, 3])
def test_formulation_variants_have_the_brute_force_optimum(seed):
    """Every formulation of aidopt.bench.aggout (indicator, count bounds, symmetry rows, all)
    solves to the enumerated optimum, on data with two identical rows in one collection (the
    symmetry rows bind) and U a feasible point's value (the count bounds use it)."""
    from aidopt.decomposition.plugins.aggout import best_labels
    from aidopt.instances.aggout import AggregateSplit

    from aidopt.bench.aggout import FORMULATIONS, formulation_model

    X, collection, counts = tiny(seed)
    X = X.copy()
    X[1] = X[0]  # rows 0 and 1 share collection 0
    C, D = 1.0, 1.0
    expected = brute_force(X, collection, counts, C, D, "l2")
    U = best_labels(np.full(X.shape[0], -1.0), collection, counts, C, D)[0]  # w = 0, b = 1
    split = AggregateSplit(X, collection, counts, np.zeros(X.shape[0]), X[:0], np.zeros(0))
    for variant in FORMULATIONS:
        model = formulation_model(split, variant, U, C=C, D=D)
        model.optimize()
        assert model.getStatus() == "optimal", variant
        assert _rel(model.getObjVal(), expected) < REL, (variant, model.getObjVal(), expected)
    with pytest.raises(ValueError, match="variant"):
        formulation_model(split, "perspective", U)
