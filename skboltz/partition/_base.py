"""Interface of partition-function (log Z) estimators, the LogZ result and the registry."""

from dataclasses import dataclass, field

import numpy as np
from sklearn.base import BaseEstimator

from .._capabilities import Requires


@dataclass(frozen=True)
class LogZ:
    """An estimate of log Z, with how far to trust it.

    Parameters
    ----------
    value : float
        The estimate of log Z (natural log).
    std_error : float or None
        Standard error of ``value`` for sampling estimators; None for deterministic ones.
    lower, upper : float or None
        Bounds on the true log Z where the method gives them (exact: both equal
        ``value``; naive mean field: ``lower``; sampling: the 3-sigma interval).
    method : str
        Name of the estimator that produced it.
    cost : dict
        What the estimate cost, e.g. ``{"n_states": 65536}`` or
        ``{"n_chains": 100, "n_steps": 1000}``.

    Examples
    --------
    >>> from skboltz.partition import LogZ
    >>> z = LogZ(value=-3.2, std_error=0.05, lower=-3.35, upper=-3.05, method="ais")
    >>> float(z)
    -3.2
    >>> z.interval(2)
    (-3.3, -3.1)
    """

    value: float
    std_error: float | None = None
    lower: float | None = None
    upper: float | None = None
    method: str = ""
    cost: dict = field(default_factory=dict)

    def __float__(self):
        return float(self.value)

    @property
    def is_exact(self):
        """True when the value is exact (both bounds equal the value)."""
        return self.lower == self.value == self.upper

    def interval(self, n_sigma=3.0):
        """``value -/+ n_sigma * std_error``; the bounds when there is no standard error.

        Parameters
        ----------
        n_sigma : float, default=3.0
            Half-width of the interval in standard errors.

        Returns
        -------
        interval : tuple of (float or None, float or None)
            The lower and upper end.
        """
        if self.std_error is None:
            return (self.lower, self.upper)
        half_width = n_sigma * self.std_error
        return (round(self.value - half_width, 12), round(self.value + half_width, 12))


class ZEstimator(BaseEstimator):
    """Base class of log Z estimators.

    Subclasses hold settings only (their ``__init__`` parameters; no fitted or
    mutable state) and implement :meth:`estimate`, which receives a read-only model
    view (the :class:`~skboltz.views.ModelView` protocol) and a numpy ``Generator``,
    and returns a :class:`LogZ`. Pass an instance as ``z_estimator`` to any skboltz
    model; it is cloned.

    Examples
    --------
    A complete estimator: simple importance sampling from uniformly random states
    (unbiased for Z, but useless beyond a few dozen units):

    >>> import numpy as np
    >>> from scipy.special import logsumexp
    >>> from sklearn.datasets import load_digits
    >>> from skboltz import RBM
    >>> from skboltz.partition import LogZ, ZEstimator
    >>> class UniformImportance(ZEstimator):
    ...     def __init__(self, n_draws=20000):
    ...         self.n_draws = n_draws
    ...
    ...     def estimate(self, model, *, rng=None, data_rates=None):
    ...         rng = np.random.default_rng(rng)
    ...         n = model.n_state_units
    ...         S = (rng.random((self.n_draws, n)) < 0.5).astype(np.float64)
    ...         log_w = model.log_unnormalized(S) + n * np.log(2)  # p*(s) / q(s)
    ...         return LogZ(float(logsumexp(log_w) - np.log(self.n_draws)),
    ...                     method="uniform importance sampling")
    >>> X = load_digits().data[:, 20:28] / 16  # 8 pixels: 256 visible states
    >>> rbm = RBM(n_components=4, n_iter=3, z_estimator=UniformImportance(),
    ...           random_state=0).fit(X)
    >>> estimate = rbm.estimate_log_partition().value
    >>> exact = rbm.estimate_log_partition("exact").value
    >>> bool(abs(estimate - exact) < 0.05)
    True
    """

    #: Short name used in ``LogZ.method`` and in the string registry.
    name = ""

    #: What the estimator needs of a model view (``skboltz.views.Requires``): nothing
    #: unless a subclass says so, so a user's estimator is offered every model.
    requires = Requires()

    #: Subclasses list the constraints of their parameters (scikit-learn's
    #: ``_parameter_constraints``); parameters not listed are not checked.
    _parameter_constraints: dict = {}

    def estimate(self, model, *, rng=None, data_rates=None, progress=None):
        """Return a :class:`LogZ` for ``model``.

        Parameters
        ----------
        model : model view
            Read-only parameters and conditionals of the model.
        rng : numpy.random.Generator or None
            Source of randomness for sampling estimators.
        data_rates : ndarray of shape (n_visible,) or None
            Mean activation of each visible unit on the training data, for estimators
            that build a base model from it.
        progress : callable or None
            Long-running estimators call ``progress(done, total)`` now and then, in
            units of their own work (states enumerated, Gibbs transitions, ...);
            ``total`` may grow during the estimate. Quick ones ignore it.
        """
        raise NotImplementedError

    def estimated_seconds(self, model, *, data_rates=None, rng=None):
        """A rough forecast of the seconds :meth:`estimate` will take, or None.

        Estimators that can take long (exact enumeration, AIS) time a short pilot and
        extrapolate; the quick ones return None. Machine-dependent: for progress
        reports and warnings, not for reproducible decisions.

        Parameters
        ----------
        model : model view
            Read-only parameters and conditionals of the model.
        data_rates : ndarray of shape (n_visible,) or None
            Visible rates of the training data.
        rng : numpy.random.Generator, int or None
            Source of randomness for a pilot.

        Returns
        -------
        seconds : float or None
            The forecast, or None when the estimate is quick.
        """
        return None

    def is_feasible(self, model):
        """Whether this estimator can run on ``model`` at its settings.

        Parameters
        ----------
        model : model view
            Read-only parameters and conditionals of the model.

        Returns
        -------
        feasible : bool
            False when the estimate would be refused or impractical (e.g. too many
            states to enumerate).
        """
        return True


#: String name -> estimator class. Modules register their classes on import.
Z_ESTIMATORS = {}


def register(name):
    """Class decorator adding a ZEstimator to the string registry under ``name``."""

    def decorator(cls):
        cls.name = name
        Z_ESTIMATORS[name] = cls
        return cls

    return decorator


def as_generator(rng):
    """A numpy Generator from None, an int or a Generator."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)
