"""Read-only model views: what learning strategies and log Z estimators work on.

A model view bundles a model's parameter arrays with the few operations that
strategies need (energies, free energies, conditionals, one Gibbs step, the annealing
path, enumeration). Estimators hand their strategies a view of the current
parameters, so one strategy serves every model with the same math, and a strategy can
be tested on hand-built parameters without fitting anything.

Every view satisfies the :class:`ModelView` protocol, where the contract is written
down; :class:`RBMView`, :class:`GaussianRBMView`, :class:`CategoricalRBMView`,
:class:`TabularRBMView`, :class:`BMView` and :class:`ClassRBMView` are the views of
:class:`~skboltz.RBM`, :class:`~skboltz.GaussianRBM`, :class:`~skboltz.CategoricalRBM`,
:class:`~skboltz.TabularRBM`, :class:`~skboltz.BoltzmannMachine` and
:class:`~skboltz.RBMClassifier` (build one from
a fitted model's attributes, as in their examples), and :class:`DBMView` that of a
deep Boltzmann machine. Views do not change their arrays.

The restricted models share one view, :class:`RestrictedView`, over a pair of layers:
a layer (:class:`Layer`) is a unit type with its parameters (:class:`BinaryUnits`,
:class:`GaussianUnits`, :class:`SoftmaxUnits`, or several groups side by side,
:class:`LayerGroups`), and a new unit type is one subclass of :class:`Layer`.

Examples
--------
>>> import numpy as np
>>> from skboltz.partition import Exact
>>> from skboltz.views import ModelView, RBMView
>>> view = RBMView(weights=np.zeros((2, 3)), visible_bias=np.zeros(3),
...                hidden_bias=np.zeros(2))
>>> isinstance(view, ModelView)
True
>>> bool(np.isclose(Exact().estimate(view).value, 5 * np.log(2)))  # 2**5 states
True
"""

from .models._boltzmann_energy import BMView
from .utils._capabilities import (
    ANNEALING,
    BINARY,
    ENUMERATION,
    GAUSSIAN,
    LAYERED,
    MEAN_FIELD,
    PAIRWISE,
    RESTRICTED,
    SOFTMAX,
    Capabilities,
    Requires,
    supports,
)
from .estimators._categorical_rbm import CategoricalRBMView
from .models._dbm_energy import DBMView
from .utils._energy import ModelView
from .models._gaussian_rbm_energy import GaussianRBMView
from .units._layers import BinaryUnits, GaussianUnits, Layer, LayerGroups, SoftmaxUnits
from .models._rbm_classifier_energy import ClassRBMView
from .models._rbm_energy import RBMView
from .models._restricted_energy import RestrictedView
from .estimators._tabular_rbm import TabularRBMView

# Documented, pickled and shown under their public home.
for _public in (ModelView, RestrictedView, RBMView, GaussianRBMView, CategoricalRBMView,
                TabularRBMView, BMView, ClassRBMView, DBMView, Layer, BinaryUnits,
                GaussianUnits, SoftmaxUnits, LayerGroups, Capabilities, Requires, supports):
    _public.__module__ = __name__
del _public

__all__ = [
    "ANNEALING",
    "BINARY",
    "BMView",
    "BinaryUnits",
    "Capabilities",
    "CategoricalRBMView",
    "ClassRBMView",
    "DBMView",
    "ENUMERATION",
    "GAUSSIAN",
    "GaussianRBMView",
    "GaussianUnits",
    "LAYERED",
    "Layer",
    "LayerGroups",
    "MEAN_FIELD",
    "ModelView",
    "PAIRWISE",
    "RBMView",
    "RESTRICTED",
    "Requires",
    "RestrictedView",
    "SOFTMAX",
    "SoftmaxUnits",
    "TabularRBMView",
    "supports",
]
