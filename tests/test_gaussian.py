"""GaussianRBM against exact answers, and its behaviour as a scikit-learn estimator."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _oracles import (
    all_states,
    grbm_exact_samples,
    grbm_hidden_probabilities,
    grbm_log_density,
    grbm_log_partition,
    grbm_marginal_cdf,
    grbm_negative_energy,
    random_grbm,
    state_index,
)
from numpy.testing import assert_allclose, assert_array_equal
from scipy import integrate
from scipy.special import logsumexp
from scipy.stats import kstest
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import skboltz.utils._runtime
from skboltz import DBN, RBM, BoltzmannClassifier, GaussianRBM
from skboltz.models._gaussian_rbm_energy import AugmentedGaussianRBM
from skboltz.utils._noise import Noise
from skboltz.utils._runtime import make_generator
from skboltz.exceptions import DataRangeWarning, DataScaleWarning, TrainingDivergedError
from skboltz.learning import (
    CD,
    PCD,
    ExactGradient,
    ParallelTempering,
    RBMLearningStrategy,
    TAPGradient,
)
from skboltz.partition import AIS, Exact, MeanField, VisitedStates
from skboltz.views import GaussianRBMView, ModelView


def grbm_with_parameters(weights, visible_bias, hidden_bias, variance, **params):
    """A GaussianRBM fitted on dummy data, then given the parameters by hand."""
    n_hidden, n_visible = weights.shape
    rng = np.random.default_rng(0)
    params.setdefault("whiten", False)  # the parameters are those of the rows' model
    model = GaussianRBM(n_components=n_hidden, n_iter=1, random_state=0, **params)
    model.fit(rng.normal(size=(20, n_visible)))
    model.components_ = np.array(weights)
    model.intercept_visible_ = np.array(visible_bias)
    model.intercept_hidden_ = np.array(hidden_bias)
    model.variance_ = np.array(variance)
    return model


def training_form(weights, visible_bias, hidden_bias, variance):
    return AugmentedGaussianRBM.from_view(
        GaussianRBMView(weights, visible_bias, hidden_bias, variance)
    )


def exact_model_statistics(weights, visible_bias, hidden_bias, variance):
    """Mean statistics of AugmentedGaussianRBM.statistics under the model, exactly.

    An enumeration of the hidden states with the Gaussian moments of v given h:
    E[v | h] = m(h), E[(v - b)^2 | h] = s + (m - b)^2.
    """
    H = all_states(weights.shape[0])
    p = grbm_hidden_probabilities(weights, visible_bias, hidden_bias, variance)
    M = visible_bias + H @ weights
    H1 = np.hstack([H, np.ones((len(H), 1))])
    M1 = np.hstack([M, np.ones((len(H), 1))])
    out = np.zeros((weights.shape[0] + 2, weights.shape[1] + 1))
    out[1:] = (H1 * p[:, None]).T @ M1
    out[0, :-1] = p @ (((variance + (M - visible_bias) ** 2) / 2 - M * (H @ weights))
                       / variance)
    return out


def mean_field_model_statistics(weights, visible_bias, hidden_bias, variance):
    """Exact expectation of the ``negative_visible="mean"`` statistics at equilibrium.

    Each hidden state h (weight p(h)) gives the visible mean m = b + W^T h and the
    hidden probabilities q = P(h = 1 | m): statistics q m^T, q and m, and the
    log-variance row [E[(v - b)^2 | h] / 2 - m (W^T q)] / s with
    E[(v - b)^2 | h] = s + (m - b)^2.
    """
    H = all_states(weights.shape[0])
    p = grbm_hidden_probabilities(weights, visible_bias, hidden_bias, variance)
    M = visible_bias + H @ weights
    Q = 1 / (1 + np.exp(-((M / variance) @ weights.T + hidden_bias)))
    Q1 = np.hstack([Q, np.ones((len(H), 1))])
    M1 = np.hstack([M, np.ones((len(H), 1))])
    out = np.zeros((weights.shape[0] + 2, weights.shape[1] + 1))
    out[1:] = (Q1 * p[:, None]).T @ M1
    out[0, :-1] = p @ (((variance + (M - visible_bias) ** 2) / 2 - M * (Q @ weights))
                       / variance)
    return out


@pytest.fixture(scope="module")
def wine():
    return StandardScaler().fit_transform(load_wine().data)


# -- exact answers ------------------------------------------------------------------
def test_log_density_integrates_to_one_in_one_dimension():
    params = random_grbm(1, 3, 1.2, seed=1)
    model = grbm_with_parameters(*params)
    total, error = integrate.quad(
        lambda v: float(np.exp(model.score_samples([[v]])[0])), -15, 15, limit=200
    )
    assert error < 1e-8
    assert total == pytest.approx(1.0, abs=1e-8)


def test_log_density_integrates_to_one_in_two_dimensions():
    params = random_grbm(2, 3, 1.2, seed=2)
    model = grbm_with_parameters(*params)
    grid = np.linspace(-12, 12, 1201)  # Simpson's rule on a fine grid, both axes
    a, b = np.meshgrid(grid, grid, indexing="ij")
    density = np.exp(model.score_samples(np.column_stack([a.ravel(), b.ravel()])))
    total = integrate.simpson(integrate.simpson(density.reshape(a.shape), x=grid), x=grid)
    assert total == pytest.approx(1.0, abs=1e-8)
    # a wrong normaliser is far off: the Gaussian integrals' constant left out
    assert abs(total * (2 * np.pi) * np.sqrt(np.prod(params[3])) - 1) > 0.1


@pytest.mark.parametrize("n_visible, n_hidden", [(5, 3), (3, 6), (4, 4), (1, 1)])
@pytest.mark.parametrize("scale", [0.3, 1.5])
def test_log_density_matches_direct_sum_over_hidden_states(n_visible, n_hidden, scale):
    params = random_grbm(n_visible, n_hidden, scale, seed=10 * n_visible + n_hidden)
    model = grbm_with_parameters(*params)
    V = np.random.default_rng(1).normal(size=(50, n_visible)) * 2
    assert_allclose(model.score_samples(V), grbm_log_density(V, *params), atol=1e-9)
    assert_allclose(model.estimate_log_partition().value, grbm_log_partition(*params),
                    atol=1e-9)
    H = all_states(n_hidden)
    free_energy = -logsumexp(grbm_negative_energy(V, H, *params), axis=1)
    assert_allclose(model.free_energy(V), free_energy, atol=1e-9)
    assert model.z_estimator_.name == "exact"


def test_densities_are_not_clipped_like_probabilities():
    # A narrow density exceeds 1 (log density > 0), and real values outside [0, 1]
    # are scored as they are, with no warning.
    model = grbm_with_parameters(np.zeros((1, 1)), [3.0], [0.0], [0.01])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log_density = model.score_samples([[3.0], [2.9]])
    expected = -0.5 * np.log(2 * np.pi * 0.01) - np.array([0.0, 0.5])
    assert_allclose(log_density, expected, atol=1e-12)
    assert log_density[0] > 0


def test_view_energies_and_conditionals_match_the_energy_function():
    params = random_grbm(4, 3, 1.0, seed=2)
    view = GaussianRBMView(*params)
    assert isinstance(view, ModelView)
    rng = np.random.default_rng(0)
    V = rng.normal(size=(6, 4))
    H = (rng.random((6, 3)) < 0.5).astype(float)
    joint = grbm_negative_energy(V, H, *params)
    assert_allclose(view.energy(V, H), -np.diag(joint), atol=1e-12)
    # P(h_j = 1 | v) is the ratio of the joint weights with h_j on and off
    for j in range(3):
        on, off = H.copy(), H.copy()
        on[:, j], off[:, j] = 1, 0
        logit = np.diag(grbm_negative_energy(V, on, *params)) - np.diag(
            grbm_negative_energy(V, off, *params))
        assert_allclose(view.hidden_probability(V)[:, j], 1 / (1 + np.exp(-logit)))
    # p*(h) integrates the joint over v: compare with the oracle's p(h)
    log_h = view.log_unnormalized(all_states(3))
    assert_allclose(np.exp(log_h - logsumexp(log_h)), grbm_hidden_probabilities(*params))
    assert_allclose(logsumexp(log_h), grbm_log_partition(*params))


@pytest.mark.parametrize("seed", range(4))
def test_ais_covers_the_exact_log_partition(seed):
    params = random_grbm(6, 8, 1.0, seed=100 + seed)
    view = GaussianRBMView(*params)
    exact = grbm_log_partition(*params)
    rates = view.hidden_probability(np.random.default_rng(seed).normal(size=(200, 6)))
    estimate = AIS(n_chains=100, n_betas=1000).estimate(
        view, rng=seed, data_rates=rates.mean(axis=0)
    )
    assert abs(estimate.value - exact) < 3 * estimate.std_error
    assert estimate.std_error < 0.05


def test_ais_on_a_trained_model_and_visited_states_bound(wine):
    model = GaussianRBM(n_components=10, n_iter=20, random_state=0).fit(wine)
    exact = model.estimate_log_partition("exact")
    estimate = model.estimate_log_partition(AIS(n_chains=100, n_betas=2000))
    assert abs(estimate.value - exact.value) < 3 * estimate.std_error
    bound = model.estimate_log_partition(VisitedStates(n_chains=20, n_steps=50))
    assert bound.lower <= exact.value + 1e-9
    auto = GaussianRBM(n_components=21, n_iter=1, random_state=0).fit(wine)
    assert auto.z_estimator_.name == "ais"


def test_exact_gradient_matches_finite_differences():
    params = random_grbm(2, 3, 0.8, seed=5)
    X = np.random.default_rng(1).normal(size=(7, 2))
    model = training_form(*params)
    batch = model.augment(X)
    positive = model.statistics(model.hidden_probability(batch), batch) / len(X)
    direction = positive - exact_model_statistics(*params)
    # The statistics are the update direction in the model's own scale: the W and b
    # gradients times sigma^2; the log-variance gradient as it is.
    gradient = direction.copy()
    gradient[1:, :-1] /= params[3]
    gradient[0, -1] = gradient[-1, -1] = 0

    def log_likelihood(flat):
        m = AugmentedGaussianRBM(flat.reshape(model.params.shape).copy())
        view = m.view()
        return np.mean(-view.free_energy(X)) - Exact().estimate(view).value

    theta = model.params.copy()
    finite_differences = np.zeros_like(theta)
    for index in np.ndindex(theta.shape):
        if index in [(0, 2), (4, 2)]:  # the unused entry and the constant units' corner
            continue
        step = np.zeros_like(theta)
        step[index] = 1e-6
        finite_differences[index] = (
            log_likelihood((theta + step).ravel()) - log_likelihood((theta - step).ravel())
        ) / 2e-6
    assert_allclose(gradient, finite_differences, atol=1e-7)
    assert np.abs(gradient).max() > 0.1  # not a vacuous comparison


# -- samplers leave the exact distribution invariant ------------------------------------
def test_gibbs_step_on_hidden_states_keeps_p_h():
    params = random_grbm(3, 4, 1.5, seed=6)
    view = GaussianRBMView(*params)
    p = grbm_hidden_probabilities(*params)
    _, H = grbm_exact_samples(*params, n_samples=20000, seed=0)
    after = view.gibbs_step(H, np.random.default_rng(1))
    counts = np.bincount(state_index(after), minlength=16) / len(after)
    assert 0.5 * np.abs(counts - p).sum() < 0.02
    assert not np.array_equal(after, H)


def ks_distance(samples, feature, params):
    return kstest(samples[:, feature], lambda x: grbm_marginal_cdf(x, feature, *params)
                  ).statistic


def moment_errors(samples, params):
    """Largest errors of the sample mean and covariance, in standard errors-ish units."""
    weights, visible_bias, _, variance = params
    p = grbm_hidden_probabilities(*params)
    M = visible_bias + all_states(weights.shape[0]) @ weights
    mean = p @ M
    covariance = (M - mean).T @ ((M - mean) * p[:, None]) + np.diag(variance)
    n = len(samples)
    mean_error = np.abs(samples.mean(axis=0) - mean) / np.sqrt(np.diag(covariance) / n)
    cov_error = np.abs(np.cov(samples.T) - covariance).max()
    return mean_error.max(), cov_error


GIBBS_PARAMS = random_grbm(2, 3, 1.5, seed=7)


def test_estimator_gibbs_step_keeps_the_exact_marginal():
    model = grbm_with_parameters(*GIBBS_PARAMS)
    V, _ = grbm_exact_samples(*GIBBS_PARAMS, n_samples=20000, seed=2)
    after = model.gibbs(V, random_state=0)
    for feature in range(2):
        assert ks_distance(after, feature, GIBBS_PARAMS) < 0.015
    mean_error, cov_error = moment_errors(after, GIBBS_PARAMS)
    assert mean_error < 4 and cov_error < 0.05
    # The bound catches the likely mistakes: unit variances in p(v | h), or hidden
    # units that see v instead of v / sigma^2.
    weights, visible_bias, hidden_bias, variance = GIBBS_PARAMS
    rng = np.random.default_rng(3)
    H = model._model_view().sample_hidden(V, rng)
    unit_variance = visible_bias + H @ weights + rng.standard_normal(V.shape)
    unscaled_input = (rng.random(H.shape) < 1 / (1 + np.exp(-(V @ weights.T + hidden_bias))))
    unscaled_input = visible_bias + unscaled_input @ weights + np.sqrt(variance) * (
        rng.standard_normal(V.shape))
    for wrong in (unit_variance, unscaled_input):
        assert max(ks_distance(wrong, feature, GIBBS_PARAMS) for feature in range(2)) > 0.015


def test_gibbs_continues_the_models_own_stream(wine):
    model = GaussianRBM(n_components=3, n_iter=1, random_state=0).fit(wine)
    first, second = model.gibbs(wine[:5]), model.gibbs(wine[:5])
    assert not np.array_equal(first, second)
    assert_array_equal(clone(model).fit(wine).gibbs(wine[:5]), first)


def test_sample_matches_the_exact_marginal():
    model = grbm_with_parameters(*GIBBS_PARAMS)
    samples = model.sample(4000, random_state=0, n_steps=100)
    for feature in range(2):
        assert ks_distance(samples, feature, GIBBS_PARAMS) < 0.035
    assert_array_equal(samples, model.sample(4000, random_state=0, n_steps=100))
    assert moment_errors(samples, GIBBS_PARAMS)[0] < 4


STRATEGIES = [
    strategy(**settings, negative_visible=negative_visible)
    for negative_visible in ("sample", "mean")
    for strategy, settings in [(CD, {}), (CD, {"n_steps": 3}), (PCD, {}),
                               (ParallelTempering, {"n_temperatures": 4})]
]


@pytest.mark.parametrize("strategy", STRATEGIES, ids=repr)
def test_negative_phase_matches_exact_expectation(strategy):
    """Each sampler, fed (or burnt in to) the model distribution, gives its statistics:
    the model's expectations with visible samples, their mean-field counterpart with
    visible means (the log-variance row with the conditional variance added back). The
    two differ by 4 times the tolerance."""
    params = random_grbm(3, 3, 1.2, seed=6)
    exact = (exact_model_statistics if strategy.negative_visible == "sample"
             else mean_field_model_statistics)(*params)
    separation = exact_model_statistics(*params) - mean_field_model_statistics(*params)
    assert np.abs(separation).max() > 0.12
    data, _ = grbm_exact_samples(*params, n_samples=6000, seed=1)
    model = training_form(*params)
    rng = np.random.default_rng(0)
    positive = model.augment(data)
    state = strategy.init_state(model.view(), data, 6000, rng)
    rounds = [strategy._negative_statistics(model, positive, state, rng, 1.0)
              for _ in range(30)]
    estimate = np.mean(rounds[10:], axis=0)
    assert_allclose(estimate, exact, atol=0.03)


@pytest.mark.parametrize("strategy", [PCD(n_steps=2), ParallelTempering(n_temperatures=5)],
                         ids=repr)
def test_persistent_chains_reach_the_exact_distribution(strategy):
    params = random_grbm(2, 3, 2.0, seed=9)  # strongly coupled: several separated modes
    model = training_form(*params)
    rng = np.random.default_rng(2)
    start = np.zeros((50, 2))  # a bad start: the chains must mix away from it
    state = strategy.init_state(model.view(), start, 5000, rng)
    for _ in range(60):
        strategy._negative_statistics(model, model.augment(start), state, rng, 1.0)
    cold = state["chains"][:5000, :-1]
    for feature in range(2):
        assert ks_distance(cold, feature, params) < 0.04
    # the bound is tight enough to catch chains left at their start's mode
    stuck = model.view().sample_visible(np.zeros((5000, 3)), rng)
    assert max(ks_distance(stuck, f, params) for f in range(2)) > 0.1


def test_tempered_draws_interpolate_to_independent_units():
    params = random_grbm(3, 2, 1.0, seed=11)
    model = training_form(*params)
    noise = Noise(np.random.default_rng(0))
    H = model.augment(np.ones((20000, 2)))
    beta = np.zeros((20000, 1))
    V = model.draw_visible(H, noise, model.empty_visible(20000), beta)
    assert_allclose(V[:, :-1].mean(axis=0), params[1], atol=0.03)  # N(b, s) at beta = 0
    assert_allclose(V[:, :-1].var(axis=0), params[3], rtol=0.05)
    assert_array_equal(V[:, -1], 1)
    hidden = model.draw_hidden(V, noise, model.empty_hidden(20000), beta)
    assert_allclose(hidden[:, :-1].mean(axis=0), 0.5, atol=0.02)


# -- whitening (whiten=True): exact answers -------------------------------------------
#: A correlated 2-D whitening: x = mean + L z, correlation 0.95, log |det L| = log 0.6.
WHITENING_MEAN = np.array([0.3, -0.2])
WHITENING_FACTOR = np.array([[1.5, 0.0], [1.2, 0.4]])
WHITENED_PARAMS = random_grbm(2, 3, 1.2, seed=2)


def whitened_grbm_with_parameters(params, mean=WHITENING_MEAN, factor=WHITENING_FACTOR):
    """A GaussianRBM(whiten=True) given the RBM's and the whitening's parameters by hand."""
    model = grbm_with_parameters(*params, whiten=True)
    model.whitening_mean_ = np.array(mean)
    model.whitening_factor_ = np.array(factor)
    return model


def whiten_rows(X, mean=WHITENING_MEAN, factor=WHITENING_FACTOR):
    return np.linalg.solve(factor, (np.asarray(X) - mean).T).T


def test_whitened_log_density_integrates_to_one_over_x():
    model = whitened_grbm_with_parameters(WHITENED_PARAMS)
    grid = np.linspace(-20, 20, 1601)  # the narrowest direction has sd ~0.3: 12 points
    a, b = np.meshgrid(grid, grid, indexing="ij")
    density = np.exp(model.score_samples(np.column_stack([a.ravel(), b.ravel()])))
    total = integrate.simpson(integrate.simpson(density.reshape(a.shape), x=grid), x=grid)
    assert total == pytest.approx(1.0, abs=1e-6)
    # without the Jacobian the total would be 1 / det L = 1.67, with its sign flipped 2.8


def test_whitened_log_density_is_the_density_of_z_minus_the_log_determinant():
    model = whitened_grbm_with_parameters(WHITENED_PARAMS)
    plain = grbm_with_parameters(*WHITENED_PARAMS)
    X = np.random.default_rng(0).normal(size=(50, 2)) * 3
    Z = whiten_rows(X)
    log_det = np.log(0.6)  # det L = 1.5 * 0.4
    assert_allclose(model.score_samples(X), grbm_log_density(Z, *WHITENED_PARAMS) - log_det,
                    atol=1e-9)
    assert_allclose(model.score_samples(X), plain.score_samples(Z) - log_det, atol=1e-9)
    # the model of z: its features, free energy and log Z; reconstructions mapped back
    assert_allclose(model.transform(X), plain.transform(Z), atol=1e-12)
    assert_allclose(model.free_energy(X), plain.free_energy(Z), atol=1e-9)
    assert model.estimate_log_partition().value == pytest.approx(
        grbm_log_partition(*WHITENED_PARAMS), abs=1e-9)
    assert_allclose(model.reconstruct(X),
                    WHITENING_MEAN + plain.reconstruct(Z) @ WHITENING_FACTOR.T, atol=1e-9)


def whitened_moments(params, mean=WHITENING_MEAN, factor=WHITENING_FACTOR):
    """Exact mean and covariance of the whitened model in x: mean + L E[z], L Cov(z) L^T."""
    weights, visible_bias, _, variance = params
    p = grbm_hidden_probabilities(*params)
    M = visible_bias + all_states(weights.shape[0]) @ weights
    mean_z = p @ M
    covariance_z = (M - mean_z).T @ ((M - mean_z) * p[:, None]) + np.diag(variance)
    return mean + factor @ mean_z, factor @ covariance_z @ factor.T


def test_whitened_samples_have_the_models_moments_in_x():
    model = whitened_grbm_with_parameters(WHITENED_PARAMS)
    mean, covariance = whitened_moments(WHITENED_PARAMS)
    samples = model.sample(4000, random_state=0, n_steps=1000)  # 100 mix too slowly here
    n = len(samples)
    assert np.all(np.abs(samples.mean(axis=0) - mean) < 4 * np.sqrt(np.diag(covariance) / n))
    assert_allclose(np.cov(samples.T), covariance, atol=0.15, rtol=0.05)
    # the z-space covariance (no mapping back) is far off: correlation 0.95 in x
    assert np.abs(covariance - whitened_moments(WHITENED_PARAMS, 0, np.eye(2))[1]).max() > 1
    # a Gibbs step from exact draws of x keeps their distribution
    Z, _ = grbm_exact_samples(*WHITENED_PARAMS, n_samples=20000, seed=2)
    after = model.gibbs(WHITENING_MEAN + Z @ WHITENING_FACTOR.T, random_state=0)
    assert_allclose(np.cov(after.T), covariance, atol=0.1, rtol=0.03)
    assert_allclose(after.mean(axis=0), mean, atol=0.05)


def brute_force_whitening_covariance(X, n_folds=5, ridge=1e-6):
    """The whitening's covariance by its definition: (1 - a) S + (a + ridge) m I with
    a the shrinkage of the best 5-fold held-out log density (folds: row i in fold
    i mod 5), each fold's Gaussian scored with scipy."""
    from scipy.stats import multivariate_normal

    from skboltz.estimators._gaussian_rbm import SHRINKAGE_GRID

    d = X.shape[1]

    def shrunk(rows, a):
        S = np.cov(rows.T, bias=True)
        return (1 - a) * S + (a + ridge) * np.trace(S) / d * np.eye(d)

    fold = np.arange(len(X)) % n_folds
    totals = [sum(multivariate_normal(X[fold != k].mean(axis=0), shrunk(X[fold != k], a))
                  .logpdf(X[fold == k]).sum() for k in range(n_folds))
              for a in SHRINKAGE_GRID]
    return shrunk(X, SHRINKAGE_GRID[int(np.argmax(totals))])


def test_whiten_fits_the_model_of_the_whitened_rows(wine):
    # The covariance's shrinkage is the one of the best cross-validated likelihood.
    model = GaussianRBM(n_components=4, n_iter=3, whiten=True, random_state=0).fit(wine)
    factor = model.whitening_factor_
    assert_array_equal(factor, np.tril(factor))
    assert_allclose(factor @ factor.T, brute_force_whitening_covariance(wine), atol=1e-12)
    assert_allclose(model.whitening_mean_, wine.mean(axis=0), atol=1e-12)
    Z = whiten_rows(wine, model.whitening_mean_, factor)
    plain = grbm_with_parameters(model.components_, model.intercept_visible_,
                                 model.intercept_hidden_, model.variance_)
    log_det = np.log(np.diag(factor)).sum()
    assert_allclose(model.score_samples(wine), plain.score_samples(Z) - log_det, atol=1e-8)
    assert_allclose(model.transform(wine), plain.transform(Z), atol=1e-12)
    assert plain.whitening_factor_ is None and plain.whitening_mean_ is None


@pytest.mark.parametrize("n_components", [16, 64])
def test_a_whitened_fit_starts_with_the_hidden_units_carrying_the_variance(wine,
                                                                         n_components):
    # Whitened rows have unit covariance: the Gaussian of W = 0 fits it exactly, a
    # saddle small weights do not leave. The start puts most of every variance in the
    # hidden units (a fair unit's variance is 1/4): the model's variances still sum to 1.
    start = GaussianRBM(n_components=n_components, n_iter=0, whiten=True,
                        random_state=0).fit(wine)
    share = min(0.9, n_components / (n_components + 4))
    assert_allclose(start.variance_, 1 - share)
    assert abs(start.components_.std() / np.sqrt(4 * share / n_components) - 1) < 0.15
    plain = GaussianRBM(n_components=n_components, n_iter=0, whiten=False,
                        random_state=0).fit(wine)
    assert_allclose(plain.variance_, 1.0)
    assert np.abs(plain.components_).max() < 0.05
    fixed = clone(start).set_params(learn_variance=False).fit(wine)  # variances stay 1
    assert_allclose(fixed.variance_, 1.0)
    assert np.abs(fixed.components_).max() < 0.05


def test_whitening_shrinks_by_the_held_out_likelihood_not_ledoit_wolf():
    # Breast cancer's near-linear relations: Ledoit-Wolf shrinks them away (its
    # Gaussian lost 4.5 nats per held-out row); the held-out likelihood keeps them.
    from sklearn.covariance import LedoitWolf
    from sklearn.datasets import load_breast_cancer

    X = StandardScaler().fit_transform(load_breast_cancer().data)
    model = GaussianRBM(n_components=2, n_iter=1, whiten=True, random_state=0).fit(X)
    factor = model.whitening_factor_
    assert_allclose(factor @ factor.T, brute_force_whitening_covariance(X), atol=1e-10)
    empirical = np.cov(X.T, bias=True)
    shrunk = LedoitWolf().fit(X).covariance_
    assert (np.abs(factor @ factor.T - empirical).max()
            < 0.1 * np.abs(shrunk - empirical).max())


def correlated_and_independent_rows(n_rows=300, seed=0):
    rng = np.random.default_rng(seed)
    independent = rng.normal(size=(n_rows, 4))
    shared = rng.normal(size=(n_rows, 1))
    correlated = shared + 0.3 * rng.normal(size=(n_rows, 4))  # correlation about 0.9
    return correlated, independent


def test_auto_whitens_correlated_features_and_not_independent_ones():
    correlated, independent = correlated_and_independent_rows()
    params = dict(n_components=2, n_iter=2, random_state=0)
    assert GaussianRBM(**params).whiten == "auto"  # the default
    whitened = GaussianRBM(**params).fit(correlated)
    assert_allclose(whitened.whitening_factor_,
                    GaussianRBM(whiten=True, **params).fit(correlated).whitening_factor_)
    assert GaussianRBM(**params).fit(independent).whitening_factor_ is None
    assert GaussianRBM(whiten=False, **params).fit(correlated).whitening_factor_ is None
    # float32 rows, and streaming: the first call decides, later calls keep it
    streamed = GaussianRBM(**params).partial_fit(correlated.astype(np.float32))
    assert streamed.whitening_factor_.dtype == np.float32
    streamed.partial_fit(np.random.default_rng(1).normal(size=(50, 4)))
    assert streamed.whitening_factor_ is not None
    assert GaussianRBM(**params).fit(correlated[:2]).whitening_factor_ is None  # 2 rows


def test_auto_leaves_rows_with_missing_entries_unwhitened():
    correlated, _ = correlated_and_independent_rows()
    gappy = correlated.copy()
    gappy[::7, 1] = np.nan
    params = dict(n_components=2, n_iter=2, random_state=0)
    model = GaussianRBM(**params).fit(gappy)
    assert model.whitening_factor_ is None
    assert np.isfinite(model.score_samples(gappy)).all()
    assert GaussianRBM().__sklearn_tags__().input_tags.allow_nan
    assert not GaussianRBM(whiten=True).__sklearn_tags__().input_tags.allow_nan
    # fitted on complete rows, it whitens them, and then takes complete rows only
    whitened = GaussianRBM(**params).fit(correlated)
    with pytest.raises(ValueError, match="whiten='auto', which whitened the complete"):
        whitened.score_samples(gappy)


def test_whiten_is_validated():
    with pytest.raises(ValueError, match="whiten"):
        GaussianRBM(whiten="yes").fit(np.random.default_rng(0).normal(size=(10, 2)))


def test_whitening_helps_the_density_of_correlated_features(wine):
    # Wine's features correlate (up to 0.86): the full Gaussian takes that part.
    train, test = wine[::2], wine[1::2]
    plain = GaussianRBM(n_components=4, n_iter=30, whiten=False, random_state=0).fit(train)
    whitened = clone(plain).set_params(whiten=True).fit(train)
    assert whitened.score(test) > plain.score(test) + 0.5


def test_whitened_float32_is_kept(wine):
    X = wine.astype(np.float32)
    m32 = GaussianRBM(n_components=4, n_iter=3, whiten=True, random_state=0).fit(X)
    m64 = GaussianRBM(n_components=4, n_iter=3, whiten=True, random_state=0).fit(wine)
    assert m32.whitening_mean_.dtype == m32.whitening_factor_.dtype == np.float32
    for output in (m32.transform(X), m32.reconstruct(X), m32.gibbs(X[:3]),
                   m32.sample(2, n_steps=2)):
        assert output.dtype == np.float32
    assert abs(m32.score(X) - m64.score(wine)) < 1e-3


def test_whitened_partial_fit_fixes_the_whitening_of_the_first_call(wine):
    params = dict(n_components=4, n_iter=3, whiten=True, random_state=0)
    fitted = GaussianRBM(**params).fit(wine)
    streamed = GaussianRBM(**params)
    for _ in range(3):
        streamed.partial_fit(wine)
    for attribute in ("components_", "variance_", "whitening_factor_", "whitening_mean_"):
        assert_array_equal(getattr(streamed, attribute), getattr(fitted, attribute))
    factor = streamed.whitening_factor_.copy()
    streamed.partial_fit(wine[:40] * 2)  # later calls do not move the whitening
    assert_array_equal(streamed.whitening_factor_, factor)
    copy = pickle.loads(pickle.dumps(streamed))
    assert_array_equal(copy.score_samples(wine), streamed.score_samples(wine))
    with pytest.raises(ValueError, match="fitted with whiten=True"):
        streamed.set_params(whiten=False).partial_fit(wine)
    # a fresh fit without whitening leaves none behind
    assert streamed.fit(wine).whitening_factor_ is None
    assert_allclose(streamed.score_samples(wine),
                    clone(streamed).fit(wine).score_samples(wine))


def test_whitening_needs_three_rows_and_some_variance():
    rows = np.random.default_rng(0).normal(size=(2, 3))
    for n_rows in (1, 2):  # the Ledoit-Wolf covariance of 2 rows has rank 1
        with pytest.raises(ValueError, match=r"at least 3 samples .* got n_samples = "
                           f"{n_rows}"):
            GaussianRBM(whiten=True).partial_fit(rows[:n_rows])
    with pytest.raises(ValueError, match="singular"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        GaussianRBM(whiten=True, learn_variance=False).fit(np.ones((5, 3)))
    with pytest.raises(ValueError, match=r"constant feature\(s\) \[0, 1, 2\]"):
        GaussianRBM(whiten=True).fit(np.ones((5, 3)))  # refused before whitening
    model = GaussianRBM(whiten=True)
    with pytest.raises(ValueError):
        model.fit(np.ones((1, 3)))
    assert not hasattr(model, "n_features_in_") and not hasattr(model, "whitening_mean_")


def test_whitened_data_scale_warnings_judge_the_whitened_rows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4)) @ np.array([[1, 0.8, 0, 0], [0, 0.6, 0, 0],
                                             [0, 0, 1, 0], [0, 0, 0, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataScaleWarning)
        GaussianRBM(n_components=2, n_iter=1, whiten=True, random_state=0).fit(X)
    with pytest.warns(DataScaleWarning, match="constant"):
        GaussianRBM(n_components=2, n_iter=0, whiten=True, learn_variance=False,
                    random_state=0).fit(np.column_stack([X, np.ones(40)]))


def test_a_class_with_too_few_rows_to_whiten_is_named():
    X = np.random.default_rng(0).normal(size=(12, 3))
    y = np.array([0] * 10 + [1] * 2)
    clf = BoltzmannClassifier(GaussianRBM(n_components=2, n_iter=1, whiten=True))
    with pytest.raises(ValueError, match=r"The model of class 2/2 \(label 1, 2 rows\) "
                       r"failed: .*at least 3 samples"):
        clf.fit(X, y)


def test_whitening_wide_data_checks_memory_first_and_reports_progress(monkeypatch,
                                                                     capsys):
    # 5 rows of 300 standardised features that share one factor
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5, 1)) * np.ones((1, 300)) + 0.3 * rng.normal(size=(5, 300))
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    # 4 d x d float64 matrices: 2.9 MB for 300 features; say only 1 MB is free
    monkeypatch.setattr(skboltz.utils._runtime, "available_memory", lambda: 2**20)
    with pytest.raises(MemoryError, match="Whitening 300 features .* whiten=False"):
        GaussianRBM(n_components=2, n_iter=1, whiten=True).fit(X)
    monkeypatch.undo()
    model = GaussianRBM(n_components=2, n_iter=1, whiten=True, verbose=1, random_state=0)
    with pytest.warns(DataScaleWarning, match="estimated from 5 rows of 300 features.*"
                      "says nothing about how the input was scaled") as caught:
        model.fit(X)  # standard features: the advice is not StandardScaler
    assert "StandardScaler" not in str(caught[0].message)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("[GaussianRBM] whitening: the covariance of 300 features "
                               "from 5 rows, its shrinkage chosen by 5-fold held-out")
    assert lines[1].startswith("[GaussianRBM] whitening: shrinkage ")
    assert lines[2].startswith("[GaussianRBM] whitening: done in ")


def test_later_partial_fit_calls_check_the_data_scale(wine):
    model = GaussianRBM(n_components=2, random_state=0).partial_fit(wine)
    with pytest.warns(DataScaleWarning, match="root-mean-square distance of .* from the "
                      "training mean"):
        model.partial_fit(30 * wine[:20])  # unscaled rows move the model: say so
    with pytest.warns(DataScaleWarning):
        model.partial_fit(1e-3 * wine[:20])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataScaleWarning)
        for start in range(0, 60, 10):  # standardised minibatches, even single rows
            model.partial_fit(wine[start : start + 10])
            model.partial_fit(wine[start : start + 1])


def test_a_tiny_data_scale_is_named_in_the_error():
    X = 1e-4 * np.random.default_rng(0).normal(size=(50, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataScaleWarning)
        with pytest.raises(TrainingDivergedError, match=r"tiny scale \(largest standard "
                           r"deviation 0.000111\).*StandardScaler.*whiten=True"):
            GaussianRBM(n_components=4, n_iter=2, random_state=0).fit(X)
        # as the error says: whitened, the same rows train
        GaussianRBM(n_components=4, n_iter=2, whiten=True, random_state=0).fit(X)


def huge_rows(dtype=np.float64):
    """Finite rows near the largest float of ``dtype`` (+-1.6e308, +-3e38), and at its
    square root."""
    big = 0.9 * float(np.finfo(dtype).max)
    root = np.sqrt(big)
    return np.array([[big, -big, 0.0], [big, big, big], [-big, 5.0, root],
                     [root, root, -root]], dtype=dtype)


@pytest.mark.parametrize("whiten", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_finite_rows_never_give_nan(dtype, whiten):
    """Rows of +-1e308 (+-3e38 in float32) gave NaN scores, free energies and, whitened,
    transforms: now their values are clipped to the largest magnitude the model's
    arithmetic takes, with a warning."""
    X = np.random.default_rng(0).normal(size=(60, 3)).astype(dtype)
    model = GaussianRBM(n_components=4, n_iter=2, whiten=whiten, random_state=0).fit(X)
    huge = huge_rows(dtype)
    for method in ("score_samples", "free_energy", "transform", "reconstruct"):
        with pytest.warns(DataRangeWarning, match="beyond"):
            result = getattr(model, method)(huge)
        assert np.all(np.isfinite(result)), method
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataRangeWarning)  # ordinary rows: no warning
        model.score_samples(X)
    assert np.all(model.score_samples(huge) < -1e15)


def test_a_classifier_of_gaussian_models_never_gives_nan():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), np.arange(60) % 2
    clf = BoltzmannClassifier(GaussianRBM(n_components=2, n_iter=2, random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataRangeWarning)
        proba = clf.fit(X, y).predict_proba(huge_rows())
    assert np.all(np.isfinite(proba))
    assert_allclose(proba.sum(axis=1), 1)


# -- training ---------------------------------------------------------------------
def test_training_raises_the_likelihood_and_learns_variances(wine):
    start = GaussianRBM(n_components=8, n_iter=0, whiten=False, random_state=0).fit(wine)
    model = GaussianRBM(n_components=8, n_iter=40, whiten=False, random_state=0).fit(wine)
    assert model.score(wine) > start.score(wine) + 1.5
    assert np.all(model.variance_ < 1) and np.all(model.variance_ > 0.05)
    fixed = GaussianRBM(n_components=8, n_iter=5, learn_variance=False,
                        random_state=0).fit(wine)
    assert_array_equal(fixed.variance_, np.ones(13))


def test_float32_is_kept_and_agrees_with_float64(wine):
    m64 = GaussianRBM(n_components=6, n_iter=10, random_state=0).fit(wine)
    m32 = GaussianRBM(n_components=6, n_iter=10, random_state=0).fit(wine.astype(np.float32))
    for attribute in ("components_", "intercept_visible_", "intercept_hidden_", "variance_"):
        assert getattr(m32, attribute).dtype == np.float32
    assert m32.transform(wine.astype(np.float32)).dtype == np.float32
    assert m32.sample(3, n_steps=2).dtype == np.float32
    assert abs(m32.score(wine) - m64.score(wine)) < 0.1
    # the same parameters score the same in either precision
    m32.components_ = m64.components_.astype(np.float32)
    m32.intercept_visible_ = m64.intercept_visible_.astype(np.float32)
    m32.intercept_hidden_ = m64.intercept_hidden_.astype(np.float32)
    m32.variance_ = m64.variance_.astype(np.float32)
    assert_allclose(m32.score_samples(wine.astype(np.float32)), m64.score_samples(wine),
                    atol=1e-3)
    assert_allclose(m32.transform(wine.astype(np.float32)), m64.transform(wine), atol=1e-5)


@pytest.mark.parametrize("average_window", [100, None])
def test_partial_fit_continues_exactly_like_fit(wine, average_window):
    params = dict(n_components=5, n_iter=4, average_window=average_window, random_state=0)
    fitted = GaussianRBM(**params).fit(wine)
    streamed = GaussianRBM(**params)
    for _ in range(4):
        streamed.partial_fit(wine)
    for attribute in ("components_", "intercept_visible_", "intercept_hidden_", "variance_"):
        assert_array_equal(getattr(streamed, attribute), getattr(fitted, attribute))
    assert streamed.n_iter_ == 4


def test_refit_is_reproducible_and_pickle_keeps_scores(wine):
    model = GaussianRBM(n_components=5, n_iter=3, random_state=0)
    first = model.fit(wine).components_.copy()
    model.partial_fit(wine)
    assert_array_equal(model.fit(wine).components_, first)
    copy = pickle.loads(pickle.dumps(model))
    assert_array_equal(copy.score_samples(wine), model.score_samples(wine))
    copy.partial_fit(wine)
    model.partial_fit(wine)
    assert_array_equal(copy.variance_, model.variance_)


def test_sparse_input_trains_like_dense(wine):
    X = wine.copy()
    X[np.abs(X) < 0.5] = 0
    dense = GaussianRBM(n_components=4, n_iter=2, random_state=0).fit(X)
    sparse = GaussianRBM(n_components=4, n_iter=2, random_state=0).fit(sp.csr_matrix(X))
    assert_array_equal(dense.components_, sparse.components_)
    assert_allclose(dense.score_samples(X), sparse.score_samples(sp.csr_matrix(X)))


@pytest.mark.parametrize("learning", ["cd", "pt", PCD(n_steps=2, n_chains=7),
                                      ParallelTempering(n_temperatures=3)])
def test_each_learning_strategy_trains(wine, learning):
    model = GaussianRBM(n_components=6, learning=learning, n_iter=40, whiten=False,
                        random_state=0)
    start = clone(model).set_params(n_iter=0).fit(wine).score(wine)
    assert model.fit(wine).score(wine) > start + 1.0


def test_a_users_row_strategy_trains(wine):
    class PriorSamples(RBMLearningStrategy):
        """Negative rows: one block Gibbs step from exact-ish rows of the data."""

        def negative_phase(self, model, batch, state, rng, progress):
            return model.sample_visible(model.sample_hidden(batch, rng), rng)

    model = GaussianRBM(n_components=4, learning=PriorSamples(), n_iter=10,
                        random_state=0).fit(wine)
    assert np.all(np.isfinite(model.components_))
    assert model.score(wine) > GaussianRBM(n_components=4, n_iter=0).fit(wine).score(wine)


def test_monitoring_and_early_stopping(wine):
    model = GaussianRBM(n_components=4, n_iter=50, validation_fraction=0.2,
                        n_iter_no_change=3, monitor_likelihood=True, random_state=0).fit(wine)
    history = model.history_
    assert model.n_iter_ < 50
    assert len(history["log_likelihood_valid"]) == model.n_iter_
    assert np.isfinite(history["free_energy_gap"]).all()
    assert np.isfinite(history["reconstruction_error_valid"]).all()


def test_grid_search_in_a_pipeline_uses_the_log_density():
    X = load_wine().data
    search = GridSearchCV(
        make_pipeline(StandardScaler(), GaussianRBM(n_iter=20, whiten=False, random_state=0)),
        {"gaussianrbm__n_components": [1, 6]}, cv=KFold(3, shuffle=True, random_state=0),
    ).fit(X)  # (wine's rows are sorted by class: unshuffled folds hold out a class)
    assert search.best_params_["gaussianrbm__n_components"] == 6
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


# -- errors and warnings --------------------------------------------------------------
def test_unscaled_data_warns_with_the_fix():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataScaleWarning)
        GaussianRBM(n_components=2, n_iter=1, random_state=0).fit(X)  # standardised: quiet
    for column, value in ((1, 1000.0), (3, 0.0)):
        bad = X.copy()
        bad[:, column] = bad[:, column] * value
        with pytest.warns(DataScaleWarning, match="StandardScaler") as caught:
            # (a constant column is refused with learned variances)
            GaussianRBM(n_components=2, n_iter=0, learn_variance=value > 0,
                        random_state=0).fit(bad)
        assert f"{column}" in str(caught[0].message)
    with pytest.warns(DataScaleWarning, match="VarianceThreshold"):
        GaussianRBM(n_components=2, n_iter=0, learn_variance=False, random_state=0).fit(
            np.column_stack([X, np.ones(40)]))


def test_variance_collapse_on_a_repeated_point_raises_and_keeps_the_fit(wine):
    model = GaussianRBM(n_components=3, n_iter=3, random_state=0).fit(wine)
    before = (model.components_.copy(), model.variance_.copy(), model.n_iter_)
    repeated = np.repeat(wine[:1], 60, axis=0)
    # fit sees every row: every feature is constant, refused before training
    with pytest.raises(ValueError, match="constant feature"):
        model.set_params(n_iter=200, learning_rate=0.05).fit(repeated)
    assert_array_equal(model.components_, before[0])
    assert_array_equal(model.variance_, before[1])
    assert model.n_iter_ == before[2]
    # a stream of them (partial_fit cannot know the rows to come) collapses later
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataScaleWarning)
        with pytest.raises(TrainingDivergedError, match="collapsed"):
            for _ in range(200):
                before = (model.components_.copy(), model.variance_.copy(), model.n_iter_)
                model.partial_fit(repeated)
    assert_array_equal(model.components_, before[0])
    assert_array_equal(model.variance_, before[1])
    assert model.n_iter_ == before[2]


@pytest.mark.parametrize("whiten", [False, True])
def test_constant_features_are_refused_before_training(whiten):
    """One digit's rows, 10 of whose 64 pixels never change, trained 36-39 epochs
    before the variance of one of them collapsed (TrainingDivergedError)."""
    from sklearn.datasets import load_digits
    from sklearn.feature_selection import VarianceThreshold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_digits(return_X_y=True)
    threes = StandardScaler().fit_transform(X[y == 3])
    model = GaussianRBM(whiten=whiten, random_state=0)
    with pytest.raises(ValueError, match=r"cannot learn the variance of 10 constant "
                       r"feature\(s\) \[0, 23, 24, 31, 32, 39, 40, 47, 48, 56\].*"
                       r"make_pipeline\(VarianceThreshold\(\), StandardScaler\(\), "
                       r"GaussianRBM\(\)\).*learn_variance=False"):
        model.fit(threes)
    assert not hasattr(model, "n_features_in_")  # refused before anything
    # the remedies the message names
    pipeline = make_pipeline(VarianceThreshold(), StandardScaler(),
                             GaussianRBM(n_components=4, n_iter=2, whiten=whiten,
                                         random_state=0))
    assert np.isfinite(pipeline.fit(X[y == 3]).score(X[y == 3]))
    with pytest.warns(DataScaleWarning, match="constant"):
        GaussianRBM(n_components=4, n_iter=2, learn_variance=False, whiten=whiten,
                    random_state=0).fit(threes)
    # a first partial_fit call may be a minibatch whose columns are constant by
    # chance: it warns
    with pytest.warns(DataScaleWarning, match="constant"):
        GaussianRBM(n_components=4, random_state=0).partial_fit(threes[:10])
    # by name, with feature names
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(threes, columns=[f"pixel_{i}" for i in range(64)])
    with pytest.raises(ValueError, match=r"\['pixel_0', 'pixel_23', "):
        GaussianRBM().fit(frame)


def test_divergence_raises_and_keeps_the_fit(wine):
    model = GaussianRBM(n_components=3, n_iter=2, random_state=0).fit(wine)
    before = model.components_.copy()
    with pytest.raises(TrainingDivergedError), np.errstate(all="ignore"):
        model.set_params(learning_rate=1e30).partial_fit(wine)
    assert_array_equal(model.components_, before)


def test_runaway_visible_values_raise_before_parameters_overflow(wine):
    # Far below the overflow guard (1e6), a visible mean 1e4 standard deviations from
    # the data is no model of it: training stops with the standardisation hint.
    model = GaussianRBM(n_components=3, n_iter=2, random_state=0).fit(wine)
    model.components_[0, 0] = 1e4
    before = model.components_.copy()
    with pytest.raises(TrainingDivergedError, match="put visible values 1e\\+04 away"):
        model.set_params(learning_rate=1e-6).partial_fit(wine)
    assert_array_equal(model.components_, before)
    # the hint names the fix that fits the data: standardising unscaled features
    hint = model._divergence_check_class(model).hint
    assert "learning rate" in hint(wine)
    assert "StandardScaler" in hint(wine * np.r_[1e3, np.ones(12)])


@pytest.mark.parametrize("learning", [ExactGradient(), TAPGradient()])
def test_binary_only_strategies_are_refused_before_training(wine, learning):
    model = GaussianRBM(n_components=2, learning=learning)
    with pytest.raises(ValueError, match="needs binary units, but the model has gaussian visible units"):
        model.fit(wine)
    assert not hasattr(model, "components_")
    with pytest.raises(ValueError, match="learning"):
        GaussianRBM(learning="exact").fit(wine)


def test_mean_field_log_z_is_refused(wine):
    with pytest.raises(ValueError, match="z_estimator"):
        GaussianRBM(z_estimator="mean_field").fit(wine)
    with pytest.raises(ValueError, match="binary units"):
        GaussianRBM(n_components=2, z_estimator=MeanField()).fit(wine)
    model = GaussianRBM(n_components=2, n_iter=1).fit(wine)
    with pytest.raises(ValueError, match="binary units"):
        model.estimate_log_partition("tap")


# -- inside other estimators -------------------------------------------------------------
def test_first_layer_of_a_dbn(wine):
    dbn = DBN(hidden_layer_sizes=(12, 4), first_layer=GaussianRBM(n_iter=5, whiten=False),
              rbm=RBM(n_iter=5), random_state=0).fit(wine)
    first, top = dbn.layers_
    assert type(first) is GaussianRBM and type(top) is RBM
    assert first.n_components == 12 and top.n_components == 4
    assert_allclose(dbn.transform(wine), top.transform(first.transform(wine)))
    samples = dbn.sample(5, n_steps=5, random_state=0)
    assert samples.shape == (5, 13) and len(np.unique(samples)) > 2  # real-valued
    means = dbn.sample(5, n_steps=5, random_state=0, down_pass="mean")
    assert_allclose(means, first.intercept_visible_ + (
        dbn.layers_[1].sample(5, random_state=make_generator(0), n_steps=5)) @ first.components_)
    dbn.partial_fit(wine)
    assert dbn.layers_[0].n_iter_ == 6


def test_whitened_first_layer_of_a_dbn_and_in_a_classifier(wine):
    dbn = DBN(hidden_layer_sizes=(12, 4), first_layer=GaussianRBM(n_iter=5, whiten=True),
              rbm=RBM(n_iter=5), random_state=0).fit(wine)
    first, top = dbn.layers_
    assert first.whitening_factor_.shape == (13, 13)
    assert_allclose(dbn.transform(wine), top.transform(first.transform(wine)))
    means = dbn.sample(5, n_steps=5, random_state=0, down_pass="mean")
    H = top.sample(5, random_state=make_generator(0), n_steps=5)
    z_means = first.intercept_visible_ + H @ first.components_
    assert_allclose(means, first.whitening_mean_ + z_means @ first.whitening_factor_.T)
    data = load_wine()
    test = np.random.default_rng(0).random(len(wine)) < 0.3
    clf = BoltzmannClassifier(GaussianRBM(n_components=4, n_iter=30, whiten=True,
                                          random_state=0))
    clf.fit(wine[~test], data.target[~test])
    assert clf.score(wine[test], data.target[test]) > 0.9


def test_inside_a_boltzmann_classifier():
    data = load_wine()
    X = StandardScaler().fit_transform(data.data)
    rng = np.random.default_rng(0)
    test = rng.random(len(X)) < 0.3
    clf = BoltzmannClassifier(GaussianRBM(n_components=4, n_iter=30, random_state=0))
    clf.fit(X[~test], data.target[~test])
    assert clf.score(X[test], data.target[test]) > 0.9
    assert_allclose(clf.predict_proba(X[test]).sum(axis=1), 1)
    assert all(log_z.is_exact for log_z in clf.log_partitions_)


def test_features_feed_a_classifier():
    data = load_wine()
    pipe = make_pipeline(StandardScaler(), GaussianRBM(n_components=16, whiten=False,
                                                       random_state=0),
                         LogisticRegression(max_iter=2000))
    assert pipe.fit(data.data, data.target).score(data.data, data.target) > 0.95


def test_whitening_shrinkage_ledoit_wolf_is_sklearns_estimate():
    # whitening_shrinkage="ledoit_wolf" shrinks by scikit-learn's Ledoit-Wolf estimate
    # (the outlier detector's default model); "likelihood" by another, held-out one
    from sklearn.covariance import ledoit_wolf_shrinkage

    X = StandardScaler().fit_transform(load_breast_cancer().data[:120])
    lw = GaussianRBM(2, n_iter=1, whiten=True, whitening_shrinkage="ledoit_wolf",
                     learn_variance=False, random_state=0).fit(X)
    default = GaussianRBM(2, n_iter=1, whiten=True, learn_variance=False,
                          random_state=0).fit(X)
    expected = ledoit_wolf_shrinkage(X)
    covariance = lw.whitening_factor_ @ lw.whitening_factor_.T
    sample = np.cov(X, rowvar=False, bias=True)
    # (1 - a) S + (a + ridge) m I: its off-diagonal part is (1 - a) S's
    off = ~np.eye(X.shape[1], dtype=bool)
    assert_allclose(covariance[off], (1 - expected) * sample[off], rtol=1e-8, atol=1e-12)
    assert not np.allclose(default.whitening_factor_, lw.whitening_factor_)
