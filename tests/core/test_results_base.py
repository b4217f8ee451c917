"""One result family: every algorithm returns a RunResult with the same views (termination,
certificate / certified, summary, to_dict / to_json, history_frame, plot)."""

from __future__ import annotations

import json

import matplotlib
import numpy as np
import pytest

import aidopt
from aidopt.results import RunResult

matplotlib.use("Agg")


def _lad():
    rng = np.random.default_rng(0)
    X = np.column_stack([np.ones(300), rng.normal(size=(300, 2))])
    return aidopt.solve_lad(X, X @ [1.0, 2.0, -1.0] + rng.laplace(size=300), log=False)


def _scm():
    from aidopt.instances.scm import sine_set

    X, y = sine_set("D2", 40, 200, seed=0)
    return aidopt.solve_scm(X, y, kernel="linear", log=False)


def _s2rlsc():
    from aidopt.instances.s2rlsc import gaussian2c

    X, y = gaussian2c(40, 4, seed=0)
    y = np.where(np.arange(40) < 6, y, 0)
    return aidopt.solve_s2rlsc(X, y, restarts=2, log=False)


@pytest.mark.parametrize("run", [_lad, _scm, _s2rlsc], ids=["AIDResult", "SCMResult", "S2RLSCResult"])
def test_every_result_offers_the_same_views(run, tmp_path):
    result = run()
    assert isinstance(result, RunResult)
    assert isinstance(result.certified, bool)
    assert result.certified == (result.certificate is not None and result.certificate.certified) \
        or type(result).__name__ == "S2RLSCResult"  # its proof is the MIQP gap, never a dual
    assert str(result.termination) in result.summary()
    data = json.loads(result.to_json(tmp_path / "r.json"))
    assert json.loads((tmp_path / "r.json").read_text()) == data and "termination" in data
    frame = result.history_frame()
    assert len(frame) == len(result.history_rows()) > 0
    result.plot(tmp_path / "r.png")
    assert (tmp_path / "r.png").stat().st_size > 0
