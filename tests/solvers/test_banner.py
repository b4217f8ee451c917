"""HiGHS's banner ("Running HiGHS ...") is not printed by a quiet run, in a fresh process."""

from __future__ import annotations

import subprocess
import sys


def test_quiet_run_prints_no_highs_banner():
    code = ("import numpy as np, aidopt\n"
            "X = np.random.default_rng(0).random((40, 2)); y = X @ [1.0, 2.0]\n"
            "r = aidopt.solve_lad(X, y, log=False)\n"
            "print(r.termination.value)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "certified_optimal"
    assert "Running HiGHS" not in out.stdout + out.stderr
