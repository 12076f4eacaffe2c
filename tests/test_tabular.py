"""The tabular RBM and the generic support it rests on (layer groups with extra
parameters): exact answers by brute force (free energies, log Z, the density of mixed
rows integrating to one, the training form's gradient), AIS within its error, the
samplers' margins, pandas input, the contract and bad input."""

import copy
import itertools
import pickle
import re

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy.special import logsumexp, softmax
from scipy.stats import kstest, norm
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from skboltz import CategoricalRBM, GaussianRBM, TabularRBM
from skboltz.utils._noise import Noise
from skboltz.models._restricted_energy import RestrictedLayout, RestrictedTrainingForm
from skboltz.exceptions import TrainingDivergedError
from skboltz.learning import CD, PCD, ParallelTempering
from skboltz.partition import AIS, Exact
from skboltz.views import (
    BinaryUnits,
    GaussianUnits,
    LayerGroups,
    SoftmaxUnits,
    TabularRBMView,
)

from _oracles import all_states, sampling_total_variation


# -- an independent oracle: every hidden state, Gaussian integrals in closed form ------
def one_hot_rows(codes, sizes):
    return np.hstack([np.eye(k)[np.asarray(codes)[:, i].astype(int)]
                      for i, k in enumerate(sizes)]) if sizes else np.zeros((len(codes), 0))


def all_code_rows(sizes):
    return np.array(list(itertools.product(*[range(k) for k in sizes])), dtype=float)


def hidden_log_weights(weights, bias, hidden_bias, variance, sizes):
    """log of the unnormalised p(h) of every hidden state (the visible units summed and
    integrated out), in the order of ``all_states``."""
    n_numeric = len(variance)
    H = all_states(weights.shape[0])
    numeric_mean = bias[:n_numeric] + H @ weights[:, :n_numeric]  # b + W^T h
    # int exp(-(z - b)^2 / (2 s) + z (W^T h) / s) dz, per numeric unit
    log_w = H @ hidden_bias + (
        (numeric_mean**2 - bias[:n_numeric] ** 2) / (2 * variance)
        + 0.5 * np.log(2 * np.pi * variance)
    ).sum(axis=1)
    start = n_numeric
    for size in sizes:  # each categorical column summed over its categories
        fields = bias[start : start + size] + H @ weights[:, start : start + size]
        log_w = log_w + logsumexp(fields, axis=1)
        start += size
    return log_w


def row_log_weights(weights, bias, hidden_bias, variance, sizes, Z, codes):
    """log sum_h exp(-E(z, x, h)) of each row (standardised numbers Z, codes)."""
    n_numeric = len(variance)
    H = all_states(weights.shape[0])
    V = np.hstack([Z, one_hot_rows(codes, sizes)])
    seen = np.concatenate([1 / variance, np.ones(V.shape[1] - n_numeric)])
    quadratic = -(((Z - bias[:n_numeric]) ** 2) / (2 * variance)).sum(axis=1)
    linear = V[:, n_numeric:] @ bias[n_numeric:]
    coupling = (V * seen) @ weights.T @ H.T + H @ hidden_bias
    return logsumexp((quadratic + linear)[:, None] + coupling, axis=1)


def random_tabular(n_numeric, sizes, n_hidden, scale, seed):
    rng = np.random.default_rng(seed)
    n_visible = n_numeric + sum(sizes)
    return (rng.normal(0, scale, (n_hidden, n_visible)), rng.normal(0, scale, n_visible),
            rng.normal(0, scale, n_hidden), np.exp(rng.normal(0, 0.3, n_numeric)))


def tabular_view(weights, bias, hidden_bias, variance, sizes):
    n_numeric = len(variance)
    groups = []
    if n_numeric:
        groups.append(GaussianUnits(bias[:n_numeric], variance=variance))
    if sizes:
        groups.append(SoftmaxUnits(bias[n_numeric:], sizes))
    return TabularRBMView(weights, LayerGroups(groups), BinaryUnits(hidden_bias))


def mixed_table(n_rows=400, seed=0):
    """A table whose columns depend on each other: size by colour, weight by size,
    shape by size."""
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue"], size=n_rows)
    size = np.where(colour == "red", 10.0, 20.0) + rng.normal(size=n_rows)
    weight = 3 * size + 2 * rng.normal(size=n_rows)
    likely_a = np.where(size > 15, 0.9, 0.2)
    shape = np.where(rng.random(n_rows) < likely_a, "a", "b")
    return pd.DataFrame({"size": size, "colour": pd.Categorical(colour),
                         "weight": weight, "shape": shape})


def fitted_parameters(model):
    return (model.components_, model.intercept_visible_, model.intercept_hidden_,
            model.variance_, tuple(int(k) for k in model.n_categories_))


# -- the generic support: layer groups with extra parameters ---------------------------
def test_groups_hand_a_gaussian_groups_parameters_to_it():
    gaussian = GaussianUnits(np.zeros(2), log_variance=np.zeros(2))
    groups = LayerGroups([gaussian, SoftmaxUnits(np.zeros(5), (2, 3))])
    assert groups.extra_parameters == ("log_variance",)
    assert groups.extra_columns("log_variance") == slice(0, 2)
    assert not groups.discrete and not LayerGroups.discrete  # a density, not countable
    bound = groups.replace(bias=np.arange(7.0), log_variance=np.log([2.0, 3.0]))
    assert_allclose(bound.groups[0].variance, [2.0, 3.0])
    assert_allclose(bound.groups[1].bias, np.arange(2.0, 7.0))
    assert_allclose(bound.training_parameter("log_variance"), np.log([2.0, 3.0]))
    view_layer = bound.for_view()
    assert view_layer.groups[0].log_variance is None
    assert np.shares_memory(view_layer.bias, bound.bias)  # no copies
    # the training form's row of log variances spans the Gaussian columns only
    layout = RestrictedLayout.of_layer(groups)
    assert layout.log_variance == (0, slice(0, 2)) and layout.weights == np.s_[1:-1, :-1]
    plain = RestrictedLayout.of_layer(GaussianUnits(np.zeros(2), variance=np.ones(2)))
    assert plain.log_variance == np.s_[0, :-1]
    # groups without extra parameters are as they were: the rows themselves
    binary = LayerGroups([BinaryUnits(np.zeros(2)), SoftmaxUnits(np.zeros(3), (3,))])
    rows = np.ones((3, 6))
    assert binary.extra_parameters == () and binary.seen_rows(rows, None) is rows
    with pytest.raises(ValueError, match="'log_variance' must be side by side"):
        LayerGroups([gaussian, SoftmaxUnits(np.zeros(2), (2,)), gaussian])


def test_groups_enumerate_and_draw_as_one_layer():
    # states of several countable groups, the first group's the fastest digit
    groups = LayerGroups([SoftmaxUnits(np.zeros(3), (3,)), BinaryUnits(np.zeros(2))])
    assert groups.n_states == 12 and groups.discrete
    states = groups.states(0, 12)
    assert len({tuple(row) for row in states}) == 12
    assert_allclose(states[:4, :3], np.eye(3)[[0, 1, 2, 0]])
    assert_allclose(groups.states(5, 9), states[5:9])
    fields = np.array([[0.5, -0.5, 1.0, 2.0, -2.0]])
    drawn = np.empty((20000, 5))
    groups.draw_units(np.repeat(fields, 20000, axis=0), Noise(np.random.default_rng(0)),
                      drawn)
    assert_allclose(drawn[:, :3].mean(axis=0), softmax(fields[0, :3]), atol=0.015)
    assert_allclose(drawn[:, 3:].mean(axis=0), 1 / (1 + np.exp(-fields[0, 3:])), atol=0.015)
    means = fields.copy()
    groups.mean_of_unit_fields(means)
    assert_allclose(means[0, :3], softmax(fields[0, :3]))


def test_the_training_forms_statistics_are_the_exact_gradient():
    # data statistics minus the model's exact expectations = the gradient of the exact
    # log-likelihood: of the categories' and hidden parameters as it is, of the Gaussian
    # columns' weights and means times sigma^2 (the model's own scale), of the log
    # variances as it is (only on the Gaussian columns of the extra row)
    n_numeric, sizes, n_hidden = 2, (3, 2), 3
    weights, bias, hidden_bias, variance = random_tabular(n_numeric, sizes, n_hidden, 0.6, 1)
    rng = np.random.default_rng(2)
    Z, codes = rng.normal(size=(6, n_numeric)), rng.integers(0, 2, size=(6, 2))
    view = tabular_view(weights, bias, hidden_bias, variance, sizes)
    form = view._training_form()
    layout, params = form.layout, form.params.copy()
    assert layout.log_variance == (0, slice(0, n_numeric))
    data = form.augment(np.hstack([Z, one_hot_rows(codes, sizes)]))
    positive = form.statistics(form.hidden_probability(data), data) / len(data)
    H = form.augment(all_states(n_hidden))
    log_p = hidden_log_weights(weights, bias, hidden_bias, variance, sizes)
    p = np.exp(log_p - logsumexp(log_p))
    means = form.visible_mean(H.copy(), form.empty_visible(len(H)))
    negative = sum(p[k] * form.statistics(H[k : k + 1], means[k : k + 1], means=True)
                   for k in range(len(H)))
    gradient = positive - negative
    assert_allclose(gradient[0, n_numeric:], 0)  # the unused part of the extra row

    def mean_log_likelihood(packed):
        w, b = packed[layout.weights], packed[layout.visible_bias]
        c, s = packed[layout.hidden_bias], np.exp(packed[layout.log_variance])
        log_z = logsumexp(hidden_log_weights(w, b, c, s, sizes))
        return (row_log_weights(w, b, c, s, sizes, Z, codes) - log_z).mean()

    numeric = np.zeros_like(params)
    for index in itertools.product(*map(range, params.shape)):
        if index[0] == 0 and index[1] >= n_numeric or index == (params.shape[0] - 1,
                                                                 params.shape[1] - 1):
            continue  # not parameters
        up, down = params.copy(), params.copy()
        up[index] += 1e-6
        down[index] -= 1e-6
        numeric[index] = (mean_log_likelihood(up) - mean_log_likelihood(down)) / 2e-6
    own_scale = numeric.copy()
    own_scale[1:, :n_numeric] *= variance  # the weights' and means' steps times sigma^2
    for block in (layout.weights, layout.visible_bias, layout.hidden_bias,
                  layout.log_variance):
        assert_allclose(gradient[block], own_scale[block], atol=1e-7)


# -- the view against brute force ------------------------------------------------------
@pytest.mark.parametrize("n_numeric, sizes", [(2, (3, 2)), (1, ()), (0, (3, 2))])
def test_free_energy_and_log_z_match_brute_force(n_numeric, sizes):
    weights, bias, hidden_bias, variance = random_tabular(n_numeric, sizes, 4, 0.8, 3)
    view = tabular_view(weights, bias, hidden_bias, variance, sizes)
    log_z = logsumexp(hidden_log_weights(weights, bias, hidden_bias, variance, sizes))
    assert_allclose(Exact().estimate(view).value, log_z, rtol=1e-12)
    rng = np.random.default_rng(4)
    Z = rng.normal(size=(7, n_numeric))
    codes = np.column_stack([rng.integers(0, k, 7) for k in sizes]) if sizes else \
        np.zeros((7, 0))
    V = np.hstack([Z, one_hot_rows(codes, sizes)])
    assert_allclose(-view.free_energy(V),
                    row_log_weights(weights, bias, hidden_bias, variance, sizes, Z, codes),
                    rtol=1e-12)


@pytest.mark.parametrize("n_numeric, sizes", [(2, (3, 4)), (0, (3, 4, 2, 3))],
                         ids=["hidden states", "visible states"])
def test_ais_is_within_its_error_of_exact(n_numeric, sizes):
    # with a Gaussian group the chains keep the hidden states, the visible groups summed
    # out (the generic path of the view); with softmax groups only, the visible states
    weights, bias, hidden_bias, variance = random_tabular(n_numeric, sizes, 8, 0.5, 5)
    view = tabular_view(weights, bias, hidden_bias, variance, sizes)
    assert view.sampler_state == ("hidden" if n_numeric else "visible")
    exact = logsumexp(hidden_log_weights(weights, bias, hidden_bias, variance, sizes))
    rates = (np.full(8, 0.5) if n_numeric
             else view.visible.mean(np.zeros((1, sum(sizes))))[0])
    estimate = AIS(n_chains=100, n_betas=500).estimate(view, rng=0, data_rates=rates)
    assert abs(estimate.value - exact) < 3 * estimate.std_error + 1e-3


def test_the_sampler_matches_the_exact_margins():
    n_numeric, sizes = 1, (3, 2)
    weights, bias, hidden_bias, variance = random_tabular(n_numeric, sizes, 3, 1.0, 6)
    view = tabular_view(weights, bias, hidden_bias, variance, sizes)
    log_p_hidden = hidden_log_weights(weights, bias, hidden_bias, variance, sizes)
    p_hidden = np.exp(log_p_hidden - logsumexp(log_p_hidden))
    H = all_states(3)
    start = np.r_[0.0, np.full(3, 1 / 3), 0.5, 0.5]
    samples = view.draw_samples(20000, 30, start, np.random.default_rng(0))
    # the numeric margin: a mixture of normals, one per hidden state (KS test)
    centres = bias[0] + H @ weights[:, 0]

    def mixture_cdf(z):
        return norm.cdf((np.asarray(z)[:, None] - centres) / np.sqrt(variance[0])) @ p_hidden

    assert kstest(samples[:, 0], mixture_cdf).pvalue > 1e-3
    # the categorical margin: each row of codes' exact probability (total variation)
    codes = all_code_rows(sizes)
    joint = np.zeros(len(codes))
    for h, weight in zip(H, p_hidden):
        probabilities = [softmax(bias[1:4] + h @ weights[:, 1:4]),
                         softmax(bias[4:] + h @ weights[:, 4:])]
        joint += weight * probabilities[0][codes[:, 0].astype(int)] * \
            probabilities[1][codes[:, 1].astype(int)]
    drawn = np.column_stack([np.argmax(samples[:, 1:4], 1), np.argmax(samples[:, 4:], 1)])
    observed = np.bincount(drawn[:, 0] * 2 + drawn[:, 1], minlength=6) / len(drawn)
    mean, std = sampling_total_variation(np.log(joint), len(drawn))
    assert 0.5 * np.abs(observed - joint).sum() < mean + 6 * std


# -- the estimator ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def fitted():
    table = mixed_table()
    return table, TabularRBM(n_components=6, n_iter=20, random_state=0).fit(table)


def test_scores_are_the_exact_log_density_of_the_input_rows(fitted):
    table, model = fitted
    assert list(model.is_categorical_) == [False, True, False, True]
    assert [list(c) for c in model.categories_] == [["blue", "green", "red"], ["a", "b"]]
    assert model.estimate_log_partition().kind == "exact"
    numbers = table[["size", "weight"]].to_numpy()
    assert_allclose(model.numeric_mean_, numbers.mean(axis=0))
    assert_allclose(model.numeric_scale_, numbers.std(axis=0))
    weights, bias, hidden_bias, variance, sizes = fitted_parameters(model)
    Z = (numbers - model.numeric_mean_) / model.numeric_scale_
    codes = np.column_stack([table["colour"].cat.codes, (table["shape"] == "b").astype(int)])
    log_z = logsumexp(hidden_log_weights(weights, bias, hidden_bias, variance, sizes))
    expected = (row_log_weights(weights, bias, hidden_bias, variance, sizes, Z, codes)
                - log_z - np.log(model.numeric_scale_).sum())
    assert_allclose(model.score_samples(table), expected, rtol=1e-10)
    assert model._input_units().discrete is False  # a density: not capped at 0


def test_the_density_of_mixed_rows_integrates_to_one():
    # one numeric and one categorical column: the sum over the categories of the
    # integral over the numbers of exp(score_samples), in the input's units
    rng = np.random.default_rng(1)
    kind = rng.integers(0, 3, size=300)
    value = 50.0 + 10.0 * kind + 3.0 * rng.normal(size=300)
    model = TabularRBM(n_components=3, categorical_features=[1], n_iter=15,
                       random_state=0).fit(np.column_stack([value, kind]))
    grid = np.linspace(value.min() - 40, value.max() + 40, 8001)
    total = 0.0
    for code in range(3):
        rows = np.column_stack([grid, np.full_like(grid, code)])
        total += np.trapezoid(np.exp(model.score_samples(rows)), grid)
    assert total == pytest.approx(1.0, abs=1e-6)


def test_categorical_only_tables_are_probabilities_that_sum_to_one():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 3, size=(200, 3))
    X[:, 1] = X[:, 0]
    model = TabularRBM(n_components=3, categorical_features=[0, 1, 2], n_iter=5,
                       random_state=0).fit(X)
    assert model._input_units().discrete and model.variance_.shape == (0,)
    log_p = model.score_samples(all_code_rows((3, 3, 3)))
    assert np.all(log_p <= 0)
    assert_allclose(np.exp(log_p).sum(), 1.0, rtol=1e-12)


def test_the_scale_of_a_numeric_column_is_counted_in_the_density():
    table = mixed_table(200, seed=3)
    wider = table.assign(size=10 * table["size"])
    settings = dict(n_components=4, n_iter=5, random_state=0)
    model, wide = TabularRBM(**settings).fit(table), TabularRBM(**settings).fit(wider)
    assert_allclose(wide.score_samples(wider), model.score_samples(table) - np.log(10),
                    rtol=1e-6)


def test_numeric_columns_only_are_a_gaussian_rbm_of_standardised_rows():
    X = mixed_table(200, seed=4)[["size", "weight"]].to_numpy()
    settings = dict(n_components=4, n_iter=5, random_state=0)
    model = TabularRBM(**settings).fit(X)
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    gaussian = GaussianRBM(whiten=False, **settings).fit(Z)  # a table does not whiten
    assert_allclose(model.components_, gaussian.components_, rtol=1e-9, atol=1e-12)
    assert_allclose(model.variance_, gaussian.variance_, rtol=1e-9)
    assert_allclose(model.score_samples(X),
                    gaussian.score_samples(Z) - np.log(X.std(axis=0)).sum(), rtol=1e-9)


def test_categorical_columns_only_are_a_categorical_rbm():
    X = np.random.default_rng(5).integers(0, 3, size=(100, 3))
    # the same settings (CategoricalRBM's defaults differ: 100 chains, window "auto")
    settings = dict(n_components=3, learning=PCD(n_chains=10), learning_rate=0.1,
                    momentum=0.0, weight_decay=1e-3, average_window=100, n_iter=5,
                    random_state=0)
    model = TabularRBM(categorical_features=[True] * 3, **settings).fit(X)
    categorical = CategoricalRBM(**settings).fit(X)
    assert_allclose(model.components_, categorical.components_, rtol=0, atol=0)
    assert_allclose(model.score_samples(X), categorical.score_samples(X), rtol=1e-12)


def test_samples_are_rows_of_numbers_and_codes_with_the_models_moments(fitted):
    table, model = fitted
    samples = model.sample(2000, n_steps=3000, random_state=0)  # the modes mix slowly
    assert samples.shape == (2000, 4)
    assert set(np.unique(samples[:, 1])) <= {0.0, 1.0, 2.0}
    assert set(np.unique(samples[:, 3])) <= {0.0, 1.0}
    # the model's exact mean of the numeric columns (input units) and of each colour
    weights, bias, hidden_bias, variance, sizes = fitted_parameters(model)
    log_p = hidden_log_weights(weights, bias, hidden_bias, variance, sizes)
    p = np.exp(log_p - logsumexp(log_p))
    H = all_states(weights.shape[0])
    mean = p @ (bias[:2] + H @ weights[:, :2]) * model.numeric_scale_ + model.numeric_mean_
    colours = p @ softmax(bias[2:5] + H @ weights[:, 2:5], axis=1)
    spread = samples[:, [0, 2]].std(axis=0) / np.sqrt(len(samples))
    assert np.all(np.abs(samples[:, [0, 2]].mean(axis=0) - mean) < 6 * spread)
    shares = np.bincount(samples[:, 1].astype(int), minlength=3) / len(samples)
    assert_allclose(shares, colours, atol=0.04)
    # the model learnt the table: red ones are small
    red = samples[:, 1] == 2
    assert samples[red, 0].mean() < 13 < samples[~red, 0].mean()
    reconstructed = model.reconstruct(table[:5])
    assert reconstructed.shape == (5, 4) and set(reconstructed[:, 1]) <= {0.0, 1.0, 2.0}


def test_training_learns_what_the_columns_share(fitted):
    table, model = fitted
    test = mixed_table(200, seed=7)
    # independent columns: a normal per number, the shares of each category
    independent = 0.0
    for name in ("size", "weight"):
        independent += norm.logpdf(test[name], table[name].mean(), table[name].std())
    for name in ("colour", "shape"):
        shares = table[name].value_counts(normalize=True)
        independent += np.log(shares[test[name]].to_numpy())
    assert model.score(test) > independent.mean() + 1.0


@pytest.mark.parametrize("learning", ["cd", "pcd", ParallelTempering(n_temperatures=3),
                                      CD(n_steps=2), PCD(n_chains=7)])
def test_each_sampling_strategy_trains(learning):
    table = mixed_table(60)
    model = TabularRBM(n_components=3, learning=learning, learning_rate=0.01, n_iter=3,
                       random_state=0).fit(table)
    assert np.isfinite(model.score(table))


def test_partial_fit_continues_and_large_models_use_ais():
    table = mixed_table(120)
    model = TabularRBM(n_components=3, random_state=0)
    for start in range(0, 120, 40):
        model.partial_fit(table[start : start + 40])
    assert model.n_iter_ == 3 and np.isfinite(model.score(table))
    big = TabularRBM(n_components=21, n_iter=1, random_state=0).fit(table)
    assert big.z_estimator_.__class__ is AIS
    log_z = big.estimate_log_partition()
    assert log_z.kind == "estimate" and log_z.std_error > 0


def test_pandas_columns_names_and_output():
    table = mixed_table(80).assign(flag=lambda frame: frame["size"] > 15,
                                   code=lambda frame: (frame["weight"] > 45).astype(int))
    # from the dtypes: category, object and bool columns; the integer column numeric
    model = TabularRBM(n_components=3, n_iter=2, random_state=0).fit(table)
    assert list(model.is_categorical_) == [False, True, False, True, True, False]
    assert list(model.categories_[2]) == [False, True]
    # by names, indices and a mask alike: the integer column as codes
    by_name = clone(model).set_params(
        categorical_features=["colour", "shape", "flag", "code"])
    by_index = clone(model).set_params(categorical_features=[1, 3, 4, 5])
    by_mask = clone(model).set_params(
        categorical_features=np.array([0, 1, 0, 1, 1, 1], dtype=bool))
    for other in (by_name, by_index, by_mask):
        other.fit(table)
        assert list(other.is_categorical_) == [False, True, False, True, True, True]
        assert list(other.categories_[3]) == [0, 1]
    assert_allclose(by_name.score_samples(table), by_index.score_samples(table))
    assert list(model.feature_names_in_) == list(table.columns)
    out = model.set_output(transform="pandas").transform(table)
    assert list(out.columns) == ["tabularrbm0", "tabularrbm1", "tabularrbm2"]
    # the categories are values: a later frame may order or declare them otherwise
    shuffled = table.assign(colour=table["colour"].astype(str))
    assert_allclose(model.score_samples(shuffled), model.score_samples(table))


def test_grid_search_selects_by_its_own_score():
    table = mixed_table(120)
    search = GridSearchCV(TabularRBM(n_iter=3, random_state=0),
                          {"n_components": [2, 4]}, cv=2).fit(table)
    assert search.best_params_["n_components"] in (2, 4)
    assert np.isfinite(search.best_score_)


@pytest.mark.parametrize("n_rows, n_iter, window", [(600, 20, 20 * 60 // 5), (60, 20, 100)])
def test_the_default_window_is_a_fifth_of_the_fits_updates(n_rows, n_iter, window):
    model = TabularRBM(n_components=2, n_iter=n_iter, random_state=0)
    assert model.fit(mixed_table(n_rows)).average_window_ == window


def test_float32_is_kept():
    rng = np.random.default_rng(6)
    X = np.column_stack([rng.normal(size=(60, 2)),
                         rng.integers(0, 3, size=60)]).astype(np.float32)
    model = TabularRBM(n_components=3, categorical_features=[2], n_iter=2,
                       random_state=0).fit(X)
    assert model.components_.dtype == np.float32 and model.variance_.dtype == np.float32
    assert model.transform(X).dtype == np.float32
    assert model.sample(3, random_state=0).dtype == np.float32
    assert model.reconstruct(X).dtype == np.float32


# -- bad input -------------------------------------------------------------------------
def test_unknown_categories_are_refused_and_the_model_kept(fitted):
    table, model = fitted
    before = model.components_.copy()
    other = table[:3].assign(colour=["red", "purple", "red"])
    with pytest.raises(ValueError, match="column 'colour' holds the category 'purple'"):
        model.score_samples(other)
    codes = TabularRBM(n_components=2, categorical_features=[1], n_iter=1,
                       random_state=0).fit([[0.0, 0], [1.0, 2], [2.0, 1]])
    with pytest.raises(ValueError, match="column 1 holds the code 5, but the model "
                                         "knows 3 categories"):
        codes.partial_fit([[0.5, 5]])
    assert_allclose(model.components_, before)


@pytest.mark.parametrize("categorical_features, message", [
    ([3], "holds the index 3, but the data have 2 columns"),
    ([-1], "holds the index -1"),
    ([True, False, True], "one entry per column (2)"),
    (["colour"], "holds column names, but the data have none"),
    ([1.5], "array-like of bool, int or str"),
])
def test_bad_categorical_features_get_clear_errors(categorical_features, message):
    X = np.random.default_rng(0).integers(0, 3, size=(20, 2)).astype(float)
    with pytest.raises(ValueError, match=re.escape(message)):
        TabularRBM(categorical_features=categorical_features, n_iter=1).fit(X)


def test_bad_tables_get_clear_errors():
    table = mixed_table(20)
    with pytest.raises(ValueError, match="names the column 'hue'"):
        TabularRBM(categorical_features=["hue"], n_iter=1).fit(table)
    dated = table.assign(when=pd.date_range("2024-01-01", periods=20))
    with pytest.raises(ValueError, match="cannot model the column 'when' of dtype "
                                         "datetime64"):
        TabularRBM(n_iter=1).fit(dated)
    with pytest.raises(ValueError, match="column 'shape' is numeric by "
                                         "categorical_features, but its dtype is"):
        TabularRBM(categorical_features=["colour"], n_iter=1).fit(table)
    with pytest.raises(ValueError, match="constant numeric column.*'weight'"):
        TabularRBM(n_iter=1).fit(table.assign(weight=3.0))
    with pytest.raises(ValueError, match="at least 2 samples; got 1 sample"):
        TabularRBM(n_iter=1).fit(table[:1])
    # missing entries are taken (tests/test_missing.py), a column never observed is not
    missing = table.assign(shape=table["shape"].where(table["size"] > 1e6))
    with pytest.raises(ValueError, match="'shape' holds no observed value"):
        TabularRBM(n_iter=1).fit(missing)
    with pytest.raises(ValueError, match="column 1 holds 1.5, but a categorical column "
                                         "of numbers holds integer category codes"):
        TabularRBM(categorical_features=[1], n_iter=1).fit([[0.0, 1.0], [1.0, 1.5]])
    with pytest.raises(ValueError, match="column 1 holds -1"):
        TabularRBM(categorical_features=[1], n_iter=1).fit([[0.0, 1.0], [1.0, -1.0]])
    with pytest.raises(ValueError, match="several types that cannot be ordered"):
        TabularRBM(n_iter=1).fit(table.assign(shape=["a", 1] * 10))


def test_a_collapsing_variance_stops_training_with_a_clear_error(fitted):
    # (what a numeric column of a few repeated values may do after long training)
    table, model = fitted
    state = copy.deepcopy(model._training_state)
    state.iterate[model._layout.log_variance] = [np.log(1e-7), 0.0]
    with pytest.raises(TrainingDivergedError, match="variance of the numeric column.*'size' "
                                                    "collapsed.*declare a column"):
        model._check_numeric_units(state, table)


def test_pickle_round_trip_then_partial_fit_continues_identically(fitted):
    table, model = fitted
    model = clone(model).set_params(n_iter=2).fit(table)
    restored = pickle.loads(pickle.dumps(model))
    assert_allclose(restored.score_samples(table), model.score_samples(table), rtol=0)
    model.partial_fit(table[:50])
    restored.partial_fit(table[:50])
    for name in ("components_", "intercept_visible_", "intercept_hidden_", "variance_"):
        assert_allclose(getattr(restored, name), getattr(model, name), rtol=0, atol=0)


def test_a_failed_refit_keeps_the_columns_of_the_kept_model(fitted):
    table, model = fitted
    model = clone(model).set_params(n_iter=1).fit(table)
    other = pd.DataFrame({"kind": pd.Categorical(["x", "y"] * 10), "level": 1.0})
    with pytest.raises(ValueError, match="constant numeric column"):
        model.fit(other)
    assert list(model.is_categorical_) == [False, True, False, True]
    assert [len(c) for c in model.categories_] == [3, 2]
    assert list(model.feature_names_in_) == list(table.columns)
    assert model.transform(table).shape == (len(table), 6)


def test_categorical_columns_by_position_pickle_refit_and_negative_codes():
    # The estimator API checks scikit-learn cannot run on codes given by position (see
    # test_common.py): a pickled model scores alike, a refit is the same fit, and a
    # negative code is refused as such.
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 3, size=80), rng.normal(size=80),
                         rng.integers(0, 2, size=80)]).astype(float)
    model = TabularRBM(n_components=3, categorical_features=[0, 2], n_iter=3,
                       z_estimator=AIS(n_chains=10, n_betas=50), random_state=0)
    fitted = clone(model).fit(X)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.score_samples(X), fitted.score_samples(X))
    np.testing.assert_array_equal(clone(model).fit(X).components_, fitted.components_)
    bad = X.copy()
    bad[3, 2] = -1
    with pytest.raises(ValueError, match="Negative values in data passed to TabularRBM"):
        clone(model).fit(bad)
