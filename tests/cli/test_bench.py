"""`aidopt bench lad` machinery on a tiny instance (timings are not asserted, only agreement)."""

import sys

import pytest

from aidopt.bench import lad as bench
from aidopt.cli.main import main


def test_workers_agree_on_the_objective():
    aid = bench.worker("aid", 2000, 4, "B", 1, 60.0)
    assert aid["certified"] and aid["T"] >= 1 and 0 < aid["r0"] <= aid["rT"] <= 1
    for method in ("highs-dual-ipm", "highs-dual-ipm-nopresolve", "highs-primal-ipm", "pyomo"):
        base = bench.worker(method, 2000, 4, "B", 1, 60.0)
        assert base["objective"] == pytest.approx(aid["objective"], rel=1e-6), method
    row = bench._row("B", 2000, 4, aid, "highs-dual-ipm", base)
    assert row.startswith("| B | 2000 | 4 |") and row.count("|") == 14


def test_bench_cli_writes_a_table(tmp_path, capsys):
    out = tmp_path / "bench.md"
    assert main(["bench", "lad", "--sizes", "1500x3", "--baselines", "highs-dual-ipm",
                 "--output", str(out)]) == 0
    text = out.read_text()
    assert "Environment:" in text and "| A | 1500 | 3 |" in text and "highs-dual-ipm" in text


def test_svm_workers_agree_on_the_objective():
    from aidopt.bench import svm as bench_svm

    aid = bench_svm.worker("aid", 2000, 4, "gauss", 1, 60.0, 0.1, "l2")
    assert aid["certified"] and aid["T"] >= 1 and 0 < aid["r0"] <= aid["rT"] <= 1
    direct = bench_svm.worker("direct", 2000, 4, "gauss", 1, 60.0, 0.1, "l2")
    assert direct["objective"] == pytest.approx(aid["objective"], rel=1e-6)
    libsvm = bench_svm.worker("libsvm", 2000, 4, "gauss", 1, 60.0, 0.1, "l2")
    assert libsvm["objective"] >= aid["objective"] * (1 - 1e-6)  # AID is certified optimal
    assert libsvm["objective"] == pytest.approx(aid["objective"], rel=1e-3)
    l1 = bench_svm.worker("aid", 2000, 4, "gauss", 1, 60.0, 0.1, "l1")
    lp = bench_svm.worker("highs-lp", 2000, 4, "gauss", 1, 60.0, 0.1, "l1")
    assert lp["objective"] == pytest.approx(l1["objective"], rel=1e-6)
    row = bench_svm._row("gauss", "l2", 0.1, aid, "libsvm", libsvm)
    assert row.startswith("| gauss | l2 | 0.1 | 2000 | 4 |") and row.count("|") == 16


def test_bench_svm_cli_writes_a_table(tmp_path):
    out = tmp_path / "bench.md"
    assert main(["bench", "svm", "--sizes", "1500x3", "--baselines", "liblinear", "--norm", "linf",
                 "--output", str(out)]) == 0
    text = out.read_text()
    assert "| gauss | linf | 0.1 | 1500 | 3 |" in text and "liblinear" in text
    assert main(["bench", "svm", "--baselines", "nope"]) == 2


def test_kernel_bench_worker_agrees_with_libsvm():
    from aidopt.bench import svm as bench_svm

    aid = bench_svm.worker("aid", 600, 2, "gauss", 3, 60.0, 1.0, "l2", 1e-6, "rbf")
    svc = bench_svm.worker("libsvm", 600, 2, "gauss", 3, 60.0, 1.0, "l2", 1e-6, "rbf")
    assert aid["certified"]
    assert svc["objective"] >= aid["objective"] * (1 - 1e-6)  # AID is certified optimal
    assert svc["objective"] == pytest.approx(aid["objective"], rel=1e-3)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="sessions, nice and /proc")
def test_busy_mix_runs_in_own_sessions_and_stops_with_its_children():
    """`aidopt bench busy`'s background: each worker leads a session of its own (another
    scheduling group, as another terminal's job), and stopping kills it and what it started."""
    import os
    import time

    from aidopt.bench.busy import start_mix, stop_mix

    procs = start_mix(2)
    try:
        time.sleep(1.0)
        assert all(os.getsid(p.pid) == p.pid != os.getsid(0) for p in procs)
        assert all(os.getpriority(os.PRIO_PROCESS, p.pid) == 19 for p in procs)
    finally:
        stop_mix(procs)
    assert all(p.poll() is not None for p in procs)
    time.sleep(0.5)
    groups = {p.pid for p in procs}
    alive = []  # nothing left running in the workers' groups (the short jobs they started)
    for stat in os.listdir("/proc"):
        if stat.isdigit():
            try:
                with open(f"/proc/{stat}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) in groups and fields[0] != "Z":  # state, pgrp; zombies are dead
                alive.append(stat)
    assert not alive


def test_busy_bench_times_alone_then_busy(monkeypatch, tmp_path):
    from aidopt.bench import busy

    monkeypatch.setattr(busy, "PANEL", [("tiny SVM, AID", "aidopt.bench.svm", "aid", 300, 3,
                                         "gauss", busy.SVM_ARGS)])
    out = tmp_path / "busy.md"
    rows = busy.bench_busy(load=1, warmup=0.5, output=str(out))
    (row,) = rows
    assert row["alone"][0]["certified"] and row["busy"][0]["certified"]
    text = out.read_text()
    assert "| tiny SVM, AID |" in text and "slowdown" in text and "1 workers" in text


def test_busy_bench_runs_a_facility_worker(monkeypatch, tmp_path):
    """The facility entries call the facility worker with its own argument order."""
    from aidopt.bench import busy

    monkeypatch.setattr(busy, "PANEL", [("pmed1, benders", "aidopt.bench.facility", "benders",
                                         100, 100, "pmed1", ())])
    rows = busy.bench_busy(load=1, warmup=0.5, output=str(tmp_path / "busy.md"))
    (row,) = rows
    assert row["alone"][0]["termination"] == "certified_optimal"
    assert row["busy"][0]["objective"] == row["alone"][0]["objective"] == 5819
