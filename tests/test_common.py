"""scikit-learn's estimator checks on every skboltz estimator, with no expected failures."""

import numpy as np
import pytest
from sklearn import config_context
from sklearn.base import BaseEstimator, clone
from sklearn.neighbors import KernelDensity
from sklearn.utils.estimator_checks import estimator_checks_generator, parametrize_with_checks

from skboltz import (
    DBM,
    DBN,
    RBM,
    BoltzmannClassifier,
    BoltzmannMachine,
    CategoricalRBM,
    DBNClassifier,
    GaussianRBM,
    LikelihoodOutlierDetector,
    RBMClassifier,
    RBMImputer,
    TabularRBM,
)
from skboltz.learning import (
    CD,
    PCD,
    ExactGradient,
    Gibbs,
    MeanFieldGradient,
    MeanFieldPCD,
    ParallelTempering,
    TAPGradient,
)
from skboltz.partition import AIS, MeanField, VisitedStates

# Every estimator with its default parameters, then small, fast instances covering
# each learning string and object-valued strategies.
ESTIMATORS = [
    RBM(),
    BoltzmannMachine(),
    DBN(),
    BoltzmannClassifier(),
    DBNClassifier(),
    RBMClassifier(),
    LikelihoodOutlierDetector(),
    RBM(n_components=3, n_iter=3, random_state=0),
    RBM(n_components=3, learning="cd", n_iter=3, random_state=0),
    RBM(n_components=3, visible_bias_init="zero", momentum=0.0, n_iter=3, random_state=0),
    RBM(n_components=3, learning="pt", n_iter=3, random_state=0),
    RBM(n_components=3, learning=CD(n_steps=(1, 3)), n_iter=3, random_state=0),
    RBM(n_components=3, learning=PCD(n_chains=7), n_iter=3, random_state=0),
    RBM(n_components=3, learning=ParallelTempering(n_temperatures=4), n_iter=3,
        random_state=0),
    RBM(n_components=3, z_estimator="exact", n_iter=2, random_state=0),
    RBM(n_components=3, z_estimator="ais", n_iter=2, random_state=0),
    RBM(n_components=3, z_estimator="mean_field", n_iter=2, random_state=0),
    RBM(n_components=3, z_estimator="tap", n_iter=2, random_state=0),
    RBM(n_components=3, z_estimator=AIS(n_chains=10, n_betas=50), n_iter=2,
        random_state=0),
    RBM(n_components=3, z_estimator=MeanField(order=2, damping=0.3), n_iter=2,
        random_state=0),
    RBM(n_components=3, z_estimator=VisitedStates(n_chains=5, n_steps=20), n_iter=2,
        random_state=0),
    RBM(n_components=3, learning="exact", n_iter=3, random_state=0),
    RBM(n_components=3, learning="tap", n_iter=3, random_state=0),
    RBM(n_components=3, learning=ExactGradient(chunk_size=2), n_iter=2, random_state=0),
    RBM(n_components=3, learning=TAPGradient(n_chains=4, max_iter=2), n_iter=2, random_state=0),
    # General Boltzmann machines: each learning method, hidden-hidden couplings, none.
    BoltzmannMachine(n_hidden=2, learning="exact", n_iter=2, random_state=0),
    BoltzmannMachine(n_hidden=2, learning="gibbs", n_iter=2, random_state=0),
    BoltzmannMachine(n_hidden=2, learning="mean_field", n_iter=2, random_state=0),
    BoltzmannMachine(n_hidden=3, connectivity="no_hidden_hidden", learning=Gibbs(
        n_steps=2, n_chains=20, annealing=[(3.0, 1), (2.0, 1)]), n_iter=2,
        random_state=0),
    BoltzmannMachine(n_hidden=3, learning=MeanFieldGradient(linear_response=False),
                     n_iter=2, random_state=0),
    BoltzmannMachine(n_hidden=0, learning="exact", n_iter=2, random_state=0),
    # Gaussian-Bernoulli RBMs: the defaults, each learning string, strategy objects,
    # fixed variances, each log Z estimator it accepts, whitening.
    GaussianRBM(),
    GaussianRBM(n_components=3, n_iter=3, random_state=0),
    GaussianRBM(n_components=3, learning="cd", n_iter=3, random_state=0),
    GaussianRBM(n_components=3, learning="pcd", learn_variance=False, n_iter=3,
                random_state=0),
    GaussianRBM(n_components=3, learning=PCD(n_steps=2, n_chains=7), momentum=0.0,
                average_window=None, n_iter=3, random_state=0),
    GaussianRBM(n_components=3, learning=ParallelTempering(n_temperatures=3), n_iter=3,
                random_state=0),
    GaussianRBM(n_components=3, z_estimator=AIS(n_chains=10, n_betas=50), n_iter=2,
                random_state=0),
    GaussianRBM(n_components=3, z_estimator="visited_states", n_iter=2, random_state=0),
    GaussianRBM(n_components=3, whiten=True, n_iter=3, random_state=0),
    # Categorical RBMs: the defaults, each learning string it accepts, an object, each
    # log Z estimator it accepts, categories declared ahead.
    CategoricalRBM(),
    CategoricalRBM(n_components=3, n_iter=3, random_state=0),
    CategoricalRBM(n_components=3, learning="cd", n_iter=3, random_state=0),
    CategoricalRBM(n_components=3, learning=ParallelTempering(n_temperatures=3), n_iter=3,
                   random_state=0),
    CategoricalRBM(n_components=3, z_estimator="ais", min_categories=4, n_iter=2,
                   random_state=0),
    # The imputer: its default model (chosen by the columns), draws, the indicator,
    # empty features kept, each model given, another placeholder.
    RBMImputer(),
    RBMImputer(sample_posterior=True, add_indicator=True, random_state=0),
    RBMImputer(keep_empty_features=True, random_state=0),
    RBMImputer(RBM(n_components=3, n_iter=3), random_state=0),
    RBMImputer(GaussianRBM(n_components=3, n_iter=3), sample_posterior=True, random_state=0),
    RBMImputer(CategoricalRBM(n_components=3, n_iter=3), random_state=0),
    RBMImputer(TabularRBM(n_components=3, n_iter=3), random_state=0),
    RBMImputer(missing_values=-1, random_state=0),
    # Tabular RBMs: the defaults (every column of an array numeric), each learning
    # string it accepts, a categorical column of codes, the AIS over hidden states.
    TabularRBM(),
    TabularRBM(n_components=3, n_iter=3, random_state=0),
    TabularRBM(n_components=3, learning="pcd", learning_rate=0.01, n_iter=3,
               random_state=0),
    TabularRBM(n_components=3, learning="cd", learning_rate=0.01, n_iter=3,
               random_state=0),
    TabularRBM(n_components=3, z_estimator=AIS(n_chains=10, n_betas=50), n_iter=2,
               random_state=0),
    # Not here: a TabularRBM given categorical columns by position. scikit-learn's
    # checks make an estimator tagged categorical and allow_nan float codes and then
    # subtract their float mean (check_positive_only_tag_during_fit): fractional codes,
    # which it rightly refuses, beside numeric columns of any sign that no honest
    # positive_only tag covers. Its categorical path (codes, unknown codes, NaN, AIS
    # over hidden states, pickling, cloning, dtypes) is tested in test_tabular.py and
    # test_missing.py, and the softmax groups by CategoricalRBM's instances above.
    # Deep Boltzmann machines: the defaults, one and three hidden layers, pretraining,
    # the bound and the per-row estimate, every layer's features, strategy objects.
    DBM(),
    DBM(hidden_layer_sizes=(3, 2), n_iter=2, random_state=0),
    DBM(hidden_layer_sizes=(3,), n_iter=2, random_state=0),
    DBM(hidden_layer_sizes=(3, 2, 2), pretraining_iter=2, n_iter=2, random_state=0),
    DBM(hidden_layer_sizes=(3, 2), likelihood="bound", transform_layers="all",
        centering=False, average_window=None, n_iter=2, random_state=0),
    DBM(hidden_layer_sizes=(3, 2), learning=MeanFieldPCD(n_steps=2, n_chains=7,
                                                         start="bottom_up"),
        z_estimator=AIS(n_chains=10, n_betas=50), n_iter=2, random_state=0),
    DBM(hidden_layer_sizes=(3, 2), likelihood="estimate",
        z_estimator=AIS(n_chains=10, n_betas=20, target_std_error=None), n_iter=1,
        random_state=0),
    # Deep belief nets and class-wise density classifiers.
    DBN(hidden_layer_sizes=(4, 3), rbm=RBM(n_iter=2), random_state=0),
    DBN(hidden_layer_sizes=[3], rbm=RBM(learning="cd", n_iter=2, random_state=0)),
    DBN(hidden_layer_sizes=(4, 3), first_layer=GaussianRBM(n_iter=2), rbm=RBM(n_iter=2),
        random_state=0),
    # The checks train classifiers on standardised blobs, outside [0, 1], which binary
    # units see clipped into it (as in fit, so in scoring): these settings reach 0.85
    # accuracy on them, the check wants 0.83 (a 5-nearest-neighbour classifier of the
    # clipped rows reaches 0.88).
    BoltzmannClassifier(RBM(n_components=8, n_iter=20, learning_rate=0.3, random_state=0)),
    # (fixed variances: check_sample_weights_shape's classes hold constant features,
    # whose learnt variance GaussianRBM refuses)
    BoltzmannClassifier(GaussianRBM(n_components=3, n_iter=5, learn_variance=False,
                                    random_state=0)),
    BoltzmannClassifier(KernelDensity(bandwidth=0.5)),
    # Novelty detection over each density model, with "auto" and a fraction.
    LikelihoodOutlierDetector(RBM(n_components=3, n_iter=3, random_state=0)),
    LikelihoodOutlierDetector(GaussianRBM(n_components=3, n_iter=3), contamination=0.1,
                              random_state=0),
    LikelihoodOutlierDetector(BoltzmannMachine(n_hidden=2, n_iter=2), contamination=0.2,
                              random_state=0),
    LikelihoodOutlierDetector(DBM(hidden_layer_sizes=(3, 2), n_iter=2, random_state=0),
                              contamination=0.5),
    # Pretrained networks: each fine-tuning solver, two layers, a marker.
    DBNClassifier(4, rbm=RBM(n_iter=2), max_iter=20, random_state=0),
    DBNClassifier((4, 3), rbm=RBM(learning="cd", n_iter=2), solver="adam",
                  learning_rate_init=0.01, max_iter=50, random_state=0),
    DBNClassifier((4,), rbm=RBM(n_iter=2), solver="lbfgs", max_iter=30,
                  unlabelled_marker="unlabelled", random_state=0),
    # Classification RBMs: discriminative, hybrid with each sampler, semi-supervised,
    # early stopping, averaging and momentum, each log Z estimator it accepts.
    RBMClassifier(n_components=3, generative_weight=0.0, n_iter=3, random_state=0),
    RBMClassifier(n_components=3, n_iter=3, random_state=0),
    RBMClassifier(n_components=3, learning="pcd", n_iter=3, random_state=0),
    RBMClassifier(n_components=3, learning=ParallelTempering(n_temperatures=3), n_iter=3,
                  random_state=0),
    # (the checks' labels include -1: a marker they never use keeps it a class)
    RBMClassifier(n_components=3, unlabelled_marker=-99, n_iter=3, random_state=0),
    RBMClassifier(n_components=3, validation_fraction=0.3, n_iter_no_change=2, n_iter=5,
                  random_state=0),
    RBMClassifier(n_components=3, average_window=10, momentum=(0.5, 0.9),
                  weight_decay=1e-3, n_iter=3, random_state=0),
    RBMClassifier(n_components=3, z_estimator=AIS(n_chains=10, n_betas=50), n_iter=5,
                  random_state=0),
    RBMClassifier(n_components=3, z_estimator="visited_states", n_iter=5, random_state=0),
]


# Instances whose fit is deterministic and does not depend on the order of the rows,
# so that scikit-learn's check that integer sample weights equal repeated rows (and
# zero weights removed rows) can hold to rounding: exact or closed-form statistics
# over one full minibatch (batch_size above any check's rows), or, for the models whose
# every learning strategy samples, no epoch at all (n_iter=0: the fit is the
# starting values learnt from the weighted data). They pass every check. (The exact
# Boltzmann machine enumerates the check's 30 visible units, too many; a categorical
# model refuses the check's real values: both stay with the instances below.)
EXACT = {"learning": "exact", "batch_size": 1000}
WEIGHT_EXACT_ESTIMATORS = [
    RBM(n_components=3, n_iter=3, random_state=0, **EXACT),
    RBM(n_components=3, visible_bias_init="data_rates", momentum=0.5,
        average_window=None, n_iter=3, random_state=0, **EXACT),
    RBM(n_components=3, z_estimator="ais", n_iter=2, random_state=0, **EXACT),
    RBM(n_components=3, learning=ExactGradient(chunk_size=2), batch_size=1000, n_iter=2,
        random_state=0),
    BoltzmannMachine(n_hidden=2, learning="mean_field", batch_size=1000, n_iter=2,
                     random_state=0),
    BoltzmannMachine(n_hidden=3, learning=MeanFieldGradient(linear_response=True),
                     batch_size=1000, n_iter=2, random_state=0),
    BoltzmannMachine(n_hidden=0, learning="mean_field", batch_size=1000, n_iter=2,
                     random_state=0),
    GaussianRBM(n_components=3, n_iter=0, random_state=0),
    TabularRBM(n_components=3, n_iter=0, random_state=0),
    DBM(hidden_layer_sizes=(3, 2), n_iter=0, random_state=0),
    DBN(hidden_layer_sizes=(4, 3), rbm=RBM(n_iter=2, **EXACT), random_state=0),
    BoltzmannClassifier(RBM(n_components=8, n_iter=200, learning_rate=0.3, random_state=0,
                            **EXACT)),
    BoltzmannClassifier(KernelDensity(bandwidth=0.5)),
    RBMClassifier(n_components=3, generative_weight=0.0, batch_size=1000, n_iter=30,
                  random_state=0),
    DBNClassifier(4, rbm=RBM(n_iter=2, **EXACT), solver="lbfgs", max_iter=30,
                  random_state=0),
    LikelihoodOutlierDetector(RBM(n_components=3, n_iter=3, random_state=0, **EXACT),
                              contamination=0.1),
    RBMImputer(RBM(n_components=3, n_iter=3, **EXACT), add_indicator=True, random_state=0),
]


@pytest.mark.filterwarnings("ignore::skboltz.exceptions.DataRangeWarning")
@pytest.mark.filterwarnings("ignore::skboltz.exceptions.DataScaleWarning")
@parametrize_with_checks(WEIGHT_EXACT_ESTIMATORS, expected_failed_checks=lambda est: {})
def test_sklearn_compatible(estimator, check):
    check(estimator)


#: The checks that compare a weighted fit with a fit on repeated rows, to rounding. A
#: stochastic fit (shuffled minibatches, sampled negative phases, chains started at
#: random rows) makes other draws on other rows, so its weighted fit equals the fit on
#: repeated rows in expectation only (test_weights.py tests that, and the exact
#: equivalence on the instances above and on the exact Boltzmann machine and the
#: categorical models' starting values); every other check runs on these instances.
WEIGHT_EQUIVALENCE_CHECKS = {"check_sample_weight_equivalence_on_dense_data",
                             "check_sample_weight_equivalence_on_sparse_data"}


def _checks_of_stochastic_fits():
    for estimator in ESTIMATORS:
        for estimator_, check in estimator_checks_generator(estimator):
            name = getattr(check, "func", check).__name__
            if name not in WEIGHT_EQUIVALENCE_CHECKS:
                yield pytest.param(estimator_, check, id=f"{estimator!r}-{name}")


@pytest.mark.filterwarnings("ignore::skboltz.exceptions.DataRangeWarning")
@pytest.mark.filterwarnings("ignore::skboltz.exceptions.DataScaleWarning")
@pytest.mark.parametrize("estimator, check", list(_checks_of_stochastic_fits()))
def test_sklearn_compatible_stochastic_fits(estimator, check):
    check(estimator)


def _registered_strategies():
    from skboltz.learning._base import LEARNING_STRATEGIES
    from skboltz.partition import Z_ESTIMATORS

    named = [pytest.param(cls, id=f"z_estimator {name}") for name, cls in Z_ESTIMATORS.items()]
    named += [pytest.param(cls, id=f"learning {name}") for name, cls in LEARNING_STRATEGIES.items()]
    return named


@pytest.mark.parametrize("strategy_class", _registered_strategies())
def test_registered_defaults_satisfy_their_constraints(strategy_class):
    # Strategies named by a string are built with their defaults and not re-validated
    # on every fit (BoltzmannBase._resolve_strategy), so the defaults must be valid.
    strategy_class()._validate_params()


@pytest.mark.parametrize(
    "estimator, y",
    [(DBN(hidden_layer_sizes=(3, 2), rbm=RBM(n_iter=1)), None),
     (BoltzmannClassifier(RBM(n_components=2, n_iter=1)), [0, 1] * 10),
     (DBNClassifier(3, rbm=RBM(n_iter=1), max_iter=2), [0, 1] * 10)],
    ids=["DBN", "BoltzmannClassifier", "DBNClassifier"],
)
def test_skip_parameter_validation_is_honoured(estimator, y, monkeypatch):
    validated = []
    original = BaseEstimator._validate_params

    def recording(self):
        validated.append(type(self).__name__)
        return original(self)

    monkeypatch.setattr(BaseEstimator, "_validate_params", recording)
    X = np.random.default_rng(0).random((20, 4))
    clone(estimator).fit(X, y)
    assert validated[0] == type(estimator).__name__ and "RBM" in validated
    validated.clear()
    with config_context(skip_parameter_validation=True):
        clone(estimator).fit(X, y)
    assert validated == []  # neither the estimator nor its RBMs
