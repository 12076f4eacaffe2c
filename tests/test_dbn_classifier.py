"""DBNClassifier: pretraining on every row, fine-tuning from the RBMs' weights on the
labelled rows."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler

from skboltz import DBN, RBM, DBNClassifier, GaussianRBM
from skboltz.utils._runtime import sub_estimator_seeds
from skboltz.exceptions import DataRangeWarning
from skboltz.meta._dbn_classifier import pretrained_weights


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:300] / 16, y[:300]


def small(**params):
    """A quick DBNClassifier: one small layer, two pretraining epochs."""
    settings = dict(hidden_layer_sizes=(12,), rbm=RBM(n_iter=2), max_iter=15, random_state=0)
    return DBNClassifier(**{**settings, **params})


def fit_quietly(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(X, y)


def fresh_mlp_from(clf, X, y):
    """An MLPClassifier fitted from scratch whose own initialisation returns the starting
    weights DBNClassifier gives its network (the RBMs' and the new output layer).

    Independent of DBNClassifier's warm start: ``MLPClassifier._init_coef`` is what a
    fresh fit calls for each layer's starting weights (a private hook, used here only to
    check against; if scikit-learn renames it, the fits differ and the tests say so).
    """
    output_seed = sub_estimator_seeds(clf.random_state, 3)[1]
    n_outputs = clf.mlp_.coefs_[-1].shape[1]
    coefs, intercepts = pretrained_weights(clf.dbn_, n_outputs, X.dtype, output_seed)
    layers = iter(zip(coefs, intercepts))

    class FromGivenWeights(MLPClassifier):
        def _init_coef(self, fan_in, fan_out, dtype):
            coef, intercept = next(layers)
            assert coef.shape == (fan_in, fan_out) and coef.dtype == dtype
            return coef.copy(), intercept.copy()

    return fit_quietly(FromGivenWeights(**clf.mlp_.get_params()), X, y)


def assert_same_network(a, b):
    for name in ["coefs_", "intercepts_"]:
        for left, right in zip(getattr(a, name), getattr(b, name), strict=True):
            assert left.dtype == right.dtype
            assert_array_equal(left, right)
    assert a.n_iter_ == b.n_iter_
    for name in ["loss_curve_", "validation_scores_", "best_validation_score_", "best_loss_",
                 "t_"]:
        assert getattr(a, name, None) == getattr(b, name, None), name


# -- fine-tuning starts from the RBMs ---------------------------------------------------
@pytest.mark.parametrize(
    "settings",
    [
        dict(solver="sgd"),
        dict(solver="sgd", hidden_layer_sizes=(10, 6), max_iter=300),  # stops on tol
        dict(solver="adam", learning_rate_init=1e-3),
        dict(solver="sgd", early_stopping=True, max_iter=25),
        dict(solver="lbfgs"),
    ],
    ids=["sgd", "sgd-two-layers-to-convergence", "adam", "early-stopping", "lbfgs"],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fine_tuning_is_a_fresh_fit_from_the_pretrained_weights(digits, settings, dtype):
    # The warm-started network (weights replaced, the throw-away iteration's record
    # reset) trains exactly as a fresh MLPClassifier started from the same weights:
    # same weights, epochs, loss curve, validation scores and stopping.
    X, y = digits[0].astype(dtype), digits[1]
    clf = fit_quietly(small(**settings), X, y)
    assert_same_network(clf.mlp_, fresh_mlp_from(clf, X, y))


def test_the_network_starts_as_the_rbms(digits):
    # With (almost) no step, the fine-tuned hidden layers are the RBMs' and the network's
    # hidden units compute the DBN's features.
    X, y = digits
    clf = fit_quietly(
        small(hidden_layer_sizes=(10, 6), solver="sgd", learning_rate_init=1e-12,
              momentum=0.0, max_iter=1), X, y,
    )
    layers = clf.dbn_.layers_
    assert len(clf.mlp_.coefs_) == len(layers) + 1
    for coef, intercept, layer in zip(clf.mlp_.coefs_, clf.mlp_.intercepts_, layers):
        assert_allclose(coef, layer.components_.T, atol=1e-9)
        assert_allclose(intercept, layer.intercept_hidden_, atol=1e-9)
    hidden = X
    for coef, intercept in zip(clf.mlp_.coefs_[:-1], clf.mlp_.intercepts_[:-1]):
        hidden = 1 / (1 + np.exp(-(hidden @ coef + intercept)))
    assert_allclose(hidden, clf.dbn_.transform(X), rtol=1e-6)
    # The new output layer: Glorot-scaled uniform weights, zero biases.
    bound = np.sqrt(2 / (6 + 10))
    assert 0 < np.abs(clf.mlp_.coefs_[-1]).max() <= bound
    assert_allclose(clf.mlp_.intercepts_[-1], 0, atol=1e-9)


def test_fine_tuning_does_not_touch_the_pretrained_dbn(digits):
    X, y = digits
    clf = fit_quietly(small(learning_rate_init=0.5), X, y)
    dbn = DBN(hidden_layer_sizes=(12,), rbm=RBM(n_iter=2),
              random_state=sub_estimator_seeds(0, 3)[0]).fit(X)
    assert_array_equal(clf.dbn_.layers_[0].components_, dbn.layers_[0].components_)
    assert not np.allclose(clf.mlp_.coefs_[0], dbn.layers_[0].components_.T)


# -- unlabelled rows ------------------------------------------------------------------
def test_unlabelled_rows_are_pretrained_on_not_fine_tuned_on(digits):
    X, y = digits
    few = np.where(np.arange(len(y)) % 3 == 0, y, -1)
    labelled = few != -1
    clf = fit_quietly(small(unlabelled_marker=-1), X, few)
    assert_array_equal(clf.classes_, np.arange(10))

    # Pretraining saw every row and no label: the same DBN as with every label.
    every_label = fit_quietly(small(unlabelled_marker=-1), X, y)
    assert_array_equal(clf.dbn_.layers_[0].components_,
                       every_label.dbn_.layers_[0].components_)
    only_labelled = fit_quietly(small(unlabelled_marker=-1), X[labelled], y[labelled])
    assert not np.allclose(clf.dbn_.layers_[0].components_,
                           only_labelled.dbn_.layers_[0].components_)

    # Fine-tuning saw the labelled rows only.
    assert_same_network(clf.mlp_, fresh_mlp_from(clf, X[labelled], y[labelled]))
    assert not np.allclose(clf.mlp_.coefs_[0], every_label.mlp_.coefs_[0])


def test_without_a_marker_minus_one_is_a_class(digits):
    X, y = digits
    signs = np.where(y < 5, -1, 1)
    clf = fit_quietly(small(), X, signs)
    assert_array_equal(clf.classes_, [-1, 1])
    assert clf.predict_proba(X).shape == (len(y), 2)


@pytest.mark.parametrize(
    "labels, marker, classes",
    [
        (np.array(["odd", "even"] * 50 + ["?"] * 50), "?", ["even", "odd"]),
        (np.array(["odd", "even"] * 50 + [-1] * 50, dtype=object), -1, ["even", "odd"]),
        (np.array([3.0, 7.0] * 50 + [-1.0] * 50), -1, [3.0, 7.0]),
        (np.array([3, 7] * 75), "?", [3, 7]),  # a marker no row carries
    ],
    ids=["str-marker", "object-labels-int-marker", "float-labels", "absent-marker"],
)
def test_marker_and_label_types(digits, labels, marker, classes):
    X = digits[0][:150]
    clf = fit_quietly(small(unlabelled_marker=marker), X, labels)
    assert clf.classes_.tolist() == classes
    assert set(clf.predict(X).tolist()) <= set(classes)


# -- errors ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "y, marker, message",
    [
        (np.full(300, -1), -1, "Every row of y is marked unlabelled"),
        (np.where(np.arange(300) < 100, 4, -1), -1, r"one class only \(4\)"),
        (np.full(300, "a"), None, r"one class only \('a'\)"),
        (np.linspace(0, 1, 300), None, "Unknown label type"),
    ],
    ids=["all-unlabelled", "one-labelled-class", "one-class", "regression-targets"],
)
def test_bad_labels_are_refused_before_pretraining(digits, y, marker, message, monkeypatch):
    def no_pretraining(*args, **kwargs):
        raise AssertionError("pretraining ran")

    monkeypatch.setattr(DBN, "fit", no_pretraining)
    with pytest.raises(ValueError, match=message):
        small(unlabelled_marker=marker).fit(digits[0], y)


@pytest.mark.parametrize(
    "fraction, labels, message",
    [(0.0, np.arange(300) % 10, r"validation_fraction=0.0 of the 300 labelled rows .*"
      r"but it holds out no row. Use a validation_fraction in \(0, 1\)"),
     (0.5, np.where(np.arange(300) < 299, 0, 1), r"validation_fraction=0.5 of the 300 "
      r"labelled rows .*but the split fails \(.*least populated class"),
     (0.1, np.where(np.arange(300) < 4, np.arange(300) % 2, -1), r"of the 4 labelled "
      r"rows .*the split fails")],
    ids=["zero", "stratified-binary", "few-labels"],
)
def test_an_early_stopping_split_fine_tuning_would_refuse_is_refused_before_pretraining(
        digits, fraction, labels, message, monkeypatch):
    # DBNClassifier(early_stopping=True, validation_fraction=0.0) pretrained, then
    # failed with scikit-learn's internal message ("test_size=0.0 should be ...").
    def no_pretraining(*args, **kwargs):
        raise AssertionError("pretraining ran")

    monkeypatch.setattr(DBN, "fit", no_pretraining)
    clf = small(early_stopping=True, validation_fraction=fraction, unlabelled_marker=-1)
    with pytest.raises(ValueError, match=message):
        clf.fit(digits[0], labels)
    assert not hasattr(clf, "classes_")
    # lbfgs does not split: nothing to refuse
    monkeypatch.undo()
    fit_quietly(clf.set_params(solver="lbfgs", max_iter=5), digits[0][:60], np.arange(60) % 3)


def test_a_gaussian_template_is_refused(digits):
    # GaussianRBM is RBM's sibling, not a subclass: the "rbm" constraint refuses it.
    with pytest.raises(ValueError, match="'rbm' parameter .* instance of 'skboltz.estimators._rbm.RBM'"):
        small(rbm=GaussianRBM(n_iter=1)).fit(*digits)


@pytest.mark.parametrize("sizes", [(), (4, 0), [[3]]])
def test_bad_layer_sizes_are_refused(digits, sizes):
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        small(hidden_layer_sizes=sizes).fit(*digits)


def test_a_failed_fit_keeps_the_previous_model(digits):
    X, y = digits
    clf = fit_quietly(small(unlabelled_marker=-1), X, y)
    before = clf.predict_proba(X)
    with pytest.raises(ValueError, match="Every row"):
        clf.fit(X[:, :10], np.full(len(y), -1))
    assert clf.n_features_in_ == 64
    assert_array_equal(clf.predict_proba(X), before)


def test_an_interrupted_fine_tuning_keeps_the_previous_model(digits, monkeypatch):
    # MLPClassifier catches a KeyboardInterrupt in its epoch loop and returns the
    # half-trained network; DBNClassifier re-raises it and publishes nothing.
    X, y = digits
    clf = fit_quietly(small(), X, y)
    before = [coef.copy() for coef in clf.mlp_.coefs_]
    calls = 0
    backprop = MLPClassifier._backprop

    def interrupted_backprop(self, *args, **kwargs):
        nonlocal calls
        calls += 1
        if calls == 40:  # in the fine-tuning proper, after the throw-away iteration
            raise KeyboardInterrupt
        return backprop(self, *args, **kwargs)

    monkeypatch.setattr(MLPClassifier, "_backprop", interrupted_backprop)
    with pytest.raises(KeyboardInterrupt):
        fit_quietly(clf, X[:200], y[:200])
    assert calls == 40
    for coef, old in zip(clf.mlp_.coefs_, before, strict=True):
        assert_array_equal(coef, old)


def test_fine_tuning_warnings_reach_the_user_once(digits):
    # The throw-away iteration's warnings are dropped; the fine-tuning's are not.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        small(max_iter=2, batch_size=1000).fit(*digits)
    convergence = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(convergence) == 1
    assert "Maximum iterations (2)" in str(convergence[0].message)
    clipped = [w for w in caught if "batch_size" in str(w.message)]
    assert len(clipped) == 1


# -- reproducibility, dtypes, sparse input, hidden_layer_sizes ---------------------------
def test_random_state_makes_fits_reproducible(digits):
    X, y = digits
    first = fit_quietly(small(random_state=3), X, y)
    again = fit_quietly(small(random_state=3), X, y)
    other = fit_quietly(small(random_state=4), X, y)
    assert_same_network(first.mlp_, again.mlp_)
    assert_array_equal(first.predict_proba(X), again.predict_proba(X))
    assert not np.allclose(first.mlp_.coefs_[0], other.mlp_.coefs_[0])


@pytest.mark.parametrize("solver", ["sgd", "adam"])
def test_float32_stays_float32(digits, solver):
    X, y = digits[0].astype(np.float32), digits[1]
    clf = fit_quietly(small(solver=solver), X, y)
    assert clf.dbn_.layers_[0].components_.dtype == np.float32
    assert all(c.dtype == np.float32 for c in clf.mlp_.coefs_ + clf.mlp_.intercepts_)
    assert clf.predict_proba(X).dtype == np.float32
    float64 = fit_quietly(small(solver=solver), X.astype(np.float64), y)
    assert float64.mlp_.coefs_[0].dtype == np.float64
    assert (clf.predict(X) == float64.predict(X)).mean() > 0.95


def test_sparse_input_gives_the_dense_model(digits):
    X, y = digits
    dense = fit_quietly(small(), X, y)
    sparse = fit_quietly(small(), sp.csr_matrix(X), y)
    assert_allclose(sparse.mlp_.coefs_[0], dense.mlp_.coefs_[0], rtol=1e-6, atol=1e-9)
    assert_array_equal(sparse.predict(sp.csr_matrix(X)), dense.predict(X))


def test_an_int_hidden_layer_size_is_one_layer(digits):
    clf = fit_quietly(small(hidden_layer_sizes=7), *digits)
    assert [layer.n_components for layer in clf.dbn_.layers_] == [7]
    assert clf.mlp_.hidden_layer_sizes == (7,)
    assert not clf.mlp_.warm_start


def test_predictions_are_the_networks(digits):
    X, y = digits
    clf = fit_quietly(small(), X, y)
    assert_array_equal(clf.predict(X), clf.mlp_.predict(X))
    assert_allclose(clf.predict_proba(X), clf.mlp_.predict_proba(X))
    assert_allclose(clf.predict_log_proba(X), np.log(clf.predict_proba(X)))
    assert clf.score(X, y) == np.mean(clf.predict(X) == y)
    assert clf.n_iter_ == clf.mlp_.n_iter_


def test_verbose_reports_both_stages(digits, capsys):
    fit_quietly(small(verbose=1), *digits)
    out = capsys.readouterr().out
    assert "[DBNClassifier] pretraining 1 RBM(s) on 300 rows" in out
    assert "[DBN] layer 1/1" in out
    assert "[DBNClassifier] fine-tuning on 300 labelled rows" in out
    assert "Iteration 1, loss" in out  # the network's own lines
    assert "fine-tuning done" in out


# -- scikit-learn meta-estimators ---------------------------------------------------------
def test_pipeline_and_grid_search(digits):
    X, y = digits
    pipe = make_pipeline(MinMaxScaler(), small())
    search = GridSearchCV(pipe, {"dbnclassifier__alpha": [1e-4, 1e-2],
                                 "dbnclassifier__rbm__n_iter": [1, 2]}, cv=2)
    search = fit_quietly(search, X * 16, y)
    assert len(search.cv_results_["params"]) == 4
    assert search.best_estimator_.score(X * 16, y) > 0.5


# -- rows outside [0, 1] (issue 23) -------------------------------------------------------
def test_rows_outside_the_unit_interval_are_clipped_in_fit_and_predict(digits):
    # The network's input units are the RBMs' binary visible units: pretraining,
    # fine-tuning and prediction all see the same clipped rows, as an RBM's fit and
    # score do.
    X, y = digits
    unscaled = 2 * X - 0.5  # values in [-0.5, 1.5]
    with pytest.warns(DataRangeWarning, match="clipped into"):
        clf = fit_quietly(small(), unscaled, y)
    on_clipped = fit_quietly(small(), np.clip(unscaled, 0, 1), y)
    assert_same_network(clf.mlp_, on_clipped.mlp_)
    with pytest.warns(DataRangeWarning):
        proba = clf.predict_proba(unscaled)
    assert_array_equal(proba, clf.mlp_.predict_proba(np.clip(unscaled, 0, 1)))
    with pytest.warns(DataRangeWarning):
        assert_array_equal(clf.predict(sp.csr_matrix(unscaled)), clf.predict(np.clip(unscaled, 0, 1)))


def test_network_warnings_point_at_the_users_line(digits):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        small(max_iter=2).fit(2 * digits[0], digits[1])
    for category in (ConvergenceWarning, DataRangeWarning):
        found = [w for w in caught if issubclass(w.category, category)]
        assert found and all(w.filename == __file__ for w in found), category
