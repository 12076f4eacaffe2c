"""The layers' namespace-generic formulas (``xp_*``) against their NumPy ones.

Every unit type's formulas under array API dispatch are its layer's ``xp_*`` methods
(skboltz/units/_layers.py); here each is compared, on array-api-strict arrays, with the
NumPy method of the same meaning on the same parameters: exactly (to 1e-12) for the
deterministic ones, and for the draws through their means over many rows.
"""

import numpy as np
import pytest

from skboltz.utils._array_api import random_source, to_numpy
from skboltz.views import BinaryUnits, GaussianUnits, LayerGroups, SoftmaxUnits

xp = pytest.importorskip("array_api_strict")


def _layers(rng):
    gaussian = GaussianUnits(rng.normal(size=3), variance=rng.uniform(0.5, 2.0, 3))
    softmax = SoftmaxUnits(rng.normal(size=5), (2, 3))
    return {
        "binary": BinaryUnits(rng.normal(size=4)),
        "gaussian": gaussian,
        "softmax": softmax,
        "groups": LayerGroups([gaussian, SoftmaxUnits(rng.normal(size=5), (3, 2)),
                               BinaryUnits(rng.normal(size=2))]),
    }


def _on_namespace(layer):
    """The same layer over array-api-strict copies of its parameters."""
    if isinstance(layer, LayerGroups):
        return LayerGroups([_on_namespace(group) for group in layer.groups])
    arrays = {name: xp.asarray(value) for name, value in layer.parameters().items()
              if isinstance(value, np.ndarray)}
    return layer.replace(**arrays)


def host(array):
    return to_numpy(array, xp)


@pytest.fixture(params=["binary", "gaussian", "softmax", "groups"])
def layers(request):
    layer = _layers(np.random.default_rng(0))[request.param]
    return layer, _on_namespace(layer)


def test_deterministic_formulas_match_numpy(layers):
    layer, generic = layers
    rng = np.random.default_rng(1)
    input = rng.normal(size=(6, layer.n_units))
    fields = xp.asarray(input) + generic.bias
    np.testing.assert_allclose(host(generic.xp_mean(xp, fields)), layer.mean(input),
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(host(generic.xp_log_partition(xp, fields)),
                               layer.log_partition(input), rtol=1e-12)
    states = layer.sample(input, rng)
    np.testing.assert_allclose(host(generic.xp_energy(xp, xp.asarray(states))),
                               layer.energy(states), rtol=1e-12, atol=1e-12)
    seen = np.hstack([g.seen_states(s) for g, s in layer.parts(states)]) if isinstance(
        layer, LayerGroups) else (states / layer.variance if isinstance(
            layer, GaussianUnits) else states)
    np.testing.assert_allclose(host(generic.xp_seen(xp, xp.asarray(states))), seen,
                               rtol=1e-12)


def test_tempered_fields_follow_the_layers_rule(layers):
    layer, generic = layers
    input = np.random.default_rng(2).normal(size=(3, layer.n_units))
    tempered = host(generic.xp_tempered_fields(xp, xp.asarray(input), 0.25))
    bias = host(generic.bias)
    expected = 0.25 * (input + bias) if layer.tempers_bias else bias + 0.25 * input
    np.testing.assert_allclose(tempered, expected, rtol=1e-12)


def test_draws_have_the_layers_means(layers):
    layer, generic = layers
    input = np.random.default_rng(3).normal(size=(1, layer.n_units))
    many = xp.asarray(np.repeat(input, 40_000, axis=0)) + generic.bias
    draws = host(generic.xp_draw(xp, random_source(xp, None, 0), many))
    # within 5 standard errors of the mean (unit spread at most ~1.5)
    np.testing.assert_allclose(draws.mean(axis=0), layer.mean(input)[0], rtol=0,
                               atol=5 * 1.5 / np.sqrt(40_000))
    if not isinstance(layer, GaussianUnits) and layer.discrete:
        assert set(np.unique(draws)) <= {0.0, 1.0}


@pytest.mark.parametrize("kind", ["binary", "softmax", "groups_discrete"])
def test_listed_states_are_the_numpy_ones(kind):
    rng = np.random.default_rng(4)
    layer = {"binary": BinaryUnits(rng.normal(size=5)),
             "softmax": SoftmaxUnits(rng.normal(size=5), (2, 3)),
             "groups_discrete": LayerGroups([BinaryUnits(rng.normal(size=2)),
                                             SoftmaxUnits(rng.normal(size=3), (3,))])}[kind]
    generic = _on_namespace(layer)
    n = layer.n_states
    np.testing.assert_array_equal(host(generic.xp_states(xp, None, 1, n - 1)),
                                  layer.states(1, n - 1))


def test_gaussian_extra_gradient_is_the_training_forms():
    rng = np.random.default_rng(5)
    layer = GaussianUnits(rng.normal(size=3), log_variance=rng.normal(0, 0.3, 3))
    generic = layer.replace(bias=xp.asarray(layer.bias),
                            log_variance=xp.asarray(layer.log_variance))
    V, H = rng.normal(size=(7, 3)), (rng.random((7, 2)) < 0.5).astype(float)
    W = rng.normal(size=(2, 3))
    for means in (False, True):
        expected = np.empty(3)
        layer.log_variance_statistics(expected, V, W, H.T @ V, means)
        gradient = generic.xp_extra_gradients(xp, xp.asarray(V), xp.asarray(H),
                                              xp.asarray(W), means)["log_variance"]
        np.testing.assert_allclose(host(gradient), expected / len(V), rtol=1e-12)
