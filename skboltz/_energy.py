"""Energies, free energies, conditionals and Gibbs steps on parameter arrays.

Everything here is a pure function of numpy arrays (or a small read-only view that
bundles them); no scikit-learn objects. Units take the values 0 and 1.

RBM conventions (the orientation of ``components_``): ``weights`` has shape
(n_hidden, n_visible), ``visible_bias`` b has shape (n_visible,), ``hidden_bias`` c has
shape (n_hidden,), and

    E(v, h) = -h^T W v - b^T v - c^T h,
    F(v)    = -b^T v - sum_j softplus(c_j + (W v)_j),     p(v) = exp(-F(v)) / Z.
"""

from dataclasses import dataclass

import numpy as np


def sigmoid(x, out=None):
    """Logistic function ``1 / (1 + exp(-x))``, computed as ``0.5 * tanh(x / 2) + 0.5``.

    The tanh form is a vectorised ufunc (about 1 ns per element here, against ~6 ns
    for ``scipy.special.expit``) and cannot overflow. Works in place with ``out=x``.
    """
    out = np.multiply(x, 0.5, out=out)
    np.tanh(out, out=out)
    out *= 0.5
    out += 0.5
    return out


def softplus(x):
    """``log(1 + exp(x))`` without overflow."""
    return np.logaddexp(0, x)


def bernoulli_sample(probability, rng, out=None):
    """Draw 0/1 units with the given probabilities, in the probabilities' dtype."""
    uniform = rng.random(probability.shape, dtype=probability.dtype)
    return np.less(uniform, probability, out=out if out is not None else uniform)


#: Per float type: (unsigned int of the same size, random mantissa bits used, the bit
#: pattern of 1.0).
_FLOAT_BITS = {
    np.dtype(np.float32): (np.uint32, 23, 0x3F800000),
    np.dtype(np.float64): (np.uint64, 52, 0x3FF0000000000000),
}


def uniform_open(rng, n, dtype):
    """``n`` uniform numbers strictly inside (0, 1), in ``dtype``.

    Random mantissa bits under the exponent of 1.0 give a float in [1, 2) with no
    int-to-float conversion; subtracting 1 - 2**-(bits + 1) (exactly) centres each value
    in its bin, so neither 0 nor 1 occurs. Built on the generator's raw 64-bit output:
    about 3x cheaper here than ``Generator.random``.
    """
    uint, bits, one = _FLOAT_BITS[np.dtype(dtype)]
    n_words = -(-n * np.dtype(uint).itemsize // 8)
    raw = rng.bit_generator.random_raw(n_words).view(uint)[:n]
    raw >>= raw.itemsize * 8 - bits
    raw |= uint(one)
    u = raw.view(dtype)
    u -= 1 - 2.0 ** -(bits + 1)
    return u


def logistic_noise(rng, n, dtype):
    """``n`` standard logistic numbers L = log(u / (1 - u)).

    ``x > L`` is a Bernoulli draw with probability sigmoid(x): one comparison samples
    binary units straight from their inputs, no sigmoid needed.
    """
    u = uniform_open(rng, n, dtype)
    complement = np.subtract(1, u, dtype=u.dtype)
    u /= complement
    return np.log(u, out=u)


def signed_uniform_noise(rng, n, dtype):
    """``n`` numbers uniform on (-1, 1).

    ``t > U`` is a Bernoulli draw with probability (1 + t) / 2, so ``tanh(x / 2) > U``
    samples sigmoid(x): cheaper than logistic noise (no logarithm) where tanh(x / 2) is
    computed anyway.
    """
    u = uniform_open(rng, n, dtype)
    u *= 2  # exact, and 2u - 1 stays strictly inside (-1, 1)
    u -= 1
    return u


class Noise:
    """Buffered streams of logistic and of signed uniform noise, drawn in large blocks.

    Drawing per minibatch costs a few microseconds of call overhead each time, so
    numbers are drawn ``block_size`` at a time and handed out as views. The streams are
    a deterministic function of the generator, so they can be saved (pickled,
    deep-copied) with the training state and continued.
    """

    _MAKERS = {"logistic": logistic_noise, "signed_uniform": signed_uniform_noise}

    def __init__(self, rng, dtype, block_size=2**16):
        self.rng = rng
        self.dtype = np.dtype(dtype)
        self.block_size = block_size
        self._buffers = {kind: np.empty(0, dtype=self.dtype) for kind in self._MAKERS}
        self._positions = dict.fromkeys(self._MAKERS, 0)

    def set_dtype(self, dtype):
        """Continue the streams in another dtype."""
        self.dtype = np.dtype(dtype)
        for kind, buffer in self._buffers.items():
            self._buffers[kind] = buffer.astype(self.dtype)

    def logistic(self, shape):
        """The next logistic numbers, as an array of ``shape`` (a view into a block)."""
        return self._take("logistic", shape)

    def signed_uniform(self, shape):
        """The next numbers uniform on (-1, 1), as an array of ``shape``."""
        return self._take("signed_uniform", shape)

    def _take(self, kind, shape):
        n = shape[0] * shape[1]
        end = self._positions[kind] + n
        if end > self._buffers[kind].size:
            size = max(n, self.block_size)
            self._buffers[kind] = self._MAKERS[kind](self.rng, size, self.dtype)
            end = n
        self._positions[kind] = end
        return self._buffers[kind][end - n : end].reshape(shape)


def binary_states(n_units, start=0, stop=None, dtype=np.float64):
    """Rows ``start`` to ``stop`` of the 2**n_units binary states, unit 0 lowest bit."""
    stop = 2**n_units if stop is None else stop
    codes = np.arange(start, stop, dtype=np.int64)
    return ((codes[:, None] >> np.arange(n_units)) & 1).astype(dtype)


def rbm_free_energy(V, weights, visible_bias, hidden_bias):
    """Free energy F(v) of each row of ``V`` (dense or sparse), hidden units summed out."""
    return -np.asarray(V @ visible_bias).ravel() - softplus(
        V @ weights.T + hidden_bias
    ).sum(axis=1)


def rbm_hidden_free_energy(H, weights, visible_bias, hidden_bias):
    """Free energy of hidden configurations, visible units summed out (the mirror image)."""
    return rbm_free_energy(H, weights.T, hidden_bias, visible_bias)


def rbm_energy(V, H, weights, visible_bias, hidden_bias):
    """Joint energy E(v, h) of paired rows of ``V`` and ``H``."""
    return -np.einsum("nj,nj->n", H @ weights, V) - V @ visible_bias - H @ hidden_bias


@dataclass(frozen=True, eq=False)
class RBMView:
    """Read-only view of a Bernoulli RBM's parameters, with its conditionals.

    Partition-function estimators and learning strategies work on this view, so they
    can be tested on hand-built parameters and shared between models.

    Parameters
    ----------
    weights : ndarray of shape (n_hidden, n_visible)
    visible_bias : ndarray of shape (n_visible,)
    hidden_bias : ndarray of shape (n_hidden,)
    """

    weights: np.ndarray
    visible_bias: np.ndarray
    hidden_bias: np.ndarray

    @property
    def n_visible(self):
        return self.weights.shape[1]

    @property
    def n_hidden(self):
        return self.weights.shape[0]

    @property
    def dtype(self):
        return self.weights.dtype

    def astype(self, dtype):
        """The same model with parameters in ``dtype``."""
        return RBMView(
            self.weights.astype(dtype),
            self.visible_bias.astype(dtype),
            self.hidden_bias.astype(dtype),
        )

    # -- conditionals and energies -------------------------------------------------
    def hidden_probability(self, V):
        """P(h_j = 1 | v) for each row of ``V``."""
        return sigmoid(np.asarray(V @ self.weights.T + self.hidden_bias))

    def visible_probability(self, H):
        """P(v_i = 1 | h) for each row of ``H``."""
        return sigmoid(H @ self.weights + self.visible_bias)

    def free_energy(self, V):
        """Visible free energy F(v); log p(v) = -F(v) - log Z."""
        return rbm_free_energy(V, self.weights, self.visible_bias, self.hidden_bias)

    def energy(self, V, H):
        """Joint energy E(v, h)."""
        return rbm_energy(V, H, self.weights, self.visible_bias, self.hidden_bias)

    def log_unnormalized(self, V):
        """log p*(v) = -F(v): the unnormalised log-probability of visible states."""
        return -self.free_energy(V)

    def gibbs_step(self, V, rng):
        """One block-Gibbs step v -> h -> v; returns the new binary visible states."""
        H = bernoulli_sample(self.hidden_probability(V), rng)
        return bernoulli_sample(self.visible_probability(H), rng)

    def interpolate(self, beta, base_visible_bias):
        """The RBM whose visible marginal is p_A(v)^(1 - beta) p(v)^beta (up to Z).

        ``p_A`` is the independent model with visible bias ``base_visible_bias`` and no
        couplings; ``beta`` runs from 0 (the base) to 1 (this model). This is the
        annealing path of Salakhutdinov & Murray (2008).
        """
        return RBMView(
            beta * self.weights,
            (1.0 - beta) * base_visible_bias + beta * self.visible_bias,
            beta * self.hidden_bias,
        )

    # -- exact enumeration ---------------------------------------------------------
    @property
    def n_enumerated_units(self):
        """Units whose states exact enumeration must list: the smaller layer."""
        return min(self.n_visible, self.n_hidden)

    def enumerate_log_weights(self, chunk_size):
        """Yield unnormalised log-probabilities whose log-sum-exp is log Z.

        The smaller layer is enumerated, in chunks of ``chunk_size`` states, and the
        other layer summed in closed form; everything in float64.
        """
        view = self.astype(np.float64)
        n_units = self.n_enumerated_units
        enumerate_visible = self.n_visible <= self.n_hidden
        for start in range(0, 2**n_units, chunk_size):
            states = binary_states(n_units, start, min(start + chunk_size, 2**n_units))
            if enumerate_visible:
                yield -view.free_energy(states)
            else:
                yield -rbm_hidden_free_energy(
                    states, view.weights, view.visible_bias, view.hidden_bias
                )


class AugmentedRBM:
    """Training form of an RBM: all parameters in one (n_hidden + 1, n_visible + 1) array.

    ``params[:-1, :-1]`` is W, ``params[:-1, -1]`` the hidden bias c and ``params[-1, :-1]``
    the visible bias b. States carry a trailing constant unit, so a single matrix
    product gives W v + c, one gives W^T h + b and one gives every gradient statistic at
    once (sum h v^T, sum h, sum v): few, large numpy calls, which is what makes small
    minibatches fast.

    The two constant units are ordinary units coupled by the corner weight
    ``params[-1, -1] = ALWAYS_ON``: given each other they are on with probability
    sigmoid(ALWAYS_ON + ...) = 1, so products over whole rows (constant column
    included) sample and transform them like any unit. Every array stays contiguous,
    which matters as much as the number of calls. The constructor sets the corner; it
    is not part of the model (``view`` and ``energy`` leave it out).

    ``beta`` arguments are per-row inverse temperatures, shape (n_rows, 1), used by
    parallel tempering (p_beta(v, h) proportional to exp(-beta E(v, h))).
    """

    #: Coupling of the two constant units: far beyond any input the other weights give
    #: (sigmoid is 1 in float64 above ~40), yet well below where training is declared
    #: diverged (1e6).
    ALWAYS_ON = 1e5

    def __init__(self, params):
        params[-1, -1] = self.ALWAYS_ON
        self.params = params
        self.n_hidden = params.shape[0] - 1
        self.n_visible = params.shape[1] - 1

    @staticmethod
    def augment(X):
        """Append the constant unit to rows of ``X`` (dense)."""
        out = np.empty((X.shape[0], X.shape[1] + 1), dtype=X.dtype)
        out[:, :-1] = X
        out[:, -1] = 1
        return out

    def view(self):
        """The :class:`RBMView` of the current parameters (no copies)."""
        p = self.params
        return RBMView(p[:-1, :-1], p[-1, :-1], p[:-1, -1])

    def empty_visible(self, n_rows):
        """Uninitialised augmented visible rows."""
        return np.empty((n_rows, self.n_visible + 1), dtype=self.params.dtype)

    def empty_hidden(self, n_rows):
        """Uninitialised augmented hidden rows."""
        return np.empty((n_rows, self.n_hidden + 1), dtype=self.params.dtype)

    # np.dot rather than matmul: same BLAS call, ~0.6 us less overhead at batch 10.
    # ``out`` must be C-contiguous (np.dot refuses anything else).
    def hidden_input(self, V, out=None):
        """Inputs W v + c of the hidden units (and a huge one of the constant unit)."""
        return np.dot(V, self.params.T, out=out)

    def visible_input(self, H, out=None):
        """Inputs W^T h + b of the visible units (and a huge one of the constant unit)."""
        return np.dot(H, self.params, out=out)

    def draw_hidden(self, V, noise, out, beta=None):
        """Fill augmented hidden rows ``out`` with a draw from P(h | v) (at ``beta``)."""
        return self._draw(np.dot(V, self.params.T, out=out), noise, beta)

    def draw_visible(self, H, noise, out, beta=None):
        """Fill augmented visible rows ``out`` with a draw from P(v | h) (at ``beta``)."""
        return self._draw(np.dot(H, self.params, out=out), noise, beta)

    @staticmethod
    def _draw(x, noise, beta):
        if beta is not None:
            x *= beta
        np.greater(x, noise.logistic(x.shape), out=x)
        if beta is not None:
            x[:, -1] = 1  # at beta = 0 the constant unit would be a coin flip
        return x

    def energy(self, V, H):
        """E(v, h) of paired augmented rows (the constant units' coupling left out)."""
        p = self.params
        return -np.einsum("nj,nj->n", H @ p[:, :-1], V[:, :-1]) - H[:, :-1] @ p[:-1, -1]

    def reconstruction_error(self, X):
        """Mean squared error of the mean-field reconstruction P(v | P(h | x)) of rows X."""
        X = self.augment(X.astype(self.params.dtype, copy=False))
        reconstruction = sigmoid(self.visible_input(sigmoid(self.hidden_input(X))))
        reconstruction -= X
        return float(np.mean(np.square(reconstruction[:, :-1]), dtype=np.float64))

    @staticmethod
    def statistics(H, V):
        """Sum over rows of h v^T for augmented rows: W, c and b statistics together."""
        return H.T @ V
