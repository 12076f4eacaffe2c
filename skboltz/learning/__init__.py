"""Learning strategies: how the negative (free) phase statistics are estimated.

Pass a string or one of these objects as ``learning`` to a skboltz model; tune a
strategy's settings in a grid search as ``learning__n_steps`` and so on.
"""

from ._base import (
    LEARNING_STRATEGIES,
    BMLearningStrategy,
    DBMLearningStrategy,
    LearningStrategy,
    RBMLearningStrategy,
)
from ._boltzmann import Gibbs, MeanFieldGradient
from ._dbm import MeanFieldPCD
from ._exact import ExactGradient
from ._sampling import CD, PCD, ParallelTempering
from ._tap import TAPGradient

__all__ = [
    "BMLearningStrategy",
    "CD",
    "DBMLearningStrategy",
    "ExactGradient",
    "Gibbs",
    "LEARNING_STRATEGIES",
    "LearningStrategy",
    "MeanFieldGradient",
    "MeanFieldPCD",
    "PCD",
    "ParallelTempering",
    "RBMLearningStrategy",
    "TAPGradient",
]
