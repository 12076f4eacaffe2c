"""Array API dispatch: RBM on array-api-strict (always) and torch CPU (where installed).

The namespace-generic path (skboltz/estimators/_array_api_restricted.py, skboltz/estimators/_array_api_rbm.py) computes in the input's
namespace and on its device; these tests check where results live, that the NumPy
path is the same as without dispatch, scikit-learn's own array API checks, the
refusals of what is not supported, and statistical agreement with the NumPy path on
the digits (a held-out log-likelihood and linear-classifier features).
"""

import copy
import warnings

import numpy as np
import pytest
from sklearn import config_context
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.utils._array_api import yield_namespace_device_dtype_combinations
from sklearn.utils.estimator_checks import (
    check_array_api_input,
    check_array_api_same_namespace,
)

from skboltz import RBM, BoltzmannMachine, CategoricalRBM, GaussianRBM
from skboltz.utils._array_api import random_source, to_numpy
from skboltz.exceptions import DegenerateModelWarning, TooManyStatesError
from skboltz.learning import CD, PCD
from skboltz.partition import AIS, Exact

from _namespaces import NAMESPACES, as_namespace, namespace_of, to_host, torch, xp_strict





@pytest.fixture(scope="module")
def digits():
    data = load_digits()
    X, y = data.data / 16, data.target
    order = np.random.default_rng(0).permutation(len(X))
    train, test = order[:1347], order[1347:]
    return X[train], y[train], X[test], y[test]


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("learning", ["pcd", "cd", "pt", CD(n_steps=2, negative_visible="sample"),
                                      PCD(n_chains=7, n_steps=(1, 2))])
def test_methods_compute_in_the_input_namespace(digits, name, learning):
    X = digits[0][:200]
    Xa = as_namespace(name, X)
    rbm = RBM(n_components=8, n_iter=2, learning=learning, momentum=(0.5, 0.9),
              random_state=0)
    with config_context(array_api_dispatch=True):
        rbm.fit(Xa)
        for attribute in ("components_", "intercept_hidden_", "intercept_visible_"):
            assert namespace_of(getattr(rbm, attribute)) == name
        assert rbm.components_.shape == (8, 64)
        outputs = {
            "transform": rbm.transform(Xa), "reconstruct": rbm.reconstruct(Xa),
            "free_energy": rbm.free_energy(Xa), "score_samples": rbm.score_samples(Xa),
            "sample": rbm.sample(3, n_steps=5),
            "sample_means": rbm.sample(3, n_steps=5, return_means=True),
        }
        for method, output in outputs.items():
            assert namespace_of(output) == name, method
        assert isinstance(rbm.score(Xa), float)
        assert rbm.score(Xa) < 0
        log_z = rbm.estimate_log_partition()
        assert log_z.kind == "exact"
        rbm.partial_fit(Xa[:10, ...])
        assert rbm.n_iter_ == 3 and namespace_of(rbm.components_) == name
    # torch draws with its own generator; array-api-strict with NumPy's, on the host
    expected = {"torch": "_TorchSource", "array_api_strict": "_HostSource"}[name]
    assert type(rbm._training_state.source).__name__ == expected
    states = to_host(outputs["sample"])
    assert set(np.unique(states)) <= {0.0, 1.0}


@pytest.mark.parametrize("name", NAMESPACES)
def test_float32_is_kept(digits, name):
    X32 = as_namespace(name, digits[0][:100], "float32")
    with config_context(array_api_dispatch=True):
        rbm = RBM(n_components=4, n_iter=1, random_state=0).fit(X32)
        assert "float32" in str(rbm.components_.dtype)
        assert "float32" in str(rbm.transform(X32).dtype)
        assert "float64" in str(rbm.score_samples(X32).dtype)  # scores in float64


def test_array_api_strict_other_device(digits):
    device = xp_strict.Device("device1")
    X = xp_strict.asarray(digits[0][:100], device=device)
    with config_context(array_api_dispatch=True):
        rbm = RBM(n_components=4, n_iter=1, random_state=0).fit(X)
        assert rbm.components_.device == device
        assert rbm.transform(X).device == device
        assert rbm.sample(2, n_steps=2).device == device


def test_defaults_on_image_shaped_rows_stay_on_the_second_device():
    """RBM at its defaults (256 hidden units, persistent chains, averaging, the
    automatic step) on 784 binary columns, as users' images are, with held-out rows
    and early stopping and a partial_fit: every method's result on the rows' device
    (a hidden host copy would fail there)."""
    device = xp_strict.Device("device1")
    rng = np.random.default_rng(0)
    X = (rng.random((120, 784)) < np.linspace(0.02, 0.4, 784)).astype(float)
    rows = xp_strict.asarray(X, device=device)
    with config_context(array_api_dispatch=True):
        rbm = RBM(n_iter=2, validation_fraction=0.25, n_iter_no_change=5,
                  random_state=0).fit(rows)
        rbm.partial_fit(rows[:30, ...])
        results = [rbm.components_, rbm.intercept_hidden_, rbm.transform(rows),
                   rbm.reconstruct(rows), rbm.gibbs(rows), rbm.sample(3, n_steps=5),
                   rbm.free_energy(rows)]
    assert all(result.device == device for result in results)
    assert rbm.learning_rate_ == 0.02  # binary rows: the capped automatic step
    assert len(rbm.history_["reconstruction_error_valid"]) == 2  # fit's epochs
    assert rbm.history_["epoch"] == [1, 2, 3]


def test_same_seed_same_fit_and_numpy_path_unchanged(digits):
    X = digits[0][:200]
    with config_context(array_api_dispatch=True):
        first = RBM(n_components=4, n_iter=2, random_state=3).fit(xp_strict.asarray(X))
        second = RBM(n_components=4, n_iter=2, random_state=3).fit(xp_strict.asarray(X))
        numpy_dispatched = RBM(n_components=4, n_iter=2, random_state=3).fit(X)
    for a, b in ((first.components_, second.components_),):
        np.testing.assert_array_equal(to_numpy(a, xp_strict), to_numpy(b, xp_strict))
    numpy_plain = RBM(n_components=4, n_iter=2, random_state=3).fit(X)
    assert type(numpy_dispatched.components_) is np.ndarray
    np.testing.assert_array_equal(numpy_dispatched.components_, numpy_plain.components_)


def test_exact_and_ais_log_z_agree(digits):
    X = xp_strict.asarray(digits[0][:300])
    with config_context(array_api_dispatch=True):
        rbm = RBM(n_components=10, n_iter=3, random_state=0).fit(X)
        exact = rbm.estimate_log_partition("exact")
        ais = rbm.estimate_log_partition("ais")
    assert abs(ais.value - exact.value) < max(4 * ais.std_error, 0.05)
    # enumerating the visible layer (fewer visible than hidden units) agrees too
    Xn = digits[0][:300, :8]
    with config_context(array_api_dispatch=True):
        wide = RBM(n_components=12, n_iter=2, random_state=0).fit(xp_strict.asarray(Xn))
        by_visible = wide.estimate_log_partition("exact").value
    numpy_model = RBM(n_components=12, n_iter=1, random_state=0).fit(Xn)
    numpy_model.components_ = to_numpy(wide.components_, xp_strict)
    numpy_model.intercept_hidden_ = to_numpy(wide.intercept_hidden_, xp_strict)
    numpy_model.intercept_visible_ = to_numpy(wide.intercept_visible_, xp_strict)
    assert by_visible == pytest.approx(numpy_model.estimate_log_partition("exact").value,
                                       abs=1e-9)


@pytest.mark.parametrize(
    "array_namespace, device_name, dtype_name",
    list(yield_namespace_device_dtype_combinations()),
)
def test_sklearn_array_api_input_check(array_namespace, device_name, dtype_name):
    if device_name == "cuda" and (torch is None or not torch.cuda.is_available()):
        pytest.skip("no CUDA device")  # (a CUDA build of torch without a usable GPU)
    with warnings.catch_warnings():
        # make_classification's rows, clipped into [0, 1]: a poor model is fine here
        warnings.simplefilter("ignore", DegenerateModelWarning)
        check_array_api_input("RBM", RBM(n_components=4, n_iter=2), array_namespace,
                              device_name=device_name, dtype_name=dtype_name)


def test_sklearn_array_api_same_namespace_check():
    check_array_api_same_namespace("RBM", RBM(n_components=4, n_iter=2),
                                   "array_api_strict")


def test_namespace_mismatch_is_refused(digits):
    X = digits[0][:100]
    with config_context(array_api_dispatch=True):
        rbm = RBM(n_components=4, n_iter=1, random_state=0).fit(xp_strict.asarray(X))
        with pytest.raises(ValueError, match="must use the same namespace"):
            rbm.score_samples(X)
        with pytest.raises(ValueError, match="must use the same namespace"):
            rbm.partial_fit(X)
        numpy_model = RBM(n_components=4, n_iter=1, random_state=0).fit(X)
        with pytest.raises(ValueError, match="must use the same namespace"):
            numpy_model.transform(xp_strict.asarray(X))
    with pytest.raises(ValueError, match="array_api_dispatch=True"):
        rbm.transform(X)  # dispatch off: the model's arrays are not NumPy's
    with config_context(array_api_dispatch=True), pytest.raises(
            NotImplementedError, match="not available for a model fitted under array"):
        rbm.estimate_log_likelihood_bounds(xp_strict.asarray(X))


@pytest.mark.parametrize("name", NAMESPACES)
def test_gibbs_step_in_the_namespace(digits, name):
    X = as_namespace(name, digits[0][:50])
    with config_context(array_api_dispatch=True):
        rbm = RBM(n_components=4, n_iter=1, random_state=0).fit(X)
        first, again = rbm.gibbs(X), rbm.gibbs(X)
        seeded = [to_host(rbm.gibbs(X, random_state=3)) for _ in range(2)]
    assert namespace_of(first) == name
    assert set(np.unique(to_host(first))) <= {0.0, 1.0}
    assert not np.array_equal(to_host(first), to_host(again))  # the model's own stream
    np.testing.assert_array_equal(*seeded)


@pytest.mark.parametrize("setting", [
    {"learning": "exact"}, {"z_estimator": "mean_field"},
])
def test_unsupported_settings_are_refused(digits, setting):
    rbm = RBM(n_components=4, n_iter=1, **setting)
    assert not rbm.__sklearn_tags__().array_api_support
    with config_context(array_api_dispatch=True), pytest.raises(
            ValueError, match="not available under array API dispatch"):
        rbm.fit(xp_strict.asarray(digits[0][:50]))
    assert RBM().__sklearn_tags__().array_api_support


def test_other_estimators_refuse_dispatch(digits):
    # (GaussianRBM computes under dispatch now: tests/test_array_api_gaussian.py)
    with config_context(array_api_dispatch=True), pytest.raises(
            TypeError, match="BoltzmannMachine.fit does not support array API dispatch"):
        BoltzmannMachine(n_hidden=2, n_iter=1).fit(xp_strict.asarray(digits[0][:50]))


def test_random_sources_are_seeded():
    source = random_source(xp_strict, None, 5)
    again = random_source(xp_strict, None, 5)
    a, b = source.random((3, 4), xp_strict.float32), again.random((3, 4), xp_strict.float32)
    np.testing.assert_array_equal(to_numpy(a, xp_strict), to_numpy(b, xp_strict))
    assert sorted(to_numpy(source.permutation(6), xp_strict).tolist()) == list(range(6))
    if torch is not None:
        t1 = random_source(torch, torch.device("cpu"), 5).standard_normal((4,), torch.float64)
        t2 = random_source(torch, torch.device("cpu"), 5).standard_normal((4,), torch.float64)
        assert torch.equal(t1, t2)


def _held_out_and_accuracy(rbm, X_train, y_train, X_test, y_test, convert):
    features = LogisticRegression(max_iter=2000)
    features.fit(convert(rbm.transform(X_train)), y_train)
    accuracy = features.score(convert(rbm.transform(X_test)), y_test)
    return rbm.score(X_test), accuracy


def test_statistical_agreement_with_numpy_on_digits(digits):
    """The held-out log-likelihood within 0.2 nats and the features' accuracy (a
    logistic regression on 450 held-out digits) within 1.5 points of the NumPy path's,
    as means over four seeds (16 hidden units, exact log Z, 10 epochs).

    The two paths draw different random numbers, so their fits are different fits:
    one seed's accuracy has a standard deviation of 0.6 (NumPy) to 1.0 points (torch)
    across seeds, so the difference of two four-seed means has a standard error of
    about 0.6 points, and 1.5 points is 2.6 of them (a test at 0.5 points would fail by
    chance). Over 16 seeds (torch CPU) the means were 0.08 points and 0.016 nats
    apart (0.9132 and 0.9124; -25.067 and -25.051 nats).
    """
    X_train, y_train, X_test, y_test = digits
    name = "torch" if torch is not None else "array_api_strict"
    numpy_runs, dispatched_runs = [], []
    for seed in range(4):
        settings = dict(n_components=16, n_iter=10, random_state=seed)
        numpy_rbm = RBM(**settings).fit(X_train)
        numpy_runs.append(_held_out_and_accuracy(numpy_rbm, X_train, y_train, X_test,
                                                 y_test, to_host))
        with config_context(array_api_dispatch=True):
            Xa_train, Xa_test = as_namespace(name, X_train), as_namespace(name, X_test)
            rbm = RBM(**settings).fit(Xa_train)
            dispatched_runs.append(_held_out_and_accuracy(rbm, Xa_train, y_train,
                                                          Xa_test, y_test, to_host))
    numpy_ll, numpy_accuracy = np.mean(numpy_runs, axis=0)
    dispatched_ll, dispatched_accuracy = np.mean(dispatched_runs, axis=0)
    assert abs(dispatched_ll - numpy_ll) < 0.2, (dispatched_runs, numpy_runs)
    assert abs(dispatched_accuracy - numpy_accuracy) < 0.015, (dispatched_runs, numpy_runs)


@pytest.mark.parametrize("name", NAMESPACES)
def test_pickled_model_continues_alike(digits, name):
    import pickle

    X = as_namespace(name, digits[0][:100])
    with config_context(array_api_dispatch=True):
        rbm = RBM(n_components=4, n_iter=1, random_state=0).fit(X)
        copy = pickle.loads(pickle.dumps(rbm))
        np.testing.assert_array_equal(to_host(copy.transform(X)), to_host(rbm.transform(X)))
        rbm.partial_fit(X)
        copy.partial_fit(X)  # the random stream was pickled with the model
        np.testing.assert_array_equal(to_host(copy.components_), to_host(rbm.components_))


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_grid_search_on_torch_tensors(digits):
    from sklearn.model_selection import GridSearchCV

    X = torch.asarray(digits[0][:300])
    with config_context(array_api_dispatch=True):
        search = GridSearchCV(RBM(n_iter=2, random_state=0), {"n_components": [4, 8]},
                              cv=2).fit(X)
    assert namespace_of(search.best_estimator_.components_) == "torch"
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


def test_adaptive_ais_searches_for_its_target(digits):
    """The adaptive schedule doubles the betas while the log weights spread wide, then
    adds chains until the standard error is at the target; a budget too short for it
    leaves an estimate that says so."""

    X = xp_strict.asarray(digits[0][:300])
    with config_context(array_api_dispatch=True):
        rbm = RBM(n_components=12, n_iter=3, random_state=0).fit(X)
        exact = rbm.estimate_log_partition("exact")
        searched = rbm.estimate_log_partition(AIS(n_chains=16, target_std_error=0.01,
                                                  max_time=None))
        short = rbm.estimate_log_partition(AIS(n_chains=16, target_std_error=1e-4,
                                               max_time=0.5))
    assert searched.converged and searched.std_error <= 0.01
    assert searched.cost["n_chains"] > 16  # chains were added to reach the target
    assert abs(searched.value - exact.value) < max(4 * searched.std_error, 0.02)
    assert not short.converged and "max_time" in " ".join(short.caveats)


@pytest.mark.parametrize("name", NAMESPACES)
def test_zero_weights_are_no_rows(digits, name):
    """0/1 weights fit exactly the model of the kept rows (rows of weight 0 are
    dropped before anything is drawn; equal weights are the unweighted fit)."""
    X = digits[0][:120]
    keep = np.arange(120) % 3 != 0
    weights = keep.astype(float)
    settings = dict(n_components=6, n_iter=2, random_state=0)
    with config_context(array_api_dispatch=True):
        weighted = RBM(**settings).fit(as_namespace(name, X), sample_weight=weights)
        kept = RBM(**settings).fit(as_namespace(name, X[keep]))
    np.testing.assert_array_equal(to_host(weighted.components_), to_host(kept.components_))


def test_weights_count_as_repeated_rows_in_the_gradient(digits):
    """With integer weights an update's gradient is the one of the rows repeated: PCD's
    negative phase draws from its chains alone, so with the same chains and random
    numbers the two gradients are equal (to rounding)."""
    from skboltz.estimators._array_api_restricted import _weighted_rows
    from skboltz.estimators._array_api_rbm import RBMArrayAPI

    X = digits[0][:8]
    counts = np.array([1, 2, 3, 1, 1, 4, 2, 1])
    with config_context(array_api_dispatch=True):
        rbm = RBM(n_components=5, n_iter=1, random_state=0).fit(xp_strict.asarray(X))
        state = rbm._training_state
        gradients = []
        for rows, weights in ((X, counts), (np.repeat(X, counts, axis=0), None)):
            rows, relative = _weighted_rows(xp_strict.asarray(rows), weights)
            chains_state = copy.copy(state)
            chains_state.chains = dict(state.chains)  # the strategy moves them in place
            chains_state.source = random_source(xp_strict, None, 7)
            model = RBMArrayAPI.model(rbm, state.iterate, state)
            gradients.append(RBMArrayAPI._gradient(
                model, chains_state, rbm.learning_, rows, 1, 0.1,
                None if relative is None else xp_strict.asarray(relative)))
    for name in gradients[0]:
        np.testing.assert_allclose(to_host(gradients[0][name]), to_host(gradients[1][name]),
                                   rtol=1e-12, atol=1e-14)


def test_weighted_score_is_the_repeated_rows_score(digits):
    X = digits[0][:30]
    counts = np.arange(30) % 4
    with config_context(array_api_dispatch=True):
        rbm = RBM(n_components=5, n_iter=1, random_state=0).fit(xp_strict.asarray(X))
        weighted = rbm.score(xp_strict.asarray(X), sample_weight=xp_strict.asarray(
            counts.astype(float)))
        repeated = rbm.score(xp_strict.asarray(np.repeat(X, counts, axis=0)))
        with pytest.raises(ValueError, match="Negative values"):
            rbm.fit(xp_strict.asarray(X), sample_weight=-np.ones(30))
    assert weighted == pytest.approx(repeated, rel=1e-12)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_a_tensor_that_requires_grad_is_read_as_its_values(digits):
    """A fit reads its input's values (it has no gradient to pass back): a tensor that
    requires grad fits, scores and transforms as its detached copy, and the results
    do not require grad (it failed with torch's "Can't call numpy() on Tensor that
    requires grad")."""
    X = torch.asarray(digits[0][:60], dtype=torch.float64)
    weights = torch.linspace(0.5, 2.0, 60, dtype=torch.float64)
    with_grad = X.clone().requires_grad_(True)
    weights_with_grad = weights.clone().requires_grad_(True)
    with config_context(array_api_dispatch=True):
        plain = RBM(n_components=4, n_iter=2, random_state=0).fit(X, sample_weight=weights)
        graded = RBM(n_components=4, n_iter=2, random_state=0).fit(
            with_grad, sample_weight=weights_with_grad)
        graded.partial_fit(with_grad)
        plain.partial_fit(X)
        assert not graded.components_.requires_grad
        np.testing.assert_array_equal(to_host(graded.components_),
                                      to_host(plain.components_))
        for method in ("transform", "score_samples", "free_energy"):
            result = getattr(graded, method)(with_grad)
            assert not result.requires_grad
            np.testing.assert_array_equal(to_host(result),
                                          to_host(getattr(plain, method)(X)))
        assert graded.score(with_grad, sample_weight=weights_with_grad) == \
            plain.score(X, sample_weight=weights)


@pytest.mark.parametrize("estimator_class", [RBM, GaussianRBM])
def test_defaults_on_image_shaped_rows_on_a_second_device(estimator_class):
    # 784 columns, every setting at its default (the automatic learning rate depends on
    # the number of columns past 64): fitted attributes, features and samples stay in
    # the input's namespace and on its (non-default) device
    device = xp_strict.Device("device1")
    rng = np.random.default_rng(0)
    rows = (rng.normal(size=(30, 784)) if estimator_class is GaussianRBM
            else (rng.random((30, 784)) < 0.2).astype(float))
    X = xp_strict.asarray(rows, device=device)
    with config_context(array_api_dispatch=True):
        model = estimator_class(random_state=0).fit(X)
        assert isinstance(model.learning_rate_, float)
        assert model.components_.shape == (model.n_components, 784)
        assert model.components_.device == device
        assert model.transform(X).device == device
        assert model.sample(2, n_steps=2).device == device


def test_exact_max_states_is_honoured_under_dispatch(digits):
    X = digits[0][:50]
    too_few = Exact(max_states=16)  # the 8 hidden units have 2**8 states
    for rows in (X, xp_strict.asarray(X)):
        with config_context(array_api_dispatch=True):
            rbm = RBM(n_components=8, n_iter=1, random_state=0).fit(rows)
            with pytest.raises(TooManyStatesError, match="max_states=16"):
                rbm.estimate_log_partition(too_few)
            assert rbm.estimate_log_partition(Exact(max_states=256)).is_exact


@pytest.mark.parametrize("Estimator", [RBM, GaussianRBM, CategoricalRBM])
def test_missing_entries_under_dispatch_are_refused_saying_what_to_do(Estimator):
    # NumPy sums them out; the dispatched path says so (it said "RBM does not accept
    # missing values encoded as NaN natively", scikit-learn's generic message)
    X = np.random.default_rng(0).integers(0, 2, (30, 4)).astype(float)
    X[0, 1] = np.nan
    settings = dict(n_components=2, n_iter=1, random_state=0)
    assert np.isfinite(Estimator(**settings).fit(X).score(X[1:]))
    with config_context(array_api_dispatch=True):
        with pytest.raises(ValueError, match="missing entries.*Pass NumPy arrays"):
            Estimator(**settings).fit(xp_strict.asarray(X))
        fitted = Estimator(**settings).fit(xp_strict.asarray(X[1:]))
        with pytest.raises(ValueError, match="missing entries.*Pass NumPy arrays"):
            fitted.score_samples(xp_strict.asarray(X))


@pytest.mark.parametrize("base", ["model", "response"])
def test_ais_bases_the_dispatched_path_lacks_are_refused(digits, base):
    X = xp_strict.asarray(digits[0][:50])
    with config_context(array_api_dispatch=True):
        rbm = RBM(n_components=8, n_iter=1, random_state=0).fit(X)
        with pytest.raises(ValueError, match=f"AIS\\(base='{base}'\\).*not available"):
            rbm.estimate_log_partition(AIS(base=base))
        assert rbm.estimate_log_partition(
            AIS(base="data", n_chains=8, n_betas=50, schedule="linear")).method == "ais"


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("new_learning", ["cd", "pcd", "pt"])
def test_partial_fit_continues_after_learning_is_changed(digits, name, new_learning):
    # as on NumPy: the parameters continue, the new strategy's chains start afresh
    X = as_namespace(name, digits[0][:100])
    with config_context(array_api_dispatch=True):
        rbm = RBM(n_components=8, learning="pcd" if new_learning != "pcd" else "cd",
                  random_state=0).partial_fit(X)
        before = to_host(rbm.components_)
        rbm.set_params(learning=new_learning).partial_fit(X)
        assert type(rbm.learning_) is type(rbm._resolve_learning())
        assert namespace_of(rbm.components_) == name
        assert not np.allclose(to_host(rbm.components_), before)
        rbm.partial_fit(X)  # and continues with it


@pytest.mark.parametrize("contamination", ["auto", 0.1])
def test_outlier_detector_over_a_dispatched_model_stays_on_the_device(contamination):
    from sklearn.datasets import load_wine
    from sklearn.preprocessing import StandardScaler

    from skboltz import LikelihoodOutlierDetector

    X = StandardScaler().fit_transform(load_wine().data)
    device = xp_strict.Device("device1")
    host = LikelihoodOutlierDetector(contamination=contamination, random_state=0).fit(X)
    with warnings.catch_warnings(), config_context(array_api_dispatch=True):
        warnings.simplefilter("ignore")
        rows = xp_strict.asarray(X, device=device)
        detector = LikelihoodOutlierDetector(contamination=contamination,
                                             random_state=0).fit(rows)
        assert isinstance(detector.estimator_, GaussianRBM)  # the default model
        assert detector.estimator_.components_.device == device
        outputs = {"score_samples": detector.score_samples(rows),
                   "decision_function": detector.decision_function(rows),
                   "predict": detector.predict(rows)}
        for method, output in outputs.items():
            assert namespace_of(output) == "array_api_strict", method
            assert output.device == device, method
        labels = to_host(outputs["predict"])
        assert set(np.unique(labels)) <= {-1, 1}
        # the threshold is a quantile of the model's own scores, as on NumPy
        if contamination == 0.1:
            assert np.mean(labels == -1) == pytest.approx(0.1, abs=0.01)
        assert detector.offset_ == pytest.approx(host.offset_, abs=2.0)
        # a user's model computes there too; one that cannot says so
        user = LikelihoodOutlierDetector(RBM(n_components=4, n_iter=2),
                                         contamination=0.1, random_state=0)
        assert user.fit(xp_strict.asarray(X > 0, dtype=xp_strict.float64,
                                          device=device)).offset_ < 0
        with pytest.raises(TypeError, match="BoltzmannMachine.fit does not support"):
            LikelihoodOutlierDetector(BoltzmannMachine(n_hidden=2, n_iter=1),
                                      contamination=0.1).fit(rows)
        missing = X.copy()
        missing[0, 0] = np.nan
        with pytest.raises(ValueError, match="missing entries.*Pass NumPy arrays"):
            LikelihoodOutlierDetector(contamination=0.1).fit(
                xp_strict.asarray(missing, device=device))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_dbn_stacks_dispatched_layers_on_the_device(digits, dtype):
    from skboltz import DBN

    X = digits[0][:200]
    device = xp_strict.Device("device1")
    with warnings.catch_warnings(), config_context(array_api_dispatch=True):
        warnings.simplefilter("ignore")
        rows = xp_strict.asarray(X, dtype=getattr(xp_strict, dtype), device=device)
        dbn = DBN((8, 4), rbm=RBM(n_iter=2), random_state=0).fit(rows)
        for layer in dbn.layers_:
            assert layer.components_.device == device
        features = dbn.transform(rows)
        assert namespace_of(features) == "array_api_strict"
        assert features.device == device and features.dtype == rows.dtype
        assert features.shape == (200, 4)
        # the top layer's features are the stack's: layer by layer, by hand
        by_hand = dbn.layers_[1].transform(dbn.layers_[0].transform(rows))
        np.testing.assert_array_equal(to_host(features), to_host(by_hand))
        dbn.partial_fit(rows)
        assert [layer.n_iter_ for layer in dbn.layers_] == [3, 3]
        with pytest.raises(NotImplementedError, match="DBN.sample.*NumPy arrays"):
            dbn.sample(2)
        with pytest.raises(ValueError, match="DBN.transform\\(\\) must use the same"):
            dbn.transform(X)
