"""BoltzmannMachine, BMView and the BM learning strategies against exact answers."""

import numpy as np
import pytest
from scipy.special import logsumexp

import skboltz.estimators._boltzmann as boltzmann_module
import skboltz.models._boltzmann_energy as bm_energy_module
from skboltz import RBM, BoltzmannMachine
from skboltz.models._boltzmann_energy import (
    BMView,
    bm_energy,
    bm_gibbs_sweep,
    bm_linear_response,
    bm_mean_field,
)
from skboltz.utils._energy import binary_states
from skboltz.utils._noise import logistic_noise
from skboltz.exceptions import TooManyStatesError
from skboltz.learning import ExactGradient, Gibbs, MeanFieldGradient
from skboltz.partition import Exact


def random_bm(n_visible, n_hidden, scale=1.0, seed=0, temperature=1.0, mask=None):
    rng = np.random.default_rng(seed)
    n = n_visible + n_hidden
    W = np.triu(rng.normal(0, scale, size=(n, n)), 1)
    W = W + W.T
    if mask is not None:
        W *= mask
    return BMView(W, rng.normal(0, scale, size=n), n_visible, temperature)


def exact_joint(view):
    """All states and their exact probabilities, by brute force."""
    S = binary_states(view.n_units)
    log_p = -bm_energy(S, view.coupling, view.bias) / view.temperature
    return S, np.exp(log_p - logsumexp(log_p))


def exact_visible_marginal(view):
    S, p = exact_joint(view)
    codes = S[:, : view.n_visible] @ (2 ** np.arange(view.n_visible))
    return np.bincount(codes.astype(int), weights=p, minlength=2**view.n_visible)


def codes_of(S):
    return (S @ (2 ** np.arange(S.shape[1]))).astype(int)


def total_variation(samples, p):
    empirical = np.bincount(codes_of(samples), minlength=p.size) / samples.shape[0]
    return 0.5 * np.abs(empirical - p).sum()


def data_log_likelihood(view, X):
    return np.mean(-view.free_energy(X)) - Exact().estimate(view).value


# -- BMView: the model-view protocol -----------------------------------------------------
@pytest.mark.parametrize("n_visible, n_hidden", [(0, 1), (1, 0), (4, 3), (5, 4)])
@pytest.mark.parametrize("temperature", [1.0, 2.5])
def test_split_half_log_z_equals_brute_force(n_visible, n_hidden, temperature):
    view = random_bm(n_visible, n_hidden, temperature=temperature)
    S = binary_states(view.n_units)
    expected = logsumexp(view.log_unnormalized(S))
    assert Exact(chunk_size=2).estimate(view).value == pytest.approx(expected, abs=1e-10)
    assert Exact().estimate(view).value == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("connectivity", ["full", "no_hidden_hidden"])
def test_free_energy_and_hidden_marginals_equal_brute_force(connectivity):
    mask = boltzmann_module.connectivity_mask(connectivity, 4, 3)
    view = random_bm(4, 3, temperature=1.7, mask=mask)
    S, p = exact_joint(view)
    V = binary_states(4)
    log_z = Exact().estimate(view).value
    np.testing.assert_allclose(np.exp(-view.free_energy(V) - log_z),
                               exact_visible_marginal(view), atol=1e-12)
    rows = codes_of(S[:, :4])
    p_v = np.bincount(rows, weights=p)
    expected = np.stack([np.bincount(rows, weights=p * S[:, 4 + j]) for j in range(3)], 1)
    np.testing.assert_allclose(view.hidden_probability(V), expected / p_v[:, None],
                               atol=1e-12)


def test_view_interpolation_and_base_model():
    view = random_bm(3, 2, temperature=2.0)
    rates = np.array([0.2, 0.5, 0.9])
    base = view.base_bias_from_rates(rates)
    np.testing.assert_allclose(base[:3], np.log(rates / (1 - rates)))
    assert np.all(base[3:] == 0)
    S = binary_states(5)
    for beta in (0.0, 0.3, 1.0):
        path = view.interpolate(beta, base)
        expected = (1 - beta) * S @ base + beta * view.log_unnormalized(S)
        np.testing.assert_allclose(path.log_unnormalized(S), expected, atol=1e-12)
    assert view.base_log_partition(base) == pytest.approx(
        Exact().estimate(view.interpolate(0.0, base)).value, abs=1e-12)
    np.testing.assert_allclose(view.coupling_matrix(), view.coupling / 2.0)
    np.testing.assert_allclose(view.bias_vector(), view.bias / 2.0)


# -- the Gibbs sampler ------------------------------------------------------------------
@pytest.mark.parametrize("temperature", [1.0, 2.3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("block", [2, 16])
def test_gibbs_sampler_matches_exact_distribution(temperature, dtype, block, monkeypatch):
    monkeypatch.setattr(bm_energy_module, "SWEEP_BLOCK", block)  # several blocks per sweep
    view = random_bm(3, 3, scale=1.0, seed=1, temperature=temperature).astype(dtype)
    _, p = exact_joint(view.astype(np.float64))
    rng = np.random.default_rng(0)
    n = 20000
    S = np.asfortranarray(rng.integers(0, 2, size=(n, 6)).astype(dtype))
    for _ in range(30):
        S = view.gibbs_step(S, rng)
    assert S.dtype == dtype
    noise_floor = total_variation(binary_states(6)[rng.choice(64, size=n, p=p)], p)
    assert total_variation(S, p) < 2 * noise_floor + 0.005


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_logistic_noise_has_the_logistic_distribution(dtype):
    from scipy.special import expit

    noise = logistic_noise(np.random.default_rng(0), (100, 4000), dtype)
    assert noise.dtype == dtype and noise.shape == (100, 4000)
    assert np.all(np.isfinite(noise) | (noise == -np.inf))
    x = np.array([-4.0, -1.5, -0.3, 0.0, 0.7, 2.0, 5.0])
    cdf = (noise.ravel()[:, None] < x).mean(axis=0)
    # 400000 draws: standard error <= 0.0008; a wrong scale or sign misses by > 0.02.
    np.testing.assert_allclose(cdf, expit(x), atol=0.004)


@pytest.mark.parametrize("block", [2, 16])
def test_clamped_sweep_samples_the_conditional_and_keeps_clamped_units(block, monkeypatch):
    monkeypatch.setattr(bm_energy_module, "SWEEP_BLOCK", block)
    view = random_bm(3, 4, scale=1.0, seed=2, temperature=1.3)
    S_all, p = exact_joint(view)
    v = np.array([1.0, 0.0, 1.0])
    keep = np.all(S_all[:, :3] == v, axis=1)
    conditional = p[keep] / p[keep].sum()
    rng = np.random.default_rng(1)
    S = np.zeros((20000, 7), order="F")
    S[:, :3] = v
    for _ in range(20):
        bm_gibbs_sweep(S, view.coupling, view.bias, rng, view.temperature, units=[3, 4, 5, 6])
    assert np.all(S[:, :3] == v)
    noise_floor = total_variation(binary_states(4)[rng.choice(16, size=20000,
                                                              p=conditional)], conditional)
    assert total_variation(S[:, 3:], conditional) < 2 * noise_floor + 0.005


def test_sample_matches_exact_visible_marginal():
    bm = BoltzmannMachine(n_hidden=2, learning="exact", n_iter=1, random_state=0)
    bm.fit(np.random.default_rng(0).integers(0, 2, size=(20, 3)))
    view = random_bm(3, 2, scale=1.0, seed=3)
    bm.coupling_, bm.bias_ = view.coupling, view.bias
    samples = bm.sample(20000, random_state=0, n_steps=20)
    p = exact_visible_marginal(view)
    rng = np.random.default_rng(0)
    noise_floor = total_variation(binary_states(3)[rng.choice(8, size=20000, p=p)], p)
    assert total_variation(samples, p) < 2 * noise_floor + 0.005


# -- learning ---------------------------------------------------------------------------
@pytest.mark.parametrize("connectivity", ["full", "no_hidden_hidden"])
@pytest.mark.parametrize("temperature", [1.0, 1.7])
def test_exact_gradient_equals_finite_differences(connectivity, temperature):
    n_visible, n_hidden = 3, 2
    mask = boltzmann_module.connectivity_mask(connectivity, n_visible, n_hidden)
    view = random_bm(n_visible, n_hidden, scale=0.7, seed=4, temperature=temperature,
                     mask=mask)
    X = np.random.default_rng(5).integers(0, 2, size=(7, n_visible)).astype(float)
    strategy = ExactGradient()
    state = strategy.init_state(view, X, 7, None)
    difference = strategy.positive_phase(view, X, state, None) - strategy.negative_phase(
        view, X, state, None, 0.0)
    gradient = difference / temperature
    eps = 1e-5
    for i in range(view.n_units):
        for j in range(i, view.n_units):
            if i != j and not mask[i, j]:
                continue
            up, down = nudged_views(view, i, j, eps)
            numeric = (data_log_likelihood(up, X) - data_log_likelihood(down, X)) / (2 * eps)
            assert gradient[i, j] == pytest.approx(numeric, abs=1e-7), (i, j)


def nudged_views(view, i, j, eps):
    """The views with parameter (i, j) moved by +eps and -eps: the bias of unit i when
    i == j, else the symmetric coupling (both triangles), for central differences."""
    views = []
    for sign in (1, -1):
        coupling, bias = view.coupling.copy(), view.bias.copy()
        if i == j:
            bias[i] += sign * eps
        else:
            coupling[i, j] = coupling[j, i] = view.coupling[i, j] + sign * eps
        views.append(BMView(coupling, bias, view.n_visible, view.temperature))
    return views


def correlated_data(n_samples=400, n_features=4, seed=0, strength=0.75):
    rng = np.random.default_rng(seed)
    z = rng.random((n_samples, 1)) < 0.4
    X = np.where(rng.random((n_samples, n_features)) < strength, z, rng.random(
        (n_samples, n_features)) < 0.3)
    return X.astype(float)


def model_moments(view):
    S, p = exact_joint(view)
    moments = S.T @ (S * p[:, None])
    return moments


def data_moments(X):
    return X.T @ X / X.shape[0]


def test_fully_visible_exact_learning_matches_data_moments():
    X = correlated_data()
    bm = BoltzmannMachine(n_hidden=0, learning="exact", batch_size=X.shape[0],
                          learning_rate=1.0, momentum=0.8, weight_decay=0.0,
                          n_iter=400, random_state=0).fit(X)
    np.testing.assert_allclose(model_moments(bm._model_view()), data_moments(X), atol=1e-4)
    assert np.all(np.diff(bm.history_["epoch"]) == 1)


@pytest.mark.parametrize("centering", [True, False])
def test_update_is_the_gradient_step_in_centred_or_plain_coordinates(centering):
    from skboltz.learning._boltzmann import exact_clamped_moments, exact_free_moments

    X = correlated_data(12, 3)
    lr = 0.3
    bm = BoltzmannMachine(n_hidden=2, learning="exact", batch_size=12, learning_rate=lr,
                          momentum=0.0, weight_decay=0.0, centering=centering, code_entropy=0,
                          n_iter=0, random_state=0).fit(X)
    W0, b0 = bm.coupling_.copy(), bm.bias_.copy()
    bm.partial_fit(X)  # one epoch of one minibatch: one update
    view = BMView(W0, b0, 3, 1.0)
    difference = (exact_clamped_moments(view, X)
                  - exact_free_moments(view))
    means = np.diagonal(difference).copy()
    mu = np.r_[X.mean(axis=0), 0.5, 0.5]  # offsets: data rates, hidden 1/2
    if centering:
        # d log p / d(W, c) with b = c - W mu held through c: covariances about mu
        difference -= np.outer(mu, means) + np.outer(means, mu)
    np.fill_diagonal(difference, 0.0)
    expected_bias = means - (difference @ mu if centering else 0.0)
    np.testing.assert_allclose(bm.coupling_, W0 + lr * difference, atol=1e-12)
    np.testing.assert_allclose(bm.bias_, b0 + lr * expected_bias, atol=1e-12)


def test_fully_visible_gibbs_learning_matches_data_moments():
    X = correlated_data()
    # Persistent chains without annealing: annealing's hot sweeps leave the measured
    # samples out of equilibrium (max error 0.08-0.10 here with annealing="auto").
    bm = BoltzmannMachine(n_hidden=0, learning=Gibbs(n_chains=1000, n_steps=1, annealing=None),
                          batch_size=100, learning_rate=0.2, momentum=0.5,
                          weight_decay=0.0, n_iter=40, random_state=0).fit(X)
    error = np.abs(model_moments(bm._model_view()) - data_moments(X)).max()
    # Stochastic: 0.007-0.032 over seeds 0-5 after 40 epochs, ~0.10 after one epoch.
    assert error < 0.05


def test_mean_field_learning_linear_response_beats_naive():
    X = correlated_data(strength=0.3)  # weak correlations, where mean field is accurate
    exact = BoltzmannMachine(n_hidden=0, learning="exact", batch_size=X.shape[0],
                             learning_rate=1.0, momentum=0.8, weight_decay=0.0,
                             n_iter=400, random_state=0).fit(X)
    errors = {}
    for linear_response in (False, True):
        bm = BoltzmannMachine(n_hidden=0, learning=MeanFieldGradient(linear_response=linear_response),
                              batch_size=X.shape[0], learning_rate=0.5, momentum=0.8,
                              weight_decay=0.0, n_iter=400, random_state=0).fit(X)
        errors[linear_response] = np.abs(bm.coupling_ - exact.coupling_).max()
    # naive mean field cannot represent pair correlations, so its couplings run off
    assert errors[True] < 0.03 and errors[False] > 0.3


def test_mean_field_fixed_point_and_linear_response():
    view = random_bm(5, 0, scale=0.2, seed=6)
    J, c = view.coupling_matrix(), view.bias_vector()
    M, converged = bm_mean_field(J, c, np.full((1, 5), 0.5))
    assert converged
    m = M[0]
    np.testing.assert_allclose(m, 1 / (1 + np.exp(-(J @ m + c))), atol=1e-6)
    S, p = exact_joint(view)
    mean = p @ S
    covariance = S.T @ (S * p[:, None]) - np.outer(mean, mean)
    off_diagonal = ~np.eye(5, dtype=bool)
    # pair covariances (the ones learning uses) to second order in the couplings
    np.testing.assert_allclose(bm_linear_response(J, m)[off_diagonal],
                               covariance[off_diagonal], atol=2e-3)


def test_gibbs_phases_match_exact_phases_with_hidden_couplings():
    view = random_bm(3, 3, scale=0.8, seed=7, temperature=1.2)
    X = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0], [1.0, 1.0, 1.0]])
    rng = np.random.default_rng(0)
    exact = ExactGradient()
    exact_state = exact.init_state(view, X, 3, rng)
    # enumerate_hidden=0: the clamped phase samples (the default would enumerate).
    gibbs = Gibbs(n_steps=3000, n_chains=200, annealing=[(3.0, 5)], enumerate_hidden=0)
    gibbs_state = gibbs.init_state(view, X, 3, rng)
    np.testing.assert_allclose(gibbs.positive_phase(view, X, gibbs_state, rng),
                               exact.positive_phase(view, X, exact_state, rng), atol=0.03)
    default = Gibbs(n_steps=1)
    np.testing.assert_allclose(
        default.positive_phase(view, X, default.init_state(view, X, 3, rng), rng),
        exact.positive_phase(view, X, exact_state, rng), rtol=0, atol=1e-12)
    assert not np.allclose(gibbs.positive_phase(view, X, gibbs_state, rng),
                           default.positive_phase(view, X, gibbs_state, rng), atol=1e-6)
    np.testing.assert_allclose(gibbs.negative_phase(view, X, gibbs_state, rng, 0.0),
                               exact.negative_phase(view, X, exact_state, rng, 0.0),
                               atol=0.015)


# -- the estimator ----------------------------------------------------------------------
def test_bipartite_equals_rbm():
    X = correlated_data(60, 5)
    rbm = RBM(n_components=3, n_iter=3, random_state=0).fit(X)
    bm = BoltzmannMachine(n_hidden=3, connectivity="bipartite", learning="exact",
                          n_iter=1, random_state=0).fit(X)
    coupling = np.zeros((8, 8))
    coupling[:5, 5:] = rbm.components_.T
    coupling[5:, :5] = rbm.components_
    bm.coupling_ = coupling
    bm.bias_ = np.concatenate([rbm.intercept_visible_, rbm.intercept_hidden_])
    np.testing.assert_allclose(bm.score_samples(X), rbm.score_samples(X), atol=1e-10)
    np.testing.assert_allclose(bm.transform(X), rbm.transform(X), atol=1e-12)
    assert np.all(bm.coupling_[:5, :5] == 0) and np.all(bm.connectivity_mask_[5:, 5:] == 0)


def test_score_samples_are_exact_log_probabilities():
    X = correlated_data(50, 4)
    bm = BoltzmannMachine(n_hidden=3, learning="exact", temperature=1.5, n_iter=5,
                          random_state=0).fit(X)
    p = np.exp(bm.score_samples(binary_states(4)))
    assert p.sum() == pytest.approx(1.0, abs=1e-10)
    np.testing.assert_allclose(p, exact_visible_marginal(bm._model_view()), atol=1e-12)


def test_many_coupled_hidden_units_use_the_estimator_per_row(monkeypatch):
    X = correlated_data(30, 3)
    bm = BoltzmannMachine(n_hidden=3, learning="exact", n_iter=3, random_state=0).fit(X)
    exact_scores, exact_hidden = bm.score_samples(X), bm.transform(X)
    monkeypatch.setattr(bm_energy_module, "MAX_ENUMERATED_HIDDEN", 1)
    np.testing.assert_allclose(bm.score_samples(X), exact_scores, atol=1e-10)
    # transform falls back to mean field: close, not equal, for these weak couplings
    mean_field = bm.transform(X)
    assert 0 < np.abs(mean_field - exact_hidden).max() < 0.02


@pytest.mark.parametrize("learning", ["exact", "gibbs", "mean_field"])
def test_coupling_is_symmetric_and_masked(learning):
    X = correlated_data(40, 4)
    mask = np.zeros((6, 6), dtype=bool)
    mask[0, 1] = mask[1, 0] = mask[4, 5] = mask[5, 4] = True
    mask[2, 4] = mask[4, 2] = mask[3, 5] = mask[5, 3] = True
    bm = BoltzmannMachine(n_hidden=2, connectivity=mask, learning=learning, n_iter=3,
                          random_state=0).fit(X.astype(np.float32))
    assert bm.coupling_.dtype == np.float32
    assert np.array_equal(bm.coupling_, bm.coupling_.T)
    assert np.all(bm.coupling_[~mask] == 0)
    assert np.all(bm.coupling_[mask] != 0)


@pytest.mark.parametrize(
    "entry, message",
    [(0.5, "0/1 values"), (np.nan, "0/1 values"), ("yes", "0/1 values"), (2, "0/1 values")],
    ids=["half", "nan", "string", "two"],
)
def test_connectivity_mask_refuses_entries_that_are_not_boolean(entry, message):
    # np.array(mask, dtype=bool) turned each of these into True (full connectivity).
    X = correlated_data(20, 4)
    mask = np.zeros((5, 5), dtype=object if isinstance(entry, str) else float)
    mask[0, 4] = mask[4, 0] = entry
    with pytest.raises(ValueError, match=message):
        BoltzmannMachine(n_hidden=1, connectivity=mask).fit(X)


def test_connectivity_mask_refuses_a_coupled_diagonal_and_takes_0_1_values():
    X = correlated_data(20, 4)
    mask = np.ones((5, 5), dtype=bool)
    with pytest.raises(ValueError, match="diagonal.*unit.*0, 1, 2, 3, 4"):
        BoltzmannMachine(n_hidden=1, connectivity=mask).fit(X)
    np.fill_diagonal(mask, False)
    as_ints = BoltzmannMachine(n_hidden=1, connectivity=mask.astype(int), n_iter=1,
                               random_state=0).fit(X)
    assert np.array_equal(as_ints.connectivity_mask_, mask)


def test_bad_connectivity_and_too_many_states():
    X = correlated_data(20, 4)
    with pytest.raises(ValueError, match="shape"):
        BoltzmannMachine(n_hidden=1, connectivity=np.ones((4, 4), bool)).fit(X)
    asymmetric = np.triu(np.ones((5, 5), bool), k=1)
    with pytest.raises(ValueError, match="symmetric"):
        BoltzmannMachine(n_hidden=1, connectivity=asymmetric).fit(X)
    with pytest.raises(TooManyStatesError, match="learning='gibbs'.*'mean_field'"):
        BoltzmannMachine(n_hidden=3, learning=ExactGradient(max_states=2**6)).fit(X)
    with pytest.raises(ValueError, match="annealing"):
        BoltzmannMachine(learning=Gibbs(annealing=[(0.0, 2)])).fit(X)


def test_z_estimator_auto_is_chosen_by_size_only():
    """One yardstick: exact when cheap, else AIS, whatever the learning method; the
    seed's mean-field pairing is asked for by name."""
    X = correlated_data(20, 3)
    for learning in ("exact", ExactGradient(), "gibbs", "mean_field"):
        bm = BoltzmannMachine(n_hidden=1, learning=learning, n_iter=1).fit(X)
        assert bm.z_estimator_.name == "exact"
    X = correlated_data(20, 18)
    for learning in ("gibbs", "mean_field"):
        bm = BoltzmannMachine(n_hidden=3, learning=learning, n_iter=1).fit(X)
        assert bm.z_estimator_.name == "ais"
    bm = BoltzmannMachine(n_hidden=3, learning="mean_field", z_estimator="mean_field",
                          n_iter=1).fit(X)
    assert bm.z_estimator_.name == "mean_field"


def test_partial_fit_continues_fit():
    X = correlated_data(40, 4)
    a = BoltzmannMachine(n_hidden=2, learning="gibbs", n_iter=3, random_state=0).fit(X)
    b = BoltzmannMachine(n_hidden=2, learning="gibbs", n_iter=3, random_state=0)
    for _ in range(3):
        b.partial_fit(X)
    assert b.n_iter_ == 3
    np.testing.assert_allclose(a.coupling_, b.coupling_)
    np.testing.assert_allclose(a.bias_, b.bias_)


def test_sweep_with_scattered_free_units_matches_the_conditional(monkeypatch):
    monkeypatch.setattr(bm_energy_module, "SWEEP_BLOCK", 2)
    view = random_bm(2, 4, scale=1.0, seed=8)
    S_all, p = exact_joint(view)
    clamped = np.array([0, 2, 4])  # units 1, 3, 5 are free (three one-unit runs)
    values = np.array([1.0, 1.0, 0.0])
    keep = np.all(S_all[:, clamped] == values, axis=1)
    conditional = p[keep] / p[keep].sum()
    rng = np.random.default_rng(2)
    S = np.zeros((20000, 6))  # C-ordered: exercises the transposing path
    S[:, clamped] = values
    for _ in range(20):
        bm_gibbs_sweep(S, view.coupling, view.bias, rng, units=[5, 1, 3])
    assert np.all(S[:, clamped] == values)
    noise_floor = total_variation(binary_states(3)[rng.choice(8, size=20000,
                                                              p=conditional)], conditional)
    assert total_variation(S[:, [1, 3, 5]], conditional) < 2 * noise_floor + 0.005


def encoder_mask(n_group, n_hidden, hidden_coupled=True):
    n = 2 * n_group + n_hidden
    mask = np.ones((n, n), dtype=bool)
    mask[:n_group, n_group : 2 * n_group] = mask[n_group : 2 * n_group, :n_group] = False
    if not hidden_coupled:
        mask[2 * n_group :, 2 * n_group :] = False
    np.fill_diagonal(mask, False)
    return mask


@pytest.mark.parametrize(
    "n_visible, n_hidden, connectivity, conditioned, components",
    [
        (4, 3, "full", 0, [7]),
        (4, 3, "no_hidden_hidden", 4, [1, 1, 1]),
        (4, 3, "bipartite", 3, [1, 1, 1, 1]),
        (5, 0, "full", 5, []),
        (0, 4, "full", 4, []),
        (6, 2, encoder_mask(3, 2), 2, [3, 3]),
        (6, 2, encoder_mask(3, 2, hidden_coupled=False), 2, [3, 3]),
    ],
)
def test_exact_moments_follow_the_cheapest_plan_and_equal_brute_force(
    n_visible, n_hidden, connectivity, conditioned, components
):
    from skboltz.models._boltzmann_energy import bm_enumeration_plan, bm_exact_moments

    mask = boltzmann_module.connectivity_mask(connectivity, n_visible, n_hidden)
    view = random_bm(n_visible, n_hidden, scale=1.0, seed=9, temperature=1.3, mask=mask)
    plan = bm_enumeration_plan(view.coupling != 0, n_visible)
    assert plan[0].size == conditioned
    assert sorted(c.size for c in plan[1]) == sorted(components)
    S, p = exact_joint(view)
    expected = S.T @ (S * p[:, None])
    np.testing.assert_allclose(bm_exact_moments(view.coupling, view.bias, plan, 1.3),
                               expected, atol=1e-13)


# -- the hidden-code entropy bonus and restarts ------------------------------------------
def code_entropy(view, X):
    """H(qbar) with qbar(h) = mean over rows of P(h | v), by brute force."""
    S, p = exact_joint(view)
    n_visible = view.n_visible
    log_w = -bm_energy(S, view.coupling, view.bias) / view.temperature
    qbar = np.zeros(2**view.n_hidden)
    for v in X:
        keep = np.all(S[:, :n_visible] == v, axis=1)
        w = np.exp(log_w[keep] - log_w[keep].max())
        qbar += w / w.sum() / X.shape[0]  # states of S[keep] are in hidden-code order
    return -np.sum(qbar * np.log(qbar))


@pytest.mark.parametrize("temperature", [1.0, 1.7])
def test_code_entropy_gradient_equals_finite_differences(temperature):
    view = random_bm(3, 3, scale=0.8, seed=10, temperature=temperature)
    X = np.random.default_rng(11).integers(0, 2, size=(5, 3)).astype(float)
    gradient, usage = boltzmann_module.code_entropy_gradient(view, X, None, 1.0)
    gradient /= temperature
    assert usage.shape == (8,) and usage.sum() == pytest.approx(1.0)
    eps = 1e-5
    for i in range(view.n_units):
        for j in range(i, view.n_units):
            up, down = nudged_views(view, i, j, eps)
            numeric = (code_entropy(up, X) - code_entropy(down, X)) / (2 * eps)
            assert gradient[i, j] == pytest.approx(numeric, abs=1e-7), (i, j)


def test_code_entropy_usage_is_a_sliding_average_of_the_minibatch_posteriors():
    view = random_bm(3, 2, scale=0.8, seed=12)
    A, B = np.eye(3), np.ones((2, 3))
    _, usage_a = boltzmann_module.code_entropy_gradient(view, A, None, 0.25)
    _, usage_b = boltzmann_module.code_entropy_gradient(view, B, None, 0.25)
    _, usage = boltzmann_module.code_entropy_gradient(view, B, usage_a.copy(), 0.25)
    np.testing.assert_allclose(usage, 0.75 * usage_a + 0.25 * usage_b)


def encoder_424(**params):
    X = np.hstack([np.eye(4), np.eye(4)])
    settings = dict(n_hidden=2, connectivity=encoder_mask(4, 2), learning="exact",
                    learning_rate=3.0, momentum=0.9, batch_size=4, n_iter=400)
    settings.update(params)
    return BoltzmannMachine(**settings), X


def copy_probabilities(bm):
    """p(group 2 = pattern k | group 1 = pattern k) for the 4-2-4 encoder, exactly."""
    V2 = binary_states(4)
    out = []
    for k in range(4):
        rows = np.hstack([np.tile(np.eye(4)[k], (16, 1)), V2])
        log_p = bm.score_samples(rows)
        out.append(np.exp(log_p[2**k] - logsumexp(log_p)))
    return np.array(out)


def test_code_entropy_bonus_gets_the_424_encoder_out_of_a_shared_code():
    # Seed 1 ends with two patterns sharing a hidden code without the bonus.
    plain, X = encoder_424(code_entropy=0, random_state=1)
    plain.fit(X)
    assert np.sum(copy_probabilities(plain) > 0.5) == 2
    assert plain.score(X) < -1.7
    bonus, X = encoder_424(random_state=1)
    bonus.fit(X)
    assert np.all(copy_probabilities(bonus) > 0.9)
    assert bonus.score(X) > -1.45  # the optimum is -log 4 = -1.386
    # the bonus is gone by half of n_iter, so both end on the likelihood's own path
    assert bonus.history_["epoch"][-1] == 400


def test_code_entropy_checks_the_number_of_hidden_units():
    X = correlated_data(20, 3)
    with pytest.raises(ValueError, match="code_entropy=1.0 needs"):
        BoltzmannMachine(n_hidden=13, code_entropy=1.0, n_iter=1).fit(X)
    for code_entropy in ("auto", 0):  # no bonus above 12 hidden units, no error
        BoltzmannMachine(n_hidden=13, code_entropy=code_entropy, n_iter=1).fit(X)


def test_n_init_keeps_the_best_run_and_is_deterministic():
    from skboltz.utils._runtime import make_generator

    bm, X = encoder_424(code_entropy=0, n_init=4, n_iter=200, random_state=3)
    bm.fit(X)
    again = clone_fit(bm, X)
    np.testing.assert_array_equal(bm.coupling_, again.coupling_)
    seeds = make_generator(3).integers(np.iinfo(np.int32).max, size=4)
    runs = [encoder_424(code_entropy=0, n_iter=200, random_state=int(s))[0].fit(X)
            for s in seeds]
    scores = [run.score(X) for run in runs]
    assert len(set(np.round(scores, 6))) > 1  # the runs differ
    best = runs[int(np.argmax(scores))]
    np.testing.assert_array_equal(bm.coupling_, best.coupling_)
    assert bm.score(X) == pytest.approx(max(scores))
    assert bm.n_init == 4 and bm.random_state == 3  # parameters stay the user's
    assert bm.n_iter_ == 200 and len(bm.history_["epoch"]) == 200


def clone_fit(estimator, X):
    from sklearn.base import clone

    return clone(estimator).fit(X)


def test_partial_fit_trains_a_single_run_whatever_n_init():
    X = correlated_data(40, 4)
    a = BoltzmannMachine(n_hidden=2, n_iter=1, random_state=0).partial_fit(X)
    b = BoltzmannMachine(n_hidden=2, n_iter=1, n_init=3, random_state=0).partial_fit(X)
    np.testing.assert_array_equal(a.coupling_, b.coupling_)


def test_mean_field_free_phase_from_the_data_solves_the_424_encoder():
    from skboltz.learning import MeanFieldGradient

    X = np.hstack([np.eye(4), np.eye(4)])
    runs = {}
    for free_phase in ("data", "fixed_point"):
        runs[free_phase], _ = encoder_424(
            learning=MeanFieldGradient(free_phase=free_phase), learning_rate=1.5,
            n_iter=700, random_state=0)
        runs[free_phase].fit(X)
    assert np.all(copy_probabilities(runs["data"]) > 0.5)
    # one mean-field mode: learning stalls where its statistics match the data's
    assert runs["fixed_point"].score(X) < -3.0


def test_gibbs_auto_annealing_is_relative_to_the_temperature():
    view = random_bm(3, 2, temperature=2.0)
    X = np.ones((4, 3))
    state = Gibbs().init_state(view, X, 4, np.random.default_rng(0))
    assert state["schedule"] == [(8.0, 1), (4.0, 1), (3.0, 1)]
    assert Gibbs(annealing=None).init_state(view, X, 4, np.random.default_rng(0))[
        "schedule"] == []


@pytest.mark.parametrize("learning, step", [("mean_field", 1.0), ("gibbs", 0.5),
                                            ("exact", 0.5)])
def test_auto_learning_rate_doubles_the_step_of_mean_field_learning_only(learning, step):
    # Mean-field steps follow the likelihood's gradient at a fraction of its length:
    # "auto" gives them 1.0 (the 8-3-8 encoder at defaults: 16 -> 20 of 20 seeds),
    # every other strategy the 0.5 it had.
    X = correlated_data(n_samples=40, n_features=5)
    settings = dict(n_hidden=2, learning=learning, n_iter=3, random_state=0)
    auto = BoltzmannMachine(**settings).fit(X)
    fixed = BoltzmannMachine(**settings, learning_rate=step).fit(X)
    other = BoltzmannMachine(**settings, learning_rate=1.5 - step).fit(X)
    np.testing.assert_array_equal(auto.coupling_, fixed.coupling_)
    assert not np.array_equal(auto.coupling_, other.coupling_)
    assert BoltzmannMachine().learning_rate == "auto"
