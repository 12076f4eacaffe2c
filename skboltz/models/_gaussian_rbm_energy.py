"""Gaussian-Bernoulli RBM: the restricted model over Gaussian visible and binary hidden units.

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
hidden units. The math is the generic restricted model's
(:mod:`skboltz.models._restricted_energy`) over :class:`~skboltz.units._layers.GaussianUnits` and
:class:`~skboltz.units._layers.BinaryUnits`; this module names its configurations and the
annealing path of the hidden units' marginal.
"""

import numpy as np

from ..units._layers import BinaryUnits, GaussianUnits, gaussian_log_normalizer
from ._restricted_energy import RestrictedLayout, RestrictedTrainingForm, RestrictedView


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

    visible_units = GaussianUnits
    hidden_units = BinaryUnits

    def __init__(self, weights, visible_bias, hidden_bias, variance):
        super().__init__(weights, GaussianUnits(visible_bias, variance=variance),
                         BinaryUnits(hidden_bias))

    @property
    def variance(self):
        """The variances sigma_i^2 of the visible units given the hidden ones."""
        return self.visible.variance

    def scaled_weights(self):
        """Return W diag(1 / sigma^2), the weights the hidden units see v through.

        Returns
        -------
        scaled_weights : ndarray of shape (n_hidden, n_visible)
            W with column i divided by sigma_i^2.
        """
        return self._seen_weights()

    def interpolate(self, beta, base_bias):
        # Scaling W and b by sqrt(beta) scales the hidden marginal's quadratic and
        # linear terms by beta: log p*_beta(h) = beta log p*(h) + (1 - beta) base.h + const,
        # the geometric path, and each intermediate is again a Gaussian RBM.
        root = np.sqrt(beta)
        hidden_bias = (1.0 - beta) * np.asarray(base_bias) + beta * self.hidden_bias
        return GaussianRBMView(root * self.weights, root * self.visible_bias,
                               hidden_bias.astype(self.dtype), self.variance)

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
        return view.visible.summed_out_couplings(view.hidden, view.weights)

    def _training_form(self):
        """The training form of these parameters (a new :class:`AugmentedGaussianRBM`)."""
        return AugmentedGaussianRBM.from_view(self)


#: Named blocks of a Gaussian RBM's packed parameters (and of its velocity): a row of
#: log variances z = log sigma^2 above the RBM's blocks, shape (n_hidden + 2,
#: n_visible + 1)::
#:
#:     [ z = log sigma^2  (n_visible)  | unused (0)                     ]
#:     [ W  (n_hidden, n_visible)      | c                              ]
#:     [ b  (visible means at h = 0)   | the constant units' coupling   ]
GaussianRBMLayout = RestrictedLayout(("log_variance",))

_GAUSSIAN = GaussianUnits(np.zeros(0), log_variance=np.zeros(0))
_BINARY = BinaryUnits(np.zeros(0))


class AugmentedGaussianRBM(RestrictedTrainingForm):
    """Training form of a Gaussian-Bernoulli RBM.

    The generic :class:`~skboltz.models._restricted_energy.RestrictedTrainingForm` over a
    Gaussian visible and a binary hidden layer: ``params`` has shape (n_hidden + 2,
    n_visible + 1), with the blocks of :data:`GaussianRBMLayout` (the log variances
    z = log sigma^2 above ``[W | c]`` over ``[b | ALWAYS_ON]``), so states carry the
    same trailing constant unit and the learning strategies' fused hooks work
    unchanged. The hidden units see v through W diag(1 / sigma^2), kept in
    ``hidden_coupling``: call :meth:`refresh` after changing ``params`` in place.

    ``statistics`` returns the update direction of Cho, Ilin & Raiko's learning rule
    in the model's own scale: h v^T, h and v (the likelihood gradients of W and b
    times sigma^2, which makes the steps independent of each feature's scale, and
    of c), and in row 0 the gradient of log z,
    [(v - b)^2 / 2 - v (W^T h)] / sigma^2.

    Parameters
    ----------
    params : ndarray of shape (n_hidden + 2, n_visible + 1)
        The packed parameters (the constant coupling is set here).
    learn_variance : bool, default=True
        Whether ``statistics`` computes the log-variance row (else it is left 0).
    """

    def __init__(self, params, learn_variance=True):
        super().__init__(params, _GAUSSIAN, _BINARY, GaussianRBMView, GaussianRBMLayout)
        self.learn_extra = learn_variance

    @classmethod
    def from_view(cls, view):
        """The training form of a :class:`GaussianRBMView`'s parameters (a new array)."""
        return cls(GaussianRBMLayout.pack(view.weights, view.visible_bias, view.hidden_bias,
                                          view.dtype, log_variance=np.log(view.variance)))

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

    @property
    def std(self):
        """sigma, from the current log variances."""
        return self.visible.std

    @property
    def inverse_variance(self):
        """1 / sigma^2, from the current log variances."""
        return self.visible.inverse_variance

    @property
    def coupling(self):
        """``[W / sigma^2 | c]`` over ``[0 | ALWAYS_ON]``: what the hidden units see."""
        return self.hidden_coupling


__all__ = ["AugmentedGaussianRBM", "GaussianRBMLayout", "GaussianRBMView",
           "gaussian_log_normalizer"]
