"""What every door of :mod:`aidopt.api` shares: validate -> problem -> AID or direct -> decorate.

A family's ``solve_*`` validates its inputs into a data object (:mod:`aidopt.data`), builds its
plug-in, and ends in :func:`run_problem` (AID or the direct solve, as ``config.aid`` says) or
:func:`run_rows` (the same, on the rows with a positive sample weight); :func:`decorate` attaches
the data's feature names and class labels to the solution. Tests that check "nothing is solved
before the input is validated" patch :func:`solve` and :func:`solve_direct` here: every door
reaches the engine through this module."""

from __future__ import annotations

import numpy as np

from aidopt.data.chunked import ChunkedMatrix
from aidopt.data.validate import ClassificationData
from aidopt.decomposition.aid import solve, solve_direct
from aidopt.decomposition.partition import Partition
from aidopt.decomposition.run import RunConfig
from aidopt.results import AIDResult

__all__ = ["run_problem", "run_rows", "decorate"]


def run_problem(problem, data, config: RunConfig, partition=None) -> AIDResult:
    """The engine call of every door: AID when ``config.aid`` (from ``partition`` when given,
    e.g. the final partition of a related fit), else the direct solve."""
    if not config.aid:
        return solve_direct(problem, data, config)
    return solve(problem, data, config, partition=partition)


def decorate(result: AIDResult, data) -> AIDResult:
    """Attach ``data``'s feature names, and its two class labels for classification data, to
    ``result.solution``."""
    result.solution["feature_names"] = list(data.feature_names)
    if isinstance(data, ClassificationData):
        result.solution["classes"] = data.classes.tolist()
    return result


def run_rows(problem, data, config: RunConfig, labels=None, run=None) -> AIDResult:
    """AID or the direct solve on the rows with positive sample weight; per-row arrays of the
    solution (``problem.per_element_keys``: ``alpha``, its rows on the first axis, of shape (n,)
    or (n, k)) are expanded back to all rows, with 0 for the zero-weight ones.

    ``labels`` (one integer per row of ``data``, optional) is AID's start partition: its
    restriction to the rows with positive weight (``result.partition`` is over those rows).
    ``run`` (optional) replaces AID / the direct solve: ``run(problem, data, config) ->
    AIDResult``, another loop on the run framework (column generation over features,
    :mod:`aidopt.decomposition.colgen`)."""
    used, keep = data.without_zero_weights()
    if used.n <= used.m and not hasattr(data, "classes") and config.solver == "fn":
        raise ValueError(
            f"only {used.n} rows have a positive sample weight, and solver='fn' (Frisch-Newton) "
            f"needs more than m={used.m}: give an LP solver ('clarabel', 'highs', ...)"
        )
    streamed = data.X if isinstance(data.X, ChunkedMatrix) else None
    validating = streamed.passes if streamed is not None else 0
    start = None
    if labels is not None:
        labels = np.asarray(labels)
        start = Partition.from_labels(labels if keep is None else labels[keep])
    result = (run_problem(problem, used, config, start) if run is None
              else run(problem, used, config))
    if streamed is not None:
        _report_passes(result, streamed, validating)
    if keep is not None:
        for key in problem.per_element_keys:  # per-row arrays (alpha), not w
            if result.solution.get(key) is not None:  # rows on the first axis: (n,) or (n, k)
                value = np.asarray(result.solution[key])
                full = np.zeros((data.n, *value.shape[1:]), dtype=value.dtype)
                full[keep] = value
                result.solution[key] = full
        note = f"{int((~keep).sum())} row(s) with zero sample weight left out of the model"
        result.message = f"{result.message}; {note}" if result.message else note
        result.n = result.dimensions["n"] = data.n
    return result


def _report_passes(result: AIDResult, X: ChunkedMatrix, before: int) -> None:
    """Put the dask engine's passes over X in ``result.dimensions["data_passes"]`` and the
    message (the passes of validation before the run, and of the run by kind)."""
    result.dimensions["data_passes"] = X.passes
    kinds = ", ".join(f"{kind} {count}" for kind, count in X.pass_counts.items())
    note = (f"dask engine: {X.passes} passes over X ({before} validating, {X.passes - before} in "
            f"the run; {kinds}), {len(X.chunks)} chunks of <= {max(X.chunks)} rows")
    result.message = f"{result.message}; {note}" if result.message else note
