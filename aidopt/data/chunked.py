"""Out-of-core design matrices on Dask: the numpy surface AID needs, computed chunk by chunk.

AID touches the full data only in passes: ``X @ beta`` (lift), ``X.T @ u`` (certificate),
per-cluster weighted sums of the rows (aggregate), a row sample ``X[idx]`` (initial partition),
column scales and the input checks. Everything else is a small aggregated model solved in
memory. :class:`ChunkedMatrix` wraps a :class:`dask.array.Array` chunked by rows and offers
exactly those operations, each computed in one pass over the chunks and returned as a numpy
array, so the LAD and linear SVM plug-ins run on it unchanged. Vectors of length n (y, weights,
labels, residuals) stay in memory as numpy arrays; only the n x m matrix is streamed.

Computations go through ``dask.compute``: with a ``dask.distributed.Client`` active (created by
the user, e.g. ``Client("tcp://scheduler:8786")``) they run on its cluster, otherwise on Dask's
local threaded scheduler (docs/dask.md).

:func:`open_store` opens a Zarr store, a ``.npy`` file or a Parquet file / directory as a dask
array without reading it, plus the named vectors (y, weights) that live in the same store.

Dask and Zarr are optional (``pip install 'aidopt[dask]'``): this module imports them only when
a matrix is built or a store opened.
"""

from __future__ import annotations

import functools
import logging
import mmap
import numbers
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import sparse

__all__ = [
    "ChunkedMatrix",
    "LoadRefusedError",
    "Store",
    "as_chunked",
    "is_dask_array",
    "is_file_map",
    "is_out_of_core",
    "open_store",
    "parquet_columns",
    "store_kind",
    "to_dask",
]

logger = logging.getLogger("aidopt.data.chunked")

#: target size of one chunk when aidopt chooses the row chunking (Zarr, numpy input): a Zarr
#: read costs tens of milliseconds per chunk (docs/dask.md)
CHUNK_BYTES = 64 * 2**20
#: the same for ``.npy`` files, read by explicit reads that cost nothing per chunk worth
#: measuring: a pass holds about two chunks per worker thread (a block and its partial result),
#: so smaller chunks are less memory at the same speed (measured: docs/benchmarks.md)
NPY_CHUNK_BYTES = 16 * 2**20
#: largest result that ``np.asarray(X)`` or ``X[rows]`` computes into memory
MAX_LOAD_BYTES = 256 * 2**20
#: name of the matrix in a Zarr group; other arrays of the group are vectors (y, weights)
ZARR_MATRIX = "X"

_PARQUET_SUFFIXES = (".parquet", ".pq")


class LoadRefusedError(ValueError):
    """An operation would copy more of an out-of-core matrix into memory than allowed."""


def _require_dask():
    try:
        import dask.array as da
    except ImportError as exc:  # pragma: no cover - depends on the extra
        raise ImportError("the dask engine needs Dask: pip install 'aidopt[dask]' "
                          "(or pip install 'dask[array,distributed]' zarr)") from exc
    return da


def is_dask_array(obj) -> bool:
    """True for a :class:`dask.array.Array` (without importing Dask when it is not loaded)."""
    module = sys.modules.get("dask.array")
    return module is not None and isinstance(obj, module.Array)


def is_path(obj) -> bool:
    return isinstance(obj, str | os.PathLike)


def is_out_of_core(obj) -> bool:
    """True for inputs the dask engine streams: a dask array, a :class:`ChunkedMatrix` or a path."""
    return isinstance(obj, ChunkedMatrix) or is_dask_array(obj) or is_path(obj)


def is_file_map(X) -> bool:
    """True for a memory map whose values are exactly those of its file region: the map itself
    (its base the :class:`mmap.mmap`, so ``offset`` is where its values start), shared with the
    file (not ``mode="c"``, whose writes stay in memory), at least 1-d."""
    return (isinstance(X, np.memmap) and isinstance(X.base, mmap.mmap) and X.filename is not None
            and X.mode in ("r", "r+", "w+") and X.ndim >= 1)


def default_chunk_rows(m: int, multiple_of: int = 1, chunk_bytes: int = CHUNK_BYTES) -> int:
    """Rows per chunk of about ``chunk_bytes`` (float64), a multiple of ``multiple_of``."""
    rows = max(1, chunk_bytes // (8 * max(1, m)))
    return max(multiple_of, rows // multiple_of * multiple_of)


# ----------------------------------------------------------------------- block functions
# Module-level (not closures) so that a distributed cluster pickles them by reference.


def _matmul(block, v):
    return block @ v


def _rmatmul(block, u):
    return block.T @ u


def _group_partial(block, labels, weights):
    """Weighted row sums of one block per cluster present in it: ``(keys, sums)``."""
    keys, inverse = np.unique(labels, return_inverse=True)
    indicator = sparse.csr_matrix((weights, (inverse, np.arange(labels.size))),
                                  shape=(keys.size, labels.size))
    return keys, indicator @ block


def _threads() -> int:
    """Tasks the scheduler of ``dask.compute`` runs at once: the threads of the active
    ``dask.distributed`` client, else of the local pool (``num_workers``, or the CPUs)."""
    import dask
    from dask.base import get_scheduler
    from dask.system import CPU_COUNT

    client = getattr(get_scheduler(), "__self__", None)  # Client.get when a client is active
    if client is not None and hasattr(client, "nthreads"):
        return max(1, sum(client.nthreads().values()))
    return max(1, int(dask.config.get("num_workers", None) or CPU_COUNT))


class ChunkedMatrix:
    """An n x m float64 matrix held as a dask array chunked by rows, with a numpy-like surface.

    Every operation that reads the matrix is one pass over its chunks and returns numpy:
    ``X @ v``, ``X.T @ u``, ``u @ X``, :meth:`group_sum`, ``X[rows]``, :meth:`map_blocks`.
    Nothing copies the whole matrix into memory unless it is small (``np.asarray(X)`` below
    ``max_load_bytes``; above, :class:`LoadRefusedError`).

    Parameters
    ----------
    array : dask.array.Array or ChunkedMatrix
        2-d, numeric, with known chunk sizes. Its row chunks are kept; its columns are merged
        into one chunk and its values read as float64 (both lazily, chunk by chunk).
    max_load_bytes : int, optional
        Largest result computed into memory by ``np.asarray(X)`` or ``X[rows]``
        (default :data:`MAX_LOAD_BYTES`).

    Attributes
    ----------
    array : dask.array.Array
        The row-chunked float64 array.
    passes : int
        Computations over the matrix so far (each reads every chunk it needs once); shared with
        the matrices derived from this one (:meth:`subset`, :meth:`with_ones_column`).
    pass_counts : collections.Counter
        The same passes by kind (``"X @ v"``, ``"X.T @ u"``, ``"group_sum"``, ...).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> X = ChunkedMatrix(da.ones((10, 3), chunks=(4, 3)))
    >>> X @ np.ones(3)
    array([3., 3., 3., 3., 3., 3., 3., 3., 3., 3.])
    >>> X.T @ np.ones(10), X.passes
    (array([10., 10., 10.]), 2)
    """

    #: numpy ufuncs (``np.abs(X)``) raise instead of loading X, and ``u @ X`` with a numpy u
    #: calls :meth:`__rmatmul__`
    __array_ufunc__ = None

    def __init__(self, array, *, max_load_bytes: int | None = None):
        if isinstance(array, ChunkedMatrix):
            max_load_bytes = array.max_load_bytes if max_load_bytes is None else max_load_bytes
            array = array.array
        da = _require_dask()
        if not isinstance(array, da.Array):
            raise TypeError(f"ChunkedMatrix wraps a dask array, got {type(array).__name__}: "
                            "use as_chunked() for numpy input")
        if array.ndim != 2:
            raise ValueError(f"X must be 2-d, got shape {array.shape}")
        if any(np.isnan(c) for c in array.chunks[0]):
            raise ValueError("X has unknown chunk sizes (e.g. from a dask DataFrame): call "
                             "X.compute_chunk_sizes() first, or to_dask_array(lengths=True)")
        if array.dtype.kind not in "biuf":
            raise TypeError(f"X must be numeric, got dtype {array.dtype}")
        if array.dtype != np.float64:
            array = array.astype(np.float64)
        if array.numblocks[1] != 1:
            array = array.rechunk({1: -1})
        self.array = array
        self.max_load_bytes = MAX_LOAD_BYTES if max_load_bytes is None else int(max_load_bytes)
        self.pass_counts: Counter = Counter()
        self._starts = np.concatenate([[0], np.cumsum(array.chunks[0], dtype=np.int64)])
        self._blocks = None

    def _derive(self, array) -> ChunkedMatrix:
        """A matrix on ``array`` that shares this one's pass counter and load limit."""
        out = ChunkedMatrix(array, max_load_bytes=self.max_load_bytes)
        out.pass_counts = self.pass_counts
        return out

    # ------------------------------------------------------------------ numpy-like attributes
    @property
    def shape(self) -> tuple[int, int]:
        return tuple(int(d) for d in self.array.shape)

    @property
    def dtype(self) -> np.dtype:
        return self.array.dtype

    @property
    def ndim(self) -> int:
        return 2

    @property
    def size(self) -> int:
        return self.shape[0] * self.shape[1]

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def chunks(self) -> tuple[int, ...]:
        """Rows of every chunk."""
        return tuple(int(c) for c in self.array.chunks[0])

    @property
    def passes(self) -> int:
        return sum(self.pass_counts.values())

    @property
    def T(self) -> _Transposed:
        """A view whose ``@ u`` is ``X.T @ u`` (one pass)."""
        return _Transposed(self)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        n, m = self.shape
        return (f"<ChunkedMatrix {n} x {m} float64, {len(self.chunks)} chunks of <= "
                f"{max(self.chunks, default=0)} rows, {self.passes} passes>")

    # ------------------------------------------------------------------ passes
    def _compute(self, kind: str, *collections):
        """``dask.compute(*collections)`` counted as one pass of ``kind`` (and logged)."""
        import dask

        self.pass_counts[kind] += 1
        start = time.perf_counter()
        out = dask.compute(*collections)
        logger.debug("pass %d over X (%s): %d chunks, %.2f s", self.passes, kind,
                     len(self.chunks), time.perf_counter() - start)
        return out

    def _tasks(self, func, row_args) -> list:
        """One delayed ``func(block, *row_slices)`` per row chunk, in row order."""
        from dask import delayed

        if self._blocks is None:
            self._blocks = list(self.array.to_delayed().ravel())
        call = delayed(func, pure=False)  # pure=False: no hashing of the (large) row arguments
        starts = self._starts
        return [call(block, *(a[starts[i]:starts[i + 1]] for a in row_args))
                for i, block in enumerate(self._blocks)]

    def _row_args(self, row_args):
        n = self.shape[0]
        out = []
        for a in row_args:
            a = np.asarray(a)
            if a.shape[:1] != (n,):
                raise ValueError(f"a per-row argument has shape {a.shape}, expected ({n}, ...)")
            out.append(a)
        return out

    def map_blocks(self, func, *row_args, kind: str = "map_blocks") -> list:
        """``[func(block, *row_slices) for every row chunk]``, computed in one pass.

        Parameters
        ----------
        func : callable
            ``func(block, *args)`` with ``block`` a float64 numpy array (rows x m) and each of
            ``args`` the slice of a per-row argument for the block's rows. On a distributed
            cluster it is pickled: prefer module-level functions.
        *row_args : ndarray of shape (n, ...)
            Arrays sliced along their first axis with the chunks.
        kind : str
            Label of the pass in :attr:`pass_counts`.

        Returns
        -------
        list
            One result per chunk, in row order.
        """
        return list(self._compute(kind, *self._tasks(func, self._row_args(row_args))))

    def iter_blocks(self, func, *row_args, kind: str = "iter_blocks"):
        """``func(block, *row_slices)`` for every row chunk, yielded in row order (one pass).

        For results too large to hold one per chunk (e.g. :meth:`group_sum`'s partial sums,
        up to one row per cluster each): the chunks are computed a wave at a time, as many as
        the scheduler runs at once, so a pass holds that many results plus what the caller keeps
        of them. Arguments as in :meth:`map_blocks`.

        Yields
        ------
        object
            ``func``'s result for each chunk, in row order.
        """
        import dask

        tasks = self._tasks(func, self._row_args(row_args))
        self.pass_counts[kind] += 1
        start, wave = time.perf_counter(), _threads()
        for first in range(0, len(tasks), wave):
            yield from dask.compute(*tasks[first:first + wave])
        logger.debug("pass %d over X (%s): %d chunks in waves of %d, %.2f s", self.passes, kind,
                     len(self.chunks), wave, time.perf_counter() - start)

    # ------------------------------------------------------------------ linear algebra
    def __matmul__(self, v):
        """``X @ v`` for v of shape (m,) or (m, k), as numpy (one pass)."""
        v = np.asarray(v, dtype=float)
        if v.ndim not in (1, 2) or v.shape[0] != self.shape[1]:
            raise ValueError(f"X @ v: X is {self.shape}, v has shape {v.shape}")
        parts = self.map_blocks(functools.partial(_matmul, v=v), kind="X @ v")
        out = np.empty((self.shape[0], *v.shape[1:]))
        for i in range(len(parts)):  # each part freed once copied: n values in memory, not 2n
            out[self._starts[i]:self._starts[i + 1]] = parts[i]
            parts[i] = None
        return out

    def rmatvec(self, u) -> np.ndarray:
        """``X.T @ u`` for u of shape (n,) or (n, k), as numpy (one pass; the per-chunk partial
        products are added in row order)."""
        u = np.asarray(u, dtype=float)
        if u.ndim not in (1, 2):
            raise ValueError(f"X.T @ u: u must be 1-d or 2-d, got shape {u.shape}")
        parts = self.map_blocks(_rmatmul, u, kind="X.T @ u")
        return functools.reduce(np.add, parts)

    def __rmatmul__(self, u):
        """``u @ X`` = ``X.T @ u`` for a 1-d u."""
        u = np.asarray(u, dtype=float)
        if u.ndim != 1:
            raise ValueError(f"u @ X needs a 1-d u, got shape {u.shape}")
        return self.rmatvec(u)

    def group_sum(self, labels, weights, n_clusters: int) -> np.ndarray:
        r"""Weighted row sums per cluster, :math:`\sum_{i: labels_i = k} w_i x_i`, in one pass.

        Parameters
        ----------
        labels : ndarray of int, shape (n,)
            Cluster of every row, in ``0..n_clusters-1``.
        weights : ndarray of shape (n,) or None
            Row weights (None: 1).
        n_clusters : int

        Returns
        -------
        ndarray of shape (n_clusters, m)
            Row k is 0 for a cluster without rows.

        Notes
        -----
        Each chunk gives the sums of the clusters present in it (a sparse indicator times the
        chunk, as :meth:`aidopt.decomposition.Partition.weighted_means` does in memory), at most
        ``min(n_clusters, rows) x m`` values; they are added into the result in row order as the
        waves of :meth:`iter_blocks` arrive. Memory holds the result and, per worker thread, a
        chunk and its partial sums: never a copy of X.
        """
        n, m = self.shape
        labels = np.asarray(labels)
        if labels.shape != (n,) or labels.dtype.kind not in "iu":
            raise ValueError(f"labels must be {n} integers, got shape {labels.shape} dtype {labels.dtype}")
        if n and (labels.min() < 0 or labels.max() >= n_clusters):
            raise ValueError(f"labels must lie in 0..{n_clusters - 1}")
        weights = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
        out = np.zeros((int(n_clusters), m))
        for keys, sums in self.iter_blocks(_group_partial, labels, weights, kind="group_sum"):
            out[keys] += sums  # keys are unique within a chunk
        return out

    # ------------------------------------------------------------------ reading into memory
    def __getitem__(self, key) -> np.ndarray:
        """Rows (and columns) as numpy: ``X[idx]`` with integer indices in any order (duplicates
        allowed; read once, in sorted order), a boolean mask, an int or a slice; optionally
        ``X[rows, cols]``. Refuses results larger than ``max_load_bytes``."""
        rows, cols = key if isinstance(key, tuple) else (key, slice(None))
        if isinstance(rows, slice | numbers.Integral):
            return self._load(self.array[rows, cols], "read rows")
        idx = np.asarray(rows)
        n = self.shape[0]
        if idx.dtype == bool:
            if idx.shape != (n,):
                raise IndexError(f"boolean row mask of shape {idx.shape} for {n} rows")
            idx = np.flatnonzero(idx)
        elif idx.dtype.kind in "iu" and idx.ndim == 1:
            if idx.size and (idx.min() < -n or idx.max() >= n):
                raise IndexError(f"row index out of range for {n} rows")
            idx = np.where(idx < 0, idx + n, idx)
        else:
            raise IndexError(f"rows must be an int, a slice, 1-d integers or a boolean mask; got {rows!r}")
        unique, inverse = np.unique(idx, return_inverse=True)
        return self._load(self.array[unique][:, cols], "read rows")[inverse]

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("a ChunkedMatrix cannot be viewed as numpy without a copy")
        out = self._load(self.array, "load")
        return out if dtype is None else out.astype(dtype, copy=False)

    def _load(self, part, kind: str) -> np.ndarray:
        if part.nbytes > self.max_load_bytes:
            raise LoadRefusedError(
                f"refusing to load {part.nbytes / 2**20:.0f} MiB of the out-of-core X into memory "
                f"(limit {self.max_load_bytes / 2**20:.0f} MiB): this operation is not supported "
                "by the dask engine; use engine='numpy' if X fits in memory, or raise "
                "ChunkedMatrix.max_load_bytes")
        return np.asarray(self._compute(kind, part)[0])

    # ------------------------------------------------------------------ derived matrices
    def subset(self, rows) -> ChunkedMatrix:
        """The rows of a boolean mask (or sorted integer indices), lazily (no pass)."""
        return self._derive(self.array[np.asarray(rows)])

    def with_ones_column(self) -> ChunkedMatrix:
        """The matrix with a column of ones appended, lazily (no pass)."""
        da = _require_dask()
        ones = da.ones((self.shape[0], 1), chunks=(self.array.chunks[0], 1))
        return self._derive(da.concatenate([self.array, ones], axis=1))


class _Transposed:
    """``X.T`` of a :class:`ChunkedMatrix`: only ``@`` (and ``.T`` back) are offered."""

    def __init__(self, matrix: ChunkedMatrix):
        self._matrix = matrix

    @property
    def shape(self) -> tuple[int, int]:
        return self._matrix.shape[::-1]

    ndim = 2

    @property
    def dtype(self) -> np.dtype:
        return self._matrix.dtype

    @property
    def T(self) -> ChunkedMatrix:
        return self._matrix

    def __matmul__(self, u):
        return self._matrix.rmatvec(u)

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self._matrix.__array__(dtype, copy)).T

    def __repr__(self) -> str:
        return f"<transpose of {self._matrix!r}>"


def to_dask(X, chunk_rows: int | None = None):
    """An in-memory array as a dask array chunked by rows (``chunk_rows``, default about
    :data:`CHUNK_BYTES` per chunk).

    A :class:`numpy.memmap` of a whole file region (``np.load(path, mmap_mode="r")``, not a
    slice of one; not copy-on-write) is read from its file like a ``.npy`` store, by explicit
    reads: ``dask.array.from_array`` would copy it into memory.
    """
    da = _require_dask()
    if is_file_map(X):
        layout = _NpyLayout(int(X.offset), tuple(X.shape), X.dtype,
                            bool(X.flags.f_contiguous and not X.flags.c_contiguous))
        return _open_npy(Path(X.filename), chunk_rows, layout)
    X = np.asarray(X)
    if X.ndim == 0:
        raise ValueError("X is a scalar, not a matrix")
    rows = chunk_rows or default_chunk_rows(int(np.prod(X.shape[1:], dtype=np.int64)))
    return da.from_array(X, chunks=(rows, *X.shape[1:]))


def as_chunked(X, chunk_rows: int | None = None) -> ChunkedMatrix:
    """A :class:`ChunkedMatrix` from a ChunkedMatrix, a dask array or an in-memory 2-d array.

    ``chunk_rows`` rechunks the rows (default: a dask array keeps its row chunks; a numpy array
    gets chunks of about :data:`CHUNK_BYTES`, a memory map of a file, read from the file, of
    :data:`NPY_CHUNK_BYTES`: :func:`to_dask`).
    """
    if isinstance(X, ChunkedMatrix):
        return X if chunk_rows is None else X._derive(X.array.rechunk({0: chunk_rows}))
    if not is_dask_array(X):
        return ChunkedMatrix(to_dask(X, chunk_rows))
    return ChunkedMatrix(X if chunk_rows is None else X.rechunk({0: chunk_rows}))


# ----------------------------------------------------------------------- stores


@dataclass
class Store:
    """An opened data store: the matrix (a lazy dask array), its column names if the store has
    them, and the named vectors read into memory."""

    array: object
    feature_names: list[str] | None = None
    vectors: dict[str, np.ndarray] = field(default_factory=dict)


def open_store(path, vectors=(), *, chunk_rows: int | None = None) -> Store:
    """Open a Zarr store, a ``.npy`` file or Parquet file(s) as a dask array, reading nothing of
    the matrix.

    Parameters
    ----------
    path : str or os.PathLike
        * Zarr: a directory ending in ``.zarr`` (or holding ``zarr.json`` / ``.zarray`` /
          ``.zgroup``). An array is the matrix; a group holds the matrix as array ``"X"`` and
          vectors (y, weights) as other 1-d arrays.
        * ``.npy``: the matrix, read block by block by explicit reads at the blocks' offsets
          (no memory map).
        * Parquet: a ``.parquet`` / ``.pq`` file or a directory of them (read in name order, one
          chunk per row group); every column not named in ``vectors`` is a feature.
    vectors : sequence of str
        Names of vectors in the same store (Zarr group arrays, Parquet columns), read whole.
    chunk_rows : int, optional
        Rows per chunk (default: about :data:`CHUNK_BYTES` for Zarr, aligned to the Zarr
        chunks, and :data:`NPY_CHUNK_BYTES` for ``.npy``; one row group per chunk for Parquet).

    Returns
    -------
    Store
    """
    _require_dask()
    kind, path, vectors = store_kind(path), Path(path), list(vectors)
    if kind == "npy":
        if vectors:
            raise ValueError(f"{path} is a .npy matrix: give {vectors} as arrays, not names")
        return Store(_open_npy(path, chunk_rows))
    if kind == "zarr":
        return _open_zarr(path, vectors, chunk_rows)
    return _open_parquet(path, vectors, chunk_rows)


def store_kind(path) -> str:
    """``"npy"``, ``"zarr"`` or ``"parquet"``: how :func:`open_store` reads ``path``.

    Raises
    ------
    FileNotFoundError
        No such file or directory.
    ValueError
        Any other kind of file.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"data store not found: {path}")
    suffix = path.suffix.lower()
    if suffix == ".npy":
        return "npy"
    if suffix == ".zarr" or any((path / f).exists() for f in ("zarr.json", ".zarray", ".zgroup")):
        return "zarr"
    if suffix in _PARQUET_SUFFIXES or (path.is_dir() and _parquet_files(path)):
        return "parquet"
    raise ValueError(f"{path}: unsupported data store; use a Zarr store, a .npy file or Parquet "
                     "file(s) (CSV and the other table formats: convert to Parquet first)")


def parquet_columns(path) -> list[str]:
    """Column names of a Parquet file, or of the first file of a directory."""
    import pyarrow.parquet as pq

    files = _parquet_files(Path(path))
    if not files:
        raise ValueError(f"{path}: no Parquet files")
    return list(pq.read_schema(files[0]).names)


@dataclass(frozen=True)
class _NpyLayout:
    """Where a ``.npy`` file keeps its values: the data offset, shape, dtype and order."""

    offset: int
    shape: tuple[int, ...]
    dtype: np.dtype
    fortran: bool

    @classmethod
    def read(cls, path) -> _NpyLayout:
        mm = np.load(path, mmap_mode="r")  # parses the header; maps the file, touches no data page
        # only a Fortran array that is not also C-contiguous has another byte order
        layout = cls(int(mm.offset), tuple(mm.shape), mm.dtype,
                     bool(mm.flags.f_contiguous and not mm.flags.c_contiguous))
        del mm
        return layout


def _read_exactly(fh, out: np.ndarray) -> None:
    """Fill the contiguous array ``out`` from the file's current position."""
    view = memoryview(out.reshape(-1).view(np.uint8))  # bytes of any dtype, byte order included
    while view:
        got = fh.readinto(view)
        if not got:
            raise OSError(f"{fh.name}: file ends {view.nbytes} bytes early")
        view = view[got:]


def _read_npy_rows(path: str, layout: _NpyLayout, start: int, stop: int) -> np.ndarray:
    """Rows ``start:stop`` of a ``.npy`` array, read by explicit reads at their offsets.

    No memory map: the pages of a map count as the process's resident memory while it lives
    (and the kernel may keep them there), a read leaves only the returned copy. A C-ordered
    file holds the rows as one run of bytes; a Fortran-ordered one holds each column's rows as
    a run of its own.
    """
    n, rest = layout.shape[0], layout.shape[1:]
    width = int(np.prod(rest, dtype=np.int64))  # values per row
    item = layout.dtype.itemsize
    block = np.empty((stop - start, *rest), dtype=layout.dtype, order="F" if layout.fortran else "C")
    with open(path, "rb", buffering=0) as fh:
        if not layout.fortran:
            fh.seek(layout.offset + start * width * item)
            _read_exactly(fh, block)
            return block
        columns = block.reshape(stop - start, width, order="F")  # a view of the F-ordered block
        for j in range(width):
            fh.seek(layout.offset + (j * n + start) * item)
            _read_exactly(fh, columns[:, j])
    return block


def _open_npy(path: Path, chunk_rows, layout: _NpyLayout | None = None):
    from dask import delayed

    da = _require_dask()
    layout = _NpyLayout.read(path) if layout is None else layout
    shape, dtype = layout.shape, layout.dtype
    if len(shape) == 0:
        raise ValueError(f"{path} holds a scalar, not a matrix")
    rows = chunk_rows or default_chunk_rows(int(np.prod(shape[1:], dtype=np.int64)),
                                            chunk_bytes=NPY_CHUNK_BYTES)
    read = delayed(_read_npy_rows)
    blocks = [da.from_delayed(read(str(path), layout, a, min(a + rows, shape[0])),
                              shape=(min(a + rows, shape[0]) - a, *shape[1:]), dtype=dtype)
              for a in range(0, shape[0], rows)]
    return da.concatenate(blocks, axis=0) if blocks else da.zeros(shape, dtype=dtype)


def _open_zarr(path: Path, vectors, chunk_rows) -> Store:
    import zarr

    da = _require_dask()
    node = zarr.open(str(path), mode="r")
    if isinstance(node, zarr.Group):
        names = sorted(node.array_keys())
        if ZARR_MATRIX not in names:
            raise ValueError(f"{path}: a Zarr group must hold the matrix as array "
                             f"{ZARR_MATRIX!r} (arrays: {names})")
        matrix, component = node[ZARR_MATRIX], ZARR_MATRIX
    else:
        if vectors:
            raise ValueError(f"{path} is a Zarr array, not a group: give {vectors} as arrays, not "
                             f"names (or store them next to array {ZARR_MATRIX!r} in a group)")
        matrix, component, names = node, None, []
    if matrix.ndim == 2:
        rows = chunk_rows or default_chunk_rows(matrix.shape[1], matrix.chunks[0])
        array = da.from_zarr(str(path), component=component, chunks=(rows, matrix.shape[1]))
    else:  # the shape check reports it
        array = da.from_zarr(str(path), component=component)
    found = {}
    for name in vectors:
        if name not in names:
            raise ValueError(f"{path}: no array {name!r} in the Zarr group (arrays: {names})")
        found[name] = np.asarray(node[name][...])
    return Store(array, None, found)


def _parquet_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.suffix.lower() in _PARQUET_SUFFIXES)


def _read_row_group(path: str, group: int, columns: list[str]) -> np.ndarray:
    """One Parquet row group as a float64 block (nulls read as NaN, which validation reports)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.ParquetFile(path).read_row_group(group, columns=columns)
    block = np.empty((table.num_rows, len(columns)))
    for j, name in enumerate(columns):
        block[:, j] = table.column(name).cast(pa.float64()).to_numpy()
    return block


def _open_parquet(path: Path, vectors, chunk_rows) -> Store:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - depends on the extra
        raise ImportError("reading Parquet needs pyarrow: pip install 'aidopt[parquet]'") from exc
    from dask import delayed

    da = _require_dask()
    files = _parquet_files(path)
    names = parquet_columns(path)
    schema = pq.read_schema(files[0])
    missing = [v for v in vectors if v not in names]
    if missing:
        raise ValueError(f"{path}: no column(s) {missing} (columns: {names[:20]})")
    columns = [c for c in names if c not in vectors]
    bad = [c for c in columns
           if not (pa.types.is_integer(schema.field(c).type) or pa.types.is_floating(schema.field(c).type)
                   or pa.types.is_boolean(schema.field(c).type))]
    if bad:
        raise TypeError(f"X has non-numeric columns {bad}: encode or drop them first")
    read = delayed(_read_row_group)
    blocks, found = [], {name: [] for name in vectors}
    for f in files:
        pfile = pq.ParquetFile(f)
        if list(pfile.schema_arrow.names) != names:
            raise ValueError(f"{f}: columns differ from those of {files[0]}")
        for g in range(pfile.metadata.num_row_groups):
            rows = pfile.metadata.row_group(g).num_rows
            if rows:
                blocks.append(da.from_delayed(read(str(f), g, columns), shape=(rows, len(columns)),
                                              dtype=np.float64))
        if vectors:
            table = pfile.read(columns=vectors)
            for name in vectors:
                found[name].append(table.column(name).to_numpy())
    if not blocks:
        raise ValueError(f"{path}: no rows")
    array = da.concatenate(blocks, axis=0)
    if chunk_rows is not None:
        array = array.rechunk({0: chunk_rows})
    return Store(array, columns, {k: np.concatenate(v) for k, v in found.items()})
