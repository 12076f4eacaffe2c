"""LikelihoodOutlierDetector: the outlier-detection contract over a density's log p(x)."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import KFold, train_test_split
from sklearn.utils._param_validation import InvalidParameterError

from skboltz import (
    DBM,
    DBN,
    RBM,
    BoltzmannMachine,
    GaussianRBM,
    LikelihoodOutlierDetector,
    TabularRBM,
)
from skboltz.meta._outliers import (
    AUTO_FOLDS,
    TRIM_FRACTION,
    TRIM_MIN_ROWS_PER_FEATURE,
    TRIM_ROUNDS,
    default_density_model,
)
from skboltz.utils._runtime import sub_estimator_seeds
from skboltz.utils._weights import weighted_percentile
from skboltz.exceptions import DataScaleWarning


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X / 16, y


def binary_rows(n_rows=60, n_features=8, seed=0):
    rng = np.random.default_rng(seed)
    prototypes = rng.random((3, n_features)) < 0.5
    rows = prototypes[rng.integers(0, 3, n_rows)] ^ (rng.random((n_rows, n_features)) < 0.1)
    return rows.astype(np.float64)


DENSITY_MODELS = [
    RBM(n_components=4, n_iter=5, random_state=0),
    GaussianRBM(n_components=3, n_iter=5, random_state=0),
    BoltzmannMachine(n_hidden=2, learning="exact", n_iter=5, random_state=0),
    DBM(hidden_layer_sizes=(3, 2), n_iter=3, random_state=0),
]


@pytest.mark.filterwarnings("ignore::skboltz.exceptions.DataScaleWarning")
@pytest.mark.parametrize("model", DENSITY_MODELS, ids=lambda m: type(m).__name__)
def test_every_density_model_works(model):
    X = binary_rows()
    detector = LikelihoodOutlierDetector(model, contamination=0.2).fit(X)
    expected = clone(model).fit(X)  # the detector's random_state is None: model's own seed
    np.testing.assert_array_equal(detector.score_samples(X), expected.score_samples(X))
    assert detector.offset_ == np.percentile(expected.score_samples(X), 20)
    labels = detector.predict(X)
    assert set(np.unique(labels)) <= {-1, 1}
    # the training rows below the 20 % quantile of their own scores
    assert np.sum(labels == -1) == np.sum(expected.score_samples(X) < detector.offset_)


def test_offset_is_the_contamination_quantile_of_the_training_scores():
    X = binary_rows(n_rows=100)
    for contamination in (0.05, 0.1, 0.37, 0.5):
        detector = LikelihoodOutlierDetector(
            RBM(n_components=4, n_iter=5, random_state=0), contamination=contamination
        ).fit(X)
        training_scores = detector.estimator_.score_samples(X)
        assert detector.offset_ == np.percentile(training_scores, 100 * contamination)


def test_auto_offset_is_the_lower_fence_of_held_out_scores():
    X = binary_rows(n_rows=80)
    model = RBM(n_components=4, n_iter=5)
    detector = LikelihoodOutlierDetector(model, random_state=3).fit(X)
    # The same seeds and folds by hand: each row scored by a model fitted without it.
    model_seed, fold_seed = sub_estimator_seeds(3, 2)
    held_out = np.empty(len(X))
    for train, test in KFold(AUTO_FOLDS, shuffle=True, random_state=fold_seed).split(X):
        fold_model = clone(model).set_params(random_state=model_seed).fit(X[train])
        held_out[test] = fold_model.score_samples(X[test])
    q1, q3 = np.percentile(held_out, [25, 75])
    assert detector.offset_ == pytest.approx(q1 - 1.5 * (q3 - q1), rel=1e-12, abs=1e-12)
    final = clone(model).set_params(random_state=model_seed).fit(X)
    np.testing.assert_array_equal(detector.score_samples(X), final.score_samples(X))


def test_auto_needs_enough_rows_for_its_folds():
    detector = LikelihoodOutlierDetector(RBM(n_components=2, n_iter=2))
    with pytest.raises(ValueError, match=r"at least 10 training rows; got n_samples=9"):
        detector.fit(binary_rows(n_rows=9))
    # a fraction needs no held-out rows
    LikelihoodOutlierDetector(RBM(n_components=2, n_iter=2), contamination=0.1).fit(
        binary_rows(n_rows=9)
    )


def test_predict_and_decision_function_follow_the_scores():
    X = binary_rows(n_rows=80)
    X_new = binary_rows(n_rows=40, seed=1)
    detector = LikelihoodOutlierDetector(
        RBM(n_components=4, n_iter=5, random_state=0), contamination=0.25
    ).fit(X)
    scores = detector.score_samples(X_new)
    decision = detector.decision_function(X_new)
    np.testing.assert_array_equal(decision, scores - detector.offset_)
    np.testing.assert_array_equal(detector.predict(X_new), np.where(decision < 0, -1, 1))
    refit = clone(detector)
    np.testing.assert_array_equal(refit.fit_predict(X), detector.predict(X))
    # exactly the training rows below the 25 % quantile are flagged
    assert np.sum(detector.predict(X) == -1) == np.sum(
        detector.score_samples(X) < np.percentile(detector.score_samples(X), 25)
    )


def test_score_samples_are_the_models_log_likelihoods_in_nats():
    X = binary_rows(n_rows=60, n_features=6)
    detector = LikelihoodOutlierDetector(
        RBM(n_components=3, n_iter=5, random_state=0), contamination=0.1
    ).fit(X)
    # Log-probabilities of binary rows: over all 2**6 states they sum to 1.
    states = ((np.arange(64)[:, None] >> np.arange(6)) & 1).astype(np.float64)
    assert np.exp(detector.score_samples(states)).sum() == pytest.approx(1.0, rel=1e-10)
    np.testing.assert_array_equal(
        detector.score_samples(states), detector.estimator_.score_samples(states)
    )


@pytest.mark.parametrize(
    "contamination, match",
    [(0.0, "contamination"), (0.6, "contamination"), (-0.1, "contamination"),
     ("high", "contamination"), (True, "contamination"), (None, "contamination")],
)
def test_bad_contamination_is_refused(contamination, match):
    detector = LikelihoodOutlierDetector(RBM(n_iter=1), contamination=contamination)
    with pytest.raises(InvalidParameterError, match=match):
        detector.fit(binary_rows())


@pytest.mark.parametrize(
    "model",
    [DBN(hidden_layer_sizes=(3, 2)), LogisticRegression(), "rbm"],
    ids=["DBN", "LogisticRegression", "string"],
)
def test_a_model_without_score_samples_is_refused(model):
    detector = LikelihoodOutlierDetector(model)
    with pytest.raises(InvalidParameterError,
                       match=r"'estimator' parameter .* must be None or an object "
                             r"implementing 'fit' and 'score_samples'"):
        detector.fit(binary_rows())


def test_default_model_follows_the_data(digits):
    X, y = digits
    zeros = X[y == 0][:100]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataScaleWarning)  # constant pixels: silenced
        grey = LikelihoodOutlierDetector(random_state=0).fit(zeros)
    assert isinstance(grey.estimator_, GaussianRBM)
    assert grey.estimator_.whiten and not grey.estimator_.learn_variance
    # binary rows too (on ADBench's binary tables the Bernoulli RBM lost to it)
    binary = LikelihoodOutlierDetector(random_state=0).fit(zeros > 0.5)
    assert type(binary.estimator_) is GaussianRBM and binary.estimator_.whiten
    # the user's own model keeps its own checks (constant pixels refused: issue 31)
    with pytest.raises(ValueError, match="constant feature"):
        LikelihoodOutlierDetector(GaussianRBM(n_iter=1, whiten=True),
                                  contamination=0.1).fit(zeros)


def test_default_tells_a_digit_from_the_others(digits):
    X, y = digits
    # the protocol of benchmarks/bench_outliers.py for one digit
    train, inliers = train_test_split(X[y == 3], test_size=0.25, random_state=0)
    novelties = X[y != 3][::20]
    detector = LikelihoodOutlierDetector(random_state=0).fit(train)
    scores = detector.score_samples(np.vstack([inliers, novelties]))
    truth = np.r_[np.ones(len(inliers)), np.zeros(len(novelties))]
    assert roc_auc_score(truth, scores) > 0.99
    assert np.mean(detector.predict(novelties) == -1) > 0.95
    assert np.mean(detector.predict(inliers) == 1) > 0.9


def test_random_state_makes_fits_repeatable():
    X = binary_rows(n_rows=50)
    first = LikelihoodOutlierDetector(RBM(n_components=3, n_iter=3), random_state=7).fit(X)
    second = LikelihoodOutlierDetector(RBM(n_components=3, n_iter=3), random_state=7).fit(X)
    assert first.offset_ == second.offset_
    np.testing.assert_array_equal(first.score_samples(X), second.score_samples(X))
    assert first.estimator_.random_state == second.estimator_.random_state is not None


def test_a_failed_fit_keeps_the_fitted_detector():
    X = binary_rows(n_rows=50)
    detector = LikelihoodOutlierDetector(RBM(n_components=3, n_iter=3, random_state=0))
    detector.fit(X)
    model, offset = detector.estimator_, detector.offset_
    with pytest.raises(ValueError, match="at least 10 training rows"):
        detector.fit(binary_rows(n_rows=5, n_features=4))
    assert detector.estimator_ is model and detector.offset_ == offset
    assert detector.n_features_in_ == 8
    np.testing.assert_array_equal(detector.score_samples(X), model.score_samples(X))


def test_float32_rows_reach_the_model_as_float32():
    X = binary_rows(n_rows=40).astype(np.float32)
    detector = LikelihoodOutlierDetector(
        RBM(n_components=3, n_iter=3, random_state=0), contamination=0.1
    ).fit(X)
    assert detector.estimator_.components_.dtype == np.float32


def mixed_frame(n_rows=60, seed=0):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "size": rng.normal(size=n_rows),
        "colour": rng.choice(["blue", "red", "green"], n_rows),
        "grade": pd.Categorical(rng.choice(["a", "b"], n_rows)),
    })


@pytest.mark.parametrize("contamination", [0.1, "auto"])
def test_a_table_model_gets_the_dataframe(contamination):
    # issue 44: the frame reached validation as floats ("could not convert 'blue'")
    frame = mixed_frame()
    model = TabularRBM(n_components=2, n_iter=3, random_state=0)
    detector = LikelihoodOutlierDetector(model, contamination=contamination).fit(frame)
    expected = clone(model).fit(frame)
    np.testing.assert_array_equal(detector.score_samples(frame), expected.score_samples(frame))
    assert list(detector.feature_names_in_) == ["size", "colour", "grade"]
    assert detector.estimator_.is_categorical_.tolist() == [False, True, True]
    np.testing.assert_array_equal(detector.decision_function(frame.iloc[:7]),
                                  expected.score_samples(frame.iloc[:7]) - detector.offset_)
    with pytest.raises(ValueError, match="colour"):  # the width and names are checked
        detector.score_samples(frame[["size", "grade"]])


def test_the_default_model_of_a_mixed_frame_is_a_table_model():
    frame = mixed_frame(n_rows=40)
    detector = LikelihoodOutlierDetector(contamination=0.1, random_state=0).fit(frame)
    assert type(detector.estimator_) is TabularRBM
    assert detector.predict(frame).shape == (40,)


def test_missing_entries_reach_a_model_that_takes_them():
    # issue 44: NaN was refused with scikit-learn's generic message for every model
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    X[::7, 1] = np.nan
    model = GaussianRBM(n_components=2, n_iter=3, random_state=0)
    detector = LikelihoodOutlierDetector(model, contamination=0.1).fit(X)
    scores = detector.score_samples(X)
    np.testing.assert_array_equal(scores, clone(model).fit(X).score_samples(X))
    assert np.all(np.isfinite(scores))
    # the default picks a model that integrates missing entries out
    default = LikelihoodOutlierDetector(contamination=0.1, random_state=0).fit(X)
    assert type(default.estimator_) is TabularRBM
    assert np.all(np.isfinite(default.score_samples(X)))
    # a model that takes none still refuses them
    with pytest.raises(ValueError, match="NaN"):
        LikelihoodOutlierDetector(GaussianRBM(n_iter=1, whiten=True),
                                  contamination=0.1).fit(X)


def test_the_default_model_is_refitted_without_its_least_likely_rows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    X[:10] += 6  # anomalies among the training rows
    detector = LikelihoodOutlierDetector(contamination=0.1, random_state=0).fit(X)
    # by hand: fit, then TRIM_ROUNDS refits with the lowest TRIM_FRACTION weighted 0
    model_seed, _ = sub_estimator_seeds(0, 2)
    model = default_density_model(X).set_params(random_state=model_seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataScaleWarning)
        model.fit(X)
        weights = np.ones(len(X))
        for _ in range(TRIM_ROUNDS):
            scores = model.score_samples(X)
            cut = weighted_percentile(scores, 100 * TRIM_FRACTION, weights)
            weights = np.where(scores >= cut, weights, 0.0)
            model.fit(X, sample_weight=weights)
    assert TRIM_ROUNDS >= 1 and np.all(weights[:10] == 0)
    assert np.sum(weights == 0) > 10  # normal rows of the lowest fraction too
    np.testing.assert_array_equal(detector.score_samples(X), model.score_samples(X))
    # the anomalies do not pull the whitening's mean towards them
    np.testing.assert_allclose(detector.estimator_.whitening_mean_,
                               np.average(X, axis=0, weights=weights))
    # a model of the user's is fitted once, on every row
    plain = GaussianRBM(n_components=2, n_iter=3, whiten=True, learn_variance=False,
                        random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataScaleWarning)
        users = LikelihoodOutlierDetector(plain, contamination=0.1).fit(X)
        np.testing.assert_array_equal(users.score_samples(X),
                                      clone(plain).fit(X).score_samples(X))


@pytest.mark.parametrize("n_rows, epochs", [(100, 30), (1000, 30), (5000, 6), (40000, 3)])
def test_the_default_training_length_is_bounded_by_the_rows(n_rows, epochs):
    X = np.zeros((n_rows, 2))
    assert default_density_model(X).n_iter == epochs


def test_few_rows_per_feature_are_not_trimmed():
    rng = np.random.default_rng(1)
    n_features = 8
    X = rng.normal(size=(TRIM_MIN_ROWS_PER_FEATURE * n_features - 1, n_features))
    detector = LikelihoodOutlierDetector(contamination=0.1, random_state=0).fit(X)
    model_seed, _ = sub_estimator_seeds(0, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataScaleWarning)
        once = default_density_model(X).set_params(random_state=model_seed).fit(X)
    np.testing.assert_array_equal(detector.score_samples(X), once.score_samples(X))


def test_a_trimmed_refit_that_fails_keeps_the_fit_before_it():
    # trimming the two rare rows leaves one distinct row: a singular covariance
    X = np.array([[1.0, 3.0]] * 10 + [[2.0, 1.0]] * 2)
    detector = LikelihoodOutlierDetector(contamination=0.1, random_state=0).fit(X)
    model_seed, _ = sub_estimator_seeds(0, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataScaleWarning)
        once = default_density_model(X).set_params(random_state=model_seed).fit(X)
    np.testing.assert_array_equal(detector.score_samples(X), once.score_samples(X))
