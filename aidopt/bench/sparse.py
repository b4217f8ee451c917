r"""``aidopt bench sparse``: aidopt's default by shape on sparse, wide data against the sparse
baselines, the instances read back from svmlight files, one table across problems.

For every generator, size and seed the driver generates the instance once and writes it with
scikit-learn's ``dump_svmlight_file`` (1-based indices, labels and values with 16 significant
digits) into the work directory. Then every method runs in its own subprocess, one after the
other, never two at once: it reads the file back with ``load_svmlight_file(path,
n_features=m)`` (a CSR float64 matrix, as a user of either library would load it), and times the
fit only. Each run reports its objective on aidopt's problem, evaluated on the file's data from
the returned point, and its peak memory during the fit.

Problems (``--problems``), aidopt's side always the door's default, which chooses the method by
the data's shape (:mod:`aidopt.api._shape`; the method it ran is shown beside its time):

* ``svm``: the linear 2-norm SVM with a free offset, ``solve_svm(X, y, C=C, tol=tol)``, against
  LIBLINEAR through scikit-learn, ``LinearSVC(loss="hinge", dual=True, C=C, max_iter=100000,
  random_state=seed)`` at its default ``tol`` (1e-4). LIBLINEAR regularizes the offset, so it
  solves a slightly different problem; Δ shows what that costs on aidopt's objective.
* ``l1``: the 1-norm SVM, ``solve_svm(X, y, C=C, norm="l1", tol=tol)``, against HiGHS's
  interior point on the 1-norm SVM's primal LP built from the CSR matrix with ``highspy`` (no
  presolve; only ``Highs.run()`` is timed).
* ``l1-lp``: the same 1-norm SVM with aidopt forced to the LP on all m columns
  (``aid=False``), against the same baseline: ``--problems l1 l1-lp`` puts column generation
  over features (``l1``'s default by shape when m >= 4 n, :mod:`aidopt.decomposition.colgen`)
  and the full LP side by side on the same files.
* ``lad``: LAD regression, ``solve_lad(X, y, tol=tol)``, against R's quantreg ``rq.fit.sfn``
  (sparse Frisch–Newton on SparseM's ``matrix.csr``, fit time inside R; skipped when
  ``Rscript`` is missing, and for n <= m, where X'X is singular). It is given X without its
  all-zero columns (their coefficients are free and the objective does not depend on them):
  with one, sfn returned a point 10 % above the optimum (a one-hot table of 400 rows, a
  text-like one of 2,000), with no error.

Generators (``--sets``): ``text`` / ``text:NNZ``, the tf-idf documents of
:func:`aidopt.instances.text.text_instance` (a Zipf vocabulary, NNZ distinct words a row,
default 40, unit rows); ``onehot`` / ``onehot:K``, the one-hot table of
:func:`aidopt.instances.onehot.onehot_instance` (K categorical columns, default 10, with Zipf
level frequencies, plus 10 numeric columns). For ``lad`` the regression data of
:func:`aidopt.bench.lad.instance`: an intercept column and m - 1 columns of the generator
(``onehot`` with its reference levels dropped), :math:`y = X\beta + e`, Laplace errors.

Peak memory is the fit's growth of the worker's resident set over the bytes of X (its stored
values and indices): the kernel's high-water mark (``VmHWM``) is reset after X is read
(``/proc/self/clear_refs``), so reading the file does not count; where that is not possible,
the process's peak since it started. For quantreg, which runs in R, the R heap's growth during
the fit (``gc()``'s "max used"; sfn's work arrays are R vectors).

Columns: problem, data, n, m, nnz, aidopt's method, its time and verdict (certified on the
original data or not, and its relative gap), the baseline, its time, ρ = baseline time / aidopt
time, Δ = (baseline objective - aidopt objective) / max(1, |aidopt objective|), peak memory over
X (aidopt, baseline).
"""

from __future__ import annotations

import json
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from aidopt.bench.lad import _nbytes, _objective, _worker_quantreg_sfn, environment, run_json, side_by_side
from aidopt.bench.svm import _highs_lp, _liblinear, _score

#: problem -> (what the table calls it, its baseline, what the table calls the baseline)
PROBLEMS = {
    "svm": ("2-norm SVM", "liblinear", "LIBLINEAR"),
    "l1": ("1-norm SVM", "highs-lp", "HiGHS IPM, LP from CSR"),
    # aidopt's side forced to the LP on all m columns (aid=False): beside ``l1``, whose default
    # on wide data (m >= 4 n) is column generation over features, the two side by side
    "l1-lp": ("1-norm SVM, full LP", "highs-lp", "HiGHS IPM, LP from CSR"),
    "lad": ("LAD", "quantreg-sfn", "quantreg rq.fit.sfn"),
}
DEFAULT_SETS = ("text", "onehot")
DEFAULT_SIZES = ("20000x2001",)
_SET = re.compile(r"(text(:\d+(\.\d+)?)?|onehot(:\d+)?)")


class Case(NamedTuple):
    """One instance of one problem, and its svmlight file."""

    problem: str
    spec: str
    n: int
    m: int
    seed: int
    path: Path

    def __str__(self) -> str:
        return f"{self.problem} {self.spec} {self.n}x{self.m} seed {self.seed}"


def check_sets(sets) -> list[str]:
    """The generator specs, checked: ``text``, ``text:NNZ``, ``onehot`` or ``onehot:K``."""
    bad = [s for s in sets if not _SET.fullmatch(s)]
    if bad:
        raise ValueError(f"bench sparse --sets: unknown generator(s) {bad}; use text, text:NNZ, "
                         "onehot or onehot:K")
    return list(sets)


def instance(problem: str, spec: str, n: int, m: int, seed: int):
    """``(X, y)`` of ``problem`` (``svm`` and ``l1``: classification; ``lad``: regression with
    an intercept column) from the generator ``spec`` (module docstring)."""
    if problem == "lad":
        from aidopt.bench.lad import instance as regression

        return regression(spec, n, m, seed)
    from aidopt.bench.svm import _load

    return _load(spec, n, m, seed)


def write_instance(problem: str, spec: str, n: int, m: int, seed: int, workdir) -> Path:
    """Generate the instance and write it as an svmlight file (1-based indices) in ``workdir``;
    ``svm`` and ``l1`` share one file. Returns its path."""
    from sklearn.datasets import dump_svmlight_file

    kind = "regression" if problem == "lad" else "classification"
    path = Path(workdir) / f"{spec.replace(':', '')}-{kind}-{n}x{m}-seed{seed}.svm"
    X, y = instance(problem, spec, n, m, seed)
    dump_svmlight_file(X, y, str(path), zero_based=False,
                       comment=f"aidopt bench sparse: {spec}, {kind}, n={n}, m={m}, seed={seed}")
    return path


# --------------------------------------------------------------------------- peak memory
def _status_kb(field: str) -> int:
    with open("/proc/self/status") as fh:
        return int(next(line.split()[1] for line in fh if line.startswith(field + ":")))


class FitPeak:
    """The resident set's growth from now to :meth:`mb`: the kernel's high-water mark reset now
    (``/proc/self/clear_refs``), or else the process's peak (``ru_maxrss``) since it started."""

    def __init__(self):
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")
            self.how, self.start = "VmHWM", _status_kb("VmRSS")
        except (OSError, StopIteration, ValueError):
            self.how, self.start = "ru_maxrss", 0

    def mb(self) -> float:
        if self.how == "VmHWM":
            return (_status_kb("VmHWM") - self.start) / 1024.0
        scale = 2**20 if sys.platform == "darwin" else 2**10  # bytes on macOS, KiB on Linux
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


# --------------------------------------------------------------------------- worker
def _method(res) -> str:
    """The method the door chose, in short, from the shape note that ends ``res.message``."""
    note = res.message.rsplit("; ", 1)[-1].split(":", 1)[0]
    for words, short in (("dual coordinate descent", "dcd"),
                         ("column generation over features", "column generation, {solver}"),
                         ("Frisch-Newton on the full data", "FN, sparse normal equations"),
                         ("the dual LP on the full data", "dual LP, {solver}"),
                         ("the LP on the full data", "LP from CSR, {solver}"),
                         ("AID", "AID, {solver}"), ("the direct solve", "direct, {solver}")):
        if note.startswith(words):
            return short.format(solver=res.solver)
    return str(res.solver)


def worker(method: str, problem: str, path, m: int, C: float = 1.0, tol: float = 1e-6,
           time_limit: float = 3600.0, seed: int = 0) -> dict:
    """Read the svmlight file ``path`` (m columns), run ``method`` (``aidopt`` or the problem's
    baseline) on it; return its time, objective, verdict and peak memory (module docstring)."""
    from sklearn.datasets import load_svmlight_file

    if problem not in PROBLEMS:
        raise ValueError(f"unknown problem {problem!r}; choose from {list(PROBLEMS)}")
    if method not in ("aidopt", PROBLEMS[problem][1]):
        raise ValueError(f"{problem}: methods are aidopt and {PROBLEMS[problem][1]}, not {method!r}")
    X, y = load_svmlight_file(str(path), n_features=m, zero_based=False)
    if X.nnz < 2**31 and X.indices.dtype != np.int32:  # LIBLINEAR takes 32-bit indices only
        X = type(X)((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape)
    norm = "l1" if problem in ("l1", "l1-lp") else "l2"
    out = {"n": X.shape[0], "m": X.shape[1], "nnz": int(X.nnz), "X_mb": _nbytes(X) / 2**20}
    peak = FitPeak()
    w = b = beta = None
    if method == "aidopt":
        import aidopt

        options = {"tol": tol, "log": False, "time_limit": time_limit, "raise_on_failure": False}
        if problem == "l1-lp":  # the LP on all columns: never column generation
            options["aid"] = False
        t0 = time.perf_counter()
        res = (aidopt.solve_lad(X, y, **options) if problem == "lad"
               else aidopt.solve_svm(X, y, C=C, norm=norm, **options))
        out["seconds"] = time.perf_counter() - t0
        out["peak_mb"] = peak.mb()
        out.update(termination=res.termination.value, certified=bool(res.certified),
                   gap=res.gap, method=_method(res), note=res.message, T=len(res.history))
        if problem == "lad":
            beta = res.solution.get("beta")
        else:
            w, b = res.solution.get("w"), res.solution.get("b")
    elif problem == "svm":
        out["seconds"], w, b = _liblinear(X, y, C, seed)
        out["peak_mb"], out["termination"] = peak.mb(), "done"
    elif problem in ("l1", "l1-lp"):
        out["seconds"], w, b, out["termination"] = _highs_lp(X, y, C, "l1", time_limit)
        out["peak_mb"] = peak.mb()
    else:
        if X.shape[0] <= X.shape[1]:
            return {**out, "skipped": "not run: n <= m (X'X is singular, sfn needs n > m)"}
        used = np.flatnonzero(X.getnnz(axis=0))  # sfn's answer is wrong with an all-zero column
        out["empty_columns"] = int(X.shape[1] - used.size)
        base = _worker_quantreg_sfn(X[:, used] if out["empty_columns"] else X, y, time_limit)
        if "skipped" in base:
            return {**out, **base}
        out.update(seconds=base["seconds"], termination=base["termination"],
                   objective=base["objective"], peak_mb=base["r_peak_mb"])
        peak.how = "R heap (gc)"
    if beta is not None:
        out["objective"] = _objective(X, y, beta)
    elif w is not None and b is not None:
        out["objective"], out["accuracy"] = _score(X, y, np.asarray(w, dtype=float), float(b), C, norm)
    out["peak_how"] = peak.how
    out["peak_over_X"] = out["peak_mb"] * 2**20 / _nbytes(X)
    return out


# --------------------------------------------------------------------------- driver
def versions(problems) -> str:
    """The machine's memory and the versions the table depends on beyond :func:`environment`."""
    import clarabel
    import scipy
    import sklearn

    from aidopt.data.machine import physical_memory

    text = (f"{physical_memory() / 2**30:.0f} GB, scipy {scipy.__version__}, scikit-learn "
            f"{sklearn.__version__}, Clarabel {clarabel.__version__}")
    if "lad" in problems:
        text += ", " + r_versions()
    return text


def r_versions() -> str:
    """R's, quantreg's and SparseM's versions, or why R is not there."""
    if shutil.which("Rscript") is None:
        return "no Rscript (quantreg not run)"
    proc = subprocess.run(
        ["Rscript", "-e", 'cat(R.version$major, ".", R.version$minor, " ", '
                          'as.character(packageVersion("quantreg")), " ", '
                          'as.character(packageVersion("SparseM")), sep = "")'],
        capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        return "R without quantreg / SparseM (quantreg not run)"
    r, quantreg, sparsem = proc.stdout.split()
    return f"R {r}, quantreg {quantreg}, SparseM {sparsem}"


def bench_sparse(sizes=((20_000, 2_001),), sets=DEFAULT_SETS, problems=tuple(PROBLEMS), C=1.0,
                 tol=1e-6, repeat=1, seed=0, workdir=None, output=None, time_limit=3600.0) -> str:
    """Write each instance as an svmlight file, run aidopt and the problem's baseline on it, each
    in its own subprocess; print (and append to ``output``) one markdown table across problems.

    Parameters
    ----------
    sizes : sequence of (int, int)
        ``(n, m)`` of each instance.
    sets : sequence of str
        Generators: ``text``, ``text:NNZ``, ``onehot``, ``onehot:K`` (module docstring).
    problems : sequence of {"svm", "l1", "l1-lp", "lad"}
    C : float, default 1
        The SVMs' misclassification cost (both sides).
    tol : float, default 1e-6
        aidopt's relative gap.
    repeat : int, default 1
        Instances per size, seeds ``seed``, ``seed + 1``, ...
    seed : int
    workdir : str or os.PathLike, optional
        Where the svmlight files are written (created if missing, kept); by default a
        temporary directory, removed at the end.
    output : str or os.PathLike, optional
        Append the table to this file.
    time_limit : float
        Seconds per run (aidopt's ``time_limit``, HiGHS's, R's timeout).

    Returns
    -------
    str
        The table.
    """
    sets = check_sets(sets)
    bad = [p for p in problems if p not in PROBLEMS]
    if bad or not problems:
        raise ValueError(f"bench sparse --problems: unknown {bad}; choose from {list(PROBLEMS)}")
    if not sizes or any(n < 2 or m < 1 for n, m in sizes):
        raise ValueError(f"bench sparse --sizes: need NxM with N >= 2, M >= 1, got {sizes}")
    with tempfile.TemporaryDirectory() if workdir is None else _kept(workdir) as where:
        files = {}
        cases = []
        for spec in sets:
            for n, m in sizes:
                for rep in range(repeat):
                    for problem in problems:
                        key = (problem == "lad", spec, n, m, seed + rep)
                        if key not in files:
                            files[key] = write_instance(problem, spec, n, m, seed + rep, where)
                        cases.append(Case(problem, spec, n, m, seed + rep, files[key]))
        lines = [f"Environment: {environment()}, {versions(problems)}",
                 "",
                 f"C = {C:g} (SVMs), aidopt tol {tol:g}, time limit {time_limit:g} s; instances "
                 f"as svmlight files in {where}, read back with load_svmlight_file; each method in "
                 "its own process, one after the other, fit time only; peak memory: the fit's "
                 "growth over X's bytes (aidopt and the Python baselines: resident set; quantreg: "
                 "R heap).",
                 "",
                 "| problem | data | n | m | nnz | aidopt (by shape) | aidopt (s) | verdict | "
                 "baseline | baseline (s) | ρ = base / aidopt | Δ | peak / X (aidopt, base) |",
                 "|" + "---|" * 13]
        return side_by_side(
            cases, ["baseline"],
            lambda method, c: _run("aidopt" if method == "aid" else PROBLEMS[c.problem][1], c, C,
                                   tol, time_limit),
            lambda c, aid, method, base: row(c.problem, c.spec, aid, base),
            lines, output,
        )


class _kept:
    """A work directory that is created if missing and kept (``with`` gives its path)."""

    def __init__(self, path):
        self.path = Path(path)

    def __enter__(self) -> str:
        self.path.mkdir(parents=True, exist_ok=True)
        return str(self.path)

    def __exit__(self, *exc) -> None:
        return None


def _run(method: str, case: Case, C, tol, time_limit) -> dict:
    return run_json([sys.executable, "-m", "aidopt.bench.sparse", method, case.problem,
                     str(case.path), str(case.m), str(C), str(tol), str(time_limit),
                     str(case.seed)], time_limit)


def row(problem: str, spec: str, aid: dict, base: dict) -> str:
    """One table row: aidopt's run and its baseline's on one instance (module docstring)."""
    title, _, baseline = PROBLEMS[problem]

    def f(v, fmt):
        return "—" if v is None else format(v, fmt)

    lead = f"| {title} | {spec} | {aid.get('n', '—')} | {aid.get('m', '—')} | {aid.get('nnz', '—')} |"
    if "skipped" in aid:
        return f"{lead} aidopt skipped: {aid['skipped']} |" + " |" * 7
    gap = aid.get("gap")
    gap = f"gap {gap:.1e}" if isinstance(gap, float | int) and np.isfinite(gap) else "no gap"
    verdict = f"certified, {gap}" if aid["certified"] else f"not certified ({aid['termination']}), {gap}"
    head = f"{lead} {aid['method']} | {aid['seconds']:.2f} | {verdict} | {baseline} |"
    if "objective" not in aid:  # no point returned (a failure the verdict names)
        return f"{head} | | | | {aid['peak_over_X']:.2f}, — |"
    if "skipped" in base or "objective" not in base:
        return (f"{head} {base.get('skipped', base.get('termination'))} | | | "
                f"{aid['peak_over_X']:.2f}, — |")
    status = "" if base.get("termination") in ("Optimal", "done") else f" ({base.get('termination')})"
    delta = (base["objective"] - aid["objective"]) / max(1.0, abs(aid["objective"]))
    return (f"{head} {base['seconds']:.2f}{status} | {base['seconds'] / aid['seconds']:.2f} | "
            f"{delta:.1e} | {aid['peak_over_X']:.2f}, {base['peak_over_X']:.2f} |")


if __name__ == "__main__":
    method, problem, path, m, C, tol, time_limit, seed = sys.argv[1:9]
    result = worker(method, problem, path, int(m), float(C), float(tol), float(time_limit), int(seed))
    print(json.dumps(result))
