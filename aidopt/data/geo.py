"""GeoDataFrame input of :func:`aidopt.solve_facility_location` (the optional extra
``pip install 'aidopt[geo]'``, geopandas): ``customer_xy`` and ``site_xy`` may be
GeoDataFrames or GeoSeries of points, and ``demand`` (a column of the customers' frame),
``fixed_costs`` and ``capacity`` (columns of the sites' frame) may name columns.

The points become plain ``(n, 2)`` coordinate arrays before anything else is checked; distances
are planar, in the units of the frames' CRS, so the CRS must be projected (metres, feet): a
geographic one (degrees, such as EPSG:4326) is refused with the way to reproject, and so are two
frames in different CRSs, a frame without a CRS, missing or empty geometries and geometries other
than points (each named by its row). geopandas is imported only when such an object is given:
without it, arrays work as always and a geographic object is refused with the install hint.
"""

from __future__ import annotations

import numpy as np

__all__ = ["GEO_HINT", "geo_inputs", "is_geo"]

#: how to get the optional extra
GEO_HINT = "pip install 'aidopt[geo]' (geopandas)"


def is_geo(obj) -> bool:
    """Whether ``obj`` looks like geographic data (a geopandas object, anything with
    ``__geo_interface__``, or a pandas frame with a ``geometry`` column) rather than
    coordinates."""
    if obj is None or isinstance(obj, np.ndarray | list | tuple):
        return False
    if type(obj).__module__.split(".")[0] == "geopandas" or hasattr(obj, "__geo_interface__"):
        return True
    if type(obj).__module__.split(".")[0] != "pandas":  # e.g. a cost oracle's .columns()
        return False
    return "geometry" in list(getattr(obj, "columns", ()))


def _geopandas(name: str):
    try:
        import geopandas
    except ImportError as exc:
        raise ImportError(f"{name} looks like geographic data (a GeoDataFrame or shapes): "
                          f"reading it needs geopandas: {GEO_HINT}; or pass an (n, 2) array of "
                          "projected coordinates") from exc
    return geopandas


def _points(obj, name: str):
    """``obj`` (a GeoDataFrame or GeoSeries of points) as ``(xy, frame, crs)``; ``frame`` is the
    GeoDataFrame whose columns other inputs may name (``None`` for a GeoSeries)."""
    gpd = _geopandas(name)
    if isinstance(obj, gpd.GeoDataFrame):
        try:
            geom = obj.geometry
        except AttributeError as exc:  # no active geometry column
            raise ValueError(f"{name}: the GeoDataFrame has no active geometry column "
                             "(set_geometry(...))") from exc
        frame = obj
    elif isinstance(obj, gpd.GeoSeries):
        geom, frame = obj, None
    else:
        raise TypeError(f"{name}: pass a geopandas GeoDataFrame or GeoSeries of points (or an "
                        f"(n, 2) array of coordinates), got {type(obj).__name__}")
    if len(geom) == 0:
        raise ValueError(f"{name}: the frame has no rows")
    crs = geom.crs
    if crs is None:
        raise ValueError(f"{name} has no CRS: distances need a projected one (metres); set the "
                         "CRS the coordinates are in with .set_crs(...), then .to_crs(...) a "
                         "projected one if it is geographic")
    if crs.is_geographic:
        raise ValueError(f"{name} is in a geographic CRS ({crs.to_string()}, degrees): "
                         "distances need a projected CRS; reproject first, e.g. "
                         "gdf.to_crs(gdf.estimate_utm_crs()) or gdf.to_crs('EPSG:3857')")
    missing = np.flatnonzero(np.asarray(geom.isna() | geom.is_empty))
    if missing.size:
        raise ValueError(f"{name}: row {geom.index[int(missing[0])]!r} has no geometry (None "
                         f"or empty; {missing.size} such row(s)): drop or fill them")
    kinds = np.asarray(geom.geom_type)
    other = np.flatnonzero(kinds != "Point")
    if other.size:
        raise ValueError(f"{name}: row {geom.index[int(other[0])]!r} is a {kinds[other[0]]}, not "
                         f"a Point ({other.size} such row(s)); pass points, e.g. "
                         "gdf.set_geometry(gdf.centroid) or gdf.representative_point() to use "
                         "each shape's centroid or an inner point")
    xy = np.column_stack([np.asarray(geom.x, dtype=float), np.asarray(geom.y, dtype=float)])
    return xy, frame, crs


def _column(value, frame, name: str, owner: str):
    """``value`` itself, or the column of ``frame`` it names (a string)."""
    if not isinstance(value, str):
        return value
    if frame is None:
        raise ValueError(f"{name}={value!r} names a column: {owner} must then be a GeoDataFrame "
                         "with that column")
    if value not in frame.columns:
        raise ValueError(f"{name}={value!r}: {owner} has no such column (its columns: "
                         f"{', '.join(map(str, frame.columns))})")
    return np.asarray(frame[value])


def geo_inputs(costs, customer_xy, site_xy, demand, fixed_costs, capacity):
    """The inputs of :func:`aidopt.solve_facility_location` with GeoDataFrames / GeoSeries
    replaced by their points' coordinates and column names by the columns; anything else is
    returned as it is (arrays work without geopandas).

    Returns
    -------
    tuple
        ``(customer_xy, site_xy, demand, fixed_costs, capacity)``.

    Raises
    ------
    ImportError
        A geographic object without geopandas installed.
    TypeError, ValueError
        A GeoDataFrame as ``costs``; not a GeoDataFrame / GeoSeries; no, or a geographic, CRS;
        the two frames in different CRSs; a missing, empty or non-point geometry (naming its row); an unknown column.
    """
    if is_geo(costs):
        raise TypeError("costs is a cost matrix (or oracle): pass the customers' GeoDataFrame as "
                        "customer_xy= and the sites' as site_xy= (with costs=None the costs are "
                        "the Euclidean distances, in the units of their CRS)")
    customer_frame = site_frame = None
    crs = {}
    if is_geo(customer_xy):
        customer_xy, customer_frame, crs["customer_xy"] = _points(customer_xy, "customer_xy")
    if is_geo(site_xy):
        site_xy, site_frame, crs["site_xy"] = _points(site_xy, "site_xy")
    if len(crs) == 2 and crs["customer_xy"] != crs["site_xy"]:
        raise ValueError(f"customer_xy and site_xy are in different CRSs "
                         f"({crs['customer_xy'].to_string()} and {crs['site_xy'].to_string()}): "
                         "reproject one to the other's with .to_crs(...)")
    if len(crs) == 1 and (customer_xy is not None and site_xy is not None):
        given = next(iter(crs))
        other = "site_xy" if given == "customer_xy" else "customer_xy"
        raise ValueError(f"{given} is a GeoDataFrame but {other} is not: pass both as geopandas "
                         "objects in the same CRS (so that their units agree), or both as arrays")
    demand = _column(demand, customer_frame, "demand", "customer_xy")
    fixed_costs = _column(fixed_costs, site_frame, "fixed_costs", "site_xy")
    capacity = _column(capacity, site_frame, "capacity", "site_xy")
    return customer_xy, site_xy, demand, fixed_costs, capacity
