"""Classifiers on real images, and RBM(500) at full size: Fashion-MNIST (issue 30).

Data: Fashion-MNIST (Xiao, Rasul & Vollgraf 2017; ``_data.images_784("fashion")``),
grey levels / 255 in float32, the first ``--n-train`` training images and the first
``--n-test`` test images (all 60,000 and 10,000 by default).

Part "classifiers": every model fitted in this one process, one after the other, in
two settings:

- **all labels**: every training row labelled;
- **1,000 labels** (``--n-labels``): a stratified subset of the training rows keeps its
  labels (``_data.labelled_subset``, seed 0), the rest are marked -1. Models that take
  unlabelled rows get every row with ``unlabelled_marker=-1`` (RBMClassifier,
  DBNClassifier) or learn their unsupervised part from every row (the RBM features);
  the supervised anchors see only the labelled rows.

Rows: raw pixels + ``LogisticRegression(C=1)``; ``SVC(C=10)``; ``MLPClassifier()`` at
its defaults; the network ``DBNClassifier((500, 500))`` fine-tunes, with its settings,
from random weights (logistic units, SGD at step 0.1, ...); ``RBM(500)`` at its defaults
+ ``LogisticRegression(C=1)`` on the features; ``RBMClassifier(500)``; the same on the
labelled rows only (1,000 labels: what its unlabelled rows are worth);
``DBNClassifier((500, 500))``. Columns: test accuracy and fit time (the RBM row: the
RBM's fit, the transform and the logistic regression), and whether the fit warned
that a density is degenerate (``DegenerateModelWarning``). One split, one seed.

Goals (issue 30, item 4): RBM features above ``MLPClassifier``; RBMClassifier and
DBNClassifier above ``SVC``; with 1,000 labels DBNClassifier at least 3 points above
the same network from random weights, and RBMClassifier above itself trained on the
labelled rows only. Each is printed MET or MISSED, with the margin in points.

Part "full" (item 5): ``RBM(500)`` at its defaults on all 60,000 training images:

- the fit's time (``--full-epochs k`` fits k epochs instead of the default 50 and
  extrapolates the time linearly, labelled as such);
- the time of one epoch at batch 10 and at batch 100 against scikit-learn's
  ``BernoulliRBM(500)`` at the same batch size: 1-epoch fits, the two alternating,
  median of ``--repeats``;
- the peak memory of a 1-epoch fit (``tracemalloc``: numpy reports its buffers to it),
  against the training data plus the model's parameters (the goal: at most twice);
- the default ``score`` of the 10,000 test rows (log Z by the default estimator) and
  its time.

Every timing is one BLAS thread (``OPENBLAS_NUM_THREADS=1``, set here unless given) and
compares within one run only: the machine's CPU line is printed first.

Run: OPENBLAS_NUM_THREADS=1 python benchmarks/bench_fashion_classifiers.py
     [--part classifiers|full|all] [--n-train 60000] [--n-test 10000]
     [--n-labels 1000] [--labels all 1000] [--rows NAME ...]
     [--full-epochs K] [--repeats 3]
"""

import argparse
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: one BLAS thread

import resource  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Callable  # noqa: E402

import numpy as np  # noqa: E402
from _data import (UNLABELLED, FeaturesThenClassifier, LabelledOnly,  # noqa: E402
                   images_784, labelled_subset)
from _machine import print_machine  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.neural_network import BernoulliRBM, MLPClassifier  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

from skboltz import RBM, DBNClassifier, RBMClassifier  # noqa: E402
from skboltz.exceptions import DegenerateModelWarning  # noqa: E402

N_HIDDEN = 500
DBN_SIZES = (N_HIDDEN, N_HIDDEN)
SEED = 0




def logistic_regression():
    return LogisticRegression(C=1.0, max_iter=2000)


def dbn_classifier():
    """DBNClassifier at its defaults but the architecture; y holds the -1 marker."""
    return DBNClassifier(DBN_SIZES, unlabelled_marker=UNLABELLED, random_state=SEED)


def random_start_twin():
    """The network DBNClassifier fine-tunes, with the same settings, from random weights
    (the estimator's own builder, so the two cannot drift apart)."""
    return dbn_classifier()._new_mlp(SEED)


@dataclass
class Row:
    name: str
    #: () -> a model with fit(X, y holding -1 marks) and score(X, y).
    factory: Callable
    #: Whether the row is run with all labels (False: its fit would repeat another row's).
    all_labels: bool = True


RAW = "raw pixels + LogisticRegression"
SVM = "SVC(C=10)"
MLP = "MLPClassifier() (its defaults)"
TWIN = "MLP (500, 500) from random weights"
FEATURES = "RBM(500) features + LogisticRegression"
RBMC = "RBMClassifier(500)"
RBMC_LABELLED = "RBMClassifier(500), labelled rows only"
DBNC = "DBNClassifier((500, 500))"

ROWS = [
    Row(RAW, lambda: LabelledOnly(logistic_regression())),
    Row(SVM, lambda: LabelledOnly(SVC(C=10))),
    Row(MLP, lambda: LabelledOnly(MLPClassifier(random_state=SEED))),
    Row(TWIN, lambda: LabelledOnly(random_start_twin())),
    Row(FEATURES, lambda: FeaturesThenClassifier(RBM(N_HIDDEN, random_state=SEED),
                                                 logistic_regression())),
    Row(RBMC, lambda: RBMClassifier(N_HIDDEN, unlabelled_marker=UNLABELLED,
                                    random_state=SEED)),
    Row(RBMC_LABELLED, lambda: LabelledOnly(RBMClassifier(N_HIDDEN, random_state=SEED)),
        all_labels=False),
    Row(DBNC, lambda: dbn_classifier()),
]


def partly_labelled(y, n_labelled):
    """``y`` with every row but a stratified subset of ``n_labelled`` marked unlabelled."""
    if n_labelled is None:
        return y.copy()
    marked = np.full_like(y, UNLABELLED)
    keep = labelled_subset(y, n_labelled, SEED)
    marked[keep] = y[keep]
    return marked


def label_heading(n):
    return "all labels" if n is None else f"{n:,} labels"


def pretraining_seconds(clf):
    """Time of DBNClassifier's pretraining epochs (the RBMs' own records)."""
    return sum(sum(layer.history_["time"]) for layer in clf.dbn_.layers_)


def run_classifiers(args):
    X_train, X_test, y_train, y_test = images_784("fashion", n_train=args.n_train,
                                                  n_test=args.n_test)
    print(f"Part classifiers: Fashion-MNIST, {len(X_train):,} training rows (the first), "
          f"{len(X_test):,} test rows, {X_train.shape[1]} grey pixels in [0, 1], "
          f"{X_train.dtype}", flush=True)
    label_counts = [None if n == "all" else int(n) for n in args.labels]
    rows = [row for row in ROWS
            if args.rows is None or any(part in row.name for part in args.rows)]
    results = {}  # (row name, label count) -> (accuracy, seconds, warned, note)
    for n in label_counts:
        y_marked = partly_labelled(y_train, n)
        for row in rows:
            if n is None and not row.all_labels:
                continue
            model = row.factory()
            start = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("ignore", ConvergenceWarning)
                warnings.simplefilter("always", DegenerateModelWarning)
                model.fit(X_train, y_marked)
            seconds = time.perf_counter() - start
            degenerate = [str(w.message) for w in caught
                          if issubclass(w.category, DegenerateModelWarning)]
            warned = bool(degenerate)
            accuracy = model.score(X_test, y_test)
            note = ""
            if isinstance(model, DBNClassifier):
                note = (f"pretraining {pretraining_seconds(model):.0f} s, "
                        f"{model.n_iter_} fine-tuning epochs")
            elif isinstance(model, LabelledOnly) and hasattr(model.classifier, "n_iter_"):
                n_iter = np.max(model.classifier.n_iter_)
                note = f"{n_iter} iterations"
            results[row.name, n] = (accuracy, seconds, warned, note)
            print(f"  [{label_heading(n)}] {row.name}: {accuracy:.4f} in {seconds:.1f} s"
                  f"{' (degenerate model warning)' if warned else ''}"
                  f"{' (' + note + ')' if note else ''}", flush=True)
            for message in degenerate:
                print(f"    DegenerateModelWarning: {message}", flush=True)
    print_classifier_table(rows, label_counts, results, len(X_train), len(X_test))
    print_goals(label_counts, results)


def print_classifier_table(rows, label_counts, results, n_train, n_test):
    print(f"\nFashion-MNIST, {n_train:,} training rows, {n_test:,} test rows: test "
          "accuracy and fit time (s)")
    widths = [40] + [17] * len(label_counts)
    print("  ".join(h.ljust(w) for h, w in zip(
        ["model"] + [label_heading(n) for n in label_counts], widths)))
    for row in rows:
        cells = [row.name]
        for n in label_counts:
            if (row.name, n) not in results:
                cells.append("-")
                continue
            accuracy, seconds, warned, _ = results[row.name, n]
            cells.append(f"{accuracy:.3f} {seconds:7.1f}{' W' if warned else ''}")
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths)))
    if any(warned for _, _, warned, _ in results.values()):
        print("W: the fit warned that a density is degenerate (DegenerateModelWarning)")


def print_goals(label_counts, results):
    def accuracy(name, n):
        return results[name, n][0] if (name, n) in results else None

    goals = []  # (setting, goal, left, right, margin in points needed)
    for n in label_counts:
        goals += [
            (n, f"{FEATURES} above {MLP}", FEATURES, MLP, 0.0),
            (n, f"{RBMC} above {SVM}", RBMC, SVM, 0.0),
            (n, f"{DBNC} above {SVM}", DBNC, SVM, 0.0),
        ]
        if n is not None:
            goals += [
                (n, f"{DBNC} at least 3 points above {TWIN}", DBNC, TWIN, 3.0),
                (n, f"{RBMC} above itself on the labelled rows only", RBMC,
                 RBMC_LABELLED, 0.0),
            ]
    print("\nGoals (issue 30, item 4)")
    for n, goal, left, right, needed in goals:
        a, b = accuracy(left, n), accuracy(right, n)
        if a is None or b is None:
            continue
        points = 100 * (a - b)
        met = points >= needed if needed else points > 0
        print(f"  [{label_heading(n)}] {goal}: {a:.3f} against {b:.3f} "
              f"({points:+.1f} points): {'MET' if met else 'MISSED'}"
              + ("" if met else f" by {needed - points:.1f} points"))


# -- part "full" ------------------------------------------------------------------------
def fit_seconds(model, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateModelWarning)  # reported by the main fit
        start = time.perf_counter()
        model.fit(X)
        return time.perf_counter() - start


def epoch_times(X, batch_size, repeats):
    """Seconds of a 1-epoch fit of skboltz's RBM(500) and of BernoulliRBM(500), at
    ``batch_size``, alternating, median of ``repeats``."""
    skboltz, sklearn = [], []
    for repeat in range(repeats):
        order = (0, 1) if repeat % 2 == 0 else (1, 0)
        for which in order:
            if which == 0:
                skboltz.append(fit_seconds(RBM(N_HIDDEN, batch_size=batch_size, n_iter=1,
                                               random_state=repeat), X))
            else:
                sklearn.append(fit_seconds(BernoulliRBM(
                    N_HIDDEN, batch_size=batch_size, n_iter=1, random_state=repeat), X))
    return float(np.median(skboltz)), float(np.median(sklearn))


def run_full(args):
    X_train, X_test, _, _ = images_784("fashion")
    n_iter = RBM().n_iter
    epochs = args.full_epochs or n_iter
    print(f"Part full: RBM({N_HIDDEN}) at its defaults on all {len(X_train):,} "
          f"Fashion-MNIST training images ({X_train.dtype}), scored on the "
          f"{len(X_test):,} test images", flush=True)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DegenerateModelWarning)
        rbm = RBM(N_HIDDEN, n_iter=epochs, random_state=SEED)
        start = time.perf_counter()
        rbm.fit(X_train)
        fit_time = time.perf_counter() - start
    warned = any(issubclass(w.category, DegenerateModelWarning) for w in caught)
    epoch_records = rbm.history_["time"]
    if epochs == n_iter:
        fit_line = f"{fit_time:.1f} s ({n_iter} epochs)"
    else:
        fit_line = (f"{fit_time * n_iter / epochs:.0f} s EXTRAPOLATED from {epochs} "
                    f"epoch(s) in {fit_time:.1f} s (x {n_iter}/{epochs})")
    print(f"  fit: {fit_line}; its epochs' own records {np.median(epoch_records):.1f} s "
          f"each (median); learning_rate_ {rbm.learning_rate_:.4f}; degenerate model "
          f"warning: {'yes' if warned else 'no'}", flush=True)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the estimate's accuracy is in its error bar
        start = time.perf_counter()
        held_out = rbm.score(X_test)
        score_time = time.perf_counter() - start
        log_z = rbm.estimate_log_partition()  # the cached estimate the score used
    trained = f"after {epochs} epoch(s), not {n_iter}" if epochs != n_iter else ""
    print(f"  score of the test rows: {held_out:.2f} nats per row in {score_time:.1f} s "
          f"(log Z {log_z.value:.2f} +- {log_z.std_error:.2f}, {log_z.method}"
          f"{'; ' + trained if trained else ''})", flush=True)

    # memory: a separate 1-epoch fit under tracemalloc (it slows allocations down)
    data_bytes = X_train.nbytes
    model_bytes = sum(a.nbytes for a in (rbm.components_, rbm.intercept_hidden_,
                                         rbm.intercept_visible_))
    tracemalloc.start()
    before, _ = tracemalloc.get_traced_memory()
    fit_seconds(RBM(N_HIDDEN, n_iter=1, random_state=SEED), X_train)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    extra = peak - before
    held = data_bytes + extra  # the data (allocated before tracing) + the fit's peak
    print(f"  peak memory of a 1-epoch fit: data {data_bytes / 2**20:.1f} MiB + the fit's "
          f"peak allocations {extra / 2**20:.1f} MiB = {held / 2**20:.1f} MiB, "
          f"x{held / (data_bytes + model_bytes):.2f} the data plus the model "
          f"({model_bytes / 2**20:.1f} MiB); the process's peak resident set so far "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10:.0f} MiB",
          flush=True)

    rows = []
    for batch_size in (10, 100):
        skboltz, sklearn = epoch_times(X_train, batch_size, args.repeats)
        rows.append((batch_size, skboltz, sklearn))
        print(f"  epoch at batch {batch_size}: skboltz {skboltz:.1f} s, BernoulliRBM "
              f"{sklearn:.1f} s", flush=True)

    print(f"\nRBM({N_HIDDEN}) at its defaults, all {len(X_train):,} Fashion-MNIST "
          "training images")
    print(f"  fit time                        {fit_line}")
    print(f"  score of {len(X_test):,} test rows         {held_out:.2f} nats in "
          f"{score_time:.1f} s (log Z +- {log_z.std_error:.2f}"
          f"{'; model ' + trained if trained else ''})")
    print(f"  peak memory / (data + model)    x{held / (data_bytes + model_bytes):.2f} "
          "(goal: at most x2)")
    print(f"  degenerate model warning        {'yes' if warned else 'no'}")
    print(f"\nOne epoch, 1-epoch fits, median of {args.repeats}, alternating (s)")
    print(f"  {'batch':>5s} {'skboltz RBM':>12s} {'BernoulliRBM':>13s} "
          f"{'sklearn / skboltz':>18s}")
    for batch_size, skboltz, sklearn in rows:
        print(f"  {batch_size:5d} {skboltz:12.1f} {sklearn:13.1f} {sklearn / skboltz:17.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("classifiers", "full", "all"), default="all")
    parser.add_argument("--n-train", type=int, default=60000,
                        help="training rows of part classifiers (the first)")
    parser.add_argument("--n-test", type=int, default=10000,
                        help="test rows of part classifiers (the first)")
    parser.add_argument("--n-labels", type=int, default=1000,
                        help="labelled rows of the few-label setting")
    parser.add_argument("--labels", nargs="+", default=None,
                        help="settings: 'all' and/or a number of labelled rows "
                             "(default: all and --n-labels)")
    parser.add_argument("--rows", nargs="+", default=None,
                        help="only the rows whose name contains one of these strings")
    parser.add_argument("--full-epochs", type=int, default=None,
                        help="part full: fit this many epochs and extrapolate the fit "
                             "time to the default's (default: the default's epochs)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="part full: 1-epoch fits per estimator and batch size")
    args = parser.parse_args()
    if args.labels is None:
        args.labels = ["all", str(args.n_labels)]
    print_machine()
    if args.part in ("classifiers", "all"):
        run_classifiers(args)
    if args.part in ("full", "all"):
        if args.part == "all":
            print()
        run_full(args)


if __name__ == "__main__":
    main()
