"""The dispatched path against the NumPy path: the same estimators at their defaults.

Under ``sklearn.config_context(array_api_dispatch=True)`` the restricted estimators
compute in the input's namespace with their own random numbers (torch's generator, or
NumPy's on the host for array-api-strict), so a dispatched fit and a NumPy fit with the
same seed are two fits of the same model. This script measures how alike they are, on
real data, at each estimator's defaults, over several seeds (alternating, in one run):

- ``rbm``: :class:`~skboltz.RBM` on the digits (X / 16; 1,347 training rows, 450 held
  out): held-out mean log-likelihood, and the accuracy of a logistic regression on the
  features (targets of issue 34: within 0.2 nats and 0.5 points);
- ``gaussian``: :class:`~skboltz.GaussianRBM` on the wine data standardised (its
  default parallel tempering): held-out mean log-density;
- ``categorical``: :class:`~skboltz.CategoricalRBM` on the breast-cancer features cut
  into quartiles (category codes): held-out mean log-likelihood;
- ``tabular``: :class:`~skboltz.TabularRBM` on the wine data with its colour-intensity
  column cut into quartiles (one categorical column by position): held-out mean
  log-density.

Prints the machine, the namespace, each path's mean and standard error over the seeds,
and the difference with its standard error.

Usage::

    SCIPY_ARRAY_API=1 python benchmarks/bench_array_api_agreement.py [--seeds 8]
        [--cases rbm gaussian categorical tabular] [--namespace torch|array_api_strict]
"""

import argparse
import os
import time
import warnings

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # scikit-learn's dispatch needs it

import numpy as np  # noqa: E402
from sklearn import config_context  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_digits, load_wine  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from _machine import print_machine  # noqa: E402

import skboltz  # noqa: E402
from skboltz.exceptions import ApproximateScoreWarning  # noqa: E402


def quartile_codes(values):
    """Each column cut at its quartiles: codes 0..3."""
    edges = np.quantile(values, [0.25, 0.5, 0.75], axis=0)
    return np.stack([np.searchsorted(edges[:, j], values[:, j], side="right")
                     for j in range(values.shape[1])], axis=1).astype(np.float64)


def digits_case():
    data = load_digits()
    X_train, X_test, y_train, y_test = train_test_split(
        data.data / 16, data.target, test_size=450, random_state=0, stratify=data.target)
    return X_train, X_test, y_train, y_test


def wine_case():
    X, y = load_wine(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3,
                                                        random_state=0, stratify=y)
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


def categorical_case():
    X, y = load_breast_cancer(return_X_y=True)
    codes = quartile_codes(X[:, :10])  # the ten "mean" features
    return train_test_split(codes, y, test_size=0.3, random_state=0, stratify=y)


def tabular_case():
    X_train, X_test, y_train, y_test = wine_case()
    # colour intensity (column 9) as quartile codes, the rest numeric
    edges = np.quantile(X_train[:, 9], [0.25, 0.5, 0.75])
    for X in (X_train, X_test):
        X[:, 9] = np.searchsorted(edges, X[:, 9], side="right")
    return X_train, X_test, y_train, y_test


CASES = {
    "rbm": (digits_case, lambda seed: skboltz.RBM(random_state=seed), True),
    "gaussian": (wine_case, lambda seed: skboltz.GaussianRBM(random_state=seed), False),
    "categorical": (categorical_case,
                    lambda seed: skboltz.CategoricalRBM(random_state=seed), False),
    "tabular": (tabular_case,
                lambda seed: skboltz.TabularRBM(categorical_features=[9],
                                                random_state=seed), False),
}


def run(make, X_train, X_test, y_train, y_test, with_features, convert):
    """Held-out mean log-likelihood (and features' accuracy) of one fit."""
    model = make().fit(convert(X_train))
    score = float(model.score(convert(X_test)))
    accuracy = None
    if with_features:
        host = to_host
        classifier = LogisticRegression(max_iter=2000).fit(
            host(model.transform(convert(X_train))), y_train)
        accuracy = classifier.score(host(model.transform(convert(X_test))), y_test)
    return score, accuracy


def to_host(array):
    if isinstance(array, np.ndarray):
        return array
    if type(array).__module__.startswith("torch"):
        return array.cpu().numpy()
    return np.asarray(array.tolist()) if hasattr(array, "tolist") else np.asarray(array)


def mean_and_error(values):
    values = np.asarray(values, dtype=float)
    return values.mean(), values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--namespace", default=None,
                        help="torch (default where installed) or array_api_strict")
    args = parser.parse_args()
    print_machine()
    name = args.namespace
    if name is None:
        try:
            import torch  # noqa: F401

            name = "torch"
        except ImportError:
            name = "array_api_strict"
    if name == "torch":
        import torch

        torch.set_num_threads(1)  # the NumPy path runs with OpenBLAS's threads as set
        convert = lambda X: torch.asarray(X)  # noqa: E731
    else:
        import array_api_strict

        convert = array_api_strict.asarray
    print(f"dispatched namespace: {name}; {args.seeds} seeds per path, alternating\n")
    print(f"{'case':<12} {'what':<10} {'NumPy':>18} {'dispatched':>18} "
          f"{'difference':>18} {'s/fit':>12}")
    for case in args.cases:
        load, factory, with_features = CASES[case]
        X_train, X_test, y_train, y_test = load()
        results = {"numpy": [], "dispatched": []}
        seconds = {"numpy": [], "dispatched": []}
        for seed in range(args.seeds):
            for path in ("numpy", "dispatched"):
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ApproximateScoreWarning)
                    if path == "numpy":
                        result = run(lambda: factory(seed), X_train, X_test, y_train,
                                     y_test, with_features, lambda X: X)
                    else:
                        with config_context(array_api_dispatch=True):
                            result = run(lambda: factory(seed), X_train, X_test, y_train,
                                         y_test, with_features, convert)
                seconds[path].append(time.perf_counter() - start)
                results[path].append(result)
        rows = [("LL", 0)] + ([("accuracy", 1)] if with_features else [])
        for what, index in rows:
            numpy_values = [r[index] for r in results["numpy"]]
            dispatched_values = [r[index] for r in results["dispatched"]]
            (m1, e1), (m2, e2) = mean_and_error(numpy_values), mean_and_error(
                dispatched_values)
            print(f"{case:<12} {what:<10} {m1:>10.4f} ± {e1:<5.3f} {m2:>10.4f} ± "
                  f"{e2:<5.3f} {m2 - m1:>+10.4f} ± {np.hypot(e1, e2):<5.3f} "
                  f"{np.median(seconds['numpy']):>5.1f}/{np.median(seconds['dispatched']):<5.1f}",
                  flush=True)


if __name__ == "__main__":
    main()
