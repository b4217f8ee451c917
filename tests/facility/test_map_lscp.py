"""Maps of the LSCP variants (``result.plot(kind="map")``, ``aidopt facility --map``): the
capacitated LSCP's share lines and its single-sourcing assignment lines, each open site's load
and capacity, LSCP-B's points covered twice; what is drawn checked against the solution and
against counts made here on the coordinates."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.patches import Circle  # noqa: E402

from aidopt.api.facility import plot_facility, solve_facility_location  # noqa: E402
from aidopt.data.facility import euclidean_costs  # noqa: E402

RNG = np.random.default_rng(5)
CXY = RNG.random((30, 2)) * 10.0
SXY = RNG.random((8, 2)) * 10.0
A = RNG.integers(1, 4, size=30).astype(float)
Q = np.full(8, 15.0)
C = euclidean_costs(CXY, SXY)
R = 5.0


def solve(**kwargs):
    return solve_facility_location(customer_xy=CXY, site_xy=SXY, log=False, **kwargs)


def legend(fig):
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def lines(fig):
    (coll,) = [c for c in fig.axes[0].collections if isinstance(c, LineCollection)]
    return np.asarray(coll.get_segments())


def labels(fig):
    return sorted(t.get_text() for t in fig.axes[0].texts)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_split_capacitated_map_draws_every_share_and_the_loads():
    res = solve(model="lscp", radius=R, capacity=Q, demand=A)
    assert res.certified
    Z = res.solution["shares"].toarray()
    fig = res.plot(kind="map")
    segs = lines(fig)
    i, j = np.nonzero(Z > 1e-9)
    drawn = sorted((tuple(p), tuple(q)) for p, q in segs)
    expected = sorted((tuple(CXY[a]), tuple(SXY[b])) for a, b in zip(i, j, strict=True))
    assert drawn == expected  # one line per share served
    split = int(((Z > 1e-9).sum(axis=1) >= 2).sum())
    assert split >= 1 and f"split among sites ({split})" in legend(fig)
    load = A @ Z  # counted here from the shares
    open_ = res.solution["open"]
    assert labels(fig) == sorted(f"{load[k]:.4g}/{Q[k]:.4g}" for k in open_)
    assert all(load[k] <= Q[k] + 1e-6 for k in open_)
    circles = [p for p in fig.axes[0].patches if isinstance(p, Circle)]
    assert len(circles) == len(open_) and all(c.get_radius() == R for c in circles)
    sample = plot_facility(res, max_lines=5)
    assert len(lines(sample)) == 5  # a seeded sample beyond max_lines


def test_single_source_map_joins_each_point_to_its_site():
    res = solve(model="lscp", radius=R, capacity=Q, demand=A, single_source=True)
    assert res.certified
    assign = np.asarray(res.solution["assign"])
    fig = res.plot(kind="map")
    segs = lines(fig)
    np.testing.assert_allclose(segs[:, 0], CXY)
    np.testing.assert_allclose(segs[:, 1], SXY[assign])
    assert np.all(C[np.arange(30), assign] <= R)  # within the radius, on the coordinates
    load = np.bincount(assign, weights=A, minlength=8)
    assert labels(fig) == sorted(f"{load[k]:.4g}/{Q[k]:.4g}" for k in res.solution["open"])
    points = next(c for c in fig.axes[0].collections if c.get_label() == "demand points")
    colours = points.get_facecolors()
    for j in res.solution["open"]:  # one colour per site
        mine = colours[assign == j]
        assert len(mine) == 0 or np.allclose(mine, mine[0])
    assert not any(t.startswith("split") for t in legend(fig))


def test_backup_map_marks_points_covered_twice():
    res = solve(model="lscp-b", radius=R)
    assert res.certified
    fig = res.plot(kind="map")
    times = (C[:, res.solution["open"]] <= R).sum(axis=1)  # independent of the solver
    twice, once = int((times >= 2).sum()), int((times == 1).sum())
    assert twice == res.solution["backup"] and twice >= 1 and once >= 1
    assert f"covered twice ({twice})" in legend(fig)
    assert f"covered once ({once})" in legend(fig)
    assert "uncovered (0)" in legend(fig)
    marked = next(c for c in fig.axes[0].collections if c.get_label().startswith("covered twice"))
    np.testing.assert_allclose(np.asarray(marked.get_offsets()), CXY[times >= 2])
    # a solution dict without the backup marks: counted from the coordinates and the radius
    bare = {k: v for k, v in res.solution.items() if k not in ("backup_points", "covered_points")}
    assert f"covered twice ({twice})" in legend(plot_facility(bare))


def test_single_source_point_of_demand_zero_without_a_site():
    """A point of demand 0 that no open site covers has no site (-1): drawn grey, no line."""
    far = int(np.argmax(np.hypot(*(CXY - CXY.mean(axis=0)).T)))
    sol = {"kind": "lscp", "open": [0], "assign": np.where(np.arange(30) == far, -1, 0),
           "load": np.zeros(8), "capacity": Q, "customer_xy": CXY, "site_xy": SXY}
    fig = plot_facility(sol)
    assert len(lines(fig)) == 29 and labels(fig) == ["0/15"]


@pytest.mark.parametrize("args", [
    ["--model", "lscp", "--radius", "1.5", "--capacity", "2"],
    ["--model", "lscp", "--radius", "1.5", "--capacity", "2", "--single-source"],
    ["--model", "lscp-b", "--radius", "1.5"],
])
def test_cli_map_for_the_variants(tmp_path, args):
    from aidopt.cli.main import main

    path = tmp_path / "pts.csv"
    np.savetxt(path, [[0, 0], [1, 0], [0, 1], [5, 5], [5, 6], [9, 9]], delimiter=",")
    png = tmp_path / "m.png"
    assert main(["facility", "--coords", str(path), *args, "--map", str(png), "--quiet"]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
