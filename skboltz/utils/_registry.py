"""The string registries of the pluggable strategies: name -> class.

:mod:`skboltz.learning` (``LEARNING_STRATEGIES``) and :mod:`skboltz.partition`
(``Z_ESTIMATORS``) each keep a plain dict and a ``register`` decorator made here, so
that a new strategy or estimator is one class in one file, usable by its name.
Nothing here imports the rest of the package.
"""


def registry_decorator(registry, what):
    """The ``register(name)`` class decorator of ``registry`` (a dict name -> class):
    it sets the class's ``name`` and adds the class under it. ``what`` names the
    registry's kind of class in the decorator's docstring."""

    def register(name):
        def decorator(cls):
            cls.name = name
            registry[name] = cls
            return cls

        return decorator

    register.__doc__ = (
        f"Class decorator adding a {what} to the string registry under ``name``."
    )
    return register
