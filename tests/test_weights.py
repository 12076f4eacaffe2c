"""sample_weight: a row of weight k counts as the row k times, a row of weight 0 as
no row; checked against enumeration (the exact gradient and log-likelihood) and
against fits on repeated rows."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn import config_context
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

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
    TabularRBM,
)
from skboltz.models._dbm_energy import dbm_gradient
from skboltz.utils._weights import weighted_percentile
from skboltz.learning import CD, PCD, MeanFieldGradient

from _oracles import (
    all_states,
    rbm_joint_log_weights,
    rbm_visible_log_probabilities,
    state_index,
)

ONE_BATCH = {"batch_size": 1000}


@pytest.fixture
def binary_rows():
    rng = np.random.default_rng(0)
    X = (rng.random((12, 5)) < 0.4).astype(float)
    weights = rng.integers(0, 4, size=12)
    weights[0] = 0  # at least one row absent
    return X, weights


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def test_rbm_exact_gradient_of_integer_weights_is_that_of_repeated_rows(binary_rows):
    """One full-batch exact update with weights moves the parameters by the gradient
    of the weighted mean log-likelihood, computed by enumerating every state; and a
    fit on the repeated rows makes the same update."""
    X, weights = binary_rows
    settings = dict(n_components=3, learning="exact", learning_rate=0.5, momentum=0.0,
                    weight_decay=0.0, average_window=None, random_state=0, **ONE_BATCH)
    start = RBM(n_iter=0, **settings).fit(X, sample_weight=weights)
    weighted = RBM(n_iter=1, **settings).fit(X, sample_weight=weights)
    repeated = RBM(n_iter=1, **settings).fit(X.repeat(weights, axis=0))
    W, b, c = start.components_, start.intercept_visible_, start.intercept_hidden_
    # enumeration: sum_i w_i E[h v^T | v_i] / sum_i w_i - E_model[h v^T]
    share = weights / weights.sum()
    data_hidden = _sigmoid(X @ W.T + c)
    joint = np.exp(rbm_joint_log_weights(W, b, c))
    joint /= joint.sum()
    V, H = all_states(X.shape[1]), all_states(3)
    gradient_W = (data_hidden * share[:, None]).T @ X - H.T @ joint.T @ V
    gradient_b = share @ X - joint.sum(axis=1) @ V
    gradient_c = share @ data_hidden - joint.sum(axis=0) @ H
    assert_allclose((weighted.components_ - W) / 0.5, gradient_W, atol=1e-12)
    assert_allclose((weighted.intercept_visible_ - b) / 0.5, gradient_b, atol=1e-12)
    assert_allclose((weighted.intercept_hidden_ - c) / 0.5, gradient_c, atol=1e-12)
    assert_allclose(repeated.components_, weighted.components_, atol=1e-13)
    assert_allclose(repeated.intercept_visible_, weighted.intercept_visible_, atol=1e-13)


def test_rbm_weighted_score_is_the_exact_mean_over_repeated_rows(binary_rows):
    X, weights = binary_rows
    model = RBM(n_components=3, n_iter=3, z_estimator="exact", random_state=0).fit(X)
    log_p = rbm_visible_log_probabilities(model.components_, model.intercept_visible_,
                                          model.intercept_hidden_)
    exact = log_p[state_index(X.repeat(weights, axis=0))].mean()
    assert_allclose(model.score(X, sample_weight=weights), exact, atol=1e-10)
    assert_allclose(model.score(X.repeat(weights, axis=0)), exact, atol=1e-10)


def _gaussian_rows():
    rng = np.random.default_rng(1)
    return rng.normal(size=(12, 3)), rng.integers(0, 4, size=12)


def _table_rows():
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.integers(0, 3, 12), rng.integers(0, 2, 12),
                         rng.normal(size=12)]).astype(float)
    return X, rng.integers(0, 4, size=12)


# Every density model, fitted deterministically (exact statistics over one full batch,
# or no epoch for the models whose strategies all sample): the fit with integer
# weights is the fit on the repeated rows, and so are the exact scores.
DETERMINISTIC_FITS = [
    pytest.param(RBM(n_components=3, learning="exact", n_iter=3, random_state=0,
                     visible_bias_init="data_rates", **ONE_BATCH), "binary", id="RBM"),
    pytest.param(BoltzmannMachine(n_hidden=2, learning="exact", n_iter=3, random_state=0,
                                  **ONE_BATCH), "binary", id="BoltzmannMachine-exact"),
    pytest.param(BoltzmannMachine(n_hidden=2, learning=MeanFieldGradient(
        linear_response=True), n_iter=3, random_state=0, **ONE_BATCH), "binary",
        id="BoltzmannMachine-mean-field"),
    pytest.param(DBM(hidden_layer_sizes=(3, 2), n_iter=0, random_state=0), "binary",
                 id="DBM"),
    # (whiten="auto" decides by cross-validation, whose folds split repeated rows)
    pytest.param(GaussianRBM(n_components=2, n_iter=0, whiten=False, random_state=0),
                 "gaussian",
                 id="GaussianRBM"),
    pytest.param(CategoricalRBM(n_components=2, n_iter=0, random_state=0), "codes",
                 id="CategoricalRBM"),
    pytest.param(TabularRBM(n_components=2, categorical_features=[0, 1], n_iter=0,
                            random_state=0), "table", id="TabularRBM"),
]


def _rows(kind, binary_rows):
    if kind == "binary":
        return binary_rows
    if kind == "gaussian":
        return _gaussian_rows()
    X, weights = _table_rows()
    return (X[:, :2], weights) if kind == "codes" else (X, weights)


@pytest.mark.parametrize("estimator, kind", DETERMINISTIC_FITS)
def test_integer_weights_fit_and_score_as_repeated_rows(estimator, kind, binary_rows):
    X, weights = _rows(kind, binary_rows)
    repeated_rows = X.repeat(weights, axis=0)
    weighted = clone(estimator).fit(X, sample_weight=weights)
    repeated = clone(estimator).fit(repeated_rows)
    assert_allclose(weighted.transform(X), repeated.transform(X), rtol=1e-10, atol=1e-12)
    score = weighted.score(X, sample_weight=weights)
    assert_allclose(score, repeated.score(repeated_rows), rtol=1e-10)
    assert_allclose(score, weighted.score_samples(repeated_rows).mean(), rtol=1e-12)


def _form_and_rows(estimator, X):
    state = estimator._training_state
    form = estimator._training_form_of(state.params, state)
    rows = form.augment(estimator._validate_X(X, reset=False))
    return form, rows


@pytest.mark.parametrize("estimator, kind", [
    (GaussianRBM(n_components=2, n_iter=1, random_state=0), "gaussian"),
    (CategoricalRBM(n_components=2, n_iter=1, random_state=0), "codes"),
    (TabularRBM(n_components=2, categorical_features=[0, 1], n_iter=1, random_state=0),
     "table"),
], ids=["GaussianRBM", "CategoricalRBM", "TabularRBM"])
@pytest.mark.parametrize("means", [False, True])
def test_weighted_data_statistics_are_those_of_repeated_rows(estimator, kind, means,
                                                             binary_rows):
    """The data's statistics of every restricted model's update (the training form's
    ``statistics``, which every strategy and loop uses), the extra rows of Gaussian
    units included."""
    X, weights = _rows(kind, binary_rows)
    model = clone(estimator).fit(X)
    form, rows = _form_and_rows(model, X)
    hidden = form.hidden_probability(rows)
    weighted = form.statistics(hidden, rows, means=means, weights=weights)
    repeated = form.statistics(hidden.repeat(weights, axis=0), rows.repeat(weights, axis=0),
                               means=means)
    assert_allclose(weighted, repeated, rtol=1e-12, atol=1e-12)


def test_dbm_gradient_counts_positive_rows_by_weight():
    rng = np.random.default_rng(3)
    weights = rng.integers(0, 4, size=10).astype(float)
    model = DBM(hidden_layer_sizes=(3, 2), n_iter=0, random_state=0).fit(
        (rng.random((10, 4)) < 0.5).astype(float))
    layout = model._training_state.layout
    positive = [rng.random((10, n)) for n in (4, 3, 2)]
    negative = [rng.random((6, n)) for n in (4, 3, 2)]
    out = np.empty(layout.size)
    offsets = [rng.random(n) for n in (4, 3, 2)]
    for centred in (None, offsets):
        weighted = dbm_gradient(positive, negative, layout, out.copy(), centred,
                                weights=weights * 10 / weights.sum())
        repeated = dbm_gradient([layer.repeat(weights.astype(int), axis=0)
                                 for layer in positive], negative, layout, out.copy(),
                                centred)
        assert_allclose(weighted, repeated, atol=1e-12)


@pytest.mark.parametrize("estimator, y", [
    (RBMClassifier(n_components=3, generative_weight=0.0, n_iter=3, random_state=0,
                   **ONE_BATCH), True),
    (DBN(hidden_layer_sizes=(3, 2), rbm=RBM(learning="exact", n_iter=2, **ONE_BATCH),
         random_state=0), False),
    (BoltzmannClassifier(RBM(n_components=2, learning="exact", n_iter=3, random_state=0,
                             **ONE_BATCH)), True),
    (DBNClassifier(3, rbm=RBM(learning="exact", n_iter=2, **ONE_BATCH), solver="lbfgs",
                   max_iter=10, random_state=0), True),
    (LikelihoodOutlierDetector(RBM(n_components=2, learning="exact", n_iter=2,
                                   random_state=0, **ONE_BATCH), contamination=0.2), False),
], ids=["RBMClassifier", "DBN", "BoltzmannClassifier", "DBNClassifier",
        "LikelihoodOutlierDetector"])
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_meta_and_supervised_estimators_pass_the_weights_on(estimator, y, binary_rows):
    X, weights = binary_rows
    labels = np.array([0, 1] * 6) if y else None
    weighted = clone(estimator).fit(X, labels, sample_weight=weights)
    repeated = clone(estimator).fit(X.repeat(weights, axis=0),
                                    None if labels is None else labels.repeat(weights))
    method = next(name for name in ("predict_proba", "transform", "decision_function")
                  if hasattr(weighted, name))
    assert_allclose(getattr(weighted, method)(X), getattr(repeated, method)(X),
                    rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("estimator", [
    RBM(n_components=3, n_iter=3, random_state=0),
    RBM(n_components=3, learning="cd", batch_size=4, n_iter=3, random_state=0),
    GaussianRBM(n_components=3, n_iter=3, random_state=0),
    BoltzmannMachine(n_hidden=2, n_iter=2, random_state=0),
    DBM(hidden_layer_sizes=(3, 2), n_iter=2, random_state=0),
    RBMClassifier(n_components=3, n_iter=2, random_state=0),
], ids=lambda estimator: type(estimator).__name__)
def test_weights_of_zero_and_one_are_the_rows_kept_bit_for_bit(estimator, binary_rows):
    """A stochastic fit too: rows of weight 0 are dropped before anything is drawn,
    and equal weights are the unweighted fit itself."""
    X, _ = binary_rows
    y = np.array([0, 1] * 6)
    keep = np.array([1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1])
    kept = clone(estimator).fit(X[keep > 0], y[keep > 0])
    weighted = clone(estimator).fit(X, y, sample_weight=3.0 * keep)
    for name, value in vars(kept).items():
        if name.endswith("_") and isinstance(value, np.ndarray):
            assert_array_equal(getattr(weighted, name), value)


@pytest.mark.parametrize("learning", [PCD(n_chains=4000), CD()], ids=["PCD", "CD"])
def test_a_stochastic_update_has_the_expectation_of_the_repeated_rows(learning):
    """The fused loop's updates over shuffled minibatches: over an epoch, each row is
    seen once with its weight, so the mean update from fixed parameters (steps too
    small to move them) is the weighted data's, as with the rows repeated (whose
    epoch has more updates), up to the negative phase's sampling noise."""
    rng = np.random.default_rng(4)
    X = (rng.random((40, 6)) < 0.3).astype(float)
    weights = rng.integers(1, 5, size=40)
    weights[0] += -weights.sum() % 5  # full minibatches of the repeated rows too
    settings = dict(n_components=4, learning=learning, learning_rate=1e-7, n_iter=1,
                    batch_size=5, momentum=0.0, weight_decay=0.0, average_window=None,
                    random_state=0)

    def mean_update(rows, sample_weight=None):
        start = RBM(**{**settings, "n_iter": 0}).fit(rows, sample_weight=sample_weight)
        model = RBM(**settings).fit(rows, sample_weight=sample_weight)
        n_updates = -(-rows[np.asarray(sample_weight if sample_weight is not None
                                       else np.ones(len(rows))) > 0].shape[0] // 5)
        return (model.components_ - start.components_) / (1e-7 * n_updates)

    weighted = mean_update(X, weights)
    repeated = mean_update(X.repeat(weights, axis=0))
    unweighted = mean_update(X)
    assert np.abs(weighted - repeated).max() < 0.2 * np.abs(unweighted - repeated).max()


def test_weighted_percentile_is_that_of_repeated_values():
    rng = np.random.default_rng(5)
    for _ in range(50):
        values, weights = rng.normal(size=6), rng.integers(0, 4, size=6)
        if weights.sum() == 0:
            continue
        q = [0, 12.5, 25, 50, 75, 99, 100]
        assert_allclose(weighted_percentile(values, q, weights),
                        np.percentile(values.repeat(weights), q))


def test_monitored_likelihood_is_the_weighted_mean(binary_rows):
    X, weights = binary_rows
    model = RBM(n_components=3, n_iter=2, learning="exact", monitor_likelihood=True,
                z_estimator="exact", random_state=0).fit(X, sample_weight=weights)
    assert_allclose(model.history_["log_likelihood_train"][-1],
                    model.score(X, sample_weight=weights), rtol=1e-10)


@pytest.mark.parametrize("estimator", [RBM(n_iter=1), DBN(rbm=RBM(n_iter=1)),
                                       LikelihoodOutlierDetector(RBM(n_iter=1))],
                         ids=lambda estimator: type(estimator).__name__)
@pytest.mark.parametrize("sample_weight, message", [
    (-np.ones(12), "Negative values in data passed to .*sample_weight"),
    (np.zeros(12), "weights must contain at least one non-zero"),
    (np.ones(5), "sample_weight.shape == \\(5,\\), expected \\(12,\\)"),
])
def test_bad_weights_are_refused_clearly(estimator, sample_weight, message, binary_rows):
    X, _ = binary_rows
    with pytest.raises(ValueError, match=message):
        clone(estimator).fit(X, sample_weight=sample_weight)


def test_partial_fit_takes_weights(binary_rows):
    X, weights = binary_rows
    model = RBM(n_components=3, learning="exact", random_state=0, **ONE_BATCH)
    repeated = clone(model)
    for _ in range(3):
        model.partial_fit(X, sample_weight=weights)
        repeated.partial_fit(X.repeat(weights, axis=0))
    assert_allclose(model.components_, repeated.components_, atol=1e-12)


def test_grid_search_and_pipeline_route_the_weights(binary_rows):
    """Metadata routing: the weights reach fit and score in a search, and fit in a
    pipeline step that asks for them."""
    X, weights = binary_rows
    X, weights = np.tile(X, (4, 1)), np.tile(weights, 4)
    with config_context(enable_metadata_routing=True):
        model = RBM(n_components=2, learning="exact", n_iter=2, random_state=0,
                    **ONE_BATCH).set_fit_request(sample_weight=True)
        model.set_score_request(sample_weight=True)
        search = GridSearchCV(model, {"learning_rate": [0.05, 0.2]}, cv=KFold(3))
        search.fit(X, sample_weight=weights)
        train, test = next(KFold(3).split(X))
        first = clone(model).set_params(learning_rate=0.05).fit(
            X[train], sample_weight=weights[train])
        assert_allclose(search.cv_results_["split0_test_score"][0],
                        first.score(X[test], sample_weight=weights[test]))

        rows = np.random.default_rng(6).normal(size=(48, 3))
        pipeline = make_pipeline(
            StandardScaler().set_fit_request(sample_weight=True),
            GaussianRBM(n_components=2, n_iter=0, random_state=0).set_fit_request(
                sample_weight=True))
        pipeline.fit(rows, sample_weight=weights)
    scaled = StandardScaler().fit(rows, sample_weight=weights).transform(rows)
    alone = GaussianRBM(n_components=2, n_iter=0, random_state=0).fit(
        scaled, sample_weight=weights)
    assert_allclose(pipeline[-1].intercept_visible_, alone.intercept_visible_)


@pytest.mark.parametrize("estimator", [
    RBM(n_components=3, n_iter=1, random_state=0),
    GaussianRBM(n_components=2, n_iter=1, random_state=0),
    BoltzmannMachine(n_hidden=2, n_iter=1, random_state=0),
    DBM(hidden_layer_sizes=(3, 2), n_iter=1, random_state=0),
], ids=lambda estimator: type(estimator).__name__)
def test_monitored_reconstruction_errors_are_weighted_means(estimator, binary_rows):
    """What early stopping follows by default: the held-out reconstruction error, a
    mean over the held-out rows counted by their weights, as over repeated rows."""
    X, weights = binary_rows
    X, weights = np.tile(X, (3, 1)), np.tile(np.maximum(weights, 1), 3)
    model = clone(estimator).set_params(validation_fraction=0.3).fit(
        X, sample_weight=weights)
    monitor = model._monitor_class(model, X, None, None, weights=weights / weights.mean())
    record = monitor.record(model._training_state)
    view = model._model_view_of(None)
    repeated = model._reconstruction_error(view, X.repeat(weights, axis=0))
    assert_allclose(record["reconstruction_error"], repeated, rtol=1e-5)


def test_one_class_left_by_zero_weights_is_refused_as_one_class():
    X = np.random.default_rng(0).random((10, 4))
    y = np.arange(10) % 2
    with pytest.raises(ValueError, match="one class"):
        RBMClassifier(n_iter=1).fit(X, y, sample_weight=y)


def _with_holes(X, seed):
    """``X`` (float) with about a quarter of its entries missing (NaN), none of its
    columns entirely."""
    X = np.array(X, dtype=float)
    holes = np.random.default_rng(seed).random(X.shape) < 0.25
    holes[0] = False
    X[holes] = np.nan
    return X


@pytest.mark.parametrize("estimator, kind", [
    (RBM(n_components=3, n_iter=0, visible_bias_init="data_rates", random_state=0),
     "binary"),
    (GaussianRBM(n_components=2, n_iter=0, random_state=0), "gaussian"),
    (CategoricalRBM(n_components=2, n_iter=0, random_state=0), "codes"),
    (TabularRBM(n_components=2, categorical_features=[0, 1], n_iter=0, random_state=0),
     "table"),
], ids=["RBM", "GaussianRBM", "CategoricalRBM", "TabularRBM"])
def test_weighted_incomplete_rows_start_and_score_as_repeated_rows(estimator, kind,
                                                                   binary_rows):
    """Missing entries and weights together: the starting values come from the
    observed values counted by their rows' weights (the standardisation and the
    column means), and the score of rows with missing entries is their weighted mean,
    as over the repeated rows."""
    X, weights = _rows(kind, binary_rows)
    X = _with_holes(X, seed=7)
    weights[0] = max(weights[0], 1)  # the complete row stays
    weighted = clone(estimator).fit(X, sample_weight=weights)
    repeated = clone(estimator).fit(X.repeat(weights, axis=0))
    assert_allclose(weighted.intercept_visible_, repeated.intercept_visible_, rtol=1e-10,
                    atol=1e-12)
    assert_allclose(weighted.transform(X), repeated.transform(X), rtol=1e-10, atol=1e-12)
    assert_allclose(weighted.score(X, sample_weight=weights),
                    repeated.score(X.repeat(weights, axis=0)), rtol=1e-10)


def test_weighted_incomplete_rows_train(binary_rows):
    """A weighted fit on rows with missing entries trains (the completions are drawn
    for the rows of positive weight; each counts by its weight), and rows of weight 0
    are no rows, bit for bit."""
    X, weights = binary_rows
    X = _with_holes(X, seed=8)
    settings = dict(n_components=3, n_iter=3, batch_size=4, random_state=0)
    keep = (weights > 0).astype(float)
    kept = RBM(**settings).fit(X[keep > 0])
    assert_array_equal(RBM(**settings).fit(X, sample_weight=2 * keep).components_,
                       kept.components_)
    model = RBM(**settings, validation_fraction=0.25).fit(X, sample_weight=weights)
    assert np.isfinite(model.history_["reconstruction_error_valid"]).all()
    assert np.isfinite(model.score(X, sample_weight=weights))


def test_the_imputer_passes_the_weights_on():
    """RBMImputer: rows of weight 0 are no rows, and integer weights standardise and
    start the model as the repeated rows do."""
    from skboltz import RBMImputer

    rng = np.random.default_rng(9)
    X = _with_holes(rng.normal(size=(12, 3)), seed=10)
    weights = rng.integers(0, 4, size=12)
    weights[0] = 1
    imputer = RBMImputer(GaussianRBM(n_components=2, n_iter=0, random_state=0))
    weighted = clone(imputer).fit(X, sample_weight=weights)
    repeated = clone(imputer).fit(X.repeat(weights, axis=0))
    assert_allclose(weighted.transform(X), repeated.transform(X), rtol=1e-9, atol=1e-12)


def _fitted_parameters(model):
    from _namespaces import to_host
    return [to_host(getattr(model, name)) for name in
            ("components_", "intercept_hidden_", "intercept_visible_")]


@pytest.mark.parametrize("dispatch", [False, True], ids=["numpy", "dispatched"])
@pytest.mark.parametrize("estimator", [
    RBM(n_components=3, n_iter=3, batch_size=5, random_state=0),
    CategoricalRBM(n_components=3, n_iter=3, batch_size=5, random_state=0),
], ids=lambda estimator: type(estimator).__name__)
@pytest.mark.parametrize("scale", [1e307, 1e-300])
def test_weights_times_a_constant_change_nothing(estimator, scale, dispatch):
    """Weights times 1e307 (whose sum overflows) or 1e-300 give the model and the
    weighted score of the weights themselves, to rounding (the relative weights
    differ in the last bit: the scaled weights were rounded)."""
    from _namespaces import xp_strict

    rng = np.random.default_rng(1)
    X = (rng.random((30, 5)) < 0.4).astype(float)
    if isinstance(estimator, CategoricalRBM):
        X = X + (rng.random((30, 5)) < 0.3)  # codes 0, 1, 2
    weights = rng.random(30) + 0.5
    rows = xp_strict.asarray(X) if dispatch else X
    with config_context(array_api_dispatch=dispatch):
        reference = clone(estimator).fit(rows, sample_weight=weights)
        scaled = clone(estimator).fit(rows, sample_weight=weights * scale)
        score = reference.score(rows, sample_weight=weights)
        scaled_score = reference.score(rows, sample_weight=weights * scale)
    for expected, found in zip(_fitted_parameters(reference), _fitted_parameters(scaled)):
        assert_allclose(found, expected, rtol=1e-12, atol=1e-14)
    assert np.isfinite(score)
    assert scaled_score == pytest.approx(score, rel=1e-12)


def test_the_imputer_fills_alike_with_weights_times_a_constant():
    """The imputer standardises its columns by weighted moments: weights of 1e307 (sum
    inf) gave NaN moments, then a fit that diverged."""
    from skboltz import RBMImputer

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    X[::5, 1] = np.nan
    weights = rng.random(40) + 0.5
    filled = RBMImputer(random_state=0).fit(X, sample_weight=weights).transform(X)
    for scale in (1e307, 1e-300):
        assert_allclose(RBMImputer(random_state=0).fit(
            X, sample_weight=weights * scale).transform(X), filled, rtol=1e-10)
