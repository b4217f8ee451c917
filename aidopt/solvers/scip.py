"""SCIP through Pyomo's ``scip_direct``, made safe to capture and bounded in time.

Pyomo's ``scip_direct`` always captures SCIP's output by redirecting file descriptors 1 and 2
into pipes drained by Python threads, and calls PySCIPOpt's ``Model.optimize``, which holds the
GIL for the whole solve. Once SCIP has written more than a pipe buffer (64 KiB on Linux), its
next write blocks, the draining threads cannot run without the GIL, and the process sleeps
forever in a pipe write, past any time limit (found on an 8-row aggregate-output MIQP).

:class:`ScipDirect` changes two things and nothing else:

* the solve runs in ``Model.optimizeNogil`` (Pyomo installs no Python callbacks in SCIP, so no
  Python code runs during the solve), so the draining threads keep the pipes empty;
* a watchdog thread interrupts SCIP (``Model.interruptSolve``) when it overruns its time limit
  by :data:`WATCHDOG_GRACE` seconds; the solve then ends as SCIP's ``userinterrupt`` and is
  reported like a time limit with the incumbent SCIP had. SCIP clears an interrupt that arrives
  before its solve has begun (measured: an interrupt before ``optimize`` is lost and the solve
  runs to ``limits/time``), so the watchdog repeats it every :data:`WATCHDOG_REPEAT` seconds
  until the solve returns.

Without ``tee`` SCIP's display is switched off (``display/verblevel`` 0) unless the caller sets
it: nothing is written that nobody reads.
"""

from __future__ import annotations

import logging
import threading

from pyomo.contrib.solver.solvers.scip.scip_direct import ScipDirect as _PyomoScipDirect

__all__ = ["ScipDirect", "WATCHDOG_GRACE", "WATCHDOG_REPEAT"]

logger = logging.getLogger("aidopt.solvers")

#: seconds past ``limits/time`` after which the watchdog interrupts SCIP
WATCHDOG_GRACE = 5.0
#: seconds between the watchdog's repeated interrupts once it has fired
WATCHDOG_REPEAT = 0.25


class _Run:
    """The PySCIPOpt model as Pyomo's ``solve`` sees it, with ``optimize`` released from the GIL
    and watched. Every other attribute is the model's own."""

    def __init__(self, model, quiet: bool):
        self._model = model
        self._quiet = quiet
        self.overran = False
        self.status = None  # SCIP's status when its solve returned

    def __getattr__(self, name):
        return getattr(self._model, name)

    def hideOutput(self, quiet=True):  # noqa: N802 - PySCIPOpt's name
        self._model.hideOutput(quiet=quiet)
        if self._quiet:  # Pyomo asks for output to capture it; nobody reads it without tee
            self._model.setParam("display/verblevel", 0)

    def optimize(self):
        limit = float(self._model.getParam("limits/time"))
        done = threading.Event()
        watchdog = None
        if limit < 1e19:
            watchdog = threading.Thread(target=self._watch, args=(limit, done), daemon=True)
            watchdog.start()
        try:
            self._model.optimizeNogil()
        finally:
            done.set()
            if watchdog is not None:
                watchdog.join()
        self.status = self._model.getStatus()

    def _watch(self, limit, done):
        """Wait ``limit + WATCHDOG_GRACE`` seconds for the solve; then interrupt it, again every
        ``WATCHDOG_REPEAT`` seconds until it returns (a too-early interrupt is cleared by SCIP)."""
        if done.wait(max(limit + WATCHDOG_GRACE, 0.0)):
            return
        logger.warning("SCIP overran its time limit of %.6g s by %.6g s: interrupted", limit,
                       WATCHDOG_GRACE)
        self.overran = True
        while True:
            self._model.interruptSolve()
            if done.wait(WATCHDOG_REPEAT):
                return


class ScipDirect(_PyomoScipDirect):
    """Pyomo's ``scip_direct`` with a GIL-free, watched solve (see the module docstring)."""

    def solve(self, model, **kwds):
        from pyomo.contrib.solver.common.results import TerminationCondition

        self._quiet = not kwds.get("tee")
        self._run = None
        results = super().solve(model, **kwds)
        if (self._run is not None and self._run.overran
                and self._run.status == "userinterrupt"):  # a time limit, not a user's
            results.termination_condition = TerminationCondition.maxTimeLimit  # interrupt
        return results

    def _create_solver_model(self, model, config):
        scip_model, loader, has_obj = super()._create_solver_model(model, config)
        self._run = _Run(scip_model, getattr(self, "_quiet", True))
        return self._run, loader, has_obj
