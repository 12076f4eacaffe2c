"""skboltz: Boltzmann machines for scikit-learn.

Restricted and general Boltzmann machines with scikit-learn's API, pluggable learning
strategies and partition-function estimators, and a true log-likelihood.
"""

import importlib as _importlib
import sys as _sys

from . import datasets, exceptions, learning, partition, views
from .estimators._boltzmann import BoltzmannMachine
from .estimators._categorical_rbm import CategoricalRBM
from .meta._classifier import BoltzmannClassifier
from .estimators._dbm import DBM
from .meta._dbn import DBN
from .meta._dbn_classifier import DBNClassifier
from .estimators._gaussian_rbm import GaussianRBM
from .meta._imputer import RBMImputer
from .meta._outliers import LikelihoodOutlierDetector
from .estimators._rbm import RBM
from .estimators._rbm_classifier import RBMClassifier
from .estimators._tabular_rbm import TabularRBM

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

# Pickles of models fitted before the private modules were grouped by layer
# (0.1.0.dev0 and earlier) name the flat modules (skboltz._rbm, ...): each old
# name stays an alias of the module that now holds its classes.
_MOVED_MODULES = {
    "skboltz._array_api": "skboltz.utils._array_api",
    "skboltz._array_api_gaussian_rbm": "skboltz.estimators._array_api_gaussian_rbm",
    "skboltz._array_api_rbm": "skboltz.estimators._array_api_rbm",
    "skboltz._array_api_restricted": "skboltz.estimators._array_api_restricted",
    "skboltz._array_api_tables": "skboltz.estimators._array_api_tables",
    "skboltz._base": "skboltz.core._base",
    "skboltz._boltzmann": "skboltz.estimators._boltzmann",
    "skboltz._boltzmann_energy": "skboltz.models._boltzmann_energy",
    "skboltz._capabilities": "skboltz.utils._capabilities",
    "skboltz._categorical_rbm": "skboltz.estimators._categorical_rbm",
    "skboltz._classifier": "skboltz.meta._classifier",
    "skboltz._dbm": "skboltz.estimators._dbm",
    "skboltz._dbm_energy": "skboltz.models._dbm_energy",
    "skboltz._dbm_pretraining": "skboltz.estimators._dbm_pretraining",
    "skboltz._dbn": "skboltz.meta._dbn",
    "skboltz._dbn_classifier": "skboltz.meta._dbn_classifier",
    "skboltz._degeneracy": "skboltz.core._degeneracy",
    "skboltz._divergence": "skboltz.core._divergence",
    "skboltz._energy": "skboltz.utils._energy",
    "skboltz._enumeration": "skboltz.utils._enumeration",
    "skboltz._gaussian_rbm": "skboltz.estimators._gaussian_rbm",
    "skboltz._gaussian_rbm_energy": "skboltz.models._gaussian_rbm_energy",
    "skboltz._imputer": "skboltz.meta._imputer",
    "skboltz._independence": "skboltz.core._independence",
    "skboltz._inference": "skboltz.core._inference",
    "skboltz._labels": "skboltz.core._labels",
    "skboltz._layered_rbm": "skboltz.estimators._layered_rbm",
    "skboltz._layers": "skboltz.units._layers",
    "skboltz._missing": "skboltz.models._missing",
    "skboltz._monitoring": "skboltz.core._monitoring",
    "skboltz._noise": "skboltz.utils._noise",
    "skboltz._outliers": "skboltz.meta._outliers",
    "skboltz._rbm": "skboltz.estimators._rbm",
    "skboltz._rbm_classifier": "skboltz.estimators._rbm_classifier",
    "skboltz._rbm_classifier_energy": "skboltz.models._rbm_classifier_energy",
    "skboltz._rbm_energy": "skboltz.models._rbm_energy",
    "skboltz._registry": "skboltz.utils._registry",
    "skboltz._restricted": "skboltz.estimators._restricted",
    "skboltz._restricted_energy": "skboltz.models._restricted_energy",
    "skboltz._runtime": "skboltz.utils._runtime",
    "skboltz._scoring": "skboltz.core._scoring",
    "skboltz._sklearn": "skboltz.utils._sklearn",
    "skboltz._strategies": "skboltz.core._strategies",
    "skboltz._tabular_rbm": "skboltz.estimators._tabular_rbm",
    "skboltz._training": "skboltz.core._training",
    "skboltz._transactions": "skboltz.core._transactions",
    "skboltz._update": "skboltz.core._update",
    "skboltz._validation": "skboltz.utils._validation",
    "skboltz._weights": "skboltz.utils._weights",
}
for _old, _new in _MOVED_MODULES.items():
    _sys.modules.setdefault(_old, _importlib.import_module(_new))
del _old, _new
