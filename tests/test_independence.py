"""The end-of-fit check that a density of binary rows beats independent columns."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from skboltz import RBM, BoltzmannMachine
from skboltz.core._independence import MARGIN, independent_log_likelihood
from skboltz.exceptions import BelowIndependentWarning


def sparse_rows(n_rows=400, n_features=12, rate=0.1, seed=0):
    """Independent columns that are mostly 0: a uniform model is far below them."""
    return (np.random.default_rng(seed).random((n_rows, n_features)) < rate).astype(float)


def fit_recording(estimator, X, *, partial=False):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (estimator.partial_fit if partial else estimator.fit)(X)
    return [w for w in caught if issubclass(w.category, BelowIndependentWarning)]


def test_independent_log_likelihood_is_add_one_bernoulli():
    X = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    rates = np.array([3 / 5, 2 / 5])  # (ones + 1) / (rows + 2)
    expected = np.mean(X @ np.log(rates) + (1 - X) @ np.log(1 - rates))
    assert independent_log_likelihood(X) == pytest.approx(expected)
    # weights count rows as repeats
    weighted = independent_log_likelihood(X, np.array([2.0, 1.0, 1.0]))
    assert weighted == pytest.approx(independent_log_likelihood(X[[0, 0, 1, 2]]))


@pytest.mark.parametrize("n_components", [4, 40])  # exact log Z; a short AIS run
def test_rbm_below_independent_columns_warns(n_components):
    X = sparse_rows(n_features=40 if n_components == 40 else 12)
    # a step so small that the model stays near the uniform distribution
    bad = RBM(n_components=n_components, learning_rate=1e-5, n_iter=25, random_state=0)
    caught = fit_recording(bad, X)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "independent columns" in message and "learning='pt'" in message
    assert ("fewer hidden units" in message) == (n_components > 20)
    model = bad.score(X)
    assert model < independent_log_likelihood(X) - MARGIN  # the warning was right


@pytest.mark.parametrize("n_components", [4, 40])
def test_rbm_better_than_independent_columns_does_not_warn(n_components):
    X = sparse_rows(n_features=40 if n_components == 40 else 12)
    good = RBM(n_components=n_components, visible_bias_init="data_rates", n_iter=5,
               random_state=0)
    assert fit_recording(good, X) == []


def test_short_fits_partial_fit_and_grey_rows_are_not_checked():
    X = sparse_rows()
    bad = dict(n_components=4, learning_rate=1e-5, random_state=0)
    # 40 updates: a model still near its start, whose cure is more epochs
    assert fit_recording(RBM(n_iter=1, **bad), X) == []
    assert fit_recording(RBM(**bad), X, partial=True) == []
    # grey values are not binary rows: independent Bernoulli columns do not score them
    assert fit_recording(RBM(n_iter=25, **bad), X * 0.9 + 0.05) == []


def test_boltzmann_machine_is_checked():
    X = sparse_rows(n_rows=200, n_features=10, rate=0.05)
    # exact steps so long that the couplings overshoot: below the columns (a step of
    # 25 diverged outright, which the divergence check refuses; 19-19.5 stays below)
    settings = dict(n_hidden=0, learning="exact", momentum=0.0, batch_size=4, n_iter=20,
                    random_state=0)
    bad = BoltzmannMachine(learning_rate=19.2, **settings)
    caught = fit_recording(bad, X)
    assert len(caught) == 1 and "n_hidden=0" in str(caught[0].message)
    assert bad.score(X) < independent_log_likelihood(X) - MARGIN
    # at a sound step it starts at the columns' rates and improves on them
    assert fit_recording(BoltzmannMachine(learning_rate=1.0, **settings), X) == []


# -- weight_decay="auto" follows the rows: binary or grey ---------------------------
def test_auto_weight_decay_follows_binary_or_grey_rows_and_the_model_size():
    X = sparse_rows(n_rows=100, n_features=6, rate=0.3)
    fit = dict(n_components=20, n_iter=2, random_state=0)  # 120 weights, 100 rows
    assert RBM(**fit).fit(X).weight_decay_ == 1e-2
    # a small model of many rows: the weaker decay
    assert RBM(**{**fit, "n_components": 16}).fit(X).weight_decay_ == 1e-3
    with_missing = X.copy()
    with_missing[0, 0] = np.nan  # a missing entry does not make the rows grey
    assert RBM(**fit).fit(with_missing).weight_decay_ == 1e-2
    assert RBM(**fit).fit(sp.csr_matrix(X)).weight_decay_ == 1e-2
    assert RBM(**fit).fit(X * 0.5 + 0.25).weight_decay_ == 1e-3
    assert RBM(weight_decay=1e-4, **fit).fit(X).weight_decay_ == 1e-4
    # "auto" is that value: the same fit bit for bit
    auto, explicit = RBM(**fit).fit(X), RBM(weight_decay=1e-2, **fit).fit(X)
    np.testing.assert_array_equal(auto.components_, explicit.components_)
    # the first call decides; partial_fit keeps it
    streamed = RBM(**fit).partial_fit(X)
    assert streamed.partial_fit(X * 0.5 + 0.25).weight_decay_ == 1e-2


# -- learning_rate="auto" is at most 0.02 on binary rows ---------------------------
def test_auto_learning_rate_is_capped_on_binary_rows_only():
    X = sparse_rows(n_rows=100, n_features=6, rate=0.3)
    fit = dict(n_components=4, n_iter=2, random_state=0)
    assert RBM(**fit).fit(X).learning_rate_ == 0.02
    # grey rows keep 0.1 * sqrt(64 / n_features), at most 0.1
    assert RBM(**fit).fit(X * 0.5 + 0.25).learning_rate_ == 0.1
    wide = sparse_rows(n_rows=20, n_features=400, rate=0.3)
    assert RBM(**fit).fit(wide * 0.5 + 0.25).learning_rate_ == pytest.approx(0.04)
    assert RBM(**fit).fit(wide).learning_rate_ == 0.02
    assert RBM(learning_rate=0.3, **fit).fit(X).learning_rate_ == 0.3
    # "auto" is that value: the same fit bit for bit
    auto, explicit = RBM(**fit).fit(X), RBM(learning_rate=0.02, **fit).fit(X)
    np.testing.assert_array_equal(auto.components_, explicit.components_)
    # the first call decides; partial_fit keeps it
    streamed = RBM(**fit).partial_fit(X)
    assert streamed.partial_fit(X * 0.5 + 0.25).learning_rate_ == 0.02


def test_auto_weight_decay_under_array_api_dispatch():
    from sklearn import config_context
    xp = pytest.importorskip("array_api_strict")
    X = sparse_rows(n_rows=100, n_features=6, rate=0.3)
    fit = dict(n_components=20, n_iter=2, random_state=0)
    with config_context(array_api_dispatch=True):
        assert RBM(**fit).fit(xp.asarray(X)).weight_decay_ == 1e-2
        assert RBM(**fit).fit(xp.asarray(X * 0.5 + 0.25)).weight_decay_ == 1e-3


def test_independent_log_likelihood_of_held_out_rows():
    train = np.array([[1, 0], [1, 1], [0, 0], [1, 0]], dtype=float)
    test = np.array([[0, 1], [1, 0]], dtype=float)
    rates = (train.sum(axis=0) + 1) / (len(train) + 2)  # add-one: 4/6 and 2/6
    expected = np.mean(test @ np.log(rates) + (1 - test) @ np.log(1 - rates))
    assert independent_log_likelihood(train, scored=test) == pytest.approx(expected)
    assert independent_log_likelihood(train, scored=train) == pytest.approx(
        independent_log_likelihood(train))
