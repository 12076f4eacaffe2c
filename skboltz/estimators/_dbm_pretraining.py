"""Greedy layer-wise pretraining of a deep Boltzmann machine.

Salakhutdinov & Hinton ("Deep Boltzmann machines", AISTATS 2009; "An efficient learning
procedure for deep Boltzmann machines", Neural Computation 2012) start a deep Boltzmann
machine from a stack of RBMs trained one after the other, each on the posterior of the
layer below. In the deep machine a layer between two others receives input from both;
an RBM gives each of its layers input from one side only. So the RBMs are trained with
the weights doubled where the deep machine will add a second source:

- the bottom RBM (visible units and layer 1) has two tied copies of the visible units:
  the hidden units see 2 W v, the visible units W^T h;
- the top RBM (layers L - 1 and L) has two tied copies of its hidden units: layer L - 1
  sees 2 W^T h, layer L sees W x;
- an RBM in between is trained as usual, with weights W' = 2 W in both directions, and
  half of its weights enter the deep machine.

The copies are real units of the pretraining model (tied weights and biases), sampled
independently given the other layer; its log-likelihood gradient therefore sums over
the copies. The deep machine's biases are those of the RBMs, a layer between two RBMs
taking the mean of its two biases (the intermediate RBMs' halved like their weights).
A machine with one hidden layer is an RBM, trained as one.
"""

import time

import numpy as np

from ..utils._energy import column_means, logit_of_rates, sigmoid
from ..utils._noise import NOISE_DTYPE, logistic_noise, uniform_open
from ..models._rbm_energy import RBMLayout
from ..core._update import ParameterUpdate, UpdateRule


def greedy_pretraining(X, sizes, *, n_iter, learning_rate, batch_size, momentum,
                       weight_decay, rng, verbose=0, row_weights=None):
    """Weights and biases of a deep Boltzmann machine composed of pretrained RBMs.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_visible)
        Training rows, values in [0, 1].
    sizes : tuple of int
        Units per layer, visible first.
    n_iter : int
        Epochs of each RBM.
    learning_rate, batch_size, weight_decay : float, int, float
        The RBMs' training settings (moving-average momentum, as the estimators').
    momentum : callable
        ``momentum(epoch)``: the momentum of an epoch.
    rng : numpy.random.Generator
        Source of randomness.
    verbose : int, default=0
        Print a line per layer when positive.
    row_weights : ndarray of shape (n_samples,) or None, default=None
        The rows' relative weights in a weighted fit (see :mod:`skboltz.utils._weights`).

    Returns
    -------
    weights : list of ndarray
        W_1, ..., W_L, in the data's dtype.
    biases : list of ndarray
        b_0, ..., b_L, in the data's dtype.
    """
    n_hidden_layers = len(sizes) - 1
    data = X
    pairs = []
    for k in range(1, n_hidden_layers + 1):
        below_copies = 2 if k == 1 and n_hidden_layers > 1 else 1
        above_copies = 2 if k == n_hidden_layers and n_hidden_layers > 1 else 1
        start = time.perf_counter()
        W, b, c = train_tied_rbm(
            data, sizes[k], below_copies, above_copies, n_iter=n_iter,
            learning_rate=learning_rate, batch_size=batch_size, momentum=momentum,
            weight_decay=weight_decay, rng=rng, row_weights=row_weights,
        )
        if verbose:
            print(f"[DBM] pretrained layer {k} of {n_hidden_layers} ({sizes[k - 1]} x "
                  f"{sizes[k]}) in {time.perf_counter() - start:.2f}s")
        pairs.append((W, b, c))
        if k < n_hidden_layers:
            # The next RBM's data: this layer's posterior, the input from below
            # counted as often as the RBM did.
            data = sigmoid(below_copies * (_dense(data, W.dtype) @ W.T) + c)
    return compose(pairs)


def compose(pairs):
    """The deep machine's weights and biases from the trained RBMs ``(W, b, c)``,
    bottom first (see the module docstring)."""
    n = len(pairs)
    if n == 1:
        W, b, c = pairs[0]
        return [W], [b, c]
    weights, biases = [], [pairs[0][1]]
    for k, (W, b, c) in enumerate(pairs, start=1):
        halve = 1 < k < n  # an intermediate RBM's weights count twice in the machine
        scale = 0.5 if halve else 1.0
        weights.append(scale * W)
        if k > 1:  # layer k - 1 sits between RBM k - 1 and RBM k
            biases[-1] = 0.5 * (biases[-1] + scale * b)
        biases.append(c if k == n else scale * c)
    return weights, biases


def train_tied_rbm(data, n_hidden, below_copies, above_copies, *, n_iter, learning_rate,
                   batch_size, momentum, weight_decay, rng, row_weights=None):
    """Persistent-chain training of an RBM whose layers may have tied copies.

    The lower layer has ``below_copies`` copies and the upper one ``above_copies``,
    all with the same weights W and biases (b below, c above), each copy sampled
    independently given the other layer: an upper unit's input is W (sum of the lower
    copies) + c, a lower unit's W^T (sum of the upper copies) + b. With the data in
    every lower copy, the upper copies' probability is sigmoid(below_copies W v + c).
    The gradient sums over the copies (:func:`tied_rbm_statistics`); the negative
    phase keeps ``batch_size`` persistent chains (one Gibbs step per update). In the
    data's float type, with float32 noise as the estimators' training.

    Returns
    -------
    W : ndarray of shape (n_hidden, n_lower)
    b : ndarray of shape (n_lower,)
    c : ndarray of shape (n_hidden,)
    """
    n_samples, n_lower = data.shape
    dtype = data.dtype
    rates = column_means(data, row_weights)
    # W, b and c as blocks of one array (RBMLayout's), for the one update rule
    params = RBMLayout.pack(rng.normal(0.0, 0.01, size=(n_hidden, n_lower)).astype(dtype),
                            logit_of_rates(rates).astype(dtype), 0.0, dtype)
    W, b, c = (params[RBMLayout.weights], params[RBMLayout.visible_bias],
               params[RBMLayout.hidden_bias])
    velocity, gradient = np.zeros_like(params), np.zeros_like(params)
    batch_size = max(1, min(batch_size, n_samples))
    rows = _dense(data[rng.integers(0, n_samples, size=batch_size)], dtype)
    chains = [_draw(rows, rng) for _ in range(below_copies)]  # the lower copies
    pending_decay = 0
    for epoch in range(n_iter):
        rule = UpdateRule.of(momentum(epoch), learning_rate, weight_decay)
        update = ParameterUpdate(rule, params, velocity, RBMLayout.weights,
                                 pending_decay=pending_decay)
        order = rng.permutation(n_samples)
        for first in range(0, n_samples, batch_size):
            rows = order[first : first + batch_size]
            batch = _dense(data[rows], dtype)
            positive = tied_rbm_statistics(
                W, c, below_copies * batch, above_copies,
                None if row_weights is None else row_weights[rows])
            # one Gibbs step of the persistent chains: upper copies, then lower copies
            upper_input = sum(chains) @ W.T + c
            upper_sum = sum(_draw_from_input(upper_input, rng) for _ in range(above_copies))
            lower_input = upper_sum @ W + b
            chains = [_draw_from_input(lower_input, rng) for _ in range(below_copies)]
            negative = tied_rbm_statistics(W, c, sum(chains), above_copies)
            for block, pos, neg in zip(_TIED_BLOCKS, positive, negative):
                gradient[block] = rule.step * (pos - neg)
            update.apply(gradient)
        pending_decay = update.finish()
    return W.copy(), b.copy(), c.copy()  # contiguous arrays of their own


#: The blocks of the packed array of :func:`train_tied_rbm` that hold W, b and c.
_TIED_BLOCKS = (RBMLayout.weights, RBMLayout.visible_bias, RBMLayout.hidden_bias)


def tied_rbm_statistics(W, c, lower_sum, above_copies, weights=None):
    """The statistics of rows of a tied-copy RBM, the upper copies summed out.

    ``lower_sum`` holds, per row, the sum of the lower copies' states (the data times
    ``below_copies`` for the data rows). With the upper copies independent given it,
    each on with probability q = sigmoid(W s + c), the expectations of the gradient's
    sufficient statistics are: for W, ``above_copies`` * mean q s^T; for b, mean s; for
    c, ``above_copies`` * mean q. The log-likelihood gradient of the tied model is these
    statistics of the data minus those of the model. ``weights``: the rows' relative
    weights in a weighted fit (each row counts by its weight), or None.

    Returns
    -------
    statistics : tuple of ndarray
        The (W, b, c) statistics.
    """
    q = sigmoid(lower_sum @ W.T + c)
    n_rows = lower_sum.shape[0]
    if weights is not None:  # the data's rows count by their weights
        column = np.asarray(weights, dtype=q.dtype)[:, None]
        weighted = q * column
        return ((above_copies / n_rows) * (weighted.T @ lower_sum),
                (lower_sum * column).mean(axis=0), above_copies * weighted.mean(axis=0))
    return ((above_copies / n_rows) * (q.T @ lower_sum), lower_sum.mean(axis=0),
            above_copies * q.mean(axis=0))


def _dense(rows, dtype):
    rows = rows.toarray() if hasattr(rows, "toarray") else np.asarray(rows)
    return rows.astype(dtype, copy=False)


def _draw(probability, rng):
    uniform = uniform_open(rng, probability.size, NOISE_DTYPE).reshape(probability.shape)
    return (uniform < probability).astype(probability.dtype)


def _draw_from_input(inputs, rng):
    return (inputs > logistic_noise(rng, inputs.shape, NOISE_DTYPE)).astype(inputs.dtype)


__all__ = ["compose", "greedy_pretraining", "tied_rbm_statistics", "train_tied_rbm"]
