"""Bernoulli RBM: energies, free energies, the model view, annealing and the training form.

Pure functions of numpy arrays and small read-only objects; no scikit-learn objects.
Units take the values 0 and 1. Conventions (the orientation of ``components_``):
``weights`` has shape (n_hidden, n_visible), ``visible_bias`` b has shape
(n_visible,), ``hidden_bias`` c has shape (n_hidden,), and

    E(v, h) = -h^T W v - b^T v - c^T h,
    F(v)    = -b^T v - sum_j softplus(c_j + (W v)_j),     p(v) = exp(-F(v)) / Z.
"""

from dataclasses import dataclass

import numpy as np

from ._capabilities import (
    ANNEALING,
    BINARY,
    ENUMERATION,
    MEAN_FIELD,
    RESTRICTED,
    Capabilities,
)
from ._energy import (
    RestrictedView,
    _annealing_base,
    base_bias_from_rates,
    bernoulli_sample,
    binary_states,
    draw_binary_chains,
    sigmoid,
    sigmoid_in_place,
    softplus,
    softplus_row_sums,
    sum_log,
)
from ._noise import NOISE_DTYPE, Noise


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
class RBMView(RestrictedView):
    """Read-only view of a Bernoulli RBM's parameters: the :class:`ModelView` of an RBM.

    The model is p(v, h) proportional to exp(h^T W v + b^T v + c^T h) over binary
    visible v and hidden h units (the orientation of ``RBM.components_``). Sampler
    states are visible vectors: the hidden units are summed out in closed form, and
    exact enumeration lists the states of the smaller layer only.

    Parameters
    ----------
    weights : ndarray of shape (n_hidden, n_visible)
        Weights W (``RBM.components_``).
    visible_bias : ndarray of shape (n_visible,)
        Visible biases b (``RBM.intercept_visible_``).
    hidden_bias : ndarray of shape (n_hidden,)
        Hidden biases c (``RBM.intercept_hidden_``).

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skboltz import RBM
    >>> from skboltz.partition import Exact
    >>> from skboltz.views import RBMView
    >>> X = load_digits().data / 16
    >>> rbm = RBM(n_components=8, n_iter=2, random_state=0).fit(X)
    >>> view = RBMView(rbm.components_, rbm.intercept_visible_, rbm.intercept_hidden_)
    >>> bool(Exact().estimate(view).value == rbm.estimate_log_partition().value)
    True
    """

    #: Binary units in two layers: every strategy of the restricted learning rule, and
    #: every log Z estimator.
    capabilities = Capabilities(
        units=(("visible", BINARY), ("hidden", BINARY)),
        operations={RESTRICTED, ENUMERATION, ANNEALING, MEAN_FIELD},
    )

    #: Its AIS chains (``annealing``) take one base model per chain, so paths from
    #: several base models run in the same batch.
    anneals_several_bases = True

    @property
    def n_state_units(self):
        """Units a sampler state holds: the visible ones (hidden units are summed out)."""
        return self.n_visible

    # -- conditionals and energies -------------------------------------------------
    def hidden_probability(self, V):
        return sigmoid(np.asarray(V @ self.weights.T + self.hidden_bias))

    def visible_probability(self, H):
        """Compute P(v_i = 1 | h) for each row of hidden states.

        Parameters
        ----------
        H : ndarray of shape (n_rows, n_hidden)
            Hidden states (or probabilities).

        Returns
        -------
        probability : ndarray of shape (n_rows, n_visible)
            The visible units' conditional probabilities of being on.
        """
        return sigmoid(H @ self.weights + self.visible_bias)

    def free_energy(self, V):
        return rbm_free_energy(V, self.weights, self.visible_bias, self.hidden_bias)

    def energy(self, V, H):
        """Compute the joint energy E(v, h) = -h^T W v - b^T v - c^T h of paired rows.

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_visible)
            Visible states.
        H : ndarray of shape (n_rows, n_hidden)
            Hidden states, one per row of ``V``.

        Returns
        -------
        energy : ndarray of shape (n_rows,)
            E(v, h) of each pair.
        """
        return rbm_energy(V, H, self.weights, self.visible_bias, self.hidden_bias)

    def log_unnormalized(self, S):
        return -self.free_energy(S)

    def _training_form(self):
        """The training form of these parameters (a new :class:`AugmentedRBM`)."""
        return AugmentedRBM.from_view(self)

    def gibbs_step(self, S, rng):
        H = bernoulli_sample(self.hidden_probability(S), rng)
        return bernoulli_sample(self.visible_probability(H), rng)

    # -- inference: what the estimators' transform, reconstruct, gibbs and sample use --
    def visible_mean(self, H):
        return self.visible_probability(H)

    def sample_visible(self, H, rng):
        return bernoulli_sample(self.visible_probability(H), rng)

    def visible_gibbs_step(self, V, rng):
        return self.gibbs_step(V, rng)

    def draw_samples(self, n_samples, n_steps, start, rng, means=False):
        return draw_binary_chains(  # with means: the last step's h, then P(v = 1 | h)
            self, n_samples, n_steps, start, rng, means,
            lambda V, rng: bernoulli_sample(self.hidden_probability(V), rng))

    def interpolate(self, beta, base_bias):
        # The joint distribution of this RBM is p_A(v, h)^(1 - beta) p(v, h)^beta up to
        # Z, with p_A the independent model with biases base_bias (all units, visible
        # first; with only n_visible entries the hidden biases are 0). With zero hidden
        # base biases: the path of Salakhutdinov & Murray (2008).
        base_visible, base_hidden = self._split_base(base_bias)
        return RBMView(
            beta * self.weights,
            (1.0 - beta) * base_visible + beta * self.visible_bias,
            (1.0 - beta) * base_hidden + beta * self.hidden_bias,
        )

    def _split_base(self, base_bias):
        base_bias = np.asarray(base_bias, dtype=np.float64)
        hidden = base_bias[self.n_visible :]
        return base_bias[: self.n_visible], hidden if hidden.size else np.zeros(self.n_hidden)

    def base_bias_from_rates(self, data_rates):
        return base_bias_from_rates(data_rates, self.n_visible, self.n_state_units)

    def annealing_base(self, data_rates, kind="data"):
        """Return the biases of an independent base model for annealing, all units.

        ``kind="data"``: visible units at the logits of the clipped data rates, hidden
        units 0 (uniform). ``"response"``: the same visible units, hidden units at
        their input ``W r + c`` from the clipped data rates r (r = 1/2 without data).
        ``"model"``: the model's own biases (b, c), so that the path anneals the
        weights only. An optional member of the view protocol:
        :class:`~skboltz.partition.AIS` uses it when present.

        Parameters
        ----------
        data_rates : ndarray of shape (n_visible,) or None
            Mean of each visible unit over the training data.
        kind : {"data", "response", "model"}, default="data"
            Which base model.

        Returns
        -------
        base_bias : ndarray of shape (n_units,)
            The base model's biases, visible units first, in float64.
        """
        return _annealing_base(self, data_rates, kind, lambda rates: (
            np.asarray(self.weights, dtype=np.float64) @ rates + self.hidden_bias
        ))

    def base_log_partition(self, base_bias):
        base_visible, base_hidden = self._split_base(base_bias)
        return float(softplus(base_visible).sum() + softplus(base_hidden).sum())

    def annealing(self, base_bias, n_chains, rng, dtype=np.float32):
        """Return annealed-importance-sampling chains from a base model to this one.

        An optional member of the view protocol: :class:`~skboltz.partition.AIS`
        runs these chains when present (otherwise :meth:`interpolate`,
        :meth:`log_unnormalized` and :meth:`gibbs_step` in float64).

        Parameters
        ----------
        base_bias : ndarray of shape (n_units,)
            Biases of the independent base model, visible units first.
        n_chains : int
            Number of chains.
        rng : numpy.random.Generator
            Seeds the chains' random numbers.
        dtype : float32 or float64, default=float32
            Type of the elementwise work (log weights are accumulated in float64).

        Returns
        -------
        chains : RBMAnnealing
            With ``start_from_base``, ``set_states``, ``add_log_ratio`` and
            ``transition``.
        """
        return RBMAnnealing(self, base_bias, n_chains, rng, dtype)

    # -- mean field ----------------------------------------------------------------
    def coupling_matrix(self):
        n_visible = self.n_visible
        coupling = np.zeros((self.n_units, self.n_units), dtype=np.float64)
        coupling[:n_visible, n_visible:] = self.weights.T
        coupling[n_visible:, :n_visible] = self.weights
        return coupling

    def bias_vector(self):
        return np.concatenate([self.visible_bias, self.hidden_bias]).astype(np.float64)

    # -- exact enumeration ---------------------------------------------------------
    @property
    def n_enumerated_units(self):
        """Units whose states exact enumeration must list: the smaller layer."""
        return min(self.n_visible, self.n_hidden)

    def with_fewer_enumerated_units(self, n_units):
        """Return the view with only the first ``n_units`` units of the enumerated layer.

        An optional member of the view protocol: :class:`~skboltz.partition.Exact`
        times the enumeration of this smaller model to forecast its own cost.

        Parameters
        ----------
        n_units : int
            Units of the smaller layer to keep.

        Returns
        -------
        view : RBMView
            A view over slices of the same arrays.
        """
        if self.n_visible <= self.n_hidden:
            return RBMView(self.weights[:, :n_units], self.visible_bias[:n_units],
                           self.hidden_bias)
        return RBMView(self.weights[:n_units], self.visible_bias, self.hidden_bias[:n_units])

    def enumerate_log_weights(self, chunk_size):
        # The smaller layer is enumerated in chunks of up to chunk_size states and the
        # other summed in closed form, -F(s) = a.s + sum_i softplus(x_i) with x = s W' +
        # b' its inputs, in float64. Within a chunk only the low bits of the enumerated
        # states change: x = L + H with L the low bits' inputs (one matrix for all
        # chunks) and H a row per chunk. So no exponential is needed per state: with
        # E = exp(L - max L) computed once and m_i = max(0, max L_i + H_i),
        #     softplus(x_i) = m_i + log(exp(-m_i) + E_i exp(max L_i + H_i - m_i)),
        # a product and a sum per entry, whose logarithms are taken for products of
        # several entries at once (sum_log; each factor lies in [exp(-m_i), 2]).
        # Chunks whose inputs exceed 600 in size fall back to softplus_row_sums.
        view = self.astype(np.float64)
        if self.n_visible <= self.n_hidden:  # -F(v) = b.v + sum softplus(W v + c)
            to_other, bias, other_bias = view.weights.T, view.visible_bias, view.hidden_bias
        else:  # -F(h) = c.h + sum softplus(W^T h + b)
            to_other, bias, other_bias = view.weights, view.hidden_bias, view.visible_bias
        n_units = self.n_enumerated_units
        n_low = min(n_units, max(0, int(chunk_size).bit_length() - 1))
        low = binary_states(n_low)
        # Inputs with the other layer's units as rows: the products below then run
        # over long contiguous rows.
        low_input = (low @ to_other[:n_low] + other_bias).T.copy()
        low_linear = low @ bias[:n_low]
        low_top = low_input.max(axis=1)
        low_exp = np.exp(low_input - low_top[:, None])
        buffer = np.empty_like(low_input)
        for high in binary_states(n_units - n_low):
            high_input = high @ to_other[n_low:]
            top = low_top + high_input  # the largest input of each unit in the chunk
            shift = np.maximum(top, 0.0)
            linear = low_linear + high @ bias[n_low:]
            if shift.max() > _EXACT_MAX_SHIFT:  # exp(-shift) would underflow
                np.add(low_input.T, high_input, out=buffer.T)
                yield linear + softplus_row_sums(buffer.T, overwrite=True)
                continue
            np.multiply(low_exp, np.exp(top - shift)[:, None], out=buffer)
            buffer += np.exp(-shift)[:, None]
            # A product of k factors is at least exp(-k max(shift)) > 1e-300.
            factors = 2 ** int(np.log2(_EXACT_MAX_SHIFT / max(shift.max(), 1.0)))
            yield linear + shift.sum() + sum_log(buffer, min(factors, 512))


#: Above this input size, exact RBM enumeration takes logarithms entry by entry.
_EXACT_MAX_SHIFT = 600.0


#: Integer views that reach the sign bit of float32 / float64 numbers.
_SIGN_BITS = {
    np.dtype(np.float32): (np.int32, np.int32(-(2**31))),
    np.dtype(np.float64): (np.int64, np.int64(-(2**63))),
}

#: Ratios (1 + exp(-|y'|)) / (1 + exp(-|y|)) lie in (1/2, 2): a product of 64 of them
#: stays well inside the float32 range, so one logarithm serves 64 hidden units.
_RATIO_FACTORS = 64


class RBMAnnealing:
    """The chains of annealed importance sampling (AIS) on an RBM.

    The path runs from an independent model with biases ``base_bias`` (a over the
    visible, d over the hidden units) at beta = 0 to the RBM at beta = 1, with the
    hidden units summed out:

        log p*_beta(v) = ((1 - beta) a + beta b) . v
                         + sum_j softplus(beta (W v + c)_j + (1 - beta) d_j).

    The states are the visible units of ``n_chains`` chains. :meth:`add_log_ratio`
    adds ``log p*_beta'(v) - log p*_beta(v)`` of the current states to float64 log
    weights; :meth:`transition` makes one block-Gibbs step v -> h -> v at a beta. One
    matrix product W v serves both the weight increment and the hidden draw of the
    following transition, and so do the exponentials: with y the hidden inputs,
    ``softplus(y) = (y + |y|) / 2 + log(1 + exp(-|y|))``, the logarithms are taken of
    products of 64 ratios at once (:func:`sum_log`), and ``1 + exp(-|y|)`` also gives
    the hidden draw (``u (1 + exp(-|y|)) < 1`` has probability sigmoid(|y|)). Units
    are rows and chains columns, so the reductions over units run along long rows.
    The elementwise work is in ``dtype`` (float32 by default: each increment carries
    rounding errors of about 1e-6 nats, the transitions' probabilities relative
    errors of 1e-7), the log weights are accumulated in float64.

    Several base models can share one set of chains: with ``base_bias`` of shape
    (n_chains, n_units) chain k starts from, and is annealed from, the base model of
    row k (one matrix product serves all of them).

    Parameters
    ----------
    view : RBMView
    base_bias : ndarray of shape (n_units,) or (n_chains, n_units)
        Biases of the base model, visible units first; one row per chain for
        chains from several base models.
    n_chains : int
    rng : numpy.random.Generator
        Seeds the chains' own (SFC64) stream of random numbers.
    dtype : float32 or float64, default=float32
    """

    def __init__(self, view, base_bias, n_chains, rng, dtype=np.float32):
        dtype = np.dtype(dtype)
        weights = np.asarray(view.weights, dtype=np.float64)
        n_hidden, n_visible = weights.shape
        base_bias = np.asarray(base_bias, dtype=np.float64)
        if base_bias.ndim == 2:  # one base per chain: columns, as the states
            base_visible = base_bias[:, :n_visible].T
            base_hidden = (base_bias[:, n_visible:].T if base_bias.shape[1] > n_visible
                           else np.zeros((n_hidden, n_chains)))
        else:
            base_visible, base_hidden = (part[:, None] for part in view._split_base(base_bias))
        visible_bias = np.asarray(view.visible_bias, dtype=np.float64)
        hidden_bias = np.asarray(view.hidden_bias, dtype=np.float64)
        self.dtype = dtype
        self.n_chains = n_chains
        self._weights = np.ascontiguousarray(weights, dtype=dtype)
        self._weights_t = np.ascontiguousarray(weights.T, dtype=dtype)
        # Hidden inputs on the path: y_beta = beta P + d with P = W v + c - d (a column,
        # or one column per chain).
        self._shift = (hidden_bias[:, None] - base_hidden).astype(dtype)
        self._base_hidden = base_hidden.astype(dtype) if np.any(base_hidden) else None
        # The visible term's slope and the column sums of W (for sum_j P_j): the parts
        # of the increment linear in v, in float64; with one base per chain, the slope
        # is a matrix (visible units x chains).
        slope = visible_bias[:, None] - base_visible
        self._slope = slope.astype(dtype) if slope.shape[1] > 1 else None
        self._linear = np.stack([slope[:, 0] if self._slope is None else np.zeros(n_visible),
                                 weights.sum(axis=0)])
        self._linear_offset = self._shift.astype(np.float64).sum(axis=0)
        self._coefficients = np.empty(n_visible, dtype=dtype)
        self._visible_bias = visible_bias
        self._base_visible = base_visible
        # The chains' own fast generator (SFC64), seeded from rng: deterministic (its
        # numbers are float32 whatever the dtype, as in training).
        self._noise = Noise.seeded_from(rng)
        self._int_type, self._sign_bit = _SIGN_BITS[dtype]
        hidden_shape = (n_hidden, n_chains)
        self._visible = np.empty((n_visible, n_chains), dtype=dtype)
        self._input = np.empty(hidden_shape, dtype=dtype)
        # The hidden inputs at a pair of betas, side by side: one call per operation.
        self._pair = np.empty((2,) + hidden_shape, dtype=dtype)
        self._pair_bits = self._pair.view(self._int_type)
        self._betas = np.empty((2, 1, 1), dtype=dtype)
        self._scratch = np.empty(hidden_shape, dtype=dtype)
        self._positive = np.empty(hidden_shape, dtype=bool)
        self._chosen = np.empty(hidden_shape, dtype=bool)
        self._hidden = np.empty(hidden_shape, dtype=dtype)
        self._visible_input = np.empty((n_visible, n_chains), dtype=dtype)
        self._visible_shift = np.empty(base_visible.shape, dtype=dtype)
        self._base_visible_column = base_visible
        self._visible_bias_column = visible_bias.astype(dtype)[:, None]
        self._ready = None  # (beta, 1 + exp(-|y_beta|)) for the next transition

    @property
    def states(self):
        """The chains' visible states, shape (n_chains, n_visible)."""
        return self._visible.T

    def start_from_base(self):
        """Draw every chain's state from the base model."""
        noise = self._noise.logistic(self._visible.shape)
        np.greater(self._base_visible.astype(self.dtype), noise, out=self._visible)
        self._ready = None

    def set_states(self, X):
        """Start the chains at the visible rows ``X`` (one row per chain)."""
        self._visible[...] = np.asarray(X).T
        self._ready = None

    def _project(self):
        np.matmul(self._weights, self._visible, out=self._input)
        self._input += self._shift

    def _negative_abs_input(self, beta, out, positive=None):
        """``out = -|y_beta|``, and ``positive = y_beta > 0`` when asked."""
        np.multiply(self._input, self.dtype.type(beta), out=out)
        if self._base_hidden is not None:
            out += self._base_hidden
        if positive is not None:
            np.greater(out, 0, out=positive)
        bits = out.view(self._int_type)
        np.bitwise_or(bits, self._sign_bit, out=bits)  # set the sign bit: -|y|

    def add_log_ratio(self, beta, beta_next, log_w, sign=1.0, then_sample_at=None):
        """``log_w += sign * (log p*_beta_next(v) - log p*_beta(v))`` for the states.

        ``then_sample_at`` (``beta`` or ``beta_next``) names the beta of the next
        :meth:`transition`, which then reuses this step's products and exponentials.
        """
        self._project()
        step = beta_next - beta
        # The terms linear in v: step * (visible slope . v + sum_j P_j / 2). Their
        # rounding in dtype is scaled by the step, like the rest of the increment.
        np.matmul((step, 0.5 * step), self._linear, out=self._coefficients, casting="unsafe")
        increment = self._coefficients @ self._visible
        if self._slope is not None:  # each chain's own base: its own slope
            np.multiply(self._slope, self._visible, out=self._visible_input)
            increment += self.dtype.type(step) * self._visible_input.sum(axis=0)
        # -|y| at both betas at once, and the sign of y at the next transition's beta.
        pair = self._pair
        self._betas[:, 0, 0] = beta, beta_next
        np.multiply(self._input, self._betas, out=pair)
        if self._base_hidden is not None:
            pair += self._base_hidden
        sample = {beta: 0, beta_next: 1}.get(then_sample_at)
        if sample is not None:
            np.greater(pair[sample], 0, out=self._positive)
        np.bitwise_or(self._pair_bits, self._sign_bit, out=self._pair_bits)
        # softplus(y) = (y + |y|) / 2 + log(1 + exp(-|y|)) summed over j, at beta_next
        # minus at beta: the y part is linear (above), then |y| and the logarithms.
        low, high, ratio = pair[0], pair[1], self._scratch
        np.subtract(low, high, out=ratio)  # |y_next| - |y|
        nonlinear = ratio.sum(axis=0)
        nonlinear *= 0.5
        np.exp(pair, out=pair)
        pair += 1
        np.divide(high, low, out=ratio)
        nonlinear += sum_log(ratio, _RATIO_FACTORS)
        increment += nonlinear
        total = increment.astype(np.float64)
        total += 0.5 * step * self._linear_offset
        if sign != 1.0:
            total *= sign
        log_w += total
        self._ready = None if sample is None else (then_sample_at, pair[sample])

    def transition(self, beta):
        """One block-Gibbs step v -> h -> v of every chain at ``beta``."""
        if beta == 0:  # the base model: independent visible units
            self.start_from_base()
            return
        if self._ready is not None and self._ready[0] == beta:
            one_plus = self._ready[1]
        else:
            self._project()
            one_plus = self._scratch
            self._negative_abs_input(beta, one_plus, self._positive)
            np.exp(one_plus, out=one_plus)
            one_plus += 1
        self._ready = None
        # h = 1 with probability sigmoid(y): u (1 + exp(-|y|)) < 1 has probability
        # sigmoid(|y|), and its complement sigmoid(-|y|) serves the units with y <= 0.
        np.multiply(one_plus, self._noise.uniform(one_plus.shape), out=one_plus)
        np.less(one_plus, 1, out=self._chosen)
        np.equal(self._chosen, self._positive, out=self._hidden)
        # v: beta (W^T h + b) + (1 - beta) a = beta (W^T h + b + a (1 - beta) / beta)
        np.matmul(self._weights_t, self._hidden, out=self._visible_input)
        np.multiply(self._base_visible_column, (1.0 - beta) / beta, out=self._visible_shift,
                    casting="unsafe")  # float64 product, rounded once to dtype
        self._visible_shift += self._visible_bias_column
        self._visible_input += self._visible_shift
        self._visible_input *= self.dtype.type(beta)
        noise = self._noise.logistic(self._visible.shape)
        np.greater(self._visible_input, noise, out=self._visible)


class RBMLayout:
    """Named blocks of an RBM's packed parameters (and of its velocity, the same shape).

    The array has shape (n_hidden + 1, n_visible + 1)::

        [ W  (n_hidden, n_visible) | c  hidden biases                            ]
        [ b  visible biases        | the constant units' coupling (not learnt)   ]

    Each block is an index: ``params[RBMLayout.weights]`` is W, a view. States in the
    training form carry a trailing constant unit the same way (``rows[RBMLayout.units]``).
    """

    weights = np.s_[:-1, :-1]
    hidden_bias = np.s_[:-1, -1]
    visible_bias = np.s_[-1, :-1]
    #: The coupling of the two constant units (``AugmentedRBM.ALWAYS_ON``).
    constant = np.s_[-1, -1]
    #: What a row of hidden states (with its constant unit) multiplies into visible
    #: inputs: W over b.
    visible_columns = np.s_[:, :-1]
    #: Of rows of states: the units, and the trailing constant unit.
    units = np.s_[..., :-1]
    constant_unit = np.s_[..., -1]

    @staticmethod
    def pack(weights, visible_bias, hidden_bias, dtype):
        """A new packed array holding the three blocks (the constant coupling 0)."""
        weights = np.asarray(weights)
        params = np.zeros((weights.shape[0] + 1, weights.shape[1] + 1), dtype=dtype)
        params[RBMLayout.weights] = weights
        params[RBMLayout.hidden_bias] = hidden_bias
        params[RBMLayout.visible_bias] = visible_bias
        return params


class AugmentedRBM:
    """Training form of an RBM: all parameters in one (n_hidden + 1, n_visible + 1) array.

    The blocks of ``params`` are named by :class:`RBMLayout`: W, the hidden bias c and
    the visible bias b. States carry a trailing constant unit, so a single matrix
    product gives W v + c, one gives W^T h + b and one gives every gradient statistic at
    once (sum h v^T, sum h, sum v): few, large numpy calls, which is what makes small
    minibatches fast.

    The two constant units are ordinary units coupled by the corner weight
    ``params[RBMLayout.constant] = ALWAYS_ON``: given each other they are on with probability
    sigmoid(ALWAYS_ON + ...) = 1, so products over whole rows (constant column
    included) sample and transform them like any unit. Every array stays contiguous,
    which matters as much as the number of calls. The constructor sets the corner; it
    is not part of the model (``view`` and ``energy`` leave it out).

    ``beta`` arguments are per-row inverse temperatures, shape (n_rows, 1), used by
    parallel tempering (p_beta(v, h) proportional to exp(-beta E(v, h))).
    """

    #: What ``negative_visible="auto"`` of the sampling strategies means here: the
    #: visible units' probabilities in the negative statistics, which make far better
    #: features of grey-level data (see the RBM user guide).
    auto_negative_visible = "mean"

    #: Coupling of the two constant units: far beyond any input the other weights give
    #: (sigmoid is 1 in float64 above ~40), yet well below where training is declared
    #: diverged (1e6).
    ALWAYS_ON = 1e5

    def __init__(self, params):
        params[RBMLayout.constant] = self.ALWAYS_ON
        self.params = params
        self.n_hidden = params.shape[0] - 1
        self.n_visible = params.shape[1] - 1

    @classmethod
    def from_view(cls, view):
        """The training form of an :class:`RBMView`'s parameters (a new array)."""
        return cls(RBMLayout.pack(view.weights, view.visible_bias, view.hidden_bias,
                                  view.dtype))

    @staticmethod
    def augment(X):
        """Append the constant unit to rows of ``X`` (dense)."""
        out = np.empty((X.shape[0], X.shape[1] + 1), dtype=X.dtype)
        out[RBMLayout.units] = X
        out[RBMLayout.constant_unit] = 1
        return out

    def chains_from_rows(self, rows, rng):
        """Augmented binary chains drawn from data rows (each unit on with its value)."""
        rows = np.clip(rows, 0, 1)
        chains = self.augment(rows.astype(self.params.dtype, copy=False))
        # float32 draws for either dtype: float32 and float64 fits start the same chains
        units = chains[RBMLayout.units]
        np.less(rng.random(rows.shape, dtype=NOISE_DTYPE), units, out=units)
        return chains

    def view(self):
        """The :class:`RBMView` of the current parameters (no copies)."""
        p = self.params
        return RBMView(p[RBMLayout.weights], p[RBMLayout.visible_bias], p[RBMLayout.hidden_bias])

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

    def hidden_probability(self, V):
        """P(h = 1 | v) for augmented rows ``V``; the constant unit comes out as 1."""
        return sigmoid(self.hidden_input(V))

    def visible_probability(self, H):
        """P(v = 1 | h) for augmented rows ``H``; the constant unit comes out as 1."""
        return sigmoid(self.visible_input(H))

    def draw_hidden(self, V, noise, out, beta=None):
        """Fill augmented hidden rows ``out`` with a draw from P(h | v) (at ``beta``)."""
        x = np.dot(V, self.params.T, out=out)
        if beta is None:  # called every update: the short path
            return np.greater(x, noise.logistic(x.shape), out=x)
        return self._draw_tempered(x, noise, beta)

    @staticmethod
    def draw_hidden_from_input(x, noise, out):
        """Fill augmented hidden rows ``out`` with a draw from P(h | v) given the hidden
        inputs ``x`` of v (as :meth:`draw_hidden` draws from the inputs it computes)."""
        return np.greater(x, noise.logistic(x.shape), out=out)

    def draw_visible(self, H, noise, out, beta=None):
        """Fill augmented visible rows ``out`` with a draw from P(v | h) (at ``beta``)."""
        x = np.dot(H, self.params, out=out)
        if beta is None:
            return np.greater(x, noise.logistic(x.shape), out=x)
        return self._draw_tempered(x, noise, beta)

    # The two below run in training, under np.errstate(over="ignore").
    def visible_mean(self, H, out):
        """Fill augmented visible rows ``out`` with P(v = 1 | h), the mean of v given h
        (the constant unit comes out as 1)."""
        return sigmoid_in_place(np.dot(H, self.params, out=out))

    def draw_visible_and_mean(self, H, noise, out, mean):
        """Fill ``out`` with a draw from P(v | h) and ``mean`` with P(v = 1 | h): one
        product for both (the draw compares the inputs with logistic noise first, as
        :meth:`draw_visible` does, so it makes the same draws)."""
        x = np.dot(H, self.params, out=mean)
        np.greater(x, noise.logistic(x.shape), out=out)
        sigmoid_in_place(x)
        return out

    @staticmethod
    def _draw_tempered(x, noise, beta):
        x *= beta
        np.greater(x, noise.logistic(x.shape), out=x)
        x[RBMLayout.constant_unit] = 1  # at beta = 0 the constant unit would be a coin flip
        return x

    def energy(self, V, H):
        """E(v, h) of paired augmented rows (the constant units' coupling left out)."""
        p, units = self.params, RBMLayout.units
        return (-np.einsum("nj,nj->n", H @ p[RBMLayout.visible_columns], V[units])
                - H[units] @ p[RBMLayout.hidden_bias])

    def reconstruction_error(self, X):
        """Mean squared error of the mean-field reconstruction P(v | P(h | x)) of rows X."""
        X = self.augment(X.astype(self.params.dtype, copy=False))
        reconstruction = sigmoid(self.visible_input(sigmoid(self.hidden_input(X))))
        reconstruction -= X
        return float(np.mean(np.square(reconstruction[RBMLayout.units]), dtype=np.float64))

    @staticmethod
    def statistics(H, V, means=False):
        """Sum over rows of h v^T for augmented rows: W, c and b statistics together.

        ``means`` says that the rows of ``V`` are means of v given some h rather than
        states; the statistics are linear in v, so they are the same either way.
        """
        return H.T @ V
