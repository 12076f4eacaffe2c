"""Digits classification: RBM features for a logistic regression, skboltz against
scikit-learn's BernoulliRBM, in two protocols.

Part "features": raw pixels, BernoulliRBM, skboltz RBM and DBN features, and
BoltzmannClassifier, on one fixed train/test split (digits scaled to [0, 1], 1347/450
rows), sweeping the learning rate over a few shared values.

Part "example": scikit-learn's own RBM example ("Restricted Boltzmann Machine features
for digit classification" in its gallery): every 8x8 digit plus four copies shifted by
one pixel up, left, right and down (5x the data), min-max scaled per pixel, an 80/20
split with random_state=0, and a Pipeline of BernoulliRBM(n_components=100,
learning_rate=0.06, n_iter=10) and LogisticRegression(C=6000, solver="newton-cg",
tol=1). skboltz's RBM gets the same three settings, once at its defaults and once
with the negative phase's visible samples (``CD(negative_visible="sample")``, the
setting the RBM guide recommends for data made of shifted copies). Since scikit-learn minimises the
mean rather than the summed logistic loss, that tol=1 stops newton-cg before its first
step (the table prints the Newton steps): every prediction is one class, whatever the
features. The same fitted RBMs are therefore also scored under the same classifier
trained to tol=1e-4, the comparison that says something about the features.

Target: skboltz RBM features at least as accurate as BernoulliRBM features given the
same settings (n_components, learning_rate, n_iter, batch_size), skboltz's other
parameters at their defaults, at every learning rate and in the example protocol. Every
comparison is paired by seed (both RBMs get the same random_state, and the same split):
the verdict reads the mean accuracy difference and its standard error over the seeds,
MET when the mean is >= 0, "within noise" when it is negative but above -2 standard
errors, and MISSED (worse beyond noise) when it is below -2 standard errors. Test
accuracies move in steps of single test rows (1/450 in the features part), so use at
least 10 seeds (the default) before reading a difference of a few thousandths.

The features table also shows skboltz fitted in BernoulliRBM's configuration
(learning=PCD(negative_visible="sample"), weight_decay=0, average_window=None; the
learning rate, batch size and starting values are BernoulliRBM's already): the same
algorithm. Trained on 1340 rows, the two ended with the same weight norms,
bias means and hidden activity within their standard errors (0.3 %), at learning rates
0.02, 0.06 and 0.1. On the 1347 rows here they are not quite the same: BernoulliRBM
scales the statistics of its batch_size persistent chains by the number of data rows,
so the short last minibatch of every epoch (7 rows) over-weights its negative phase
by 10/7. Measured against a subclass whose update divides the chains' statistics by
the number of chains instead (same random streams, 20 seeds), that raised
BernoulliRBM's accuracy at a learning rate of 0.02 by 0.0017 +- 0.0008, and did
nothing at 0.06 (-0.0009 +- 0.0010).

Every model is fitted once per seed, the models alternating within each seed, all in
this one process; the tables give the median test accuracy and fit time over the seeds
and the ratio of the accuracy to BernoulliRBM's.

Run: OPENBLAS_NUM_THREADS=1 python benchmarks/bench_digits.py [--seeds 10]
     [--part features|example]
"""

import argparse
import os
import time
import warnings
from functools import partial

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from _machine import print_machine  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.neural_network import BernoulliRBM  # noqa: E402
from sklearn.pipeline import Pipeline, make_pipeline  # noqa: E402
from sklearn.preprocessing import minmax_scale  # noqa: E402

from skboltz import DBN, RBM, BoltzmannClassifier  # noqa: E402
from skboltz.learning import CD, PCD  # noqa: E402

#: Settings shared by both RBMs (and the DBN's layers); the learning rate is swept.
RBM_SETTINGS = {"n_components": 100, "n_iter": 20, "batch_size": 10}
LEARNING_RATES = (0.01, 0.02, 0.06, 0.1)
#: skboltz RBMs fitted in other configurations than the defaults, beside the defaults.
CONFIGURATIONS = {
    # everything as BernoulliRBM does it: the same algorithm
    "sklearn's config": {"learning": PCD(negative_visible="sample"), "momentum": 0.0,
                         "weight_decay": 0.0, "average_window": None,
                         "visible_bias_init": "zero"},
}
#: One logistic regression on top of every representation.
LOGISTIC = {"C": 10.0, "max_iter": 3000}

#: scikit-learn's RBM example: the RBM settings both RBMs get, and its classifier.
EXAMPLE_RBM = {"n_components": 100, "learning_rate": 0.06, "n_iter": 10}
EXAMPLE_LOGISTIC = {"C": 6000.0, "solver": "newton-cg", "tol": 1}


def digits_split():
    """The features part's fixed split of the digits scaled to [0, 1]."""
    X, y = load_digits(return_X_y=True)
    return train_test_split(X / 16.0, y, test_size=0.25, random_state=0, stratify=y)


def nudged_digits():
    """The example's data: the digits and four copies shifted by one pixel, scaled.

    Each copy moves every 8x8 image by one pixel (up, left, right, down, in this order),
    filling the vacated edge with zeros; the original images come first. Then every
    pixel is min-max scaled to [0, 1] over all rows, in float32.
    """
    digits = load_digits()
    images = digits.images.astype(np.float32)
    no_pad = (0, 0)
    copies = [
        images,
        np.pad(images[:, 1:, :], (no_pad, (0, 1), no_pad)),  # up
        np.pad(images[:, :, 1:], (no_pad, no_pad, (0, 1))),  # left
        np.pad(images[:, :, :-1], (no_pad, no_pad, (1, 0))),  # right
        np.pad(images[:, :-1, :], (no_pad, (1, 0), no_pad)),  # down
    ]
    X = np.concatenate([copy.reshape(len(images), -1) for copy in copies])
    y = np.tile(digits.target, len(copies))
    return minmax_scale(X, feature_range=(0, 1)), y


def example_split():
    return train_test_split(*nudged_digits(), test_size=0.2, random_state=0)


def feature_models(seed):
    def logistic():
        return LogisticRegression(**LOGISTIC)

    table = {"logistic regression, raw pixels": make_pipeline(logistic())}
    for lr in LEARNING_RATES:
        settings = {**RBM_SETTINGS, "learning_rate": lr}
        table[f"BernoulliRBM features, lr={lr}"] = make_pipeline(
            BernoulliRBM(**settings, random_state=seed), logistic()
        )
        table[f"skboltz RBM features, lr={lr}"] = make_pipeline(
            RBM(**settings, random_state=seed), logistic()
        )
        for label, configuration in CONFIGURATIONS.items():
            table[f"skboltz RBM, {label}, lr={lr}"] = make_pipeline(
                RBM(**settings, **configuration, random_state=seed), logistic()
            )
        table[f"skboltz DBN (100, 100) features, lr={lr}"] = make_pipeline(
            DBN(hidden_layer_sizes=(100, 100), rbm=RBM(**settings), random_state=seed),
            logistic(),
        )
    table["BoltzmannClassifier (default RBM)"] = BoltzmannClassifier(
        RBM(n_components=16, n_iter=30, random_state=seed)
    )
    return table


def run(models, split, n_seeds):
    """Fit every model of ``models(seed)`` per seed; accuracies and fit times."""
    X_train, X_test, y_train, y_test = split
    names = list(models(0))
    accuracy = {name: [] for name in names}
    fit_time = {name: [] for name in names}
    for seed in range(n_seeds):
        for name, model in models(seed).items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                start = time.perf_counter()
                model.fit(X_train, y_train)
                fit_time[name].append(time.perf_counter() - start)
            accuracy[name].append(model.score(X_test, y_test))
    return {name: np.array(a) for name, a in accuracy.items()}, fit_time


def print_table(accuracy, fit_time, reference_of):
    """Medians over seeds, and the ratio to the reference row ``reference_of(name)``."""
    median = {name: float(np.median(acc)) for name, acc in accuracy.items()}
    header = (
        f"{'model':<44} {'accuracy':>9} {'min':>7} {'max':>7} "
        f"{'vs BernoulliRBM':>15} {'fit s':>7}"
    )
    print(header)
    print("-" * len(header))
    for name, acc in accuracy.items():
        reference = median.get(reference_of(name))
        ratio = f"{median[name] / reference:.3f}" if reference else "-"
        print(
            f"{name:<44} {median[name]:>9.4f} {acc.min():>7.4f} {acc.max():>7.4f} "
            f"{ratio:>15} {np.median(fit_time[name]):>7.2f}"
        )
    print("(accuracy and fit time: medians over seeds; ratio: to BernoulliRBM with the "
          "same settings)")


def verdict(accuracy, reference):
    """Paired mean difference, its standard error and the verdict (see the docstring)."""
    difference = accuracy - reference
    mean = round(difference.mean(), 12)  # equal accuracies give exactly 0
    error = difference.std(ddof=1) / np.sqrt(len(difference))
    label = "MET" if mean >= 0 else "within noise" if mean > -2 * error else "MISSED"
    return f"{mean:+.4f} +- {error:.4f}: {label}"


VERDICT_RULE = ("(paired by seed: mean accuracy difference +- its standard error; MET "
                "when it is >= 0, within noise when above -2 SE, else MISSED)")


def features_part(n_seeds):
    split = digits_split()
    accuracy, fit_time = run(feature_models, split, n_seeds)
    print(
        f"digits: {len(split[2])} train / {len(split[3])} test rows (fixed split), "
        f"{n_seeds} seeds; RBM settings {RBM_SETTINGS}, skboltz's other parameters "
        f"at their defaults; LogisticRegression {LOGISTIC}"
    )
    print_table(accuracy, fit_time,
                lambda name: f"BernoulliRBM features, lr={name.rpartition('lr=')[2]}")
    print("\ntarget: skboltz RBM features at least as accurate as BernoulliRBM features")
    print(VERDICT_RULE)
    row_prefixes = {"defaults": "skboltz RBM features",
                    **{label: f"skboltz RBM, {label}" for label in CONFIGURATIONS}}
    for label, prefix in row_prefixes.items():
        print(f"  skboltz {label}:")
        for lr in LEARNING_RATES:
            print(f"    lr={lr:<5} " + verdict(accuracy[f"{prefix}, lr={lr}"],
                                               accuracy[f"BernoulliRBM features, lr={lr}"]))


def example_part(n_seeds):
    X_train, X_test, y_train, y_test = example_split()
    rbms = {"BernoulliRBM": BernoulliRBM, "skboltz RBM": RBM,
            # the documented setting for data made of shifted copies (docs: rbm.rst)
            "skboltz RBM, samples": partial(RBM, learning=CD(negative_visible="sample"))}
    variants = {"tol=1": EXAMPLE_LOGISTIC, "tol=1e-4": {**EXAMPLE_LOGISTIC, "tol": 1e-4}}
    accuracy = {f"{r} + logistic, {v}": [] for r in rbms for v in variants}
    fit_time = {name: [] for name in accuracy}
    newton_steps = {v: set() for v in variants}
    for seed in range(n_seeds):
        for rbm_name, cls in rbms.items():
            start = time.perf_counter()
            pipeline = Pipeline([("rbm", cls(**EXAMPLE_RBM, random_state=seed)),
                                 ("logistic", LogisticRegression(**variants["tol=1"]))])
            pipeline.fit(X_train, y_train)
            fit_time[f"{rbm_name} + logistic, tol=1"].append(time.perf_counter() - start)
            accuracy[f"{rbm_name} + logistic, tol=1"].append(pipeline.score(X_test, y_test))
            newton_steps["tol=1"].add(int(pipeline[-1].n_iter_[0]))
            # the same fitted RBM under a classifier that is trained to convergence
            features_train, features_test = (pipeline[0].transform(X)
                                             for X in (X_train, X_test))
            start = time.perf_counter()
            logistic = LogisticRegression(**variants["tol=1e-4"]).fit(features_train, y_train)
            fit_time[f"{rbm_name} + logistic, tol=1e-4"].append(time.perf_counter() - start)
            accuracy[f"{rbm_name} + logistic, tol=1e-4"].append(
                logistic.score(features_test, y_test))
            newton_steps["tol=1e-4"].add(int(logistic.n_iter_[0]))
    print(
        f"scikit-learn's RBM example: nudged digits, {len(y_train)} train / "
        f"{len(y_test)} test rows (80/20 split, random_state=0), {n_seeds} seeds; "
        f"both RBMs {EXAMPLE_RBM}, skboltz's other parameters at their defaults; "
        f"LogisticRegression {EXAMPLE_LOGISTIC}, and the same with tol=1e-4"
    )
    for variant, steps in newton_steps.items():
        print(f"  Newton steps of the logistic regression with {variant}: "
              f"{min(steps)}-{max(steps)}")
    accuracy = {name: np.array(a) for name, a in accuracy.items()}
    print_table(accuracy, fit_time,
                lambda name: "BernoulliRBM + logistic, " + name.rpartition(", ")[2])
    print("(fit s: the whole pipeline for tol=1, the logistic regression alone for "
          "tol=1e-4, on the same fitted RBM)")
    print("\ntarget: skboltz's pipeline at least as accurate as BernoulliRBM's")
    print(VERDICT_RULE)
    for variant in variants:
        for rbm_name, label in (("skboltz RBM", "defaults"),
                                ("skboltz RBM, samples", 'CD(negative_visible="sample")')):
            print(f"  skboltz {label}, {variant}: "
                  + verdict(accuracy[f"{rbm_name} + logistic, {variant}"],
                            accuracy[f"BernoulliRBM + logistic, {variant}"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--part", choices=("features", "example"), default=None,
                        help="run only this part (default: both)")
    args = parser.parse_args()
    print_machine()
    print("load average before: %.2f %.2f %.2f\n" % os.getloadavg())
    if args.part in (None, "features"):
        features_part(args.seeds)
        print()
    if args.part in (None, "example"):
        example_part(args.seeds)
    print("\nload average after: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
