"""``solve_gsvm`` stops at its ``time_limit`` in every phase: the kernel matrix (in blocks of
rows), the factorisation of K (abandoned at the limit) and the build of the LP (1.12) on K (rows
skipped past the limit). Before, none of them looked at the clock: 1,500-2,500 points with a
0.5 s limit returned after 10-49 s (tests/fuzz/test_reproducers.py)."""

from __future__ import annotations

import time

import numpy as np
from aidopt.instances import svm_instance

import aidopt
from aidopt.results import Termination


def _no_solution(res):
    assert res.termination is Termination.TIME_LIMIT
    assert not res.certified and res.certificate is None
    assert "w" not in res.solution


def test_the_lp_on_k_stops_building_at_the_limit():
    """1,200 points: 4.3 million terms of (1.12) on K, seconds to build in full."""
    X, y = svm_instance(n=1200, m=5, seed=474963)
    res = aidopt.solve_gsvm(X, y, kernel="rbf", formulation="lp_Ku", ku_form="kernel", nu=10.0,
                            time_limit=0.3, log=False)
    _no_solution(res)
    assert "while building the model" in res.message
    assert res.seconds < 0.3 + 2.0  # the run's own clock, from the call


def test_the_factorisation_is_abandoned_at_the_limit(monkeypatch):
    import aidopt.decomposition.plugins.gsvm as plugin

    real = plugin.factor_kernel

    def slow(K):
        time.sleep(4.0)
        return real(K)

    monkeypatch.setattr(plugin, "factor_kernel", slow)
    X, y = svm_instance(n=100, m=3, seed=0)
    t = time.perf_counter()
    res = aidopt.solve_gsvm(X, y, kernel="rbf", formulation="lp_Ku", ku_form="svd",
                            time_limit=0.5, log=False)
    assert time.perf_counter() - t < 0.5 + 2.0
    _no_solution(res)
    assert "factoring K" in res.message


def test_the_kernel_matrix_counts_against_the_limit():
    """A slow kernel: K is computed in blocks of rows, and the run ends at the first block past
    the limit (the limit counts from the call)."""
    calls = []

    def slow_linear(A, B):
        calls.append(A.shape[0])
        time.sleep(0.3)
        return A @ B.T

    X, y = svm_instance(n=3000, m=2, seed=0)  # three blocks of rows
    t = time.perf_counter()
    res = aidopt.solve_gsvm(X, y, kernel=slow_linear, time_limit=0.1, log=False,
                            raise_on_failure=False)
    assert time.perf_counter() - t < 0.1 + 2.0
    _no_solution(res)
    assert "kernel matrix" in res.message and len(calls) == 1
    assert res.seconds >= 0.1 and np.isfinite(res.seconds)
