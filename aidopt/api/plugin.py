"""The door for any plug-in, a user's own included: :func:`solve` (AID, or the direct solve with
``aid=False``) and :func:`solve_direct`, with the common options of every ``solve_*`` function."""

from __future__ import annotations

from aidopt.decomposition import aid as _aid
from aidopt.decomposition.protocol import AIDProblem
from aidopt.decomposition.run import RunConfig, common_options
from aidopt.results import AIDResult

__all__ = ["solve", "solve_direct"]


def _check(problem) -> None:
    if not isinstance(problem, AIDProblem):
        raise TypeError("problem must be an instance of a subclass of "
                        f"aidopt.decomposition.AIDProblem, got {type(problem).__name__}")


@common_options()
def solve(problem: AIDProblem, data, *, partition=None, **options) -> AIDResult:
    """Solve the plug-in ``problem`` on ``data`` by AID (or directly with ``aid=False``) and
    certify the answer on the original data.

    Parameters
    ----------
    problem : AIDProblem
        An instance of a subclass of :class:`aidopt.decomposition.AIDProblem` (docs/plugins.md).
    data
        The plug-in's data object (whatever its hooks read; ``problem.size(data)`` elements).
    partition : Partition, optional
        Start AID from this partition (e.g. ``result.partition`` of a related run) instead of
        the plug-in's initial partition.

    Returns
    -------
    AIDResult
        With the iteration history, the certificate and the termination.
    """
    _check(problem)
    config = RunConfig.from_kwargs(options, caller="solve")
    if not config.aid:
        if partition is not None:
            raise ValueError("partition starts AID; it has no meaning with aid=False")
        return _aid.solve_direct(problem, data, config)
    return _aid.solve(problem, data, config, partition=partition)


@common_options(exclude=("aid",))
def solve_direct(problem: AIDProblem, data, **options) -> AIDResult:
    """Solve the plug-in ``problem`` on the full ``data`` in one model (every element its own
    cluster) and certify it: the baseline AID is compared with.

    Returns
    -------
    AIDResult
    """
    _check(problem)
    config = RunConfig.from_kwargs({**options, "aid": False}, caller="solve_direct")
    return _aid.solve_direct(problem, data, config)
