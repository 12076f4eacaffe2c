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


def softplus_row_sums(x, overwrite=False):
    """``softplus(x).sum(axis=1)`` for a 2-D array, several times faster.

    Uses softplus(x) = max(x, 0) + log1p(exp(-|x|)) with vectorised ufuncs in place
    (``np.logaddexp`` is a slow scalar loop); the hot part of RBM free energies and of
    exact enumeration. Agrees with ``np.logaddexp(0, x).sum(1)`` to ~1e-13. With
    ``overwrite=True`` the array ``x`` is used as scratch space (no allocation).
    """
    x = np.asarray(x)
    row_sums = x.sum(axis=1)
    t = np.abs(x, out=x if overwrite else None)
    positive_part = 0.5 * (row_sums + t.sum(axis=1))  # sum of max(x, 0)
    np.negative(t, out=t)
    np.exp(t, out=t)
    np.log1p(t, out=t)
    return positive_part + t.sum(axis=1)


def bernoulli_sample(probability, rng, out=None):
    """Draw 0/1 units with the given probabilities, in the probabilities' dtype."""
    uniform = rng.random(probability.shape, dtype=probability.dtype)
    return np.less(uniform, probability, out=out if out is not None else uniform)


def binary_states(n_units, start=0, stop=None, dtype=np.float64):
    """Rows ``start`` to ``stop`` of the 2**n_units binary states, unit 0 lowest bit."""
    stop = 2**n_units if stop is None else stop
    codes = np.arange(start, stop, dtype=np.int64)
    return ((codes[:, None] >> np.arange(n_units)) & 1).astype(dtype)


#: Data rates are clipped to [clip, 1 - clip] before the logit of a base-model bias.
BASE_RATE_CLIP = 1e-3


def base_bias_from_rates(data_rates, n_visible, n_state_units, clip=BASE_RATE_CLIP):
    """Bias of the independent base model over the state units, from visible data rates.

    Visible units get the logit of their clipped data rate (zero when ``data_rates`` is
    None); any other state units (hidden units of a general BM) get zero. Used as the
    ``beta = 0`` end of annealing paths (AIS, reverse AIS, the visited-states bound).
    """
    bias = np.zeros(n_state_units, dtype=np.float64)
    if data_rates is not None:
        rates = np.clip(np.asarray(data_rates, dtype=np.float64).ravel(), clip, 1 - clip)
        bias[:n_visible] = np.log(rates) - np.log1p(-rates)
    return bias


def rbm_free_energy(V, weights, visible_bias, hidden_bias):
    """Free energy F(v) of each row of ``V`` (dense or sparse), hidden units summed out."""
    pre_activation = np.asarray(V @ weights.T)
    pre_activation += hidden_bias
    return -np.asarray(V @ visible_bias).ravel() - softplus_row_sums(
        pre_activation, overwrite=True
    )


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
    def n_units(self):
        return self.n_visible + self.n_hidden

    @property
    def n_state_units(self):
        """Units a sampler state holds: the visible ones (hidden units are summed out)."""
        return self.n_visible

    @property
    def temperature(self):
        return 1.0

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

    def base_bias_from_rates(self, data_rates):
        """Visible bias of the independent base model: logit of the clipped data rates."""
        return base_bias_from_rates(data_rates, self.n_visible, self.n_state_units)

    def base_log_partition(self, base_bias):
        """log Z of ``interpolate(0, base_bias)``: independent visible units, free hidden."""
        return float(softplus(np.asarray(base_bias, dtype=np.float64)).sum()
                     + self.n_hidden * np.log(2.0))

    # -- mean field ----------------------------------------------------------------
    def coupling_matrix(self):
        """Symmetric (n_units, n_units) couplings, visible units first, zero diagonal."""
        n_visible = self.n_visible
        coupling = np.zeros((self.n_units, self.n_units), dtype=np.float64)
        coupling[:n_visible, n_visible:] = self.weights.T
        coupling[n_visible:, :n_visible] = self.weights
        return coupling

    def bias_vector(self):
        """Biases of all units, visible first, in float64."""
        return np.concatenate([self.visible_bias, self.hidden_bias]).astype(np.float64)

    # -- exact enumeration ---------------------------------------------------------
    @property
    def n_enumerated_units(self):
        """Units whose states exact enumeration must list: the smaller layer."""
        return min(self.n_visible, self.n_hidden)

    def enumerate_log_weights(self, chunk_size):
        """Yield unnormalised log-probabilities whose log-sum-exp is log Z.

        The smaller layer is enumerated, in chunks of up to ``chunk_size`` states, and
        the other layer summed in closed form; everything in float64. Within a chunk
        only the low bits of the enumerated states change, so their contribution to the
        other layer's input is computed once and each chunk adds a constant row for its
        high bits: no matrix product per chunk, only the softplus sums.
        """
        view = self.astype(np.float64)
        if self.n_visible <= self.n_hidden:  # -F(v) = b.v + sum softplus(W v + c)
            to_other, bias, other_bias = view.weights.T, view.visible_bias, view.hidden_bias
        else:  # -F(h) = c.h + sum softplus(W^T h + b)
            to_other, bias, other_bias = view.weights, view.hidden_bias, view.visible_bias
        n_units = self.n_enumerated_units
        n_low = min(n_units, max(0, int(chunk_size).bit_length() - 1))
        low = binary_states(n_low)
        low_input = low @ to_other[:n_low] + other_bias
        low_linear = low @ bias[:n_low]
        buffer = np.empty_like(low_input)
        for high in binary_states(n_units - n_low):
            np.add(low_input, high @ to_other[n_low:], out=buffer)
            yield low_linear + high @ bias[n_low:] + softplus_row_sums(buffer, overwrite=True)


class AugmentedRBM:
    """Training form of an RBM: all parameters in one (n_hidden + 1, n_visible + 1) array.

    ``params[:-1, :-1]`` is W, ``params[:-1, -1]`` the hidden bias c, ``params[-1, :-1]``
    the visible bias b and ``params[-1, -1]`` stays 0. States carry a trailing constant
    unit equal to 1. Then a single matrix product gives W v + c, one gives W^T h + b and
    one gives every gradient statistic at once (sum h v^T, sum h, sum v): few, large
    numpy calls, which is what makes small minibatches fast.

    ``beta`` arguments are per-row inverse temperatures, shape (n_rows, 1), used by
    parallel tempering (p_beta(v, h) proportional to exp(-beta E(v, h))).
    """

    def __init__(self, params):
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

    def _with_constant(self, n_rows, n_units):
        out = np.empty((n_rows, n_units + 1), dtype=self.params.dtype)
        out[:, -1] = 1
        return out

    def hidden_probability(self, V, beta=None):
        """P(h = 1 | v) with the constant unit appended, for augmented rows ``V``."""
        H = self._with_constant(V.shape[0], self.n_hidden)
        h = np.matmul(V, self.params[:-1].T, out=H[:, :-1])
        if beta is not None:
            h *= beta
        sigmoid(h, out=h)
        return H

    def sample_hidden(self, V, rng, beta=None):
        """Binary hidden states drawn given augmented visible rows ``V``."""
        H = self.hidden_probability(V, beta)
        h = H[:, :-1]
        np.less(rng.random(h.shape, dtype=h.dtype), h, out=h)
        return H

    def visible_probability(self, H, beta=None):
        """P(v = 1 | h) with the constant unit appended, for augmented rows ``H``."""
        V = self._with_constant(H.shape[0], self.n_visible)
        v = np.matmul(H, self.params[:, :-1], out=V[:, :-1])
        if beta is not None:
            v *= beta
        sigmoid(v, out=v)
        return V

    def sample_visible(self, H, rng, beta=None):
        """Binary visible states drawn given augmented hidden rows ``H``."""
        V = self.visible_probability(H, beta)
        v = V[:, :-1]
        np.less(rng.random(v.shape, dtype=v.dtype), v, out=v)
        return V

    def energy(self, V, H):
        """E(v, h) of paired augmented rows (the constant units add nothing)."""
        return -np.einsum("nj,nj->n", H @ self.params, V)

    @staticmethod
    def statistics(H, V):
        """Sum over rows of h v^T for augmented rows: W, c and b statistics together."""
        return H.T @ V
