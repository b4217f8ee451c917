"""Tools for plug-in authors: :func:`check_plugin` runs a plug-in through the real driver and
asserts the contract (``aidopt.testing.contract``); :class:`HookRecorder` records every hook call;
``aidopt.testing.fake`` is a small real plug-in that can be told to misbehave (the weighted L1
location on a line), for testing drivers. Names are imported on first use."""

from aidopt._lazy import lazy_exports

_EXPORTS = {name: "aidopt.testing.contract" for name in (
    "check_plugin", "check_declaration", "check_history", "check_result", "same_result",
    "HookRecorder", "Report", "ABSTRACT_HOOKS")}
_EXPORTS.update({name: "aidopt.testing.fake" for name in ("FakeLocation", "Script", "line_data")})
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
