"""scikit-learn's estimator checks on every skboltz estimator, with no expected failures."""

import pytest
from sklearn.neighbors import KernelDensity
from sklearn.utils.estimator_checks import parametrize_with_checks

from skboltz import DBN, RBM, BoltzmannClassifier
from skboltz.learning import CD, PCD, ParallelTempering

# Small, fast instances covering each learning string and object-valued strategies.
ESTIMATORS = [
    RBM(n_components=3, n_iter=3, random_state=0),
    RBM(n_components=3, learning="cd", n_iter=3, random_state=0),
    RBM(n_components=3, learning="pt", n_iter=3, random_state=0),
    RBM(n_components=3, learning=CD(n_steps=(1, 3)), n_iter=3, random_state=0),
    RBM(n_components=3, learning=PCD(n_chains=7), n_iter=3, random_state=0),
    RBM(n_components=3, learning=ParallelTempering(n_temperatures=4), n_iter=3,
        random_state=0),
    RBM(n_components=3, z_estimator="exact", n_iter=2, random_state=0),
    DBN(hidden_layer_sizes=(4, 3), rbm=RBM(n_iter=2), random_state=0),
    DBN(hidden_layer_sizes=[3], rbm=RBM(learning="cd", n_iter=2, random_state=0)),
    BoltzmannClassifier(RBM(n_components=3, n_iter=5, random_state=0)),
    BoltzmannClassifier(KernelDensity(bandwidth=0.5)),
]


@pytest.mark.filterwarnings("ignore::skboltz.exceptions.DataRangeWarning")
@parametrize_with_checks(ESTIMATORS, expected_failed_checks=lambda est: {})
def test_sklearn_compatible(estimator, check):
    check(estimator)
