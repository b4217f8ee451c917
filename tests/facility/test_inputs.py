"""Bad input raises a clear error before anything is solved; the cost helpers."""

from __future__ import annotations

import numpy as np
import pytest

from aidopt.api.facility import solve_facility_location
from aidopt.data.facility import as_facility_data, euclidean_costs, graph_costs, read_orlib_pmed, read_tsplib

C = np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 4.0], [5.0, 3.0, 1.0], [2.0, 2.0, 2.0]])


@pytest.fixture(autouse=True)
def no_solver(monkeypatch):
    """Every error must come before a solve: any solver call fails the test."""
    import aidopt.solvers as solvers_pkg

    def refuse(*args, **kwargs):
        raise AssertionError("a solver was called")

    monkeypatch.setattr(solvers_pkg, "solve_model", refuse)
    yield


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(p=4), "p must be between 1 and the number of sites"),
    (dict(p=0), "p must be between 1"),
    (dict(p=1.5), "p must be an integer"),
    (dict(), "give p"),
    (dict(fixed_costs=[1.0, 2.0]), "fixed_costs must have 3 entries"),
    (dict(fixed_costs=[1.0, -2.0, 0.0]), "fixed_costs must be non-negative"),
    (dict(fixed_costs=[1.0, np.nan, 0.0]), "fixed_costs contains NaN"),
    (dict(p=2, demand=[1, 1, 1]), "demand must have 4 entries"),
    (dict(p=2, demand=[0, 0, 0, 0]), "total demand is 0"),
    (dict(p=2, demand=[1, -1, 1, 1]), "demand must be non-negative"),
    (dict(p=2, capacity=[1, 1, 1]), "total capacity"),
    (dict(p=2, site_xy=np.zeros((2, 2))), "site_xy must have shape"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        solve_facility_location(C, log=False, **kwargs)


def test_bad_costs():
    bad = C.copy()
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"NaN or infinite value\(s\) \(first at customer 1, site 2\)"):
        as_facility_data(bad, p=1)
    neg = C.copy()
    neg[2, 0] = -1.0
    with pytest.raises(ValueError, match=r"non-negative; costs\[2, 0\] = -1"):
        as_facility_data(neg, p=1)
    with pytest.raises(ValueError, match="non-empty"):
        as_facility_data(np.zeros((0, 3)), p=1)
    with pytest.raises(ValueError, match="numeric"):
        as_facility_data(np.array([["a", "b"]]), p=1)
    with pytest.raises(ValueError, match="numeric|2-d|non-empty"):
        as_facility_data(np.ones(3), p=1)


def test_capacities_need_direct_solve():
    with pytest.raises(ValueError, match="aid=False"):
        solve_facility_location(C, p=2, capacity=[10, 10, 10], log=False)


def test_unknown_option_suggests():
    with pytest.raises(TypeError, match="did you mean 'time_limit'"):
        solve_facility_location(C, p=2, time_limt=3)


def test_graph_costs_disconnected_and_negative():
    nx = pytest.importorskip("networkx")
    g = nx.Graph()
    g.add_weighted_edges_from([(0, 1, 2.0), (2, 3, 1.0)])
    with pytest.raises(ValueError, match="disconnected"):
        graph_costs(g)
    with pytest.raises(ValueError, match="disconnected"):
        graph_costs(g, method="networkx")
    g.add_edge(1, 2, weight=-1.0)
    with pytest.raises(ValueError, match="non-negative weights"):
        graph_costs(g)


def test_graph_costs_methods_agree():
    nx = pytest.importorskip("networkx")
    g = nx.connected_watts_strogatz_graph(40, 4, 0.3, seed=1)
    rng = np.random.default_rng(0)
    for u, v in g.edges:
        g[u][v]["weight"] = float(rng.integers(0, 10))  # zero-length edges included
    a = graph_costs(g)
    b = graph_costs(g, method="networkx")
    np.testing.assert_allclose(a, b)
    sub = graph_costs(g, customers=[0, 1, 2], sites=[5, 6])
    np.testing.assert_allclose(sub, a[np.ix_([0, 1, 2], [5, 6])])


def test_orlib_repeated_edge_last_wins(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_text("3 3 1\n1 2 5\n2 3 1\n1 2 2\n")  # edge 1-2 repeated: 2 wins, not 5
    costs, p = read_orlib_pmed(path)
    assert p == 1
    np.testing.assert_allclose(costs, [[0, 2, 3], [2, 0, 1], [3, 1, 0]])
    costs_nx, _ = read_orlib_pmed(path, method="networkx")
    np.testing.assert_allclose(costs_nx, costs)
    path.write_text("4 1 1\n1 2 5\n")
    with pytest.raises(ValueError, match="disconnected"):
        read_orlib_pmed(path)
    path.write_text("3 2 1\n1 2 5\n")
    with pytest.raises(ValueError, match="header says 2 edges"):
        read_orlib_pmed(path)


def test_tsplib_reader(tmp_path):
    path = tmp_path / "t.tsp"
    path.write_text("NAME: t\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\n"
                    "NODE_COORD_SECTION\n1 0 0\n2 3 4\n3 6 8\nEOF\n")
    xy, kind = read_tsplib(path)
    assert kind == "EUC_2D"
    np.testing.assert_allclose(xy, [[0, 0], [3, 4], [6, 8]])
    np.testing.assert_allclose(euclidean_costs(xy, round_to=0), [[0, 5, 10], [5, 0, 5], [10, 5, 0]])
    path.write_text("NAME: t\nDIMENSION: 3\nEDGE_WEIGHT_SECTION\n0 1 2\n")
    with pytest.raises(ValueError, match="NODE_COORD_SECTION"):
        read_tsplib(path)


def test_module_exports():
    import aidopt.api.facility
    import aidopt.data.facility

    for module in (aidopt.api.facility, aidopt.data.facility):
        assert module.__all__
        for name in module.__all__:
            assert hasattr(module, name), name


def test_huge_costs_are_a_clear_error_before_any_solve():
    """9e307 used to reach the solver (SolverError); costs up to 1e9 stay accepted."""
    costs = np.array([[0.0, 9e307], [1.0, 0.0]])
    with pytest.raises(ValueError, match="1e\\+20"):
        as_facility_data(costs, p=1)
    with pytest.raises(ValueError, match="1e\\+20"):
        as_facility_data(np.ones((2, 2)), fixed_costs=[1.0, 1e300])
    assert as_facility_data(np.array([[0.0, 1e9], [1e9, 0.0]]), p=1).costs.max() == 1e9


# ------------------------------------------------------------ inputs found by a new user's trial
@pytest.mark.parametrize("xy, kwargs, match", [
    (np.array([[0.0, 0.0], [1e200, 1e200]]), {}, "coordinates span"),
    (np.array([[0.0, 0.0], [2e15, 0.0]]), {}, "coordinates span"),
    (np.array([[0.0, 0.0], [1.0, 1.0]]), {"round_to": 1.5}, "round_to must be an integer"),
    (np.array([[0.0, 0.0], [1.0, 1.0]]), {"round_to": True}, "round_to must be an integer"),
])
def test_coordinates_get_the_checks_a_cost_matrix_gets(xy, kwargs, match):
    from aidopt.data.facility import EuclideanCosts, euclidean_costs

    with pytest.raises(ValueError, match=match):
        EuclideanCosts(xy, **kwargs)
    if "round_to" in kwargs:
        with pytest.raises(ValueError, match=match):
            euclidean_costs(xy, **kwargs)


def test_tsplib_coordinate_line_with_two_fields_is_refused(tmp_path):
    from aidopt.data.facility import read_tsplib

    path = tmp_path / "bad.tsp"
    path.write_text("NAME: bad\nTYPE: TSP\nDIMENSION: 2\nEDGE_WEIGHT_TYPE: EUC_2D\n"
                    "NODE_COORD_SECTION\n1 0 0\n2 5\nEOF\n")
    with pytest.raises(ValueError, match="needs 'index x y'"):
        read_tsplib(path)


def test_orlib_pmed_without_edges_and_unknown_method_are_refused(tmp_path):
    from aidopt.data.facility import read_orlib_pmed

    path = tmp_path / "pmed0.txt"
    path.write_text("3 0 1\n")
    with pytest.raises(ValueError, match="no edges"):
        read_orlib_pmed(path)
    path.write_text("2 1 1\n1 2 5\n")
    with pytest.raises(ValueError, match="method must be"):
        read_orlib_pmed(path, method="bogus")


def test_capacitated_p_median_whose_p_largest_capacities_fall_short_is_refused():
    with pytest.raises(ValueError, match="largest capacities"):
        solve_facility_location(np.ones((4, 3)), p=1, capacity=[1.0, 1.0, 5.0],
                                demand=[1.0, 1.0, 2.0, 2.0], aid=False, log=False)
