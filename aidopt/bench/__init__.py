"""``aidopt bench <family>``: one module per family, each running aidopt and its baselines side
by side in subprocesses (results in docs/benchmarks.md). Nothing here is imported by the library."""
