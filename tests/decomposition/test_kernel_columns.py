"""Kernel AID's column machinery: the warm-started SMO (``aidopt.numerics.smo``) against the independent
primal QP of test_fm, the on-demand mean kernels (``decomposition/mean_kernel.py``) against
kernels computed here directly, and the column generation over clusters against the whole
aggregated dual."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from aidopt.decomposition.partition import Partition
from aidopt.decomposition.plugins import mean_kernel
from aidopt.decomposition.plugins.kernel_svm import KernelSVMProblem
from aidopt.decomposition.plugins.mean_kernel import KernelSums, MeanKernel

import aidopt
from aidopt.data.validate import as_classification_data
from aidopt.numerics.fm import ferris_munson_kernel
from aidopt.numerics.kernels import svc_kernel as kernel_function
from aidopt.numerics.smo import _pairs, smo

from .test_fm import ROUNDING_LIMITED, case, reference, svm_rows


# ------------------------------------------------------------------------------------- smo
@pytest.mark.parametrize("seed", range(24))
def test_smo_matches_the_reference(seed):
    """SMO on Q = D_y X X' D_y for the 24 degenerate instances of test_fm: its dual point is in
    the box and balanced, its value a valid bound; when it reports optimal, its plane is as good
    as the reference's within the gap it reports."""
    X, y, u = case(seed)
    H = y[:, None] * X
    res = smo(H @ H.T, y, u, tol=1e-9)
    ref = reference(X, y, u, "free")
    scale = abs(ref)
    a = res.alpha
    assert np.all(a >= 0) and np.all(a <= u) and abs(float(a @ y)) <= 1e-12 * max(1.0, a.sum())
    g = H.T @ a
    dual = float(a.sum()) - 0.5 * float(g @ g)
    assert dual == pytest.approx(res.dual, rel=1e-9, abs=1e-12 * scale)
    assert dual <= ref + 1e-10 * scale  # a valid bound at any status
    assert res.status in ("optimal", "stalled", "iteration_limit")
    limit = ROUNDING_LIMITED.get(seed % 8, 0.0)
    if res.status == "optimal":
        assert res.gap <= 1e-9
        assert res.objective <= ref + max(1e-9, limit) * scale
    assert (res.status == "optimal") == (res.gap <= 1e-9)


def test_smo_solves_most_degenerate_instances():
    """How many of the 24 instances SMO finishes alone (AID hands the rest to fm): the
    well-scaled kinds all; hard margins (C = 1e3) and units of 1e3 may crawl."""
    done = 0
    for seed in range(24):
        X, y, u = case(seed)
        H = y[:, None] * X
        done += smo(H @ H.T, y, u, tol=1e-9).status == "optimal"
    assert done >= 14  # 15 here


@pytest.mark.parametrize("seed", [0, 6, 8, 11, 18])
def test_smo_warm_start_is_feasible_and_fast(seed):
    """From a solution's alpha, SMO stops at once; from a perturbed one it returns to the same
    optimum in fewer pair updates than from zero."""
    X, y, u = case(seed)
    Q = (y[:, None] * X) @ (y[:, None] * X).T
    cold = smo(Q, y, u, tol=1e-9)
    assert cold.status == "optimal"
    again = smo(Q, y, u, cold.alpha, tol=1e-9)
    assert again.iterations == 0 and again.gap <= 1e-9
    rng = np.random.default_rng(seed)
    start = np.clip(cold.alpha * rng.uniform(0.9, 1.1, size=y.size), 0, u)  # unbalanced, in box
    warm = smo(Q, y, u, start, tol=1e-9)
    assert warm.status == "optimal"
    assert warm.objective == pytest.approx(cold.objective, rel=2e-9)
    assert warm.iterations <= cold.iterations


def test_smo_limits_and_validation():
    X, y, u = case(0)
    Q = (y[:, None] * X) @ (y[:, None] * X).T
    res = smo(Q, y, u, tol=1e-14, max_iter=3)
    assert res.status == "iteration_limit" and res.iterations == 3
    assert np.all(res.alpha >= 0) and np.all(res.alpha <= u)
    with pytest.raises(ValueError, match="both classes"):
        smo(Q, np.ones_like(y), u)
    with pytest.raises(ValueError, match="K x K"):
        smo(Q[:, :-1], y, u)
    with pytest.raises(ValueError, match="u > 0"):
        smo(Q, y, -u)
    # the compiled pair loop checks the one argument its modulo would divide by
    alpha, grad = np.zeros(y.size), -np.ones(y.size)
    with pytest.raises(ValueError, match="shrink_every"):
        _pairs(np.ascontiguousarray(Q), y, u, alpha, grad, 10, 0, 0.0)
    assert _pairs(np.ascontiguousarray(Q), y, u, alpha, grad, 10, 5, 0.0)[0] > 0


# ----------------------------------------------------------------------------- mean kernels
def direct(X, s, labels, kfun):
    """H (n x K) and Kbar (K x K) computed from the full n x n kernel."""
    K = labels.max() + 1
    A = np.zeros((K, X.shape[0]))
    A[labels, np.arange(X.shape[0])] = s
    W = A.sum(axis=1)
    G = kfun(X, X) @ A.T
    return G / W, (A @ G) / np.outer(W, W)


@pytest.mark.parametrize("kernel,max_columns", [("rbf", None), ("poly", None), ("linear", None),
                                                ("rbf", 5), ("rbf", 20), ("poly", 9)])
def test_mean_kernels_equal_the_direct_ones_through_refinements(kernel, max_columns):
    """Columns computed directly, as a parent minus its smaller child, and cluster sums
    inherited from the previous partition all equal the kernel computed here at once, over
    four refinements in which columns are asked for in pieces (and released slots reused) —
    also when at most ``max_columns`` columns may be held (the least recently used are
    dropped and recomputed; a request for more than that many exceeds it)."""
    rng = np.random.default_rng(1)
    n = 300
    X = rng.normal(size=(n, 4))
    s = rng.uniform(0.5, 2.0, size=n)
    gamma = 0.3
    kfun = kernel_function(kernel, gamma, 3, 1.0)
    sums = KernelSums(X, s, kfun, gamma if kernel == "rbf" else None, max_columns=max_columns)
    partition = Partition.from_labels(rng.integers(0, 12, size=n))
    view = MeanKernel(sums, partition)
    for _ in range(5):
        K = partition.n_clusters
        H, Kbar = direct(X, s, partition.labels, kfun)
        some = np.sort(rng.choice(K, size=max(2, K // 2), replace=False))
        scale = np.abs(Kbar).max()
        assert np.allclose(view.kbar(some), Kbar[:, some], rtol=1e-12, atol=1e-12 * scale)
        signs = np.where(rng.random(some.size) < 0.5, 1.0, -1.0)
        block = view.kbar_block(some, signs)
        assert np.allclose(block, signs[:, None] * Kbar[np.ix_(some, some)] * signs,
                           rtol=1e-12, atol=1e-12 * scale)
        assert np.array_equal(block, block.T)
        v = rng.normal(size=some.size)
        assert np.allclose(view.kbar_dot(some, v), Kbar[:, some] @ v, atol=1e-11 * scale * K)
        assert np.allclose(view.H_dot(some, v), H[:, some] @ v, atol=1e-11 * scale * K)
        everything = np.arange(K)
        assert np.allclose(view.H(everything), H, rtol=1e-12, atol=1e-12 * np.abs(H).max())
        # refine: split a third of the clusters by a random row group
        split = rng.random(K) < 0.35
        group = (split[partition.labels] & (rng.random(n) < 0.4)).astype(np.int64)
        partition = partition.refine(group)
        view = MeanKernel(sums, partition, view)
    assert sums.free or sums.used <= 2 * n  # parents' columns were released and reused
    if max_columns is None:
        assert sums.dropped == 0
    else:
        assert sums.dropped > 0


def test_dropping_columns_keeps_those_of_the_request():
    """With room for three columns, asking for a parent's two children and then for other
    clusters drops the least recently used columns only: each answer equals the direct one."""
    rng = np.random.default_rng(3)
    n = 120
    X, s = rng.normal(size=(n, 3)), np.ones(n)
    kfun = kernel_function("rbf", 0.4, 3, 1.0)
    sums = KernelSums(X, s, kfun, 0.4, max_columns=3)
    partition = Partition.from_labels(rng.integers(0, 6, size=n))
    view = MeanKernel(sums, partition)
    view.H([0, 1, 2])
    child = partition.refine(((partition.labels == 0) & (rng.random(n) < 0.5)).astype(np.int64))
    view = MeanKernel(sums, child, view)
    H, _ = direct(X, s, child.labels, kfun)
    for ks in ([0, 6], [3, 4, 5], [1], [0, 2, 6], [5]):
        assert np.allclose(view.H(ks), H[:, ks], rtol=1e-12, atol=1e-12)
    assert sums.dropped > 0
    with pytest.raises(ValueError, match="max_columns"):
        KernelSums(X, s, kfun, 0.4, max_columns=0)


def test_row_ranges_in_threads_give_the_same_kernel_products():
    """Past 8192 rows H_dot runs in row ranges on the worker threads; its products equal the
    mean kernels computed here cluster by cluster."""
    rng = np.random.default_rng(4)
    n = 9000
    X, s = rng.normal(size=(n, 3)), rng.uniform(0.5, 2.0, size=n)
    kfun = kernel_function("rbf", 0.5, 3, 1.0)
    partition = Partition.from_labels(rng.integers(0, 40, size=n))
    view = MeanKernel(KernelSums(X, s, kfun, 0.5), partition)
    some = np.array([0, 3, 17, 39])
    v = rng.normal(size=some.size)
    H = np.column_stack([kfun(X, X[partition.members(k)]) @ s[partition.members(k)]
                         / s[partition.members(k)].sum() for k in some])
    assert np.allclose(view.H_dot(some, v), H @ v, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("m", [1, 63, 64, 65, 200, 1031, 2500])
def test_tiles_symmetrised_in_ranges_equal_the_average_with_the_transpose(m):
    """Each range of items takes two column tiles (one from each end): every entry is averaged
    exactly once, whatever the ranges."""
    A = np.random.default_rng(m).normal(size=(m, m))
    expected = 0.5 * (A + A.T)
    tiles = -(-m // mean_kernel._TILE)
    mean_kernel._by_ranges(mean_kernel._symmetrise_tiles, (tiles + 1) // 2, A, tiles, grain=1)
    assert np.array_equal(A, expected)


@pytest.mark.parametrize("count", [0, 1, 3, 4, 5, 7, 8, 9, 16, 19])
def test_grouped_column_loops_equal_numpy(count):
    """The column loops that take several columns per pass (eight for the products, four for
    the cluster sums) and the rest one by one give numpy's answer for every remainder, on any
    row or column range."""
    rng = np.random.default_rng(count)
    n, K = 301, 7
    G = np.asfortranarray(rng.normal(size=(n, 40)))
    slots = rng.choice(40, size=count, replace=False).astype(np.int64)
    v, s = rng.normal(size=count), rng.random(n)
    labels = rng.integers(0, K, size=n).astype(np.int64)
    out = rng.normal(size=n)
    expected = out.copy()
    expected[17:250] += G[17:250][:, slots] @ v
    mean_kernel._columns_dot(G, slots, v, out, 17, 250)
    assert np.allclose(out, expected, rtol=1e-13, atol=1e-13)
    sums = np.full((K, count), np.nan, order="F")
    lo, hi = min(1, count), max(min(1, count), count - 1)
    mean_kernel._cluster_sums_range(G, slots, labels, s, sums, lo, hi)
    direct = np.stack([np.bincount(labels, weights=s * G[:, q], minlength=K) for q in slots],
                      axis=1) if count else np.empty((K, 0))
    assert np.allclose(sums[:, lo:hi], direct[:, lo:hi], rtol=1e-13, atol=1e-13)
    outside = np.r_[0:lo, hi:count]
    assert np.isnan(sums[:, outside]).all()  # columns outside the range are not touched


def test_the_compiled_loops_refuse_a_wrong_layout_or_index_type():
    """The compiled loops read raw memory: an array in the wrong order or an index array of
    another integer type is refused with an error, never read as something else."""
    G, out = np.ones((10, 4), order="F"), np.zeros(10)
    mean_kernel._columns_dot(G, np.arange(4, dtype=np.int64), np.ones(4), out, 0, 10)
    assert np.array_equal(out, np.full(10, 4.0))
    with pytest.raises(ValueError, match="Fortran contiguous"):
        mean_kernel._columns_dot(np.ones((10, 4)), np.arange(4, dtype=np.int64), np.ones(4),
                                 out, 0, 10)
    with pytest.raises(ValueError, match="dtype mismatch"):
        mean_kernel._columns_dot(G, np.arange(4, dtype=np.int32), np.ones(4), out, 0, 10)
    assert np.array_equal(out, np.full(10, 4.0))  # untouched by the refused calls


def test_a_kernel_solve_does_not_start_numba():
    """Kernel AID's loops and its SMO are compiled at install: a fresh process's first kernel
    solve never initialises numba's typing registries (0.24-0.37 s measured, more than
    LIBSVM's whole fit at 10^4 rows; docs/design.md). Checked in a fresh interpreter, since
    other tests of this session may have started numba already."""
    code = (
        "import sys, numpy as np, aidopt\n"
        "rng = np.random.default_rng(0)\n"
        "X = np.r_[rng.normal(-1, 1, (150, 3)), rng.normal(1, 1, (150, 3))]\n"
        "y = np.r_[-np.ones(150), np.ones(150)]\n"
        "res = aidopt.solve_svm(X, y, C=1.0, kernel='rbf', log=False, tol=1e-6)\n"
        "assert res.certified, res.termination\n"
        "print('numba.np.arraymath' in sys.modules)\n"
        "import numba\n"  # the marker works: a numba call does load that module
        "numba.njit(lambda a: a + 1)(1.0)\n"
        "print('numba.np.arraymath' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "True"], proc.stdout


def test_old_views_stay_exact_after_their_columns_are_reused():
    """Views two refinements old (as the best or bound iterate of a run may be) lost the
    columns of their split clusters to newer ones and their cluster sums: asked again, they
    recompute them directly (never read a reused slot); a refinement into three parts, a partition that is not a
    refinement, and two views made from one previous view are all exact too."""
    rng = np.random.default_rng(2)
    n = 240
    X, s = rng.normal(size=(n, 3)), rng.uniform(0.5, 2.0, size=n)
    kfun = kernel_function("rbf", 0.5)
    sums = KernelSums(X, s, kfun, 0.5)

    def check(view):
        K = view.partition.n_clusters
        H, Kbar = direct(X, s, view.partition.labels, kfun)
        everything = np.arange(K)
        assert np.allclose(view.H(everything), H, rtol=1e-12, atol=1e-13)
        assert np.allclose(view.kbar(everything), Kbar, rtol=1e-12, atol=1e-13)

    p0 = Partition.from_labels(rng.integers(0, 6, size=n))
    views = [MeanKernel(sums, p0)]
    views[0].H(np.arange(6))
    for _ in range(4):  # halves, each view asked for everything before the next is made
        p = views[-1].partition
        views.append(MeanKernel(sums, p.refine((rng.random(n) < 0.5).astype(np.int64)),
                                views[-1]))
        check(views[-1])
    assert sums.free or sums.generation.max() > 0  # slots were released and reused
    assert views[1]._S.shape[1] == 0  # two generations back: its cluster sums were dropped
    for view in views:  # old views: their released columns and dropped sums are recomputed
        check(view)
    three = MeanKernel(sums, views[-1].partition.refine(rng.integers(0, 3, size=n)), views[-1])
    check(three)
    other = MeanKernel(sums, Partition.from_labels(rng.integers(0, 9, size=n)), three)
    check(other)
    a = MeanKernel(sums, other.partition.refine((rng.random(n) < 0.5).astype(np.int64)), other)
    b = MeanKernel(sums, other.partition.refine((rng.random(n) < 0.3).astype(np.int64)), other)
    check(a)
    check(b)
    check(a)


def _four_clusters(seed, gamma, n=60):
    """60 rows in 3 dimensions, their RBF kernel sums and a partition into 4 clusters."""
    rng = np.random.default_rng(seed)
    X, s = rng.normal(size=(n, 3)), rng.uniform(0.5, 2.0, size=n)
    kfun = kernel_function("rbf", gamma, 3, 1.0)
    return X, s, kfun, KernelSums(X, s, kfun, gamma), Partition.from_labels(np.arange(n) % 4)


def test_an_old_view_never_overwrites_a_released_column_it_is_reading():
    """A view three refinements old still holds a column that was released (its cluster was
    split by the next view) and not yet reused; asked for it together with a missing column,
    the new column must not take that slot (found by an independent review: the released
    slots were handed out before the request's own were excluded)."""
    X, s, kfun, sums, p0 = _four_clusters(seed=0, gamma=0.5)
    rows = np.arange(X.shape[0])
    v0 = MeanKernel(sums, p0)
    v0.H([0, 1, 2])  # cluster 3 not computed
    views, p = [v0], p0
    for k in range(3):  # split cluster k of the last partition, each view asked for everything
        p = p.refine(((p.labels == k) & (rows % 8 == k)).astype(np.int64))
        views.append(MeanKernel(sums, p, views[-1]))
        if k < 2:
            views[-1].H(np.arange(p.n_clusters))
    assert int(v0.slot[0]) in sums.free and sums.valid(v0.slot[[0]], v0.gen[[0]])[0]
    H, Kbar = direct(X, s, p0.labels, kfun)
    assert np.allclose(v0.H([0, 3]), H[:, [0, 3]], rtol=1e-12, atol=1e-13)
    assert np.allclose(v0.kbar_block([0, 1, 3]), Kbar[np.ix_([0, 1, 3], [0, 1, 3])],
                       rtol=1e-12, atol=1e-13)


def test_a_second_view_from_one_previous_derives_from_an_intact_parent():
    """Views A and B from one previous view P split the same cluster; a view made from A
    releases P's column of it, which B (asked only then) derives its larger child from: B's
    smaller child must not be computed into that slot."""
    X, s, kfun, sums, p = _four_clusters(seed=2, gamma=0.4)
    rows = np.arange(X.shape[0])
    P = MeanKernel(sums, p)
    P.H(np.arange(4))
    split = ((p.labels == 0) & (rows % 8 == 0)).astype(np.int64)
    A = MeanKernel(sums, p.refine(split), P)
    B = MeanKernel(sums, p.refine(split), P)
    A.H(np.arange(A.n_clusters))
    MeanKernel(sums, A.partition.refine((rows % 3 == 0).astype(np.int64)), A)
    assert int(P.slot[0]) in sums.free
    H, _ = direct(X, s, B.partition.labels, kfun)
    assert np.allclose(B.H(np.arange(B.n_clusters)), H, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("max_columns", [1, 3, None])
@pytest.mark.parametrize("seed", range(3))
def test_random_requests_on_old_and_new_views_are_exact(seed, max_columns):
    """Random requests (H, H_dot, kbar, kbar_dot, kbar_block) on the newest and on old views
    of a chain of refinements, two views from one previous, repartitions that are not
    refinements, under tight column limits: every answer equals the direct computation."""
    rng = np.random.default_rng(seed)
    n = 70
    X, s = rng.normal(size=(n, 3)), rng.uniform(0.5, 2.0, size=n)
    kfun = kernel_function("rbf", 0.4, 3, 1.0)
    sums = KernelSums(X, s, kfun, 0.4, max_columns=max_columns)
    views = [MeanKernel(sums, Partition.from_labels(rng.integers(0, 6, size=n)))]
    for _ in range(60):
        newest = views[-1]
        if rng.random() < 0.15 and newest.n_clusters < n // 2:
            base = newest._previous if (rng.random() < 0.2 and newest._previous) else newest
            if rng.random() < 0.8:
                split = rng.random(base.n_clusters) < 0.4
                group = split[base.partition.labels] & (rng.random(n) < 0.5)
                partition = base.partition.refine(group.astype(np.int64))
            else:
                partition = Partition.from_labels(rng.integers(0, 8, size=n))
            views.append(MeanKernel(sums, partition, base))
            continue
        view = newest if rng.random() < 0.5 else views[rng.integers(len(views))]
        H, Kbar = direct(X, s, view.partition.labels, kfun)
        ks = np.unique(rng.choice(view.n_clusters, size=min(view.n_clusters, 8)))
        v = rng.normal(size=ks.size)
        kind = rng.integers(5)
        if kind == 0:
            assert np.allclose(view.H(ks), H[:, ks], rtol=1e-12, atol=1e-12)
        elif kind == 1:
            assert np.allclose(view.H_dot(ks, v), H[:, ks] @ v, rtol=1e-11, atol=1e-11)
        elif kind == 2:
            assert np.allclose(view.kbar(ks), Kbar[:, ks], rtol=1e-12, atol=1e-12)
        elif kind == 3:
            assert np.allclose(view.kbar_dot(ks, v), Kbar[:, ks] @ v, rtol=1e-11, atol=1e-11)
        else:
            assert np.allclose(view.kbar_block(ks), Kbar[np.ix_(ks, ks)], rtol=1e-12,
                               atol=1e-12)


# ------------------------------------------------------------------------ column generation
@pytest.mark.parametrize("method", ["smo", "fm"])
def test_column_generation_solves_the_whole_aggregated_dual(method):
    """The working-set solve of the aggregated kernel dual (starting from a few clusters) reaches
    the optimum of the whole aggregated dual solved at once, and its bound is valid for it."""
    X, y = svm_rows(11, 2000, 3)
    problem = KernelSVMProblem(C=1.0, kernel="rbf")
    data = as_classification_data(X, y)
    rng = np.random.default_rng(0)
    partition = problem.initial_partition(data, 80, rng, None)
    agg = problem.aggregate(data, partition)
    assert 0 < agg.start.sum() < partition.n_clusters  # a real working set
    res, outcome = problem.solve_native(method, agg, None, partition, tol=1e-6, time_limit=None,
                                        options={})
    assert outcome.optimal and outcome.extra["rounds"] >= 1
    # the first iteration's target: smo solves loosely (LOOSE), fm to tol / 10
    target = outcome.extra["target"]
    assert target == (1e-4 if method == "smo" else 1e-7) and res.gap <= target
    Q = agg.Kbar * np.outer(agg.y, agg.y)
    full = ferris_munson_kernel(Q, agg.y, problem.C * agg.w, tol=1e-11)
    scale = abs(full.objective)
    assert full.objective - 1e-9 * scale <= res.objective <= full.objective + target * scale
    assert res.dual <= full.objective + 1e-9 * scale
    a = res.alpha
    assert res.dual == pytest.approx(float(a.sum()) - 0.5 * float(a @ Q @ a), rel=1e-9)


def test_each_round_adds_at_most_a_share_of_the_working_set(monkeypatch):
    """Column generation adds at most JOIN_SHARE x |W| violating clusters per round (the
    smallest margins first); a smaller share takes more rounds to the same aggregated optimum."""
    from aidopt.decomposition.plugins import kernel_svm as module

    X, y = svm_rows(11, 2000, 3)
    problem = KernelSVMProblem(C=1.0, kernel="rbf")
    data = as_classification_data(X, y)
    partition = problem.initial_partition(data, 80, np.random.default_rng(0), None)
    real = KernelSVMProblem._restricted
    runs = {}
    for share in (0.1, 1e9):  # 1e9: every violator joins at once
        sizes = runs[share] = []

        def record(self, method, Q, *args, sizes=sizes, **kwargs):
            sizes.append(Q.shape[0])
            return real(self, method, Q, *args, **kwargs)

        monkeypatch.setattr(KernelSVMProblem, "_restricted", record)
        monkeypatch.setattr(module, "JOIN_SHARE", share)
        agg = problem.aggregate(data, partition)
        res, outcome = problem.solve_native("fm", agg, None, partition, tol=1e-6,
                                            time_limit=None, options={})
        assert outcome.optimal and outcome.extra["rounds"] == len(sizes)
        runs[share] = (sizes, res.objective)
    (capped, objective), (free, reference_objective) = runs[0.1], runs[1e9]
    grown, grown_free = np.diff(capped), np.diff(free)
    assert np.all((grown > 0) & (grown <= np.maximum(1, (0.1 * np.array(capped[:-1])).astype(int))))
    assert np.any(grown_free > np.maximum(1, (0.1 * np.array(free[:-1])).astype(int)))  # binds
    assert len(capped) > len(free)
    assert objective == pytest.approx(reference_objective, rel=1e-6)


@pytest.mark.parametrize("threads", [1, 2])
def test_threads_bounds_the_kernel_workers_and_blas(monkeypatch, threads):
    """On a (pretended) four-core machine: the default run has more than ``threads`` tasks in
    the worker pool at once; with ``threads`` set it never has more (``threads=1``: none at
    all), BLAS runs on ``threads`` threads inside the run (its default comes back after), and
    the certified answer is the default run's within ``tol``."""
    monkeypatch.setattr(mean_kernel, "_cores", lambda: 4)
    monkeypatch.setattr(mean_kernel, "_POOL", None)  # a pool of four for this test
    try:
        _check_thread_bound(monkeypatch, threads)
    finally:
        if mean_kernel._POOL is not None:
            mean_kernel._POOL.shutdown()


def _check_thread_bound(monkeypatch, threads):
    import threading

    from aidopt.decomposition.plugins import kernel_svm as module
    from threadpoolctl import threadpool_info

    def blas_threads():
        return {i["num_threads"] for i in threadpool_info()  # single-threaded builds: always 1
                if i["user_api"] == "blas" and i.get("threading_layer") != "disabled"}

    count = {"tasks": 0, "pending": 0, "most": 0}
    lock = threading.Lock()
    real_pool, real_smo = mean_kernel._pool, module.smo

    def traced(fn):
        with lock:  # counted when handed to the pool, until it has run
            count["tasks"] += 1
            count["pending"] += 1
            count["most"] = max(count["most"], count["pending"])

        def run(*args):
            try:
                return fn(*args)
            finally:
                with lock:
                    count["pending"] -= 1
        return run

    class Recording:
        def submit(self, fn, *args):
            return real_pool().submit(traced(fn), *args)

        def map(self, fn, items):
            items = list(items)
            runs = [traced(fn) for _ in items]
            return real_pool().map(lambda run, item: run(item), runs, items)

    def smo(*args, **kwargs):
        seen.append(blas_threads())
        return real_smo(*args, **kwargs)

    seen = []
    monkeypatch.setattr(mean_kernel, "_pool", Recording)
    monkeypatch.setattr(module, "smo", smo)
    X, y = svm_rows(5, 9000, 4)  # columns of 9,000 rows: several kernel blocks
    before = blas_threads()
    default = aidopt.solve_svm(X, y, kernel="rbf", log=False)
    assert default.certified and count["most"] > threads
    count.update(tasks=0, most=0)
    seen.clear()
    bounded = aidopt.solve_svm(X, y, kernel="rbf", log=False, threads=threads)
    assert bounded.certified and count["most"] <= threads
    assert (count["tasks"] > 0) == (threads > 1)
    assert seen and all(used == {threads} for used in seen)
    assert blas_threads() == before
    assert bounded.objective == pytest.approx(default.objective, rel=1e-6)


def test_smo_that_stops_short_hands_over_to_fm():
    X, y = svm_rows(8, 400, 3)
    res = aidopt.solve_svm(X, y, C=1.0, kernel="rbf", solver="smo", log=False,
                           solver_options={"max_iter": 1})
    # smo stops after one pair update, fm (same options) after one step: Clarabel finishes
    assert res.certified
    assert "smo iteration_limit" in res.message and "; fm: " in res.message
    assert "retried with clarabel" in res.message


def test_smo_options_are_checked():
    X, y = svm_rows(8, 400, 3)
    with pytest.raises(ValueError, match="solver='smo' takes"):
        aidopt.solve_svm(X, y, kernel="rbf", solver="smo", log=False,
                         solver_options={"omega": 1.0})


def test_a_time_limit_between_rounds_returns_the_last_feasible_round(monkeypatch):
    """Out of time after the first working-set round (the restricted solve is made to use up
    the limit): the answer is that round's alpha (zero outside its working set, in the box,
    balanced) with a valid bound, reported as a time limit, never as optimal; the run keeps it
    as an incumbent, uncertified."""
    import time as clock

    X, y = svm_rows(11, 2000, 3)
    problem = KernelSVMProblem(C=1.0, kernel="rbf")
    data = as_classification_data(X, y)
    partition = problem.initial_partition(data, 80, np.random.default_rng(0), None)
    agg = problem.aggregate(data, partition)
    real = KernelSVMProblem._restricted

    def slow(self, *args, time_limit, **kwargs):
        out = real(self, *args, time_limit=time_limit, **kwargs)
        clock.sleep(time_limit)  # the limit is used up by this round
        return out

    monkeypatch.setattr(KernelSVMProblem, "_restricted", slow)
    res, outcome = problem.solve_native("smo", agg, None, partition, tol=1e-6, time_limit=0.5,
                                        options={})
    assert outcome.status == "time_limit" and outcome.extra["rounds"] == 1
    assert outcome.termination_condition.name == "maxTimeLimit"
    assert problem.on_nonoptimal(outcome)
    a, u = res.alpha, problem.C * agg.w
    assert np.all(a >= 0) and np.all(a <= u) and abs(float(a @ agg.y)) <= 1e-12 * a.sum()
    assert np.count_nonzero(a) <= outcome.extra["working_set"] < agg.y.size
    Q = agg.Kbar * np.outer(agg.y, agg.y)
    full = ferris_munson_kernel(Q, agg.y, u, tol=1e-11)
    assert res.dual <= full.objective + 1e-9 * abs(full.objective) <= res.objective + 1e-9 * abs(
        full.objective)


def test_a_loose_solve_never_ends_the_run():
    """smo solves early aggregated duals loosely (at most LOOSE, a hundredth of E_t - F_t);
    when no cluster is mixed after such a solve, split asks for the same partition again
    (nothing split), and that solve is to tol / 10 — so the condition holds only at a tight
    solve and the certificate's gap is within tol."""
    from types import SimpleNamespace

    from aidopt.decomposition.plugins.kernel_svm import LOOSE, KernelSVMState
    from aidopt.decomposition.protocol import Lifted, Split

    problem = KernelSVMProblem(C=1.0, kernel="rbf")
    partition = Partition.from_labels(np.array([0, 0, 1, 1]))
    slack = np.array([0.5, 0.2, -0.3, -0.1])  # no cluster mixed
    loose = Lifted({}, KernelSVMState(slack, slack, 1.0, 1e-9, True))
    tight = Lifted({}, KernelSVMState(slack, slack, 1.0, 1e-9, False))
    again = problem.split(partition, None, loose)
    assert again.partition is partition and again.n_split == 0 and not again.holds
    assert problem.split(partition, None, tight).holds
    tol = 1e-6
    assert problem._target("smo", None, tol) == LOOSE
    assert problem._target("fm", None, tol) == tol / 10
    prev = SimpleNamespace(partition=partition, split=again, E_t=1.0, F_t=0.5)
    assert problem._target("smo", prev, tol) == tol / 10  # the re-solve split asked for
    prev = SimpleNamespace(partition=partition, split=Split(None), E_t=1.0, F_t=1.0 - 1e-5)
    assert problem._target("smo", prev, tol) == pytest.approx(1e-7)
    prev = SimpleNamespace(partition=partition, split=Split(None), E_t=1.0, F_t=1.0 - 1e-3)
    assert problem._target("smo", prev, tol) == pytest.approx(1e-5)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kernel_aid_with_loose_early_solves_is_certified_within_tol(seed):
    X, y = svm_rows(seed, 1500, 3)
    res = aidopt.solve_svm(X, y, C=1.0, kernel="rbf", log=False)
    assert res.certified and res.solver == "smo"
    assert res.certificate.relative_gap <= 1e-6
    targets = np.array([h.info["target"] for h in res.history])
    assert targets[0] == pytest.approx(1e-4)
    assert np.all((targets >= 1e-7 * (1 - 1e-12)) & (targets <= 1e-4 * (1 + 1e-12)))
    if "optimality condition holds" in res.message:  # then only after a tight solve
        assert targets[-1] == pytest.approx(1e-7)


@pytest.mark.parametrize("bad", [0, -5.0, float("nan"), float("inf"), True, "1000"])
def test_cache_size_is_validated_before_solving(bad):
    """cache_size must be a positive finite number of MB (kernel AID only)."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 2)), np.where(rng.random(40) < 0.5, 1.0, -1.0)
    with pytest.raises(ValueError, match="cache_size"):
        aidopt.solve_svm(X, y, kernel="rbf", cache_size=bad, log=False)
    with pytest.raises(ValueError, match="cache_size"):
        aidopt.solve_svm(X, y, cache_size=100, log=False)  # the linear SVM has no columns


def test_the_iteration_table_shows_the_column_generation(capsys):
    """Kernel AID's table_info: the working set and the rounds of each iteration are columns of
    the iteration table, with the values its history records."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=300) > 0, 1.0, -1.0)
    res = aidopt.solve_svm(X, y, kernel="rbf", log=True)
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.split()[:1] == ["iter"]).split()
    assert header[-3:] == ["working_set", "rounds", "time"]
    rows = [line.split() for line in lines if line.split()[:1] == ["1"]]
    assert rows and int(rows[0][-3]) == res.history[0].info["working_set"]
    assert int(rows[0][-2]) == res.history[0].info["rounds"]
