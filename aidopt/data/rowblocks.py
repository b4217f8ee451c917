"""Row-block sources: the rows of a tall matrix and its right-hand side, read a block at a time.

Linear program chunking (:mod:`aidopt.decomposition.lpc`) needs the rows ``[H b]`` of a linear
program (or the rows ``[A d]`` of a data set) one block ``[H^l b^l]`` at a time, and never the
whole matrix at once. A :class:`RowSource` gives exactly that:

* :class:`ArraySource`: a numpy array or a ``numpy.memmap`` (a path to a ``.npy`` file is opened
  with ``mmap_mode="r"``): a block is a slice, copied into memory when it is read, so a memmap's
  pages are touched only while their block is read.
* :class:`SparseSource`: a scipy sparse matrix in memory (kept as CSR): a block is a CSR slice
  of its rows, never densified.
* :class:`ParquetSource`: a Parquet file read row group by row group with pyarrow (only the row
  groups that overlap the requested rows are read; the file is never read whole).

``source.read(start, stop)`` returns ``(M, v)``: the rows ``start:stop`` of the matrix as a
C-contiguous float array and the matching entries of the vector (the right-hand side ``b``, or the
labels of a data set). ``source.blocks(n_blocks)`` gives the row ranges of ``n_blocks`` blocks of
(almost) equal size; ``source.validate()`` checks every entry for NaN and infinity, block by block.
:func:`row_source` makes a source from whatever the caller passed.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from aidopt.data.validate import HUGE

__all__ = ["RowSource", "ArraySource", "SparseSource", "ParquetSource", "row_source",
           "block_ranges"]

#: rows per block of a validation pass
_SCAN_ROWS = 65_536


def block_ranges(n_rows: int, n_blocks: int) -> list[tuple[int, int]]:
    """``n_blocks`` consecutive row ranges ``(start, stop)`` of sizes differing by at most one."""
    edges = np.linspace(0, n_rows, n_blocks + 1).round().astype(np.int64)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True) if b > a]


class RowSource:
    """Rows of a matrix ``M`` (``n_rows x n_cols``) and a vector ``v`` (``n_rows``), by blocks.

    Attributes
    ----------
    n_rows, n_cols : int
    kind : str
        ``"array"``, ``"memmap"`` or ``"parquet"`` (for logs).
    """

    kind = "rows"
    n_rows: int
    n_cols: int

    def read(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows ``start:stop`` as ``(M, v)`` (float arrays in memory)."""
        raise NotImplementedError

    def blocks(self, n_blocks: int) -> list[tuple[int, int]]:
        """The row ranges of ``n_blocks`` blocks (fewer when there are fewer rows)."""
        return block_ranges(self.n_rows, n_blocks)

    def scan(self, rows: int = _SCAN_ROWS):
        """Yield ``(start, M, v)`` over all rows, ``rows`` at a time."""
        for start in range(0, self.n_rows, rows):
            stop = min(self.n_rows, start + rows)
            M, v = self.read(start, stop)
            yield start, M, v

    def validate(self, matrix: str = "H", vector: str = "b") -> None:
        """Raise ``ValueError`` naming the first row with a NaN or infinite entry, or with a
        magnitude the solvers read as infinite (>= :data:`HUGE`)."""
        for start, M, v in self.scan():
            for name, arr in ((matrix, M), (vector, v)):
                for bad, what in ((~np.isfinite(arr), "a NaN or infinite entry"),
                                  (np.abs(arr) >= HUGE, f"an entry of magnitude >= {HUGE:g} "
                                   "(read as infinite by the solvers: scale the data)")):
                    if bad.any():
                        row = start + int(np.flatnonzero(bad.any(axis=1) if arr.ndim == 2 else bad)[0])
                        raise ValueError(f"{name} has {what} in row {row}")

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.kind} {self.n_rows} x {self.n_cols}>"


class ArraySource(RowSource):
    """A numpy array or memmap ``M`` with the vector ``v`` (an array or memmap too)."""

    def __init__(self, M, v):
        self.M, self.v = M, v
        self.n_rows, self.n_cols = int(M.shape[0]), int(M.shape[1])
        self.kind = "memmap" if isinstance(M, np.memmap) else "array"

    def read(self, start, stop):
        M = np.array(self.M[start:stop], dtype=float, order="C")
        v = np.asarray(self.v[start:stop], dtype=float).copy()
        return M, v


class SparseSource(RowSource):
    """A scipy CSR matrix ``M`` (float64, canonical) with the vector ``v``, in memory: a block is
    a CSR slice of its rows (its stored entries only; never densified). Its stored values are
    checked by :meth:`validate` like an array's entries."""

    kind = "sparse"

    def __init__(self, M, v):
        self.M, self.v = M, v
        self.n_rows, self.n_cols = int(M.shape[0]), int(M.shape[1])

    def read(self, start, stop):
        return self.M[start:stop], np.asarray(self.v[start:stop], dtype=float).copy()

    def validate(self, matrix: str = "H", vector: str = "b") -> None:
        """As :meth:`RowSource.validate`, on the stored entries of the matrix."""
        for bad, what in ((~np.isfinite(self.M.data), "a NaN or infinite entry"),
                          (np.abs(self.M.data) >= HUGE, f"an entry of magnitude >= {HUGE:g} "
                           "(read as infinite by the solvers: scale the data)")):
            if bad.any():
                row = int(np.searchsorted(self.M.indptr, np.flatnonzero(bad)[0], side="right")) - 1
                raise ValueError(f"{matrix} has {what} in row {row}")
        for start in range(0, self.n_rows, _SCAN_ROWS):
            v = np.asarray(self.v[start:start + _SCAN_ROWS], dtype=float)
            bad = ~np.isfinite(v) | (np.abs(v) >= HUGE)
            if bad.any():
                raise ValueError(f"{vector} has a NaN, infinite or huge entry in row "
                                 f"{start + int(np.flatnonzero(bad)[0])}")


class ParquetSource(RowSource):
    """A Parquet file: the matrix is ``columns`` (in that order), the vector one more column.

    Reads go through ``pyarrow.parquet.ParquetFile.read_row_group``: a block reads only the row
    groups that overlap it, so memory holds at most one block plus the two partial row groups at
    its ends. Write files with row groups no larger than the blocks you intend (e.g.
    ``pyarrow.parquet.write_table(table, path, row_group_size=...)``).
    """

    kind = "parquet"

    def __init__(self, path, vector: str, columns=None):
        try:
            import pyarrow.parquet as pq
        except ImportError as exc:  # pragma: no cover - depends on the extra
            raise ImportError("reading Parquet needs pyarrow: pip install 'aidopt[parquet]'") from exc
        self.path = str(path)
        self._file = pq.ParquetFile(self.path)
        names = list(self._file.schema_arrow.names)
        if vector not in names:
            raise ValueError(f"{self.path}: no column {vector!r} for the vector (columns: {names[:10]}...)")
        if columns is None:
            columns = [c for c in names if c != vector]
        columns = list(columns)
        missing = [c for c in columns if c not in names]
        if missing:
            raise ValueError(f"{self.path}: no column(s) {missing[:5]}")
        if not columns:
            raise ValueError(f"{self.path}: no matrix columns besides {vector!r}")
        self.columns, self.vector = columns, vector
        meta = self._file.metadata
        sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
        self._starts = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
        self.n_rows, self.n_cols = int(self._starts[-1]), len(columns)
        self.n_row_groups = len(sizes)
        self.row_groups_read = 0

    def read(self, start, stop):
        M = np.empty((stop - start, self.n_cols))
        v = np.empty(stop - start)
        first = int(np.searchsorted(self._starts, start, side="right")) - 1
        for g in range(first, self.n_row_groups):
            g0, g1 = int(self._starts[g]), int(self._starts[g + 1])
            if g0 >= stop:
                break
            table = self._file.read_row_group(g, columns=[*self.columns, self.vector])
            self.row_groups_read += 1
            a, b = max(start, g0), min(stop, g1)
            for j, name in enumerate(self.columns):
                M[a - start:b - start, j] = _column(table, name)[a - g0:b - g0]
            v[a - start:b - start] = _column(table, self.vector)[a - g0:b - g0]
            del table
        return M, v

    def close(self):
        close = getattr(self._file, "close", None)
        if callable(close):
            close()


def _column(table, name) -> np.ndarray:
    col = table.column(name)
    if col.null_count:
        raise ValueError(f"column {name!r} has missing values")
    return col.to_numpy().astype(float, copy=False)


def _is_path(obj) -> bool:
    return isinstance(obj, str | os.PathLike)


def row_source(M, v=None, *, vector: str = "b", columns=None, matrix_name: str = "H",
               vector_name: str = "b") -> RowSource:
    """A :class:`RowSource` from what the caller passed.

    Parameters
    ----------
    M : ndarray, numpy.memmap, scipy sparse matrix, path to a ``.npy`` or Parquet file, or a RowSource
        The matrix (2-D). A ``.npy`` path is opened with ``mmap_mode="r"``; a sparse matrix is
        kept as CSR (:class:`SparseSource`).
    v : ndarray, memmap, path to a ``.npy`` file, str or None
        The vector (1-D, one entry per row). For a Parquet ``M``: the name of its column
        (default ``vector``), or an array given separately is refused (the rows must come
        together).
    vector : str
        The Parquet column of the vector when ``v`` is None.
    columns : list of str, optional
        The Parquet columns of the matrix (default: every column but the vector's).
    matrix_name, vector_name : str
        Names for error messages (``"H"``/``"b"``, ``"X"``/``"y"``).
    """
    if isinstance(M, RowSource):
        if v is not None:
            raise ValueError(f"{vector_name} must be None when {matrix_name} is a row source")
        return M
    if _is_path(M):
        path = Path(M)
        if not path.exists():
            raise FileNotFoundError(f"{matrix_name}: no such file {path}")
        suffix = path.suffix.lower()
        if suffix in (".parquet", ".pq"):
            if v is not None and not isinstance(v, str):
                raise ValueError(f"for a Parquet {matrix_name}, {vector_name} is the name of its column "
                                 f"(default {vector!r}), not an array")
            return ParquetSource(path, v if isinstance(v, str) else vector, columns)
        if suffix == ".npy":
            M = np.load(path, mmap_mode="r")
        else:
            raise ValueError(f"{matrix_name}: unsupported file type {suffix!r}: use .npy or .parquet")
    if _is_path(v):
        v = np.load(v, mmap_mode="r")
    if v is None:
        raise ValueError(f"{vector_name} is required when {matrix_name} is an array")
    if hasattr(M, "tocsr") or hasattr(M, "toarray"):  # scipy sparse: CSR blocks, never densified
        from scipy import sparse

        if M.ndim != 2:
            raise ValueError(f"{matrix_name} must be 2-D, got shape {M.shape}")
        if M.dtype.kind not in "biuf":
            raise TypeError(f"{matrix_name} must be numeric, got dtype {M.dtype}")
        canonical = M.format == "csr" and M.dtype == np.float64 and M.has_canonical_format
        M = M if canonical else sparse.csr_matrix(M, dtype=np.float64)
        M.sum_duplicates()
        v = np.asarray(v, dtype=float) if not isinstance(v, np.ndarray) else v
        if v.ndim != 1 or v.shape[0] != M.shape[0]:
            raise ValueError(f"{vector_name} must be 1-D with {M.shape[0]} entries (one per row of "
                             f"{matrix_name}), got shape {v.shape}")
        return SparseSource(M, v)
    if not isinstance(M, np.ndarray):
        M = np.asarray(M, dtype=float)
    if not isinstance(v, np.ndarray):
        v = np.asarray(v, dtype=float)
    if M.ndim != 2:
        raise ValueError(f"{matrix_name} must be 2-D, got shape {M.shape}")
    if v.ndim != 1 or v.shape[0] != M.shape[0]:
        raise ValueError(f"{vector_name} must be 1-D with {M.shape[0]} entries (one per row of "
                         f"{matrix_name}), got shape {v.shape}")
    for name, arr in ((matrix_name, M), (vector_name, v)):
        if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
            raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    return ArraySource(M, v)
