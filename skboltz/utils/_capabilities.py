"""What a model view offers, what a strategy requires of it, and the one check between them.

Every model view class declares its :class:`Capabilities`: the unit type of each layer
(binary, Gaussian, ...) and the operations it supports. Every learning strategy and
log Z estimator declares what it :class:`Requires` of a view: the unit types it can
handle and the operations it calls (in the spirit of scikit-learn's ``HasMethods``
constraint, which names the methods an object must have). :func:`supports` compares
the two; estimators derive the string options they accept from the registries with
it, and :func:`check_supported` refuses a strategy object with one message that names
the strategy, the model and what is missing.

Nothing here imports the rest of the package (but the scikit-learn shim
``_sklearn``): views, strategies and estimators all build on it.

Examples
--------
>>> from skboltz.utils._capabilities import BINARY, RESTRICTED, Capabilities, Requires, supports
>>> rbm = Capabilities(units=(("visible", BINARY), ("hidden", BINARY)),
...                    operations={RESTRICTED})
>>> supports(rbm, Requires(units={BINARY}, operations={RESTRICTED}))
True
>>> Requires(units={BINARY}).missing(Capabilities(units=(("visible", "gaussian"),)))
['binary units, but the model has gaussian visible units']
"""

from dataclasses import dataclass

from ._sklearn import InvalidParameterError

#: Unit types (the values a unit takes given the others): 0/1, real-valued, and one of
#: K (a softmax unit, e.g. a classification RBM's class unit).
BINARY = "binary"
GAUSSIAN = "gaussian"
SOFTMAX = "softmax"

#: Operations a view declares and a strategy may require, with what each one means.
RESTRICTED = "restricted"
PAIRWISE = "pairwise"
ENUMERATION = "enumeration"
ANNEALING = "annealing"
MEAN_FIELD = "mean_field"
LAYERED = "layered"

OPERATIONS = {
    RESTRICTED: (
        "the restricted learning rule (two layers without couplings inside a layer; a "
        "training form with block Gibbs draws and the sufficient statistics)"
    ),
    PAIRWISE: (
        "the general Boltzmann learning rule (the couplings of all units as one "
        "symmetric matrix, clamped and free second moments)"
    ),
    ENUMERATION: "exact enumeration of its states (enumerate_log_weights)",
    ANNEALING: (
        "an annealing path from an independent model (interpolate, log_unnormalized, "
        "gibbs_step)"
    ),
    MEAN_FIELD: "mean-field equations over its units (coupling_matrix, bias_vector)",
    LAYERED: (
        "the learning rule of a deep Boltzmann machine (layers coupled only to their "
        "neighbours: per-layer weights and biases, a mean-field posterior of the "
        "hidden layers and two-colour block Gibbs chains)"
    ),
}


@dataclass(frozen=True)
class Capabilities:
    """What a model view offers: the unit type of each layer and its operations.

    Parameters
    ----------
    units : tuple of (str, str)
        ``(layer, unit type)`` pairs, visible layer first, e.g.
        ``(("visible", "binary"), ("hidden", "binary"))``.
    operations : frozenset of str
        Names of the operations it supports: "restricted" (the restricted learning
        rule), "pairwise" (the general Boltzmann learning rule), "layered" (the deep
        Boltzmann machine's), "enumeration", "annealing", "mean_field" (a new kind of
        view may add its own).

    Examples
    --------
    >>> from skboltz.views import GaussianRBMView, RBMView
    >>> RBMView.capabilities.unit_types == {"binary"}
    True
    >>> GaussianRBMView.capabilities.describe_units()
    'gaussian visible and binary hidden units'
    >>> "mean_field" in GaussianRBMView.capabilities.operations
    False
    """

    units: tuple = ()
    operations: frozenset = frozenset()

    def __post_init__(self):
        object.__setattr__(self, "units", tuple(tuple(layer) for layer in self.units))
        object.__setattr__(self, "operations", frozenset(self.operations))

    @property
    def unit_types(self):
        """The set of unit types over all layers."""
        return frozenset(unit for _, unit in self.units)

    def units_of(self, layer):
        """Return the unit type of a layer.

        Parameters
        ----------
        layer : str
            The layer's name, e.g. "visible".

        Returns
        -------
        unit_type : str or None
            Its unit type, None if the view has no such layer.
        """
        for name, unit in self.units:
            if name == layer:
                return unit
        return None

    def describe_units(self, only=None):
        """Describe the layers in words, e.g. "gaussian visible and binary hidden units".

        Parameters
        ----------
        only : set of str or None, default=None
            Describe only the layers of these unit types.

        Returns
        -------
        description : str
            The layers' unit types and names.
        """
        layers = [f"{unit} {layer}" for layer, unit in self.units
                  if only is None or unit in only]
        return " and ".join(layers) + " units" if layers else "no units"


@dataclass(frozen=True)
class Requires:
    """What a strategy needs of a model view.

    Parameters
    ----------
    units : set of str or None, default=None
        The unit types the strategy handles, on every layer; None handles any.
    operations : set of str, default=()
        Operations it calls, all of them ("restricted", "pairwise", "layered",
        "enumeration", "annealing", "mean_field", or a new view's own).
    any_of : set of str, default=()
        Operations of which it needs at least one (e.g. either learning rule); empty
        needs none.

    Examples
    --------
    >>> from skboltz.learning import ExactGradient
    >>> from skboltz.views import GaussianRBMView, RBMView, supports
    >>> sorted(ExactGradient.requires.units)
    ['binary']
    >>> supports(RBMView, ExactGradient), supports(GaussianRBMView, ExactGradient)
    (True, False)
    """

    units: frozenset | None = None
    operations: frozenset = frozenset()
    any_of: frozenset = frozenset()

    def __post_init__(self):
        if self.units is not None:
            object.__setattr__(self, "units", frozenset(self.units))
        object.__setattr__(self, "operations", frozenset(self.operations))
        object.__setattr__(self, "any_of", frozenset(self.any_of))

    def missing(self, capabilities):
        """List what a view's capabilities lack of these requirements.

        Parameters
        ----------
        capabilities : Capabilities
            What the view offers.

        Returns
        -------
        missing : list of str
            One phrase per unmet requirement; empty when all are met.
        """
        missing = []
        if self.units is not None and not capabilities.unit_types <= self.units:
            other = capabilities.unit_types - self.units
            missing.append(
                f"{' or '.join(sorted(self.units))} units, but the model has "
                f"{capabilities.describe_units(only=other)}"
            )
        missing.extend(
            f"{OPERATIONS.get(name, name)}, which the model does not offer"
            for name in sorted(self.operations - capabilities.operations)
        )
        if self.any_of and not self.any_of & capabilities.operations:
            needed = " or ".join(OPERATIONS.get(name, name) for name in sorted(self.any_of))
            missing.append(f"{needed}, which the model does not offer")
        return missing


def capabilities_of(view):
    """The :class:`Capabilities` a view (or view class) declares."""
    return getattr(view, "capabilities", Capabilities())


def requirements_of(strategy):
    """The :class:`Requires` a strategy (or strategy class) declares; None if it declares none."""
    return getattr(strategy, "requires", Requires())


def missing_capabilities(view, strategy):
    """What ``view`` lacks of what ``strategy`` requires, as phrases (empty: supported)."""
    requires = requirements_of(strategy)
    if requires is None:
        return ["a declaration of what the strategy requires (its class attribute "
                "``requires``; subclass RBMLearningStrategy or BMLearningStrategy, which "
                "declare theirs)"]
    return requires.missing(capabilities_of(view))


def supports(view, strategy):
    """Tell whether a model view meets what a strategy requires.

    Parameters
    ----------
    view : model view, view class or Capabilities
        What is offered (a view's class attribute ``capabilities``).
    strategy : strategy, strategy class or Requires
        What is needed (a strategy's class attribute ``requires``).

    Returns
    -------
    supported : bool
        True when nothing is missing.

    Examples
    --------
    >>> from skboltz.learning import PCD, Gibbs
    >>> from skboltz.partition import MeanField
    >>> from skboltz.views import BMView, GaussianRBMView, RBMView, supports
    >>> supports(RBMView, PCD), supports(BMView, PCD), supports(BMView, Gibbs)
    (True, False, True)
    >>> supports(GaussianRBMView, MeanField)
    False
    """
    if isinstance(view, Capabilities):
        view = _Declared(view)
    if isinstance(strategy, Requires):
        strategy = _Declaring(strategy)
    return not missing_capabilities(view, strategy)


def check_supported(strategy, view, *, owner, parameter, options=()):
    """Raise an error naming both sides when ``view`` cannot serve ``strategy``.

    The error is scikit-learn's ``InvalidParameterError`` (a ValueError), as for any
    other invalid parameter value.

    Parameters
    ----------
    strategy : object
        A learning strategy or log Z estimator (its class attribute ``requires``).
    view : model view or view class
        What the estimator gives its strategies (its class attribute ``capabilities``).
    owner : str
        The estimator's name, for the message.
    parameter : str
        The estimator's parameter that holds the strategy ("learning", ...).
    options : iterable of str
        The names the estimator accepts, suggested in the message (the first first).
    """
    missing = missing_capabilities(view, strategy)
    if not missing:
        return
    view_class = view if isinstance(view, type) else type(view)
    options = list(options)
    suggestion = ""
    if options:
        others = f" (or one of {options[1:]})" if len(options) > 1 else ""
        suggestion = (f" Use {parameter}={options[0]!r}{others}, or a strategy whose "
                      "requirements the model meets.")
    raise InvalidParameterError(
        f"{owner} cannot use {parameter}={type(strategy).__name__}: it needs "
        f"{'; and '.join(missing)} ({owner}'s model view: {view_class.__name__}, with "
        f"{capabilities_of(view).describe_units()}).{suggestion}"
    )


class _Declared:
    def __init__(self, capabilities):
        self.capabilities = capabilities


class _Declaring:
    def __init__(self, requires):
        self.requires = requires


__all__ = [
    "ANNEALING",
    "BINARY",
    "ENUMERATION",
    "GAUSSIAN",
    "LAYERED",
    "MEAN_FIELD",
    "OPERATIONS",
    "PAIRWISE",
    "RESTRICTED",
    "SOFTMAX",
    "Capabilities",
    "Requires",
    "check_supported",
    "supports",
]
