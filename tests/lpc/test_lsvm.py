"""The 1-norm LSVM (1.28) by LPC equals the full LP and is certified on the full data."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.instances import svm_instance

import aidopt
from aidopt.api.lpc import solve_lsvm_lpc


@pytest.mark.parametrize("seed,separation,C,chunks", [
    (0, 1.0, 1.0, 4), (1, 2.0, 0.1, 8), (2, 3.0, 10.0, 5), (3, 0.5, 0.3, 3),
])
def test_lsvm_lpc_equals_full_lp(seed, separation, C, chunks):
    X, y = svm_instance(n=1500, m=4, seed=seed, separation=separation)
    res = solve_lsvm_lpc(X, y, C=C, chunks=chunks, log=False)
    ref = aidopt.solve_svm(X, y, C=C, norm="l1", aid=False, log=False)
    assert res.termination == "certified_optimal", res.message
    assert res.objective == pytest.approx(ref.objective, rel=1e-7)
    cert = res.certificate
    assert cert.relative_gap <= 1e-6
    # the returned (w, b) has the reported full-data objective
    f = X @ res.solution["w"] + res.solution["b"]
    E = np.abs(res.solution["w"]).sum() + C * np.maximum(0.0, 1.0 - y * f).sum()
    assert E == pytest.approx(res.objective, rel=1e-12)
    alpha = res.solution["alpha"]
    assert alpha.shape == (1500,) and (alpha >= -1e-9).all() and (alpha <= C + 1e-9).all()


def test_lsvm_labels_and_weights():
    X, y = svm_instance(n=800, m=3, seed=5, separation=1.5)
    labels = np.where(y > 0, "spam", "ham")
    weights = np.random.default_rng(0).uniform(0.5, 2.0, size=800)
    res = solve_lsvm_lpc(X, labels, C=0.7, sample_weight=weights, chunks=4, log=False)
    ref = aidopt.solve_svm(X, labels, C=0.7, norm="l1", sample_weight=weights, aid=False, log=False)
    assert res.certified
    assert res.objective == pytest.approx(ref.objective, rel=1e-7)
    assert res.solution["classes"] == ["ham", "spam"]
    assert np.allclose(res.solution["w"], ref.solution["w"], atol=1e-5)
