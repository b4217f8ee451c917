"""Deliberately wrong plug-ins: the driver and :func:`aidopt.testing.check_plugin` must catch
them (each is the small real plug-in :class:`aidopt.testing.fake.FakeLocation` with one hook
broken)."""

from __future__ import annotations

import numpy as np
from aidopt.decomposition.protocol import GAP_FLOOR

from aidopt.testing.fake import FakeLocation, LineData, line_data

#: what the under-reporting ``evaluate`` returns, as a share of the true objective (a review found
#: a plug-in certified at 2,580 whose certificate's primal objective was 3,225: 0.8)
UNDER = 0.8


class UnderReports(FakeLocation):
    """``evaluate`` reports 80 % of the objective; ``certify`` computes the true one (its duals
    and gap are right). Its gap floor is scale-invariant (a tiny fraction of the objective of
    beta = 0), so that the data can be scaled without the gap test becoming absolute."""

    def evaluate(self, data, lifted) -> float:
        return UNDER * super().evaluate(data, lifted)

    def gap_floor(self, data) -> float:
        return GAP_FLOOR * float(data.s @ np.abs(data.y))


class ScaleInvariantFloor(FakeLocation):
    """The honest twin of :class:`UnderReports`: the same gap floor, ``evaluate`` untouched."""

    gap_floor = UnderReports.gap_floor


def scaled_line_data(n: int, seed: int, scale: float) -> LineData:
    """:func:`~aidopt.testing.fake.line_data` with the points in units of ``scale``."""
    data = line_data(n, seed)
    return LineData(data.y * scale, data.s)
