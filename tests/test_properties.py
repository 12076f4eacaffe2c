"""Property-based tests of the energy functions and conditionals (hypothesis)."""

import numpy as np
from _oracles import all_states, rbm_joint_log_weights
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose
from scipy.special import expit, logsumexp

from skboltz.models._boltzmann_energy import BMView
from skboltz.utils._energy import sigmoid, softplus
from skboltz.models._rbm_energy import AugmentedRBM, RBMView
from skboltz.partition import Exact

finite = st.floats(-30, 30, allow_nan=False, width=64)


@st.composite
def small_rbms(draw, max_visible=5, max_hidden=5, scale=4.0):
    n_visible = draw(st.integers(1, max_visible))
    n_hidden = draw(st.integers(1, max_hidden))
    values = st.floats(-scale, scale, allow_nan=False)
    return RBMView(
        draw(arrays(np.float64, (n_hidden, n_visible), elements=values)),
        draw(arrays(np.float64, n_visible, elements=values)),
        draw(arrays(np.float64, n_hidden, elements=values)),
    )


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.integers(1, 50), elements=st.floats(-800, 800)))
def test_sigmoid_is_the_logistic_function_without_overflow(x):
    result = sigmoid(x.copy())
    assert np.all((result >= 0) & (result <= 1))
    assert_allclose(result, expit(x), atol=1e-15)
    assert_allclose(softplus(x), np.logaddexp(0, x))


@settings(max_examples=60, deadline=None)
@given(small_rbms())
def test_free_energy_matches_brute_force(model):
    joint = rbm_joint_log_weights(model.weights, model.visible_bias, model.hidden_bias)
    V = all_states(model.n_visible)
    assert_allclose(model.free_energy(V), -logsumexp(joint, axis=1), rtol=1e-9, atol=1e-9)
    assert_allclose(Exact().estimate(model).value, logsumexp(joint), rtol=1e-10)


@settings(max_examples=60, deadline=None)
@given(small_rbms(), st.integers(0, 2**32 - 1))
def test_conditionals_are_probabilities_and_agree_with_the_joint(model, seed):
    rng = np.random.default_rng(seed)
    V = (rng.random((6, model.n_visible)) < 0.5).astype(float)
    H = (rng.random((6, model.n_hidden)) < 0.5).astype(float)
    p_h = model.hidden_probability(V)
    p_v = model.visible_probability(H)
    assert np.all((p_h >= 0) & (p_h <= 1)) and np.all((p_v >= 0) & (p_v <= 1))
    # P(h_j = 1 | v) from energy differences of the joint, one unit at a time
    for j in range(model.n_hidden):
        on, off = H.copy(), H.copy()
        on[:, j], off[:, j] = 1, 0
        delta = model.energy(V, off) - model.energy(V, on)
        assert_allclose(p_h[:, j], expit(delta), atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(small_rbms(scale=2.0), st.integers(0, 2**32 - 1))
def test_float32_agrees_with_float64(model, seed):
    rng = np.random.default_rng(seed)
    V = (rng.random((8, model.n_visible)) < 0.5).astype(float)
    single = model.astype(np.float32)
    assert single.free_energy(V.astype(np.float32)).dtype == np.float32
    assert_allclose(single.free_energy(V.astype(np.float32)), model.free_energy(V),
                    rtol=1e-5, atol=1e-4)
    assert_allclose(single.hidden_probability(V.astype(np.float32)),
                    model.hidden_probability(V), atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(small_rbms(), st.integers(0, 2**32 - 1))
def test_augmented_form_is_the_same_model(model, seed):
    rng = np.random.default_rng(seed)
    params = np.zeros((model.n_hidden + 1, model.n_visible + 1))
    params[:-1, :-1] = model.weights
    params[:-1, -1] = model.hidden_bias
    params[-1, :-1] = model.visible_bias
    augmented = AugmentedRBM(params)
    V = (rng.random((5, model.n_visible)) < 0.5).astype(float)
    H = (rng.random((5, model.n_hidden)) < 0.5).astype(float)
    V1, H1 = augmented.augment(V), augmented.augment(H)
    assert_allclose(augmented.energy(V1, H1), model.energy(V, H), atol=1e-9)
    assert_allclose(augmented.hidden_probability(V1)[:, :-1], model.hidden_probability(V))
    assert_allclose(augmented.visible_probability(H1)[:, :-1], model.visible_probability(H))
    statistics = augmented.statistics(H1, V1)
    assert_allclose(statistics[:-1, :-1], H.T @ V)
    assert_allclose(statistics[-1, :-1], V.sum(axis=0))
    assert_allclose(statistics[:-1, -1], H.sum(axis=0))


@st.composite
def small_bms(draw, max_units=6, scale=3.0):
    """A general Boltzmann machine with random symmetric couplings (zero diagonal)."""
    n_units = draw(st.integers(1, max_units))
    n_visible = draw(st.integers(1, n_units))
    values = st.floats(-scale, scale, allow_nan=False)
    upper = np.triu(draw(arrays(np.float64, (n_units, n_units), elements=values)), 1)
    bias = draw(arrays(np.float64, n_units, elements=values))
    temperature = draw(st.floats(0.3, 3.0))
    return BMView(upper + upper.T, bias, n_visible, temperature)


def bm_brute_force(model):
    """log exp(-E(s)/T) of every joint state, as an (n_visible states, n_hidden states) grid."""
    n_visible, n_hidden = model.n_visible, model.n_units - model.n_visible
    V, H = all_states(n_visible), all_states(n_hidden)
    S = np.hstack([np.repeat(V, len(H), axis=0), np.tile(H, (len(V), 1))])
    log_w = (0.5 * np.einsum("ni,ij,nj->n", S, model.coupling, S) + S @ model.bias)
    return (log_w / model.temperature).reshape(len(V), len(H)), V, S


@settings(max_examples=60, deadline=None)
@given(small_bms())
def test_bm_free_energy_and_log_partition_match_brute_force(model):
    log_w, V, _ = bm_brute_force(model)
    assert_allclose(model.free_energy(V), -logsumexp(log_w, axis=1), rtol=1e-9, atol=1e-9)
    assert_allclose(Exact().estimate(model).value, logsumexp(log_w), rtol=1e-9, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(small_bms(), st.integers(0, 2**32 - 1))
def test_bm_unit_conditionals_agree_with_energy_differences(model, seed):
    rng = np.random.default_rng(seed)
    S = (rng.random((6, model.n_units)) < 0.5).astype(float)
    p = model.unit_probability(S)
    assert np.all((p >= 0) & (p <= 1))
    for i in range(model.n_units):
        on, off = S.copy(), S.copy()
        on[:, i], off[:, i] = 1, 0
        delta = (model.energy(off) - model.energy(on)) / model.temperature
        assert_allclose(p[:, i], expit(delta), atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(small_bms(scale=1.5), st.integers(0, 2**32 - 1))
def test_bm_float32_agrees_with_float64(model, seed):
    rng = np.random.default_rng(seed)
    V = (rng.random((8, model.n_visible)) < 0.5).astype(float)
    single = model.astype(np.float32)
    assert_allclose(single.free_energy(V.astype(np.float32)), model.free_energy(V),
                    rtol=1e-5, atol=1e-4)
