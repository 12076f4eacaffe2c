"""Unit types as layer objects, and the categorical RBM built on them: exact answers by
enumeration (probabilities, free energies, log Z, gradients, samplers, AIS), the layers'
draws against their conditionals, and the categorical RBM's contract and bad input."""

import itertools
import re

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.special import logsumexp, softmax

from skboltz import CategoricalRBM
from skboltz.utils._noise import Noise
from skboltz.models._rbm_energy import RBMLayout
from skboltz.models._restricted_energy import RestrictedTrainingForm
from skboltz.learning import CD, PCD, ParallelTempering
from skboltz.partition import AIS, Exact
from skboltz.views import (
    BinaryUnits,
    CategoricalRBMView,
    GaussianUnits,
    LayerGroups,
    RBMView,
    SoftmaxUnits,
)

from _oracles import all_states, rbm_log_partition, sampling_total_variation


# -- an independent oracle: every row of codes, every hidden state -----------------------
def all_code_rows(sizes):
    """Every row of category codes, the last column changing fastest."""
    return np.array(list(itertools.product(*[range(k) for k in sizes])), dtype=float)


def one_hot_rows(codes, sizes):
    blocks = [np.eye(k)[codes[:, i].astype(int)] for i, k in enumerate(sizes)]
    return np.hstack(blocks)


def categorical_log_probabilities(weights, visible_bias, hidden_bias, sizes):
    """Exact log p(x) of every row of ``all_code_rows(sizes)``, and log Z."""
    V = one_hot_rows(all_code_rows(sizes), sizes)
    H = all_states(weights.shape[0])
    joint = V @ weights.T @ H.T + (V @ visible_bias)[:, None] + (H @ hidden_bias)[None, :]
    marginal = logsumexp(joint, axis=1)
    log_z = logsumexp(marginal)
    return marginal - log_z, log_z


def random_categorical(sizes, n_hidden, scale, seed):
    rng = np.random.default_rng(seed)
    n_visible = sum(sizes)
    return (rng.normal(0, scale, (n_hidden, n_visible)), rng.normal(0, scale, n_visible),
            rng.normal(0, scale, n_hidden))


def categorical_view(weights, visible_bias, hidden_bias, sizes):
    return CategoricalRBMView(weights, SoftmaxUnits(visible_bias, sizes),
                              BinaryUnits(hidden_bias))


def code_index(codes, sizes):
    """Position of each row of codes in ``all_code_rows(sizes)``."""
    index = np.zeros(len(codes), dtype=int)
    for column, size in enumerate(sizes):
        index = index * size + codes[:, column].astype(int)
    return index


# -- the layers' own formulas ------------------------------------------------------------
def test_softmax_layer_sums_each_group_by_enumeration():
    sizes = (3, 1, 4, 2)
    rng = np.random.default_rng(0)
    bias, input = rng.normal(size=10), rng.normal(size=(5, 10))
    layer = SoftmaxUnits(bias, sizes)
    fields = input + bias
    starts = np.cumsum([0, *sizes[:-1]])
    expected = sum(logsumexp(fields[:, s : s + k], axis=1) for s, k in zip(starts, sizes))
    assert_allclose(layer.log_partition(input), expected, rtol=1e-13)
    means = layer.mean(input)
    for s, k in zip(starts, sizes):
        assert_allclose(means[:, s : s + k], softmax(fields[:, s : s + k], axis=1), rtol=1e-13)
    # the independent layer's log Z, and the states it lists
    assert_allclose(layer.independent_log_partition(),
                    sum(logsumexp(bias[s : s + k]) for s, k in zip(starts, sizes)))
    states = layer.states(0, layer.n_states)
    assert layer.n_states == 24 and states.shape == (24, 10)
    assert_allclose(np.sort(code_index(np.argmax(states[:, :3], axis=1)[:, None], (3,))),
                    np.repeat(np.arange(3), 8))
    assert len({tuple(row) for row in states}) == 24  # every joint state once


def test_softmax_draws_follow_each_groups_probabilities():
    sizes = (2, 3)
    layer = SoftmaxUnits(np.zeros(5), sizes)
    fields = np.array([[0.5, -0.5, 1.0, 0.0, -1.0]])
    x = np.repeat(np.hstack([fields, [[1e5]]]), 40000, axis=0)
    noise = Noise(np.random.default_rng(1))
    drawn = layer.draw_fields(x.copy(), noise)
    assert_allclose(drawn[:, -1], 1)  # the constant unit
    assert_allclose(drawn[:, :2].sum(axis=1), 1) and assert_allclose(drawn[:, 2:5].sum(axis=1), 1)
    for s, k in zip((0, 2), sizes):
        expected = softmax(fields[0, s : s + k])
        assert_allclose(drawn[:, s : s + k].mean(axis=0), expected, atol=0.01)


def test_groups_side_by_side_sum_their_layers():
    rng = np.random.default_rng(2)
    binary, softmax_group = BinaryUnits(rng.normal(size=3)), SoftmaxUnits(rng.normal(size=4), (4,))
    groups = LayerGroups([binary, softmax_group])
    input = rng.normal(size=(6, 7))
    assert_allclose(groups.log_partition(input),
                    binary.log_partition(input[:, :3]) + softmax_group.log_partition(input[:, 3:]))
    S = np.hstack([rng.integers(0, 2, (6, 3)), np.eye(4)[rng.integers(0, 4, 6)]]).astype(float)
    assert_allclose(groups.energy(S), binary.energy(S[:, :3]) + softmax_group.energy(S[:, 3:]))
    assert_allclose(groups.mean(input)[:, 3:], softmax_group.mean(input[:, 3:]))
    assert groups.log_n_states == pytest.approx(3 * np.log(2) + np.log(4))


def test_gaussian_layer_sums_out_by_integration():
    # log int exp(-(v - b)^2 / (2 s2) + v x / s2) dv, by the trapezoid rule
    bias, variance, x = np.array([0.3]), np.array([0.7]), np.array([[0.4]])
    layer = GaussianUnits(bias, variance=variance)
    v = np.linspace(-20, 20, 400001)
    integrand = np.exp(-(v - bias) ** 2 / (2 * variance) + v * x[0] / variance)
    assert_allclose(layer.log_partition(x), np.log(np.trapezoid(integrand, v)), rtol=1e-10)
    # the training form's log variance gives the same layer
    other = GaussianUnits(bias, log_variance=np.log(variance))
    assert_allclose(other.log_partition(x), layer.log_partition(x), rtol=1e-14)


# -- the categorical RBM's view against enumeration ---------------------------------------
@pytest.mark.parametrize("sizes, n_hidden", [((3, 2, 2), 5), ((2, 3), 7)])
def test_categorical_free_energy_and_log_z_match_brute_force(sizes, n_hidden):
    # both layers get enumerated: the visible states (12, 6) are fewer than the hidden
    # ones (32, 128), and the hidden one is listed when it is smaller (below)
    weights, visible_bias, hidden_bias = random_categorical(sizes, n_hidden, 1.0, 3)
    view = categorical_view(weights, visible_bias, hidden_bias, sizes)
    log_p, log_z = categorical_log_probabilities(weights, visible_bias, hidden_bias, sizes)
    V = one_hot_rows(all_code_rows(sizes), sizes)
    assert_allclose(-view.free_energy(V) - log_z, log_p, atol=1e-12)
    assert_allclose(Exact().estimate(view).value, log_z, rtol=1e-13)
    small = categorical_view(weights[:2], visible_bias, hidden_bias[:2], sizes)
    assert not small._enumerates_visible()
    assert_allclose(Exact().estimate(small).value,
                    categorical_log_probabilities(weights[:2], visible_bias, hidden_bias[:2],
                                                  sizes)[1], rtol=1e-13)


def test_categorical_ais_is_within_its_error_of_exact():
    sizes = (3, 4, 2, 3)
    weights, visible_bias, hidden_bias = random_categorical(sizes, 6, 1.0, 4)
    view = categorical_view(weights, visible_bias, hidden_bias, sizes)
    exact = categorical_log_probabilities(weights, visible_bias, hidden_bias, sizes)[1]
    rates = view.visible.mean(np.zeros((1, 12)))[0]  # the biases' own shares
    estimate = AIS(n_chains=200, n_betas=300).estimate(view, rng=0, data_rates=rates)
    assert abs(estimate.value - exact) < 3 * estimate.std_error + 1e-3
    # the fast chains and the generic path agree on the base model's log Z
    base = view.base_bias_from_rates(rates)
    assert_allclose(view.base_log_partition(base),
                    SoftmaxUnits(base, sizes).independent_log_partition() + 6 * np.log(2))


def test_categorical_sampler_matches_the_exact_distribution():
    sizes = (3, 2, 2)
    weights, visible_bias, hidden_bias = random_categorical(sizes, 3, 1.5, 5)
    view = categorical_view(weights, visible_bias, hidden_bias, sizes)
    log_p, _ = categorical_log_probabilities(weights, visible_bias, hidden_bias, sizes)
    start = np.full(7, 0.5)
    V = view.draw_samples(20000, 50, start, np.random.default_rng(0))
    assert_allclose(V.sum(axis=1), 3)  # one category per column
    codes = np.column_stack([np.argmax(V[:, :3], 1), np.argmax(V[:, 3:5], 1),
                             np.argmax(V[:, 5:], 1)])
    observed = np.bincount(code_index(codes, sizes), minlength=12) / len(codes)
    tv = 0.5 * np.abs(observed - np.exp(log_p)).sum()
    mean, std = sampling_total_variation(log_p, len(codes))  # exact draws' noise
    assert tv < mean + 6 * std


def test_the_training_forms_statistics_are_the_exact_gradient():
    # positive statistics of the data minus the model's exact expectations (through
    # the training form's statistics) = finite differences of the exact log-likelihood
    sizes = (2, 3)
    weights, visible_bias, hidden_bias = random_categorical(sizes, 3, 0.7, 6)
    data = one_hot_rows(np.array([[0, 2], [1, 1], [1, 0], [0, 2]], dtype=float), sizes)
    params = RBMLayout.pack(weights, visible_bias, hidden_bias, np.float64)
    form = RestrictedTrainingForm(params.copy(), SoftmaxUnits(np.zeros(5), sizes),
                                  BinaryUnits(np.zeros(0)), CategoricalRBMView, RBMLayout)
    positive = form.augment(data)
    positive = form.statistics(form.hidden_probability(positive), positive) / len(data)
    states = form.augment(one_hot_rows(all_code_rows(sizes), sizes))
    log_p, _ = categorical_log_probabilities(weights, visible_bias, hidden_bias, sizes)
    probability = np.exp(log_p)[:, None]
    negative = form.statistics(form.hidden_probability(states), states * probability)
    gradient = positive - negative

    def mean_log_likelihood(p):
        w, b, c = p[RBMLayout.weights], p[RBMLayout.visible_bias], p[RBMLayout.hidden_bias]
        log_p, _ = categorical_log_probabilities(w, b, c, sizes)
        return log_p[code_index(np.array([[0, 2], [1, 1], [1, 0], [0, 2]]), sizes)].mean()

    for block in (RBMLayout.weights, RBMLayout.visible_bias, RBMLayout.hidden_bias):
        numeric = np.zeros_like(params)
        for index in np.ndindex(params[block].shape):
            step = np.zeros_like(params[block])
            step[index] = 1e-6
            up, down = params.copy(), params.copy()
            up[block] += step
            down[block] -= step
            numeric[block][index] = (mean_log_likelihood(up) - mean_log_likelihood(down)) / 2e-6
        assert_allclose(gradient[block], numeric[block], atol=1e-7)


# -- the estimator --------------------------------------------------------------------------
def test_probabilities_of_every_row_sum_to_one_and_match_enumeration():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(120, 3))
    X[:, 2] = rng.integers(0, 2, size=120)
    rbm = CategoricalRBM(n_components=4, n_iter=5, random_state=0).fit(X)
    assert list(rbm.n_categories_) == [3, 3, 2]
    rows = all_code_rows((3, 3, 2))
    log_p = rbm.score_samples(rows)
    assert_allclose(np.exp(log_p).sum(), 1.0, rtol=1e-12)
    expected, _ = categorical_log_probabilities(rbm.components_, rbm.intercept_visible_,
                                                rbm.intercept_hidden_, (3, 3, 2))
    assert_allclose(log_p, expected, atol=1e-10)
    assert rbm.estimate_log_partition().kind == "exact"


def test_training_learns_what_the_columns_share():
    # column 1 copies column 0: a model with hidden units beats independent columns,
    # by nearly the whole log 3 the copy saves
    rng = np.random.default_rng(1)
    X = rng.integers(0, 3, size=(400, 4))
    X[:, 1] = X[:, 0]
    train, test = X[:300], X[300:]
    rbm = CategoricalRBM(n_components=4, n_iter=50, random_state=0).fit(train)
    independent = sum(np.log((np.bincount(train[:, i], minlength=3)[test[:, i]] + 1) / 303)
                      for i in range(4)).mean()
    assert rbm.score(test) > independent + 0.9  # log 3 = 1.10
    samples = rbm.sample(500, random_state=0)
    assert (samples[:, 0] == samples[:, 1]).mean() > 0.8


@pytest.mark.parametrize("learning", ["cd", ParallelTempering(n_temperatures=3), CD(n_steps=2)])
def test_each_sampling_strategy_trains(learning):
    X = np.random.default_rng(2).integers(0, 4, size=(60, 3))
    rbm = CategoricalRBM(n_components=3, learning=learning, n_iter=3, random_state=0).fit(X)
    assert np.isfinite(rbm.score(X))


def test_codes_keep_their_dtype_and_round_trip():
    X = np.random.default_rng(3).integers(0, 3, size=(50, 3)).astype(np.float32)
    rbm = CategoricalRBM(n_components=3, n_iter=2, random_state=0).fit(X)
    assert rbm.transform(X).dtype == np.float32
    samples = rbm.sample(20, random_state=0)
    assert samples.shape == (20, 3) and set(np.unique(samples)) <= {0.0, 1.0, 2.0}
    assert rbm.reconstruct(X).shape == X.shape
    assert [list(c) for c in rbm.categories_] == [[0, 1, 2]] * 3


def test_min_categories_declares_categories_ahead():
    X = np.random.default_rng(4).integers(0, 2, size=(40, 2))
    rbm = CategoricalRBM(n_components=2, min_categories=[3, 2], n_iter=2, random_state=0)
    rbm.fit(X)
    assert list(rbm.n_categories_) == [3, 2]
    assert np.isfinite(rbm.score_samples([[2, 1]])).all()  # a category unseen in fit


def test_pcd_runs_100_persistent_chains_by_default():
    # the estimator's default number of chains reaches the sampler, for the named
    # strategy and a PCD object without n_chains; an explicit n_chains is kept, the
    # user's object is not changed, and parallel tempering keeps batch_size
    X = np.random.default_rng(7).integers(0, 3, size=(60, 3))

    def chains(**settings):
        rbm = CategoricalRBM(n_components=2, n_iter=1, random_state=0, **settings).fit(X)
        return (repr(rbm.learning_),
                len(rbm.learning_.persistent_chains(rbm._training_state.sampler)))

    assert chains() == ("PCD(n_chains=100)", 100)
    user_strategy = PCD()
    assert chains(learning=user_strategy) == ("PCD(n_chains=100)", 100)
    assert user_strategy.n_chains is None
    assert chains(learning=PCD(n_chains=7)) == ("PCD(n_chains=7)", 7)
    # above 100 rows a minibatch, PCD's own default: a chain per minibatch row, never
    # more than the rows (60 here; issue 44: batch_size=10**7 ran ten million chains)
    assert chains(batch_size=150) == ("PCD()", 60)
    pt = ParallelTempering(n_temperatures=3)
    assert chains(learning=pt, batch_size=4) == (repr(pt), 3 * 4)
    rbm = CategoricalRBM(n_components=2, n_iter=1, random_state=0).partial_fit(X)
    assert len(rbm.learning_.persistent_chains(rbm._training_state.sampler)) == 100


@pytest.mark.parametrize("n_rows, settings, window", [
    (230, {}, 50 * 23 // 5),  # a fifth of the fit's 1150 updates
    (40, {}, 100),  # 200 updates: at least 100
    (1000, {"n_iter": 10, "batch_size": 20}, 10 * 50 // 5),
    (1000, {"validation_fraction": 0.2}, 50 * 80 // 5),  # the training rows' updates
    (230, {"average_window": 30}, 30),
    (230, {"average_window": None}, None),
])
def test_auto_average_window_is_a_fifth_of_the_fits_updates(n_rows, settings, window):
    X = np.random.default_rng(8).integers(0, 3, size=(n_rows, 3))
    rbm = CategoricalRBM(n_components=2, random_state=0, **settings)
    assert rbm.fit(X).average_window_ == window
    if "average_window" not in settings:  # the same fit as the window given as a number
        same = CategoricalRBM(n_components=2, random_state=0, **settings)
        same.set_params(average_window=window).fit(X)
        assert_allclose(same.components_, rbm.components_, rtol=0, atol=0)


def test_auto_average_window_of_partial_fit_follows_its_first_call():
    X = np.random.default_rng(9).integers(0, 3, size=(3000, 3))
    rbm = CategoricalRBM(n_components=2, n_iter=5, random_state=0)
    assert rbm.partial_fit(X[:50]).average_window_ == 100
    assert rbm.partial_fit(X).average_window_ == 100
    rbm = CategoricalRBM(n_components=2, n_iter=5, average_window=None, random_state=0)
    rbm.partial_fit(X).set_params(average_window="auto")
    assert rbm.partial_fit(X[:50]).average_window_ == 5 * 300 // 5


@pytest.mark.parametrize("X, message", [
    ([[0, 1], [-1, 2]], "Negative values in data"),
    ([[0, 1.5], [1, 2]], "integer category codes; column 1 holds 1.5"),
    ([[0, np.nan], [1, np.nan]], "NaN"),  # a column never observed (missing codes: test_missing.py)
])
def test_bad_codes_get_clear_errors(X, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        CategoricalRBM(n_iter=1).fit(X)


def test_an_unknown_code_is_refused_after_fit_and_the_model_kept():
    X = np.random.default_rng(5).integers(0, 3, size=(40, 2))
    rbm = CategoricalRBM(n_components=2, n_iter=2, random_state=0).fit(X)
    before = rbm.components_.copy()
    with pytest.raises(ValueError, match="column 1 holds the code 5.*min_categories"):
        rbm.score_samples([[0, 5]])
    with pytest.raises(ValueError, match="column 0 holds the code 3"):
        rbm.partial_fit([[3, 0]])
    assert_allclose(rbm.components_, before)
    with pytest.raises(ValueError, match="min_categories must be an int or hold one int per column"):
        CategoricalRBM(min_categories=[2, 2, 2], n_iter=1).fit(X)


def test_a_binary_column_is_an_rbm_with_one_softmax_pair():
    # a column of two categories is a softmax pair: the model equals an RBM whose
    # unit is x with weights W[:, 1] - W[:, 0] (and the bias difference)
    rng = np.random.default_rng(6)
    sizes = (2, 2, 2)
    weights, visible_bias, hidden_bias = random_categorical(sizes, 3, 1.0, 7)
    view = categorical_view(weights, visible_bias, hidden_bias, sizes)
    rbm_weights = weights[:, 1::2] - weights[:, 0::2]
    rbm_hidden = hidden_bias + weights[:, 0::2].sum(axis=1)
    rbm_visible = visible_bias[1::2] - visible_bias[0::2]
    shift = visible_bias[0::2].sum()
    assert_allclose(Exact().estimate(view).value,
                    rbm_log_partition(rbm_weights, rbm_visible, rbm_hidden) + shift,
                    rtol=1e-12)
    codes = rng.integers(0, 2, size=(10, 3)).astype(float)
    assert_allclose(-view.free_energy(one_hot_rows(codes, sizes)),
                    -RBMView(rbm_weights, rbm_visible, rbm_hidden).free_energy(codes) + shift,
                    rtol=1e-12)


def test_visited_states_is_a_lower_bound_for_softmax_groups():
    # its chains start from the base model's own states (one category per column):
    # unit-wise binary draws gave impossible states and a "bound" above log Z
    from skboltz.partition import VisitedStates

    sizes = (3, 2, 4)
    weights, visible_bias, hidden_bias = random_categorical(sizes, 3, 1.0, 8)
    view = categorical_view(weights, visible_bias, hidden_bias, sizes)
    exact = categorical_log_probabilities(weights, visible_bias, hidden_bias, sizes)[1]
    bound = VisitedStates(n_chains=20, n_steps=30).estimate(view, rng=0).value
    assert bound <= exact + 1e-9
    assert bound > exact - 1.0  # and it found most of the mass
