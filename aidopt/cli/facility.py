"""``aidopt facility`` and ``aidopt bench facility``: p-median / UFL from a file.

Input (one of):

* ``--costs FILE.csv``: an n_customers x n_sites cost matrix (no header; ``--header`` skips one);
* ``--coords FILE.csv``: x, y per row (customers = candidate sites, Euclidean costs), or
  ``--customers FILE.csv --sites FILE.csv`` for two sets;
* ``--tsplib FILE|NAME``: a TSPLIB file, costs by its ``EDGE_WEIGHT_TYPE`` as
  :func:`~aidopt.data.facility.tsplib_costs` computes them (EUC_2D to the nearest integer unless
  ``--rounding`` says otherwise), every city a customer and a site; ``fl1400`` and ``u1432``
  are shipped, ``d493`` is found where Debian's ``r-cran-tsp`` puts it;
* ``--orlib FILE|pmed1 ... pmed15``: an OR-Library p-median file (shortest-path costs; p from
  the file unless ``--p`` is given);
* ``--graph FILE.csv``: an edge list ``u,v,weight`` (shortest-path costs, every node both).

Problem: ``--p P`` (p-median) and/or ``--fixed-costs VALUE|FILE|auto`` (UFL; ``auto`` is the
documented rule f_j = mean cost x n x mean demand / (2 sqrt(n_sites))), ``--demand FILE``; or a
covering model, ``--model mclp --radius R --p P`` (maximal covering, ``--demand`` the weights)
or ``--model lscp --radius R`` (location set covering, ``--fixed-costs`` optional; with
``--capacity`` the capacitated LSCP, ``--single-source`` to serve each point by one site), or
``--model p-center --p P`` (the least largest distance to the nearest open site, ``--demand``
the weights) or ``--model p-dispersion --p P`` (the p sites farthest apart: with ``--coords``,
``--tsplib`` or ``--sites`` the sites' distances, with ``--costs`` a site x site matrix), with
``--fixed-open 0,4,7`` for sites forced open (every model).
Output: the summary, ``--assignments CSV`` (customer, site, cost), ``--map PNG`` (coordinate
data, every model: :func:`aidopt.api.facility_plot.plot_facility`), ``--output JSON``,
``--plot PNG`` (convergence). Exit codes as for every command: 0 certified, 1 not certified,
2 error, 130 interrupted.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from aidopt.data.facility import auto_fixed_costs

__all__ = ["add_arguments", "cmd_facility", "run_bench", "load_problem", "auto_fixed_costs",
           "BENCH_METHODS"]

BENCH_METHODS = ["aid", "benders", "aid-sites", "highs", "aidopt-direct", "spopt", "gurobi", "cplex", "xpress"]


def _existing(path, flag: str) -> Path:
    """``path`` as a Path, or ``FileNotFoundError`` naming ``flag`` when there is no such file."""
    if not Path(path).exists():
        raise FileNotFoundError(f"{flag}: file not found: {path}")
    return Path(path)


def _csv(path, flag: str, header: bool = False) -> np.ndarray:
    """The numbers of the CSV file given to ``flag`` (n x k, at least one value): a missing
    file, one without data or one with text where numbers belong is refused naming the flag."""
    path = _existing(path, flag)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="loadtxt: input contained no data")
        try:
            arr = np.loadtxt(path, delimiter=",", skiprows=1 if header else 0, ndmin=2)
        except ValueError as exc:
            hint = "" if header else " (a header row? pass --header)"
            raise ValueError(f"{flag} {path}: {exc}{hint}") from None
    if arr.size == 0:
        raise ValueError(f"{flag} {path}: the file has no data")
    return arr


def load_problem(args) -> dict:
    """``dict(costs, p, fixed_costs, demand, customer_xy, site_xy, name)`` from the CLI flags."""
    from aidopt.data.facility import euclidean_costs, graph_costs, read_tsplib, tsplib_costs

    given = [k for k in ("costs", "coords", "customers", "tsplib", "orlib", "graph")
             if getattr(args, k, None)]
    if len(given) > 1:
        raise ValueError(f"give one data source, got {', '.join('--' + g for g in given)}")
    out = {"p": args.p, "customer_xy": None, "site_xy": None, "demand": None}
    if args.costs:
        out["costs"], out["name"] = _csv(args.costs, "--costs", args.header), Path(args.costs).stem
    elif args.coords:
        xy = _csv(args.coords, "--coords", args.header)[:, :2]
        out.update(costs=euclidean_costs(xy), customer_xy=xy, site_xy=xy, name=Path(args.coords).stem)
    elif args.customers:
        if not args.sites:
            raise ValueError("--customers needs --sites")
        cxy = _csv(args.customers, "--customers", args.header)[:, :2]
        sxy = _csv(args.sites, "--sites", args.header)[:, :2]
        out.update(costs=euclidean_costs(cxy, sxy), customer_xy=cxy, site_xy=sxy,
                   name=Path(args.customers).stem)
    elif args.tsplib:
        from aidopt.instances.facility import tsplib_path

        path = tsplib_path(args.tsplib)
        costs = tsplib_costs(path, rounding=args.rounding)  # by the file's EDGE_WEIGHT_TYPE
        try:
            xy = read_tsplib(path)[0]  # for --map; EXPLICIT files have no coordinates
        except ValueError:
            xy = None
        out.update(costs=costs, customer_xy=xy, site_xy=xy, name=Path(args.tsplib).stem)
    elif args.orlib:
        from aidopt.instances.facility import orlib_pmed

        costs, p, _ = orlib_pmed(args.orlib)
        out.update(costs=costs, name=Path(args.orlib).stem)
        if out["p"] is None and args.fixed_costs is None and getattr(args, "model", None) != "lscp":
            out["p"] = p
    elif args.graph:
        import networkx as nx

        path = _existing(args.graph, "--graph")
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="genfromtxt: Empty input file")
            edges = np.genfromtxt(path, delimiter=",", dtype=None, encoding=None,
                                  skip_header=1 if args.header else 0)
        if edges.size == 0:
            raise ValueError(f"--graph {path}: the file has no data")
        if edges.dtype.names is None:  # one dtype: a row per edge (one edge: a 1-D array)
            edges = np.atleast_2d(edges)
        g = nx.Graph()
        for row in np.atleast_1d(edges):
            u, v, *rest = (row.tolist() if hasattr(row, "tolist") else row)
            g.add_edge(u, v, weight=float(rest[0]) if rest else 1.0)
        out.update(costs=graph_costs(g), name=Path(args.graph).stem)
    else:
        raise ValueError("give the data: --costs, --coords, --customers/--sites, --tsplib, "
                         "--orlib or --graph")
    if args.demand:
        out["demand"] = _csv(args.demand, "--demand", args.header).reshape(-1)
    fixed = args.fixed_costs
    if fixed is None:
        out["fixed_costs"] = None
    elif fixed == "auto":
        out["fixed_costs"] = auto_fixed_costs(out["costs"], out["demand"])
    elif Path(fixed).exists():
        out["fixed_costs"] = _csv(fixed, "--fixed-costs", args.header).reshape(-1)
    else:
        try:
            out["fixed_costs"] = np.full(out["costs"].shape[1], float(fixed))
        except ValueError:
            raise FileNotFoundError(f"--fixed-costs: file not found: {fixed} (the value is a "
                                    "number, 'auto' or a CSV file)") from None
    return out


def add_arguments(p) -> None:
    """Add ``aidopt facility`` to the CLI's subparsers."""
    from aidopt.cli.common import _common_solve_args

    src = p.add_argument_group("data (one of)")
    src.add_argument("--costs", default=None, help="CSV cost matrix, customers x sites")
    src.add_argument("--coords", default=None, help="CSV x,y per point: customers = sites")
    src.add_argument("--customers", default=None, help="CSV x,y of customers (with --sites)")
    src.add_argument("--sites", default=None, help="CSV x,y of candidate sites")
    src.add_argument("--tsplib", default=None,
                     help="TSPLIB file, or a set by name: fl1400 or u1432 (shipped), d493 (from "
                          "Debian's r-cran-tsp)")
    src.add_argument("--orlib", default=None,
                     help="OR-Library p-median file, or pmed1 ... pmed15 (shipped)")
    src.add_argument("--graph", default=None, help="CSV edge list u,v,weight (shortest paths)")
    src.add_argument("--header", action="store_true", help="CSV files have a header row")
    src.add_argument("--rounding", choices=["nint", "floor", "ceil", "exact"], default=None,
                     help="--tsplib EUC_2D costs: nearest integer (TSPLIB's, the default), "
                          "floor (the exact p-median papers'), ceil or exact")
    prob = p.add_argument_group("problem")
    prob.add_argument("--p", type=int, default=None, help="p-median: at most p sites open")
    prob.add_argument("--fixed-costs", default=None,
                      help="UFL opening costs: a number (every site), a CSV file, or 'auto'")
    prob.add_argument("--demand", default=None, help="CSV demand per customer (default 1)")
    prob.add_argument("--model", default=None,
                      choices=["p-median", "ufl", "mclp", "lscp", "lscp-b", "p-center",
                               "p-dispersion"],
                      help="the problem (default: p-median with --p, else UFL); mclp: open --p "
                           "sites covering the most demand within --radius; lscp: the fewest "
                           "(least costly with --fixed-costs) sites covering every point "
                           "(with --capacity: the capacitated LSCP, --demand the quantities); "
                           "lscp-b: among the fewest covering sites, those covering the most "
                           "points (--demand weights) twice; "
                           "p-center: --p sites with the least largest (weighted by --demand) "
                           "distance to a point; p-dispersion: --p sites with the largest "
                           "smallest distance between two of them (--costs: a site x site "
                           "matrix)")
    prob.add_argument("--radius", type=float, default=None,
                      help="mclp / lscp: a point is covered by a site at cost at most RADIUS")
    prob.add_argument("--capacity", default=None, metavar="Q|CSV",
                      help="site capacities: a number (every site) or a CSV file (one per site); "
                           "--model lscp: the capacitated LSCP")
    prob.add_argument("--fixed-open", default=None, metavar="J,J,...",
                      help="comma-separated site indices forced open (every model; at most "
                           "--p of them)")
    from aidopt.api.facility import FACILITY

    FACILITY.add_arguments(p)
    res = p.add_argument_group("facility output")
    res.add_argument("--assignments", default=None, metavar="CSV",
                     help="write customer,site,cost per customer")
    res.add_argument("--map", default=None, metavar="PNG",
                     help="map of the answer (coordinate data; every model): assignments, "
                          "covered points and coverage circles, the p-center's reach, the "
                          "p-dispersion's sites")
    _common_solve_args(p)
    p.set_defaults(func=cmd_facility)
    return p


def cmd_facility(args) -> int:
    from aidopt.api.facility import FACILITY, plot_facility, solve_facility_location
    from aidopt.cli.common import _finish, _options, say

    prob = load_problem(args)
    if args.map and prob["customer_xy"] is None:
        raise ValueError("--map needs coordinate data (--coords, --customers/--sites, --tsplib)")
    covering = {}
    if args.model is not None:
        covering["model"] = args.model
    if args.radius is not None:
        covering["radius"] = args.radius
    if args.fixed_open is not None:
        covering["fixed_open"] = _site_list(args.fixed_open)
    if args.capacity is not None:
        covering["capacity"] = _capacity(args.capacity, prob["costs"].shape[1], args.header)
    if args.model == "p-dispersion" and args.customers:
        prob["costs"], prob["customer_xy"] = None, None  # the sites' own distances
    result = solve_facility_location(
        prob["costs"], p=prob["p"], fixed_costs=prob["fixed_costs"], demand=prob["demand"],
        customer_xy=prob["customer_xy"], site_xy=prob["site_xy"], **covering,
        **FACILITY.cli_kwargs(args), **_options(args))
    code = _finish(result, args)
    sol = result.solution
    if "open" in sol:
        print(f"open sites ({len(sol['open'])}): {' '.join(str(int(j)) for j in sol['open'])}")
    if "covered" in sol:
        print(f"covered demand: {sol['covered']:.10g} (uncovered {result.objective:.10g})")
    if "backup" in sol:
        print(f"covered twice: {sol['backup']:.10g} (not covered twice: {result.objective:.10g})")
    if "radius" in sol:
        print(f"radius: {sol['radius']:.10g}")
    if "dispersion" in sol:
        print(f"smallest distance between chosen sites: {sol['dispersion']:.10g}")
    if args.assignments and "assign" in sol:
        assign = np.asarray(sol["assign"], dtype=np.int64)
        cost = np.where(assign >= 0, prob["costs"][np.arange(assign.size), np.maximum(assign, 0)],
                        np.nan)  # -1: no site (a point of demand 0 of the single-sourcing LSCP)
        rows = np.column_stack([np.arange(assign.size), assign, cost])
        np.savetxt(args.assignments, rows, delimiter=",", fmt=["%d", "%d", "%.10g"],
                   header="customer,site,cost", comments="")
        say(args, f"assignments written to {args.assignments}")
    if args.map:
        plot_facility(result, path=args.map)
        say(args, f"map written to {args.map}")
    return code


def _capacity(text: str, n_sites: int, header: bool) -> np.ndarray:
    """``--capacity``: one number for every site, or a CSV file of one per site."""
    if Path(text).exists():
        return _csv(text, "--capacity", header).reshape(-1)
    try:
        return np.full(n_sites, float(text))
    except ValueError:
        raise FileNotFoundError(f"--capacity: file not found: {text} (the value is a number or "
                                "a CSV file)") from None


def _site_list(text: str) -> list[int]:
    """``--fixed-open 0,4,7`` as a list of site indices."""
    try:
        return [int(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise ValueError(f"--fixed-open: comma-separated site indices, got {text!r}") from None


def add_bench_arguments(p) -> None:
    """Flags of ``aidopt bench facility`` (the lead's bench parser may add them)."""
    p.add_argument("--instances", nargs="+", default=None,
                   help="facility: pmed1 pmed5 pmed10, orl900-p5 (OR-Library-style n=900), "
                        "euclid-ufl-5000x1000, euclid-pmed-2000x500-p20, d493-p10, d493-ufl, "
                        "sf-p4 (spopt's San Francisco data)")
    p.add_argument("--methods", nargs="+", default=None,
                   help="facility: " + ", ".join(BENCH_METHODS) + " (default aid highs spopt)")


def run_bench(args) -> int:
    """``aidopt bench facility``: every method on every instance, one after the other."""
    from aidopt.bench.facility import DEFAULT_INSTANCES, bench_facility

    instances = getattr(args, "instances", None) or list(DEFAULT_INSTANCES)
    methods = getattr(args, "methods", None) or ["aid", "highs", "spopt"]
    bad = [m for m in methods if m not in BENCH_METHODS]
    if bad:
        raise ValueError(f"unknown facility method(s) {bad}; choose from {BENCH_METHODS}")
    bench_facility(instances=instances, methods=methods, time_limit=args.time_limit,
                   tol=getattr(args, "tol", 1e-4) if getattr(args, "tol", None) else 1e-4,
                   output=args.output, seed=getattr(args, "seed", 0))
    return 0
