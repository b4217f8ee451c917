"""GeoDataFrame input (the ``aidopt[geo]`` extra): the answers equal those on the same
coordinates as arrays; CRS, geometry and column checks; the error without geopandas."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from aidopt.api.facility import solve_facility_location
from aidopt.data.facility import euclidean_costs

RNG = np.random.default_rng(3)
CXY = RNG.random((25, 2)) * 5000.0 + 4e5
SXY = RNG.random((7, 2)) * 5000.0 + 4e5
POP = RNG.integers(1, 9, size=25).astype(float)
FIX = RNG.uniform(2e3, 9e3, size=7)
UTM = "EPSG:32633"


def frames(gpd, crs=UTM, site_crs=None):
    cust = gpd.GeoDataFrame({"pop": POP}, geometry=gpd.points_from_xy(CXY[:, 0], CXY[:, 1]),
                            crs=crs, index=[f"c{i}" for i in range(25)])
    sites = gpd.GeoDataFrame({"f": FIX, "cap": np.full(7, 60.0)},
                             geometry=gpd.points_from_xy(SXY[:, 0], SXY[:, 1]),
                             crs=crs if site_crs is None else site_crs)
    return cust, sites


@pytest.mark.parametrize("kwargs", [
    dict(p=3),
    dict(fixed_costs="f"),
    dict(p=2, fixed_open=[4]),
    dict(model="mclp", p=2, radius=1500.0),
    dict(model="lscp", radius=3000.0),
    dict(model="p-center", p=2),
])
def test_frames_solve_like_their_coordinates(kwargs):
    gpd = pytest.importorskip("geopandas")
    cust, sites = frames(gpd)
    res = solve_facility_location(customer_xy=cust, site_xy=sites, log=False,
                                  **({"demand": "pop"} if kwargs.get("model") != "lscp" else {}),
                                  **kwargs)
    plain = dict(kwargs)
    if plain.get("fixed_costs") == "f":
        plain["fixed_costs"] = FIX
    if kwargs.get("model") != "lscp":
        plain["demand"] = POP
    ref = solve_facility_location(euclidean_costs(CXY, SXY), log=False, **plain)
    assert res.certified and ref.certified
    assert res.objective == pytest.approx(ref.objective, rel=1e-9)
    np.testing.assert_allclose(res.solution["customer_xy"], CXY)
    np.testing.assert_allclose(res.solution["site_xy"], SXY)


def test_p_dispersion_and_a_geoseries():
    gpd = pytest.importorskip("geopandas")
    _, sites = frames(gpd)
    res = solve_facility_location(None, model="p-dispersion", p=3, site_xy=sites.geometry,
                                  log=False)
    ref = solve_facility_location(None, model="p-dispersion", p=3, site_xy=SXY, log=False)
    assert res.certified and res.objective == pytest.approx(ref.objective)


def test_capacity_column():
    gpd = pytest.importorskip("geopandas")
    cust, sites = frames(gpd)
    res = solve_facility_location(customer_xy=cust, site_xy=sites, fixed_costs="f",
                                  capacity="cap", demand="pop", aid=False, log=False)
    ref = solve_facility_location(euclidean_costs(CXY, SXY), fixed_costs=FIX, capacity=np.full(
        7, 60.0), demand=POP, aid=False, log=False)
    assert res.objective == pytest.approx(ref.objective, rel=1e-9)


def test_geographic_crs_refused(no_solve):
    gpd = pytest.importorskip("geopandas")
    cust, sites = frames(gpd)
    with pytest.raises(ValueError, match=r"geographic CRS \(EPSG:4326.*to_crs"):
        solve_facility_location(customer_xy=cust.to_crs(4326), site_xy=sites.to_crs(4326), p=2,
                                log=False)


def test_no_crs_and_different_crs_refused(no_solve):
    gpd = pytest.importorskip("geopandas")
    cust, sites = frames(gpd)
    with pytest.raises(ValueError, match="different CRSs"):
        solve_facility_location(customer_xy=cust, site_xy=sites.to_crs(3857), p=2, log=False)
    with pytest.raises(ValueError, match="has no CRS"):
        solve_facility_location(customer_xy=cust.set_crs(None, allow_override=True),
                                site_xy=sites, p=2, log=False)


def test_bad_geometries_named_by_row(no_solve):
    gpd = pytest.importorskip("geopandas")
    from shapely.geometry import Point, Polygon

    cust, sites = frames(gpd)
    holed = cust.copy()
    holed.loc["c4", "geometry"] = None
    with pytest.raises(ValueError, match="row 'c4' has no geometry"):
        solve_facility_location(customer_xy=holed, site_xy=sites, p=2, log=False)
    empty = cust.copy()
    empty.loc["c7", "geometry"] = Point()
    with pytest.raises(ValueError, match="row 'c7' has no geometry"):
        solve_facility_location(customer_xy=empty, site_xy=sites, p=2, log=False)
    square = Polygon([(4e5, 4e5), (4e5 + 10, 4e5), (4e5 + 10, 4e5 + 10)])
    shaped = sites.copy()
    shaped.loc[2, "geometry"] = square
    with pytest.raises(ValueError, match=r"row 2 is a Polygon, not a Point.*centroid"):
        solve_facility_location(customer_xy=cust, site_xy=shaped, p=2, log=False)


def test_centroids_when_asked():
    gpd = pytest.importorskip("geopandas")
    from shapely.geometry import box

    cust, sites = frames(gpd)
    squares = sites.set_geometry([box(x - 5, y - 5, x + 5, y + 5) for x, y in SXY])
    res = solve_facility_location(customer_xy=cust, site_xy=squares.set_geometry(squares.centroid),
                                  p=2, log=False)
    ref = solve_facility_location(euclidean_costs(CXY, SXY), p=2, log=False)
    assert res.certified and res.objective == pytest.approx(ref.objective, rel=1e-9)


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    (dict(demand="people", p=2), ValueError, "customer_xy has no such column"),
    (dict(fixed_costs="cost"), ValueError, "site_xy has no such column"),
])
def test_bad_columns(no_solve, kwargs, error, message):
    gpd = pytest.importorskip("geopandas")
    cust, sites = frames(gpd)
    with pytest.raises(error, match=message):
        solve_facility_location(customer_xy=cust, site_xy=sites, log=False, **kwargs)


def test_mixed_and_misplaced_inputs_refused(no_solve):
    gpd = pytest.importorskip("geopandas")
    cust, sites = frames(gpd)
    with pytest.raises(ValueError, match="customer_xy is a GeoDataFrame but site_xy is not"):
        solve_facility_location(customer_xy=cust, site_xy=SXY, p=2, log=False)
    with pytest.raises(TypeError, match="pass the customers' GeoDataFrame as customer_xy="):
        solve_facility_location(cust, site_xy=sites, p=2, log=False)
    with pytest.raises(ValueError, match="names a column: customer_xy must then be a GeoDataFrame"):
        solve_facility_location(customer_xy=CXY, site_xy=SXY, demand="pop", p=2, log=False)


def test_without_geopandas(monkeypatch):
    """Arrays work as before; a geographic object says how to get geopandas."""
    monkeypatch.setitem(sys.modules, "geopandas", None)  # import geopandas -> ImportError

    class Shapes:  # anything with the geo interface
        __geo_interface__ = {"type": "FeatureCollection", "features": []}

    with pytest.raises(ImportError, match=r"needs geopandas: pip install 'aidopt\[geo\]'"):
        solve_facility_location(customer_xy=Shapes(), site_xy=SXY, p=2, log=False)
    res = solve_facility_location(customer_xy=CXY, site_xy=SXY, p=2, log=False)
    ref = solve_facility_location(euclidean_costs(CXY, SXY), p=2, log=False)
    assert res.certified and res.objective == pytest.approx(ref.objective)


def test_what_looks_geographic():
    import pandas as pd

    from aidopt.data.facility import EuclideanCosts
    from aidopt.data.geo import is_geo

    assert not is_geo(CXY) and not is_geo(EuclideanCosts(CXY, SXY)) and not is_geo(None)
    assert not is_geo(pd.DataFrame(CXY, columns=["x", "y"]))
    assert is_geo(pd.DataFrame({"geometry": [None, None]}))
