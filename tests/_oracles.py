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


def rbm_hidden_log_probabilities(weights, visible_bias, hidden_bias):
    """Exact log p(h) for every hidden state, in the order of ``all_states``."""
    joint = rbm_joint_log_weights(weights, visible_bias, hidden_bias)
    marginal = logsumexp(joint, axis=0)
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


# -- Gaussian-Bernoulli RBMs (real-valued visible units) -------------------------------
def grbm_negative_energy(V, H, weights, visible_bias, hidden_bias, variance):
    """-E(v, h) for every pair of rows of V and H: shape (len(V), len(H)).

    E(v, h) = sum_i (v_i - b_i)^2 / (2 s_i) - sum_ij W_ji h_j v_i / s_i - c.h, s = variance.
    """
    quadratic = (((V - visible_bias) ** 2) / (2 * variance)).sum(axis=1)
    return -quadratic[:, None] + (V / variance) @ weights.T @ H.T + (H @ hidden_bias)[None, :]


def grbm_log_partition(weights, visible_bias, hidden_bias, variance):
    """log Z: for each hidden state, the product of 1-D Gaussian integrals in closed form.

    int exp(-a x^2 + k x) dx = sqrt(pi / a) exp(k^2 / (4 a)), per visible unit, with
    a = 1 / (2 s) and k = (b + (W^T h)) / s, times exp(-b^2 / (2 s) + c.h).
    """
    a = 1 / (2 * variance)
    terms = []
    for h in all_states(weights.shape[0]):
        k = (visible_bias + h @ weights) / variance
        log_integrals = 0.5 * np.log(np.pi / a) + k**2 / (4 * a) - visible_bias**2 * a
        terms.append(h @ hidden_bias + log_integrals.sum())
    return float(logsumexp(terms))


def grbm_log_density(V, weights, visible_bias, hidden_bias, variance):
    """Exact log p(v) of each row: a direct sum over hidden states, minus log Z."""
    H = all_states(weights.shape[0])
    joint = grbm_negative_energy(V, H, weights, visible_bias, hidden_bias, variance)
    return logsumexp(joint, axis=1) - grbm_log_partition(
        weights, visible_bias, hidden_bias, variance
    )


def grbm_hidden_probabilities(weights, visible_bias, hidden_bias, variance):
    """Exact p(h) of every hidden state (visible units integrated), order of all_states."""
    H = all_states(weights.shape[0])
    a = 1 / (2 * variance)
    log_w = np.array([
        h @ hidden_bias
        + (((visible_bias + h @ weights) / variance) ** 2 / (4 * a) - visible_bias**2 * a).sum()
        for h in H
    ])
    return np.exp(log_w - logsumexp(log_w))


def grbm_exact_samples(weights, visible_bias, hidden_bias, variance, n_samples, seed):
    """Exact draws (v, h) of the joint: h from p(h), then v from N(b + W^T h, s)."""
    rng = np.random.default_rng(seed)
    p = grbm_hidden_probabilities(weights, visible_bias, hidden_bias, variance)
    H = all_states(weights.shape[0])[rng.choice(len(p), size=n_samples, p=p)]
    V = visible_bias + H @ weights + np.sqrt(variance) * rng.standard_normal(
        (n_samples, weights.shape[1])
    )
    return V, H


def grbm_marginal_cdf(x, feature, weights, visible_bias, hidden_bias, variance):
    """CDF of one visible unit's exact marginal: a mixture of normals over hidden states."""
    from scipy.stats import norm

    p = grbm_hidden_probabilities(weights, visible_bias, hidden_bias, variance)
    means = visible_bias[feature] + all_states(weights.shape[0]) @ weights[:, feature]
    std = np.sqrt(variance[feature])
    return norm.cdf((np.asarray(x)[..., None] - means) / std) @ p


def random_grbm(n_visible, n_hidden, scale, seed):
    rng = np.random.default_rng(seed)
    return (
        rng.normal(0, scale, (n_hidden, n_visible)),
        rng.normal(0, 0.5, n_visible),
        rng.normal(0, scale, n_hidden),
        np.exp(rng.normal(-0.5, 0.4, n_visible)),
    )


# -- samplers against exact distributions ----------------------------------------------
def bm_log_probabilities(coupling, bias, temperature=1.0):
    """Exact log p(s) of a general Boltzmann machine for every state of ``all_states``."""
    S = all_states(len(bias))
    log_p = (0.5 * np.einsum("ki,ij,kj->k", S, coupling, S) + S @ bias) / temperature
    return log_p - logsumexp(log_p)


def sampling_total_variation(log_probabilities, n_samples):
    """Mean and standard deviation of the total variation of ``n_samples`` exact draws.

    The noise floor of a sampler test: n p_hat_i is Binomial(n, p_i), whose mean
    absolute deviation is 2 nu (1 - p_i) Binomial(nu; n, p_i) with nu = floor(n p_i) + 1
    (de Moivre), so E[TV] = sum_i nu (1 - p_i) pmf(nu) / n exactly. The standard
    deviation ignores the (negative) covariances between states: an upper estimate.
    """
    from scipy.stats import binom

    p = np.exp(np.asarray(log_probabilities, dtype=np.float64))
    nu = np.floor(n_samples * p) + 1
    deviation = 2 * nu * (1 - p) * binom.pmf(nu, n_samples, p) / n_samples  # E|p_hat - p|
    variance = np.maximum(p * (1 - p) / n_samples - deviation**2, 0.0)
    return 0.5 * deviation.sum(), 0.5 * np.sqrt(variance.sum())


def total_variation_excess(samples, log_probabilities):
    """How far the samples' total variation from the exact distribution lies above the
    noise floor of as many exact draws, in standard deviations of that floor."""
    counts = np.bincount(state_index(samples), minlength=len(log_probabilities))
    tv = 0.5 * np.abs(counts / counts.sum() - np.exp(log_probabilities)).sum()
    mean, std = sampling_total_variation(log_probabilities, counts.sum())
    return (tv - mean) / std


def assert_samples_match(samples, log_probabilities, n_sigma=6.0):
    """The samples' total variation is within ``n_sigma`` of the exact draws' noise."""
    excess = total_variation_excess(samples, log_probabilities)
    assert excess < n_sigma, f"total variation {excess:.1f} standard deviations above exact"


# -- classification RBMs (features x, a softmax class y, hidden units h) ----------------
def class_rbm_joint_log_weights(weights, visible_bias, hidden_bias, class_weights,
                                class_bias):
    """-E(y, x, h) for every (x, y, h): shape (2**n_features, n_classes, 2**n_hidden).

    E(y, x, h) = -h.W x - b.x - c.h - d_y - h.U[:, y].
    """
    X = all_states(weights.shape[1])
    H = all_states(weights.shape[0])
    n_classes = class_bias.shape[0]
    log_w = np.empty((len(X), n_classes, len(H)))
    for y in range(n_classes):
        log_w[:, y, :] = ((X @ weights.T) @ H.T + (X @ visible_bias)[:, None]
                          + (H @ (hidden_bias + class_weights[:, y]))[None, :]
                          + class_bias[y])
    return log_w


def class_rbm_statistics(weights, visible_bias, hidden_bias, class_weights, class_bias):
    """E[h v^T], E[h], E[v] under the joint model, with v = (x, e_y): the exact model
    expectations, as (E[h v^T] of shape (n_hidden, n_features + n_classes), E[h],
    E[v])."""
    log_w = class_rbm_joint_log_weights(weights, visible_bias, hidden_bias, class_weights,
                                        class_bias)
    p = np.exp(log_w - logsumexp(log_w))
    X = all_states(weights.shape[1])
    H = all_states(weights.shape[0])
    n_classes = class_bias.shape[0]
    h_v = np.zeros((weights.shape[0], weights.shape[1] + n_classes))
    mean_h = np.zeros(weights.shape[0])
    mean_v = np.zeros(weights.shape[1] + n_classes)
    for y in range(n_classes):
        py = p[:, y, :]  # (x states, h states)
        e_y = np.eye(n_classes)[y]
        h_x = H.T @ py.T @ X  # sum p h x^T
        h_y = (H.T @ py.sum(axis=0))[:, None] * e_y[None, :]
        h_v += np.hstack([h_x, h_y])
        mean_h += H.T @ py.sum(axis=0)
        mean_v += np.concatenate([X.T @ py.sum(axis=1), e_y * py.sum()])
    return h_v, mean_h, mean_v
