"""Warnings and errors raised by skboltz."""


class TrainingDivergedError(FloatingPointError):
    """Training produced non-finite parameters or statistics.

    The estimator is left exactly as it was before the call that diverged. The usual
    cure is a smaller ``learning_rate`` (or a larger ``batch_size``).
    """


class TooManyStatesError(ValueError):
    """Exact enumeration was asked for a model with too many states."""


class DataRangeWarning(UserWarning):
    """Input values lie outside [0, 1], the range Bernoulli units model."""


class MeanFieldConvergenceWarning(UserWarning):
    """A mean-field fixed-point iteration stopped before converging."""


__all__ = [
    "DataRangeWarning",
    "MeanFieldConvergenceWarning",
    "TooManyStatesError",
    "TrainingDivergedError",
]
