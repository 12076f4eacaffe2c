"""The skboltz demo: ``python -m skboltz``.

Trains an RBM on the digits, compares logistic regression (C chosen by cross-validation)
on RBM features with raw pixels, and prints the RBM's exact held-out log-likelihood.
"""

import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from threadpoolctl import threadpool_limits

from skboltz import RBM

#: Regularisation strengths tried by cross-validation.
C_GRID = [0.1, 1.0, 10.0, 100.0, 1000.0, 6000.0]


def logistic_regression():
    """Logistic regression with C chosen by 5-fold cross-validation."""
    return GridSearchCV(LogisticRegression(max_iter=3000), {"C": C_GRID}, cv=5)


def main():
    digits = load_digits()
    X = (digits.data / 16).astype(np.float32)
    X_train, X_test, y_train, y_test = train_test_split(
        X, digits.target, test_size=0.25, random_state=0, stratify=digits.target
    )
    start = time.perf_counter()
    # Both classifiers choose their regularisation C by 5-fold cross-validation on the
    # training images (RBM features want weak regularisation, as in scikit-learn's RBM
    # example, raw pixels a stronger one).
    raw = logistic_regression().fit(X_train, y_train)
    features = make_pipeline(
        RBM(n_components=256, n_iter=20, random_state=0),
        logistic_regression(),
    ).fit(X_train, y_train)
    density = RBM(n_components=16, n_iter=20, random_state=0).fit(X_train)
    log_z = density.estimate_log_partition()
    elapsed = time.perf_counter() - start

    print("skboltz demo: 8x8 digits, 1347 training and 450 test images\n")
    print(
        "  logistic regression on raw pixels        test accuracy "
        f"{raw.score(X_test, y_test):.3f}  (C={raw.best_params_['C']:g})"
    )
    print(
        "  logistic regression on RBM(256) features test accuracy "
        f"{features.score(X_test, y_test):.3f}  (C={features[-1].best_params_['C']:g}; "
        "RBM: 20 epochs, default settings)"
    )
    print(
        f"\n  RBM(16) exact log Z = {log_z.value:.3f} "
        f"({log_z.cost['n_states']} states enumerated)"
    )
    print(f"  held-out log-likelihood: {density.score(X_test):.3f} nats per image")
    print(f"  training log-likelihood: {density.score(X_train):.3f} nats per image")
    print(f"\n  done in {elapsed:.1f} s")


if __name__ == "__main__":
    # Every product here is small: one BLAS thread is faster than two fighting over
    # the cores (measured several times slower on a busy 2-core machine).
    with threadpool_limits(limits=1, user_api="blas"):
        main()
