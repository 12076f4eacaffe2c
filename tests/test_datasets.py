"""skboltz.datasets against brute-force enumeration and exact distributions."""

import numpy as np
import pytest
from _oracles import all_states, rbm_visible_log_probabilities, total_variation
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.utils._param_validation import InvalidParameterError

from skboltz import RBM
from skboltz.datasets import make_bars_and_stripes, make_boltzmann_samples
from skboltz.exceptions import TooManyStatesError


# -- bars and stripes ---------------------------------------------------------------
def is_bars(grid):
    """Every row equal: each column is all on or all off."""
    return bool((grid == grid[:1, :]).all())


def is_stripes(grid):
    """Every column equal: each row is all on or all off."""
    return bool((grid == grid[:, :1]).all())


def brute_force_patterns(shape):
    """Every grid of the shape that is bars or stripes, as a set of row tuples."""
    grids = all_states(shape[0] * shape[1])
    return {
        tuple(g) for g in grids if is_bars(g.reshape(shape)) or is_stripes(g.reshape(shape))
    }


@pytest.mark.parametrize("shape", [(1, 1), (1, 4), (4, 1), (2, 3), (3, 2), (3, 3), (3, 4)])
def test_all_patterns_are_exactly_the_bars_and_stripes(shape):
    X, y = make_bars_and_stripes(shape=shape)
    n_rows, n_cols = shape
    assert X.shape == (2**n_rows + 2**n_cols - 2, n_rows * n_cols)
    assert X.dtype == np.float64 and y.dtype == np.int64
    rows = {tuple(x) for x in X}
    assert len(rows) == len(X)  # distinct
    assert rows == brute_force_patterns(shape)  # and nothing missing or extra
    for x, label in zip(X, y):
        grid = x.reshape(shape)
        # y = 1 only for pure stripes; the blank and full grids (both) are bars
        assert label == (0 if is_bars(grid) else 1)
        assert is_stripes(grid) or label == 0


def test_pattern_order_and_pixel_layout():
    X, y = make_bars_and_stripes(shape=(2, 3))
    assert_array_equal(y, [0] * 8 + [1] * 2)
    # bars by column code (column 0 the lowest bit), then stripes by row code
    assert_array_equal(X[1].reshape(2, 3), [[1, 0, 0], [1, 0, 0]])
    assert_array_equal(X[6].reshape(2, 3), [[0, 1, 1], [0, 1, 1]])
    assert_array_equal(X[8].reshape(2, 3), [[1, 1, 1], [0, 0, 0]])


def test_counts_for_larger_grids():
    X, y = make_bars_and_stripes(shape=(5, 7))
    assert len(X) == 2**5 + 2**7 - 2 == len({tuple(x) for x in X})
    assert all(is_bars(x.reshape(5, 7)) or is_stripes(x.reshape(5, 7)) for x in X)
    assert y.sum() == 2**5 - 2


def pattern_frequencies(X, patterns):
    index = {tuple(p): k for k, p in enumerate(patterns)}
    codes = np.array([index[tuple(x)] for x in X])  # KeyError if not a pattern
    return np.bincount(codes, minlength=len(patterns)) / len(X)


def test_draws_are_uniform_over_the_distinct_patterns():
    shape, n_samples = (3, 3), 20000
    patterns, _ = make_bars_and_stripes(shape=shape)
    n_patterns = len(patterns)
    # E[TV] <= 0.5 * sqrt(K / n) for K equally likely outcomes; TV moves by at most
    # 1/n per sample, so its standard deviation is below 0.5 / sqrt(n).
    tolerance = 0.5 * np.sqrt(n_patterns / n_samples) + 4 * 0.5 / np.sqrt(n_samples)
    X, y = make_bars_and_stripes(n_samples, shape=shape, random_state=0)
    frequencies = pattern_frequencies(X, patterns)
    assert 0.5 * np.abs(frequencies - 1 / n_patterns).sum() < tolerance
    assert_array_equal(y, (~np.array([is_bars(x.reshape(shape)) for x in X])).astype(int))
    # Power: MacKay's process (pick an orientation, then each line) gives the blank
    # and full grids twice the weight of the others; that must fail the same test.
    rng = np.random.default_rng(1)
    orientation_first = np.where(
        rng.random((n_samples, 1, 1)) < 0.5,
        np.repeat(rng.integers(0, 2, (n_samples, 1, 3)), 3, axis=1),
        np.repeat(rng.integers(0, 2, (n_samples, 3, 1)), 3, axis=2),
    ).reshape(n_samples, 9)
    frequencies = pattern_frequencies(orientation_first, patterns)
    assert 0.5 * np.abs(frequencies - 1 / n_patterns).sum() > 2 * tolerance


def test_draws_from_a_large_grid_are_valid_patterns():
    X, y = make_bars_and_stripes(500, shape=(62, 40), random_state=0)
    assert X.shape == (500, 62 * 40)
    for x, label in zip(X, y):
        grid = x.reshape(62, 40)
        assert (is_stripes(grid) and not is_bars(grid)) if label else is_bars(grid)
    # 2**62 stripes against 2**40 bars: nearly all draws are stripes
    assert y.mean() > 0.99


def test_bars_and_stripes_reproducible_and_dtype():
    first = make_bars_and_stripes(50, random_state=3)
    assert_array_equal(first[0], make_bars_and_stripes(50, random_state=3)[0])
    assert not np.array_equal(first[0], make_bars_and_stripes(50, random_state=4)[0])
    X, _ = make_bars_and_stripes(shape=(3, 3), dtype=np.float32)
    assert X.dtype == np.float32
    assert_array_equal(X, make_bars_and_stripes(shape=(3, 3))[0])


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"shape": (0, 3)}, ValueError),
        ({"shape": (3,)}, ValueError),
        ({"shape": (3, 3, 3)}, ValueError),
        ({"shape": (2.5, 3)}, ValueError),
        ({"shape": (63, 2)}, ValueError),
        ({"shape": 4}, InvalidParameterError),
        ({"n_samples": 0}, InvalidParameterError),
        ({"n_samples": 2.0}, InvalidParameterError),
        ({"random_state": "seed"}, InvalidParameterError),
        ({"dtype": np.int64}, ValueError),
    ],
)
def test_bars_and_stripes_validation(kwargs, error):
    with pytest.raises(error):
        make_bars_and_stripes(**kwargs)


def test_listing_too_many_patterns_says_to_pass_n_samples():
    with pytest.raises(ValueError, match="pass n_samples"):
        make_bars_and_stripes(shape=(21, 2))
    assert make_bars_and_stripes(3, shape=(21, 2), random_state=0)[0].shape == (3, 42)


# -- samples of a known RBM ---------------------------------------------------------
def true_log_probabilities(model):
    """log p(v) of the returned model by plain enumeration, in ``all_states`` order."""
    return rbm_visible_log_probabilities(
        model.components_.astype(float),
        model.intercept_visible_.astype(float),
        model.intercept_hidden_.astype(float),
    )


def sampling_tolerance(log_p, n_samples):
    """4-sigma bound on the total variation of n exact samples from p."""
    p = np.exp(log_p)
    expected = 0.5 * np.sqrt(p * (1 - p) / n_samples).sum()  # >= E[TV] by Jensen
    return expected + 4 * 0.5 / np.sqrt(n_samples)


def test_samples_follow_the_exact_distribution_of_the_model():
    n_samples = 20000
    X, model = make_boltzmann_samples(n_samples, n_visible=6, n_hidden=4, coupling_scale=1.5,
                                      return_model=True, random_state=1)
    assert X.shape == (n_samples, 6) and set(np.unique(X)) <= {0.0, 1.0}
    log_p = true_log_probabilities(model)
    tolerance = sampling_tolerance(log_p, n_samples)
    assert total_variation(X, log_p) < tolerance
    # Power: samples of another model, and samples with the same single-unit rates
    # but no correlations (each column shuffled on its own), both fail (TV 0.057
    # against a tolerance of 0.026 for the second).
    other = make_boltzmann_samples(n_samples, n_visible=6, n_hidden=4, coupling_scale=1.5,
                                   random_state=0)
    assert total_variation(other, log_p) > 2 * tolerance
    rng = np.random.default_rng(0)
    independent = np.column_stack([rng.permutation(column) for column in X.T])
    assert total_variation(independent, log_p) > 1.5 * tolerance


def test_returned_model_scores_the_true_distribution():
    _, model = make_boltzmann_samples(50, n_visible=5, n_hidden=7, return_model=True,
                                      random_state=2)
    assert isinstance(model, RBM)
    assert model.n_iter_ == 0 and model.n_features_in_ == 5
    assert model.components_.shape == (7, 5)
    V = all_states(5)
    log_p = model.score_samples(V)
    assert_allclose(np.exp(log_p).sum(), 1.0, rtol=1e-12)
    assert_allclose(log_p, true_log_probabilities(model), atol=1e-10)
    assert model.estimate_log_partition().method == "exact"
    assert model.sample(4, random_state=0).shape == (4, 5)


def test_parameter_scales():
    _, model = make_boltzmann_samples(1, n_visible=20, n_hidden=60, coupling_scale=0.3,
                                      bias_scale=2.0, return_model=True, random_state=0)
    assert np.std(model.components_) == pytest.approx(0.3, rel=0.1)
    biases = np.concatenate([model.intercept_visible_, model.intercept_hidden_])
    assert np.std(biases) == pytest.approx(2.0, rel=0.25)
    _, flat = make_boltzmann_samples(1, coupling_scale=0.0, bias_scale=0.0,
                                     return_model=True, random_state=0)
    assert not flat.components_.any() and not flat.intercept_visible_.any()


def test_independent_units_when_uncoupled():
    # coupling_scale=0: p(v) is a product of sigmoid(b_i), checked without enumeration
    X, model = make_boltzmann_samples(20000, n_visible=4, coupling_scale=0.0, bias_scale=1.0,
                                      return_model=True, random_state=5)
    rates = 1 / (1 + np.exp(-model.intercept_visible_))
    assert_allclose(X.mean(axis=0), rates, atol=4 * 0.5 / np.sqrt(len(X)))


def test_boltzmann_samples_reproducible():
    a, model_a = make_boltzmann_samples(30, return_model=True, random_state=7)
    b, model_b = make_boltzmann_samples(30, return_model=True, random_state=7)
    assert_array_equal(a, b)
    assert_array_equal(model_a.components_, model_b.components_)
    assert not np.array_equal(a, make_boltzmann_samples(30, random_state=8))
    # the parameters are drawn before the samples: n_samples does not change the model
    _, model_c = make_boltzmann_samples(300, return_model=True, random_state=7)
    assert_array_equal(model_a.components_, model_c.components_)
    assert_array_equal(model_a.intercept_hidden_, model_c.intercept_hidden_)


def test_float32_samples_and_model():
    X, model = make_boltzmann_samples(4000, n_visible=5, n_hidden=3, return_model=True,
                                      random_state=0, dtype=np.float32)
    assert X.dtype == np.float32
    assert model.components_.dtype == np.float32
    assert model.intercept_visible_.dtype == np.float32
    assert model.intercept_hidden_.dtype == np.float32
    log_p = true_log_probabilities(model)
    assert total_variation(X, log_p) < sampling_tolerance(log_p, len(X))
    assert_allclose(np.exp(model.score_samples(all_states(5))).sum(), 1.0, rtol=1e-6)


def test_twenty_visible_units_work_and_twenty_one_explain_why():
    X = make_boltzmann_samples(5, n_visible=20, n_hidden=2, random_state=0)
    assert X.shape == (5, 20)
    with pytest.raises(TooManyStatesError, match=r"n_visible <= 20.*RBM\.sample"):
        make_boltzmann_samples(5, n_visible=21)
    assert issubclass(TooManyStatesError, ValueError)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"n_samples": 0}, InvalidParameterError),
        ({"n_visible": 0}, InvalidParameterError),
        ({"n_hidden": 0}, InvalidParameterError),
        ({"coupling_scale": -1.0}, InvalidParameterError),
        ({"bias_scale": -0.1}, InvalidParameterError),
        ({"coupling_scale": np.inf}, ValueError),
        ({"return_model": "yes"}, InvalidParameterError),
        ({"random_state": "seed"}, InvalidParameterError),
        ({"dtype": int}, ValueError),
    ],
)
def test_boltzmann_samples_validation(kwargs, error):
    with pytest.raises(error):
        make_boltzmann_samples(**kwargs)

