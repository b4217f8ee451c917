"""Regressions from the review of the aggregate-output code."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from aidopt.decomposition.plugins.aggout import reach

import aidopt
from aidopt.data.validate import as_aggregate_data
from aidopt.results import Termination


def _toy(n=24, size=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    truth = (X[:, 0] > 0).astype(int)
    collections = np.arange(n) // size
    return X, collections, np.bincount(collections, weights=truth).astype(int)


def test_user_big_m_makes_no_cluster_claim():
    X, collections, counts = _toy()
    res = aidopt.solve_aggregate_outputs(X, collections, counts, method="miqp", norm="l1",
                                         solver="highs", C=1.0, D=10.0, big_M=1.05, log=False)
    assert res.termination is not Termination.CLUSTER_OPTIMAL
    assert res.certificate.sign_condition is False and not res.certified
    assert "user big_M" in res.certificate.note


@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_reach_is_translation_invariant(norm):
    rng = np.random.default_rng(1)
    X = rng.normal(scale=0.1, size=(50, 3))
    exact = reach(X, norm)
    assert np.allclose(reach(X + 1e8, norm), exact, rtol=1e-6)
    brute = np.array([max((np.linalg.norm(a - b) if norm == "l2" else np.abs(a - b).max())
                          for b in X) for a in X])
    assert np.allclose(exact, brute, rtol=1e-9)


@pytest.mark.parametrize("counts", [[True, 1, 2, 0, 3, 1], ["1", 1, 2, 0, 3, 1]])
def test_counts_must_be_numbers(counts):
    X, collections, _ = _toy()
    with pytest.raises(ValueError, match="numbers"):
        as_aggregate_data(X, collections, counts)


@pytest.mark.parametrize("kwargs", [{"E": 0.0}, {"C": 0.0, "D": 0.0}])
def test_slaag_needs_positive_costs(kwargs):
    X, collections, counts = _toy()
    with pytest.raises(ValueError, match="E > 0 and C \\+ D > 0"):
        aidopt.solve_aggregate_outputs(X, collections, counts, log=False, **kwargs)


def test_cli_rejects_empty_counts(tmp_path, capsys):
    from aidopt.cli.main import main

    X, collections, counts = _toy()
    frame = pd.DataFrame(X, columns=["a", "b"])
    frame["collection"] = collections
    frame["count"] = counts[collections].astype(float)
    frame.loc[1, "count"] = np.nan
    path = tmp_path / "agg.csv"
    frame.to_csv(path, index=False)
    assert main(["aggout", "--data", str(path)]) == 2
    assert "NaN" in capsys.readouterr().err
