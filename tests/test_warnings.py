"""Every warning points at the user's line, whatever the route to it (issue 23): called
directly, inside a Pipeline, a grid search or a meta-estimator, from fit, partial_fit,
transform, score or score_samples."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

import skboltz.utils._runtime
from skboltz import DBN, RBM, BoltzmannClassifier, GaussianRBM
from skboltz.exceptions import (
    ApproximateScoreWarning,
    DataRangeWarning,
    DataScaleWarning,
    LogZAccuracyWarning,
    MeanFieldConvergenceWarning,
    SlowEstimateWarning,
)
from skboltz.partition import AIS, MeanField

DIGITS = load_digits().data  # 0..16: outside [0, 1]
BINARY = (DIGITS > 7).astype(float)
UNSCALED = 30 * np.random.default_rng(0).normal(size=(60, 3))  # far from standardised


def warnings_of(category, call):
    """The warnings of ``category`` that ``call()`` raises (at least one)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    found = [w for w in caught if issubclass(w.category, category)]
    assert found, f"no {category.__name__}"
    return found


def assert_points_here(category, call):
    for warning in warnings_of(category, call):
        assert warning.filename == __file__, (warning.filename, warning.lineno)


def fitted_rbm():
    return RBM(n_components=4, n_iter=1, random_state=0).fit(BINARY[:100])


@pytest.mark.parametrize("route", [
    "fit", "partial_fit", "transform", "score", "score_samples", "free_energy",
    "pipeline_fit", "pipeline_score", "grid_search", "dbn_fit", "classifier_fit",
    "classifier_predict",
])
def test_data_range_warnings_point_at_the_users_line(route):
    X = DIGITS[:100]
    calls = {
        "fit": lambda: RBM(n_components=4, n_iter=1, random_state=0).fit(X),
        "partial_fit": lambda: fitted_rbm().partial_fit(X),
        "transform": lambda: fitted_rbm().transform(X),
        "score": lambda: fitted_rbm().score(X),
        "score_samples": lambda: fitted_rbm().score_samples(X),
        "free_energy": lambda: fitted_rbm().free_energy(X),
        "pipeline_fit": lambda: make_pipeline(RBM(n_components=4, n_iter=1)).fit(X),
        "pipeline_score": lambda: make_pipeline(fitted_rbm()).score(X),
        "grid_search": lambda: GridSearchCV(
            RBM(n_components=4, n_iter=1, random_state=0), {"n_components": [2]}, cv=2
        ).fit(X),
        "dbn_fit": lambda: DBN((4, 2), rbm=RBM(n_iter=1), random_state=0).fit(X),
        "classifier_fit": lambda: BoltzmannClassifier(
            RBM(n_components=2, n_iter=1), random_state=0
        ).fit(X, np.arange(100) % 2),
        "classifier_predict": lambda: BoltzmannClassifier(
            RBM(n_components=2, n_iter=1), random_state=0
        ).fit(BINARY[:100], np.arange(100) % 2).predict(X),
    }
    assert_points_here(DataRangeWarning, calls[route])


@pytest.mark.parametrize("route", ["fit", "partial_fit", "pipeline", "dbn", "classifier"])
def test_data_scale_warnings_point_at_the_users_line(route):
    def gaussian():
        return GaussianRBM(n_components=2, n_iter=1, random_state=0)

    calls = {
        "fit": lambda: gaussian().fit(UNSCALED),
        "partial_fit": lambda: gaussian().partial_fit(UNSCALED),
        "pipeline": lambda: make_pipeline(gaussian()).fit(UNSCALED),
        "dbn": lambda: DBN((2,), first_layer=gaussian(), random_state=0).fit(UNSCALED),
        "classifier": lambda: BoltzmannClassifier(gaussian()).fit(
            UNSCALED, np.arange(60) % 2
        ),
    }
    assert_points_here(DataScaleWarning, calls[route])


def test_log_z_warnings_point_at_the_users_line(monkeypatch):
    rbm = RBM(n_components=32, n_iter=1, random_state=0).fit(BINARY[:100])
    short = AIS(n_chains=16, n_betas=20, max_time=1e-3, target_std_error=1e-4)
    assert_points_here(LogZAccuracyWarning, lambda: rbm.estimate_log_partition(short))
    assert_points_here(LogZAccuracyWarning, lambda: short.estimate(rbm._model_view()))
    assert_points_here(MeanFieldConvergenceWarning,
                       lambda: rbm.estimate_log_partition(MeanField(max_iter=1)))
    mean_field = RBM(n_components=32, n_iter=1, z_estimator="mean_field", random_state=0)
    mean_field.fit(BINARY[:100])
    assert_points_here(ApproximateScoreWarning, lambda: mean_field.score(BINARY[:10]))
    monkeypatch.setattr(skboltz.utils._runtime, "SLOW_LOG_Z_SECONDS", 0.0)  # every estimate "slow"
    slow = RBM(n_components=32, n_iter=1, z_estimator=AIS(n_chains=16, n_betas=50),
               random_state=0).fit(BINARY[:100])
    assert_points_here(SlowEstimateWarning,
                       lambda: make_pipeline(slow).score(BINARY[:10]))
