"""RBM learning by exact enumeration and through the TAP free energy."""

import numpy as np
import pytest
from scipy.special import logsumexp

from skboltz import RBM
from skboltz.utils._energy import binary_states
from skboltz.models._rbm_energy import AugmentedRBM
from skboltz.exceptions import TooManyStatesError
from skboltz.learning import ExactGradient, TAPGradient
from skboltz.learning._exact import exact_statistics
from skboltz.learning._tap import tap_iterate, tap_statistics
from skboltz.partition import Exact, MeanField


def random_params(n_visible, n_hidden, scale, seed):
    params = np.random.default_rng(seed).normal(0, scale, (n_hidden + 1, n_visible + 1))
    params[-1, -1] = 0
    return params


def mean_log_likelihood(params, X):
    view = AugmentedRBM(params).view()
    return np.mean(-view.free_energy(X)) - Exact().estimate(view).value


def finite_difference_gradient(params, X, eps=1e-5):
    grad = np.zeros_like(params)
    for index in np.ndindex(params.shape):
        if index == (params.shape[0] - 1, params.shape[1] - 1):
            continue
        up, down = params.copy(), params.copy()
        up[index] += eps
        down[index] -= eps
        grad[index] = (mean_log_likelihood(up, X) - mean_log_likelihood(down, X)) / (2 * eps)
    return grad


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])  # hidden or visible enumerated
@pytest.mark.parametrize("seed", [0, 1])
def test_exact_gradient_matches_finite_differences(shape, seed):
    params = random_params(*shape, 1.0, seed)
    X = (np.random.default_rng(seed + 10).random((13, shape[0])) < 0.4).astype(float)
    model = AugmentedRBM(params)
    batch = model.augment(X)
    positive = model.statistics(model.hidden_probability(batch), batch) / X.shape[0]
    strategy = ExactGradient(chunk_size=3)
    negative = strategy._negative_statistics(model, batch, None, None, 0.0)
    gradient = positive - negative
    gradient[-1, -1] = 0
    assert np.allclose(gradient, finite_difference_gradient(params, X), atol=1e-7)


def test_exact_statistics_match_joint_enumeration():
    params = random_params(4, 3, 1.0, 5)
    model = AugmentedRBM(params)
    V, H = binary_states(4), binary_states(3)
    VV, HH = np.repeat(V, 8, axis=0), np.tile(H, (16, 1))
    log_p = -model.view().energy(VV, HH)
    p = np.exp(log_p - logsumexp(log_p))[:, None]
    expected = (p * model.augment(HH)).T @ model.augment(VV)
    assert np.allclose(exact_statistics(model), expected)


def test_exact_learning_refuses_large_models():
    X = np.zeros((5, 6))
    rbm = RBM(n_components=5, learning=ExactGradient(max_states=16), n_iter=1)
    with pytest.raises(TooManyStatesError, match="'pcd'.*'pt'"):
        rbm.fit(X)


def test_exact_learning_increases_likelihood():
    rng = np.random.default_rng(0)
    prototypes = np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]], dtype=float)
    X = np.abs(prototypes[rng.integers(0, 2, 200)] - (rng.random((200, 6)) < 0.05))
    # 400 exact updates of 0.1 (binary rows' automatic step, 0.02, moves 5 times less)
    fit = dict(n_components=3, learning="exact", learning_rate=0.1, random_state=0)
    start = RBM(n_iter=0, **fit).fit(X)
    rbm = RBM(n_iter=20, **fit).fit(X)
    assert rbm.score(X) > start.score(X) + 1.0


def tap_fixed_point(params, n_iter=2000):
    m_v = np.full((1, params.shape[1] - 1), 0.5)
    m_h = np.full((1, params.shape[0] - 1), 0.5)
    return tap_iterate(params[:-1, :-1], params[-1, :-1], params[:-1, -1],
                       m_v, m_h, n_iter, 0.5)


def test_tap_statistics_are_the_gradient_of_the_tap_free_energy():
    """At the TAP fixed point the statistics equal d(-F_TAP)/d(params), which is what
    the TAP log Z estimator computes."""
    params = random_params(4, 3, 0.3, 2)
    m_v, m_h = tap_fixed_point(params)
    statistics = tap_statistics(AugmentedRBM(params), m_v, m_h)

    def tap_log_z(p):
        return MeanField(order=2, tol=1e-13, max_iter=20000).estimate(
            AugmentedRBM(p).view()).value

    eps = 1e-5
    for index in [(0, 0), (2, 3), (1, -1), (-1, 2)]:
        up, down = params.copy(), params.copy()
        up[index] += eps
        down[index] -= eps
        numeric = (tap_log_z(up) - tap_log_z(down)) / (2 * eps)
        assert statistics[index] == pytest.approx(numeric, abs=1e-6)


def test_tap_statistics_closer_to_exact_than_naive_at_weak_coupling():
    params = random_params(6, 4, 0.3, 3)
    model = AugmentedRBM(params)
    exact = exact_statistics(model)
    m_v, m_h = tap_fixed_point(params)
    tap = tap_statistics(model, m_v, m_h)
    naive = model.statistics(model.augment(m_h), model.augment(m_v))
    assert np.abs(tap - exact)[:-1, :-1].max() < np.abs(naive - exact)[:-1, :-1].max()


def test_tap_warm_starts_from_previous_fixed_point():
    params = random_params(5, 3, 0.3, 4)
    model = AugmentedRBM(params)
    X = (np.random.default_rng(0).random((20, 5)) < 0.5).astype(float)
    strategy = TAPGradient(n_chains=4, max_iter=1)
    state = strategy.init_state(model.view(), X, 10, np.random.default_rng(0))
    assert state["m_v"].shape == (4, 5) and state["m_h"].shape == (4, 3)
    for _ in range(300):
        strategy._negative_statistics(model, None, state, None, 0.0)
    m_v, m_h = tap_fixed_point(params)
    assert np.allclose(state["m_v"], m_v, atol=1e-6)  # one fixed point at weak coupling


def test_tap_learning_increases_likelihood_and_keeps_float32():
    rng = np.random.default_rng(1)
    prototypes = np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]], dtype=np.float32)
    X = np.abs(prototypes[rng.integers(0, 2, 200)] - (rng.random((200, 6)) < 0.05))
    X = X.astype(np.float32)
    # (at lr 0.05 the model has barely left the symmetric start after 20 epochs)
    rbm = RBM(n_components=3, learning="tap", learning_rate=0.1, random_state=0)
    start = rbm.set_params(n_iter=0).fit(X).score(X)
    rbm.set_params(n_iter=20).fit(X)
    assert rbm.components_.dtype == np.float32
    assert rbm.score(X) > start + 1.0
