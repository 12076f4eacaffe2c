"""BoltzmannClassifier: Bayes' rule over class-wise densities, checked by enumeration."""

import itertools
import os

import numpy as np
import pytest
from joblib import parallel_config
from numpy.testing import assert_allclose
from scipy.special import logsumexp
from sklearn.datasets import load_digits
from sklearn.neighbors import KernelDensity
from threadpoolctl import threadpool_info

from skboltz import RBM, BoltzmannClassifier


def brute_force_log_likelihood(rbm, V):
    """log p(v) of an RBM by summing exp(-E(v, h)) over every joint state."""
    W, b, c = rbm.components_, rbm.intercept_visible_, rbm.intercept_hidden_
    n_hidden, n_visible = W.shape
    H = np.array(list(itertools.product([0, 1], repeat=n_hidden)), dtype=float)
    V_all = np.array(list(itertools.product([0, 1], repeat=n_visible)), dtype=float)

    def log_unnormalized(V):
        neg_energy = (V @ W.T) @ H.T + (V @ b)[:, None] + (H @ c)[None, :]
        return logsumexp(neg_energy, axis=1)

    return log_unnormalized(V) - logsumexp(log_unnormalized(V_all))


@pytest.fixture(scope="module")
def tiny():
    rng = np.random.default_rng(0)
    # Two classes over 4 binary units with different correlation structure.
    a = (rng.random((60, 4)) < [0.8, 0.8, 0.2, 0.2]).astype(float)
    base = (rng.random((40, 1)) < 0.5).astype(float)
    b = np.hstack([base, base, 1 - base, rng.random((40, 1)) < 0.5])
    X = np.vstack([a, b])
    y = np.array(["a"] * 60 + ["b"] * 40)
    return X, y


def test_probabilities_match_hand_computation(tiny):
    X, y = tiny
    clf = BoltzmannClassifier(RBM(n_components=3, n_iter=20, random_state=0)).fit(X, y)
    V = np.array(list(itertools.product([0, 1], repeat=4)), dtype=float)
    log_joint = np.column_stack(
        [brute_force_log_likelihood(est, V) for est in clf.estimators_]
    ) + np.log([0.6, 0.4])
    expected = np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))
    proba = clf.predict_proba(V)
    np.testing.assert_allclose(proba, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(clf.predict(V), clf.classes_[expected.argmax(axis=1)])
    np.testing.assert_allclose(np.log(proba), clf.predict_log_proba(V), rtol=1e-9)

    # The test can tell whether each class's log Z is used: free energies alone differ.
    unnormalized = np.column_stack(
        [-est.free_energy(V) for est in clf.estimators_]
    ) + np.log([0.6, 0.4])
    wrong = np.exp(unnormalized - logsumexp(unnormalized, axis=1, keepdims=True))
    assert np.max(np.abs(wrong - expected)) > 1e-2


def test_attributes_and_exact_log_partitions(tiny):
    X, y = tiny
    clf = BoltzmannClassifier(RBM(n_components=3, n_iter=5, random_state=0)).fit(X, y)
    np.testing.assert_array_equal(clf.classes_, ["a", "b"])
    np.testing.assert_array_equal(clf.class_count_, [60, 40])
    np.testing.assert_allclose(clf.class_prior_, [0.6, 0.4])
    for est, log_z, label in zip(clf.estimators_, clf.log_partitions_, clf.classes_):
        assert log_z.is_exact
        assert log_z.value == est.estimate_log_partition().value
        # Each model saw only its class's rows.
        assert est.n_features_in_ == 4
        expected_rates = X[y == label].mean(axis=0)
        np.testing.assert_allclose(est._training_state.data_rates, expected_rates)


def test_priors_shift_the_log_odds_by_the_prior_ratio(tiny):
    X, y = tiny
    rbm = RBM(n_components=3, n_iter=5, random_state=0)
    default = BoltzmannClassifier(rbm).fit(X, y)
    flipped = BoltzmannClassifier(rbm, priors=[0.1, 0.9]).fit(X, y)
    log_odds_default = np.diff(default.predict_log_proba(X), axis=1)
    log_odds_flipped = np.diff(flipped.predict_log_proba(X), axis=1)
    shift = np.log(0.9 / 0.1) - np.log(0.4 / 0.6)
    np.testing.assert_allclose(log_odds_flipped - log_odds_default, shift, rtol=1e-9)


@pytest.mark.parametrize(
    "priors, message",
    [([0.5, 0.3, 0.2], "Number of priors"), ([1.5, -0.5], "non-negative"),
     ([0.5, 0.6], "sum of the priors")],
)
def test_bad_priors(tiny, priors, message):
    X, y = tiny
    clf = BoltzmannClassifier(RBM(n_components=2, n_iter=1), priors=priors)
    with pytest.raises(ValueError, match=message):
        clf.fit(X, y)


def test_any_density_estimator_works(tiny):
    X, y = tiny
    clf = BoltzmannClassifier(KernelDensity(bandwidth=0.3)).fit(X, y)
    assert clf.log_partitions_ == [None, None]
    kde_a = KernelDensity(bandwidth=0.3).fit(X[y == "a"])
    kde_b = KernelDensity(bandwidth=0.3).fit(X[y == "b"])
    log_joint = np.column_stack([kde_a.score_samples(X), kde_b.score_samples(X)])
    log_joint += np.log([0.6, 0.4])
    expected = np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))
    np.testing.assert_allclose(clf.predict_proba(X), expected, rtol=1e-9)


def test_default_estimator_classifies_digits():
    X, y = load_digits(return_X_y=True)
    X = X / 16
    clf = BoltzmannClassifier().fit(X[:1000], y[:1000])
    assert clf.estimators_[0].n_components == 16
    assert all(log_z.is_exact for log_z in clf.log_partitions_)
    proba = clf.predict_proba(X[1000:])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert clf.score(X[1000:], y[1000:]) > 0.85


def test_log_proba_is_the_log_of_proba_where_posteriors_underflow():
    # Narrow kernels far apart: log-odds of thousands of nats, far below float64's
    # smallest positive number (exp(-745)).
    X = np.array([[0.0, 0.0], [0.1, 0.0], [1.0, 1.0], [0.9, 1.0], [0.5, 0.5]])
    y = np.array([0, 0, 1, 1, 1])
    clf = BoltzmannClassifier(KernelDensity(bandwidth=0.02)).fit(X, y)
    proba, log_proba = clf.predict_proba(X), clf.predict_log_proba(X)
    joint = clf.predict_joint_log_proba(X)
    exact = joint - logsumexp(joint, axis=1, keepdims=True)
    underflow = exact < -746
    assert underflow.any() and not underflow.all()
    np.testing.assert_array_equal(proba[underflow], 0.0)
    np.testing.assert_array_equal(log_proba[underflow], -np.inf)
    np.testing.assert_allclose(log_proba[~underflow], exact[~underflow], rtol=1e-12)
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(log_proba, np.log(proba), rtol=1e-12)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)


def test_random_state_seeds_each_class_model_reproducibly(tiny):
    X, y = tiny
    rbm = RBM(n_components=3, n_iter=3, random_state=7)
    first = BoltzmannClassifier(rbm, random_state=0).fit(X, y)
    again = BoltzmannClassifier(rbm, random_state=0).fit(X, y)
    seeds = [est.random_state for est in first.estimators_]
    assert seeds[0] != seeds[1] and 7 not in seeds
    assert seeds == [est.random_state for est in again.estimators_]
    np.testing.assert_array_equal(first.predict_proba(X), again.predict_proba(X))
    # None leaves the template's own setting; models without random_state are fine.
    unseeded = BoltzmannClassifier(rbm).fit(X, y)
    assert [est.random_state for est in unseeded.estimators_] == [7, 7]
    BoltzmannClassifier(KernelDensity(), random_state=0).fit(X, y)


class ThreadRecordingRBM(RBM):
    """An RBM that records, in whichever process fits it, the BLAS threads in use."""

    def fit(self, X, y=None):
        self.process_ = os.getpid()
        self.blas_threads_outside_training_ = _blas_threads()
        return super().fit(X, y)

    def _train_epoch(self, X, y, state, learning):
        self.blas_threads_in_training_ = _blas_threads()
        return super()._train_epoch(X, y, state, learning)


def _blas_threads():
    return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


def test_n_jobs_fits_the_same_models_in_workers_with_one_blas_thread(tiny):
    X, y = tiny
    X = np.hstack([X, X[::-1]])
    y = np.where(np.arange(len(y)) % 3 == 0, "c", y)
    template = ThreadRecordingRBM(n_components=3, n_iter=3)
    serial = BoltzmannClassifier(template, random_state=0).fit(X, y)
    # Workers whose BLAS would use two threads: the training inside must still use one.
    with parallel_config(backend="loky", inner_max_num_threads=2):
        parallel = BoltzmannClassifier(template, n_jobs=2, random_state=0).fit(X, y)
    for one, two in zip(serial.estimators_, parallel.estimators_):
        np.testing.assert_array_equal(one.components_, two.components_)
    assert [z.value for z in serial.log_partitions_] == [
        z.value for z in parallel.log_partitions_
    ]
    np.testing.assert_array_equal(serial.predict_proba(X), parallel.predict_proba(X))
    assert all(est.process_ != os.getpid() for est in parallel.estimators_)
    assert all(est.blas_threads_outside_training_ == {2} for est in parallel.estimators_)
    assert all(est.blas_threads_in_training_ == {1} for est in parallel.estimators_)


def test_verbose_names_each_class_and_passes_down(tiny, capsys):
    X, y = tiny
    BoltzmannClassifier(RBM(n_components=2, n_iter=2), verbose=1).fit(X, y)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "[BoltzmannClassifier] class 1/2 (label a, 60 rows): fitting"
    assert [line[:5] for line in lines[1:3]] == ["[RBM]", "[RBM]"]  # one per epoch
    assert lines[3].startswith("[BoltzmannClassifier] class 1/2 (label a, 60 rows): done in ")
    assert lines[4] == "[BoltzmannClassifier] class 2/2 (label b, 40 rows): fitting"
    assert len(lines) == 8 and lines[7].endswith("s")

    BoltzmannClassifier(KernelDensity(), verbose=1).fit(X, y)  # no verbose to pass down
    assert len(capsys.readouterr().out.strip().splitlines()) == 4
    BoltzmannClassifier(RBM(n_components=2, n_iter=2)).fit(X, y)
    assert capsys.readouterr().out == ""


def test_a_single_class_is_refused_with_what_to_do_instead():
    X = np.random.default_rng(0).random((20, 4))
    with pytest.raises(ValueError, match="at least 2 classes.*RBM\\(\\).fit"):
        BoltzmannClassifier(RBM(n_components=2, n_iter=1)).fit(X, np.zeros(20))


def test_rows_no_class_model_explains_get_the_prior_not_nan():
    """KernelDensity gives -inf far from its data: every class's log-likelihood of such a
    row is -inf, which made the posterior NaN; it is the prior, and predict agrees."""
    X = np.random.default_rng(0).normal(size=(40, 2))
    y = np.array([0] * 10 + [1] * 30)
    clf = BoltzmannClassifier(KernelDensity()).fit(X, y)
    far = np.array([[1e200, 1e200], [0.0, 0.0]])
    assert np.all(np.isneginf(clf.predict_joint_log_proba(far[:1])))
    proba = clf.predict_proba(far)
    assert_allclose(proba[0], [0.25, 0.75])
    assert_allclose(clf.predict_log_proba(far[:1]), np.log([[0.25, 0.75]]))
    assert clf.predict(far[:1])[0] == 1
