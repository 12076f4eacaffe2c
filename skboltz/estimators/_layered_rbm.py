"""The restricted model over any visible layer: the estimator a new unit type needs.

:class:`LayeredRBM` trains and scores the generic restricted model
(:mod:`skboltz.models._restricted_energy`) whose visible layer is of the class its view class
names (``_view_class.visible_units``) and whose hidden layer is binary, through the
base's plain loop: any learning strategy of the restricted rule that the layer's
capabilities admit (CD, PCD, parallel tempering), exact or annealed log Z, and every
method of :class:`~skboltz.core._base.BoltzmannBase`. :class:`~skboltz.CategoricalRBM` is
one (softmax groups, with its codes' validation); a user's unit type is a
:class:`~skboltz.views.Layer` subclass, a view class naming it and a subclass of this
one (``docs/user_guide/extending.rst``, ``tests/test_extending.py``).
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils.validation import validate_data

from ..core._base import TRAINING_CONSTRAINTS
from ..utils._energy import column_means
from ..units._layers import BinaryUnits
from ..core._monitoring import MONITORING_CONSTRAINTS, MONITORING_PARAMETERS_DOC
from ..models._rbm_energy import RBMLayout
from ._restricted import RestrictedBoltzmannBase
from ..models._restricted_energy import RestrictedTrainingForm
from ..utils._sklearn import Interval, StrOptions
from ..core._strategies import strategy_constraints
from ..core._training import AveragedTrainingState
from ..utils._weights import mean_square

_BINARY = BinaryUnits(np.zeros(0))

#: ``average_window="auto"``: a fifth of the updates of a fit, and at least this many.
MIN_AUTO_AVERAGE_WINDOW = 100


def auto_average_window(n_iter, n_rows, batch_size):
    """The window ``average_window="auto"`` means: a fifth of the updates of ``n_iter``
    epochs over ``n_rows`` rows in minibatches of ``batch_size``, at least
    MIN_AUTO_AVERAGE_WINDOW."""
    n_updates = n_iter * -(-n_rows // batch_size)
    return max(MIN_AUTO_AVERAGE_WINDOW, n_updates // 5)


class LayeredRBM(RestrictedBoltzmannBase):
    """Base of restricted Boltzmann machines over a visible layer of any unit type.

    A subclass names its view class (``_view_class``, a
    :class:`~skboltz.views.RestrictedView` subclass whose ``visible_units`` is the
    layer class): the constraints of ``learning`` and ``z_estimator`` follow from it.
    It may override :meth:`_visible_layer` (a layer with structure, e.g. softmax
    groups' sizes) and the input validation (``_check_rows``).

    Parameters
    ----------
    n_components : int, default=64
        Number of hidden units.
    learning : str or RBMLearningStrategy, default="pcd"
        How the negative-phase statistics are estimated (the names the view admits,
        or a strategy object, cloned).
    z_estimator : str or ZEstimator, default="auto"
        How log Z is found for ``score_samples``: "auto" enumerates exactly when the
        smaller countable layer has at most 2**20 states, else annealed importance
        sampling.
    learning_rate : float, default=0.1
        Step size of the updates (times the mean minibatch gradient).
    batch_size : int, default=10
        Rows per minibatch; the minibatches are reshuffled every epoch.
    n_iter : int, default=50
        Number of epochs (passes over the data) for ``fit``.
    momentum : float or (float, float), default=0.0
        Momentum of the updates, in moving-average form (see :class:`~skboltz.RBM`).
    weight_decay : float, default=1e-3
        L2 penalty on the weights (not the biases).
    average_window : int, "auto" or None, default=100
        Iterate averaging over about this many updates; "auto": a fifth of the
        updates of a fit (``n_iter`` epochs of the first call's training rows), at
        least 100; None publishes the last update's parameters.
    {monitoring}
    verbose : int, default=0
        Print a progress line per epoch when positive.
    random_state : int, RandomState instance or None, default=None
        Seeds initialisation, minibatch order, sampling and the log Z estimate.
    """

    _layout = RBMLayout
    _structural_parameters = ("n_components",)
    _accepts_missing = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        view_class = cls.__dict__.get("_view_class")
        if view_class is not None and "_parameter_constraints" not in cls.__dict__:
            cls._parameter_constraints = layered_constraints(view_class)

    def __init__(
        self,
        n_components=64,
        *,
        learning="pcd",
        z_estimator="auto",
        learning_rate=0.1,
        batch_size=10,
        n_iter=50,
        momentum=0.0,
        weight_decay=1e-3,
        average_window=100,
        validation_fraction=None,
        n_iter_no_change=None,
        tol=1e-4,
        monitor_likelihood=False,
        verbose=0,
        random_state=None,
    ):
        self.n_components = n_components
        self.learning = learning
        self.z_estimator = z_estimator
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.n_iter = n_iter
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.average_window = average_window
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.monitor_likelihood = monitor_likelihood
        self.verbose = verbose
        self.random_state = random_state

    __doc__ = __doc__.replace("{monitoring}", MONITORING_PARAMETERS_DOC)

    # -- settings that follow from the data -----------------------------------------
    def _default_n_chains(self, learning):
        """The persistent chains of ``learning`` (a fresh strategy) when its
        ``n_chains`` is None; None leaves the strategy's own default (the estimator's
        ``batch_size``)."""
        return None

    def _resolve_learning(self):
        learning = super()._resolve_learning()
        if getattr(learning, "n_chains", 0) is None:
            n_chains = self._default_n_chains(learning)
            if n_chains is not None:
                # the strategy is this call's own (made or cloned), never the user's
                learning.n_chains = n_chains
        return learning

    def _average_window(self, state):
        window = self.average_window
        if isinstance(window, str):  # "auto"
            return state.auto_average_window or MIN_AUTO_AVERAGE_WINDOW
        return window

    def _fresh_state(self, state_class, model, X, learning, rng, **fields):
        fields.setdefault("auto_average_window", auto_average_window(
            self.n_iter, X.shape[0], self._effective_batch_size(X)))
        return super()._fresh_state(state_class, model, X, learning, rng, **fields)

    # -- the visible layer ---------------------------------------------------------
    def _visible_layer(self):
        """The visible layer's kind (its parameters are bound later): by default a
        layer of the view's class over ``n_features_in_`` units."""
        return self._view_class.visible_units(np.zeros(self.n_features_in_))

    def _check_rows(self, X, *, reset):
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=reset,
                          ensure_all_finite="allow-nan" if self._takes_missing() else True)
        return self._view_class.visible_units.check_rows(X)

    def _entry_starts(self):
        return self._visible_layer().entry_starts

    # -- training hooks ------------------------------------------------------------
    def _new_training_state(self, X, y, learning, rng, row_weights=None):
        # missing values at their columns' (weighted) means
        X = self._with_missing_filled(X, weights=row_weights)
        data_rates = column_means(X, row_weights)
        params = np.zeros((self.n_components + 1, X.shape[1] + 1), dtype=X.dtype)
        params[RBMLayout.weights] = rng.normal(0.0, 0.01, size=(self.n_components, X.shape[1]))
        # the visible biases of independent units at the data's means (Hinton's
        # practical guide), so the hidden units start on what the means miss
        params[RBMLayout.visible_bias] = self._visible_layer().base_bias_from_rates(
            data_rates)
        return self._fresh_state(AveragedTrainingState, self._training_form_of(params, None),
                                 X, learning, rng, data_rates=data_rates)

    def _training_params(self, dtype):
        return RBMLayout.pack(self.components_, self.intercept_visible_,
                              self.intercept_hidden_, dtype)

    def _training_form_of(self, params, state):
        return RestrictedTrainingForm(params, self._visible_layer(), _BINARY,
                                      self._view_class, RBMLayout)

    def _fitted_attributes(self, state):
        return {**super()._fitted_attributes(state),
                "learning_rate_": float(self.learning_rate),
                "average_window_": self._average_window(state)}

    def _reconstruction_error(self, view, rows, weights=None):
        reconstruction = view.reconstruct(rows) - rows
        if weights is not None:
            return mean_square(reconstruction, weights)
        return float(np.mean(np.square(reconstruction), dtype=np.float64))

    def _model_view_of(self, state):
        if state is not None:
            return self._training_form_of(state.params, state).view()
        return self._view_class.of_layers(
            self.components_,
            self._visible_layer().replace(bias=self.intercept_visible_),
            BinaryUnits(self.intercept_hidden_),
        )


def layered_constraints(view_class):
    """The ``_parameter_constraints`` of a :class:`LayeredRBM` over ``view_class``."""
    return {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        **strategy_constraints(view_class),
        "average_window": [Interval(Integral, 1, None, closed="left"),
                           StrOptions({"auto"}), None],
        **TRAINING_CONSTRAINTS,
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        **MONITORING_CONSTRAINTS,
    }


__all__ = ["LayeredRBM", "auto_average_window", "layered_constraints"]
