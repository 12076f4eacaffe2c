"""Brute-force reference computations for small models (the test oracles).

Written independently of skboltz's own formulas: plain enumeration of every joint
state, so a shared mistake in skboltz cannot hide here.
"""

import itertools

import numpy as np
from scipy.special import logsumexp


def all_states(n_units):
    """Every binary vector of length n_units, shape (2**n_units, n_units)."""
    return np.array(list(itertools.product([0.0, 1.0], repeat=n_units)))


def rbm_joint_log_weights(weights, visible_bias, hidden_bias):
    """log exp(-E(v, h)) for every (v, h): array of shape (2**n_visible, 2**n_hidden)."""
    V = all_states(weights.shape[1])
    H = all_states(weights.shape[0])
    return V @ weights.T @ H.T + (V @ visible_bias)[:, None] + (H @ hidden_bias)[None, :]


def rbm_visible_log_probabilities(weights, visible_bias, hidden_bias):
    """Exact log p(v) for every visible state, in the order of ``all_states``."""
    joint = rbm_joint_log_weights(weights, visible_bias, hidden_bias)
    marginal = logsumexp(joint, axis=1)
    return marginal - logsumexp(marginal)


def rbm_log_partition(weights, visible_bias, hidden_bias):
    return float(logsumexp(rbm_joint_log_weights(weights, visible_bias, hidden_bias)))


def state_index(rows):
    """Index of each binary row in the order of ``all_states`` (first unit = high bit)."""
    rows = np.asarray(rows).astype(int)
    return rows @ (2 ** np.arange(rows.shape[1])[::-1])


def total_variation(samples, log_probabilities):
    """Total-variation distance between binary sample rows and an exact distribution."""
    counts = np.bincount(state_index(samples), minlength=len(log_probabilities))
    return 0.5 * np.abs(counts / counts.sum() - np.exp(log_probabilities)).sum()


def random_rbm(n_visible, n_hidden, scale, seed):
    rng = np.random.default_rng(seed)
    return (
        rng.normal(0, scale, (n_hidden, n_visible)),
        rng.normal(0, scale, n_visible),
        rng.normal(0, scale, n_hidden),
    )
