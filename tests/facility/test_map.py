"""Maps of facility answers (``result.plot(kind="map")``, :func:`plot_facility`) for every model,
what each draws checked against the solution; the convergence ``plot()`` unchanged; no map
without coordinates; ``aidopt facility --map`` for every model."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Circle  # noqa: E402

from aidopt.api.facility import plot_facility, solve_facility_location  # noqa: E402
from aidopt.data.facility import euclidean_costs  # noqa: E402

RNG = np.random.default_rng(5)
CXY = RNG.random((30, 2)) * 10.0
SXY = RNG.random((8, 2)) * 10.0
C = euclidean_costs(CXY, SXY)


def solve(**kwargs):
    return solve_facility_location(customer_xy=CXY, site_xy=SXY, log=False, **kwargs)


def circles(fig):
    return [a for a in fig.axes[0].patches if isinstance(a, Circle)]


def legend(fig):
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_p_median_map_colours_points_by_their_site(tmp_path):
    res = solve(p=3, fixed_open=[2])
    fig = res.plot(kind="map")
    ax = fig.axes[0]
    assert "open sites (3)" in legend(fig) and "forced open (1)" in legend(fig)
    from matplotlib.collections import LineCollection

    lines = next(c for c in ax.collections if isinstance(c, LineCollection))  # assignments
    segs = np.asarray(lines.get_segments())
    np.testing.assert_allclose(segs[:, 0], CXY)
    np.testing.assert_allclose(segs[:, 1], SXY[res.solution["assign"]])
    points = next(c for c in ax.collections if c.get_label() == "demand points")
    colours = points.get_facecolors()
    assign = res.solution["assign"]
    for j in res.solution["open"]:  # one colour per open site
        mine = colours[assign == j]
        assert len(mine) == 0 or np.allclose(mine, mine[0])
    path = tmp_path / "m.png"
    res.plot(path=path, kind="map")
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_covering_maps_show_coverage():
    res = solve(model="mclp", p=2, radius=2.5)
    fig = res.plot(kind="map")
    covered = (C[:, res.solution["open"]] <= 2.5).any(axis=1)  # independent of the solver
    assert f"covered ({int(covered.sum())})" in legend(fig)
    assert f"uncovered ({int((~covered).sum())})" in legend(fig)
    assert int(covered.sum()) == pytest.approx(res.solution["covered"])
    drawn = circles(fig)
    assert len(drawn) == 2 and all(c.get_radius() == 2.5 for c in drawn)
    np.testing.assert_allclose(sorted(tuple(c.center) for c in drawn),
                               sorted(map(tuple, SXY[res.solution["open"]])))
    res = solve(model="lscp", radius=5.0)
    fig = res.plot(kind="map")
    assert "uncovered (0)" in legend(fig)
    assert len(circles(fig)) == len(res.solution["open"])


def test_p_center_map_draws_each_sites_reach():
    res = solve(model="p-center", p=3)
    fig = plot_facility(res)
    radii = sorted(c.get_radius() for c in circles(fig))
    assert len(radii) <= 3
    assert radii[-1] == pytest.approx(res.objective)  # unweighted: the largest reach is it


def test_p_dispersion_map_disks_touch_at_the_closest_pair():
    res = solve_facility_location(None, model="p-dispersion", p=3, site_xy=SXY, log=False)
    fig = res.plot(kind="map")
    drawn = circles(fig)
    assert len(drawn) == 3
    assert all(c.get_radius() == pytest.approx(res.solution["dispersion"] / 2) for c in drawn)


def test_convergence_plot_unchanged(tmp_path):
    res = solve(p=3)
    fig = res.plot()
    assert len(fig.axes) == 3 and fig.axes[0].get_xlabel() == "iteration t"
    res.plot(tmp_path / "c.png")  # the positional path of before
    assert (tmp_path / "c.png").exists()
    with pytest.raises(ValueError, match="kind must be 'convergence' or 'map'"):
        res.plot(kind="mapp")


def test_no_map_without_coordinates():
    res = solve_facility_location(C, p=3, log=False)
    with pytest.raises(ValueError, match="the map needs coordinates"):
        res.plot(kind="map")
    fig = res.plot(kind="map", customer_xy=CXY, site_xy=SXY)  # given to the plot instead
    assert "open sites (3)" in legend(fig)


def test_no_map_of_another_model():
    from aidopt import solve_lad

    rng = np.random.default_rng(0)
    X = rng.random((30, 2))
    res = solve_lad(X, X @ [1.0, 2.0] + rng.random(30), log=False)
    with pytest.raises(ValueError, match="a map draws a facility-location answer"):
        res.plot(kind="map")


@pytest.mark.parametrize("args", [
    ["--p", "2"],
    ["--fixed-costs", "3"],
    ["--model", "mclp", "--p", "2", "--radius", "1.5"],
    ["--model", "lscp", "--radius", "1.5"],
    ["--model", "p-center", "--p", "2"],
    ["--model", "p-dispersion", "--p", "2"],
])
def test_cli_map_for_every_model(tmp_path, args):
    from aidopt.cli.main import main

    path = tmp_path / "pts.csv"
    np.savetxt(path, [[0, 0], [1, 0], [0, 1], [5, 5], [5, 6], [9, 9]], delimiter=",")
    png = tmp_path / "m.png"
    assert main(["facility", "--coords", str(path), *args, "--map", str(png), "--quiet"]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
