"""The skboltz demo: ``python -m skboltz``.

RBM features against raw pixels and scikit-learn's BernoulliRBM features (both RBMs at
their defaults) for a logistic regression on the digits, with all labels and with few
(the RBMs learn from every training image, labelled or not); then
the RBM's exact held-out log-likelihood beside independent pixels and scikit-learn's
BernoulliRBM (its weights scored exactly; its own score is a pseudo-likelihood).
"""

import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegressionCV
from sklearn.model_selection import train_test_split
from sklearn.neural_network import BernoulliRBM
from threadpoolctl import threadpool_limits

from skboltz import RBM
from skboltz.core._independence import independent_log_likelihood

#: Labelled training images per column (None: all of them).
LABELS = (None, 300, 100)
#: The train/test splits (stratified, 75/25) the accuracies are averaged over.
SEEDS = (0, 1, 2)


def logistic_regression():
    """Logistic regression, C chosen by 3-fold cross-validation."""
    return LogisticRegressionCV(Cs=[0.1, 1, 10, 100], cv=3, max_iter=5000)


def accuracy(features_train, y_train, features_test, y_test, labelled):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", FutureWarning)  # LogisticRegressionCV's, sklearn 1.9
        model = logistic_regression().fit(features_train[labelled], y_train[labelled])
    return model.score(features_test, y_test)


def labelled_rows(y, n_labels, seed):
    """Indices of ``n_labels`` rows that keep their labels (stratified), or all rows."""
    if n_labels is None:
        return np.arange(len(y))
    keep, _ = train_test_split(np.arange(len(y)), train_size=n_labels, stratify=y,
                               random_state=seed)
    return np.sort(keep)


def main():
    start = time.perf_counter()
    digits = load_digits()
    X = digits.data / 16
    names = ("raw pixels", "sklearn BernoulliRBM", "skboltz RBM()")
    scores = {name: {n: [] for n in LABELS} for name in names}
    fit_seconds = []
    for seed in SEEDS:
        X_train, X_test, y_train, y_test = train_test_split(
            X, digits.target, test_size=0.25, random_state=seed, stratify=digits.target
        )
        fit_start = time.perf_counter()
        rbm = RBM(random_state=seed).fit(X_train)  # no labels: every training image
        fit_seconds.append(time.perf_counter() - fit_start)
        bernoulli = BernoulliRBM(random_state=seed).fit(X_train)  # its defaults too
        features = {"raw pixels": (X_train, X_test),
                    "sklearn BernoulliRBM": (bernoulli.transform(X_train),
                                             bernoulli.transform(X_test)),
                    "skboltz RBM()": (rbm.transform(X_train), rbm.transform(X_test))}
        for n_labels in LABELS:
            labelled = labelled_rows(y_train, n_labels, seed)
            for name, (train, test) in features.items():
                scores[name][n_labels].append(
                    accuracy(train, y_train, test, y_test, labelled))
    density = RBM(n_components=16, n_iter=20, random_state=0).fit(X_train)
    log_z = density.estimate_log_partition()
    # scikit-learn's RBM on the same rows: its score is a pseudo-likelihood of one
    # random pixel per row and call; its weights scored by skboltz's exact log Z
    bernoulli = BernoulliRBM(n_components=16, n_iter=20, random_state=0).fit(X_train)
    pseudo = []
    for pixel_seed in (0, 1):  # which pixel it corrupts follows its random_state
        bernoulli.random_state = pixel_seed
        pseudo.append(bernoulli.score_samples(X_test).mean())
    bernoulli_exact = RBM(n_components=16, n_iter=0, random_state=0).fit(X_train)
    bernoulli_exact.components_ = bernoulli.components_
    bernoulli_exact.intercept_hidden_ = bernoulli.intercept_hidden_
    bernoulli_exact.intercept_visible_ = bernoulli.intercept_visible_
    independent = independent_log_likelihood(X_train, scored=X_test)
    elapsed = time.perf_counter() - start

    print(f"skboltz demo: 8x8 digits, {len(X_train)} training and {len(X_test)} test "
          f"images (mean test accuracy over {len(SEEDS)} stratified splits)\n")
    print("Logistic regression (C by cross-validation) on the raw pixels, or on the "
          "hidden units of an RBM\n(both RBMs at their default settings, "
          f"{rbm.n_components} hidden units, fitted on the training images without\n"
          f"their labels; skboltz's in {np.median(fit_seconds):.1f} s):\n")
    columns = ["all" if n is None else str(n) for n in LABELS]
    print(f"  {'labelled training images':<26}" + "".join(f"{c:>8}" for c in columns))
    for name, by_labels in scores.items():
        print(f"  {name:<26}" + "".join(f"{np.mean(v):8.3f}" for v in by_labels.values()))
    gains = [np.mean(scores["skboltz RBM()"][n]) - np.mean(scores["raw pixels"][n])
             for n in LABELS]
    print(f"  {'skboltz over raw pixels':<26}" + "".join(f"{g:+8.3f}" for g in gains))
    print(
        f"\nscore_samples is a true log-likelihood: RBM(16)'s exact log Z = "
        f"{log_z.value:.3f}\n({log_z.cost['n_states']} states enumerated; "
        f"{density.score(X_train):.3f} nats per training image). Held-out, nats per\n"
        "test image (higher is better; both RBMs 16 hidden units, 20 epochs):"
    )
    print(f"  {'independent pixels (each at its training rate)':<52}{independent:9.3f}")
    print(f"  {'sklearn BernoulliRBM(16), its exact log-likelihood':<52}"
          f"{bernoulli_exact.score(X_test):9.3f}")
    print(f"  {'skboltz RBM(16)':<52}{density.score(X_test):9.3f}")
    print("  BernoulliRBM.score_samples gives no such number: 64 times the log-probability\n"
          "  of one randomly chosen pixel given the others (a stochastic pseudo-likelihood):\n"
          f"  {pseudo[0]:.3f} or {pseudo[1]:.3f} for the same model, by the seed that "
          "picks the pixel.")
    print(f"\ndone in {elapsed:.1f} s")


if __name__ == "__main__":
    # Every product here is small: one BLAS thread is faster than two fighting over
    # the cores (measured several times slower on a busy 2-core machine).
    with threadpool_limits(limits=1, user_api="blas"):
        main()
