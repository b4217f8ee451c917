"""The run's thread budget (decomposition/threads.py): BLAS limits while runs overlap."""

from __future__ import annotations

import threading

import pytest
from aidopt.decomposition.threads import DEFAULT_BLAS_THREADS, budget, compute_threads
from threadpoolctl import threadpool_info


def _blas():
    """The thread counts of the loaded BLAS libraries that can run threads (a single-threaded
    build, e.g. the OpenBLAS in cvxopt's wheel behind CHOLMOD, reports threading layer
    "disabled" and always runs one)."""
    return {i["num_threads"] for i in _threaded()}


def _threaded():
    return [i for i in threadpool_info()
            if i["user_api"] == "blas" and i.get("threading_layer") != "disabled"]


def test_none_runs_blas_on_one_thread_in_both_libraries():
    """threads=None: no worker budget, BLAS on DEFAULT_BLAS_THREADS threads within the run, in
    NumPy's and SciPy's OpenBLAS alike (SciPy's Cholesky is what ``fn`` factorizes with)."""
    import scipy.linalg  # noqa: F401 - load SciPy's BLAS so that threadpool_info lists it

    before = _blas()
    with compute_threads(None):
        assert budget() is None and _blas() == {DEFAULT_BLAS_THREADS}
        assert all(i["num_threads"] == DEFAULT_BLAS_THREADS for i in _threaded())
    assert _blas() == before


def test_nested_runs_restore_the_outer_limit_then_the_default():
    before = _blas()
    with compute_threads(1):
        assert budget() == 1 and _blas() == {1}
        with compute_threads(2):
            assert budget() == 2 and _blas() == {2}
        assert budget() == 1 and _blas() == {1}
    assert budget() is None and _blas() == before


def test_nested_runs_with_a_repeated_value_keep_the_one_still_going():
    """1, then 2, then 1 again inside: when the inner 1 ends, the 2 still going holds."""
    before = _blas()
    with compute_threads(1):
        with compute_threads(2):
            with compute_threads(1):
                assert _blas() == {1}
            assert budget() == 2 and _blas() == {2}
        assert _blas() == {1}
    assert _blas() == before


@pytest.mark.usefixtures("blas_library_defaults")  # under xdist too: BLAS at its defaults
def test_runs_in_two_threads_leave_the_limits_as_they_were():
    """A starts (2), B starts in another thread (1) while A holds the BLAS limits, A ends, B
    ends: B's budget is its own throughout, the limits come back to the defaults, and a later
    run in this thread sets them again while A's thread is still alive (threadpoolctl lets one
    thread at a time set them, and would keep them with A's thread)."""
    before = _blas()
    a_in, b_in, a_out, b_out, release = (threading.Event() for _ in range(5))
    during = {}

    def run_a():
        with compute_threads(2):
            a_in.set()
            b_in.wait(10)
        a_out.set()
        release.wait(10)  # the thread lives on, as a pool's worker would

    def run_b():
        a_in.wait(10)
        with compute_threads(1):
            b_in.set()
            a_out.wait(10)
            during["budget"] = budget()
        b_out.set()

    threads = [threading.Thread(target=run_a), threading.Thread(target=run_b)]
    for t in threads:
        t.start()
    try:
        assert b_out.wait(20) and during == {"budget": 1}
        assert _blas() == before and budget() is None
        with compute_threads(1):
            assert _blas() == {1}
        assert _blas() == before
    finally:
        release.set()
        for t in threads:
            t.join(20)


def test_an_error_inside_restores_the_limits():
    before = _blas()
    try:
        with compute_threads(1):
            raise RuntimeError("inside the run")
    except RuntimeError:
        pass
    assert _blas() == before and budget() is None


def test_a_failing_kernel_block_stops_the_other_workers(monkeypatch):
    """A block that raises: the error reaches the caller, the other workers take no block after
    it, all have stopped when it does, and BLAS has its limits back."""
    import numpy as np
    import pytest
    from aidopt.decomposition.plugins import mean_kernel

    monkeypatch.setattr(mean_kernel, "_cores", lambda: 2)
    monkeypatch.setattr(mean_kernel, "_BLOCK_ENTRIES", 64)  # one block per 4 rows below
    calls, real = [], mean_kernel._segment_sums

    def failing(*args):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("block failed")
        return real(*args)

    monkeypatch.setattr(mean_kernel, "_segment_sums", failing)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    sums = mean_kernel.KernelSums(X, np.ones(400), None, gamma=0.5)
    before = _blas()
    with pytest.raises(RuntimeError, match="block failed"):
        sums.compute(np.arange(16), np.repeat(np.arange(4), 4), 4)  # 100 blocks
    done = len(calls)
    assert 3 <= done <= 3 + 2  # at most one more block per worker after the failure
    assert len(calls) == done and _blas() == before


def _huge_pages() -> bool:
    """NumPy's current madvise(MADV_HUGEPAGE) switch (read by setting it back at once)."""
    from aidopt.decomposition.run import _madvise_setter

    setter = _madvise_setter()
    before = setter(True)
    setter(before)
    return before


def test_small_pages_counts_overlapping_runs():
    """The first scope to start turns huge pages off, the last to end restores the switch, also
    when the scopes end in another order than they started (runs in two threads)."""
    from aidopt.decomposition.run import _madvise_setter, small_pages

    setter = _madvise_setter()
    original = setter(True)
    try:
        a, b = small_pages(), small_pages()
        a.__enter__()
        assert _huge_pages() is False
        b.__enter__()
        a.__exit__(None, None, None)  # A ends first: B still runs
        assert _huge_pages() is False
        b.__exit__(None, None, None)
        assert _huge_pages() is True
    finally:
        setter(original)


def test_a_real_run_computes_on_one_blas_thread_without_huge_pages(monkeypatch):
    """solve_svm's AID run: the native method (fm) sees BLAS on DEFAULT_BLAS_THREADS threads and
    no huge pages; threads=2 gives BLAS 2 threads; both come back after the run."""
    import numpy as np
    from aidopt.decomposition.plugins import svm as svm_plugin

    import aidopt

    seen, real = [], svm_plugin.ferris_munson

    def recording(*args, **kwargs):
        seen.append((_blas(), _huge_pages()))
        return real(*args, **kwargs)

    monkeypatch.setattr(svm_plugin, "ferris_munson", recording)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=400) > 0, 1.0, -1.0)
    before_blas, before_pages = _blas(), _huge_pages()
    result = aidopt.solve_svm(X, y, log=False)
    assert result.certified and seen
    assert all(s == ({DEFAULT_BLAS_THREADS}, False) for s in seen)
    seen.clear()
    from aidopt.decomposition.threads import blas_limit

    with blas_limit(2):  # what OpenBLAS gives for 2 here (fewer on a one-core machine)
        two = _blas()
    aidopt.solve_svm(X, y, log=False, threads=2)
    assert seen and all(s == (two, False) for s in seen)
    assert _blas() == before_blas and _huge_pages() == before_pages
