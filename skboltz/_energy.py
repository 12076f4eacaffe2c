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
from typing import Protocol, runtime_checkable

import numpy as np

from ._noise import NOISE_DTYPE, Noise


def sigmoid(x, out=None):
    """Logistic function ``1 / (1 + exp(-x))``. Works in place with ``out=x``.

    Built on ``exp`` rather than ``tanh``: numpy's float64 ``tanh`` is fast only with
    AVX-512 (on an AVX2 CPU it measured 13-21 ns per element against 5 ns for ``exp``;
    float32 2.6 and 1.3 ns). For very negative x, exp(-x) overflows to inf and
    1 / inf is the exact limit 0.
    """
    x = np.asarray(x)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    out = np.negative(x, out=out)
    with np.errstate(over="ignore"):
        np.exp(out, out=out)
    out += 1
    return np.reciprocal(out, out=out)


def softplus(x):
    """``log(1 + exp(x))`` without overflow."""
    return np.logaddexp(0, x)


def softplus_row_sums(x, overwrite=False):
    """``softplus(x).sum(axis=1)`` for a 2-D array, several times faster.

    Uses softplus(x) = max(x, 0) + log(1 + exp(-|x|)) with vectorised ufuncs in place
    (``np.logaddexp`` is a slow scalar loop); the hot part of RBM free energies and of
    exact enumeration. ``log(1 + t)`` rather than ``log1p(t)``: for t in (0, 1] it is
    off by at most half an ulp of 1 per term, and numpy's ``log1p`` is a scalar loop on
    AVX2 (12-14 ns per element against 2-4 ns for ``log``). Agrees with
    ``np.logaddexp(0, x).sum(1)`` to ~1e-13. With ``overwrite=True`` the array ``x`` is
    used as scratch space (no allocation).
    """
    x = np.asarray(x)
    row_sums = x.sum(axis=1)
    t = np.abs(x, out=x if overwrite else None)
    positive_part = 0.5 * (row_sums + t.sum(axis=1))  # sum of max(x, 0)
    np.negative(t, out=t)
    np.exp(t, out=t)
    t += 1
    np.log(t, out=t)
    return positive_part + t.sum(axis=1)


def sum_log(x, max_factors):
    """``np.log(x).sum(axis=0)`` for positive ``x``, overwriting ``x``, with fewer logarithms.

    Multiplies the rows pairwise (the first half by the second, repeatedly) until each
    remaining entry is a product of up to ``max_factors`` entries, then takes one
    logarithm per product. The caller picks ``max_factors`` so that no product can
    leave the floating-point range (e.g. 64 for factors in (1/2, 2) in float32). Each
    product adds at most one rounding per factor, as many as the sum of logarithms.
    Small arrays skip the halving (a call costs more than the logarithms it saves).
    """
    height = x.shape[0]
    factors = 1
    while 2 * factors <= max_factors and height > 1 and x[:height].size > 4096:
        half = height // 2
        # An odd height leaves the middle row alone until the next round.
        np.multiply(x[:half], x[height - half : height], out=x[:half])
        height -= half
        factors *= 2
    return np.log(x[:height], out=x[:height]).sum(axis=0)


def bernoulli_sample(probability, rng, out=None):
    """Draw 0/1 units with the given probabilities, in the probabilities' dtype."""
    uniform = rng.random(probability.shape, dtype=probability.dtype)
    return np.less(uniform, probability, out=out if out is not None else uniform)


def binary_states(n_units, start=0, stop=None, dtype=np.float64):
    """Rows ``start`` to ``stop`` of the 2**n_units binary states, unit 0 lowest bit."""
    stop = 2**n_units if stop is None else stop
    return states_of_codes(np.arange(start, stop, dtype=np.int64), n_units, dtype)


def states_of_codes(codes, n_units, dtype=np.float64):
    """The binary states with the given integer codes (row k of ``binary_states`` has code k)."""
    codes = np.asarray(codes, dtype=np.int64)
    return ((codes[:, None] >> np.arange(n_units)) & 1).astype(dtype)


#: Data rates are clipped to [RATE_CLIP, 1 - RATE_CLIP] wherever they start a bias or a
#: magnetisation: a unit that is always (or never) on in the data would otherwise get an
#: infinite logit.
RATE_CLIP = 1e-3


def clipped_rates(rates):
    """Data rates (means of binary units) as float64, clipped into [RATE_CLIP, 1 - RATE_CLIP]."""
    return np.clip(np.asarray(rates, dtype=np.float64).ravel(), RATE_CLIP, 1 - RATE_CLIP)


def logit_of_rates(rates):
    """log(p / (1 - p)) of the clipped data rates: the biases of independent units that
    match them (float64)."""
    rates = clipped_rates(rates)
    return np.log(rates) - np.log1p(-rates)


def base_bias_from_rates(data_rates, n_visible, n_state_units):
    """Bias of the independent base model over the state units, from visible data rates.

    Visible units get the logit of their clipped data rate (zero when ``data_rates`` is
    None); any other state units (hidden units of a general BM) get zero. Used as the
    ``beta = 0`` end of annealing paths (AIS, reverse AIS, the visited-states bound).
    """
    bias = np.zeros(n_state_units, dtype=np.float64)
    if data_rates is not None:
        bias[:n_visible] = logit_of_rates(data_rates)
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


@runtime_checkable
class ModelView(Protocol):
    """The interface of a read-only model view (a :class:`typing.Protocol`).

    Learning strategies and log Z estimators see a model only through a view: its
    parameter arrays and these operations. Units are binary (0/1). A view describes
    p(s) proportional to exp(-E(s) / T) over the *state units* s a sampler keeps: for
    an RBM the visible units (the hidden ones are summed out in closed form), for a
    general Boltzmann machine all units. ``isinstance(obj, ModelView)`` checks that
    the members exist; :class:`RBMView` and :class:`BMView` implement it.

    Attributes
    ----------
    n_visible : int
        Number of visible units (the data's features), the first units.
    n_hidden : int
        Number of hidden units.
    n_units : int
        ``n_visible + n_hidden``.
    n_state_units : int
        Units of a sampler state (see above).
    n_enumerated_units : int
        Units whose 2**n states exact enumeration lists (the rest summed in closed
        form).
    temperature : float
        T in p(s) proportional to exp(-E(s) / T).
    dtype : numpy.dtype
        Floating-point type of the parameter arrays.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.views import BMView, ModelView, RBMView
    >>> rbm = RBMView(np.zeros((2, 3)), np.zeros(3), np.zeros(2))
    >>> bm = BMView(np.zeros((4, 4)), np.zeros(4), n_visible=3)
    >>> isinstance(rbm, ModelView) and isinstance(bm, ModelView)
    True
    >>> rbm.n_state_units, bm.n_state_units  # an RBM's sampler keeps the visible units
    (3, 4)
    """

    n_visible: int
    n_hidden: int
    n_units: int
    n_state_units: int
    n_enumerated_units: int
    temperature: float
    dtype: np.dtype

    def astype(self, dtype):
        """Return the same model with its parameters in another floating-point type.

        Parameters
        ----------
        dtype : numpy dtype
            The new type, e.g. ``np.float64``.

        Returns
        -------
        view : model view
            A view of the same kind over converted copies of the arrays.
        """
        ...

    def hidden_probability(self, V):
        """Compute P(h_j = 1 | v) for each row of visible states.

        Exact for an RBM; for a general Boltzmann machine exact in closed form when the
        hidden units are not coupled to each other, else by enumerating their states.

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_visible)
            Visible states (or probabilities).

        Returns
        -------
        probability : ndarray of shape (n_rows, n_hidden)
            The hidden units' conditional probabilities of being on.
        """
        ...

    def free_energy(self, V):
        """Compute the free energy F(v) of each row, hidden units summed out.

        ``log p(v) = -F(v) - log Z``, with F in units of the temperature.

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_visible)
            Visible states.

        Returns
        -------
        free_energy : ndarray of shape (n_rows,)
            F(v) of each row.
        """
        ...

    def log_unnormalized(self, S):
        """Compute log p*(s), the unnormalised log-probability of each state.

        ``p(s) = p*(s) / Z``; for an RBM the states are visible vectors and
        log p*(v) = -F(v).

        Parameters
        ----------
        S : ndarray of shape (n_rows, n_state_units)
            Binary states of the state units.

        Returns
        -------
        log_p : ndarray of shape (n_rows,)
            The value log p*(s) of each row, in float64.
        """
        ...

    def gibbs_step(self, S, rng):
        """Run one Gibbs transition from each row; it leaves p(s) invariant.

        An RBM does one block step v -> h -> v; a general Boltzmann machine one
        block Gibbs sweep over all units (uncoupled units together, coupled ones in
        turn), at the model's temperature.

        Parameters
        ----------
        S : ndarray of shape (n_rows, n_state_units)
            Binary starting states (one chain per row).
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        S_new : ndarray of shape (n_rows, n_state_units)
            The new binary states.
        """
        ...

    def interpolate(self, beta, base_bias):
        """Return the model of the annealing path at inverse temperature ``beta``.

        Its unnormalised log-probability is ``(1 - beta) log p_base(s) + beta log p*(s)``
        (up to a constant), with ``p_base`` the independent model with biases
        ``base_bias``: the path of annealed importance sampling (Neal, "Annealed
        importance sampling", 2001; Salakhutdinov & Murray, "On the quantitative
        analysis of deep belief networks", 2008).

        Parameters
        ----------
        beta : float
            From 0 (the base model) to 1 (this model).
        base_bias : ndarray of shape (n_state_units,)
            Biases of the independent base model (an RBM view also takes all
            ``n_units``, giving its hidden units base biases too).

        Returns
        -------
        view : model view
            The intermediate model, at temperature 1.
        """
        ...

    def base_bias_from_rates(self, data_rates):
        """Return the biases of an independent base model matching the data's rates.

        Visible units get the logit of their (clipped) rate; other state units 0.

        Parameters
        ----------
        data_rates : ndarray of shape (n_visible,) or None
            Mean of each visible unit over the training data; None gives all zeros.

        Returns
        -------
        base_bias : ndarray of shape (n_state_units,)
            The base model's biases, in float64.
        """
        ...

    def base_log_partition(self, base_bias):
        """Compute log Z of ``interpolate(0, base_bias)`` in closed form.

        Parameters
        ----------
        base_bias : ndarray of shape (n_state_units,)
            Biases of the independent base model (or ``n_units``, as for
            :meth:`interpolate`).

        Returns
        -------
        log_z : float
            Its log-partition function.
        """
        ...

    def coupling_matrix(self):
        """Return the symmetric couplings of all units divided by T.

        Returns
        -------
        coupling : ndarray of shape (n_units, n_units)
            Visible units first, zero diagonal, in float64.
        """
        ...

    def bias_vector(self):
        """Return the biases of all units divided by T.

        Returns
        -------
        bias : ndarray of shape (n_units,)
            Visible units first, in float64.
        """
        ...

    def enumerate_log_weights(self, chunk_size):
        """Yield arrays of log-weights whose overall log-sum-exp is log Z.

        Parameters
        ----------
        chunk_size : int
            States evaluated per chunk (bounds the memory used).

        Yields
        ------
        log_weights : ndarray
            Unnormalised log-probabilities (or partial log-sums) of a chunk of states,
            in float64.
        """
        ...


@dataclass(frozen=True, eq=False)
class RBMView(ModelView):
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

    weights: np.ndarray
    visible_bias: np.ndarray
    hidden_bias: np.ndarray

    @property
    def n_visible(self):
        """Number of visible units."""
        return self.weights.shape[1]

    @property
    def n_hidden(self):
        """Number of hidden units."""
        return self.weights.shape[0]

    @property
    def n_units(self):
        """Number of units, visible and hidden."""
        return self.n_visible + self.n_hidden

    @property
    def n_state_units(self):
        """Units a sampler state holds: the visible ones (hidden units are summed out)."""
        return self.n_visible

    @property
    def temperature(self):
        """The temperature T (1 for an RBM)."""
        return 1.0

    @property
    def dtype(self):
        """Floating-point type of the parameters."""
        return self.weights.dtype

    def astype(self, dtype):
        return RBMView(
            self.weights.astype(dtype),
            self.visible_bias.astype(dtype),
            self.hidden_bias.astype(dtype),
        )

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

    def annealing_base(self, data_rates, hidden="uniform"):
        """Return the biases of an independent base model for annealing, all units.

        Visible units get the logits of the clipped data rates; hidden units 0
        (``hidden="uniform"``) or their input ``W r + c`` at the clipped data rates r
        (``"response"``; r = 1/2 without data). An optional member of the view
        protocol: :class:`~skboltz.partition.AIS` uses it when present.

        Parameters
        ----------
        data_rates : ndarray of shape (n_visible,) or None
            Mean of each visible unit over the training data.
        hidden : {"uniform", "response"}, default="uniform"
            Biases of the hidden units of the base model.

        Returns
        -------
        base_bias : ndarray of shape (n_units,)
            The base model's biases, visible units first, in float64.
        """
        return _annealing_base(self, data_rates, hidden, lambda rates: (
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


def _annealing_base(view, data_rates, hidden, hidden_input):
    """Visible logits of the clipped data rates; hidden 0 or ``hidden_input(rates)``."""
    base = np.zeros(view.n_units)
    base[: view.n_visible] = base_bias_from_rates(data_rates, view.n_visible, view.n_visible)
    if hidden == "response" and view.n_hidden:
        if data_rates is None:
            rates = np.full(view.n_visible, 0.5)
        else:
            rates = clipped_rates(data_rates)
        base[view.n_visible :] = hidden_input(rates)
    elif hidden not in ("uniform", "response"):
        raise ValueError(f"hidden must be 'uniform' or 'response', got {hidden!r}.")
    return base


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

    Parameters
    ----------
    view : RBMView
    base_bias : ndarray of shape (n_units,)
        Biases of the base model, visible units first.
    n_chains : int
    rng : numpy.random.Generator
        Seeds the chains' own (SFC64) stream of random numbers.
    dtype : float32 or float64, default=float32
    """

    def __init__(self, view, base_bias, n_chains, rng, dtype=np.float32):
        dtype = np.dtype(dtype)
        weights = np.asarray(view.weights, dtype=np.float64)
        n_hidden, n_visible = weights.shape
        base_visible, base_hidden = view._split_base(base_bias)
        visible_bias = np.asarray(view.visible_bias, dtype=np.float64)
        hidden_bias = np.asarray(view.hidden_bias, dtype=np.float64)
        self.dtype = dtype
        self.n_chains = n_chains
        self._weights = np.ascontiguousarray(weights, dtype=dtype)
        self._weights_t = np.ascontiguousarray(weights.T, dtype=dtype)
        # Hidden inputs on the path: y_beta = beta P + d with P = W v + c - d.
        self._shift = (hidden_bias - base_hidden).astype(dtype)[:, None]
        self._base_hidden = base_hidden.astype(dtype)[:, None] if np.any(base_hidden) else None
        # The visible term's slope and the column sums of W (for sum_j P_j): the parts
        # of the increment linear in v, in float64.
        self._linear = np.stack([visible_bias - base_visible, weights.sum(axis=0)])
        self._linear_offset = float(self._shift.astype(np.float64).sum())
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
        self._visible_shift = np.empty((n_visible, 1), dtype=dtype)
        self._base_visible_column = base_visible[:, None]
        self._visible_bias_column = visible_bias.astype(dtype)[:, None]
        self._ready = None  # (beta, 1 + exp(-|y_beta|)) for the next transition

    @property
    def states(self):
        """The chains' visible states, shape (n_chains, n_visible)."""
        return self._visible.T

    def start_from_base(self):
        """Draw every chain's state from the base model."""
        noise = self._noise.logistic(self._visible.shape)
        np.greater(self._base_visible.astype(self.dtype)[:, None], noise, out=self._visible)
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

    @classmethod
    def from_view(cls, view):
        """The training form of an :class:`RBMView`'s parameters (a new array)."""
        params = np.zeros((view.n_hidden + 1, view.n_visible + 1), dtype=view.dtype)
        params[:-1, :-1] = view.weights
        params[:-1, -1] = view.hidden_bias
        params[-1, :-1] = view.visible_bias
        return cls(params)

    @staticmethod
    def augment(X):
        """Append the constant unit to rows of ``X`` (dense)."""
        out = np.empty((X.shape[0], X.shape[1] + 1), dtype=X.dtype)
        out[:, :-1] = X
        out[:, -1] = 1
        return out

    def chains_from_rows(self, rows, rng):
        """Augmented binary chains drawn from data rows (each unit on with its value)."""
        rows = np.clip(rows, 0, 1)
        chains = self.augment(rows.astype(self.params.dtype, copy=False))
        # float32 draws for either dtype: float32 and float64 fits start the same chains
        np.less(rng.random(rows.shape, dtype=NOISE_DTYPE), chains[:, :-1], out=chains[:, :-1])
        return chains

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

    def draw_visible(self, H, noise, out, beta=None):
        """Fill augmented visible rows ``out`` with a draw from P(v | h) (at ``beta``)."""
        x = np.dot(H, self.params, out=out)
        if beta is None:
            return np.greater(x, noise.logistic(x.shape), out=x)
        return self._draw_tempered(x, noise, beta)

    @staticmethod
    def _draw_tempered(x, noise, beta):
        x *= beta
        np.greater(x, noise.logistic(x.shape), out=x)
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
