"""scikit-learn's estimator checks on every skboltz estimator, with no expected failures."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from skboltz import RBM, BoltzmannMachine
from skboltz.learning import CD, PCD, Gibbs, MeanField, ParallelTempering

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
    # General Boltzmann machines: each learning method, hidden-hidden couplings, none.
    BoltzmannMachine(n_hidden=2, learning="exact", max_iter=2, random_state=0),
    BoltzmannMachine(n_hidden=2, learning="gibbs", max_iter=2, random_state=0),
    BoltzmannMachine(n_hidden=2, learning="mean_field", max_iter=2, random_state=0),
    BoltzmannMachine(n_hidden=3, connectivity="no_hidden_hidden", learning=Gibbs(
        n_sweeps=2, n_chains=20, annealing=[(3.0, 1), (2.0, 1)]), max_iter=2,
        random_state=0),
    BoltzmannMachine(n_hidden=3, learning=MeanField(linear_response=False), max_iter=2,
                     random_state=0),
    BoltzmannMachine(n_hidden=0, learning="exact", max_iter=2, random_state=0),
]


@pytest.mark.filterwarnings("ignore::skboltz.exceptions.DataRangeWarning")
@parametrize_with_checks(ESTIMATORS, expected_failed_checks=lambda est: {})
def test_sklearn_compatible(estimator, check):
    check(estimator)
