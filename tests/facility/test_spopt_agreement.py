"""Every location model equal to PySAL spopt's optimum (PuLP + CBC) on small shared instances,
20 seeds each; skipped without spopt. spopt builds its full MIP from the dense cost matrix
(:func:`aidopt.bench.location.spopt_solve`, the adapter the benchmark uses)."""

from __future__ import annotations

import numpy as np
import pytest

from aidopt.api.facility import solve_facility_location
from aidopt.data.facility import euclidean_costs

pytest.importorskip("spopt.locate")
pytest.importorskip("pulp")

from aidopt.bench.location import spopt_solve  # noqa: E402

SEEDS = range(20)

#: PuLP 3.3 announces its 4.0 API on every variable spopt makes
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def instance(seed, n=16, s=6):
    rng = np.random.default_rng(seed)
    pts = rng.random((n, 2))
    pts = np.concatenate([pts, pts[: n // 4]])  # equal coverage sets to aggregate
    sites = rng.random((s, 2))
    C = euclidean_costs(pts, sites)
    return rng, C, sites


def close(a, b):
    return a == pytest.approx(b, rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("seed", SEEDS)
def test_mclp(seed):
    rng, C, _ = instance(seed)
    w = rng.integers(1, 6, size=C.shape[0]).astype(float)
    radius = float(np.quantile(C, 0.2))
    theirs = spopt_solve("mclp", C, p=2, radius=radius, demand=w)
    ours = solve_facility_location(C, model="mclp", p=2, radius=radius, demand=w, log=False)
    assert ours.certified and close(ours.solution["covered"], theirs["objective"])


@pytest.mark.parametrize("seed", SEEDS)
def test_lscp(seed):
    _, C, _ = instance(seed)
    radius = float(C.min(axis=1).max() * 1.2)
    theirs = spopt_solve("lscp", C, radius=radius)
    ours = solve_facility_location(C, model="lscp", radius=radius, log=False)
    assert ours.certified and close(ours.objective, theirs["objective"])


@pytest.mark.parametrize("seed", SEEDS)
def test_capacitated_lscp(seed):
    rng, C, _ = instance(seed)
    radius = float(C.min(axis=1).max() * 1.5)
    a = rng.integers(1, 4, size=C.shape[0]).astype(float)
    Q = rng.integers(5, 20, size=C.shape[1]).astype(float)
    try:
        ours = solve_facility_location(C, model="lscp", radius=radius, demand=a, capacity=Q,
                                       log=False)
    except ValueError as exc:  # refused as infeasible: spopt finds no solution either
        assert "infeasible" in str(exc)
        try:
            theirs = spopt_solve("clscp", C, radius=radius, demand=a, capacity=Q)
        except ValueError:  # spopt's own check (total demand above total capacity)
            return
        assert theirs["status"] == "Infeasible"
        return
    theirs = spopt_solve("clscp", C, radius=radius, demand=a, capacity=Q)
    assert ours.certified and close(ours.objective, theirs["objective"])


@pytest.mark.parametrize("seed", SEEDS)
def test_backup_lscp(seed):
    _, C, _ = instance(seed)
    radius = float(C.min(axis=1).max() * 1.3)
    theirs = spopt_solve("lscp-b", C, radius=radius)
    ours = solve_facility_location(C, model="lscp-b", radius=radius, log=False)
    assert ours.certified and len(ours.solution["open"]) == len(theirs["open"])
    assert close(ours.solution["backup"], theirs["objective"])
    # spopt's own objective also counts the points one site alone can cover
    single = float(((C <= radius).sum(axis=1) == 1).sum())
    assert close(theirs["raw_objective"], ours.solution["backup"] + single)


@pytest.mark.parametrize("seed", SEEDS)
def test_p_center(seed):
    _, C, _ = instance(seed, n=12)
    theirs = spopt_solve("p-center", C, p=2)
    ours = solve_facility_location(C, model="p-center", p=2, log=False)
    assert ours.certified and close(ours.objective, theirs["objective"])


@pytest.mark.parametrize("seed", SEEDS)
def test_p_dispersion(seed):
    _, _, sites = instance(seed, s=7)
    D = euclidean_costs(sites)
    theirs = spopt_solve("p-dispersion", D, p=3)
    ours = solve_facility_location(D, model="p-dispersion", p=3, log=False)
    assert ours.certified and close(ours.solution["dispersion"], theirs["objective"])


@pytest.mark.parametrize("seed", SEEDS)
def test_p_median(seed):
    rng, C, _ = instance(seed)
    w = rng.integers(1, 4, size=C.shape[0]).astype(float)
    theirs = spopt_solve("p-median", C, p=2, demand=w)
    ours = solve_facility_location(C, p=2, demand=w, log=False)
    assert ours.certified and close(ours.objective, theirs["objective"])
