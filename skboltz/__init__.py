"""skboltz: Boltzmann machines for scikit-learn.

Restricted and general Boltzmann machines with scikit-learn's API, pluggable learning
strategies and partition-function estimators, and a true log-likelihood.
"""

from . import datasets, exceptions, learning, partition, views
from ._boltzmann import BoltzmannMachine
from ._categorical_rbm import CategoricalRBM
from ._classifier import BoltzmannClassifier
from ._dbm import DBM
from ._dbn import DBN
from ._dbn_classifier import DBNClassifier
from ._gaussian_rbm import GaussianRBM
from ._imputer import RBMImputer
from ._outliers import LikelihoodOutlierDetector
from ._rbm import RBM
from ._rbm_classifier import RBMClassifier
from ._tabular_rbm import TabularRBM

__version__ = "0.1.0.dev0"

__all__ = [
    "DBM",
    "DBN",
    "DBNClassifier",
    "RBM",
    "RBMClassifier",
    "RBMImputer",
    "BoltzmannClassifier",
    "BoltzmannMachine",
    "CategoricalRBM",
    "GaussianRBM",
    "LikelihoodOutlierDetector",
    "TabularRBM",
    "datasets",
    "exceptions",
    "learning",
    "partition",
    "views",
    "__version__",
]
