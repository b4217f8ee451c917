"""``aidopt bench location``: its instances, its table, and spopt's adapter (with spopt)."""

from __future__ import annotations

import numpy as np
import pytest

from aidopt.bench import location as bl


def test_instances_are_seeded_and_named():
    a = bl.load_instance(bl.instance_name("uniform", 50, 7, 3))
    b = bl.load_instance("uniform-50-7-seed3")
    assert a["customer_xy"].shape == (50, 2) and a["site_xy"].shape == (7, 2)
    assert np.array_equal(a["customer_xy"], b["customer_xy"])
    c = bl.load_instance("clustered-50-7-seed3")
    assert np.array_equal(c["site_xy"], a["site_xy"]) and not np.array_equal(
        c["customer_xy"], a["customer_xy"])
    t = bl.load_instance(bl.instance_name("u1432", 0, 20, 0))
    assert t["customer_xy"].shape == (1432, 2) and t["site_xy"].shape == (20, 2)
    assert t["round_to"] == 0
    with pytest.raises(ValueError, match="unknown location instance"):
        bl.instance_name("gauss", 10, 2, 0)
    with pytest.raises(ValueError, match="unknown location model"):
        bl.bench_location(models=["lscp-x"])


def test_bench_table(tmp_path, monkeypatch):
    """The table from the workers' answers (run here in this process, not in subprocesses)."""
    import aidopt.bench.lad as lad

    monkeypatch.setattr(bl, "run_one", lambda method, *args: bl._worker(method, *args))
    monkeypatch.setattr(lad, "environment", lambda: "test")
    out = tmp_path / "table.md"
    records = bl.bench_location(instances=["uniform"], models=["lscp"], points=[60], sites=8,
                                baselines=[], time_limit=60, output=str(out))
    assert records[0]["aidopt"]["certified"]
    row = [line for line in out.read_text().splitlines() if line.startswith("| uniform")]
    assert len(row) == 1 and "| 60 x 8 | lscp |" in row[0] and "| yes |" in row[0]


def test_cli_passes_the_flags(monkeypatch):
    from aidopt.cli.main import main

    seen = {}
    monkeypatch.setattr(bl, "bench_location", lambda **kw: seen.update(kw))
    assert main(["bench", "location", "--instances", "clustered", "fl1400", "--points", "200",
                 "2000", "--sites", "30", "--p", "4", "--radius", "900", "--models", "mclp",
                 "lscp-b", "--time-limit", "20"]) == 0
    assert seen["instances"] == ["clustered", "fl1400"] and seen["points"] == [200, 2000]
    assert (seen["sites"], seen["p"], seen["radius"]) == (30, 4, 900.0)
    assert seen["models"] == ["mclp", "lscp-b"] and seen["baselines"] == ["spopt"]
    assert seen["time_limit"] == 20.0


def test_spopt_adapter_reads_the_answer():
    pytest.importorskip("spopt.locate")
    from aidopt.api.facility import solve_facility_location
    from aidopt.data.facility import euclidean_costs

    rng = np.random.default_rng(0)
    C = euclidean_costs(rng.random((20, 2)), rng.random((5, 2)))
    radius = float(C.min(axis=1).max())
    r = bl.spopt_solve("lscp", C, radius=radius, time_limit=30)
    assert r["optimal"] and r["status"] == "Optimal"
    assert (C[:, r["open"]] <= radius).any(axis=1).all()  # its sites cover every point
    ours = solve_facility_location(C, model="lscp", radius=radius, log=False)
    assert r["objective"] == len(r["open"]) == ours.objective


def test_single_sourcing_in_the_bench():
    """``sclscp``: aidopt's single-sourcing LSCP and spopt's CLSCP-SO with binary z, both in
    this process, on one tiny instance: the same number of sites, every demand an integer."""
    pytest.importorskip("spopt.locate")
    name = bl.instance_name("uniform", 40, 8, 0)
    demand = bl.bench_demand("sclscp", 40)
    assert bl.bench_demand("clscp", 40) is None
    assert set(np.unique(demand)) <= {1.0, 2.0, 3.0, 4.0}
    assert bl.capacities(40, 8, demand)[0] == np.ceil(4 * demand.sum() / 8)
    ours = bl._worker("aidopt", "sclscp", name, 5, None, 1e-6, 60)
    theirs = bl._worker("spopt", "sclscp", name, 5, None, 1e-6, 60)
    assert ours["certified"] and theirs["optimal"]
    assert ours["objective"] == theirs["objective"] == len(theirs["open"])
