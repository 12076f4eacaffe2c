"""Array API dispatch: GaussianRBM on array-api-strict (always) and torch CPU (where
installed).

The namespace-generic path (skboltz/estimators/_array_api_restricted.py,
skboltz/estimators/_array_api_gaussian_rbm.py) computes in the input's namespace and on its
device; these tests check where results live, exact agreement with the NumPy path on
the same parameters (the scores with exact log Z, the whitening), the NumPy path's
checks and refusals under dispatch, scikit-learn's own array API checks, and
statistical agreement with the NumPy path on standardised real-valued data.
"""

import pickle
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn import config_context
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.utils._array_api import yield_namespace_device_dtype_combinations
from sklearn.utils.estimator_checks import (
    check_array_api_input,
    check_array_api_same_namespace,
)

from skboltz import GaussianRBM
from skboltz.estimators._array_api_gaussian_rbm import LOG_VARIANCE, GaussianRBMArrayAPI
from skboltz.exceptions import DataRangeWarning, DataScaleWarning, TrainingDivergedError
from skboltz.learning import CD, PCD

from _namespaces import NAMESPACES, as_namespace, namespace_of, to_host, torch, xp_strict

#: The fitted arrays of a GaussianRBM (whitening_* with whiten=True).
PARAMETERS = ("components_", "intercept_hidden_", "intercept_visible_", "variance_")
WHITENING = ("whitening_mean_", "whitening_factor_")





def dispatched(**settings):
    """A GaussianRBM with a learning strategy the dispatched path runs."""
    return GaussianRBM(**{"learning": "pcd", "learning_rate": 0.02, **settings})


@pytest.fixture(scope="module")
def wine():
    return StandardScaler().fit_transform(load_wine().data)


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("learning", ["pcd", "cd", CD(n_steps=2, negative_visible="mean"),
                                      PCD(n_chains=7, n_steps=(1, 2))])
@pytest.mark.parametrize("whiten", [False, True])
def test_methods_compute_in_the_input_namespace(wine, name, learning, whiten):
    Xa = as_namespace(name, wine)
    model = dispatched(n_components=5, n_iter=2, learning=learning, whiten=whiten,
                       momentum=(0.5, 0.9), random_state=0)
    with config_context(array_api_dispatch=True):
        model.fit(Xa)
        for attribute in PARAMETERS + (WHITENING if whiten else ()):
            assert namespace_of(getattr(model, attribute)) == name, attribute
        if not whiten:
            assert model.whitening_mean_ is None and model.whitening_factor_ is None
        assert model.components_.shape == (5, 13) and model.variance_.shape == (13,)
        outputs = {
            "transform": model.transform(Xa), "reconstruct": model.reconstruct(Xa),
            "free_energy": model.free_energy(Xa), "score_samples": model.score_samples(Xa),
            "sample": model.sample(3, n_steps=5),
            "sample_means": model.sample(3, n_steps=5, return_means=True),
        }
        for method, output in outputs.items():
            assert namespace_of(output) == name, method
            assert np.all(np.isfinite(to_host(output))), method
        assert outputs["sample"].shape == (3, 13)
        assert isinstance(model.score(Xa), float)
        assert model.estimate_log_partition().kind == "exact"
        errors = model.score_samples_std_error(Xa)  # complete rows: exact
        assert namespace_of(errors) == name and not np.any(to_host(errors))
        model.partial_fit(Xa[:20, ...])
        assert model.n_iter_ == 3 and namespace_of(model.variance_) == name
    assert model.learning_rate_ == 0.02
    assert set(model.history_) >= {"epoch", "time", "reconstruction_error"}


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("whiten", [False, True])
def test_float32_is_kept(wine, name, whiten):
    X32 = as_namespace(name, wine, "float32")
    with config_context(array_api_dispatch=True):
        model = dispatched(n_components=4, n_iter=1, whiten=whiten, random_state=0).fit(X32)
        for attribute in PARAMETERS + (WHITENING if whiten else ()):
            assert "float32" in str(getattr(model, attribute).dtype), attribute
        assert "float32" in str(model.transform(X32).dtype)
        assert "float32" in str(model.reconstruct(X32).dtype)
        assert "float64" in str(model.score_samples(X32).dtype)  # scores in float64


def test_array_api_strict_other_device(wine):
    device = xp_strict.Device("device1")
    X = xp_strict.asarray(wine, device=device)
    with config_context(array_api_dispatch=True):
        model = dispatched(n_components=4, n_iter=1, whiten=True, random_state=0).fit(X)
        for attribute in PARAMETERS + WHITENING:
            assert getattr(model, attribute).device == device, attribute
        assert model.transform(X).device == device
        assert model.score_samples(X).device == device
        assert model.sample(2, n_steps=2).device == device


def _copy_parameters(source, target, convert):
    for attribute in PARAMETERS + WHITENING:
        value = getattr(source, attribute)
        setattr(target, attribute, None if value is None else convert(value))


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("whiten", [False, True])
def test_same_parameters_give_the_numpy_paths_results(wine, name, whiten):
    """A NumPy fit's parameters copied into a dispatched model, and a dispatched fit's
    into a NumPy model: the transform, free energy, exact log Z and log density agree
    to 1e-10 (the whitening is a triangular solve on one path, a product with the
    inverse factor on the other)."""
    X, Xa = wine, as_namespace(name, wine)
    numpy_model = dispatched(n_components=6, n_iter=10, whiten=whiten,
                             random_state=0).fit(X)
    with config_context(array_api_dispatch=True):
        model = dispatched(n_components=6, n_iter=10, whiten=whiten, random_state=1).fit(Xa)
    other = dispatched(n_components=6, n_iter=1, whiten=whiten, random_state=2).fit(X)
    _copy_parameters(model, other, to_host)  # the dispatched fit, on the NumPy path
    with config_context(array_api_dispatch=True):
        results = {
            "transform": to_host(model.transform(Xa)),
            "free_energy": to_host(model.free_energy(Xa)),
            "score_samples": to_host(model.score_samples(Xa)),
            "reconstruct": to_host(model.reconstruct(Xa)),
            "log_z": model.estimate_log_partition("exact").value,
        }
    expected = {
        "transform": other.transform(X), "free_energy": other.free_energy(X),
        "score_samples": other.score_samples(X), "reconstruct": other.reconstruct(X),
        "log_z": other.estimate_log_partition("exact").value,
    }
    for key, value in results.items():
        assert_allclose(value, expected[key], rtol=1e-10, atol=1e-10, err_msg=key)
    # and the NumPy fit, on the dispatched path
    with config_context(array_api_dispatch=True):
        _copy_parameters(numpy_model, model, lambda a: as_namespace(name, a))
        assert_allclose(to_host(model.score_samples(Xa)), numpy_model.score_samples(X),
                        rtol=1e-10, atol=1e-10)
        assert_allclose(to_host(model.transform(Xa)), numpy_model.transform(X),
                        rtol=1e-10, atol=1e-10)
        assert model.estimate_log_partition("exact").value == pytest.approx(
            numpy_model.estimate_log_partition("exact").value, abs=1e-10)


def test_whitening_is_the_numpy_paths_and_round_trips(wine):
    X = wine[:, :6] @ np.random.default_rng(0).normal(size=(6, 6))  # correlated
    X = StandardScaler().fit_transform(X)
    # (fixed variances: the fit starts at the Gaussian of z, W small and variances 1)
    numpy_model = dispatched(n_components=3, n_iter=1, whiten=True, learn_variance=False,
                             random_state=0).fit(X)
    with config_context(array_api_dispatch=True):
        model = dispatched(n_components=3, n_iter=1, whiten=True, learn_variance=False,
                           random_state=0).fit(xp_strict.asarray(X))
    # the same estimate (on a host copy of the same rows)
    assert_array_equal(to_host(model.whitening_mean_), numpy_model.whitening_mean_)
    assert_array_equal(to_host(model.whitening_factor_), numpy_model.whitening_factor_)
    whitening = GaussianRBMArrayAPI._whitening(model)
    Z = whitening.transform(xp_strict.asarray(X))
    assert_allclose(to_host(Z), numpy_model._input_transform().transform(X), atol=1e-12)
    assert_allclose(to_host(whitening.inverse_transform(Z)), X, atol=1e-12)
    assert GaussianRBMArrayAPI.log_density_offset(model) == pytest.approx(
        -numpy_model._input_transform().log_abs_det, abs=1e-15)
    # samples answer in the units of x: of about the whitening's covariance L L^T
    # (the model of z, trained one epoch, has a covariance near the identity)
    with config_context(array_api_dispatch=True):
        samples = to_host(model.sample(4000, n_steps=20, random_state=0))
    factor = numpy_model.whitening_factor_
    assert_allclose(np.cov(samples.T), factor @ factor.T, atol=0.15)


@pytest.mark.parametrize("whiten", [False, True])
def test_exact_and_ais_log_z_agree(wine, whiten):
    X = xp_strict.asarray(wine)
    with config_context(array_api_dispatch=True):
        model = dispatched(n_components=10, n_iter=10, whiten=whiten, random_state=0).fit(X)
        exact = model.estimate_log_partition("exact")
        ais = model.estimate_log_partition("ais")
    assert ais.kind == "estimate" and ais.std_error > 0
    assert abs(ais.value - exact.value) < max(4 * ais.std_error, 0.05)


@pytest.mark.parametrize("name", NAMESPACES)
def test_learn_variance_false_keeps_the_variances(wine, name):
    Xa = as_namespace(name, wine)
    with config_context(array_api_dispatch=True):
        model = dispatched(n_components=4, n_iter=3, learn_variance=False,
                           random_state=0).fit(Xa)
        assert_array_equal(to_host(model.variance_), np.ones(13))
        model.partial_fit(Xa)
        assert_array_equal(to_host(model.variance_), np.ones(13))
        # edited variances stay where they were put
        model.variance_ = as_namespace(name, np.full(13, 2.0))
        model.partial_fit(Xa)
    assert_allclose(to_host(model.variance_), np.full(13, 2.0), rtol=1e-15)
    assert model.n_iter_ == 5


def test_partial_fit_continues_from_the_published_log_variances(wine):
    Xa = xp_strict.asarray(wine)
    with config_context(array_api_dispatch=True):
        model = dispatched(n_components=4, whiten=False, random_state=0)
        for _ in range(3):
            model.partial_fit(Xa[:40, ...])
        assert model.n_iter_ == 3
        state = model._training_state
        assert (GaussianRBMArrayAPI.params_of(model)[LOG_VARIANCE]
                is state.extra["published_log_variance"])
        # variance_ replaced by equal values: still the exact log variances
        model.variance_ = xp_strict.asarray(to_host(model.variance_).copy())
        assert (GaussianRBMArrayAPI.params_of(model)[LOG_VARIANCE]
                is state.extra["published_log_variance"])
        # edited: its logarithm, which the next call continues from
        model.variance_ = model.variance_ * 1.5
        edited = to_host(GaussianRBMArrayAPI.params_of(model)[LOG_VARIANCE])
        assert_allclose(edited, np.log(to_host(model.variance_)))
        model.partial_fit(Xa[40:80, ...])
    assert model.n_iter_ == 4
    assert np.all(np.abs(np.log(to_host(model.variance_)) - edited) < 0.1)


@pytest.mark.parametrize("name", NAMESPACES)
def test_runaway_model_raises_and_keeps_the_fit(wine, name):
    Xa = as_namespace(name, wine)
    with config_context(array_api_dispatch=True):
        model = dispatched(n_components=3, n_iter=2, random_state=0).fit(Xa)
        W = to_host(model.components_).copy()
        W[0, 0] = 1e4
        model.components_ = as_namespace(name, W)
        before = {key: to_host(getattr(model, key)).copy() for key in PARAMETERS}
        state = model._training_state
        with pytest.raises(TrainingDivergedError, match=r"put visible values 1e\+04 away"
                           r".*learning rate.*left as it was"):
            model.set_params(learning_rate=1e-6).partial_fit(Xa)
    for key, value in before.items():
        assert_array_equal(to_host(getattr(model, key)), value)
    assert model._training_state is state and model.n_iter_ == 2


def test_variance_collapse_raises_and_keeps_the_fit(wine):
    Xa = xp_strict.asarray(wine)
    repeated = xp_strict.asarray(np.repeat(wine[:1], 60, axis=0))
    with config_context(array_api_dispatch=True):
        model = dispatched(n_components=3, n_iter=3, random_state=0).fit(Xa)
        # fit sees every row: every feature is constant, refused before training
        with pytest.raises(ValueError, match="constant feature"):
            model.set_params(n_iter=200, learning_rate=0.05).fit(repeated)
        assert model.n_iter_ == 3
        # a stream of them collapses later
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DataScaleWarning)
            with pytest.raises(TrainingDivergedError, match="collapsed"):
                for _ in range(200):
                    before = ({key: to_host(getattr(model, key)).copy()
                               for key in PARAMETERS}, model.n_iter_)
                    model.partial_fit(repeated)
    for key, value in before[0].items():
        assert_array_equal(to_host(getattr(model, key)), value)
    assert model.n_iter_ == before[1]


def test_a_failed_first_fit_leaves_the_estimator_unfitted(wine):
    model = dispatched(n_components=3, n_iter=2, learning_rate=1e30, random_state=0)
    with config_context(array_api_dispatch=True), pytest.raises(
            TrainingDivergedError), np.errstate(all="ignore"):
        model.fit(xp_strict.asarray(wine))
    assert not hasattr(model, "components_") and not hasattr(model, "_training_state")


def test_the_numpy_paths_checks_run_under_dispatch(wine):
    with config_context(array_api_dispatch=True):
        # unscaled features
        with pytest.warns(DataScaleWarning, match="StandardScaler"):
            dispatched(n_components=2, n_iter=0, whiten=False).fit(
                xp_strict.asarray(wine * 100))
        # a constant feature: refused by fit with learnt variances, a warning else
        constant = xp_strict.asarray(np.column_stack([wine, np.ones(len(wine))]))
        with pytest.raises(ValueError, match=r"constant feature\(s\) \[13\]"):
            dispatched(n_components=2, n_iter=1).fit(constant)
        with pytest.warns(DataScaleWarning, match="VarianceThreshold"):
            dispatched(n_components=2, n_iter=0).partial_fit(constant)
        # partial_fit rows far from the training mean
        model = dispatched(n_components=2, n_iter=1, random_state=0).fit(
            xp_strict.asarray(wine))
        with pytest.warns(DataScaleWarning, match="root-mean-square distance"):
            model.partial_fit(xp_strict.asarray(wine[:20] * 100))


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("whiten", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_finite_rows_never_give_nan(name, whiten, dtype):
    """Values beyond the largest magnitude the model's arithmetic takes are clipped to
    it, with the NumPy path's warning (see test_gaussian.py)."""
    X = np.random.default_rng(0).normal(size=(60, 3))
    big = 0.9 * float(np.finfo(dtype).max)
    root = np.sqrt(big)
    huge = np.array([[big, -big, 0.0], [big, big, big], [-big, 5.0, root],
                     [root, root, -root]])
    with config_context(array_api_dispatch=True), warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model = dispatched(n_components=4, n_iter=2, whiten=whiten, random_state=0).fit(
            as_namespace(name, X, dtype))
        for method in ("score_samples", "free_energy", "transform", "reconstruct"):
            with pytest.warns(DataRangeWarning, match="beyond"):
                result = getattr(model, method)(as_namespace(name, huge, dtype))
            assert np.all(np.isfinite(to_host(result))), method
        with warnings.catch_warnings():
            warnings.simplefilter("error", DataRangeWarning)  # ordinary rows: no warning
            model.score_samples(as_namespace(name, X, dtype))
        with pytest.warns(DataRangeWarning):
            assert np.all(to_host(model.score_samples(as_namespace(name, huge, dtype)))
                          < -1e15)


def test_missing_entries_are_refused_and_zero_weights_are_no_rows(wine):
    X = wine.copy()
    X[0, 0] = np.nan
    with config_context(array_api_dispatch=True):
        with pytest.raises(ValueError, match="missing entries \\(NaN\\).*Pass NumPy arrays"):
            dispatched(n_components=2, n_iter=1).fit(xp_strict.asarray(X))
        model = dispatched(n_components=2, n_iter=1, random_state=0).fit(
            xp_strict.asarray(wine))
        with pytest.raises(ValueError, match="NaN"):
            model.transform(xp_strict.asarray(X))
        keep = np.arange(len(wine)) % 4 != 0
        weighted = dispatched(n_components=2, n_iter=1, random_state=0).fit(
            xp_strict.asarray(wine), sample_weight=keep.astype(float))
        kept = dispatched(n_components=2, n_iter=1, random_state=0).fit(
            xp_strict.asarray(wine[keep]))
        assert_array_equal(to_host(weighted.components_), to_host(kept.components_))
        # NumPy arrays keep taking missing entries
        assert np.isfinite(dispatched(n_components=2, n_iter=1).fit(X).score(X))


@pytest.mark.parametrize("setting", [
    {"z_estimator": "visited_states"},
])
def test_unsupported_settings_are_refused(wine, setting):
    model = dispatched(n_components=3, n_iter=1, **setting)
    assert not model.__sklearn_tags__().array_api_support
    with config_context(array_api_dispatch=True), pytest.raises(
            ValueError, match="not available under array API dispatch"):
        model.fit(xp_strict.asarray(wine))
    assert dispatched().__sklearn_tags__().array_api_support
    assert GaussianRBM(learning="cd").__sklearn_tags__().array_api_support
    assert GaussianRBM().__sklearn_tags__().array_api_support  # parallel tempering


def test_namespace_mismatch_is_refused(wine):
    with config_context(array_api_dispatch=True):
        model = dispatched(n_components=3, n_iter=1, random_state=0).fit(
            xp_strict.asarray(wine))
        with pytest.raises(ValueError, match="must use the same namespace"):
            model.score_samples(wine)
        with pytest.raises(NotImplementedError, match="not available for a model fitted"):
            model.estimate_log_likelihood_bounds(xp_strict.asarray(wine))
    with pytest.raises(ValueError, match="array_api_dispatch=True"):
        model.transform(wine)


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("whiten", [False, True])
def test_pickled_model_continues_alike(wine, name, whiten):
    X = as_namespace(name, wine)
    with config_context(array_api_dispatch=True):
        model = dispatched(n_components=4, n_iter=1, whiten=whiten, random_state=0).fit(X)
        copy = pickle.loads(pickle.dumps(model))
        assert_array_equal(to_host(copy.score_samples(X)), to_host(model.score_samples(X)))
        model.partial_fit(X)
        copy.partial_fit(X)  # the random stream was pickled with the model
        for key in PARAMETERS:
            assert_array_equal(to_host(getattr(copy, key)), to_host(getattr(model, key)))


@pytest.mark.parametrize(
    "array_namespace, device_name, dtype_name",
    list(yield_namespace_device_dtype_combinations()),
)
def test_sklearn_array_api_input_check(array_namespace, device_name, dtype_name):
    if device_name == "cuda" and (torch is None or not torch.cuda.is_available()):
        pytest.skip("no CUDA device")  # (a CUDA build of torch without a usable GPU)
    for whiten in (False, True):
        check_array_api_input("GaussianRBM", dispatched(n_components=3, n_iter=2,
                                                        whiten=whiten),
                              array_namespace, device_name=device_name,
                              dtype_name=dtype_name)


def test_sklearn_array_api_same_namespace_check():
    check_array_api_same_namespace("GaussianRBM", dispatched(n_components=3, n_iter=2),
                                   "array_api_strict")


def test_statistical_agreement_with_numpy():
    """The held-out mean log density within 0.2 nats of the NumPy path's, as means
    over eight seeds, on the standardised breast cancer data, whitened (8 hidden units,
    PCD, exact log Z, 30 epochs).

    The two paths draw different random numbers, so their fits are different fits.
    One seed's held-out score has a standard deviation of about 0.05 nats on either
    path, so the difference of two eight-seed means has a standard error of about
    0.03 nats, and 0.2 nats is about seven of them. On torch CPU the means were
    -12.475 (NumPy) and -12.490 nats; without whitening (a standard deviation of 0.4
    nats per seed) -33.77 and -33.80.
    """
    X_train, X_test = train_test_split(load_breast_cancer().data, random_state=0)
    scaler = StandardScaler().fit(X_train)
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    name = "torch" if torch is not None else "array_api_strict"
    numpy_scores, dispatched_scores = [], []
    for seed in range(8):
        settings = dict(n_components=8, n_iter=30, whiten=True, random_state=seed)
        numpy_scores.append(dispatched(**settings).fit(X_train).score(X_test))
        with config_context(array_api_dispatch=True):
            model = dispatched(**settings).fit(as_namespace(name, X_train))
            dispatched_scores.append(model.score(as_namespace(name, X_test)))
    difference = np.mean(dispatched_scores) - np.mean(numpy_scores)
    assert abs(difference) < 0.2, (dispatched_scores, numpy_scores)
