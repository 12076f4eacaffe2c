"""Each layer formula, written once for every namespace, on a second namespace.

A unit type writes its formulas (mean, draw, log-partition, energy, seen states,
tempered input, listed states) once (skboltz/units/_layers.py); on NumPy arrays they
take NumPy's fast paths, on others the standard's functions. Here the same methods of
the same layer are run on array-api-strict arrays (on its second device, so that a
hidden host copy fails) and on NumPy arrays, and compared: to 1e-12 for the
deterministic ones (they may round differently), and for the draws through their
means over many rows.
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


DEVICE = xp.Device("device1")


def on_device(array):
    return xp.asarray(array, device=DEVICE)


def _on_namespace(layer):
    """The same layer over array-api-strict copies of its parameters."""
    if isinstance(layer, LayerGroups):
        return LayerGroups([_on_namespace(group) for group in layer.groups])
    arrays = {name: on_device(value) for name, value in layer.parameters().items()
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
    np.testing.assert_allclose(host(generic.mean(on_device(input))), layer.mean(input),
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(host(generic.log_partition(on_device(input))),
                               layer.log_partition(input), rtol=1e-12)
    states = layer.sample(input, rng)
    np.testing.assert_allclose(host(generic.energy(on_device(states))),
                               layer.energy(states), rtol=1e-12, atol=1e-12)
    seen = np.hstack([g.seen_states(s) for g, s in layer.parts(states)]) if isinstance(
        layer, LayerGroups) else (states / layer.variance if isinstance(
            layer, GaussianUnits) else states)
    np.testing.assert_allclose(host(generic.seen_states(on_device(states))), seen,
                               rtol=1e-12)
    np.testing.assert_allclose(layer.seen_states(states), seen, rtol=0, atol=0)


def test_tempered_input_gives_the_layers_tempered_fields(layers):
    layer, generic = layers
    input = np.random.default_rng(2).normal(size=(3, layer.n_units))
    for beta in (0.0, 0.25, 1.0):
        tempered = host(generic.tempered_input(on_device(input), beta))
        bias = host(generic.bias)
        expected = beta * (input + bias) if layer.tempers_bias else bias + beta * input
        np.testing.assert_allclose(tempered + bias, expected, rtol=1e-12, atol=1e-15)
        # the mean of the tempered layer is the mean at those fields
        np.testing.assert_allclose(host(generic.mean(on_device(tempered))),
                                   layer.mean(expected - bias), rtol=1e-12, atol=1e-15)


def test_draws_have_the_layers_means(layers):
    layer, generic = layers
    input = np.random.default_rng(3).normal(size=(1, layer.n_units))
    many = on_device(np.repeat(input, 40_000, axis=0))
    draws = host(generic.sample(many, random_source(xp, DEVICE, 0)))
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
    np.testing.assert_array_equal(host(generic.xp_states(xp, DEVICE, 1, n - 1)),
                                  layer.states(1, n - 1))


def test_gaussian_extra_gradient_is_the_training_forms():
    rng = np.random.default_rng(5)
    layer = GaussianUnits(rng.normal(size=3), log_variance=rng.normal(0, 0.3, 3))
    generic = layer.replace(bias=on_device(layer.bias),
                            log_variance=on_device(layer.log_variance))
    V, H = rng.normal(size=(7, 3)), (rng.random((7, 2)) < 0.5).astype(float)
    W = rng.normal(size=(2, 3))
    for means in (False, True):
        expected = np.empty(3)
        layer.log_variance_statistics(expected, V, W, H.T @ V, means)
        gradient = generic.extra_gradients(on_device(V), on_device(H), on_device(W),
                                           means)["log_variance"]
        np.testing.assert_allclose(host(gradient), expected / len(V), rtol=1e-12)
