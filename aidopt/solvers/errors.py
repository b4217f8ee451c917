"""Exceptions of the solver layer; every message says how to fix the problem it reports."""

from __future__ import annotations

__all__ = [
    "LicenceLimitError",
    "SolverCapabilityError",
    "SolverError",
    "SolverUnavailableError",
    "TimeLimitReached",
]


class SolverError(RuntimeError):
    """A solver could not be used or failed; the message says how to fix it."""


class SolverUnavailableError(SolverError):
    """The solver is not installed or has no usable licence."""


class SolverCapabilityError(SolverError, ValueError):
    """The solver cannot take this problem (class, duals or licence size)."""


class LicenceLimitError(SolverCapabilityError):
    """The model is larger than the solver's size-limited licence allows.

    Raised *before* the solver is called whenever aidopt knows the limits (and, as a last resort,
    when a solver refuses a model with its own licence error).

    Attributes
    ----------
    solver : str
        aidopt's name of the solver.
    sizes : dict
        What the model has, e.g. ``{"variables": 5000, "constraints": 10}``.
    limits : SizeLimits or None
        The licence's limits, when known.
    """

    def __init__(self, message: str, *, solver: str = "", sizes: dict | None = None, limits=None):
        super().__init__(message)
        self.solver = solver
        self.sizes = dict(sizes or {})
        self.limits = limits


class SolverOptionError(SolverError, ValueError):
    """The solver rejected an option: a configuration error to fix, never a reason to retry with
    another solver."""


class TimeLimitReached(SolverError):
    """The run's time limit was reached inside a step that has no partial result to offer."""
