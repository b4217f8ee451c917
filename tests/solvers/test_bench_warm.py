"""``bench_warm`` runs end to end on a small LP (timings are for docs/benchmarks.md, not tests)."""

from __future__ import annotations

from aidopt.bench.warm import bench_warm, fsv_model


def test_bench_warm_small(tmp_path, capsys):
    out = tmp_path / "bench.md"
    table = bench_warm(rows=400, cols=6, seed=1, repeat=1, output=str(out))
    assert "| SLA objective change (6 costs) |" in table
    assert "| LPC row addition (300 + 100 rows) |" in table
    assert table.count("| yes (") == 2  # warm and cold agree in both cases
    assert out.read_text().strip() == table.strip()
    assert "warm (s)" in capsys.readouterr().out


def test_fsv_model_shape():
    m = fsv_model(rows=50, cols=4, seed=0)
    assert len(m.fit) == 50 and len(m.upper) == 4 and len(m.w) == 4
