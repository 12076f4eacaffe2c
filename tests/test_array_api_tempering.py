"""Parallel tempering on the namespace-generic path, against exact distributions.

The chains at beta = 1 of :meth:`skboltz.learning.ParallelTempering.negative_sample`
must sample the model: for binary, softmax and Gaussian visible units, the states they
visit (or, for Gaussian units, hidden states drawn given them) are compared with the
exact distribution over the states of a small model (total variation). A wrong swap
rule (the tempered energy of a Gaussian layer, which keeps its quadratic term, or a
gather that moves the wrong rows) puts mass elsewhere.
"""

import itertools

import numpy as np
import pytest
from sklearn import config_context
from sklearn.datasets import load_digits

from skboltz import RBM
from skboltz.utils._array_api import random_source, to_numpy
from skboltz.estimators._array_api_restricted import (
    HIDDEN_BIAS,
    VISIBLE_BIAS,
    WEIGHTS,
    Model,
)
from skboltz.learning import ParallelTempering
from skboltz.views import BinaryUnits, GaussianUnits, SoftmaxUnits

xp = pytest.importorskip("array_api_strict")

N_HIDDEN = 3


def _layer(kind, rng):
    if kind == "binary":
        return BinaryUnits(rng.normal(0, 1, 4))
    if kind == "softmax":
        return SoftmaxUnits(rng.normal(0, 1, 5), (2, 3))
    return GaussianUnits(rng.normal(0, 1, 2), variance=np.array([0.5, 2.0]))


def _exact_hidden_distribution(weights, visible, hidden_bias):
    """p(h) over the 2**N_HIDDEN hidden states, the visible layer summed out."""
    states = np.array(list(itertools.product([0, 1], repeat=N_HIDDEN)), dtype=float)
    log_p = states @ hidden_bias + visible.log_partition(states @ weights)
    p = np.exp(log_p - log_p.max())
    return states, p / p.sum()


@pytest.mark.parametrize("kind", ["binary", "softmax", "gaussian"])
def test_tempered_chains_sample_the_model(kind):
    rng = np.random.default_rng(1)
    layer = _layer(kind, rng)
    # strong weights: two modes a single Gibbs chain would cross slowly
    weights = rng.normal(0, 2.0, (N_HIDDEN, layer.n_units))
    hidden_bias = rng.normal(0, 1, N_HIDDEN)
    params = {WEIGHTS: xp.asarray(weights), VISIBLE_BIAS: xp.asarray(layer.bias),
              HIDDEN_BIAS: xp.asarray(hidden_bias)}
    extra = {} if kind != "gaussian" else {"variance": xp.asarray(layer.variance)}
    kind_params = {k: v for k, v in layer.parameters().items() if k == "sizes"}
    visible = layer.replace(bias=params[VISIBLE_BIAS], **extra, **kind_params)
    model = Model(xp, visible, params)
    source = random_source(xp, None, 0)
    n_chains, strategy = 200, ParallelTempering(n_temperatures=4, min_beta=0.0)
    no_input = xp.zeros((n_chains * 4, layer.n_units), dtype=xp.float64)
    tempered = strategy.start_chains(model, visible.sample(no_input, source), source)

    def negative_phase():
        return strategy.negative_sample(model, tempered, None, None, source, 1, False)

    for _ in range(50):  # burn-in
        negative_phase()
    states, exact = _exact_hidden_distribution(weights, layer, hidden_bias)
    counts = np.zeros(len(states))
    for _ in range(300):
        negative, hidden_probability = negative_phase()
        # a hidden state drawn given each beta = 1 chain's visible state is a draw of h
        H = to_numpy(hidden_probability, xp) > rng.random((n_chains, N_HIDDEN))
        codes = H.astype(int) @ (2 ** np.arange(N_HIDDEN)[::-1])
        counts += np.bincount(codes, minlength=len(states))
    total_variation = 0.5 * np.abs(counts / counts.sum() - exact).sum()
    assert total_variation < 0.02, (total_variation, exact)
    assert 0 < int(tempered["n_swaps_accepted"]) < tempered["n_swaps_proposed"]


def test_rbm_with_parallel_tempering_is_supported_and_fits():
    X = load_digits().data[:200] / 16
    rbm = RBM(n_components=8, n_iter=2, random_state=0,
              learning=ParallelTempering(n_temperatures=3, n_steps=2,
                                         negative_visible="sample"))
    assert rbm.__sklearn_tags__().array_api_support
    with config_context(array_api_dispatch=True):
        rbm.fit(xp.asarray(X))
        rbm.partial_fit(xp.asarray(X[:50]))
        history = rbm._training_state.history["swap_acceptance"]
        assert len(history) == 3 and all(0 < share < 1 for share in history)
        assert float(rbm.score(xp.asarray(X))) < 0
