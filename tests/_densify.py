"""A spy on scipy's densifying methods, for tests that a sparse path never makes X dense."""

from __future__ import annotations

from scipy import sparse


def densify_calls(monkeypatch) -> list:
    """Patch ``toarray`` / ``todense`` of CSR, CSC and COO matrices and arrays to record the
    shape of every one densified (they still work); returns the list the shapes are appended
    to."""
    calls = []
    for cls in (sparse.csr_matrix, sparse.csc_matrix, sparse.coo_matrix, sparse.csr_array,
                sparse.csc_array, sparse.coo_array):
        for name in ("toarray", "todense"):
            original = getattr(cls, name)

            def spy(self, *a, _original=original, **k):
                calls.append(self.shape)
                return _original(self, *a, **k)

            monkeypatch.setattr(cls, name, spy)
    return calls
