"""Novelty detection: ROC AUC of a density's log-likelihood against scikit-learn's detectors.

Protocol (one class at a time, for each of the ten classes of a data set): a detector
is fitted to rows of that class only; its test rows are held-out rows of the class
(inliers) and as many rows drawn from the other classes (novelties, seed 0). The
figure is the ROC AUC of ``score_samples`` (higher = more normal), whose ranking does
not depend on any threshold; the table gives its mean and its worst class.

- digits: ``load_digits`` scaled to [0, 1] (X / 16); each digit's rows are split
  75/25 (``train_test_split``, ``random_state=0``): about 135 training and 45 test
  rows of the digit, and 45 rows of other digits.
- fashion: Fashion-MNIST (``_data.images_784("fashion")``, grey levels in [0, 1]); a
  subset, so that the script runs in a few minutes on one core: the first 2,000 rows
  of the class in the training file, and as test rows the class's 1,000 rows of the
  test file and 1,000 rows of other classes from it.

Detectors, each at its defaults (``random_state=0`` where it has one):

- ``LikelihoodOutlierDetector()``: skboltz's default density model for the data
  (the whitened Gaussian RBM, for binarized images too) and
  ``contamination="auto"``;
- candidates for that default, to show the choice (``contamination=0.1``, one fit):
  the Bernoulli RBM (16 hidden units, PCD, 100 epochs; the default for binary data
  before ADBench's binary tables), the default model with one hidden unit (what the
  hidden units add; grey images only), and on the digits ``RBM()`` (its 256 hidden
  units need an AIS estimate of log Z, too slow for Fashion-MNIST here);
- ``IsolationForest``, ``LocalOutlierFactor(novelty=True)``, ``OneClassSVM``;
- ``GaussianMixture`` with 1 to 4 full-covariance components, chosen by BIC on the
  training rows;
- ``KernelDensity`` (Gaussian kernel) with its bandwidth chosen by 5-fold
  cross-validated log-likelihood (``GridSearchCV``) over 12 values from 0.03 to 3, on
  at most 500 of the training rows (the search on all 2,000 Fashion-MNIST rows took
  over a minute per class), then fitted to all of them.

Beside the AUC, for the detectors with a threshold of their own: the fraction of
held-out inliers kept (``predict == 1``) and of novelties flagged (``predict == -1``),
averaged over the classes; for ``LikelihoodOutlierDetector()`` that is the "auto"
threshold (Tukey's lower fence of cross-validated log-likelihoods).

With ``--binarize``, every image is binarized at 0.5 first.

Run: OPENBLAS_NUM_THREADS=1 python benchmarks/bench_outliers.py [--only digits]
[--binarize]
"""

import argparse
import os
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from _data import images_784  # noqa: E402
from _machine import print_machine  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.ensemble import IsolationForest  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402
from sklearn.mixture import GaussianMixture  # noqa: E402
from sklearn.model_selection import GridSearchCV, train_test_split  # noqa: E402
from sklearn.neighbors import KernelDensity, LocalOutlierFactor  # noqa: E402
from sklearn.svm import OneClassSVM  # noqa: E402

from skboltz import RBM, LikelihoodOutlierDetector  # noqa: E402
from skboltz.meta._outliers import default_density_model  # noqa: E402

SEED = 0
#: Fashion-MNIST subset: training rows per class (test rows: the class's 1,000).
FASHION_TRAIN_ROWS = 2000
#: Component counts GaussianMixture's BIC chooses from.
GMM_COMPONENTS = range(1, 5)
#: KernelDensity's bandwidth grid, and the rows its cross-validation runs on.
KDE_BANDWIDTHS = np.logspace(-1.5, 0.5, 12)
KDE_SEARCH_ROWS = 500


def gmm_by_bic(X):
    fits = [GaussianMixture(k, random_state=SEED).fit(X) for k in GMM_COMPONENTS]
    return min(fits, key=lambda gmm: gmm.bic(X))


def kde_by_cv(X):
    rows = np.random.default_rng(SEED).permutation(len(X))[:KDE_SEARCH_ROWS]
    search = GridSearchCV(KernelDensity(), {"bandwidth": KDE_BANDWIDTHS}).fit(X[rows])
    return KernelDensity(bandwidth=search.best_params_["bandwidth"]).fit(X)


def candidate(model):
    return lambda X: LikelihoodOutlierDetector(model, contamination=0.1,
                                               random_state=SEED).fit(X)


def detectors(dataset, binarize):
    found = {"LikelihoodOutlierDetector()": lambda X: LikelihoodOutlierDetector(
        random_state=SEED).fit(X)}
    # the Bernoulli RBM, the default for binary rows until ADBench's binary tables
    found["  candidate: RBM(16, pcd, 100 epochs)"] = candidate(
        RBM(n_components=16, learning="pcd", n_iter=100))
    if not binarize:  # what the hidden units add (the default model, one of them)
        found["  candidate: default, 1 hidden unit"] = lambda X: candidate(
            default_density_model(X).set_params(n_components=1))(X)
    if dataset == "digits":
        found["  candidate: RBM()"] = candidate(RBM())
    found.update({
        "IsolationForest": lambda X: IsolationForest(random_state=SEED).fit(X),
        "LocalOutlierFactor(novelty=True)": lambda X: LocalOutlierFactor(
            novelty=True).fit(X),
        "OneClassSVM": lambda X: OneClassSVM().fit(X),
        "GaussianMixture (BIC)": gmm_by_bic,
        "KernelDensity (CV)": kde_by_cv,
    })
    return found


def digits_tasks(binarize):
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    if binarize:
        X = (X > 0.5).astype(np.float64)
    for digit in range(10):
        own = np.flatnonzero(y == digit)
        train, test = train_test_split(own, test_size=0.25, random_state=SEED)
        yield digit, X[train], X[test], X[_others(y, digit, len(test))]


def fashion_tasks(binarize):
    X_train, X_test, y_train, y_test = images_784(
        "fashion-binary" if binarize else "fashion")
    for label in range(10):
        train = np.flatnonzero(y_train == label)[:FASHION_TRAIN_ROWS]
        test = np.flatnonzero(y_test == label)
        yield label, X_train[train], X_test[test], X_test[_others(y_test, label, len(test))]


def _others(y, label, n_rows):
    rng = np.random.default_rng(SEED)
    return rng.choice(np.flatnonzero(y != label), n_rows, replace=False)


def evaluate(make, tasks):
    aucs, kept, flagged = [], [], []
    start = time.perf_counter()
    for _, X_train, X_in, X_out in tasks:
        detector = make(X_train)
        scores = detector.score_samples(np.vstack([X_in, X_out]))
        truth = np.r_[np.ones(len(X_in)), np.zeros(len(X_out))]
        aucs.append(roc_auc_score(truth, scores))
        if hasattr(detector, "predict") and not isinstance(detector, GaussianMixture):
            kept.append(np.mean(detector.predict(X_in) == 1))
            flagged.append(np.mean(detector.predict(X_out) == -1))
    seconds = time.perf_counter() - start
    return np.array(aucs), kept, flagged, seconds


def report(dataset, tasks, binarize):
    tasks = list(tasks)
    n_train = sorted({len(t[1]) for t in tasks})
    n_test = sorted({len(t[2]) for t in tasks})
    print(f"== {dataset}{' (binarized)' if binarize else ''}: {len(tasks)} classes, {n_train[0]}-{n_train[-1]} training rows "
          f"and {n_test[0]}-{n_test[-1]} held-out rows of the class (+ as many of other "
          "classes) each ==")
    print(f"{'detector':40s} {'mean AUC':>8s} {'worst':>6s} {'kept':>5s} {'flagged':>7s} "
          f"{'time':>7s}   AUC per class")
    for name, make in detectors(dataset, binarize).items():
        aucs, kept, flagged, seconds = evaluate(make, tasks)
        rates = (f"{np.mean(kept):5.2f} {np.mean(flagged):7.2f}" if kept
                 else f"{'-':>5s} {'-':>7s}")
        print(f"{name:40s} {aucs.mean():8.4f} {aucs.min():6.3f} {rates} {seconds:6.1f}s   "
              + " ".join(f"{a:.3f}" for a in aucs), flush=True)
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["digits", "fashion"])
    parser.add_argument("--binarize", action="store_true")
    args = parser.parse_args()
    print_machine()
    # The candidates' Gaussian RBM warns about constant pixels (the default silences
    # it; see LikelihoodOutlierDetector's Notes); GaussianMixture about convergence.
    warnings.simplefilter("ignore")
    if args.only in (None, "digits"):
        report("digits", digits_tasks(args.binarize), args.binarize)
    if args.only in (None, "fashion"):
        report("fashion", fashion_tasks(args.binarize), args.binarize)


if __name__ == "__main__":
    main()
