"""Gaussian RBM on real-valued data: held-out log density and features.

Datasets that scikit-learn ships: wine (13 features), breast cancer (30) and the
digits treated as real-valued (the 3 constant pixels dropped, 61 features). Each is
split once (75/25, ``random_state=0``) and standardised on its training rows.

Density: the held-out mean log density (nats per row) of ``GaussianRBM`` with
``n_components=8`` and every other parameter at its default (exact log Z: 2**8 hidden
states), and of the same model with ``whiten=True`` (a Ledoit-Wolf full Gaussian
carries the correlations, the RBM models what it misses; the ``LedoitWolf`` Gaussian
alone is a row too, so the RBM's own share shows), next to scikit-learn's density models with the same latent size on the same
split: ``PCA(8).score`` (probabilistic PCA), ``FactorAnalysis(8).score``, a diagonal
``GaussianMixture`` with about as many free parameters as the Gaussian RBM, and a
full-covariance ``GaussianMixture`` whose component count is chosen by BIC on the
training rows. Models with randomness run over several seeds (mean +- standard
deviation).

Target: the Gaussian RBM at least as good as probabilistic PCA with as many latent
dimensions as hidden units on every dataset, and as FactorAnalysis on at least one;
judged for each configuration. (The scores are densities of the standardised
features, as are the other models': comparable with each other, not with densities
of the raw features, which add the scaler's log-Jacobian.)

Features: logistic regression on the hidden probabilities of a ``GaussianRBM`` (64
hidden units, defaults otherwise, on standardised features), next to logistic
regression on the standardised features themselves and on ``BernoulliRBM`` features
(64 hidden units, 100 epochs, two learning rates) of min-max-scaled data; test
accuracy on the same split.

Defaults (``--only defaults``): ``GaussianRBM()`` at its defaults (16 hidden units,
``whiten="auto"``), with ``whiten=False`` (the default before) and ``whiten=True``,
against a single full-covariance Gaussian (``GaussianMixture(1, "full")``) and a
full-covariance mixture with k by BIC, on scikit-learn's bundled real tables (breast
cancer, wine, the diabetes features, iris; ``--tables`` adds ``digits``), each split
75/25 with ``--seeds`` different seeds (``train_test_split(random_state=seed)``) and
standardised on its training rows; the held-out log density per row of the
standardised features (the whitening's log-Jacobian included), and the difference
from the single Gaussian.

Run: OPENBLAS_NUM_THREADS=1 python benchmarks/bench_gaussian.py [--seeds 5]
[--only density|features|defaults] [--tables "breast cancer,wine"]
"""

import argparse
import os
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from _machine import machine_line, print_machine  # noqa: E402
from sklearn.covariance import LedoitWolf  # noqa: E402
from sklearn.datasets import (  # noqa: E402
    load_breast_cancer,
    load_diabetes,
    load_digits,
    load_iris,
    load_wine,
)
from sklearn.decomposition import PCA, FactorAnalysis  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.mixture import GaussianMixture  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.neural_network import BernoulliRBM  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import MinMaxScaler, StandardScaler  # noqa: E402

from skboltz import GaussianRBM  # noqa: E402

#: Latent size shared by every density model (hidden units, components, factors).
N_LATENT = 8
#: Largest full-covariance mixture BIC may choose.
MAX_FULL_COMPONENTS = 8
#: Hidden units of the feature extractors, and their logistic regression.
N_FEATURES = 64
LOGISTIC = {"C": 1.0, "max_iter": 5000}
#: BernoulliRBM gets the GaussianRBM's 100 epochs and a small learning-rate sweep.
BERNOULLI_LEARNING_RATES = (0.01, 0.1)
DATASETS = {"wine": load_wine, "breast cancer": load_breast_cancer, "digits": load_digits}


def load(name):
    data = DATASETS[name]()
    X, y = data.data, data.target
    X = X[:, X.std(axis=0) > 0]  # the digits' constant pixels
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.25, random_state=0
    )
    return X_train, X_test, y_train, y_test


def grbm_parameter_count(n_features, n_hidden=N_LATENT):
    # weights, visible means, variances, hidden biases
    return n_hidden * n_features + 2 * n_features + n_hidden


def diagonal_mixture_size(n_features):
    """Components of a diagonal GaussianMixture with about the Gaussian RBM's parameters."""
    per_component = 2 * n_features + 1  # means, variances, weight (less one overall)
    return max(1, round((grbm_parameter_count(n_features) + 1) / per_component))


def full_mixture_by_bic(X, seed):
    candidates = [GaussianMixture(k, covariance_type="full", random_state=seed).fit(X)
                  for k in range(1, MAX_FULL_COMPONENTS + 1)]
    return min(candidates, key=lambda model: model.bic(X))


#: The full Gaussian that whiten=True fits first, on its own.
LEDOIT_WOLF = "LedoitWolf (full Gaussian)"
#: The Gaussian RBM configurations judged against the targets.
GRBM_LABELS = (f"GaussianRBM({N_LATENT})", f"GaussianRBM({N_LATENT}, whiten=True)")


def density_models(name, n_features, seed, grbm_params):
    k = diagonal_mixture_size(n_features)
    return {
        GRBM_LABELS[0]: lambda: GaussianRBM(N_LATENT, random_state=seed, **grbm_params),
        GRBM_LABELS[1]: lambda: GaussianRBM(
            N_LATENT, random_state=seed, **{"whiten": True, **grbm_params}),
        LEDOIT_WOLF: LedoitWolf,
        f"PCA({N_LATENT}) (probabilistic PCA)": lambda: PCA(N_LATENT),
        f"FactorAnalysis({N_LATENT})": lambda: FactorAnalysis(N_LATENT, random_state=seed),
        f"GaussianMixture({k}, diag)": lambda: GaussianMixture(
            k, covariance_type="diag", random_state=seed),
        "GaussianMixture(full, k by BIC)": None,  # fitted by full_mixture_by_bic
    }


def density_table(n_seeds, grbm_params):
    results = {}
    for name in DATASETS:
        X_train, X_test, _, _ = load(name)
        scaler = StandardScaler().fit(X_train)
        X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
        rows = {}
        for seed in range(n_seeds):
            for label, make in density_models(name, X_train.shape[1], seed,
                                              grbm_params).items():
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    if make is None:
                        model = full_mixture_by_bic(X_train, seed)
                        label = "GaussianMixture(full, k by BIC)"
                    else:
                        model = make().fit(X_train)
                    score = model.score(X_test)
                seconds = time.perf_counter() - start
                rows.setdefault(label, []).append((score, seconds))
        results[name] = (X_train.shape, rows)
    return results


def print_density(results, n_seeds):
    print(f"\nHeld-out mean log density (nats per row; mean +- sd over {n_seeds} seeds)")
    header = f"{'dataset':<14} {'model':<40} {'log density':>18} {'fit s':>7}"
    print(header)
    print("-" * len(header))
    for name, (shape, rows) in results.items():
        for label, values in rows.items():
            scores = np.array([s for s, _ in values])
            seconds = np.median([t for _, t in values])
            spread = f"{scores.mean():9.2f} +- {scores.std():5.2f}"
            print(f"{name:<14} {label:<40} {spread:>18} {seconds:>7.2f}")
        d = shape[1]
        print(f"{'':<14} ({shape[0]} train rows, {d} features; GaussianRBM has "
              f"{grbm_parameter_count(d)} free parameters, whiten=True adds "
              f"{d + d * (d + 1) // 2} for the mean and covariance)")


def verdicts(results):
    print("\nTargets (mean over seeds)")
    meeting = []
    for label in GRBM_LABELS:
        print(f"  {label}")
        beats_pca, beats_fa = [], []
        for name, (_, rows) in results.items():
            grbm = np.mean([s for s, _ in rows[label]])
            pca = np.mean([s for s, _ in rows[f"PCA({N_LATENT}) (probabilistic PCA)"]])
            fa = np.mean([s for s, _ in rows[f"FactorAnalysis({N_LATENT})"]])
            beats_pca.append(grbm >= pca)
            beats_fa.append(grbm >= fa)
            print(f"    {name:<14} >= PCA({N_LATENT}):        {grbm:8.2f} vs {pca:8.2f}  "
                  f"{'MET' if grbm >= pca else 'MISSED'}")
            print(f"    {name:<14} >= FactorAnalysis: {grbm:8.2f} vs {fa:8.2f}  "
                  f"{'yes' if grbm >= fa else 'no'}")
        print(f"    FactorAnalysis matched on at least one dataset: "
              f"{'MET' if any(beats_fa) else 'MISSED'}")
        if "whiten=True" in label:
            gains = ", ".join(
                f"{name} {np.mean([s for s, _ in rows[label]]) - rows[LEDOIT_WOLF][0][0]:+.2f}"
                for name, (_, rows) in results.items()
            )
            print(f"    gain over its LedoitWolf Gaussian alone (nats): {gains}")
        if all(beats_pca) and any(beats_fa):
            meeting.append(label)
    print(f"  Every target met by: {', '.join(meeting) if meeting else 'neither'}")


def feature_models(seed):
    def logistic():
        return LogisticRegression(**LOGISTIC)

    return {
        "standardised features": make_pipeline(StandardScaler(), logistic()),
        f"GaussianRBM({N_FEATURES}) features": make_pipeline(
            StandardScaler(), GaussianRBM(N_FEATURES, random_state=seed), logistic()),
        **{f"BernoulliRBM({N_FEATURES}, lr={lr}) on min-max": make_pipeline(
            MinMaxScaler(), BernoulliRBM(N_FEATURES, learning_rate=lr, n_iter=100,
                                         random_state=seed), logistic())
           for lr in BERNOULLI_LEARNING_RATES},
    }


def feature_table(n_seeds):
    print(f"\nFeatures: logistic regression {LOGISTIC} test accuracy "
          f"(mean +- sd over {n_seeds} seeds)")
    header = f"{'dataset':<14} {'representation':<42} {'accuracy':>16} {'fit s':>7}"
    print(header)
    print("-" * len(header))
    for name in DATASETS:
        X_train, X_test, y_train, y_test = load(name)
        rows = {}
        for seed in range(n_seeds):
            for label, model in feature_models(seed).items():
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    model.fit(X_train, y_train)
                seconds = time.perf_counter() - start
                rows.setdefault(label, []).append((model.score(X_test, y_test), seconds))
        for label, values in rows.items():
            accuracy = np.array([a for a, _ in values])
            seconds = np.median([t for _, t in values])
            spread = f"{accuracy.mean():.4f} +- {accuracy.std():.4f}"
            print(f"{name:<14} {label:<42} {spread:>16} {seconds:>7.2f}")


#: The real tables of the defaults' comparison (scikit-learn's bundled sets).
DEFAULT_TABLES = {"breast cancer": load_breast_cancer, "wine": load_wine,
                  "diabetes": load_diabetes, "iris": load_iris, "digits": load_digits}
#: The Gaussian RBM settings compared, by label.
DEFAULT_SETTINGS = {"GaussianRBM() (whiten='auto')": {},
                    "GaussianRBM(whiten=False)": {"whiten": False},
                    "GaussianRBM(whiten=True)": {"whiten": True}}
SINGLE_GAUSSIAN = "GaussianMixture(1, 'full')"


def defaults_table(tables, n_seeds):
    print(f"\nDefaults: held-out mean log density (nats per row of the standardised "
          f"features), mean +- sd over {n_seeds} splits; 'vs 1 Gaussian': the mean "
          "difference from GaussianMixture(1, 'full') on the same splits [worst split]")
    header = (f"{'table':<14} {'model':<32} {'log density':>16} {'vs 1 Gaussian':>20} "
              f"{'whitened':>9} {'fit s':>6}")
    print(header)
    print("-" * len(header))
    for name in tables:
        X = DEFAULT_TABLES[name]().data
        X = X[:, X.std(axis=0) > 0]  # the digits' constant pixels
        rows = {}
        for seed in range(n_seeds):
            X_train, X_test = train_test_split(X, test_size=0.25, random_state=seed)
            scaler = StandardScaler().fit(X_train)
            X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
            makers = {
                SINGLE_GAUSSIAN: lambda: GaussianMixture(1, covariance_type="full"),
                "GaussianMixture(full, k by BIC)": None,
                **{label: (lambda settings=settings: GaussianRBM(random_state=seed,
                                                                  **settings))
                   for label, settings in DEFAULT_SETTINGS.items()},
            }
            for label, make in makers.items():
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    model = (full_mixture_by_bic(X_train, seed) if make is None
                             else make().fit(X_train))
                seconds = time.perf_counter() - start
                whitened = getattr(model, "whitening_factor_", None) is not None
                rows.setdefault(label, []).append(
                    (model.score(X_test), seconds, whitened))
        single = np.array([s for s, _, _ in rows[SINGLE_GAUSSIAN]])
        for label, values in rows.items():
            scores = np.array([s for s, _, _ in values])
            gain = scores - single
            whitened = sum(w for _, _, w in values)
            print(f"{name:<14} {label:<32} {scores.mean():8.2f} +- {scores.std():4.2f} "
                  f"{gain.mean():+10.2f} [{gain.min():+6.2f}] "
                  f"{f'{whitened}/{n_seeds}' if 'RBM' in label else '':>9} "
                  f"{np.median([t for _, t, _ in values]):6.2f}", flush=True)
        print(f"{'':<14} ({X.shape[0]} rows, {X.shape[1]} features)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--grbm", default="{}",
                        help="extra GaussianRBM parameters, a Python dict (for tuning)")
    parser.add_argument("--only", choices=["density", "features", "defaults"],
                        help="run one part of the benchmark")
    parser.add_argument("--tables", default="breast cancer,wine,diabetes,iris",
                        help="the defaults' tables, comma-separated (also: digits)")
    args = parser.parse_args()
    grbm_params = eval(args.grbm)  # noqa: S307 (a developer's command-line option)
    print_machine()
    if grbm_params:
        print(f"GaussianRBM parameters changed from the defaults: {grbm_params}")
    if args.only in (None, "defaults"):
        defaults_table(args.tables.split(","), args.seeds)
    if args.only in (None, "density"):
        results = density_table(args.seeds, grbm_params)
        print_density(results, args.seeds)
        verdicts(results)
    if args.only in (None, "features"):
        feature_table(args.seeds)
    print("\n" + machine_line())


if __name__ == "__main__":
    main()
