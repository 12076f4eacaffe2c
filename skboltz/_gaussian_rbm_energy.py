"""Gaussian-Bernoulli RBM: energies, conditionals, the model view and the training form.

Real-valued visible units v with per-feature variances sigma_i^2 and binary hidden
units h, in the parametrisation of Cho, Ilin & Raiko ("Improved learning of
Gaussian-Bernoulli restricted Boltzmann machines", ICANN 2011), with ``weights`` W of
shape (n_hidden, n_visible) like ``components_``:

    E(v, h) = sum_i (v_i - b_i)^2 / (2 sigma_i^2) - h^T W (v / sigma^2) - c^T h,

    p(v_i | h)     = N(b_i + (W^T h)_i, sigma_i^2),
    P(h_j = 1 | v) = sigmoid(c_j + (W (v / sigma^2))_j),
    F(v)           = sum_i (v_i - b_i)^2 / (2 sigma_i^2) - sum_j softplus(c_j + (W (v / sigma^2))_j),

and log p(v) = -F(v) - log Z. Integrating v out in closed form leaves a Boltzmann
machine over the hidden units alone: with m(h) = b + W^T h the visible mean,

    log p*(h) = log int exp(-E(v, h)) dv
              = c^T h + sum_i (m_i(h)^2 - b_i^2) / (2 sigma_i^2) + sum_i log(sqrt(2 pi) sigma_i)
              = a^T h + h^T J h / 2 + const,   J = W diag(1 / sigma^2) W^T,  a = c + W (b / sigma^2).

So Z is a sum of 2**n_hidden Gaussian integrals (exact enumeration reuses the general
Boltzmann machine's split-half enumerator), and samplers of log Z keep binary hidden
states with the visible units summed out: the model view's *state units* are the
hidden units.
"""

from dataclasses import dataclass

import numpy as np

from ._boltzmann_energy import SPLIT_HALF_BLOCK_STATES, split_half_log_weights
from ._capabilities import (
    ANNEALING,
    BINARY,
    ENUMERATION,
    GAUSSIAN,
    RESTRICTED,
    Capabilities,
)
from ._energy import (
    RestrictedView,
    base_bias_from_rates,
    bernoulli_sample,
    sigmoid,
    softplus,
    softplus_row_sums,
)
from ._rbm_energy import AugmentedRBM, RBMLayout


def gaussian_log_normalizer(variance):
    """sum_i log(sqrt(2 pi sigma_i^2)): the log-integral of the visible Gaussians."""
    return float(0.5 * np.log(2 * np.pi * np.asarray(variance, dtype=np.float64)).sum())


@dataclass(frozen=True, eq=False)
class GaussianRBMView(RestrictedView):
    """Read-only view of a Gaussian-Bernoulli RBM: its :class:`ModelView`.

    The model has real-valued visible units v and binary hidden units h, with energy
    E(v, h) = sum_i (v_i - b_i)^2 / (2 sigma_i^2) - h^T W (v / sigma^2) - c^T h (the
    parametrisation of Cho, Ilin & Raiko, "Improved learning of Gaussian-Bernoulli
    restricted Boltzmann machines", 2011): given h each v_i is normal with mean
    b_i + (W^T h)_i and variance sigma_i^2. Sampler states (for log Z) are **hidden**
    vectors, the visible units integrated out in closed form; exact enumeration lists
    the 2**n_hidden hidden states. ``free_energy`` and ``hidden_probability`` take
    visible rows, as for :class:`RBMView`.

    Parameters
    ----------
    weights : ndarray of shape (n_hidden, n_visible)
        Weights W (``GaussianRBM.components_``).
    visible_bias : ndarray of shape (n_visible,)
        Visible means b at h = 0 (``GaussianRBM.intercept_visible_``).
    hidden_bias : ndarray of shape (n_hidden,)
        Hidden biases c (``GaussianRBM.intercept_hidden_``).
    variance : ndarray of shape (n_visible,)
        Variances sigma_i^2 of the visible units given the hidden ones
        (``GaussianRBM.variance_``).

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.partition import Exact
    >>> from skboltz.views import GaussianRBMView
    >>> view = GaussianRBMView(np.zeros((2, 3)), np.zeros(3), np.zeros(2), np.ones(3))
    >>> log_z = Exact().estimate(view).value  # 4 hidden states, 3 unit Gaussians each
    >>> bool(np.isclose(log_z, 2 * np.log(2) + 1.5 * np.log(2 * np.pi)))
    True
    >>> view.n_state_units  # log Z samplers keep the hidden units
    2
    """

    variance: np.ndarray

    #: Real-valued visible units: the restricted learning rule's samplers, exact
    #: enumeration of the hidden states and annealing, but no mean field.
    capabilities = Capabilities(
        units=(("visible", GAUSSIAN), ("hidden", BINARY)),
        operations={RESTRICTED, ENUMERATION, ANNEALING},
    )

    #: What a log Z sampler's state holds (reverse annealing needs "visible").
    sampler_state = "hidden"

    @property
    def n_state_units(self):
        """Units a sampler state holds: the hidden ones (the visible are integrated out)."""
        return self.n_hidden

    @property
    def n_enumerated_units(self):
        """Units whose states exact enumeration lists: the hidden ones."""
        return self.n_hidden

    # -- conditionals and energies -------------------------------------------------
    def scaled_weights(self):
        """Return W diag(1 / sigma^2), the weights the hidden units see v through.

        Returns
        -------
        scaled_weights : ndarray of shape (n_hidden, n_visible)
            W with column i divided by sigma_i^2.
        """
        return self.weights / self.variance

    def hidden_probability(self, V):
        return sigmoid(np.asarray(V) @ self.scaled_weights().T + self.hidden_bias)

    def visible_mean(self, H):
        """Compute E[v | h] = b + W^T h for each row of hidden states.

        Parameters
        ----------
        H : ndarray of shape (n_rows, n_hidden)
            Hidden states (or probabilities, for a mean-field reconstruction).

        Returns
        -------
        mean : ndarray of shape (n_rows, n_visible)
            The visible units' conditional means (their variances are ``variance``).
        """
        return H @ self.weights + self.visible_bias

    def sample_hidden(self, V, rng):
        """Draw binary hidden states from P(h | v) for each visible row.

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_visible)
            Visible rows.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        H : ndarray of shape (n_rows, n_hidden)
            0/1 hidden states, in the dtype of the parameters.
        """
        return bernoulli_sample(self.hidden_probability(V).astype(self.dtype, copy=False), rng)

    def sample_visible(self, H, rng):
        """Draw real-valued visible rows from p(v | h) = N(b + W^T h, diag(sigma^2)).

        Parameters
        ----------
        H : ndarray of shape (n_rows, n_hidden)
            Hidden states.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        V : ndarray of shape (n_rows, n_visible)
            Visible rows, in the dtype of the parameters.
        """
        V = self.visible_mean(H).astype(self.dtype, copy=False)
        V += np.sqrt(self.variance) * rng.standard_normal(V.shape, dtype=self.dtype)
        return V

    def free_energy(self, V):
        V = np.asarray(V)
        centred = V - self.visible_bias
        quadratic = (centred * centred / (2 * self.variance)).sum(axis=1)
        hidden_input = V @ self.scaled_weights().T
        hidden_input += self.hidden_bias
        return quadratic - softplus_row_sums(hidden_input, overwrite=True)

    def energy(self, V, H):
        """Compute the joint energy E(v, h) of paired rows.

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_visible)
            Visible rows.
        H : ndarray of shape (n_rows, n_hidden)
            Hidden states, one per row of ``V``.

        Returns
        -------
        energy : ndarray of shape (n_rows,)
            E(v, h) of each pair.
        """
        centred = V - self.visible_bias
        return (
            (centred * centred / (2 * self.variance)).sum(axis=1)
            - np.einsum("nj,nj->n", H @ self.scaled_weights(), V)
            - H @ self.hidden_bias
        )

    # -- inference: what the estimators' transform, reconstruct, gibbs and sample use --
    def visible_gibbs_step(self, V, rng):
        return self.sample_visible(self.sample_hidden(V, rng), rng)

    def draw_samples(self, n_samples, n_steps, start, rng, means=False):
        # Independent normal units at the means `start` with the model's variances.
        mean = np.asarray(start).astype(self.dtype)
        if means and n_steps == 0:
            return np.tile(mean, (n_samples, 1))
        V = rng.standard_normal((n_samples, self.n_visible), dtype=self.dtype)
        V *= np.sqrt(self.variance)
        V += mean
        for _ in range(n_steps - 1 if means else n_steps):
            V = self.visible_gibbs_step(V, rng)
        if means:  # the last step's h, then E[v | h] = b + W^T h instead of a draw
            return self.visible_mean(self.sample_hidden(V, rng)).astype(self.dtype, copy=False)
        return V

    # -- sampling protocol: the states are hidden vectors ---------------------------
    def log_unnormalized(self, S):
        # log p*(h) = c.h + sum_i (m_i^2 - b_i^2) / (2 sigma_i^2) + const, m = b + W^T h
        view = self if self.dtype == np.float64 else self.astype(np.float64)
        H = np.asarray(S, dtype=np.float64)
        shift = H @ view.weights  # m - b
        shift *= shift + 2 * view.visible_bias
        return (
            H @ view.hidden_bias
            + (shift / (2 * view.variance)).sum(axis=1)
            + gaussian_log_normalizer(view.variance)
        )

    def gibbs_step(self, S, rng):
        """Run one block Gibbs step h -> v -> h from each row of hidden states.

        Parameters
        ----------
        S : ndarray of shape (n_rows, n_hidden)
            Binary hidden states (one chain per row).
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        S_new : ndarray of shape (n_rows, n_hidden)
            The new hidden states; p(h) (the visible units summed out) is invariant.
        """
        return self.sample_hidden(self.sample_visible(S, rng), rng)

    def interpolate(self, beta, base_bias):
        # Scaling W and b by sqrt(beta) scales the hidden marginal's quadratic and
        # linear terms by beta: log p*_beta(h) = beta log p*(h) + (1 - beta) base.h + const,
        # the geometric path, and each intermediate is again a Gaussian RBM.
        root = np.sqrt(beta)
        hidden_bias = (1.0 - beta) * np.asarray(base_bias) + beta * self.hidden_bias
        return GaussianRBMView(
            root * self.weights,
            root * self.visible_bias,
            hidden_bias.astype(self.dtype),
            self.variance,
        )

    def base_bias_from_rates(self, data_rates):
        """Return the biases of an independent base model over the hidden units.

        Parameters
        ----------
        data_rates : ndarray of shape (n_hidden,) or None
            Mean of P(h_j = 1 | v) over the training data (the state units' rates;
            ``GaussianRBM`` stores them); None gives all zeros.

        Returns
        -------
        base_bias : ndarray of shape (n_hidden,)
            The logits of the clipped rates, in float64.
        """
        return base_bias_from_rates(data_rates, self.n_hidden, self.n_hidden)

    def base_log_partition(self, base_bias):
        return float(
            softplus(np.asarray(base_bias, dtype=np.float64)).sum()
            + gaussian_log_normalizer(self.variance)
        )

    # -- mean field: not defined for real-valued units -------------------------------
    def coupling_matrix(self):
        raise NotImplementedError(
            "Mean-field log Z estimators need binary units; a Gaussian RBM's visible "
            "units are real-valued. Use z_estimator='exact' (small n_components) or "
            "'ais'."
        )

    def bias_vector(self):
        self.coupling_matrix()

    # -- exact enumeration over the hidden layer --------------------------------------
    def hidden_boltzmann_machine(self):
        """Return the Boltzmann machine over the hidden units that p(h) is.

        log p*(h) = h^T J h / 2 + a^T h + const with binary h, written with a zero
        diagonal (h_j^2 = h_j moves J_jj / 2 into the bias).

        Returns
        -------
        coupling : ndarray of shape (n_hidden, n_hidden)
            J = W diag(1 / sigma^2) W^T off the diagonal, zero on it, in float64.
        bias : ndarray of shape (n_hidden,)
            The biases a + diag(J) / 2 with a = c + W (b / sigma^2), in float64.
        log_normalizer : float
            The constant sum_i log(sqrt(2 pi) sigma_i).
        """
        view = self.astype(np.float64)
        scaled = view.scaled_weights()
        coupling = scaled @ view.weights.T
        diagonal = np.diag(coupling).copy()
        np.fill_diagonal(coupling, 0.0)
        bias = view.hidden_bias + scaled @ view.visible_bias + 0.5 * diagonal
        return coupling, bias, gaussian_log_normalizer(view.variance)

    def enumerate_log_weights(self, chunk_size):
        coupling, bias, log_normalizer = self.hidden_boltzmann_machine()
        for log_weights in split_half_log_weights(
            coupling, bias, max(chunk_size, SPLIT_HALF_BLOCK_STATES)
        ):
            yield log_weights + log_normalizer

    def _training_form(self):
        """The training form of these parameters (a new :class:`AugmentedGaussianRBM`)."""
        return AugmentedGaussianRBM.from_view(self)


class GaussianRBMLayout:
    """Named blocks of a Gaussian RBM's packed parameters (and of its velocity).

    The array has shape (n_hidden + 2, n_visible + 1): a row of log variances above
    :class:`~skboltz._rbm_energy.RBMLayout`'s blocks::

        [ z = log sigma^2  (n_visible)  | unused (0)                     ]
        [ W  (n_hidden, n_visible)      | c                              ]
        [ b  (visible means at h = 0)   | the constant units' coupling   ]

    Each block is an index: ``params[GaussianRBMLayout.log_variance]`` is z, a view.
    """

    log_variance = np.s_[0, :-1]
    unused = np.s_[0, -1]
    weights = np.s_[1:-1, :-1]
    hidden_bias = np.s_[1:-1, -1]
    visible_bias = np.s_[-1, :-1]
    constant = np.s_[-1, -1]
    #: The rows below the log variances: an array in RBMLayout's layout.
    rbm = np.s_[1:]
    #: The last row: b and the constant units' coupling.
    visible_row = np.s_[-1]

    @staticmethod
    def pack(weights, visible_bias, hidden_bias, log_variance, dtype):
        """A new packed array holding the blocks (the unused entry and constant 0)."""
        weights = np.asarray(weights)
        params = np.zeros((weights.shape[0] + 2, weights.shape[1] + 1), dtype=dtype)
        params[GaussianRBMLayout.log_variance] = log_variance
        params[GaussianRBMLayout.weights] = weights
        params[GaussianRBMLayout.hidden_bias] = hidden_bias
        params[GaussianRBMLayout.visible_bias] = visible_bias
        return params


class AugmentedGaussianRBM:
    """Training form of a Gaussian-Bernoulli RBM, duck-typing :class:`AugmentedRBM`.

    ``params`` has shape (n_hidden + 2, n_visible + 1), with the blocks of
    :class:`GaussianRBMLayout`: the log variances z = log sigma^2 above
    :class:`AugmentedRBM`'s layout (``[W | c]`` over ``[b | ALWAYS_ON]``), so states
    carry the same trailing constant unit and the learning strategies' fused hooks
    (``draw_hidden``, ``draw_visible``, ``hidden_input``, ``energy``, ...) work
    unchanged. The hidden units see v through W diag(1 / sigma^2), kept in
    ``coupling``: call :meth:`refresh` after changing ``params`` in place.

    ``statistics`` returns the update direction of Cho, Ilin & Raiko's learning rule
    in the model's own scale: h v^T, h and v (the likelihood gradients of W and b
    times sigma^2, which makes the steps independent of each feature's scale, and
    of c), and in row 0 the gradient of log z,
    [(v - b)^2 / 2 - v (W^T h)] / sigma^2.

    ``beta`` arguments are per-row inverse temperatures for parallel tempering. The
    tempered family keeps the visible units' quadratic term untempered,

        p_beta(v, h) proportional to exp(-sum_i (v_i - b_i)^2 / (2 sigma_i^2)
                                         + beta (h^T W (v / sigma^2) + c^T h)),

    which is a proper distribution at every beta (at beta = 0: independent normal
    visible units and fair-coin hidden ones); ``energy`` returns the tempered part,
    which is all the swap rule of parallel tempering needs.
    """

    ALWAYS_ON = AugmentedRBM.ALWAYS_ON

    #: What ``negative_visible="auto"`` of the sampling strategies means here: the
    #: visible draws; the visible means gave lower held-out densities (by up to 0.9
    #: nats per row with whitening, ``benchmarks/bench_gaussian.py``).
    auto_negative_visible = "sample"

    def __init__(self, params, learn_variance=True):
        params[GaussianRBMLayout.constant] = self.ALWAYS_ON
        params[GaussianRBMLayout.unused] = 0
        self.params = params
        #: Whether ``statistics`` computes the log-variance row (else it is left 0).
        self.learn_variance = learn_variance
        self.n_hidden = params.shape[0] - 2
        self.n_visible = params.shape[1] - 1
        self.refresh()

    @classmethod
    def from_view(cls, view):
        """The training form of a :class:`GaussianRBMView`'s parameters (a new array)."""
        return cls(GaussianRBMLayout.pack(view.weights, view.visible_bias, view.hidden_bias,
                                          np.log(view.variance), view.dtype))

    augment = staticmethod(AugmentedRBM.augment)

    @property
    def log_variance(self):
        """z = log sigma^2 (a view into ``params``)."""
        return self.params[GaussianRBMLayout.log_variance]

    @property
    def weights(self):
        return self.params[GaussianRBMLayout.weights]

    @property
    def visible_bias(self):
        return self.params[GaussianRBMLayout.visible_bias]

    @property
    def hidden_bias(self):
        return self.params[GaussianRBMLayout.hidden_bias]

    def refresh(self):
        """Recompute the derived arrays (W / sigma^2, sigma) after ``params`` changed."""
        log_variance = self.log_variance
        self.std = np.exp(0.5 * log_variance)
        self.inverse_variance = np.exp(-log_variance)
        # ``coupling`` is in RBMLayout's layout: [W / sigma^2 | c] over [b | ALWAYS_ON]
        if not log_variance.any():  # unit variances: the hidden units see W itself
            self.coupling = self.params[GaussianRBMLayout.rbm]
            return
        coupling = getattr(self, "_coupling_buffer", None)
        if coupling is None or coupling.dtype != self.params.dtype:
            coupling = self._coupling_buffer = np.zeros_like(self.params[GaussianRBMLayout.rbm])
            coupling[RBMLayout.constant] = self.ALWAYS_ON
        np.multiply(self.weights, self.inverse_variance, out=coupling[RBMLayout.weights])
        coupling[RBMLayout.hidden_bias] = self.hidden_bias
        self.coupling = coupling

    def view(self):
        """The :class:`GaussianRBMView` of the current parameters (sigma^2 computed)."""
        return GaussianRBMView(
            self.weights, self.visible_bias, self.hidden_bias, np.exp(self.log_variance)
        )

    def chains_from_rows(self, rows, rng):
        """Augmented chains started at data rows (real values as they are)."""
        return self.augment(rows.astype(self.params.dtype, copy=False))

    def empty_visible(self, n_rows):
        """Uninitialised augmented visible rows."""
        return np.empty((n_rows, self.n_visible + 1), dtype=self.params.dtype)

    def empty_hidden(self, n_rows):
        """Uninitialised augmented hidden rows."""
        return np.empty((n_rows, self.n_hidden + 1), dtype=self.params.dtype)

    def hidden_input(self, V, out=None):
        """Inputs W (v / sigma^2) + c of the hidden units (and a huge one of the constant)."""
        return np.dot(V, self.coupling.T, out=out)

    def hidden_probability(self, V):
        """P(h = 1 | v) for augmented rows ``V``; the constant unit comes out as 1."""
        return sigmoid(self.hidden_input(V))

    def draw_hidden(self, V, noise, out, beta=None):
        """Fill augmented hidden rows ``out`` with a draw from P(h | v) (at ``beta``)."""
        x = self.hidden_input(V, out=out)
        if beta is None:
            return np.greater(x, noise.logistic(x.shape), out=x)
        return AugmentedRBM._draw_tempered(x, noise, beta)

    draw_hidden_from_input = staticmethod(AugmentedRBM.draw_hidden_from_input)

    def draw_visible(self, H, noise, out, beta=None):
        """Fill augmented visible rows ``out`` with a draw from p(v | h) (at ``beta``)."""
        # b + W^T h (and junk in the last column)
        x = np.dot(H, self.params[GaussianRBMLayout.rbm], out=out)
        if beta is not None:  # mean b + beta W^T h (whole rows: contiguous, cheaper)
            bias = self.params[GaussianRBMLayout.visible_row]
            x -= bias
            x *= beta
            x += bias
        x[RBMLayout.units] += self.std * noise.normal((x.shape[0], self.n_visible))
        x[RBMLayout.constant_unit] = 1
        return x

    def visible_mean(self, H, out):
        """Fill augmented visible rows ``out`` with the mean b + W^T h of p(v | h)."""
        x = np.dot(H, self.params[1:], out=out)
        x[:, -1] = 1
        return x

    def draw_visible_and_mean(self, H, noise, out, mean):
        """Fill ``mean`` with b + W^T h and ``out`` with a draw from p(v | h)."""
        self.visible_mean(H, mean)
        np.multiply(noise.normal((mean.shape[0], self.n_visible)), self.std, out=out[:, :-1])
        out[:, :-1] += mean[:, :-1]
        out[:, -1] = 1
        return out

    def energy(self, V, H):
        """The tempered part -h^T W (v / sigma^2) - c^T h of E(v, h), for paired rows."""
        h = H[RBMLayout.units]
        return -np.einsum(
            "nj,nj->n", h @ self.coupling[RBMLayout.weights], V[RBMLayout.units]
        ) - h @ (self.hidden_bias)

    def statistics(self, H, V, means=False):
        """Sums over rows of the update statistics (see the class docstring), like ``params``.

        ``means=True`` says that the rows of ``V`` are the means b + W^T h of p(v | h)
        for some hidden rows h rather than draws: the log-variance row then takes the
        conditional expectation of its quadratic term, E[(v - b)^2 | h] = (W^T h)^2 +
        sigma^2, so that a mean stands in for a draw without biasing the variances
        (with the mean alone they would grow by a step of 1/2 per update).
        """
        out = np.empty((self.params.shape[0], V.shape[1]), dtype=np.result_type(H, V))
        products = out[GaussianRBMLayout.rbm]
        np.dot(H.T, V, out=products)
        log_variance_row = out[GaussianRBMLayout.log_variance]
        out[GaussianRBMLayout.unused] = 0
        if not self.learn_variance:
            log_variance_row[...] = 0
            return out
        centred = V[RBMLayout.units] - self.visible_bias
        np.einsum("ni,ni->i", centred, centred, out=log_variance_row)
        log_variance_row *= 0.5
        # sum_n v_ni (W^T h_n)_i = sum_j W_ji (sum_n h_nj v_ni)
        log_variance_row -= np.einsum("ji,ji->i", self.weights, products[RBMLayout.weights])
        log_variance_row *= self.inverse_variance
        if means:
            log_variance_row += 0.5 * V.shape[0]  # sum over rows of sigma^2 / (2 sigma^2)
        return out
