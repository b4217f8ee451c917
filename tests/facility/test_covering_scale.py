"""The covering models' scale path: coverage sets by k-d trees in blocks, equal sets grouped by
hashing (checked exactly, also when every hash collides), chunk aggregations merged, and the
seeded instance generators of ``aidopt bench covering``. Each compared with an independent
computation: the dense cost matrix, a dictionary of site tuples."""

from __future__ import annotations

import numpy as np
import pytest

from aidopt.bench import covering as bench
from aidopt.data import coverage as cov_mod
from aidopt.data.coverage import aggregate_rows, coverage_sets, group_rows, merge_rows
from aidopt.data.facility import EuclideanCosts


def reference_groups(indptr, sites):
    """Group of every row by a dictionary of its site tuple, numbered by first row."""
    seen, group = {}, []
    for r in range(indptr.size - 1):
        group.append(seen.setdefault(tuple(sites[indptr[r]:indptr[r + 1]].tolist()), len(seen)))
    return np.asarray(group)


def random_rows(seed, n_rows=400, n_sites=12):
    """Random sorted site sets, many repeated, some empty."""
    rng = np.random.default_rng(seed)
    base = [np.flatnonzero(rng.random(n_sites) < rng.uniform(0.05, 0.5)) for _ in range(40)]
    rows = [base[int(k)] for k in rng.integers(0, len(base), size=n_rows)]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
    return indptr, np.concatenate(rows).astype(np.int64), n_sites


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("tables", ["random", "zeros", "few"])
def test_group_rows_is_exact_whatever_the_hash(seed, tables):
    """Equal rows share a group, unequal rows never do, groups numbered by first row; also with
    tables under which every row collides (zeros) or many do (two values)."""
    indptr, sites, s = random_rows(seed)
    t = None
    if tables == "zeros":
        t = np.zeros((2, s), dtype=np.uint64)
    elif tables == "few":
        t = np.tile(np.array([1, 2], dtype=np.uint64), (2, s // 2 + 1))[:, :s]
    group, first = group_rows(indptr, sites, s, tables=t)
    ref = reference_groups(indptr, sites)
    assert np.array_equal(group, ref)
    assert np.array_equal(first, [np.flatnonzero(ref == g)[0] for g in range(ref.max() + 1)])


def test_coverage_in_blocks_matches_the_matrix(monkeypatch):
    """Several k-d tree blocks (POINT_BLOCK made small), clustered points, a rounded oracle with
    ties at R: the sets are those of the oracle's own cost matrix."""
    monkeypatch.setattr(cov_mod, "POINT_BLOCK", 97)
    pts, sites = bench.covering_points(700, "clustered", 1), bench.covering_sites("clustered", 1, 40)
    for round_to, radius in ((None, 0.12), (2, 0.1), (1, 0.2)):
        oracle = EuclideanCosts(pts, sites, round_to=round_to, rounding="ceil")
        C = oracle.rows(np.arange(len(pts)))
        a, b = coverage_sets(C, radius), coverage_sets(oracle, radius)
        assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.sites, b.sites)
        if round_to is not None:
            assert (C == radius).any()  # the boundary is exercised


def test_aggregate_rows_against_a_dictionary():
    rng = np.random.default_rng(5)
    pts, sites = bench.covering_points(3000, "uniform", 2), bench.covering_sites("uniform", 2, 30)
    cover = coverage_sets(EuclideanCosts(pts, sites), 0.15)
    w = rng.integers(0, 4, size=len(pts)).astype(float)
    keep = rng.random(len(pts)) < 0.8
    rows = aggregate_rows(cover, w, keep)
    expect: dict[tuple, float] = {}
    for i in range(len(pts)):
        key = tuple(cover.sites[cover.indptr[i]:cover.indptr[i + 1]].tolist())
        if keep[i] and key:
            expect[key] = expect.get(key, 0.0) + w[i]  # insertion order: first point
    assert [tuple(rows.row(r).tolist()) for r in range(rows.n_rows)] == list(expect)
    assert np.allclose(rows.weight, list(expect.values()))
    member_sets = [tuple(rows.row(rows.members[i]).tolist()) if rows.members[i] >= 0 else None
                   for i in range(len(pts))]
    assert all((m is None) == (not keep[i] or cover.indptr[i] == cover.indptr[i + 1])
               for i, m in enumerate(member_sets))


def test_merged_chunks_equal_the_whole():
    """Aggregating chunks and merging them gives the rows of all points at once, in order."""
    pts, sites = bench.covering_points(4000, "clustered", 3), bench.covering_sites("clustered", 3, 50)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(pts))
    whole = aggregate_rows(coverage_sets(EuclideanCosts(pts, sites), 0.1), w)
    parts = [aggregate_rows(coverage_sets(EuclideanCosts(pts[a:a + 613], sites), 0.1), w[a:a + 613])
             for a in range(0, len(pts), 613)]
    merged = merge_rows(parts, len(sites))
    assert np.array_equal(merged.indptr, whole.indptr) and np.array_equal(merged.sites, whole.sites)
    assert np.allclose(merged.weight, whole.weight)
    assert merge_rows([], len(sites)).n_rows == 0


def test_generators_are_seeded_and_prefix_stable():
    a = bench.covering_points(70_000, "clustered", seed=4)
    b = bench.covering_points(1000, "clustered", seed=4)
    assert np.array_equal(a[:1000], b)
    assert not np.array_equal(b, bench.covering_points(1000, "clustered", seed=5))
    assert np.array_equal(bench.covering_sites("uniform", 4), bench.covering_sites("clustered", 4))
    assert bench.mclp_radius(50, 0.5) == pytest.approx(np.sqrt(0.5 / (50 * np.pi)))
    pts, sites = bench.covering_points(2000, "uniform", 0), bench.covering_sites("uniform", 0, 100)
    R = bench.lscp_radius(pts, sites, margin=0.0)
    d = np.sqrt(((pts[:, None, :] - sites[None, :, :]) ** 2).sum(-1)).min(axis=1)
    assert R == pytest.approx(d.max())
    with pytest.raises(ValueError, match="kind must be one of"):
        bench.covering_points(10, "gaussian")


def test_instance_radius_gives_partial_coverage():
    """MCLP at the benchmark's radius rule leaves demand uncovered; LSCP's radius is feasible."""
    import aidopt

    inst = bench.covering_instance(4000, "uniform", seed=1, p=4, n_sites=40, share=0.5)
    res = aidopt.solve_facility_location(customer_xy=inst["points"], site_xy=inst["sites"],
                                         model="mclp", radius=inst["radius"], p=4, log=False)
    assert res.termination.value == "certified_optimal"
    assert 0 < res.solution["covered"] < 4000
    inst = bench.covering_instance(4000, "clustered", seed=1, n_sites=40, model="lscp")
    res = aidopt.solve_facility_location(customer_xy=inst["points"], site_xy=inst["sites"],
                                         model="lscp", radius=inst["radius"], log=False)
    assert res.termination.value == "certified_optimal"


def test_bench_covering_cli(tmp_path, capsys):
    from aidopt.cli.main import main

    out = tmp_path / "table.md"
    assert main(["bench", "covering", "--points", "3000", "--kinds", "uniform", "--models",
                 "mclp", "--p", "3", "--sites", "30", "--output", str(out)]) == 0
    table = out.read_text()
    assert "| 3000 | uniform | mclp | numpy |" in table and "certified_optimal" in table
    assert main(["bench", "covering", "--models", "p-center"]) == 2
    assert "runs the models mclp and lscp" in capsys.readouterr().err
    # --radius: every model's radius, as given (shown in the table)
    assert main(["bench", "covering", "--points", "2000", "--kinds", "uniform", "--models",
                 "lscp", "--sites", "30", "--radius", "0.5", "--rows", "subset", "--output",
                 str(out)]) == 0
    assert "| 2000 | uniform | lscp | numpy | rows=subset | 0.5 |" in out.read_text()
    assert main(["bench", "covering", "--models", "lscp", "--radius", "-1"]) == 2
    assert "radius must be positive" in capsys.readouterr().err


@pytest.mark.parametrize("block", [1, 50, 10**9])
def test_dominance_in_blocks_against_pairwise_subsets(monkeypatch, block):
    """The rows kept are exactly those containing no other row (checked pair by pair), whatever
    the block of the sparse product."""
    from aidopt.data.coverage import drop_dominated

    monkeypatch.setattr(cov_mod, "DOMINANCE_BLOCK", block)
    pts, sites = bench.covering_points(1500, "uniform", 6), bench.covering_sites("uniform", 6, 25)
    rows = aggregate_rows(coverage_sets(EuclideanCosts(pts, sites), 0.25))
    sets = [set(rows.row(r).tolist()) for r in range(rows.n_rows)]
    minimal = [r for r in range(rows.n_rows) if not any(o < sets[r] for o in sets)]
    kept, dropped = drop_dominated(rows)
    assert dropped == rows.n_rows - len(minimal) > 0
    assert [set(kept.row(r).tolist()) for r in range(kept.n_rows)] == [sets[r] for r in minimal]
    assert all(kept.members[i] == -1 or set(kept.row(kept.members[i]).tolist()) == sets[m]
               for i, m in enumerate(rows.members) if m >= 0)
