"""The dask engine's memory: the peak resident memory of a solve over an on-disk X grows by well
under X's size plus the fixed costs of a run.

The peak is measured in a fresh interpreter (``/proc/self/clear_refs`` resets the kernel's
high-water mark, then ``VmHWM`` is read), so the rest of the test suite does not disturb it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("dask.array")

from aidopt.bench.dask import write_store, y_path  # noqa: E402

#: the solve in a fresh interpreter: a warm-up on small data (imports, solver start-up, the
#: worker threads), then LAD on the .npy path argv[1] with y from argv[2], with two worker
#: threads (chunks in flight scale with the threads); prints the growth of the peak resident
#: memory over the resident memory before the solve, in MiB
SCRIPT = r"""
import json, sys
import dask
import numpy as np
import aidopt


def status_kb(field):
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith(field + ":"))


dask.config.set(scheduler="threads", num_workers=2)
rng = np.random.default_rng(0)
X0 = np.column_stack([np.ones(3000), rng.normal(size=(3000, 5))])
aidopt.solve_lad(X0, X0 @ np.ones(6) + rng.laplace(size=3000), engine="dask", log=False)
y = np.load(sys.argv[2])
before = status_kb("VmRSS")
try:
    with open("/proc/self/clear_refs", "w") as fh:  # VmHWM := VmRSS
        fh.write("5")
except OSError:
    print(json.dumps({"skip": "cannot reset the peak (/proc/self/clear_refs)"}))
    sys.exit()
result = aidopt.solve_lad(sys.argv[1], y, engine="dask", log=False)
print(json.dumps({"growth_mb": (status_kb("VmHWM") - before) / 1024,
                  "termination": result.termination.value,
                  "passes": result.dimensions["data_passes"]}))
"""

#: peak growth allowed, as a multiple of X's bytes. Measured (2 vCPUs, 2026-11-29): 1.9-2.15x
#: here, 3.0-3.1x before the .npy reader, the cluster sums and the LAD state were changed. At this
#: size the fixed costs of a run weigh (at 5e6 rows the growth measured 0.6-0.7x; not yet a row of
#: docs/benchmarks/dask.md)
BOUND = 2.6


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_peak_memory_of_a_solve_over_a_npy_file(tmp_path):
    n, m = 400_000, 20
    path = write_store(tmp_path / "X.npy", "lad", n, m)
    out = subprocess.run([sys.executable, "-c", SCRIPT, path, str(y_path(path))],
                         capture_output=True, text=True, timeout=300, check=True)
    row = json.loads(out.stdout.strip().splitlines()[-1])
    if "skip" in row:
        pytest.skip(row["skip"])
    assert row["termination"] == "certified_optimal" and row["passes"] > 0
    growth = row["growth_mb"] * 2**20 / (8 * n * m)
    assert growth < BOUND, f"peak RSS grew by {growth:.2f} x X ({row['growth_mb']:.0f} MiB)"
