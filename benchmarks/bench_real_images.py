"""RBM defaults on real images: features and density side by side, several data sets.

Every default of :class:`skboltz.RBM` must hold for both uses at once, on real data,
on more than one set. Data (``_data.py``; a missing set is skipped with how to get it):

- ``digits``: scikit-learn's 8 x 8 digits / 16, one 75/25 stratified split (seed 0);
- ``mnist`` / ``mnist-binary``: 5,000 real 28 x 28 MNIST digits (4,000 training, 1,000
  held-out; grey / 255, or binarized at 0.5);
- ``fashion`` / ``fashion-binary``: Fashion-MNIST, the first ``--n-train`` training
  images and the first ``--n-test`` test images.

Rows, for each set: the raw pixels; scikit-learn's ``BernoulliRBM`` at the best
``learning_rate`` of a small grid (0.01, 0.05, 0.1; ``n_iter=20``; best by test accuracy,
which favours it); ``RBM()`` at its defaults; and the alternatives considered when they
were chosen (the previous defaults: CD-1 with visible means at learning rate 0.1;
CD-1 with visible samples). 784-pixel sets use 500 hidden units for every RBM (the
issue's size), the digits the default 256.

Columns:

- ``acc``: test accuracy of a logistic regression on the features, the same for every
  row of a set: ``LogisticRegressionCV(Cs=[0.1, 1, 10, 100], cv=3)`` up to 5,000
  training rows (the digits, MNIST), ``LogisticRegression(C=1)`` on Fashion-MNIST;
- ``LL``: held-out log-likelihood per row in nats (``score``: log Z exact or estimated
  by the default AIS, whose standard error is given; BernoulliRBM's weights are scored
  by the same code);
- ``sample``: mean pixel of ``sample(200)`` (1,000 Gibbs steps from the data's rates)
  over the training data's mean pixel (1.00 is right; the target is within 20 %);
- ``top``: the share of those 200 samples in the most common state (blank or not);
- ``log p(0)``: log-probability of the blank image (a degenerate model puts most of its
  mass there: -0.2 nats means 82 %);
- ``warn``: whether ``fit`` warned that the model is degenerate;
- ``fit s``: the RBM's fit time (one thread).

Run: OPENBLAS_NUM_THREADS=1 python benchmarks/bench_real_images.py
     [--sets digits,mnist,mnist-binary,fashion,fashion-binary] [--n-train 10000]
     [--n-test 10000] [--no-bernoulli]
"""

import argparse
import os
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from _data import available_images_784, digits_splits, images_784  # noqa: E402
from _machine import print_machine  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegression, LogisticRegressionCV  # noqa: E402
from sklearn.neural_network import BernoulliRBM  # noqa: E402

from skboltz import RBM  # noqa: E402
from skboltz.exceptions import DegenerateModelWarning  # noqa: E402
from skboltz.learning import CD  # noqa: E402

BERNOULLI_LEARNING_RATES = (0.01, 0.05, 0.1)
#: Up to this many training rows the classifier's C is chosen by cross-validation.
CV_MAX_ROWS = 5000
N_SAMPLES = 200

#: The RBM rows: name -> parameters on top of n_components and random_state.
RBM_ROWS = {
    "RBM() defaults": {},
    "previous defaults (CD-1, means)": {"learning": CD(negative_visible="mean"),
                                        "learning_rate": 0.1},
    "CD-1, visible samples": {"learning": CD(negative_visible="sample"),
                              "learning_rate": 0.1},
}


def load(name, n_train, n_test):
    if name == "digits":
        _, X_train, X_test, y_train, y_test = next(digits_splits())
        return (X_train.astype(np.float32), X_test.astype(np.float32), y_train, y_test,
                256)
    return (*images_784(name, n_train=n_train, n_test=n_test), 500)


def accuracy(features_train, y_train, features_test, y_test):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", FutureWarning)  # LogisticRegressionCV's
        if features_train.shape[0] <= CV_MAX_ROWS:
            classifier = LogisticRegressionCV(Cs=[0.1, 1, 10, 100], cv=3, max_iter=2000)
        else:
            classifier = LogisticRegression(C=1.0, max_iter=2000)
        return classifier.fit(features_train, y_train).score(features_test, y_test)


def as_skboltz(bernoulli, X_train):
    """An skboltz RBM holding a fitted BernoulliRBM's parameters (to score them)."""
    rbm = RBM(bernoulli.n_components, n_iter=0, random_state=0).fit(X_train)
    rbm.components_ = bernoulli.components_.astype(X_train.dtype)
    rbm.intercept_hidden_ = bernoulli.intercept_hidden_.astype(X_train.dtype)
    rbm.intercept_visible_ = bernoulli.intercept_visible_.astype(X_train.dtype)
    return rbm


def density_columns(rbm, X_train, X_test):
    """Held-out LL (and its standard error), sample mean ratio, top share, log p(0)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the accuracy warnings are in the error bar
        log_z = rbm.estimate_log_partition()
        held_out = rbm.score(X_test)
    samples = rbm.sample(N_SAMPLES, random_state=1, n_steps=1000)
    _, counts = np.unique(samples, axis=0, return_counts=True)
    blank = np.zeros((1, X_train.shape[1]), X_train.dtype)
    log_p_blank = -rbm.free_energy(blank)[0] - log_z.value
    return {
        "LL": held_out, "LL err": log_z.std_error,
        "sample": samples.mean() / X_train.mean(), "top": counts.max() / N_SAMPLES,
        "log p(0)": log_p_blank,
    }


def print_row(name, row):
    ll = (f"{row['LL']:8.2f} +- {row['LL err']:4.2f}" if "LL" in row else " " * 16)
    density = (f"{row['sample']:6.2f} {row['top']:5.2f} {row['log p(0)']:9.2f}"
               if "sample" in row else " " * 22)
    fit = f"{row['fit s']:7.1f}" if "fit s" in row else " " * 7
    print(f"  {name:34s} {row['acc']:6.3f} {ll} {density} {row.get('warn', ''):>5s} {fit}",
          flush=True)


def run_set(name, args):
    X_train, X_test, y_train, y_test, n_hidden = load(name, args.n_train, args.n_test)
    print(f"\n{name}: {X_train.shape[0]} training and {X_test.shape[0]} held-out rows, "
          f"{X_train.shape[1]} pixels, mean pixel {X_train.mean():.3f}; "
          f"{n_hidden} hidden units")
    print(f"  {'':34s} {'acc':>6s} {'LL (nats)':>16s} {'sample':>6s} {'top':>5s} "
          f"{'log p(0)':>9s} {'warn':>5s} {'fit s':>7s}")
    print_row("raw pixels", {"acc": accuracy(X_train, y_train, X_test, y_test)})
    if not args.no_bernoulli:
        best = None
        for learning_rate in BERNOULLI_LEARNING_RATES:
            start = time.perf_counter()
            bernoulli = BernoulliRBM(n_hidden, learning_rate=learning_rate, n_iter=20,
                                     random_state=0).fit(X_train)
            seconds = time.perf_counter() - start
            acc = accuracy(bernoulli.transform(X_train), y_train,
                           bernoulli.transform(X_test), y_test)
            if best is None or acc > best[0]:
                best = (acc, learning_rate, bernoulli, seconds)
        acc, learning_rate, bernoulli, seconds = best
        row = {"acc": acc, "fit s": seconds,
               **density_columns(as_skboltz(bernoulli, X_train), X_train, X_test)}
        print_row(f"BernoulliRBM(learning_rate={learning_rate})", row)
    for row_name, parameters in RBM_ROWS.items():
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DegenerateModelWarning)
            rbm = RBM(n_hidden, random_state=0, **parameters).fit(X_train)
        seconds = time.perf_counter() - start
        warned = any(issubclass(w.category, DegenerateModelWarning) for w in caught)
        row = {"acc": accuracy(rbm.transform(X_train), y_train, rbm.transform(X_test),
                               y_test),
               "fit s": seconds, "warn": "yes" if warned else "no",
               **density_columns(rbm, X_train, X_test)}
        print_row(row_name, row)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="digits,mnist,mnist-binary,fashion,fashion-binary")
    parser.add_argument("--n-train", type=int, default=10000)
    parser.add_argument("--n-test", type=int, default=10000)
    parser.add_argument("--no-bernoulli", action="store_true")
    args = parser.parse_args()
    print_machine()
    names = args.sets.split(",")
    found = ["digits"] if "digits" in names else []
    found += available_images_784([name for name in names if name != "digits"])
    for name in found:
        run_set(name, args)


if __name__ == "__main__":
    main()
