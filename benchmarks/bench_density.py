"""The standard binary density suite: skboltz's densities beside the published ones.

Six sets of binary rows with their fixed train / valid / test splits (``_data.debd``,
from ``../shared/data/debd/`` or the folder named by ``SKBOLTZ_DEBD``): NLTCS (16
columns), Plants (69) and Jester (100) from Lowd & Davis, "Learning Markov network
structure with decision trees", ICDM 2010; Accidents (111) and DNA (180) from Van
Haaren & Davis, "Markov network structure learning: a randomized feature generation
approach", AAAI 2012; Mushrooms (112) as Larochelle & Murray split it, "The neural
autoregressive distribution estimator", AISTATS 2011.

Rows, for each set (every model trained on the training split only):

- ``independent``: each column its own Bernoulli variable at its training frequency
  with add-one smoothing (the published baseline);
- ``RBM()``: the defaults, as a new user runs it;
- ``RBM(20)``: ``RBM(n_components=20)``, otherwise the defaults;
- ``grid search``: the scikit-learn workflow a user would run: ``GridSearchCV`` over
  ``n_components`` in ``GRID`` with the validation split as its one fold
  (``PredefinedSplit``), scored by ``RBM.score`` (exact here: at most 20 hidden
  units), then the best setting refitted on the training split alone;
- ``previous defaults``: ``RBM(weight_decay=1e-3)``, the defaults before
  ``weight_decay="auto"`` (1e-2 on binary rows when the model has at least as many
  weights as rows; docs/user_guide/density.rst);
- ``best``: skboltz's best configuration found, ``RBM(learning=PCD(n_steps=5))``:
  the defaults with five Gibbs steps of the persistent chains per update, which keep
  up with the model better (2-3x the fit time; measured on three seeds, see
  docs/user_guide/density.rst);
- ``BM visible``: a :class:`~skboltz.BoltzmannMachine` with visible-to-visible
  couplings, fully visible (``n_hidden=0``; Osindero & Hinton, "Modeling image patches
  with a directed hierarchy of Markov random fields", NIPS 2008, call the version with
  hidden units too a semi-restricted Boltzmann machine), trained by Gibbs sampling
  for 5 epochs, on NLTCS and DNA by default (``--bm-sets``).

Columns: mean log-likelihood per row in nats of the test, validation and training
rows (up to 3,000), log Z's standard error (0 when exact), how log Z was found, and
the fit and scoring seconds (one thread); then what ``score(X_test)`` gives at the
default ``z_estimator`` (the number a user sees), its log Z's standard error and its
seconds; and ``sample``: the mean absolute difference between the column means of
``sample(500)`` and of the training rows (0.05 is the target). Every model is scored by the same code,
-F(x) - log Z: log Z by enumeration when the model has at most 2**20 states to sum
over, else by annealed importance sampling with a fixed amount of work
(``AIS(n_chains=AIS_CHAINS, n_betas=AIS_BETAS, target_std_error=None,
max_time=None)``; a log Z estimated low makes a score high, so a wide error bar is a
warning that the score may be too good). Published test log-likelihoods are printed
below each set's rows: independent columns and ID-SPN (Rooshenas & Lowd, "Learning
sum-product networks with direct and indirect variable interactions", ICML 2014), the
best published figure with its model, and the RBM of the NADE paper (Larochelle &
Murray 2011, 23 hidden units).

Run: OPENBLAS_NUM_THREADS=1 python benchmarks/bench_density.py
     [--sets nltcs,plants,jester,accidents,dna,mushrooms] [--quick]
     [--rows independent,defaults,previous,rbm20,grid,bm] [--bm-sets nltcs,dna]
     [--configs "dict(n_components=50, learning_rate=0.01); dict(learning='pt')"]

``--quick`` trains on at most 2,000 rows for 10 epochs (a smoke test, not figures);
``--configs`` adds rows of RBM settings (Python dicts, ``;``-separated; the names of
:mod:`skboltz.learning` are in scope) to explore.
"""

import argparse
import os
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from _data import DEBD_DIR, DEBD_SETS, debd  # noqa: E402
from _machine import print_machine  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV, PredefinedSplit  # noqa: E402

import skboltz.learning  # noqa: E402
from skboltz import RBM, BoltzmannMachine  # noqa: E402
from skboltz.learning import PCD  # noqa: E402
from skboltz.partition import AIS, Exact  # noqa: E402

#: The grid search's n_components (each candidate's score exact: at most 20 hidden).
GRID = {"n_components": [5, 10, 20]}
#: The defaults before weight_decay="auto" (1e-2 on binary rows, the best found).
PREVIOUS = {"weight_decay": 1e-3}
#: The Boltzmann machine with visible couplings, and the sets it is fitted on by
#: default (its Gibbs learning visits every unit in turn: slow on wide tables).
BM = {"n_hidden": 0, "n_iter": 5}
#: Gibbs steps per update of the persistent chains in the best configuration.
BEST_STEPS = 5
BM_SETS = ("nltcs", "dna")
#: Enumerate log Z up to this many states; beyond, AIS with this fixed work.
EXACT_STATES = 2**20
AIS_CHAINS, AIS_BETAS = 64, 10000
TRAIN_ROWS_SCORED = 3000
#: Rows drawn by ``sample`` (1,000 Gibbs steps each) for the column-mean check.
SAMPLES = 500

#: Published test log-likelihoods (nats per row): independent columns (add-one),
#: ID-SPN (Rooshenas & Lowd 2014), the best published with its model, and the RBM of
#: Larochelle & Murray 2011 (23 hidden units). None: not published.
PUBLISHED = {
    "nltcs": (-9.23, -6.02, (-5.99, "VAE"), None),
    "plants": (-31.27, -12.54, (-12.32, "MADE"), None),
    "jester": (-63.88, -52.86, (-51.54, "VAE"), None),
    "accidents": (-45.56, -26.98, (-26.32, "WinMine"), None),
    "dna": (-100.39, -81.21, (-79.06, "HCLT"), -96.90),
    "mushrooms": (-34.23, None, (-9.81, "NADE"), -15.15),
}
ROWS = ("independent", "defaults", "previous", "rbm20", "grid", "best", "bm")


def independent_scores(train, rows):
    """Per-row log-likelihoods under independent columns (add-one smoothing)."""
    rates = (train.sum(axis=0) + 1.0) / (train.shape[0] + 2.0)
    return rows @ np.log(rates) + (1.0 - rows) @ np.log1p(-rates)


def log_partition(model):
    """log Z of a fitted RBM or BoltzmannMachine, exact when cheap, else fixed AIS."""
    n_states = (2 ** min(model.n_features_in_, model.n_components)
                if isinstance(model, RBM) else 2 ** model.coupling_.shape[0])
    if n_states <= EXACT_STATES:
        return model.estimate_log_partition(z_estimator=Exact()), "exact"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the accuracy warnings are in the error bar
        log_z = model.estimate_log_partition(z_estimator=AIS(
            n_chains=AIS_CHAINS, n_betas=AIS_BETAS, target_std_error=None,
            max_time=None))
    return log_z, "AIS"


def scored_row(name, model, splits, fit_seconds):
    train, valid, test = splits
    start = time.perf_counter()
    log_z, how = log_partition(model)

    def mean_score(rows):
        return float(np.mean(-model.free_energy(rows))) - log_z.value

    row = {"name": name, "test": mean_score(test), "valid": mean_score(valid),
           "train": mean_score(train[:TRAIN_ROWS_SCORED]),
           "err": log_z.std_error or 0.0, "how": how, "fit s": fit_seconds}
    row["score s"] = time.perf_counter() - start
    # what a user gets from score() at the default z_estimator, against the reference
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        row["default"] = model.score(test)
        default_log_z = model.estimate_log_partition()
    row["default s"] = time.perf_counter() - start
    row["default err"] = default_log_z.std_error or 0.0
    # the samples' column means against the training rows' (mean absolute difference)
    samples = model.sample(SAMPLES, random_state=0)
    row["sample err"] = float(np.mean(np.abs(samples.mean(axis=0) - train.mean(axis=0))))
    return row


def fitted(estimator, train):
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(train)
    warned = sorted({w.category.__name__ for w in caught
                     if w.category.__module__.startswith("skboltz")})
    return estimator, time.perf_counter() - start, warned


def grid_search(train, valid, random_state, **parameters):
    """The workflow a user runs: the validation split as GridSearchCV's one fold, the
    best setting refitted on the training split alone."""
    X = np.vstack([train, valid])
    fold = np.r_[np.full(train.shape[0], -1), np.zeros(valid.shape[0], dtype=int)]
    search = GridSearchCV(RBM(random_state=random_state, **parameters), GRID,
                          cv=PredefinedSplit(fold),
                          refit=False)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X)
    search_seconds = time.perf_counter() - start
    best = clone(search.estimator).set_params(**search.best_params_)
    return best, search.best_params_, search_seconds


def print_row(row):
    fit = f"{row['fit s']:7.1f}" if row.get("fit s") is not None else " " * 7
    score = f"{row['score s']:7.1f}" if row.get("score s") is not None else " " * 7
    err = f"{row['err']:5.2f}" if row.get("err") is not None else " " * 5
    default = (f"{row['default']:8.2f} {row['default err']:5.2f} {row['default s']:5.1f}"
               if "default" in row else " " * 20)
    sample = f"{row['sample err']:6.3f}" if "sample err" in row else " " * 6
    print(f"  {row['name']:48s} {row['test']:8.2f} {row['valid']:8.2f} "
          f"{row['train']:8.2f} {err} {row.get('how', ''):>5s} {fit} {score} "
          f"{default} {sample}  {row.get('note', '')}", flush=True)


def print_published(name):
    independent, id_spn, (best, best_model), nade_rbm = PUBLISHED[name]
    parts = [f"independent {independent:.2f}",
             f"ID-SPN {id_spn:.2f}" if id_spn is not None else "ID-SPN -",
             f"best {best:.2f} ({best_model})",
             f"RBM (NADE paper) {nade_rbm:.2f}" if nade_rbm is not None
             else "RBM (NADE paper) -"]
    print(f"  published test LL: {'; '.join(parts)}")


def run_set(name, args, configs):
    splits = debd(name)
    train, valid, test = splits
    extra = {}
    if args.quick:
        train = train[:2000]
        splits = (train, valid, test)
        extra = {"n_iter": 10}
    print(f"\n{name}: {train.shape[0]} training, {valid.shape[0]} validation and "
          f"{test.shape[0]} test rows, {train.shape[1]} columns")
    print(f"  {'':48s} {'test':>8s} {'valid':>8s} {'train':>8s} {'+-':>5s} "
          f"{'log Z':>5s} {'fit s':>7s} {'score s':>7s} {'score()':>8s} {'+-':>5s} "
          f"{'s':>5s} {'sample':>6s}")
    rows = args.rows.split(",")
    if "independent" in rows:
        print_row({"name": "independent columns (add-one)",
                   **{split: float(np.mean(independent_scores(train, rows_)))
                      for split, rows_ in zip(("train", "valid", "test"),
                                              (train[:TRAIN_ROWS_SCORED], valid, test))},
                   "err": None, "fit s": None, "score s": None})
    candidates = []
    if "defaults" in rows:
        candidates.append(("RBM() (defaults)", RBM(random_state=0, **extra)))
    if "rbm20" in rows:
        candidates.append(("RBM(n_components=20)",
                           RBM(n_components=20, random_state=0, **extra)))
    if "grid" in rows:
        best, params, seconds = grid_search(train, valid, random_state=0, **extra)
        candidates.append((f"grid search: RBM({params['n_components']}) "
                           f"[{seconds:.0f} s]", best))
    if "previous" in rows:
        candidates.append((f"previous defaults: RBM({_describe(PREVIOUS)})",
                           RBM(random_state=0, **{**PREVIOUS, **extra})))
    if "best" in rows:
        candidates.append(("best: RBM(learning=PCD(n_steps=5))",
                           RBM(learning=PCD(n_steps=BEST_STEPS), random_state=0,
                               **extra)))
    for config in configs:
        candidates.append((f"RBM({_describe(config)})",
                           RBM(random_state=0, **{**config, **extra})))
    if "bm" in rows and name in args.bm_sets.split(","):
        candidates.append((f"BoltzmannMachine({_describe(BM)})",
                           BoltzmannMachine(random_state=0, **{**BM, **extra})))
    scored = []
    for label, estimator in candidates:
        model, seconds, warned = fitted(estimator, train)
        row = scored_row(label, model, splits, seconds)
        if warned:
            row["note"] = "warned: " + ", ".join(warned)
        print_row(row)
        scored.append(row)
    if scored:
        best = max(scored, key=lambda row: row["valid"])
        print(f"  best on the validation split: {best['name']} (test {best['test']:.2f})")
    print_published(name)


def _describe(parameters):
    return ", ".join(f"{key}={value!r}" for key, value in parameters.items())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(DEBD_SETS))
    parser.add_argument("--rows", default=",".join(ROWS))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--bm-sets", default=",".join(BM_SETS))
    parser.add_argument("--configs", default="")
    args = parser.parse_args()
    names = {name: getattr(skboltz.learning, name) for name in skboltz.learning.__all__}
    configs = [eval(text, {"__builtins__": {"dict": dict}}, names)  # noqa: S307
               for text in args.configs.split(";") if text.strip()]
    print_machine()
    print(f"data: {DEBD_DIR}")
    for name in args.sets.split(","):
        run_set(name, args, configs)


if __name__ == "__main__":
    main()
