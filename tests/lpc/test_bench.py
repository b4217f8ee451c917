"""The LPC benchmark runs end to end on a tiny instance and prints its table."""

from __future__ import annotations

from aidopt.bench.lpc import bench_lpc


def test_bench_lpc_tiny(tmp_path):
    lines = []
    rows = bench_lpc(600, 3, C=1.0, separation=2.0, chunks=(3,), full=("ipm",), aid=False,
                     workdir=tmp_path, out=lines.append)
    assert [r["method"] for r in rows] == ["lpc", "full-ipm"]
    assert all("error" not in r for r in rows), rows
    lpc, full = rows
    assert lpc["certified"] is True
    assert abs(lpc["objective"] - full["objective"]) <= 1e-6 * max(1.0, abs(full["objective"]))
    assert lines[2].startswith("| method |") and len(lines) == 6
