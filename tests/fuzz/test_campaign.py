"""The campaign's families (``tests/fuzz/campaign.py``) in the test suite: a few fixed seeds each
by default (seconds); ``AIDOPT_FUZZ_SEEDS=N`` runs seeds 0 .. N-1 of every family instead. A long
campaign is run with ``python -m tests.fuzz.campaign run --plan full`` (its module docstring).

Each run must end with nothing broken: no certified answer above the independent reference, no
bound above it, no reported objective that the data refute, no family-specific promise broken,
no aidopt exception, and within its ``time_limit + 10`` s.
"""

from __future__ import annotations

import os

import pytest

from tests.fuzz.campaign import FAMILIES, run_case

SEEDS = int(os.environ.get("AIDOPT_FUZZ_SEEDS", "0"))


def _cases():
    for name, fam in FAMILIES.items():
        if not fam.in_suite:
            continue
        for seed in (range(SEEDS) if SEEDS else fam.default_seeds):
            yield pytest.param(name, seed, id=f"{name}-{seed}")


@pytest.mark.parametrize(("name", "seed"), list(_cases()))
def test_family_against_its_reference(name, seed):
    rec = run_case(name, seed)
    if rec["verdict"] == "ref_failed":
        pytest.skip("the reference did not solve this instance")
    assert rec["verdict"] in ("certified", "uncertified"), (rec["verdict"], rec["options"], rec["failures"])
    assert not rec["past_limit"], rec
