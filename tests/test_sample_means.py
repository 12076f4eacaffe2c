"""sample(..., return_means=True): the last step's conditional means (P(v = 1 | h) for
binary units, what papers display), checked against exact expectations."""

import numpy as np
import pytest
from _oracles import (
    all_states,
    class_rbm_joint_log_weights,
    grbm_hidden_probabilities,
    random_grbm,
    random_rbm,
    rbm_visible_log_probabilities,
)
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp

from skboltz import RBM, BoltzmannMachine, GaussianRBM, RBMClassifier

N_CHAINS = 20000


def rbm_with(weights, visible_bias, hidden_bias):
    X = (np.random.default_rng(0).random((20, weights.shape[1])) < 0.5).astype(float)
    model = RBM(n_components=weights.shape[0], n_iter=1, random_state=0).fit(X)
    model.components_, model.intercept_visible_ = weights, visible_bias
    model.intercept_hidden_ = hidden_bias
    return model


def assert_means_match(sampled, exact):
    # a mean of N_CHAINS numbers in [0, 1]: standard error at most 0.5 / sqrt(N)
    assert np.all(np.abs(sampled.mean(axis=0) - exact) < 5 * 0.5 / np.sqrt(N_CHAINS))


def test_rbm_means_average_to_the_models_visible_means():
    params = random_rbm(5, 3, 1.0, seed=1)
    exact = np.exp(rbm_visible_log_probabilities(*params)) @ all_states(5)
    means = rbm_with(*params).sample(N_CHAINS, random_state=0, n_steps=20,
                                     return_means=True)
    assert means.shape == (N_CHAINS, 5) and 0 < means.min() and means.max() < 1
    assert_means_match(means, exact)


def test_the_states_are_drawn_from_the_means_of_the_same_chains():
    model = rbm_with(*random_rbm(6, 3, 2.0, seed=2))
    states = model.sample(N_CHAINS, random_state=3, n_steps=5)
    means = model.sample(N_CHAINS, random_state=3, n_steps=5, return_means=True)
    assert set(np.unique(states)) <= {0.0, 1.0}
    # each state is a Bernoulli draw of its own mean: the differences average to 0
    # and a unit whose mean is (almost) 0 or 1 takes that value
    assert np.all(np.abs((states - means).mean(axis=0)) < 5 * 0.5 / np.sqrt(N_CHAINS))
    assert_array_equal(states[means < 1e-9], 0.0)
    assert_array_equal(states[means > 1 - 1e-9], 1.0)


def test_boltzmann_machine_means_average_to_the_models_visible_means():
    rng = np.random.default_rng(4)
    n_visible, n_hidden = 4, 2
    n_units = n_visible + n_hidden
    coupling = np.triu(rng.normal(0, 1.0, (n_units, n_units)), 1)
    coupling += coupling.T
    bias = rng.normal(0, 1.0, n_units)
    X = (rng.random((20, n_visible)) < 0.5).astype(float)
    model = BoltzmannMachine(n_hidden=n_hidden, learning="exact", n_iter=1,
                             random_state=0).fit(X)
    model.coupling_, model.bias_ = coupling, bias
    states = all_states(n_units)
    log_p = 0.5 * np.einsum("ni,ij,nj->n", states, coupling, states) + states @ bias
    exact = np.exp(log_p - logsumexp(log_p)) @ states[:, :n_visible]
    means = model.sample(N_CHAINS, random_state=0, n_steps=20, return_means=True)
    assert ((means > 0) & (means < 1)).all()  # probabilities, not states
    assert_means_match(means, exact)


@pytest.mark.parametrize("whiten", [False, True])
def test_gaussian_means_average_to_the_models_visible_means(whiten):
    weights, visible_bias, hidden_bias, variance = random_grbm(3, 2, 1.0, seed=5)
    X = np.random.default_rng(5).normal(size=(40, 3))
    model = GaussianRBM(n_components=2, n_iter=1, whiten=whiten, random_state=0).fit(X)
    model.components_, model.intercept_visible_ = weights, visible_bias
    model.intercept_hidden_, model.variance_ = hidden_bias, variance
    p_hidden = grbm_hidden_probabilities(weights, visible_bias, hidden_bias, variance)
    exact = p_hidden @ (visible_bias + all_states(2) @ weights)  # E[z] = sum_h p(h) m(h)
    if whiten:  # x = mean + L z
        exact = model.whitening_mean_ + model.whitening_factor_ @ exact
    means = model.sample(N_CHAINS, random_state=0, n_steps=20, return_means=True)
    spread = np.sqrt(variance.max()) + np.abs(weights).sum()  # scale of the means
    if whiten:
        spread *= np.abs(model.whitening_factor_).sum(axis=1).max()
    assert np.all(np.abs(means.mean(axis=0) - exact) < 5 * spread / np.sqrt(N_CHAINS))
    if not whiten:  # Var(v) = E[Var(v | h)] + Var(E[v | h]) = sigma^2 + Var(means)
        states = model.sample(N_CHAINS, random_state=0, n_steps=20)
        assert_allclose(states.var(axis=0) - means.var(axis=0), variance, rtol=0.1)


def test_classification_rbm_means_average_to_the_models_feature_means():
    # RBMClassifier.sample(4, return_means=True) raised a TypeError.
    rng = np.random.default_rng(7)
    n_features, n_hidden, n_classes = 4, 3, 3
    params = (rng.normal(0, 1.0, (n_hidden, n_features)), rng.normal(0, 1.0, n_features),
              rng.normal(0, 1.0, n_hidden), rng.normal(0, 1.0, (n_hidden, n_classes)),
              rng.normal(0, 1.0, n_classes))
    log_w = class_rbm_joint_log_weights(*params)
    p_x = np.exp(logsumexp(log_w, axis=(1, 2)) - logsumexp(log_w))
    exact = p_x @ all_states(n_features)
    X = (rng.random((30, n_features)) < 0.5).astype(float)
    model = RBMClassifier(n_components=n_hidden, n_iter=1, random_state=0).fit(
        X, np.arange(30) % n_classes)
    (model.components_, model.intercept_visible_, model.intercept_hidden_,
     model.class_weights_, model.intercept_class_) = params
    means = model.sample(N_CHAINS, random_state=0, n_steps=20, return_means=True)
    assert means.shape == (N_CHAINS, n_features)
    assert ((means > 0) & (means < 1)).all()  # probabilities, not states
    assert_means_match(means, exact)
    states = model.sample(N_CHAINS, random_state=0, n_steps=20)  # the same chains
    assert np.all(np.abs((states - means).mean(axis=0)) < 5 * 0.5 / np.sqrt(N_CHAINS))


@pytest.mark.parametrize("make", [
    lambda X: RBM(n_components=3, n_iter=1, random_state=0).fit(X),
    lambda X: BoltzmannMachine(n_hidden=2, n_iter=1, random_state=0).fit(X),
    lambda X: RBMClassifier(n_components=3, n_iter=1, random_state=0).fit(
        X, np.arange(50) % 2),
], ids=["RBM", "BoltzmannMachine", "RBMClassifier"])
def test_zero_steps_give_the_means_of_the_start(make):
    # The chains start at training rows (binary units): with no step, their means
    # are those rows, each chain at its own.
    X = (np.random.default_rng(6).random((50, 4)) < 0.3).astype(float)
    model = make(X)
    starts = model.sample(40, n_steps=0, return_means=True)
    assert all((row == X).all(axis=1).any() for row in starts)
    assert len({tuple(row) for row in starts}) > 1


def test_return_means_must_be_a_bool():
    model = RBM(n_components=2, n_iter=1, random_state=0).fit(np.eye(4))
    with pytest.raises(TypeError, match="return_means must be True or False"):
        model.sample(2, return_means="yes")


def test_samples_start_at_training_rows_and_stay_like_them():
    """Chains from independent units at the data's rates can settle far from the
    data; sample() starts them at kept training rows (two clusters here: a model of
    them samples both, in their proportions)."""
    from skboltz import RBM
    from skboltz.core._degeneracy import kept_rows

    rng = np.random.default_rng(3)
    top = np.r_[np.ones(10), np.zeros(10)]
    X = np.where(rng.random((600, 1)) < 0.75, top, 1 - top)
    X = np.abs(X - (rng.random(X.shape) < 0.02))
    rbm = RBM(n_components=6, n_iter=30, learning_rate=0.02, random_state=0).fit(X)
    rows = kept_rows(rbm._training_state, np.dtype(float))
    assert rows.shape[1] == 20 and (rows[:, None] == X[None]).all(axis=2).any(axis=1).all()
    samples = rbm.sample(400, n_steps=50, random_state=0)
    share_top = np.mean(samples[:, :10].mean(axis=1) > 0.5)
    assert abs(share_top - 0.75) < 0.1
    assert np.abs(samples.mean(axis=0) - X.mean(axis=0)).mean() < 0.05
