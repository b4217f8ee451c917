"""TSPLIB cost conventions (EUC_2D, CEIL_2D, ATT, GEO, EXPLICIT) and the OR-Library cap format,
on small files written here with values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

import aidopt
from aidopt.data.facility import read_orlib_cap, tsplib_costs


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def _coords_file(tmp_path, kind, points):
    lines = ["NAME : t", "TYPE : TSP", f"DIMENSION : {len(points)}", f"EDGE_WEIGHT_TYPE : {kind}",
             "NODE_COORD_SECTION"]
    lines += [f"{i + 1} {x} {y}" for i, (x, y) in enumerate(points)]
    return _write(tmp_path, f"{kind}.tsp", "\n".join(lines + ["EOF", ""]))


def test_euc_2d_rounds_to_nearest_and_can_truncate(tmp_path):
    path = _coords_file(tmp_path, "EUC_2D", [(0, 0), (3, 4), (1, 1.6)])  # 5, sqrt(3.56) = 1.887
    c = tsplib_costs(path)
    assert c[0, 1] == 5 and c[0, 2] == 2 and c[1, 0] == 5
    assert tsplib_costs(path, rounding="floor")[0, 2] == 1
    assert tsplib_costs(path, rounding="exact")[0, 2] == pytest.approx(math.sqrt(3.56))


def test_ceil_2d_and_att(tmp_path):
    assert tsplib_costs(_coords_file(tmp_path, "CEIL_2D", [(0, 0), (1, 1)]))[0, 1] == 2
    # r = sqrt(100 / 10) = 3.16: nint 3 < r, so 4; r = sqrt(90 / 10) = 3 exactly: 3
    att = tsplib_costs(_coords_file(tmp_path, "ATT", [(0, 0), (10, 0), (9, 3)]))
    assert att[0, 1] == 4 and att[0, 2] == 3


def test_geo_one_degree_on_the_equator(tmp_path):
    # DDD.MM: 1.00 is one degree; the arc is RRR * pi / 180 = 111.32 km, TSPLIB adds 1 and truncates
    geo = tsplib_costs(_coords_file(tmp_path, "GEO", [(0.0, 0.0), (0.0, 1.0), (0.0, 0.30)]))
    assert geo[0, 1] == 112
    assert geo[0, 2] == int(6378.388 * math.acos(math.cos(3.141592 * 0.5 / 180)) + 1)  # 30' = 0.5 deg
    assert np.all(np.diag(geo) == 0) and np.array_equal(geo, geo.T)


@pytest.mark.parametrize("fmt", ["FULL_MATRIX", "UPPER_ROW", "LOWER_ROW", "UPPER_DIAG_ROW",
                                 "LOWER_DIAG_ROW", "UPPER_COL", "LOWER_DIAG_COL"])
def test_explicit_formats(tmp_path, fmt):
    M = np.array([[0, 2, 3, 4], [2, 0, 5, 6], [3, 5, 0, 7], [4, 6, 7, 0]], dtype=float)
    n = 4
    if fmt == "FULL_MATRIX":
        values = M.ravel()
    else:
        row_fmt = {"UPPER_COL": "LOWER_ROW", "LOWER_DIAG_COL": "UPPER_DIAG_ROW"}.get(fmt, fmt)
        diag = "DIAG" in row_fmt
        idx = (np.triu_indices(n, 0 if diag else 1) if row_fmt.startswith("UPPER")
               else np.tril_indices(n, 0 if diag else -1))
        values = M[idx]
    text = "\n".join(["NAME : e", "TYPE : TSP", f"DIMENSION : {n}", "EDGE_WEIGHT_TYPE : EXPLICIT",
                      f"EDGE_WEIGHT_FORMAT : {fmt}", "EDGE_WEIGHT_SECTION",
                      " ".join(str(int(v)) for v in values), "EOF", ""])
    assert np.array_equal(tsplib_costs(_write(tmp_path, "e.tsp", text)), M)


def test_explicit_with_missing_weights_fails_clearly(tmp_path):
    text = ("NAME : e\nDIMENSION : 4\nEDGE_WEIGHT_TYPE : EXPLICIT\nEDGE_WEIGHT_FORMAT : UPPER_ROW\n"
            "EDGE_WEIGHT_SECTION\n1 2 3\nEOF\n")
    with pytest.raises(ValueError, match="needs 6 weights, found 3"):
        tsplib_costs(_write(tmp_path, "e.tsp", text))


def test_shipped_fl1400_matches_the_coordinate_reader():
    from aidopt.instances.facility import tsplib_instance, tsplib_path

    c = tsplib_costs(tsplib_path("fl1400"), rounding="floor")
    assert np.array_equal(c, tsplib_instance("fl1400", p=5, rounding="floor")["costs"])


def test_orlib_cap_file_is_read_per_unit_and_solves_to_the_listed_optimum(tmp_path):
    # 2 warehouses, 3 customers; listed costs are for a customer's whole demand
    text = """2 3
      100 30
      100 50
      4 8 20
      2 10 2
      5 5 25
    """
    inst = read_orlib_cap(_write(tmp_path, "cap.txt", text))
    assert np.array_equal(inst["fixed_costs"], [30, 50])
    assert np.array_equal(inst["demand"], [4, 2, 5])
    assert np.allclose(inst["costs"], [[2, 5], [5, 1], [1, 5]])
    # by hand: open {0}: 30 + 8 + 10 + 5 = 53; {1}: 50 + 20 + 2 + 25 = 97; both: 80 + 8 + 2 + 5 = 95
    res = aidopt.solve_facility_location(inst["costs"], fixed_costs=inst["fixed_costs"],
                                         demand=inst["demand"], log=False)
    assert res.certified and res.objective == pytest.approx(53.0)
    with pytest.raises(ValueError, match="ends early"):
        read_orlib_cap(_write(tmp_path, "short.txt", "2 3\n100 30\n"))


@pytest.mark.parametrize("kind", ["EUC_2D", "CEIL_2D", "ATT", "GEO"])
def test_cli_tsplib_costs_follow_the_edge_weight_type(tmp_path, kind):
    """The CLI's --tsplib and the API on tsplib_costs solve the same problem (the CLI used to
    compute Euclidean costs for every type: GEO 140 against 13,529)."""
    from aidopt.cli.facility import add_arguments, load_problem

    pts = np.random.default_rng(3).uniform(0, 60, (12, 2)).round(2)
    path = _coords_file(tmp_path, kind, pts.tolist())
    parser = __import__("argparse").ArgumentParser()
    add_arguments(parser)
    got = load_problem(parser.parse_args(["--tsplib", str(path), "--p", "3"]))
    np.testing.assert_array_equal(got["costs"], tsplib_costs(path))
    if kind == "EUC_2D":
        floor = load_problem(parser.parse_args(["--tsplib", str(path), "--rounding", "floor"]))
        np.testing.assert_array_equal(floor["costs"], tsplib_costs(path, rounding="floor"))


def test_cli_header_applies_to_demand_and_a_single_edge_graph_reads(tmp_path):
    from aidopt.cli.facility import add_arguments, load_problem

    parser = __import__("argparse").ArgumentParser()
    add_arguments(parser)
    _write(tmp_path, "c.csv", "a,b\n1,2\n3,4\n5,6\n")
    _write(tmp_path, "w.csv", "demand\n1\n2\n3\n")
    got = load_problem(parser.parse_args(["--costs", str(tmp_path / "c.csv"), "--header",
                                          "--demand", str(tmp_path / "w.csv"), "--p", "1"]))
    assert got["demand"].tolist() == [1.0, 2.0, 3.0] and got["costs"].shape == (3, 2)
    _write(tmp_path, "g.csv", "1,2,5\n")
    g = load_problem(parser.parse_args(["--graph", str(tmp_path / "g.csv"), "--p", "1"]))
    res = aidopt.solve_facility_location(g["costs"], p=1)
    assert res.objective == 5.0


def test_vectors_of_another_shape_are_refused():
    C = np.arange(20.0).reshape(4, 5)
    with pytest.raises(ValueError, match="vector of 4"):
        aidopt.solve_facility_location(C, p=2, demand=np.ones((2, 2)))
    with pytest.raises(ValueError, match="vector of 5"):
        aidopt.solve_facility_location(C, fixed_costs=np.ones((1, 5)).repeat(2, axis=0))
    res = aidopt.solve_facility_location(C, p=2, demand=np.ones((4, 1)))  # a column reads
    assert res.certified
