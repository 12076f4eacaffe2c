"""Two versions of skboltz timed in one process, fit by fit: is the new code as fast?

Imports the skboltz of another checkout (``--against PATH``, e.g. a git worktree of the
commit before a change) under the name ``skboltz_before``, beside this checkout's
``skboltz`` (or that of ``--checkout PATH``), and times the same fits with each,
alternating old and new (the order reversed every other repeat, so that a machine
getting busier or quieter favours neither), on the settings of the epoch benchmarks
(``bench_rbm_vs_sklearn.py``; its settings, data and timers are in ``_epoch_timing.py``):

- ``speed``: the digits (scaled to [0, 1], and binarized), n_components 16, 64, 256,
  batch 10 and 100, float32 and float64, RBM at its defaults, with BernoulliRBM's
  algorithm (``learning=PCD(negative_visible="sample")``) and with ``learning="cd"``:
  milliseconds per epoch (fits of N_EPOCHS epochs);
- ``partial-fit``: microseconds per ``partial_fit`` call on one minibatch (RBM at its
  defaults, as bench_rbm_vs_sklearn.py's streaming table);
- ``mnist``: 784 visible units (the first 12,000 of Fashion-MNIST's training images,
  binarized; skipped when they are missing), 500 hidden, batch 100, ``learning="cd"``
  and BernoulliRBM's PCD-1: seconds per epoch with the BLAS threads skboltz chooses,
  then CPU seconds per epoch with one BLAS thread;
- ``gaussian``: GaussianRBM at its defaults (parallel tempering) on the digits as real
  values (61 standardised pixels), n_components 16 and 64, batch 10 and 100;
- ``classifier``: RBMClassifier at its defaults on the digits with their labels,
  n_components 64 and 256, batch 20 (its default) and 100, and with two thirds of the
  rows unlabelled (``unlabelled_marker=-1``).

Each row shows the old and the new time (medians over the repeats, 4 by default: an
even number, so that each version goes first as often) and their ratio, old / new, the
median of the repeats' paired ratios (each pair timed back to back): at least 1 means
the new code is no slower. Rows under ``--threshold`` (default 0.98) are flagged with
"<" and listed at the end. The CPU line comes first, the load average last: on a
shared machine, compare only runs with a low load, and rerun a flagged row
(``--parts``, more ``--repeats``, or ``--clock cpu``: CPU time, which other jobs move
less) before believing it. ``--json PATH`` keeps every timing.

Run from the repository root, the new code checked out here::

    git worktree add /tmp/before <commit before the change>
    python benchmarks/compare_checkouts.py --against /tmp/before
    python benchmarks/compare_checkouts.py --against /tmp/before --parts speed,mnist
    python benchmarks/compare_checkouts.py --against /tmp/before --quick  # a smoke test

``--quick`` runs a fraction of each part (fewer settings, epochs, calls and rows) to
check that the harness works; its ratios are not a measurement.
"""

import argparse
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: one BLAS thread

import ast
import atexit
import importlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from _data import available_images_784, images_784
from _epoch_timing import (
    MNIST_BATCH_SIZE,
    MNIST_EPOCHS,
    MNIST_HIDDEN,
    N_EPOCHS,
    N_MNIST_ROWS,
    PARTIAL_FIT_CALLS,
    PARTIAL_FIT_SETTINGS,
    SPEED_DTYPES,
    cpu_seconds,
    digits,
    fit_seconds,
    partial_fit_call_seconds,
    speed_settings,
    standardized_digits,
)
from _machine import print_machine
from threadpoolctl import threadpool_limits

THIS_CHECKOUT = Path(__file__).resolve().parents[1]
#: The name the other checkout's skboltz is imported under.
OLD_NAME = "skboltz_before"
THRESHOLD = 0.98
#: Timed fits of each version per row: even, so that each version goes first equally
#: often (the MNIST part's fits are long: fewer in --quick; partial_fit: rounds of
#: calls).
REPEATS = 4
QUICK_MNIST_REPEATS = 2
PARTIAL_FIT_REPEATS = 8
CLOCKS = {"wall": fit_seconds, "cpu": cpu_seconds}

# -- the two packages ---------------------------------------------------------------


def rename_absolute_imports(package_dir, old, new):
    """Make the modules of a copied package import it under its new name.

    Relative imports need nothing; an absolute ``import old`` or ``from old... import``
    (found by parsing, so docstrings' examples are left alone) is rewritten. Returns
    the rewritten imports as ``"file:line"``.
    """
    rewritten = []
    pattern = re.compile(rf"\b{old}\b")
    for path in sorted(package_dir.rglob("*.py")):
        source = path.read_text()
        lines = source.splitlines(keepends=True)
        changed = False
        for node in ast.walk(ast.parse(source)):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            if any(name.split(".")[0] == old for name in names):
                for k in range(node.lineno - 1, node.end_lineno):
                    lines[k] = pattern.sub(new, lines[k])
                changed = True
                rewritten.append(f"{path.relative_to(package_dir.parent)}:{node.lineno}")
        if changed:
            path.write_text("".join(lines))
    return rewritten


def import_renamed_copy(checkout, name):
    """The skboltz of ``checkout``, copied to a temporary folder and imported as
    ``name`` (the checkout itself is only read)."""
    source = Path(checkout).resolve() / "skboltz"
    if not (source / "__init__.py").is_file():
        sys.exit(f"{checkout}: no skboltz/__init__.py there")
    folder = Path(tempfile.mkdtemp(prefix="compare_checkouts_"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
    rewritten = rename_absolute_imports(folder / name, "skboltz", name)
    sys.path.insert(0, str(folder))
    return importlib.import_module(name), rewritten


def import_checkout(checkout):
    """The skboltz of ``checkout`` under its own name (ahead of any installed one)."""
    checkout = Path(checkout).resolve()
    sys.path.insert(0, str(checkout))
    module = importlib.import_module("skboltz")
    if Path(module.__file__).resolve().parent != checkout / "skboltz":
        sys.exit(f"imported {module.__file__}, not the skboltz of {checkout}")
    return module


def describe(checkout):
    """The checkout's commit, and whether its skboltz/ has uncommitted changes."""
    def git(*args):
        result = subprocess.run(["git", "-C", str(checkout), *args], capture_output=True,
                                text=True, check=False)
        return result.stdout.strip() if result.returncode == 0 else ""

    commit = git("log", "-1", "--format=%h %s")[:72] or "(not a git checkout)"
    dirty = " + uncommitted changes in skboltz/" if git("status", "--porcelain",
                                                        "--", "skboltz") else ""
    return f"{checkout} at {commit}{dirty}"


# -- timing -------------------------------------------------------------------------


def alternate(time_old, time_new, repeats):
    """Seconds of ``repeats`` calls of each timer (called with the repeat's number, a
    seed), old and new alternately: old first in even repeats, new first in odd ones.
    Returns (old times, new times)."""
    old, new = [], []
    for repeat in range(repeats):
        if repeat % 2 == 0:
            old.append(time_old(repeat))
            new.append(time_new(repeat))
        else:
            new.append(time_new(repeat))
            old.append(time_old(repeat))
    return np.array(old), np.array(new)


class Table:
    """Rows of old and new times, printed as they come; kept for the summary."""

    def __init__(self, title, columns, unit, scale, threshold):
        self.title, self.columns, self.unit = title, columns, unit
        self.scale, self.threshold, self.rows = scale, threshold, []

    def header(self):
        print(self.title)
        line = (" ".join(f"{name:>{width}s}" for name, width in self.columns)
                + f" {'old ' + self.unit:>10s} {'new ' + self.unit:>10s} {'old/new':>8s}")
        print(line + "\n" + "-" * len(line), flush=True)

    def row(self, values, old, new):
        """One row from per-repeat times (seconds per unit of work)."""
        ratio = float(np.median(old / new))
        slow = ratio < self.threshold
        self.rows.append({"table": self.title.split(":")[0], "setting": list(map(str, values)),
                          "old": old.tolist(), "new": new.tolist(), "ratio": ratio})
        cells = " ".join(f"{str(value):>{width}s}"
                         for value, (_, width) in zip(values, self.columns))
        print(f"{cells} {np.median(old) * self.scale:10.3f} "
              f"{np.median(new) * self.scale:10.3f} {ratio:8.3f}{' <' if slow else ''}",
              flush=True)

    def footer(self):
        ratios = [row["ratio"] for row in self.rows]
        if ratios:
            print(f"old/new: median {np.median(ratios):.3f}, lowest {min(ratios):.3f}; "
                  f"{sum(r < self.threshold for r in ratios)} of {len(ratios)} rows under "
                  f"{self.threshold}\n", flush=True)


def learning_name(learning):
    return learning if isinstance(learning, str) else "PCD-sample"


def rbm_learnings(package):
    """The RBM's learnings of the speed table: its default, BernoulliRBM's algorithm,
    and CD-1."""
    return (None, package.learning.PCD(negative_visible="sample"), "cd")


def epoch_rows(table, old, new, fits, n_epochs, options):
    """Time ``fits``: (row values, build(package, seed) -> estimator, data) each."""
    clock = CLOCKS[options.clock]
    table.header()
    for values, build, data in fits:
        times = alternate(lambda seed: clock(build(old, seed), *data) / n_epochs,
                          lambda seed: clock(build(new, seed), *data) / n_epochs,
                          options.repeats or REPEATS)
        table.row(values, *times)
    table.footer()


def epochs(n):
    return f"{n} epoch{'s' if n != 1 else ''}"


def fits_title(what, unit, n_epochs, options):
    return (f"{what}: {unit} per epoch ({options.clock} time; fits of {epochs(n_epochs)}, "
            f"median of {options.repeats or REPEATS}, alternating)")


def speed_part(old, new, options):
    n_epochs = options.epochs or N_EPOCHS
    table = Table(fits_title("RBM epochs", "ms", n_epochs, options),
                  [("data", 9), ("dtype", 7), ("hidden", 6), ("batch", 5),
                   ("learning", 10)], "ms", 1e3, options.threshold)
    settings = (speed_settings(kinds=("scaled",), components=(16, 256)) if options.quick
                else speed_settings())
    fits = []
    for dtype, kind, n_components, batch_size in settings:
        X, _ = digits(kind, dtype)
        for k, learning in enumerate(rbm_learnings(new)):
            def build(package, seed, k=k, n_components=n_components,
                      batch_size=batch_size):
                learning = rbm_learnings(package)[k]
                return package.RBM(n_components=n_components, batch_size=batch_size,
                                   n_iter=n_epochs, random_state=seed,
                                   **({"learning": learning} if learning else {}))
            fits.append(((kind, np.dtype(dtype).name, n_components, batch_size,
                          learning_name(learning) if learning else "default"), build, (X,)))
    epoch_rows(table, old, new, fits, n_epochs, options)
    return table


def partial_fit_part(old, new, options):
    n_calls = 50 if options.quick else PARTIAL_FIT_CALLS
    rounds = options.repeats or PARTIAL_FIT_REPEATS
    table = Table(f"RBM partial_fit on one minibatch: us per call (wall time; median of "
                  f"{rounds} rounds of {n_calls} calls, alternating)",
                  [("dtype", 7), ("hidden", 6), ("batch", 5)], "us", 1e6, options.threshold)
    table.header()
    for dtype in SPEED_DTYPES:
        X, _ = digits("scaled", dtype)
        for n_components, batch_size in PARTIAL_FIT_SETTINGS:
            def timer(package):
                return lambda seed: partial_fit_call_seconds(
                    package.RBM(n_components=n_components, batch_size=batch_size,
                                random_state=0), X, batch_size, n_calls)
            table.row((np.dtype(dtype).name, n_components, batch_size),
                      *alternate(timer(old), timer(new), rounds))
    table.footer()
    return table


def mnist_part(old, new, options):
    if not available_images_784(["fashion-binary"]):
        print("(the MNIST-sized part is skipped)\n")
        return None
    n_rows = 2000 if options.quick else N_MNIST_ROWS
    n_epochs = options.epochs or (1 if options.quick else MNIST_EPOCHS)
    repeats = options.repeats or (QUICK_MNIST_REPEATS if options.quick else REPEATS)
    default_threads = os.cpu_count()  # what OpenBLAS uses unless told otherwise
    tables = []
    for threads, clock, unit in ((default_threads, fit_seconds, "wall"),
                                 (1, cpu_seconds, "CPU")):
        table = Table(
            f"MNIST-sized RBM epochs, {unit} time: s per epoch (784 visible, "
            f"{MNIST_HIDDEN} hidden, batch {MNIST_BATCH_SIZE}, {n_rows} rows of "
            f"Fashion-MNIST binarized; fits of {epochs(n_epochs)}, median of {repeats}, "
            f"alternating; BLAS limited to {threads} thread(s))",
            [("dtype", 7), ("learning", 10)], "s", 1.0, options.threshold)
        table.header()
        for dtype in SPEED_DTYPES:
            X = images_784("fashion-binary", dtype=dtype, n_train=n_rows)[0]
            for k, learning in enumerate(rbm_learnings(new)[1:], start=1):
                def timer(package, k=k, clock=clock, X=X):
                    return lambda seed: clock(package.RBM(
                        n_components=MNIST_HIDDEN, batch_size=MNIST_BATCH_SIZE,
                        n_iter=n_epochs, learning=rbm_learnings(package)[k],
                        random_state=seed), X) / n_epochs
                with threadpool_limits(limits=threads, user_api="blas"):
                    times = alternate(timer(old), timer(new), repeats)
                table.row((np.dtype(dtype).name, learning_name(learning)), *times)
        table.footer()
        tables.append(table)
    return tables


def gaussian_part(old, new, options):
    n_epochs = options.epochs or (2 if options.quick else 5)
    table = Table(fits_title("GaussianRBM epochs (default learning)", "ms", n_epochs,
                             options),
                  [("dtype", 7), ("hidden", 6), ("batch", 5)], "ms", 1e3, options.threshold)
    fits = []
    for dtype in SPEED_DTYPES:
        X, _ = standardized_digits(dtype)
        for n_components in (16,) if options.quick else (16, 64):
            for batch_size in (10, 100):
                def build(package, seed, n_components=n_components, batch_size=batch_size):
                    return package.GaussianRBM(n_components=n_components,
                                               batch_size=batch_size, n_iter=n_epochs,
                                               random_state=seed)
                fits.append(((np.dtype(dtype).name, n_components, batch_size), build, (X,)))
    epoch_rows(table, old, new, fits, n_epochs, options)
    return table


def classifier_part(old, new, options):
    n_epochs = options.epochs or (2 if options.quick else 5)
    table = Table(fits_title("RBMClassifier epochs (defaults)", "ms", n_epochs, options),
                  [("dtype", 7), ("hidden", 6), ("batch", 5), ("labels", 7)], "ms", 1e3,
                  options.threshold)
    settings = [(64, 20, "all"), (256, 20, "third")] if options.quick else [
        (64, 20, "all"), (64, 100, "all"), (256, 20, "all"), (256, 100, "all"),
        (256, 20, "third")]
    fits = []
    for dtype in SPEED_DTYPES:
        X, y = digits("scaled", dtype)
        for n_components, batch_size, labels in settings:
            marker = None if labels == "all" else -1
            target = y if labels == "all" else np.where(np.arange(len(y)) % 3 == 0, y, -1)

            def build(package, seed, n_components=n_components, batch_size=batch_size,
                      marker=marker):
                return package.RBMClassifier(n_components=n_components,
                                             batch_size=batch_size, n_iter=n_epochs,
                                             unlabelled_marker=marker, random_state=seed)
            fits.append(((np.dtype(dtype).name, n_components, batch_size, labels), build,
                         (X, target)))
    epoch_rows(table, old, new, fits, n_epochs, options)
    return table


PARTS = {"speed": speed_part, "partial-fit": partial_fit_part, "mnist": mnist_part,
         "gaussian": gaussian_part, "classifier": classifier_part}


def warm_up(packages):
    """One small fit of each estimator of each package: first calls (lazy imports,
    numpy's first use of a loop) are not timed in the first row."""
    X, y = digits("scaled", np.float32)
    Xg, _ = standardized_digits(np.float32)
    for package in packages:
        for learning in rbm_learnings(package):
            package.RBM(n_components=16, n_iter=1, random_state=0,
                        **({"learning": learning} if learning else {})).fit(X[:200])
        package.RBM(n_components=16, random_state=0).partial_fit(X[:10])
        package.GaussianRBM(n_components=4, n_iter=1, batch_size=100, random_state=0).fit(Xg)
        package.RBMClassifier(n_components=8, n_iter=1, random_state=0).fit(X[:200], y[:200])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", required=True, metavar="PATH",
                        help="the checkout of the old code (its skboltz/ is copied)")
    parser.add_argument("--checkout", default=str(THIS_CHECKOUT), metavar="PATH",
                        help="the checkout of the new code (default: this script's)")
    parser.add_argument("--parts", default=",".join(PARTS),
                        help=f"comma-separated, from {', '.join(PARTS)} (default: all)")
    parser.add_argument("--repeats", type=int, default=None,
                        help=f"timed fits of each version per row, best even (default "
                        f"{REPEATS}; partial-fit: {PARTIAL_FIT_REPEATS} rounds of calls); "
                        "more on a busy machine")
    parser.add_argument("--clock", choices=CLOCKS, default="wall",
                        help="the epochs' time: wall (as bench_rbm_vs_sklearn.py), or "
                        "the process's CPU time (less moved by other jobs on a shared "
                        "machine, with one BLAS thread)")
    parser.add_argument("--epochs", type=int, default=None,
                        help="epochs per timed fit (default: each part's own)")
    parser.add_argument("--quick", action="store_true",
                        help="a fraction of each part: checks the harness, measures "
                        "nothing")
    parser.add_argument("--threshold", type=float, default=THRESHOLD,
                        help="flag rows whose old/new ratio is below this")
    parser.add_argument("--json", metavar="PATH", help="also write every row's times")
    options = parser.parse_args()
    parts = [part.strip() for part in options.parts.split(",") if part.strip()]
    unknown = [part for part in parts if part not in PARTS]
    if unknown:
        parser.error(f"unknown part(s) {unknown}; choose from {list(PARTS)}")

    new = import_checkout(options.checkout)
    old, rewritten = import_renamed_copy(options.against, OLD_NAME)
    warnings.simplefilter("ignore", category=UserWarning)  # the packages' warnings too
    start = time.perf_counter()
    print_machine()
    print(f"old: {describe(Path(options.against).resolve())}, imported as {OLD_NAME}"
          + (f" (absolute imports renamed: {', '.join(rewritten)})" if rewritten else ""))
    print(f"new: {describe(Path(options.checkout).resolve())}")
    print("old/new: the median over the repeats of old time / new time, each pair timed "
          f"back to back (>= 1: the new code is no slower; '<': under "
          f"{options.threshold}){'; QUICK: not a measurement' if options.quick else ''}\n",
          flush=True)
    warm_up((old, new))
    tables = []
    for part in parts:
        result = PARTS[part](old, new, options)
        tables.extend(result if isinstance(result, list) else [result] if result else [])
    rows = [row for table in tables for row in table.rows]
    slow = [row for row in rows if row["ratio"] < options.threshold]
    if rows:
        print(f"all rows: old/new median {np.median([r['ratio'] for r in rows]):.3f}, "
              f"lowest {min(r['ratio'] for r in rows):.3f}; {len(slow)} of {len(rows)} "
              f"rows under {options.threshold}")
    for row in slow:
        print(f"  < {row['table']}: {' '.join(row['setting'])}: {row['ratio']:.3f}")
    print(f"\ntotal {time.perf_counter() - start:.0f} s; load average after: "
          "%.2f %.2f %.2f" % os.getloadavg())
    if options.json:
        Path(options.json).write_text(json.dumps(
            {"old": describe(Path(options.against).resolve()),
             "new": describe(Path(options.checkout).resolve()), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
