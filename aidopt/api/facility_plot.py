"""Maps of facility-location answers: :func:`plot_facility`, also reached as
``result.plot(kind="map")`` on a result of :func:`aidopt.solve_facility_location` given
coordinates (``customer_xy`` / ``site_xy``, arrays or GeoDataFrames).

What is drawn follows ``solution["kind"]``:

* p-median, UFL, capacitated (``"p-median"``, ``"ufl"``, ``"p-median+f"``, ``"cfl"``): each
  demand point coloured by its site and joined to it, the candidate sites, the open sites (the
  forced ones of ``fixed_open`` outlined);
* MCLP / LSCP (``"mclp"``, ``"lscp"``): the points covered and uncovered, the open sites and
  their coverage circles of the ``radius``;
* capacitated LSCP (``"lscp"`` with ``capacity``): with split demand (``shares``) a line from
  each point to every site serving a share of it (width by the share; points split among
  several sites ringed), with single-sourcing (``assign``) each point joined to its one site
  and coloured by it; both label every open site with its load and capacity and draw the
  coverage circles;
* LSCP-B (``"lscp-b"``): the points covered twice, covered once only and uncovered, each
  marked differently, the open sites and their coverage circles;
* p-center: the assignments and, around each open site, the circle through its farthest
  assigned point (the largest is the radius when the points are unweighted);
* p-dispersion: the candidate and the chosen sites, each chosen site in a disk of half the
  smallest distance between two of them (the disks touch at the closest pair).

Circles are drawn in the coordinates' units: they show the model's radius when the costs are
the Euclidean distances of the coordinates (``costs=None``, ``euclidean_costs``, a
GeoDataFrame's projected CRS); coverage itself (covered / uncovered) is the solver's, on the
costs.
"""

from __future__ import annotations

import numpy as np

from aidopt.results import pyplot, register_plot

__all__ = ["plot_facility", "MAP_KINDS"]

#: the solution kinds :func:`plot_facility` draws
MAP_KINDS = ("p-median", "ufl", "p-median+f", "cfl", "mclp", "lscp", "lscp-b", "p-center",
             "p-dispersion")


def _xy(value, name):
    if value is None:
        return None
    arr = np.asarray(value, dtype=float)
    if arr.ndim != 2 or arr.shape[1] < 2:
        raise ValueError(f"{name} must be an (n, 2) array of coordinates, got shape {arr.shape}")
    return arr[:, :2]


def plot_facility(result_or_solution, customer_xy=None, site_xy=None, path=None, *, title=None,
                  max_lines: int = 20_000, ax=None):
    """Map of a facility-location answer (what is drawn for each model: the module docstring).

    Parameters
    ----------
    result_or_solution : AIDResult or dict
        A result of :func:`aidopt.solve_facility_location` (its ``solution`` holds the
        coordinates when they were given) or its ``solution`` dict.
    customer_xy, site_xy : array-like, optional
        Coordinates, when the solution does not carry them (the p-dispersion needs only
        ``site_xy``).
    path : str or Path, optional
        Save the figure there (its format from the suffix) and close it.
    title : str, optional
        Default: the model, objective, gap and termination.
    max_lines : int
        Draw at most this many assignment (or share) lines (a seeded sample beyond).
    ax : matplotlib Axes, optional
        Draw into these axes (default: a new figure).

    Returns
    -------
    matplotlib.figure.Figure
        The figure (``fig.axes[0]`` the map).

    Raises
    ------
    ValueError
        No coordinates (a cost matrix only), coordinates of the wrong shape, or a solution that
        is not a facility-location answer.
    """
    plt = pyplot()
    sol = getattr(result_or_solution, "solution", result_or_solution)
    if not isinstance(sol, dict) or "open" not in sol:
        raise ValueError("a map draws a facility-location answer (a result of "
                         "solve_facility_location, or its solution dict with 'open')")
    kind = sol.get("kind", "p-median" if "assign" in sol else None)
    if kind not in MAP_KINDS:
        raise ValueError(f"no map for a solution of kind {kind!r} (maps: {', '.join(MAP_KINDS)})")
    cxy = _xy(customer_xy if customer_xy is not None else sol.get("customer_xy"), "customer_xy")
    sxy = _xy(site_xy if site_xy is not None else sol.get("site_xy"), "site_xy")
    needs = ("site_xy",) if kind == "p-dispersion" else ("customer_xy", "site_xy")
    missing = [name for name, v in (("customer_xy", cxy), ("site_xy", sxy))
               if name in needs and v is None]
    if missing:
        raise ValueError(f"the map needs coordinates ({', '.join(missing)}): pass them to "
                         "solve_facility_location (arrays or GeoDataFrames) or to the plot; a "
                         "cost matrix alone has none")
    open_sites = np.asarray(sol["open"], dtype=np.int64)
    if open_sites.size and open_sites.max() >= len(sxy):
        raise ValueError(f"site_xy has {len(sxy)} rows but site {int(open_sites.max())} is open")
    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 7))
    else:
        fig = ax.figure
    ax.scatter(sxy[:, 0], sxy[:, 1], marker="+", s=14, c="0.6", label="candidate sites",
               zorder=2)
    if kind == "p-dispersion":
        _dispersion(plt, ax, sxy, open_sites)
    elif kind == "lscp" and ("assign" in sol or "shares" in sol):  # capacitated
        if "assign" in sol:
            _assignments(plt, ax, sol, cxy, sxy, open_sites, max_lines, reach=False)
        else:
            _shares(plt, ax, sol, cxy, sxy, open_sites, max_lines)
        _circles(plt, ax, sxy, open_sites, sol.get("coverage_radius"))
        _loads(ax, sol, sxy, open_sites)
    elif kind in ("mclp", "lscp", "lscp-b"):
        _covering(plt, ax, sol, cxy, sxy, open_sites)
    else:
        _assignments(plt, ax, sol, cxy, sxy, open_sites, max_lines, reach=kind == "p-center")
    forced = np.asarray(sol.get("fixed_open", []), dtype=np.int64)
    ax.scatter(sxy[open_sites, 0], sxy[open_sites, 1], marker="s", s=60, c="red",
               edgecolors="black", label=f"open sites ({open_sites.size})", zorder=5)
    if forced.size:
        ax.scatter(sxy[forced, 0], sxy[forced, 1], marker="s", s=140, facecolors="none",
                   edgecolors="blue", linewidths=1.5, label=f"forced open ({forced.size})",
                   zorder=6)
    ax.set_aspect("equal", adjustable="datalim")
    ax.autoscale_view()
    ax.legend(loc="upper right", fontsize=8)
    if title is None and hasattr(result_or_solution, "objective"):
        r = result_or_solution
        title = (f"{kind}: objective {r.objective:.10g}, gap {r.gap:.1e}, "
                 f"{r.termination.value}")
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
        plt.close(fig)
    return fig


def _assignments(plt, ax, sol, cxy, sxy, open_sites, max_lines, reach):
    """Points coloured by their site, joined to it; with ``reach`` (the p-center) each open
    site's circle through its farthest assigned point."""
    from matplotlib.collections import LineCollection

    assign = np.asarray(sol["assign"], dtype=np.int64)
    if assign.size != len(cxy):
        raise ValueError(f"customer_xy has {len(cxy)} rows but the solution assigns {assign.size}")
    colour_of = plt.get_cmap("tab20")(np.searchsorted(open_sites, assign) % 20)
    colour_of[assign < 0] = (0.6, 0.6, 0.6, 1.0)  # no site (a point of demand 0)
    idx = np.flatnonzero(assign >= 0)
    if idx.size > max_lines:
        idx = np.sort(np.random.default_rng(0).choice(idx, max_lines, replace=False))
    segments = np.stack([cxy[idx], sxy[assign[idx]]], axis=1)
    ax.add_collection(LineCollection(segments, colors=colour_of[idx], linewidths=0.4, alpha=0.6))
    ax.scatter(cxy[:, 0], cxy[:, 1], s=8, c=colour_of, label="demand points", zorder=3)
    if reach:
        far = np.hypot(*(cxy - sxy[assign]).T)
        for j in open_sites:
            mine = far[assign == j]
            if mine.size:
                ax.add_patch(plt.Circle(sxy[j], float(mine.max()), fill=False, ls="--",
                                        color="0.3", lw=0.8))
        ax.plot([], [], ls="--", color="0.3", lw=0.8, label="farthest assigned point")


def _shares(plt, ax, sol, cxy, sxy, open_sites, max_lines):
    """Split demand: a line from each point to every site serving a share of it (width by the
    share, a seeded sample beyond ``max_lines``), points coloured by the site serving their
    largest share, and the points split among several sites ringed."""
    from matplotlib.collections import LineCollection
    from scipy import sparse

    Z = sparse.csr_matrix(sol["shares"])
    if Z.shape[0] != len(cxy):
        raise ValueError(f"customer_xy has {len(cxy)} rows but the shares have {Z.shape[0]}")
    Z.eliminate_zeros()
    coo = Z.tocoo()
    keep = np.flatnonzero(coo.data > 1e-9)
    if keep.size > max_lines:
        keep = np.sort(np.random.default_rng(0).choice(keep, max_lines, replace=False))
    i, j, z = coo.row[keep], coo.col[keep], coo.data[keep]
    main = np.asarray(Z.argmax(axis=1)).ravel()
    served = np.asarray(Z.sum(axis=1)).ravel() > 1e-9
    colours = plt.get_cmap("tab20")(np.searchsorted(open_sites, main) % 20)
    colours[~served] = (0.6, 0.6, 0.6, 1.0)
    ax.add_collection(LineCollection(np.stack([cxy[i], sxy[j]], axis=1), colors=colours[i],
                                     linewidths=0.3 + 1.5 * z, alpha=0.6, label="shares served"))
    ax.scatter(cxy[:, 0], cxy[:, 1], s=8, c=colours, label="demand points", zorder=3)
    split = np.flatnonzero(np.diff(Z.indptr) >= 2)
    ax.scatter(cxy[split, 0], cxy[split, 1], s=50, facecolors="none", edgecolors="black",
               linewidths=0.8, label=f"split among sites ({split.size})", zorder=4)


def _loads(ax, sol, sxy, open_sites):
    """Every open site labelled ``load / capacity`` (the solution's loads on the original
    points)."""
    load, cap = sol.get("load"), sol.get("capacity")
    if load is None or cap is None:
        return
    load, cap = np.asarray(load, dtype=float), np.asarray(cap, dtype=float)
    for j in open_sites:
        ax.annotate(f"{load[j]:.4g}/{cap[j]:.4g}", sxy[j], xytext=(4, 4),
                    textcoords="offset points", fontsize=7, zorder=7)
    ax.plot([], [], ls="none", label="load/capacity at each open site")


def _circles(plt, ax, sxy, open_sites, radius):
    """The open sites' coverage circles of ``radius`` (nothing without one)."""
    if radius is None:
        return
    for j in open_sites:
        ax.add_patch(plt.Circle(sxy[j], float(radius), fill=True, alpha=0.08, color="tab:blue",
                                ec="tab:blue"))
    ax.plot([], [], color="tab:blue", alpha=0.5, label=f"radius {float(radius):.6g}")


def _covering(plt, ax, sol, cxy, sxy, open_sites):
    """Points covered / uncovered (the solver's coverage when the solution has it, else
    Euclidean on the coordinates) and the open sites' coverage circles; LSCP-B's points
    covered twice (``backup_points``) marked apart from those covered once."""
    radius = sol.get("coverage_radius")
    covered, twice = sol.get("covered_points"), sol.get("backup_points")
    backup = sol.get("kind") == "lscp-b"
    if covered is None or (backup and twice is None):
        if radius is None:
            raise ValueError("the covering map needs the solution's coverage_radius or "
                             "covered_points (a result of solve_facility_location has them)")
        d = np.hypot(cxy[:, None, 0] - sxy[None, open_sites, 0],
                     cxy[:, None, 1] - sxy[None, open_sites, 1])
        times = (d <= radius).sum(axis=1)
        covered = times >= 1 if covered is None else covered
        twice = times >= 2 if backup and twice is None else twice
    covered = np.asarray(covered, dtype=bool)
    if covered.size != len(cxy):
        raise ValueError(f"customer_xy has {len(cxy)} rows but the solution covers {covered.size}")
    if twice is not None:
        twice = np.asarray(twice, dtype=bool)
        once = covered & ~twice
        ax.scatter(cxy[twice, 0], cxy[twice, 1], s=14, marker="D", c="darkgreen",
                   label=f"covered twice ({int(twice.sum())})", zorder=3)
        ax.scatter(cxy[once, 0], cxy[once, 1], s=8, c="yellowgreen",
                   label=f"covered once ({int(once.sum())})", zorder=3)
    else:
        ax.scatter(cxy[covered, 0], cxy[covered, 1], s=8, c="tab:green",
                   label=f"covered ({int(covered.sum())})", zorder=3)
    ax.scatter(cxy[~covered, 0], cxy[~covered, 1], s=10, c="tab:red", marker="x",
               label=f"uncovered ({int((~covered).sum())})", zorder=3)
    _circles(plt, ax, sxy, open_sites, radius)


def _dispersion(plt, ax, sxy, open_sites):
    """The chosen sites, each in a disk of half the smallest distance between two of them, and
    the closest pair joined."""
    chosen = sxy[open_sites]
    if open_sites.size < 2:
        return
    d = np.hypot(chosen[:, None, 0] - chosen[None, :, 0], chosen[:, None, 1] - chosen[None, :, 1])
    np.fill_diagonal(d, np.inf)
    a, b = np.unravel_index(int(np.argmin(d)), d.shape)
    half = float(d[a, b]) / 2.0
    for point in chosen:
        ax.add_patch(plt.Circle(point, half, fill=True, alpha=0.1, color="tab:purple"))
    ax.plot(chosen[[a, b], 0], chosen[[a, b], 1], color="tab:purple", lw=1.2,
            label=f"closest pair ({2 * half:.6g})")


register_plot("map", plot_facility)  # result.plot(kind="map")
