"""Interface of partition-function (log Z) estimators, the LogZ result and the registry."""

import math
from dataclasses import dataclass, field
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator

from ..utils._capabilities import Requires
from ..utils._registry import registry_decorator


#: What a :class:`LogZ` value is, and what it makes of a log-likelihood -F(x) - log Z.
KINDS = {
    "exact": "exact",
    "estimate": "a sampling estimate (unbiased for Z, so log Z errs low on average; "
                "the log-likelihood errs high by about as much)",
    "lower_bound": "a lower bound on log Z, so the log-likelihood is an upper bound "
                   "(optimistic)",
    "upper_bound": "an upper bound on log Z, so the log-likelihood is a lower bound "
                   "(conservative)",
    "approximation": "an approximation with no error bar and no bound (either side)",
}


#: What a log-likelihood -F(x) - log Z is, for each kind of log Z (the sign flips a bound).
_SCORE_KIND_OF_LOG_Z = {
    "exact": "exact", "estimate": "estimate", "lower_bound": "upper_bound",
    "upper_bound": "lower_bound", "approximation": "approximation",
}


def score_kind(log_z_kind, log_weight_kind="exact"):
    """What a log-likelihood ``log w(x) - log Z`` is, from what its two terms are.

    ``log w(x)`` is the row's unnormalised log-probability -F(x): exact for most
    models; a lower bound (a deep Boltzmann machine's mean-field bound on its hidden
    sum) or an estimate (a per-row annealed estimate of it) otherwise. A log Z bound
    flips side (a lower bound on log Z makes an upper bound on the log-likelihood);
    two bounds on the same side make a bound, a bound with an exact value or an
    estimate (whose error is reported) stays that bound, and two bounds on opposite
    sides, or anything with an approximation, make an approximation.

    Parameters
    ----------
    log_z_kind : str
        ``LogZ.kind`` of log Z.
    log_weight_kind : {"exact", "estimate", "lower_bound", "upper_bound", "approximation"}
        What -F(x) is.

    Returns
    -------
    kind : str
        One of ``KINDS``: "exact", "estimate", "lower_bound", "upper_bound" or
        "approximation", said of the log-likelihood.

    Examples
    --------
    >>> from skboltz.partition._base import score_kind
    >>> score_kind("lower_bound")  # mean-field log Z: an optimistic score
    'upper_bound'
    >>> score_kind("exact", "lower_bound")  # a DBM's mean-field bound on a row's sum
    'lower_bound'
    """
    kinds = {_SCORE_KIND_OF_LOG_Z[log_z_kind], log_weight_kind}
    if kinds <= {"exact"}:
        return "exact"
    if kinds <= {"exact", "estimate"}:
        return "estimate"
    bounds = kinds - {"exact", "estimate"}
    if len(bounds) == 1 and bounds != {"approximation"}:
        return bounds.pop()
    return "approximation"


def _infer_kind(value, std_error, lower, upper):
    if lower is not None and upper is not None and lower == value == upper:
        return "exact"
    if std_error is not None:
        return "estimate"
    if lower is not None and lower == value:
        return "lower_bound"
    if upper is not None and upper == value:
        return "upper_bound"
    return "approximation"


def _finite_real(name, x, *, allow_none=True):
    """``x`` as a float, refusing anything that is not a finite real number."""
    if x is None and allow_none:
        return None
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (Real, np.floating, np.integer)):
        raise TypeError(
            f"LogZ.{name} must be a finite real number, got {type(x).__name__} {x!r}. "
            "An estimator returns log Z as a float (natural log)."
        )
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(
            f"LogZ.{name} must be finite, got {x}. log Z of a model with finite "
            "parameters is a finite number: an estimator that gives +-inf or NaN has "
            "overflowed or failed (check its log-sum-exp, or the model's parameters)."
        )
    return x


@dataclass(frozen=True)
class LogZ:
    """An estimate of log Z, with how far to trust it.

    Every field is checked: ``value``, ``std_error``, ``lower`` and ``upper`` must be
    finite real numbers (or None where allowed); anything else (NaN, +-inf, a string)
    raises at once, naming the field, instead of turning every score into NaN or 0
    later.

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
    kind : {"exact", "estimate", "lower_bound", "upper_bound", "approximation"} or None
        What ``value`` is: exact; a sampling estimate with ``std_error`` (annealed
        importance sampling is unbiased for Z, so its log Z errs low on average); a
        lower bound on log Z (naive mean field, visited states: a log-likelihood
        computed from it is an upper bound, i.e. optimistic); an upper bound (the
        log-likelihood is then conservative); or an approximation with neither an
        error bar nor a bound (TAP). None infers it from the other fields: exact when
        ``lower == value == upper``, an estimate with a ``std_error``, a lower (upper)
        bound when ``lower`` (``upper``) equals ``value``, else an approximation.
    converged : bool, default=True
        False when the value is less accurate than its method was asked for: annealed
        importance sampling short of its ``target_std_error``, with annealing paths
        that disagree or an estimate still rising with the betas, a mean-field
        iteration that did not converge. Scores computed from such an estimate warn on
        first use.
    caveats : tuple of str, default=()
        Why ``converged`` is False, in words (e.g. "its annealing paths disagree by
        up to 1.3 nats ..."); :meth:`describe` repeats them.

    Examples
    --------
    >>> from skboltz.partition import LogZ
    >>> z = LogZ(value=-3.2, std_error=0.05, lower=-3.35, upper=-3.05, method="ais")
    >>> float(z)
    -3.2
    >>> z.interval(2)
    (-3.3, -3.1)
    >>> z.kind
    'estimate'
    >>> LogZ(9.6, lower=9.6, method="mean_field").kind
    'lower_bound'

    The repr is short; :meth:`describe` and ``cost`` give the details:

    >>> z
    LogZ(-3.2 +- 0.05, kind='estimate', method='ais')
    """

    value: float
    std_error: float | None = None
    lower: float | None = None
    upper: float | None = None
    method: str = ""
    cost: dict = field(default_factory=dict)
    kind: str | None = None
    converged: bool = True
    caveats: tuple = ()

    def __post_init__(self):
        checked = {"value": _finite_real("value", self.value, allow_none=False)}
        for name in ("std_error", "lower", "upper"):
            checked[name] = _finite_real(name, getattr(self, name))
        if checked["std_error"] is not None and checked["std_error"] < 0:
            raise ValueError(f"LogZ.std_error must be >= 0, got {checked['std_error']}.")
        kind = self.kind
        if kind is None:
            kind = _infer_kind(checked["value"], checked["std_error"], checked["lower"],
                               checked["upper"])
        elif kind not in KINDS:
            raise ValueError(f"LogZ.kind must be one of {sorted(KINDS)} or None, got {kind!r}.")
        checked["kind"] = kind
        checked["converged"] = bool(self.converged)
        checked["caveats"] = tuple(str(text) for text in self.caveats)
        for name, value in checked.items():  # frozen: set through object
            object.__setattr__(self, name, value)

    def __repr__(self):
        # Short: the value, its error and what it is; cost and caveats on demand.
        error = f" +- {self.std_error:.3g}" if self.std_error is not None else ""
        text = f"LogZ({self.value:.6g}{error}, kind={self.kind!r}"
        if self.method:
            text += f", method={self.method!r}"
        if not self.converged:
            text += ", converged=False"
        return text + ")"

    def __float__(self):
        return float(self.value)

    @property
    def is_exact(self):
        """True when the value is exact."""
        return self.kind == "exact"

    @property
    def is_reliable(self):
        """True for an exact value, or a sampling estimate that reached its target.

        False for bounds and approximations (their error is unknown, or one-sided and
        of unknown size) and for estimates that stopped short (``converged=False``):
        the scores computed from such a value warn on first use.
        """
        return self.kind in ("exact", "estimate") and self.converged

    def describe(self):
        """One sentence saying what the value is and what it does to a log-likelihood.

        Returns
        -------
        description : str
            E.g. ``"log Z = 12.3 +- 0.02 by ais: a sampling estimate (...)"``.

        Examples
        --------
        >>> from skboltz.partition import LogZ
        >>> print(LogZ(9.6, lower=9.6, method="mean_field").describe())
        log Z = 9.6 by mean_field: a lower bound on log Z, so the log-likelihood is an upper bound (optimistic).
        """
        error = f" +- {self.std_error:.3g}" if self.std_error is not None else ""
        text = f"log Z = {self.value:.6g}{error} by {self.method or 'an estimator'}: "
        text += KINDS[self.kind]
        if not self.converged:
            text += "; it is less accurate than asked: " + (
                "; ".join(self.caveats) or "its method did not meet its accuracy criterion")
        return text + "."

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
            Long-running estimators call ``progress(done, cap)`` now and then, in
            units of their own work (states enumerated, Gibbs transitions, ...):
            the work done so far, which only grows, and a fixed cap on it (None when
            the estimator is capped by time instead). Quick ones ignore it.
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

register = registry_decorator(Z_ESTIMATORS, "ZEstimator")


def as_generator(rng):
    """A numpy Generator from None, an int or a Generator."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)
