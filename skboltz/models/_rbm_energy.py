"""Bernoulli RBM: the restricted model over two layers of binary units.

Conventions (the orientation of ``components_``): ``weights`` has shape (n_hidden,
n_visible), ``visible_bias`` b has shape (n_visible,), ``hidden_bias`` c has shape
(n_hidden,), and

    E(v, h) = -h^T W v - b^T v - c^T h,
    F(v)    = -b^T v - sum_j softplus(c_j + (W v)_j),     p(v) = exp(-F(v)) / Z.

The math is the generic restricted model's (:mod:`skboltz.models._restricted_energy`) over
:class:`~skboltz.units._layers.BinaryUnits`; this module names its configurations: the
public view, the packed layout and the training form.
"""

import numpy as np

from ..units._layers import BinaryUnits
from ._restricted_energy import (
    RestrictedAnnealing,
    RestrictedLayout,
    RestrictedTrainingForm,
    RestrictedView,
)


def rbm_free_energy(V, weights, visible_bias, hidden_bias):
    """Free energy F(v) of each row of ``V`` (dense or sparse), hidden units summed out."""
    return RBMView(weights, visible_bias, hidden_bias).free_energy(V)


def rbm_hidden_free_energy(H, weights, visible_bias, hidden_bias):
    """Free energy of hidden configurations, visible units summed out (the mirror image)."""
    return rbm_free_energy(H, weights.T, hidden_bias, visible_bias)


class RBMView(RestrictedView):
    """Read-only view of a Bernoulli RBM's parameters: the :class:`ModelView` of an RBM.

    The model is p(v, h) proportional to exp(h^T W v + b^T v + c^T h) over binary
    visible v and hidden h units (the orientation of ``RBM.components_``): the
    restricted model over two layers of binary units. Sampler states are visible
    vectors: the hidden units are summed out in closed form, and exact enumeration
    lists the states of the smaller layer only.

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

    visible_units = BinaryUnits
    hidden_units = BinaryUnits

    def __init__(self, weights, visible_bias, hidden_bias):
        super().__init__(weights, BinaryUnits(visible_bias), BinaryUnits(hidden_bias))

    def _training_form(self):
        """The training form of these parameters (a new :class:`AugmentedRBM`)."""
        return AugmentedRBM.from_view(self)


#: Named blocks of an RBM's packed parameters (and of its velocity, the same shape):
#: the array has shape (n_hidden + 1, n_visible + 1), ``[W | c]`` over ``[b | the
#: constant units' coupling]`` (see :class:`~skboltz.models._restricted_energy.RestrictedLayout`).
RBMLayout = RestrictedLayout()

#: The chains of annealed importance sampling on an RBM.
RBMAnnealing = RestrictedAnnealing

_BINARY = BinaryUnits(np.zeros(0))


class AugmentedRBM(RestrictedTrainingForm):
    """Training form of an RBM: all parameters in one (n_hidden + 1, n_visible + 1) array.

    The generic :class:`~skboltz.models._restricted_energy.RestrictedTrainingForm` over two
    binary layers, in :data:`RBMLayout`'s blocks: W, the hidden bias c and the visible
    bias b, and states with a trailing constant unit, so that one matrix product gives
    W v + c, one gives W^T h + b and one gives every gradient statistic at once.

    Parameters
    ----------
    params : ndarray of shape (n_hidden + 1, n_visible + 1)
        The packed parameters (the constant coupling is set here).
    """

    def __init__(self, params):
        super().__init__(params, _BINARY, _BINARY, RBMView, RBMLayout)

    def view(self):
        """The :class:`RBMView` of the current parameters (no copies)."""
        p = self.params
        return RBMView.of_layers(p[RBMLayout.weights], BinaryUnits(p[RBMLayout.visible_bias]),
                                 BinaryUnits(p[RBMLayout.hidden_bias]))

    @classmethod
    def from_view(cls, view):
        """The training form of an :class:`RBMView`'s parameters (a new array)."""
        return cls(RBMLayout.pack(view.weights, view.visible_bias, view.hidden_bias,
                                  view.dtype))


__all__ = ["AugmentedRBM", "RBMAnnealing", "RBMLayout", "RBMView"]
