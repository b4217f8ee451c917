"""Fuzz tests: every family against an independent reference.

* ``test_properties.py``, ``test_families.py``: hypothesis properties (LAD, the linear SVMs,
  S3VM, facility location, LPC, GSVM (1.12), aggregate outputs, the modified SVM, S2RLSC); a
  few examples each, ``AIDOPT_FUZZ_EXAMPLES=N`` for more.
* ``campaign.py``: the seeded campaign over every family (kernel SVM, GSVM, FSV, LPC, SOR, SCM,
  the CLI, TSPLIB GEO / ATT costs, facility location against a MIP and at the by-parts size,
  small time limits, and the families above), one record per run; ``test_campaign.py`` runs a
  few seeds of each in the suite (``AIDOPT_FUZZ_SEEDS=N``: seeds 0 .. N-1 of every family).
* ``test_reproducers.py``: what a campaign found, ``xfail(strict=True)`` until fixed (the ones
  that need more than 10 s run with ``AIDOPT_FUZZ_REPRO=1``).

Off by default. A campaign, from the repository root, in the background (resumable: runs already
in the log are skipped; results in docs/benchmarks.md, "Fuzz campaign")::

    nice -n 10 python -m tests.fuzz.campaign run --plan full --out /tmp/fuzzlogs/campaign.jsonl
    python -m tests.fuzz.campaign summary /tmp/fuzzlogs/campaign.jsonl --markdown
    python -m tests.fuzz.campaign one kernel_svm 17      # one run and its record
"""
