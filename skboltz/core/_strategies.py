"""The two pluggable parameters, ``learning`` and ``z_estimator``: a string or an object.

A string names a registered class (:data:`~skboltz.learning.LEARNING_STRATEGIES`,
:data:`~skboltz.partition.Z_ESTIMATORS`) and becomes a default object of it at ``fit``;
an object is cloned, never mutated. Which names an estimator accepts follows from its
view's capabilities (:func:`accepted_strategies`): its parameter constraints
(:func:`strategy_constraints`), its docstring's option lists
(:func:`document_strategy_options`) and the refusal of an object it cannot serve
(:class:`StrategiesMixin`) all come from there.
"""

import functools
import inspect

from sklearn.base import clone

from ..utils._capabilities import check_supported, supports
from ..utils._sklearn import StrOptions
from ..learning._base import LEARNING_STRATEGIES, LearningStrategy
from ..partition._base import Z_ESTIMATORS, ZEstimator

#: "auto" picks exact enumeration up to this many states, else AIS.
AUTO_EXACT_MAX_STATES = 2**20

#: Parameters whose value is a strategy: a string names a default object.
STRATEGY_PARAMETERS = ("learning", "z_estimator")


@functools.cache
def accepted_strategies(view_class):
    """The registered learning strategies and log Z estimators a model view class
    supports: two dicts, name -> class (see :mod:`skboltz.utils._capabilities`)."""
    return (
        {name: cls for name, cls in LEARNING_STRATEGIES.items() if supports(view_class, cls)},
        {name: cls for name, cls in Z_ESTIMATORS.items() if supports(view_class, cls)},
    )


def strategy_constraints(view_class):
    """The ``learning`` and ``z_estimator`` constraints of a model whose view class is
    ``view_class``: the registered names its view supports, or an object."""
    learning, z_estimators = accepted_strategies(view_class)
    return {
        "learning": [StrOptions(set(learning)), LearningStrategy],
        "z_estimator": [StrOptions({"auto", *z_estimators}), ZEstimator],
    }


def document_strategy_options(doc, view_class, default_learning):
    """Fill ``{learning_options}`` and ``{z_estimator_options}`` in a model's docstring
    with the names it accepts (the default first)."""
    learning, z_estimators = accepted_strategies(view_class)

    def names(first, others):
        ordered = [first, *sorted(set(others) - {first})]
        return "{" + ", ".join(f'"{name}"' for name in ordered) + "}"

    return doc.replace("{learning_options}", names(default_learning, learning)).replace(
        "{z_estimator_options}", names("auto", z_estimators)
    )


class StrategiesMixin:
    """An estimator's ``learning`` and ``z_estimator``: resolved to fresh objects, and
    their settings guarded in ``set_params`` (see the module docstring)."""

    def set_params(self, **params):
        """Set the parameters of this estimator (see scikit-learn's ``set_params``).

        Settings of a strategy (``learning__n_steps``, ``z_estimator__n_chains``, ...)
        can only be set when that parameter holds a strategy object; a string names a
        default object, which has nothing to set.

        Parameters
        ----------
        **params : dict
            Estimator parameters.

        Returns
        -------
        self : estimator instance
            Estimator instance.
        """
        for key in params:
            name, _, setting = key.partition("__")
            value = params.get(name, getattr(self, name, None))
            if setting and name in STRATEGY_PARAMETERS and isinstance(value, str):
                raise ValueError(
                    f"Cannot set {key!r}: {name}={value!r} is a string naming a default "
                    f"strategy, which has no {setting!r} to set. Pass the strategy "
                    f"object instead, e.g. {name}={self._strategy_class_name(name, value)}"
                    f"({setting}=...), or search over objects: "
                    f"{{'{name}': [{self._strategy_class_name(name, value)}(...), ...]}}."
                )
        return super().set_params(**params)

    def _strategy_class_name(self, name, value):
        registry = LEARNING_STRATEGIES if name == "learning" else Z_ESTIMATORS
        cls = registry.get(value)
        return cls.__name__ if cls is not None else "<StrategyClass>"

    def _resolve_learning(self):
        learning = self.learning
        if type(learning) is str:  # every partial_fit call: the short path
            cls = accepted_strategies(self._view_class)[0].get(learning)
            if cls is not None:
                return cls()
        return self._resolve_strategy(learning, "learning")

    def _auto_z_estimator(self, view):
        if 2**view.n_enumerated_units <= AUTO_EXACT_MAX_STATES or "ais" not in Z_ESTIMATORS:
            return "exact"
        return "ais"

    def _resolve_z_estimator(self, spec, view):
        if isinstance(spec, str) and spec == "auto":
            spec = self._auto_z_estimator(view)
        return self._resolve_strategy(spec, "z_estimator")

    def _resolve_strategy(self, spec, parameter):
        """A fresh strategy from a name or a user's object (cloned, never mutated),
        refused unless the model's view meets what it requires."""
        learning, z_estimators = accepted_strategies(self._view_class)
        accepted, registry, base_class = (
            (learning, LEARNING_STRATEGIES, LearningStrategy) if parameter == "learning"
            else (z_estimators, Z_ESTIMATORS, ZEstimator)
        )
        if isinstance(spec, str) and spec in accepted:
            # Default parameters: their validation (a test checks them) would cost as
            # much as a partial_fit's update.
            return accepted[spec]()
        if isinstance(spec, base_class):
            strategy = clone(spec)
            strategy._validate_params()
        elif isinstance(spec, str) and spec in registry:
            strategy = registry[spec]()
        else:
            what = "learning strategy" if parameter == "learning" else parameter
            raise ValueError(
                f"Unknown {what} {spec!r}; choose one of {sorted(accepted)} or pass a "
                f"{base_class.__name__} object."
            )
        check_supported(strategy, self._view_class, owner=type(self).__name__,
                        parameter=parameter, options=self._options_to_suggest(parameter))
        return strategy

    def _options_to_suggest(self, parameter):
        """The names ``parameter`` accepts, its default first (for error messages)."""
        default = inspect.signature(type(self)).parameters[parameter].default
        learning, z_estimators = accepted_strategies(self._view_class)
        accepted = learning if parameter == "learning" else {"auto", *z_estimators}
        return [default, *sorted(set(accepted) - {default})]


__all__ = ["StrategiesMixin", "document_strategy_options", "strategy_constraints"]
