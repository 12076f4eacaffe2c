"""skboltz.DBM against exact answers on machines small enough to enumerate.

The brute-force oracles (every joint state of every layer) live in test_dbm_energy.py,
written independently of the module's sums.
"""

import pickle
import warnings

import numpy as np
import pytest
from _oracles import assert_samples_match, sampling_total_variation, state_index
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from test_dbm_energy import all_bits, brute_force, random_dbm

from skboltz import DBM, RBM
from skboltz.models._dbm_energy import (
    dbm_gradient,
    dbm_layout,
    dbm_mean_field,
    layer_input,
    uncentred_bias_step,
)
from skboltz.estimators._dbm_pretraining import compose, greedy_pretraining, tied_rbm_statistics
from skboltz.utils._energy import sigmoid
from skboltz.exceptions import (
    ApproximateScoreWarning,
    LogZAccuracyWarning,
    SlowEstimateWarning,
    TooManyStatesError,
    TrainingDivergedError,
)
from skboltz.learning import PCD, DBMLearningStrategy, MeanFieldPCD
from skboltz.partition import AIS, Exact, LogZ, ZEstimator

SIZES = (12, 4, 4)


def binary_rows(n_rows, n_visible, seed=0):
    return (np.random.default_rng(seed).random((n_rows, n_visible)) < 0.4).astype(float)


def dbm_with(view, **params):
    """A fitted DBM whose parameters are those of ``view`` (set by hand)."""
    X = binary_rows(40, view.n_visible)
    dbm = DBM(hidden_layer_sizes=view.layer_sizes[1:], n_iter=0, random_state=0, **params)
    dbm.fit(X)
    dbm.weights_ = [np.array(w) for w in view.weights]
    dbm.biases_ = [np.array(b) for b in view.biases]
    return dbm


def exact_visible_log_probabilities(view):
    """log p(v) of every visible state (order of ``all_bits``), by brute force."""
    n_visible = view.n_visible
    log_w = np.concatenate([w for _, _, w in brute_force(view)])
    # all_bits puts the first unit in the highest bit: the visible units lead the code
    per_visible = log_w.reshape(2**n_visible, -1)
    marginal = logsumexp(per_visible, axis=1)
    return marginal - logsumexp(marginal)


def exact_statistics(view):
    """<x_k x_{k-1}^T> and <x_k> under the model, by brute force."""
    log_w = np.concatenate([w for _, _, w in brute_force(view)])
    p = np.exp(log_w - logsumexp(log_w))
    layers = [np.concatenate(part) for part in zip(*[lay for _, lay, _ in brute_force(view)])]
    products = [(layers[k] * p[:, None]).T @ layers[k - 1] for k in range(1, len(layers))]
    means = [p @ layer for layer in layers]
    return products, means


# -- scores against enumeration ---------------------------------------------------------
def test_score_samples_equals_brute_force_enumeration():
    view = random_dbm(SIZES, seed=1)
    dbm = dbm_with(view)
    V = all_bits(SIZES[0])[::5]
    exact = exact_visible_log_probabilities(view)[state_index(V)]
    assert type(dbm.z_estimator_).__name__ == "Exact"
    np.testing.assert_allclose(dbm.score_samples(V), exact, rtol=0, atol=1e-9)
    # free_energy is the hidden layers summed out: log p(v) + log Z
    log_z = dbm.estimate_log_partition().value
    np.testing.assert_allclose(-dbm.free_energy(V) - log_z, exact, atol=1e-9)


def test_mean_field_bound_is_below_the_exact_log_likelihood():
    view = random_dbm(SIZES, scale=1.5, seed=2)
    exact = dbm_with(view).score_samples(all_bits(SIZES[0])[::3])
    with pytest.warns(ApproximateScoreWarning):
        bound = dbm_with(view, likelihood="bound").score_samples(all_bits(SIZES[0])[::3])
    assert np.all(bound <= exact + 1e-10)
    assert np.all(bound > exact - 3.0)  # a real bound, not a trivial one
    assert np.mean(exact - bound) > 1e-3  # and not the exact value by mistake


def test_ais_covers_the_exact_log_z_within_three_standard_errors():
    view = random_dbm(SIZES, seed=3)
    dbm = dbm_with(view, z_estimator=AIS(n_chains=200, n_betas=400, target_std_error=None))
    estimate = dbm.estimate_log_partition()
    exact = dbm.estimate_log_partition(Exact()).value
    assert estimate.method == "ais"
    assert 0 < estimate.std_error < 0.2
    assert abs(estimate.value - exact) < 3 * estimate.std_error


def test_per_row_estimates_cover_the_exact_log_likelihood():
    view = random_dbm(SIZES, seed=4)
    V = all_bits(SIZES[0])[::97]
    exact = dbm_with(view).score_samples(V)
    ais = AIS(n_chains=100, n_betas=200, target_std_error=None)
    dbm = dbm_with(view, likelihood="estimate", z_estimator=ais)
    estimate = dbm.score_samples(V)
    # log Z and each row's hidden sum both estimated: a few hundredths of a nat each
    np.testing.assert_allclose(estimate, exact, atol=0.15)
    assert not np.allclose(estimate, exact, atol=1e-6)  # really estimated
    np.testing.assert_array_equal(dbm.score_samples(V[::-1]), estimate[::-1])  # row-wise
    # "auto" on the small machine of the hidden layers given a row: exact sums
    auto = dbm_with(view, likelihood="estimate").score_samples(V)
    np.testing.assert_allclose(auto, exact, atol=1e-9)


def test_auto_likelihood_is_exact_small_and_a_bound_beyond():
    small = dbm_with(random_dbm((6, 4, 4), seed=5))
    assert small._hidden_sum(small._model_view()) == "exact"
    large = dbm_with(random_dbm((6, 17, 17), seed=5))
    assert large._hidden_sum(large._model_view()) == "bound"
    V = binary_rows(5, 6)
    view = large._model_view()
    bound = view.mean_field_log_bound(V, view.inference_mean_field(V))
    with pytest.warns(ApproximateScoreWarning):
        scores = large.score_samples(V)
    np.testing.assert_allclose(scores, bound - large.estimate_log_partition().value, atol=1e-9)


def test_bound_scores_warn_once_per_fitted_model_and_exact_ones_never():
    """A mean-field score is a lower bound, not a log-probability: the first score of
    each fitted model says so (ApproximateScoreWarning), as a bound on log Z does."""
    import warnings

    view = random_dbm(SIZES, seed=6)
    V = all_bits(SIZES[0])[::50]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ApproximateScoreWarning)
        dbm_with(view).score_samples(V)  # exact: no warning
    bounded = dbm_with(view, likelihood="bound")
    with pytest.warns(ApproximateScoreWarning, match="lower bound on log p"):
        bounded.score(V)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ApproximateScoreWarning)
        bounded.score_samples(V)  # once per fitted model
    bounded.weights_[0] = bounded.weights_[0] + 0.1  # another model: warns again
    with pytest.warns(ApproximateScoreWarning):
        bounded.score_samples(V)


# -- the sampler ---------------------------------------------------------------------
def test_samples_total_variation_shrinks_like_sampling_noise():
    view = random_dbm(SIZES, seed=6)
    dbm = dbm_with(view)
    log_p = exact_visible_log_probabilities(view)
    tv = {}
    for n_samples in (10000, 40000):
        samples = dbm.sample(n_samples, random_state=n_samples, n_steps=40)
        assert_samples_match(samples, log_p)
        counts = np.bincount(state_index(samples), minlength=log_p.size) / n_samples
        tv[n_samples] = 0.5 * np.abs(counts - np.exp(log_p)).sum()
    expected = (sampling_total_variation(log_p, 40000)[0]
                / sampling_total_variation(log_p, 10000)[0])
    assert tv[40000] / tv[10000] == pytest.approx(expected, abs=0.15)


def test_the_sample_check_fails_for_a_wrong_sampler(monkeypatch):
    view = random_dbm(SIZES, seed=6)
    dbm = dbm_with(view)
    log_p = exact_visible_log_probabilities(view)
    samples = dbm.sample(10000, random_state=0, n_steps=0)  # the starting draws only
    with pytest.raises(AssertionError, match="total variation"):
        assert_samples_match(samples, log_p)


def test_sampled_means_average_to_the_models_visible_means():
    """sample(return_means=True): P(v = 1 | x_1) of each chain's last sweep; over many
    chains they average to the model's visible means, and the states drawn by the same
    chains are draws from them."""
    view = random_dbm((5, 3, 2), scale=1.0, seed=7)
    dbm = dbm_with(view)
    exact = np.exp(exact_visible_log_probabilities(view)) @ all_bits(5)
    n = 20000
    means = dbm.sample(n, random_state=0, n_steps=20, return_means=True)
    assert means.shape == (n, 5) and 0 < means.min() and means.max() < 1
    assert np.all(np.abs(means.mean(axis=0) - exact) < 5 * 0.5 / np.sqrt(n))
    states = dbm.sample(n, random_state=0, n_steps=20)
    assert set(np.unique(states)) <= {0.0, 1.0}
    assert np.all(np.abs((states - means).mean(axis=0)) < 5 * 0.5 / np.sqrt(n))
    # no steps: the means of the start, training rows
    start = dbm.sample(3, n_steps=0, return_means=True)
    assert all((row == binary_rows(40, 5)).all(axis=1).any() for row in start)


# -- the training gradient against enumeration ---------------------------------------------
def test_positive_phase_is_the_mean_field_fixed_point():
    view = random_dbm((8, 5, 4, 3), seed=7)
    V = all_bits(8)[::3]
    strategy = MeanFieldPCD(max_iter=500, tol=1e-10)
    state = strategy.init_state(view, V, 10, np.random.default_rng(0))
    layers = strategy.positive_phase(view, V, state, np.random.default_rng(0))
    assert layers[0] is V or np.array_equal(layers[0], V)
    for k in range(1, 4):  # mu_k = sigmoid(W_k mu_{k-1} + W_{k+1}^T mu_{k+1} + b_k)
        np.testing.assert_allclose(
            layers[k], sigmoid(layer_input(layers, view.weights, view.biases, k)), atol=1e-9
        )
    expected, _ = view.mean_field(V, tol=1e-12, max_iter=1000)
    for mu, reference in zip(layers[1:], expected):
        np.testing.assert_allclose(mu, reference, atol=1e-8)
    assert strategy.pop_diagnostics(state)["mean_field_unconverged"] == 0


def test_negative_phase_chains_sample_the_model():
    view = random_dbm(SIZES, seed=8)
    strategy = MeanFieldPCD(n_chains=20000, n_steps=40)
    rng = np.random.default_rng(1)
    X = binary_rows(50, SIZES[0])
    state = strategy.init_state(view, X, 10, rng)
    layers = strategy.negative_phase(view, X[:10], state, rng, 0.0)
    # the even layers are states of the chains: their distribution is the model's
    even = np.hstack(layers[0::2])
    log_p = view.log_unnormalized(all_bits(view.n_state_units))
    assert_samples_match(even, log_p - logsumexp(log_p))
    # the odd layers are their probabilities given the even ones
    for k in range(1, len(layers), 2):
        np.testing.assert_allclose(
            layers[k], sigmoid(layer_input(layers, view.weights, view.biases, k)), atol=1e-12
        )
    # so the statistics are unbiased: against the exact expectations
    products, means = exact_statistics(view)
    for k in range(1, len(layers)):
        empirical = layers[k].T @ layers[k - 1] / layers[0].shape[0]
        np.testing.assert_allclose(empirical, products[k - 1], atol=0.02)
    for layer, mean in zip(layers, means):
        np.testing.assert_allclose(layer.mean(axis=0), mean, atol=0.02)


def test_centred_gradient_is_the_chain_rule_of_the_plain_one():
    rng = np.random.default_rng(10)
    sizes = (6, 4, 3)
    layout = dbm_layout(sizes)
    positive = [rng.random((7, n)) for n in sizes]
    negative = [(rng.random((9, n)) < 0.5).astype(float) for n in sizes]
    offsets = [rng.random(n) for n in sizes]
    plain = dbm_gradient(positive, negative, layout, np.empty(layout.size))
    centred = dbm_gradient(positive, negative, layout, np.empty(layout.size), offsets)
    # b_k = c_k - W_k mu_{k-1} - W_{k+1}^T mu_{k+1}: dL/dW_k at fixed c =
    # dL/dW_k - dL/db_k mu_{k-1}^T - mu_k dL/db_{k-1}^T, and dL/dc_k = dL/db_k
    plain_b, plain_W = layout.biases_of(plain), layout.weights_of(plain)
    for k, W in enumerate(layout.weights_of(centred), start=1):
        expected = (plain_W[k - 1] - np.outer(plain_b[k], offsets[k - 1])
                    - np.outer(offsets[k], plain_b[k - 1]))
        np.testing.assert_allclose(W, expected, atol=1e-12)
    np.testing.assert_allclose(centred[layout.biases], plain[layout.biases])


def test_a_centred_step_keeps_the_energy_of_the_centred_parametrisation():
    rng = np.random.default_rng(11)
    view = random_dbm((5, 4, 3), seed=11)
    layout = dbm_layout(view.layer_sizes)
    offsets = [rng.random(n) for n in view.layer_sizes]
    params = layout.pack(view.weights, view.biases, np.float64)
    step = rng.normal(0, 0.1, layout.size)

    def centred_biases(p):  # c_k = b_k + W_k mu_{k-1} + W_{k+1}^T mu_{k+1}
        W, b = layout.weights_of(p), layout.biases_of(p)
        return [b[k] + (W[k - 1] @ offsets[k - 1] if k else 0)
                + (offsets[k + 1] @ W[k] if k < len(W) else 0) for k in range(len(b))]

    before = centred_biases(params)
    moved = params + step
    for bias, correction in zip(layout.biases_of(moved),
                                uncentred_bias_step(step, offsets, layout)):
        bias += correction
    after = centred_biases(moved)
    for b0, b1, dc in zip(before, after, layout.biases_of(step)):
        np.testing.assert_allclose(b1 - b0, dc, atol=1e-12)


def test_mean_field_rows_converge_on_their_own():
    view = random_dbm((8, 6, 5), scale=1.5, seed=12)
    V = all_bits(8)[::5]
    # each row stops when its own magnetisations settle: alone or among others, the
    # same result
    alone = []
    for v in V[:6]:
        layers = [v[None]] + [np.full((1, n), 0.5) for n in (6, 5)]
        dbm_mean_field(layers, view.weights, view.biases, tol=1e-6)
        alone.append(np.hstack(layers[1:]))
    layers = [V[:6]] + [np.full((6, n), 0.5) for n in (6, 5)]
    dbm_mean_field(layers, view.weights, view.biases, tol=1e-6)
    np.testing.assert_allclose(np.hstack(layers[1:]), np.vstack(alone), atol=1e-13)


# -- training ---------------------------------------------------------------------------
def bars(n_rows=300, seed=0):
    """Noisy 3 x 4 bars: a 12-pixel distribution with structure for two layers."""
    rng = np.random.default_rng(seed)
    images = np.zeros((n_rows, 3, 4))
    rows = rng.random((n_rows, 3)) < 0.4
    columns = rng.random((n_rows, 4)) < 0.3
    horizontal = rng.random(n_rows) < 0.5
    images[horizontal] = rows[horizontal][:, :, None]
    images[~horizontal] = columns[~horizontal][:, None, :]
    flips = rng.random(images.shape) < 0.05
    return np.abs(images - flips).reshape(n_rows, 12)


@pytest.mark.parametrize("centering, learning_rate, n_iter", [(True, 1.0, 30),
                                                             (False, 0.3, 60)])
def test_training_raises_the_exact_likelihood(centering, learning_rate, n_iter):
    X = bars()
    start = DBM(hidden_layer_sizes=(6, 4), n_iter=0, random_state=0).fit(X).score(X)
    dbm = DBM(hidden_layer_sizes=(6, 4), n_iter=n_iter, learning_rate=learning_rate,
              batch_size=20, centering=centering, random_state=0).fit(X)
    assert dbm.score(X) > start + 0.5
    assert dbm.n_iter_ == n_iter and len(dbm.history_["epoch"]) == n_iter


def test_pretraining_gives_a_better_start_than_independent_units():
    X = bars()
    start = DBM(hidden_layer_sizes=(6, 4), n_iter=0, random_state=0).fit(X).score(X)
    pretrained = DBM(hidden_layer_sizes=(6, 4), n_iter=0, pretraining_iter=20,
                     learning_rate=0.2, batch_size=20, random_state=0).fit(X)
    assert pretrained.score(X) > start + 0.2


@pytest.mark.parametrize("hidden_layer_sizes, n_visible, resolved",
                         [((6, 4), 12, 10**-0.5), ((500, 1000), 784, 1500**-0.5)])
def test_auto_learning_rate_shrinks_with_the_hidden_widths(hidden_layer_sizes, n_visible,
                                                           resolved):
    X = binary_rows(20, n_visible)
    dbm = DBM(hidden_layer_sizes=hidden_layer_sizes, n_iter=0, random_state=0).fit(X)
    assert dbm.learning_rate == "auto"
    assert dbm.learning_rate_ == pytest.approx(resolved, rel=1e-12)
    assert DBM(hidden_layer_sizes=hidden_layer_sizes, n_iter=0, learning_rate=0.3,
               random_state=0).fit(X).learning_rate_ == 0.3


def test_auto_learning_rate_trains_and_pretrains_at_the_resolved_step():
    X = bars(100)
    common = dict(hidden_layer_sizes=(6, 4), n_iter=3, pretraining_iter=2, batch_size=20,
                  random_state=0)
    auto = DBM(**common).fit(X)
    number = DBM(**common, learning_rate=auto.learning_rate_).fit(X)
    other = DBM(**common, learning_rate=0.05).fit(X)
    for a, b, c in zip(auto.weights_ + auto.biases_, number.weights_ + number.biases_,
                       other.weights_ + other.biases_):
        np.testing.assert_array_equal(a, b)
        assert not np.allclose(a, c)


def test_composition_doubles_the_ends_and_halves_the_middle():
    rng = np.random.default_rng(13)
    pairs = [(rng.random((3, 4)), rng.random(4), rng.random(3)),
             (rng.random((2, 3)), rng.random(3), rng.random(2)),
             (rng.random((2, 2)), rng.random(2), rng.random(2))]
    weights, biases = compose(pairs)
    np.testing.assert_array_equal(weights[0], pairs[0][0])
    np.testing.assert_array_equal(weights[1], 0.5 * pairs[1][0])
    np.testing.assert_array_equal(weights[2], pairs[2][0])
    np.testing.assert_array_equal(biases[0], pairs[0][1])
    np.testing.assert_allclose(biases[1], 0.5 * (pairs[0][2] + 0.5 * pairs[1][1]))
    np.testing.assert_allclose(biases[2], 0.5 * (0.5 * pairs[1][2] + pairs[2][1]))
    np.testing.assert_array_equal(biases[3], pairs[2][2])
    weights, biases = compose(pairs[:1])  # one hidden layer: the RBM itself
    assert len(weights) == 1 and len(biases) == 2


@pytest.mark.parametrize("below, above", [(2, 1), (1, 2), (1, 1)])
def test_tied_copy_statistics_give_the_likelihood_gradient(below, above):
    # The pretraining RBMs with tied copies: the data's statistics minus the exact
    # model's are the gradient of the mean log-probability of the data in every copy.
    rng = np.random.default_rng(14)
    n_lower, n_upper = 3, 2
    W, b, c = rng.normal(0, 1, (n_upper, n_lower)), rng.normal(0, 1, n_lower), \
        rng.normal(0, 1, n_upper)
    V = all_bits(n_lower)[[1, 5, 6]]
    copies = all_bits(n_lower * below)  # every state of the lower copies
    lower_sum = sum(copies[:, i * n_lower : (i + 1) * n_lower] for i in range(below))

    def log_marginals(W, b, c):  # log p*(lower copies), the upper copies summed out
        return lower_sum @ b + above * np.logaddexp(0, lower_sum @ W.T + c).sum(axis=1)

    def mean_log_likelihood(W, b, c):
        log_p = log_marginals(W, b, c)
        rows = [np.flatnonzero(np.all(copies == np.tile(v, below), axis=1))[0] for v in V]
        return float(np.mean(log_p[rows]) - logsumexp(log_p))

    positive = tied_rbm_statistics(W, c, below * V, above)
    p = np.exp(log_marginals(W, b, c) - logsumexp(log_marginals(W, b, c)))
    per_state = [tied_rbm_statistics(W, c, lower_sum[i : i + 1], above)
                 for i in range(len(p))]
    negative = [sum(weight * s[j] for weight, s in zip(p, per_state)) for j in range(3)]
    for j, (param, name) in enumerate(((W, "W"), (b, "b"), (c, "c"))):
        numeric = np.empty_like(param)
        for index in np.ndindex(param.shape):
            args = [W.copy(), b.copy(), c.copy()]
            args[j][index] += 1e-6
            high = mean_log_likelihood(*args)
            args[j][index] -= 2e-6
            numeric[index] = (high - mean_log_likelihood(*args)) / 2e-6
        np.testing.assert_allclose(positive[j] - negative[j], numeric, atol=1e-6,
                                   err_msg=name)


def test_one_hidden_layer_pretraining_is_a_plain_rbm():
    X = bars()
    weights, biases = greedy_pretraining(
        X, (12, 5), n_iter=3, learning_rate=0.05, batch_size=20, momentum=lambda e: 0.5,
        weight_decay=0.0, rng=np.random.default_rng(0),
    )
    assert [w.shape for w in weights] == [(5, 12)] and [b.shape for b in biases] == [(12,), (5,)]


def test_float32_and_float64_fits_agree_and_keep_their_dtype():
    X = bars(100)
    fits = {dtype: DBM(hidden_layer_sizes=(6, 4), n_iter=2, batch_size=20, random_state=0)
            .fit(X.astype(dtype)) for dtype in (np.float32, np.float64)}
    for w32, w64 in zip(fits[np.float32].weights_, fits[np.float64].weights_):
        assert w32.dtype == np.float32 and w64.dtype == np.float64
        np.testing.assert_allclose(w32, w64, atol=1e-4)
    assert fits[np.float32].transform(X.astype(np.float32)).dtype == np.float32


def test_partial_fit_continues_exactly_where_fit_stopped():
    X = bars(100)
    fitted = DBM(hidden_layer_sizes=(6, 4), n_iter=3, batch_size=20, random_state=0).fit(X)
    streamed = DBM(hidden_layer_sizes=(6, 4), n_iter=3, batch_size=20, random_state=0)
    for _ in range(3):
        streamed.partial_fit(X)
    for a, b in zip(fitted.weights_ + fitted.biases_, streamed.weights_ + streamed.biases_):
        np.testing.assert_array_equal(a, b)
    again = pickle.loads(pickle.dumps(streamed)).partial_fit(X)
    streamed.partial_fit(X)
    for a, b in zip(again.weights_, streamed.weights_):
        np.testing.assert_array_equal(a, b)


def test_hand_edited_parameters_are_scored_afresh():
    dbm = DBM(hidden_layer_sizes=(4, 3), n_iter=1, random_state=0).fit(bars(60))
    before = dbm.estimate_log_partition().value
    dbm.weights_[1] += 1.0  # in place: the log Z cache must see it
    after = dbm.estimate_log_partition().value
    assert after != before
    assert after == Exact().estimate(dbm._model_view()).value


def test_a_diverging_fit_leaves_the_model_as_it_was():
    X = bars(60)
    dbm = DBM(hidden_layer_sizes=(4, 3), n_iter=1, random_state=0).fit(X)
    kept = [w.copy() for w in dbm.weights_]
    with pytest.raises(TrainingDivergedError, match="learning rate"):
        dbm.set_params(learning_rate=1e9).partial_fit(X * 1.0)
    for a, b in zip(kept, dbm.weights_):
        np.testing.assert_array_equal(a, b)


# -- the estimator's interface --------------------------------------------------------------
def test_transform_layers_and_pipeline():
    X = bars(120)
    y = (X[:, :4].sum(axis=1) > 1).astype(int)
    top = DBM(hidden_layer_sizes=(5, 3), n_iter=2, random_state=0).fit(X)
    assert top.transform(X).shape == (120, 3)
    assert list(top.get_feature_names_out()) == ["dbm0", "dbm1", "dbm2"]
    every = clone(top).set_params(transform_layers="all").fit(X)
    features = every.transform(X)
    assert features.shape == (120, 8)
    np.testing.assert_allclose(features[:, 5:], every.set_params(transform_layers="top")
                               .transform(X))
    model = make_pipeline(DBM(hidden_layer_sizes=(5, 3), n_iter=2, random_state=0),
                          LogisticRegression()).fit(X, y)
    assert model.score(X, y) > 0.5


def test_only_layered_strategies_are_offered():
    X = bars(40)
    with pytest.raises(ValueError, match="DBM cannot use learning=PCD"):
        DBM(hidden_layer_sizes=(3,), learning=PCD()).fit(X)
    with pytest.raises(ValueError, match="mean_field_pcd"):
        DBM(hidden_layer_sizes=(3,), learning="pcd").fit(X)
    assert "{\"mean_field_pcd\"}" in DBM.__doc__


def test_a_strategy_returning_wrong_rows_is_refused_clearly():
    class OneLayerShort(DBMLearningStrategy):
        def positive_phase(self, model, batch, state, rng):
            return [batch]

        def negative_phase(self, model, batch, state, rng, progress):
            return [batch]

    with pytest.raises(ValueError, match="must return a list of 3 arrays"):
        DBM(hidden_layer_sizes=(3, 2), learning=OneLayerShort()).fit(bars(40))


def test_history_records_the_strategy_diagnostics_and_early_stopping():
    X = bars(200)
    dbm = DBM(hidden_layer_sizes=(5, 3), n_iter=50, validation_fraction=0.2,
              n_iter_no_change=2, monitor_likelihood=True, random_state=0).fit(X)
    history = dbm.history_
    assert dbm.n_iter_ < 50  # stopped early
    for key in ("mean_field_iterations", "mean_field_unconverged", "log_likelihood_valid",
                "free_energy_gap", "reconstruction_error_valid"):
        assert len(history[key]) == dbm.n_iter_
    assert all(n >= 1 for n in history["mean_field_iterations"])


def test_verbose_prints_an_epoch_line(capsys):
    DBM(hidden_layer_sizes=(3,), n_iter=1, pretraining_iter=1, verbose=1,
        random_state=0).fit(bars(40))
    out = capsys.readouterr().out
    assert "[DBM] pretrained layer 1 of 1" in out and "[DBM] Iteration 1" in out


def test_one_hidden_layer_is_an_rbm():
    # a DBM with one hidden layer scores like the RBM with its parameters
    X = bars(60)
    dbm = DBM(hidden_layer_sizes=(5,), n_iter=2, random_state=0).fit(X)
    rbm = RBM(n_components=5, n_iter=0).fit(X)
    rbm.components_, rbm.intercept_visible_, rbm.intercept_hidden_ = (
        dbm.weights_[0], dbm.biases_[0], dbm.biases_[1])
    np.testing.assert_allclose(dbm.score_samples(X), rbm.score_samples(X), atol=1e-9)
    np.testing.assert_allclose(dbm.transform(X), rbm.transform(X), atol=1e-12)


# -- issue 31: per-row estimates with a budget and progress; the messages -------------
class _RowSpy(ZEstimator):
    """Records the budget each row's estimate gets; returns a fixed hidden sum."""

    calls = []

    def __init__(self, max_time=6.0, converged=True):
        self.max_time = max_time
        self.converged = converged

    def estimate(self, model, *, rng=None, data_rates=None):
        _RowSpy.calls.append(self.max_time)
        value = float(np.sum(model.biases[0]))  # depends on the row only
        return LogZ(value, 0.1, method="spy", converged=self.converged,
                    caveats=() if self.converged else ("it ran out of its share",))


def test_per_row_estimates_share_the_budget_and_are_kept():
    """Issue 31: likelihood="estimate" scored 0.13 s a row with no budget: each row got
    the estimator's whole max_time. Now the rows of a call share it, and each row's
    value is kept (the same in every call)."""
    view = random_dbm(SIZES, seed=4)
    V = all_bits(SIZES[0])[::97]
    # the model's log Z exact (the fitted z_estimator_), each row's sum by the spy
    dbm = dbm_with(view, likelihood="estimate", z_estimator="exact")
    dbm.set_params(z_estimator=_RowSpy(max_time=6.0))
    _RowSpy.calls.clear()
    scores = dbm.score_samples(V)
    assert _RowSpy.calls == [6.0 / len(V)] * len(V)
    _RowSpy.calls.clear()
    np.testing.assert_array_equal(dbm.score_samples(V[::-1]), scores[::-1])
    np.testing.assert_array_equal(dbm.score_samples(V[2:3]), scores[2:3])
    assert _RowSpy.calls == []  # kept, not estimated again
    # a fresh copy of the model scores the rows alike, in any order (row-wise)
    fresh = dbm_with(view, likelihood="estimate", z_estimator="exact")
    fresh.set_params(z_estimator=_RowSpy(max_time=6.0))
    np.testing.assert_array_equal(fresh.score_samples(V[::-1]), scores[::-1])


def test_per_row_estimates_report_progress_and_warn_when_slow(monkeypatch, capsys):
    import skboltz.utils._runtime

    monkeypatch.setattr(skboltz.utils._runtime, "SLOW_LOG_Z_SECONDS", 0.0)
    monkeypatch.setattr(skboltz.utils._runtime, "LOG_Z_REPORT_SECONDS", 0.0)
    view = random_dbm(SIZES, seed=4)
    V = all_bits(SIZES[0])[::97]
    dbm = dbm_with(view, likelihood="estimate", z_estimator="exact", verbose=1)
    dbm.set_params(z_estimator=_RowSpy())
    with pytest.warns(SlowEstimateWarning, match=r"each row's hidden sum .* 1 of "
                                                 f"{len(V)} rows .* likelihood='bound'"):
        dbm.score_samples(V)
    lines = [line for line in capsys.readouterr().out.splitlines() if "hidden sum" in line]
    assert len(lines) == len(V) and lines[-1].startswith("[DBM] estimating each row")
    assert f"{len(V)} of {len(V)} rows" in lines[-1]


def test_rows_short_of_their_target_are_summed_up_in_one_warning():
    """Issue 31: each row's AIS warned "AIS stopped at its target with log Z = ..."
    about the row's hidden sum, which read as the model's log Z."""
    view = random_dbm(SIZES, seed=4)
    V = all_bits(SIZES[0])[::97]
    short = AIS(n_chains=16, n_betas=10, target_std_error=1e-9, max_time=1e-3)
    # the model's log Z exact (fitted z_estimator_), each row's sum by the short AIS
    dbm = dbm_with(view, likelihood="estimate", z_estimator="exact")
    dbm.set_params(z_estimator=short)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dbm.score_samples(V)
    said = [str(w.message) for w in caught if issubclass(w.category, LogZAccuracyWarning)]
    assert len(said) == 1, said  # not one per row
    assert said[0].startswith(f"DBM: the hidden sums of {len(V)} of {len(V)} rows")
    assert "log sum = " in said[0] and "above target_std_error=1e-09" in said[0]


def test_an_exact_sum_beyond_enumeration_points_to_the_likelihood_options():
    """Issue 31: the message suggested an internal (DBMView.conditional_hidden_view)."""
    dbm = DBM((25, 25), n_iter=0, likelihood="exact", random_state=0)
    dbm.fit(binary_rows(20, 6))
    for method in (dbm.score_samples, dbm.free_energy):
        with pytest.raises(TooManyStatesError, match=r"likelihood='exact'.* 2\*\*25 states "
                                                     r"per row.* likelihood='estimate'.*"
                                                     r"likelihood='bound'") as raised:
            method(binary_rows(3, 6))
        assert "conditional_hidden_view" not in str(raised.value)


def test_one_int_is_one_hidden_layer_as_for_dbn_classifier():
    # DBM(hidden_layer_sizes=8) was refused where DBNClassifier (and MLPClassifier)
    # take an int: one rule, one constraint, for both.
    from skboltz import DBNClassifier
    from skboltz.utils._sklearn import InvalidParameterError

    X = binary_rows(40, 6)
    one = DBM(hidden_layer_sizes=4, n_iter=2, random_state=0).fit(X)
    listed = DBM(hidden_layer_sizes=(4,), n_iter=2, random_state=0).fit(X)
    for a, b in zip(one.weights_ + one.biases_, listed.weights_ + listed.biases_):
        np.testing.assert_array_equal(a, b)
    assert (DBM._parameter_constraints["hidden_layer_sizes"]
            == DBNClassifier._parameter_constraints["hidden_layer_sizes"])
    with pytest.raises(InvalidParameterError, match="hidden_layer_sizes"):
        DBM(hidden_layer_sizes=0).fit(X)
    for bad in ([], (4, 0), True):
        with pytest.raises((ValueError, InvalidParameterError),
                           match="hidden_layer_sizes must be a positive integer or a "
                                 "non-empty sequence of them|hidden_layer_sizes"):
            DBM(hidden_layer_sizes=bad).fit(X)
