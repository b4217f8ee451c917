"""Facility location with certified AID: ``solve_facility_location`` and a map plot (the inputs,
their validation and the readers are in :mod:`aidopt.data.facility`).

p-median (``p``) and uncapacitated facility location (``fixed_costs``) on an
``n_customers x n_sites`` cost matrix are solved by AID (the mathematics in docs/facility.md):

* ``aggregation="radius"`` (default,
  :class:`aidopt.decomposition.plugins.facility_radius.FacilityRadiusProblem`): every customer keeps its
  nearest cost levels, and the sites beyond its radius are grouped and priced at the cheapest of
  them (a relaxation); radii grow where the aggregated solution serves a customer beyond its
  radius, until none does;
* ``aggregation="sites"`` (:class:`aidopt.decomposition.plugins.facility.FacilityProblem`): sites are
  clustered, a cluster opens at the cheapest opening cost of its sites and serves each customer
  at the cheapest of its sites' costs (a relaxation), a real site is picked in every open cluster
  (an upper bound), and clusters whose pick does not attain those minima are split.

Either way the bound is an aggregated MIP's dual bound and the certificate its gap to the best
lifted solution.

The covering models (``model="mclp"``: maximal covering, ``model="lscp"``: location set
covering, also capacitated with ``capacity``, split or single-sourcing, ``model="lscp-b"``:
backup coverage; with a coverage ``radius``) are solved in one MIP on exactly aggregated rows
(:class:`aidopt.decomposition.plugins.covering.CoveringProblem`; the LSCP variants' inputs in
:mod:`aidopt.api._lscp`), certified by its bound.

The p-center (``model="p-center"``) and the p-dispersion (``model="p-dispersion"``) are solved
by a bisection over the distinct distance levels (:func:`aidopt.decomposition.levels.level_search`,
the tests in :mod:`aidopt.decomposition.plugins.center`), certified by a feasible optimal level
and a proof that the level just below is infeasible.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import time

import numpy as np

from aidopt.api import _front
from aidopt.api._fixed_open import FixedOpen, check_fixed_open
from aidopt.api._params import Family, Param
from aidopt.api.facility_plot import plot_facility
from aidopt.data.coverage import CoverageTimeLimit, aggregate_rows, coverage_sets, drop_dominated, stream_rows
from aidopt.data.facility import FacilityData, _coords, _vector, as_facility_data, cost_matrix, nearest_sites
from aidopt.data.geo import geo_inputs
from aidopt.decomposition.plugins import covering_rows
from aidopt.decomposition.plugins.covering import CoveringData, CoveringProblem
from aidopt.decomposition.plugins.covering_rows import CoveringRowsProblem
from aidopt.decomposition.plugins.facility import FacilityProblem, bounded
from aidopt.decomposition.plugins.facility_benders import FacilityBendersProblem
from aidopt.decomposition.plugins.facility_radius import FacilityRadiusProblem
from aidopt.decomposition.run import RunConfig
from aidopt.results import AIDResult

__all__ = ['solve_facility_location', 'plot_facility']

#: the default ``solver`` of the uncapacitated radius plug-in: its native branch-and-Benders-cut
#: (SCIP, a core dependency); the site aggregation and capacitated problems default to HiGHS
DEFAULT_FACILITY_SOLVER = "benders"

#: what AID may aggregate (``solve_facility_location(aggregation=...)``)
AGGREGATIONS = ("radius", "sites")

#: the models of ``solve_facility_location(model=...)``; None: "p-median" with ``p``, "ufl"
#: with ``fixed_costs`` only
MODELS = ("p-median", "ufl", "mclp", "lscp", "lscp-b", "p-center", "p-dispersion")

#: the covering models (with a ``radius``)
COVERING = ("mclp", "lscp", "lscp-b")

#: the models solved by a search over distance levels (no ``radius``: the level is the answer)
LEVEL_MODELS = ("p-center", "p-dispersion")
#: the values of ``rows`` (how the uncapacitated LSCP is solved)
ROWS = ("auto", "all", "subset")

#: the parameters of facility location: the one declaration behind solve_facility_location and
#: ``aidopt facility``
FACILITY = Family(
    "facility",
    Param("aggregation", "radius",
          "What AID aggregates (docs/facility.md). ``\"radius\"``: each customer's far sites, "
          "grouped beyond a per-customer radius and priced at the cheapest of them "
          "(:class:`aidopt.decomposition.plugins.facility_radius.FacilityRadiusProblem`); "
          "``\"sites\"``: clusters of candidate sites "
          "(:class:`aidopt.decomposition.plugins.facility.FacilityProblem`). With ``aid=False`` "
          "both solve their full model (the radius formulation, or the textbook strong "
          "formulation); capacities always use the latter.",
          choices=AGGREGATIONS),
    Param("mip_gap", None,
          "Relative gap of every aggregated MIP (default ``min(1e-7, tol / 10)``).",
          kind="float", parse=float),
    Param("improve", 3, "Rounds of the alternating improvement of every lifted solution."),
    Param("grow", 2.0,
          "``aggregation=\"radius\"``: a violating customer's far price grows at least this "
          "factor (:class:`~aidopt.decomposition.plugins.facility_radius.FacilityRadiusProblem`)."),
    Param("lp_rounds", 200,
          "``aggregation=\"radius\"``: most rounds of the cutting-plane LP that bounds the "
          "problem and sets the radii before the first MIP (0: no LP phase; docs/facility.md)."),
    Param("branching", "auto",
          "``solver=\"benders\"``: how the branch and cut branches (docs/facility.md, "
          "\"Branching on balls\"). ``\"auto\"``: on balls of a customer's cheapest sites for a "
          "p-median with at least 40 customers per open site and in the support MIP, else on "
          "single sites (SCIP's own); ``\"sites\"`` / ``\"balls\"``: that one everywhere.",
          choices=("auto", "sites", "balls")),
    Param("max_children", 8,
          "``aggregation=\"sites\"``: most clusters a split makes of one cluster "
          "(:class:`aidopt.decomposition.plugins.facility.FacilityProblem`)."),
    Param("prune", True,
          "``aggregation=\"sites\"``: leave out sites that cannot be in an optimal solution.",
          flag_help="aggregation=sites: keep every site, also those that cannot be in an optimal "
                    "solution."),
    Param("far", False,
          "``aggregation=\"sites\"``: also split clusters by the customers' far sites."),
    Param("engine", None,
          "Covering models (``model=\"mclp\"`` / ``\"lscp\"``) only: ``\"dask\"`` reads the "
          "demand points ``customer_xy`` (a dask array, a ``.npy`` / Zarr path or an array) chunk "
          "by chunk, aggregates each chunk's coverage sets and merges them, so memory holds the "
          "distinct rows, not the points (docs/facility.md, docs/dask.md); ``\"numpy\"`` holds "
          "them. Default: ``\"dask\"`` when ``customer_xy`` is a dask array, a ChunkedMatrix "
          "or a path, else ``\"numpy\"``.",
          choices=("numpy", "dask"), flag="", estimator=False),
    Param("single_source", False,
          "The capacitated LSCP (``model=\"lscp\"`` with ``capacity``) only: serve each demand "
          "point wholly by one open site within the radius (single-sourcing; "
          "``solution[\"assign\"]`` its site) instead of splitting its demand among several "
          "(docs/facility.md)."),
    Param("fixing", True,
          "``model=\"mclp\"`` with HiGHS: solve the aggregated MIP by its LP relaxation "
          "(interior point), a heuristic incumbent and reduced-cost fixing, then the MIP on the "
          "sites left (:mod:`aidopt.decomposition.plugins.covering_fixing`; docs/facility.md); "
          "``False``: one plain MIP solve.",
          flag_help="model=mclp: one plain HiGHS MIP solve of the aggregated rows, without the "
                    "LP, the heuristic and the reduced-cost fixing."),
    Param("rows", "auto",
          "``model=\"lscp\"`` without capacities: ``\"all\"`` solves one MIP on every exactly "
          "aggregated row; ``\"subset\"`` runs AID over the rows, the LSCP on a subset of them "
          "grown by the rows its cover misses, certified on every point "
          "(:mod:`aidopt.decomposition.plugins.covering_rows`; docs/facility.md); ``\"auto\"``: "
          "the subset when more than "
          "``covering_rows.SUBSET_ROWS`` rows remain after the dominance test.",
          choices=ROWS),
    Param("far_factor", 1.5,
          "``aggregation=\"sites\", far=True``: a customer's near clusters are those within "
          "this factor of its reference cost (and at least its 4 cheapest); the others are "
          "priced by one far column."),
)


# --------------------------------------------------------------------------- the front door
@FACILITY.door(namespace="opts")
def solve_facility_location(costs=None, p=None, fixed_costs=None, demand=None, *, capacity=None,
                            customer_xy=None, site_xy=None, model=None, radius=None,
                            fixed_open=None, opts, **options) -> AIDResult:
    r"""Uncapacitated p-median or facility location, solved by AID and certified; or a covering
    model (MCLP, LSCP) solved exactly on aggregated rows and certified.

    :math:`\min \sum_j f_j y_j + \sum_i \sum_j w_i c_{ij} x_{ij}` over open sites ``y`` (at most
    ``p`` for the p-median) and assignments ``x`` (every customer served by an open site).

    With ``model="mclp"`` (maximal covering, Church & ReVelle 1974): open ``p`` sites to cover
    the most demand weight, a point being covered by an open site at cost at most ``radius``;
    with ``model="lscp"`` (location set covering, Toregas et al. 1971): the fewest sites (the
    least opening cost with ``fixed_costs``) that cover every point (docs/facility.md); with
    ``capacity`` too, the capacitated LSCP (Current & Storbeck 1988): each point's ``demand``
    (default 1) is served, possibly split, by open sites within ``radius``, no site above its
    capacity (``single_source=True``: each point served wholly by one of them); with
    ``model="lscp-b"`` (backup coverage, Hogan & ReVelle 1986): among the covers with the
    LSCP's least number of sites, one covering the most ``demand`` weight twice.

    With ``model="p-center"``: open ``p`` sites so that the largest distance from a point to
    its nearest open site, times the point's ``demand`` weight when given, is least; with
    ``model="p-dispersion"``: choose ``p`` sites whose smallest pairwise distance is largest.
    Both are solved by a bisection over the distinct distances, each level tested by a MIP, and
    certified by the optimal level's solution and a proof that the level below is infeasible.

    Parameters
    ----------
    costs : array-like (n_customers, n_sites), EuclideanCosts or GraphCosts
        Assignment cost per unit of demand, finite and non-negative (helpers in
        :mod:`aidopt.data.facility`: ``euclidean_costs``, ``graph_costs``, ``read_orlib_pmed``,
        ``tsplib_costs``); or :class:`~aidopt.data.facility.EuclideanCosts` (coordinates) or
        :class:`~aidopt.data.facility.GraphCosts` (shortest paths on a graph): the costs are
        computed when needed, never held as a matrix; ``solver="benders"``, the covering
        models and the p-center only. ``costs=None`` with ``customer_xy`` and ``site_xy``:
        their Euclidean distances (in the units of a GeoDataFrame's CRS): a matrix for the
        p-median and UFL, computed in blocks from the coordinates for the covering models and
        the p-center (the covering models' points also out of core, ``engine="dask"``).
        ``model="p-dispersion"``: the site x site distances (square, symmetric, zero
        diagonal, finite, non-negative), or an ``EuclideanCosts`` (its sites' distances), or
        ``None`` with ``site_xy``.
    p : int, optional
        p-median: at most ``p`` sites open (OR-Library's "exactly p" has the same optimum; the
        returned solution opens exactly p whenever the lift can use them).
    fixed_costs : array-like (n_sites,), optional
        Opening costs (uncapacitated facility location). ``p`` and ``fixed_costs`` together: a
        p-median with opening costs.
    demand : array-like (n_customers,) or str, optional
        Non-negative demand weights (default 1); a string names a column of the
        ``customer_xy`` GeoDataFrame (as does a string ``fixed_costs`` or ``capacity`` of the
        ``site_xy`` one).
    capacity : array-like (n_sites,), optional
        Capacities: capacitated facility location, solved directly only (``aid=False``); a
        customer's demand may then be split (``solution["shares"]``). With
        ``model="lscp"``: the capacitated LSCP (``demand`` the quantities, default 1;
        ``solution["shares"]`` a sparse n_customers x n_sites matrix of the shares served;
        with ``single_source=True`` each point is served whole by one site,
        ``solution["assign"]`` its site; ``solution["load"]`` the sites' loads).
    customer_xy, site_xy : array-like (., 2), GeoDataFrame or GeoSeries of points, optional
        Coordinates: the initial clustering and the split use ``site_xy``; the map
        (``result.plot(kind="map")``, :func:`plot_facility`) draws both. GeoDataFrames
        (``pip install 'aidopt[geo]'``, :mod:`aidopt.data.geo`) must both be in one projected
        CRS and hold points only. With ``engine="dask"`` (MCLP, LSCP): ``customer_xy`` a dask
        array, a :class:`~aidopt.data.chunked.ChunkedMatrix`, a ``.npy`` / Zarr path or an
        array, read chunk by chunk (docs/facility.md, "Covering models at scale").
    model : {None, "p-median", "ufl", "mclp", "lscp", "lscp-b", "p-center", "p-dispersion"}
        The problem (None: the p-median when ``p`` is given, else UFL, as before). ``"mclp"``
        takes ``p``, ``radius`` and optionally ``demand`` (the points' weights) and
        ``fixed_open``; ``"lscp"`` takes ``radius`` and optionally ``fixed_costs``,
        ``fixed_open`` and ``capacity`` with ``demand`` (and ``single_source``); ``"lscp-b"``
        takes ``radius`` and optionally ``demand`` (the backup weights) and ``fixed_open``;
        ``"p-center"`` takes ``p`` and optionally ``demand`` (weights) and ``fixed_open``;
        ``"p-dispersion"`` takes ``p`` (at least 2) and optionally ``fixed_open``. The AID
        parameters below do not apply to them and are refused when given (``mip_gap`` does
        apply).
    radius : float, optional
        Covering models only: point i is covered by site j when ``costs[i, j] <= radius``
        (positive and finite).
    fixed_open : array-like of int, optional
        Distinct site indices open whatever the solution (at most ``p`` when there is a ``p``),
        every model. The p-median and UFL solve an exact reduction with every method
        (:mod:`aidopt.api._fixed_open`; not with ``capacity``), ``solution["fixed_open"]``
        lists them and the certificate checks them open on the original data.

    Returns
    -------
    AIDResult
        ``solution["open"]`` (sorted site indices), ``solution["assign"]`` (a site per customer),
        ``objective``, ``lower_bound`` (the best aggregated MIP dual bound), ``gap``;
        ``termination == "certified_optimal"`` when the gap is within ``tol``. Covering models:
        ``solution["open"]`` (a list of ints) and ``solution["rows"]`` (the aggregated rows);
        MCLP: ``objective`` is the uncovered weight (minimised), ``solution["covered"]`` the
        covered weight; LSCP: ``objective`` the opening cost (the number of sites without
        ``fixed_costs``), ``solution["n_open"]`` the number of sites; the capacitated LSCP
        also ``solution["shares"]`` (split) or ``solution["assign"]`` (single-sourcing; -1 for
        a point of demand 0 no open site covers), ``solution["load"]`` and
        ``solution["capacity"]``; LSCP-B: ``objective``
        the weight not covered twice (minimised), ``solution["backup"]`` the weight covered
        twice, ``solution["lscp_sites"]`` the LSCP's least number of sites. p-center: ``objective``
        the radius, ``solution["assign"]`` each point's nearest open site; p-dispersion:
        ``objective`` *minus* the smallest distance between chosen sites (reported as a
        minimisation, so ``lower_bound <= objective``), ``solution["dispersion"]`` that
        distance. Both: ``solution["search"]`` the levels and proofs of the certificate.

    Examples
    --------
    >>> import numpy as np, aidopt
    >>> from aidopt.data import euclidean_costs
    >>> rng = np.random.default_rng(0)
    >>> pts = rng.random((60, 2))
    >>> res = aidopt.solve_facility_location(euclidean_costs(pts), p=4, log=False)
    >>> res.certified, len(res.solution["open"])
    (True, 4)
    """
    customer_xy, site_xy, demand, fixed_costs, capacity = geo_inputs(  # GeoDataFrames: points
        costs, customer_xy, site_xy, demand, fixed_costs, capacity)
    kind = _model_kind(model, p, fixed_costs, radius, fixed_open)
    if opts.single_source and (kind != "lscp" or capacity is None):
        raise ValueError("single_source=True is the single-sourcing capacitated LSCP: pass "
                         "model='lscp' with capacity (got "
                         + (f"model={kind!r})" if kind != "lscp" else "no capacity)"))
    if opts.rows not in ROWS:
        raise ValueError(f"rows must be one of {ROWS}, got {opts.rows!r}")
    if opts.rows != "auto" and (kind != "lscp" or capacity is not None):
        raise ValueError(f"rows={opts.rows!r} chooses how the uncapacitated LSCP is solved: "
                         "it applies to model='lscp' without capacity only (got "
                         + (f"model={kind!r})" if kind != "lscp" else "a capacity)"))
    engine = _engine(kind, customer_xy, opts.engine)
    if engine == "dask":  # the covering models with their points out of core
        return _solve_covering(kind, costs, p=p, fixed_costs=fixed_costs, demand=demand,
                               capacity=capacity, customer_xy=customer_xy, site_xy=site_xy,
                               radius=radius, fixed_open=fixed_open, opts=opts, options=options,
                               engine=engine)
    if kind in LEVEL_MODELS:
        return _solve_levels(kind, costs, p=p, fixed_costs=fixed_costs, demand=demand,
                             capacity=capacity, customer_xy=customer_xy, site_xy=site_xy,
                             fixed_open=fixed_open, opts=opts, options=options)
    if costs is None:
        costs = _coordinate_costs(kind, customer_xy, site_xy)
    if kind in COVERING:
        return _solve_covering(kind, costs, p=p, fixed_costs=fixed_costs, demand=demand,
                               capacity=capacity, customer_xy=customer_xy, site_xy=site_xy,
                               radius=radius, fixed_open=fixed_open, opts=opts, options=options)
    if opts.aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {opts.aggregation!r}")
    # the default solver: branch-and-Benders-cut for the radius plug-in without capacities
    # (docs/benchmarks.md: faster on every instance measured), HiGHS for the others
    in_tree = opts.aggregation == "radius" and capacity is None
    config = RunConfig.from_kwargs(options, caller="solve_facility_location",
                                   solver=DEFAULT_FACILITY_SOLVER if in_tree else "highs")
    data = as_facility_data(costs, p=p, fixed_costs=fixed_costs, demand=demand, capacity=capacity,
                            customer_xy=customer_xy, site_xy=site_xy)
    if capacity is not None and config.aid:
        raise ValueError("capacitated facility location is solved directly: pass aid=False "
                         "(AID's lift does not handle capacities, docs/facility.md)")
    original, forced = data, None
    if fixed_open is not None and np.size(fixed_open):  # an exact reduction (docs/facility.md)
        forced = FixedOpen(data, fixed_open)
        data = forced.reduced
    mip_gap = min(1e-7, config.tol / 10.0) if opts.mip_gap is None else opts.mip_gap
    # every option is checked, also those the chosen method does not use: each plug-in's
    # constructor checks its own
    benders = FacilityBendersProblem(mip_gap=mip_gap, improve=opts.improve,
                                     lp_rounds=opts.lp_rounds, branching=opts.branching)
    radius = FacilityRadiusProblem(mip_gap=mip_gap, improve=opts.improve, grow=opts.grow,
                                   lp_rounds=opts.lp_rounds)
    sites = FacilityProblem(mip_gap=mip_gap, max_children=opts.max_children,
                            improve=opts.improve, prune=opts.prune, far=opts.far,
                            far_factor=opts.far_factor)
    if config.solver == "benders":
        if capacity is not None or opts.aggregation != "radius":
            raise ValueError("solver='benders' separates the radius formulation's cuts of an "
                             "uncapacitated problem: use aggregation='radius' and no capacity")
        problem = benders
    elif not data.dense:
        raise ValueError("costs given by an oracle (EuclideanCosts, GraphCosts) are solved by "
                         "solver='benders' only (the other methods need the cost matrix)")
    elif opts.aggregation == "radius" and capacity is None:
        problem = radius
    else:  # the site clusters; with capacities its trivial partition is the direct textbook model
        problem = sites
    # the costs the solvers see: none above what a solution as cheap as a greedy one can pay
    # (a huge cost, e.g. a forbidden pair, would set their scale; docs/facility.md); its time
    # counts against the run's limit
    start = time.perf_counter()
    if data.dense:
        data = bounded(data)
    result = _front.run_problem(problem, data, _less_time(config, start))
    while capacity is not None and data.raw_costs is not None:
        # split demand may use a lowered pair (or open a lowered site): raise those toward
        # the user's costs and solve again (the certificate already priced them at the user's)
        restored = _restored(data, result.solution)
        spent = time.perf_counter() - start
        if (restored is None or result.termination == "interrupted"
                or (config.time_limit is not None and spent >= config.time_limit)):
            break
        data = restored
        result = _front.run_problem(problem, data, _less_time(config, start))
    if forced is not None:
        result = forced.lift(result, config.tol)
    result.solution["kind"] = original.kind
    if customer_xy is not None or site_xy is not None:
        result.solution["customer_xy"] = original.customer_xy
        result.solution["site_xy"] = original.site_xy
    return result


def _model_kind(model, p, fixed_costs, radius, fixed_open):
    """The checked ``model`` of :func:`solve_facility_location` (None for the p-median / UFL as
    ``p`` and ``fixed_costs`` say)."""
    if model is not None and model not in MODELS:
        raise ValueError(f"model must be one of {MODELS} or None, got {model!r}")
    if model in COVERING:
        if radius is None:
            raise ValueError(f"model={model!r} needs a coverage radius: pass radius=R (a point "
                             "is covered by a site at cost at most R)")
        return model
    if radius is not None:
        raise ValueError("radius is the coverage radius of the covering models: pass "
                         "model='mclp' or model='lscp' with it"
                         + (f" (model={model!r} finds its radius itself)"
                            if model == "p-center" else ""))
    if model in LEVEL_MODELS:
        if p is None:
            raise ValueError(f"model={model!r} needs p, the number of sites to open")
        return model
    if model == "p-median" and p is None:
        raise ValueError("model='p-median' needs p")
    if model == "ufl" and fixed_costs is None:
        raise ValueError("model='ufl' needs fixed_costs")
    return model


def _coordinate_costs(kind, customer_xy, site_xy):
    """``costs=None``: the Euclidean distances between ``customer_xy`` and ``site_xy`` (a
    covering model reads them from the coordinates' oracle, the p-median and UFL as a matrix,
    which every method takes)."""
    from aidopt.data.facility import EuclideanCosts, euclidean_costs

    if customer_xy is None or site_xy is None:
        raise ValueError("costs is required (an n_customers x n_sites matrix or a cost oracle), "
                         "or both customer_xy and site_xy (Euclidean distances)")
    if kind in COVERING:
        return EuclideanCosts(customer_xy, site_xy)
    return euclidean_costs(customer_xy, site_xy)


def _check_radius(radius) -> float:
    if isinstance(radius, bool) or not isinstance(radius, numbers.Real):
        raise ValueError(f"radius must be a positive finite number, got {radius!r}")
    radius = float(radius)
    if not (math.isfinite(radius) and radius > 0):
        raise ValueError(f"radius must be a positive finite number, got {radius!r}")
    return radius


def _check_p(p, s: int, open0, least: int = 1) -> int:
    """``p`` as an int in ``least..s`` and at least the forced sites' count."""
    if isinstance(p, float) and p.is_integer():
        p = int(p)
    if isinstance(p, bool) or not isinstance(p, numbers.Integral) or not least <= p <= s:
        raise ValueError(f"p must be an integer between {least} and the number of sites ({s}), "
                         f"got {p!r}")
    p = int(p)
    if open0.size > p:
        raise ValueError(f"fixed_open forces {open0.size} sites open, more than p = {p}")
    return p


def _refuse_aid_options(kind, opts, why: str, takes=()) -> None:
    """AID's options (all but ``mip_gap`` and those ``kind`` ``takes``) would be silently
    ignored by ``kind``: refuse them."""
    unused = sorted(name for name, param in FACILITY.params.items()
                    if name not in ("mip_gap", "engine", "single_source", "fixing", *takes)
                    and getattr(opts, name) != param.default)
    if unused:
        raise ValueError(f"model={kind!r} {why}: {', '.join(unused)} do(es) not apply (only "
                         "mip_gap does)")


def _site_distances(costs, site_xy):
    """The p-dispersion's site x site distances: ``costs`` checked as such a matrix (square,
    symmetric, zero diagonal; finite and non-negative by :func:`cost_matrix`), an
    ``EuclideanCosts``' sites, or ``site_xy``."""
    from aidopt.data.facility import EuclideanCosts, GraphCosts

    if costs is None:
        if site_xy is None:
            raise ValueError("model='p-dispersion' needs the distances between the candidate "
                             "sites: a site x site matrix as costs, or site_xy (coordinates)")
        xy = np.asarray(site_xy, dtype=float)
        if xy.ndim != 2 or xy.shape[0] < 1:
            raise ValueError(f"site_xy must be an (n_sites, d) array, got shape {xy.shape}")
        return EuclideanCosts(xy)
    if isinstance(costs, EuclideanCosts):
        return EuclideanCosts(costs.site_xy, round_to=costs.round_to, rounding=costs.rounding,
                              block=costs.block)
    if isinstance(costs, GraphCosts):
        raise ValueError("model='p-dispersion' needs site x site distances: pass them as a "
                         "matrix (e.g. graph_costs(g, customers=sites, sites=sites))")
    arr = cost_matrix(costs)
    n, s = arr.shape
    if n != s:
        raise ValueError(f"model='p-dispersion' takes the site x site distances as costs (a "
                         f"square matrix), got shape {arr.shape}; for coordinates pass "
                         "site_xy and costs=None")
    diag = np.flatnonzero(np.diagonal(arr) != 0)
    if diag.size:
        j = int(diag[0])
        raise ValueError(f"site distances must have a zero diagonal; costs[{j}, {j}] = "
                         f"{arr[j, j]:g}")
    asym = np.argwhere(arr != arr.T)
    if asym.size:
        j, k = (int(v) for v in asym[0])
        raise ValueError(f"site distances must be symmetric; costs[{j}, {k}] = {arr[j, k]:g} but "
                         f"costs[{k}, {j}] = {arr[k, j]:g}")
    return arr


def _solve_levels(kind, costs, *, p, fixed_costs, demand, capacity, customer_xy, site_xy,
                  fixed_open, opts, options) -> AIDResult:
    """The p-center and the p-dispersion (:func:`solve_facility_location` with
    ``model="p-center"`` / ``"p-dispersion"``): every input checked, then the bisection over
    the distance levels (:func:`aidopt.decomposition.levels.level_search`)."""
    from aidopt.data.facility import EuclideanCosts
    from aidopt.decomposition.levels import level_search
    from aidopt.decomposition.plugins.center import PCenterTest, PDispersionTest

    config = RunConfig.from_kwargs(options, caller="solve_facility_location", solver="highs")
    config = dataclasses.replace(config, aid=False)
    _refuse_aid_options(kind, opts, "is solved by a search over distance levels")
    for name, value in (("fixed_costs", fixed_costs), ("capacity", capacity)):
        if value is not None:
            raise ValueError(f"model={kind!r} takes no {name}")
    mip_gap = min(1e-7, config.tol / 10.0) if opts.mip_gap is None else opts.mip_gap
    if not (isinstance(mip_gap, float | int) and not isinstance(mip_gap, bool)
            and 0 <= mip_gap < 1):
        raise ValueError(f"mip_gap must be in [0, 1), got {mip_gap!r}")
    if kind == "p-dispersion":
        if demand is not None:
            raise ValueError("model='p-dispersion' spreads the sites apart and takes no demand")
        dist = _site_distances(costs, site_xy)
        s = int(dist.shape[0])
        open0 = check_fixed_open(fixed_open, s, repeats="warn")
        p = _check_p(p, s, open0, least=2)
        sxy = _coords(site_xy, "site_xy", s)
        result = level_search(PDispersionTest(dist, p, open0, mip_gap), config)
        if result.solution:
            result.solution["upper_bound"] = -float(result.lower_bound)
            if sxy is not None:
                result.solution["site_xy"] = sxy
        return result
    if config.solver == "highs" and config.threads is None:
        # the level tests' HiGHS MIPs on one thread unless told otherwise: on TSPLIB u1432 and
        # fl1400 as fast or faster at every p measured, and u1432 at p = 20 certified in 33 s
        # where two threads ran out of 60 s (docs/benchmarks/facility.md)
        config = dataclasses.replace(config, threads=1)
    if costs is None:
        if customer_xy is None or site_xy is None:
            raise ValueError("model='p-center' needs costs (n_customers x n_sites) or both "
                             "customer_xy and site_xy (Euclidean distances)")
        costs = EuclideanCosts(customer_xy, site_xy)
    arr = cost_matrix(costs)
    n, s = (int(v) for v in arr.shape)
    open0 = check_fixed_open(fixed_open, s, repeats="warn")
    p = _check_p(p, s, open0)
    weight = np.ones(n) if demand is None else _vector(demand, "demand", n)
    if weight.sum() <= 0:
        raise ValueError("total demand is 0: no point needs a site")
    cxy, sxy = _coords(customer_xy, "customer_xy", n), _coords(site_xy, "site_xy", s)
    kept = np.flatnonzero(weight > 0)  # a point of weight 0 is at weighted distance 0
    sub = arr if kept.size == n else _points(arr, kept)
    result = level_search(PCenterTest(sub, weight[kept], p, open0, mip_gap), config)
    if result.solution:
        open_ = np.asarray(result.solution["open"], dtype=np.int64)
        result.solution["assign"] = nearest_sites(arr, open_)
        if kept.size < n:
            note = f"{n - kept.size} point(s) of weight 0 left out of the search"
            result.message = f"{result.message}; {note}" if result.message else note
        if cxy is not None or sxy is not None:
            result.solution["customer_xy"] = cxy
            result.solution["site_xy"] = sxy
    return result


class _PointSubset:
    """The rows ``kept`` of a cost oracle (the points of positive weight), as an oracle."""

    def __init__(self, costs, kept):
        self.costs, self.kept = costs, np.asarray(kept, dtype=np.int64)
        self.shape = (int(self.kept.size), int(costs.shape[1]))

    def rows(self, customers):
        return self.costs.rows(self.kept[np.asarray(customers, dtype=np.int64)])

    def columns(self, sites):
        return self.costs.columns(sites)[self.kept]

    def pairs(self, customers, sites):
        return self.costs.pairs(self.kept[np.asarray(customers, dtype=np.int64)], sites)


def _points(costs, kept):
    """``costs`` restricted to the points ``kept``: a matrix's rows, coordinates' points (the
    k-d tree still serves them), another oracle's rows read through :class:`_PointSubset`."""
    from aidopt.data.facility import EuclideanCosts

    if isinstance(costs, np.ndarray):
        return costs[kept]
    if isinstance(costs, EuclideanCosts):
        return EuclideanCosts(costs.customer_xy[kept], costs.site_xy, round_to=costs.round_to,
                              rounding=costs.rounding, block=costs.block)
    return _PointSubset(costs, kept)


def _engine(kind, customer_xy, engine):
    """The data engine of ``kind``: ``engine``, or for None ``"dask"`` when the covering models'
    ``customer_xy`` is out of core; ``"dask"`` is refused for the other models."""
    from aidopt.data.chunked import is_out_of_core

    if engine is None:
        return "dask" if kind in COVERING and is_out_of_core(customer_xy) else "numpy"
    if engine == "dask" and kind not in COVERING:
        raise ValueError("engine='dask' is offered by the covering models (model='mclp' or "
                         f"'lscp') only, not by model={kind!r}")
    return engine


def _lonely_error(lonely, count: int, radius: float) -> ValueError:
    """LSCP is infeasible: the points ``lonely`` (the first few of ``count``) have no site."""
    shown = ", ".join(str(int(i)) for i in lonely[:10])
    more = f" and {count - 10} more" if count > 10 else ""
    return ValueError(f"LSCP is infeasible: demand point(s) {shown}{more} have no candidate "
                      f"site within radius {radius:g}")


def _solve_covering(kind, costs, *, p, fixed_costs, demand, capacity, customer_xy, site_xy,
                    radius, fixed_open, opts, options, engine="numpy") -> AIDResult:
    """MCLP / LSCP (:func:`solve_facility_location` with ``model="mclp"`` / ``"lscp"``): every
    input checked, the coverage sets computed and aggregated, then one MIP solve; the coverage
    computation counts against ``time_limit``. ``engine="dask"``: the points are read chunk by
    chunk (:func:`aidopt.data.coverage.stream_rows`) and the certificate evaluates the open
    sites on them chunk by chunk."""
    start = time.perf_counter()
    config = RunConfig.from_kwargs(options, caller="solve_facility_location", solver="highs")
    config = dataclasses.replace(config, aid=False)  # exact aggregation: one solve
    radius = _check_radius(radius)
    if capacity is not None and kind == "mclp":
        raise ValueError(f"model={kind!r} takes no capacity")
    _refuse_aid_options(kind, opts, "solves one MIP after an exact aggregation",
                        takes=("rows",) if kind == "lscp" and capacity is None else ())
    streamed = engine == "dask"
    if streamed:
        from aidopt.data.coverage import open_points

        if kind == "lscp-b" or capacity is not None:
            raise ValueError("engine='dask' covers model='mclp' and the LSCP without capacity "
                             f"(got model={kind!r}" + (" with capacity)" if capacity is not None
                                                        else ")"))
        if costs is not None or site_xy is None:
            raise ValueError("engine='dask' streams the demand points' coordinates: pass "
                             "customer_xy (a dask array, a .npy / Zarr path or an array) and "
                             "site_xy, with costs=None")
        points, weight, weight_column = open_points(customer_xy, demand)
        n = int(points.shape[0])
        sxy = np.asarray(site_xy, dtype=float)
        if sxy.ndim != 2 or sxy.shape[1] != points.shape[1] - weight_column or not len(sxy):
            raise ValueError(f"site_xy must be an (n_sites, {points.shape[1] - weight_column}) "
                             f"array like customer_xy's points, got shape {sxy.shape}")
        s = int(len(sxy))
    else:
        arr = cost_matrix(costs)
        n, s = (int(v) for v in arr.shape)
    open0 = check_fixed_open(fixed_open, s, repeats="warn")
    if kind == "lscp-b" or capacity is not None:  # the LSCP variants: aidopt/api/_lscp.py
        from aidopt.api._lscp import solve_lscp_variant

        cxy, sxy = _coords(customer_xy, "customer_xy", n), _coords(site_xy, "site_xy", s)
        result = solve_lscp_variant(
            kind, arr, radius=radius, p=p, fixed_costs=fixed_costs, demand=demand,
            capacity=capacity, open0=open0, config=config,
            mip_gap=min(1e-7, config.tol / 10.0) if opts.mip_gap is None else opts.mip_gap,
            start=start, less_time=_less_time, single_source=opts.single_source)
        if cxy is not None or sxy is not None:
            result.solution["customer_xy"], result.solution["site_xy"] = cxy, sxy
        return result
    if kind == "mclp":
        if p is None:
            raise ValueError("model='mclp' needs p, the number of sites to open")
        if fixed_costs is not None:
            raise ValueError("model='mclp' opens p sites and takes no fixed_costs (use "
                             "model='lscp' for the least-cost cover)")
        p = _check_p(p, s, open0)
        if not streamed:
            weight = np.ones(n) if demand is None else _vector(demand, "demand", n)
            if weight.sum() <= 0:
                raise ValueError("total demand is 0: nothing to cover")
        fixed = None
    else:
        if p is not None:
            raise ValueError("model='lscp' finds the fewest (or least costly) sites covering every "
                             "point and takes no p (use model='mclp' to open p sites)")
        if demand is not None:
            raise ValueError("model='lscp' covers every point and takes no demand weights "
                             "(demand quantities go with capacity: the capacitated LSCP)")
        weight = None if streamed else np.ones(n)
        fixed = _vector(fixed_costs, "fixed_costs", s)
    if not streamed:
        cxy, sxy = _coords(customer_xy, "customer_xy", n), _coords(site_xy, "site_xy", s)
    deadline = None if config.time_limit is None else start + config.time_limit
    coverage, rows, dropped, stopped = None, None, 0, ""
    try:
        if streamed:
            coverage, rows, checks = stream_rows(points, sxy, radius, weight=weight,
                                                 weight_column=weight_column, fixed_open=open0,
                                                 mclp=kind == "mclp", deadline=deadline)
            if kind == "mclp" and coverage.total_weight <= 0:
                raise ValueError("total demand is 0: nothing to cover")
            if kind == "lscp" and checks["lonely"]:
                raise _lonely_error(checks["lonely_first"], checks["lonely"], radius)
            weight = None  # read with the points (coverage.total_weight, .integral)
        else:
            coverage = coverage_sets(arr, radius, deadline=deadline)
            if kind == "lscp":
                lonely = np.flatnonzero(coverage.sizes() == 0)
                if lonely.size:
                    raise _lonely_error(lonely, lonely.size, radius)
            keep = ~coverage.covered(open0) if open0.size else np.ones(n, dtype=bool)
            if kind == "mclp":
                keep &= weight > 0
            rows = aggregate_rows(coverage, weight, keep, deadline=deadline)
        if kind == "lscp":
            rows, dropped = drop_dominated(rows)
    except CoverageTimeLimit as exc:
        coverage, rows, stopped = None, None, str(exc)
    data = CoveringData(kind, coverage, rows, weight, p, fixed, open0, n, s, dropped, stopped)
    mip_gap = min(1e-7, config.tol / 10.0) if opts.mip_gap is None else opts.mip_gap
    if kind == "lscp" and rows is not None and rows.n_rows and (opts.rows == "subset" or (
            opts.rows == "auto" and rows.n_rows > covering_rows.SUBSET_ROWS)):
        # AID over the rows: the LSCP on a subset of them (a relaxation), grown until its
        # cover covers every row (no row left, fixed_open covering every point: nothing to grow)
        problem = CoveringRowsProblem(mip_gap=mip_gap)
        config = dataclasses.replace(config, aid=True)
    else:
        problem = CoveringProblem(kind, mip_gap=mip_gap, fixing=opts.fixing)
    result = _front.run_problem(problem, data, _less_time(config, start))
    if rows is not None:
        note = (f"{n} demand points aggregated into {rows.n_rows} rows (points with the same "
                "coverage set are one row: exact")
        note += f"; {dropped} dominated rows dropped)" if dropped else ")"
        result.message = f"{result.message}; {note}" if result.message else note
        if result.solution:
            result.solution["rows"] = rows.n_rows
    if streamed:
        counts = ", ".join(f"{k} {v}" for k, v in points.pass_counts.items())
        note = (f"dask engine: {points.passes} passes over the points ({counts}), "
                f"{len(points.chunks)} chunks of <= {max(points.chunks)} points")
        result.message = f"{result.message}; {note}" if result.message else note
        result.dimensions["data_passes"] = points.passes
    if kind == "mclp" and result.solution and coverage is not None:
        result.solution["covered"] = data.total_weight() - float(result.objective)
    if not streamed and (cxy is not None or sxy is not None):
        result.solution["customer_xy"] = cxy
        result.solution["site_xy"] = sxy
        _coverage_for_map(result.solution, coverage, radius)
    return result


def _coverage_for_map(solution, coverage, radius) -> None:
    """What the map of a covering answer draws: the ``radius`` and which points the open sites
    cover (on the costs)."""
    solution["coverage_radius"] = radius
    if coverage is not None and "open" in solution:
        solution["covered_points"] = coverage.covered(np.asarray(solution["open"], dtype=np.int64))


def _less_time(config, start):
    """``config`` with what is left of its ``time_limit`` since ``start`` (a millisecond at
    least: the run then returns its start)."""
    if config.time_limit is None:
        return config
    left = config.time_limit - (time.perf_counter() - start)
    return dataclasses.replace(config, time_limit=max(left, 1e-3))


#: how much a lowered cost that a capacitated answer uses is raised (toward the user's) before
#: the next solve
RAISE = 100.0


def _restored(data, solution):
    """``data`` with the lowered costs (:func:`aidopt.data.facility.bound_costs`) that
    ``solution`` uses raised :data:`RAISE`-fold (at most to the user's), or ``None`` when it
    uses none. Every cost stays at most the user's, so every bound stays valid."""
    used = (solution["shares"] > 0) & (data.costs < data.raw_costs)
    fixed = data.fixed
    opened = np.zeros(data.n_sites, dtype=bool)
    if fixed is not None:
        opened[solution["open"]] = True
        opened &= fixed < data.raw_fixed
    if not used.any() and not opened.any():
        return None
    costs = np.where(used, np.minimum(data.raw_costs, RAISE * data.costs), data.costs)
    if opened.any():
        fixed = np.where(opened, np.minimum(data.raw_fixed, RAISE * fixed), fixed)
    return FacilityData(costs, data.demand, fixed, data.p, data.capacity, data.customer_xy,
                        data.site_xy, data.name, raw_costs=data.raw_costs, raw_fixed=data.raw_fixed)
