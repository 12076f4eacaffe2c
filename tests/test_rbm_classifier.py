"""RBMClassifier: the classification RBM, checked against enumeration of its joint model."""

import copy
import pickle
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler

from skboltz import RBMClassifier
from skboltz.models._rbm_classifier_energy import AugmentedClassRBM, ClassRBMLayout, ClassRBMWork
from skboltz.core._monitoring import EarlyStopping
from skboltz.core._update import UpdateRule
from skboltz.exceptions import (
    DegenerateModelWarning,
    LabelConventionWarning,
    TrainingDivergedError,
)
from skboltz.learning import CD, PCD, ParallelTempering, RBMLearningStrategy
from skboltz.partition import AIS, Exact
from skboltz.views import ClassRBMView

from _oracles import (
    all_states,
    class_rbm_joint_log_weights,
    class_rbm_statistics,
    state_index,
    total_variation,
)


def random_view(n_features=4, n_classes=3, n_hidden=3, scale=1.0, seed=0):
    rng = np.random.default_rng(seed)
    return ClassRBMView(
        rng.normal(0, scale, (n_hidden, n_features)), rng.normal(0, scale, n_features),
        rng.normal(0, scale, n_hidden), rng.normal(0, scale, (n_hidden, n_classes)),
        rng.normal(0, scale, n_classes),
    )


def oracle_arrays(view):
    return (view.weights, view.visible_bias, view.hidden_bias, view.class_weights,
            view.class_bias)


def small_data(n_rows=60, n_features=5, n_classes=3, seed=0):
    """Binary rows whose classes differ in their pixel rates."""
    rng = np.random.default_rng(seed)
    y = np.arange(n_rows) % n_classes
    rates = np.where(rng.random((n_classes, n_features)) < 0.5, 0.15, 0.85)
    X = (rng.random((n_rows, n_features)) < rates[y]).astype(float)
    return X, y


# -- the model's math against enumeration -------------------------------------------
def test_class_posterior_free_energy_and_hidden_marginals_match_enumeration():
    view = random_view(scale=1.5)
    log_w = class_rbm_joint_log_weights(*oracle_arrays(view))  # (x, y, h)
    X = all_states(view.n_visible)
    # p(y | x): sum over h, normalise over y
    log_xy = logsumexp(log_w, axis=2)
    expected = np.exp(log_xy - logsumexp(log_xy, axis=1, keepdims=True))
    assert_allclose(view.class_probability(X), expected, rtol=1e-12)
    # F(x) = -log sum_{y, h} exp(-E)
    assert_allclose(view.free_energy(X), -logsumexp(log_xy, axis=1), rtol=1e-12)
    # P(h_j = 1 | x), the class summed out
    H = all_states(view.n_hidden)
    p_yh = np.exp(log_w - logsumexp(log_w, axis=(1, 2), keepdims=True))
    marginals = np.einsum("xyh,hj->xj", p_yh, H)
    assert_allclose(view.hidden_probability(X), marginals, rtol=1e-12)
    # P(h | x, y) of one-hot rows
    Y = np.eye(view.n_classes)[np.arange(len(X)) % view.n_classes]
    p_h_given_xy = np.exp(log_w - logsumexp(log_w, axis=2, keepdims=True))
    rows = np.arange(len(X))
    given = np.einsum("xh,hj->xj", p_h_given_xy[rows, rows % 3], H)
    assert_allclose(view.hidden_probability_given_class(X, Y), given, rtol=1e-12)


@pytest.mark.parametrize("n_features, n_hidden", [(4, 3), (3, 5)])
def test_exact_log_partition_and_log_likelihood_match_enumeration(n_features, n_hidden):
    # either layer enumerated, each class's RBM in turn
    view = random_view(n_features=n_features, n_hidden=n_hidden, seed=1)
    log_w = class_rbm_joint_log_weights(*oracle_arrays(view))
    log_z = logsumexp(log_w)
    assert_allclose(Exact().estimate(view).value, log_z, rtol=1e-12)
    X = all_states(n_features)
    log_px = logsumexp(log_w, axis=(1, 2)) - log_z
    assert_allclose(-view.free_energy(X) - log_z, log_px, rtol=1e-12)
    assert_allclose(logsumexp(log_px), 0.0, atol=1e-12)


def test_ais_estimates_log_z_within_its_error_bars():
    view = random_view(n_features=6, n_hidden=4, scale=0.8, seed=2)
    exact = Exact().estimate(view).value
    estimate = AIS(n_chains=200, n_betas=300, target_std_error=None).estimate(
        view, rng=0, data_rates=np.full(6, 0.5))
    assert abs(estimate.value - exact) < 4 * estimate.std_error + 1e-3


def test_annealing_path_ends_at_the_model_and_starts_at_the_base():
    view = random_view(seed=3)
    base = np.linspace(-1, 1, view.n_visible)
    X = all_states(view.n_visible)
    assert_allclose(view.interpolate(1.0, base).log_unnormalized(X),
                    view.log_unnormalized(X), rtol=1e-12)
    start = view.interpolate(0.0, base)
    assert_allclose(Exact().estimate(start).value, view.base_log_partition(base),
                    rtol=1e-12)


def test_annealing_chains_follow_the_path_and_keep_its_distributions():
    view = random_view(n_features=4, n_hidden=3, scale=1.2, seed=7)
    view = ClassRBMView(view.weights, view.visible_bias, view.hidden_bias,
                        3 * view.class_weights, view.class_bias)  # the class matters
    base = np.linspace(-1, 1, 4)
    X = all_states(4)
    reference = (view.interpolate(0.45, base).log_unnormalized(X)
                 - view.interpolate(0.3, base).log_unnormalized(X))
    for dtype, tolerance in ((np.float64, 1e-12), (np.float32, 1e-5)):
        chains = view.annealing(base, len(X), np.random.default_rng(1), dtype=dtype)
        chains.set_states(X)
        log_w = np.zeros(len(X))
        chains.add_log_ratio(0.3, 0.45, log_w)
        assert_allclose(log_w, reference, atol=tolerance)
    # one transition at beta keeps p_beta, whether or not it reuses a step's work
    beta = 0.6

    def log_p(b):
        at = view.interpolate(b, base)
        log_x = logsumexp(class_rbm_joint_log_weights(*oracle_arrays(at)), axis=(1, 2))
        return log_x - logsumexp(log_x)

    rng = np.random.default_rng(2)
    start = X[rng.choice(len(X), size=40000, p=np.exp(log_p(beta)))]
    assert total_variation(start, log_p(1.0)) > 0.1  # the test can tell the two apart
    chains = view.annealing(base, 40000, np.random.default_rng(3))
    chains.set_states(start)
    chains.transition(beta)
    assert total_variation(chains.states, log_p(beta)) < 0.02
    # a transition that reuses the exponentials of the step before it (from beta, or
    # to beta) makes the same draws from the same noise
    for before in ((0.0, beta), (beta, 0.9)):
        again = view.annealing(base, 40000, np.random.default_rng(3))
        again.set_states(start)
        again.add_log_ratio(*before, np.zeros(40000), then_sample_at=beta)
        again.transition(beta)
        assert np.mean(np.any(again.states != chains.states, axis=1)) < 1e-3


def test_gibbs_step_leaves_the_feature_distribution_invariant():
    view = random_view(n_features=3, n_hidden=2, scale=1.0, seed=4)
    log_w = class_rbm_joint_log_weights(*oracle_arrays(view))
    log_px = logsumexp(log_w, axis=(1, 2)) - logsumexp(log_w)
    rng = np.random.default_rng(0)
    X = all_states(3)
    # start from the exact distribution: one step must keep it
    start = X[rng.choice(len(X), size=20000, p=np.exp(log_px))]
    after = view.gibbs_step(start, rng)
    assert total_variation(after, log_px) < 0.02
    # and from anywhere, a long chain reaches it
    chains = view.draw_samples(4000, 30, np.full(3, 0.5), rng)
    assert total_variation(chains, log_px) < 0.03


def test_class_and_hidden_units_are_drawn_jointly_given_the_features():
    # Given x, (y, h) come from p(y, h | x), a mixture over classes: here the class
    # switches both hidden units on or off together, which independent draws from
    # their marginals would miss.
    # given x = (1, 0), the hidden inputs are 3.5 (class 0) and -2.5 (class 1): the
    # class bias 2 (softplus(3.5) - softplus(-2.5)) makes the two classes equally likely
    balance = 2 * float(np.logaddexp(0, 3.5) - np.logaddexp(0, -2.5))
    view = ClassRBMView(np.array([[0.5, -0.5], [0.5, 0.5]]), np.zeros(2), np.zeros(2),
                        np.array([[3.0, -3.0], [3.0, -3.0]]), np.array([0.0, balance]))
    x = np.array([[1.0, 0.0]])
    assert_allclose(view.class_probability(x), 0.5)
    log_w = class_rbm_joint_log_weights(*oracle_arrays(view))[state_index(x)[0]]  # (y, h)
    exact = np.exp(log_w - logsumexp(log_w)).ravel()  # class-major, as coded below
    rng = np.random.default_rng(0)
    Y, H = view.sample_class_and_hidden(np.repeat(x, 20000, axis=0), rng)
    codes = Y.argmax(axis=1) * 4 + state_index(H)
    empirical = np.bincount(codes, minlength=8) / 20000
    assert 0.5 * np.abs(empirical - exact).sum() < 0.02
    # hidden units drawn independently from their marginals (about 1/2 each) would
    # give unequal units a quarter of the time each; the model rarely does
    assert view.hidden_probability(x) == pytest.approx(0.52, abs=0.01)
    assert exact[[1, 2, 5, 6]].sum() < 0.15


def test_training_form_draws_the_joint_visible_layer_from_its_conditional():
    view = random_view(n_features=2, n_classes=3, n_hidden=2, seed=5)
    model = view._training_form()
    H = np.array([[1.0, 0.0, 1.0]])  # h = (1, 0) and the constant unit
    from skboltz.utils._noise import Noise

    noise = Noise(np.random.default_rng(0), block_size=0)
    n = 20000
    out = model.empty_visible(n)
    model.draw_visible(np.repeat(H, n, axis=0), noise, out)
    layout = model.layout
    assert_array_equal(out[:, -1], 1)
    assert_array_equal(out[layout.classes].sum(axis=1), 1)  # one-hot
    h = H[0, :-1]
    p_x = 1 / (1 + np.exp(-(h @ view.weights + view.visible_bias)))
    p_y = np.exp(h @ view.class_weights + view.class_bias)
    p_y /= p_y.sum()
    assert_allclose(out[layout.features].mean(axis=0), p_x, atol=0.015)
    assert_allclose(out[layout.classes].mean(axis=0), p_y, atol=0.015)
    # the means, and the tempered draw at beta = 0 (uniform class, fair coins)
    mean = model.visible_probability(H)
    assert_allclose(mean[0][layout.features], p_x, rtol=1e-12)
    assert_allclose(mean[0][layout.classes], p_y, rtol=1e-12)
    model.draw_visible(np.repeat(H, n, axis=0), noise, out, beta=np.zeros((n, 1)))
    assert_allclose(out[layout.classes].mean(axis=0), 1 / 3, atol=0.015)
    assert_array_equal(out[:, -1], 1)
    # one product for a draw and the mean: the same draws as draw_visible's
    Hs = np.repeat(H, 50, axis=0)
    drawn = model.draw_visible(Hs, Noise(np.random.default_rng(1), block_size=0),
                               model.empty_visible(50))
    both, mean = model.empty_visible(50), model.empty_visible(50)
    model.draw_visible_and_mean(Hs, Noise(np.random.default_rng(1), block_size=0), both,
                                mean)
    assert_array_equal(both, drawn)
    assert_allclose(mean, model.visible_probability(Hs), rtol=1e-12)


def test_chains_start_at_the_rows_classes():
    view = random_view(n_features=2, n_classes=3, n_hidden=2)
    model = view._training_form()
    rows = np.array([[1, 0, 0, 1, 0], [0, 1, 0, 0, 0]], dtype=float)
    chains = model.chains_from_rows(np.repeat(rows, 3000, axis=0), np.random.default_rng(0))
    assert_array_equal(chains[:3000, :2], [[1, 0]] * 3000)
    assert_array_equal(chains[:3000, 2:5], [[0, 1, 0]] * 3000)
    # a row without a class (unlabelled) starts from a uniform class
    assert_allclose(chains[3000:, 2:5].mean(axis=0), 1 / 3, atol=0.03)


# -- the gradient -------------------------------------------------------------------
class ExactNegativePhase(RBMLearningStrategy):
    """The model's expected statistics by enumeration (a test strategy)."""

    def _negative_statistics(self, model, positive, state, rng, progress, noise=None):
        view = model.view()
        h_v, mean_h, mean_v = class_rbm_statistics(*oracle_arrays(view.astype(np.float64)))
        statistics = np.zeros(model.params.shape)
        statistics[:-1, :-1] = h_v
        statistics[:-1, -1] = mean_h
        statistics[-1, :-1] = mean_v
        statistics[-1, -1] = 1
        return statistics


def exact_objective(params, n_classes, X, codes, generative_weight, unlabelled_weight):
    """sum over labelled rows of log p(y | x) + alpha log p(x, y), plus beta log p(x)
    of the unlabelled rows, by enumeration."""
    view = AugmentedClassRBM(params.copy(), n_classes).view()
    log_w = class_rbm_joint_log_weights(*oracle_arrays(view))
    log_z = logsumexp(log_w)
    log_xy = logsumexp(log_w, axis=2)[state_index(X)]  # (rows, classes)
    total = 0.0
    for row, code in zip(log_xy, codes):
        if code >= 0:
            total += row[code] - logsumexp(row) + generative_weight * (row[code] - log_z)
        else:
            total += unlabelled_weight * (logsumexp(row) - log_z)
    return total


def numerical_gradient(function, params, eps=1e-6):
    gradient = np.zeros_like(params)
    for index in np.ndindex(params.shape):
        if index == (params.shape[0] - 1, params.shape[1] - 1):
            continue  # the constant units' coupling
        up, down = params.copy(), params.copy()
        up[index] += eps
        down[index] -= eps
        gradient[index] = (function(up) - function(down)) / (2 * eps)
    return gradient


def preconditioned(gradient, n_classes):
    """The gradient as the estimator steps along it: U's component shared by the hidden
    units divided by their number."""
    gradient = gradient.copy()
    class_weights = gradient[ClassRBMLayout(n_classes).class_weights]
    shared = class_weights.mean(axis=0)
    class_weights += (shared / class_weights.shape[0]) - shared
    return gradient


def gradient_of(classifier, X, labels, params, n_classes):
    """The estimator's gradient hook at ``params``, scaled to the sum over the rows."""
    state = classifier._training_state
    model = classifier._training_model(X, params.copy(), state, classifier.learning_)
    assert model.form.n_classes == n_classes
    rule = UpdateRule(0.0, float(X.shape[0]), 0.0, 0.0)
    gradient = classifier._minibatch_gradient(model, X, labels, state,
                                              classifier.learning_, rule).copy()
    gradient[-1, -1] = 0
    return gradient


@pytest.mark.parametrize(
    "generative_weight, unlabelled_weight, unlabelled",
    [(0.0, 0.0, False), (0.5, 0.0, False), (0.3, 0.7, True), (0.0, 1.0, True)],
    ids=["discriminative", "hybrid", "semi-supervised hybrid", "semi-supervised"],
)
def test_gradient_matches_finite_differences_of_the_exact_objective(
        generative_weight, unlabelled_weight, unlabelled):
    X, y = small_data(n_rows=8, n_features=4, n_classes=3, seed=1)
    codes = y.copy()
    labels = y.copy()
    if unlabelled:
        codes[[1, 5, 6]] = -1
        labels[[1, 5, 6]] = -1
    learning = CD() if generative_weight == 0 and not unlabelled else ExactNegativePhase()
    classifier = RBMClassifier(
        n_components=3, generative_weight=generative_weight,
        unlabelled_weight=unlabelled_weight, unlabelled_marker=-1 if unlabelled else None,
        learning=learning, batch_size=8, n_iter=1, random_state=0,
    ).fit(X, labels if unlabelled else y)
    rng = np.random.default_rng(2)
    params = classifier._training_state.params.astype(np.float64)
    params[:-1, :-1] = rng.normal(0, 0.8, params[:-1, :-1].shape)
    params[:-1, -1] = rng.normal(0, 0.8, params.shape[0] - 1)
    params[-1, :-1] = rng.normal(0, 0.8, params.shape[1] - 1)
    gradient = gradient_of(classifier, X, codes, params, 3)
    expected = numerical_gradient(
        lambda p: exact_objective(p, 3, X, codes, generative_weight, unlabelled_weight),
        params,
    )
    assert_allclose(gradient, preconditioned(expected, 3), atol=1e-7, rtol=1e-6)


def test_sampling_strategies_estimate_the_generative_gradient():
    # CD, PCD and PT's negative rows: the average of many minibatch gradients comes
    # close to the exact one (their statistics enter like an RBM's).
    X, y = small_data(n_rows=8, n_features=4, n_classes=3, seed=1)
    params = None
    exact = None
    for learning in (PCD(n_steps=5, n_chains=200, negative_visible="sample"),
                     ParallelTempering(n_chains=200, negative_visible="sample")):
        classifier = RBMClassifier(n_components=3, generative_weight=1.0,
                                   learning=learning, batch_size=8, n_iter=1,
                                   random_state=0).fit(X, y)
        if params is None:
            rng = np.random.default_rng(3)
            params = classifier._training_state.params.copy()
            params[:-1, :-1] = rng.normal(0, 0.5, params[:-1, :-1].shape)
            exact = preconditioned(numerical_gradient(
                lambda p: exact_objective(p, 3, X, y, 1.0, 0.0), params), 3)
        runs = [gradient_of(classifier, X, y, params, 3) for _ in range(300)]
        estimate = np.mean(runs[50:], axis=0)
        assert_allclose(estimate, exact, atol=0.15 * np.abs(exact).max())


@pytest.mark.parametrize("learning", [
    CD(), CD(negative_visible="sample"), PCD(n_chains=6), PCD(n_chains=6, n_steps=2,
    negative_visible="sample"), ParallelTempering(n_temperatures=3, n_chains=5),
], ids=["cd-means", "cd-samples", "pcd-means", "pcd-samples", "pt-means"])
def test_fused_negative_phase_matches_the_strategys_own_statistics(learning):
    # The classifier draws the strategy's rows below the minibatch (persistent chains'
    # rows below those, with means) and folds their statistics into one product; the
    # strategy's reference computation from the same state and noise must agree.
    X, y = small_data(n_rows=8, n_features=4, n_classes=3, seed=1)
    clf = RBMClassifier(n_components=3, generative_weight=1.0, learning=learning,
                        batch_size=8, n_iter=1, random_state=0).fit(X, y)
    fused_state = copy.deepcopy(clf._training_state)
    reference_state = copy.deepcopy(clf._training_state)
    params = fused_state.params.copy()
    rule = UpdateRule(0.0, 8.0, 0.0, 0.0)  # scale 1
    fused = clf._minibatch_gradient(
        clf._training_model(X, params.copy(), fused_state, clf.learning_), X, y,
        fused_state, clf.learning_, rule).copy()
    model = AugmentedClassRBM(params.copy(), 3)
    work = ClassRBMWork(8, 0, 4, 3, 3, params.dtype)
    class_weights, class_bias, _ = model.positive_pass(
        X, y, work, generative_weight=1.0, unlabelled_weight=0.0, scale=1.0)
    with np.errstate(over="ignore"):
        negative = clf.learning_._negative_statistics(
            model, work.stacked[:8], reference_state.sampler, reference_state.rng, 0.0,
            noise=reference_state.noise)
    expected = model.gradient_step(work, 8, class_weights, class_bias,
                                   extra=-8.0 * negative)
    fused[-1, -1] = expected[-1, -1] = 0
    assert_allclose(fused, expected, rtol=1e-9, atol=1e-12)


def test_float32_fast_pass_matches_float64():
    X, y = small_data(n_rows=20, n_features=6, n_classes=4, seed=2)
    reference = RBMClassifier(n_components=5, n_iter=3, generative_weight=0.0,
                              random_state=0).fit(X, y)
    single = clone(reference).fit(X.astype(np.float32), y)
    assert single.components_.dtype == np.float32
    assert_allclose(single.components_, reference.components_, atol=2e-4)
    proba = single.predict_proba(X.astype(np.float32))  # float64 probabilities
    assert_allclose(proba, reference.predict_proba(X), atol=1e-3)
    assert single.transform(X.astype(np.float32)).dtype == np.float32


def test_class_scores_survive_hidden_inputs_beyond_the_exponential_range():
    # float32 exp(-O) overflows beyond |O| ~ 88: those rows are computed again stably.
    view = random_view(n_features=3, n_classes=2, n_hidden=4, seed=6)
    weights = view.weights.copy()
    weights[0] = -60.0  # row x = 1 1 1 gives an input of -180 to hidden unit 0
    view = ClassRBMView(weights, view.visible_bias, view.hidden_bias, view.class_weights,
                        view.class_bias)
    X = np.array([[1.0, 1, 1], [0, 1, 0]])
    codes = np.array([0, 1])
    expected = {}
    for dtype in (np.float64, np.float32):
        model = view.astype(dtype)._training_form()
        work = ClassRBMWork(2, 0, 3, 2, 4, dtype)
        with np.errstate(over="raise", invalid="raise"):  # no warning escapes
            steps = model.positive_pass(X.astype(dtype), codes, work, generative_weight=0.5,
                                        unlabelled_weight=0.0, scale=1.0)
        assert np.isfinite(work.sigmoid[:2]).all() and np.isfinite(steps[0]).all()
        for name, value in zip(("U", "d", "p"), steps):
            expected.setdefault(name, value)
            assert_allclose(value, expected[name], rtol=1e-4, atol=1e-5)
        assert_allclose(steps[2], view.class_probability(X), atol=1e-5)
        expected.setdefault("C", work.coefficients[:2].copy())
        assert_allclose(work.coefficients[:2], expected["C"], rtol=1e-4, atol=1e-6)


# -- the estimator ------------------------------------------------------------------
def test_predict_proba_is_the_exact_posterior_of_the_fitted_parameters():
    X, y = small_data()
    clf = RBMClassifier(n_components=3, n_iter=5, random_state=0).fit(X, y)
    view = ClassRBMView(clf.components_, clf.intercept_visible_, clf.intercept_hidden_,
                        clf.class_weights_, clf.intercept_class_)
    log_w = class_rbm_joint_log_weights(*oracle_arrays(view))
    log_xy = logsumexp(log_w, axis=2)[state_index(X)]
    expected = np.exp(log_xy - logsumexp(log_xy, axis=1, keepdims=True))
    assert_allclose(clf.predict_proba(X), expected, rtol=1e-10)
    assert_allclose(clf.predict_log_proba(X), np.log(expected), rtol=1e-10, atol=1e-12)
    assert_array_equal(clf.predict(X), clf.classes_[expected.argmax(axis=1)])
    # score is the accuracy; score_samples the exact log p(x)
    assert clf.score(X, y) == np.mean(clf.predict(X) == y)
    log_px = logsumexp(log_w, axis=(1, 2))[state_index(X)] - logsumexp(log_w)
    assert_allclose(clf.score_samples(X), log_px, rtol=1e-10)
    assert clf.z_estimator_.name == "exact"


def test_learns_the_digits():
    X, y = load_digits(return_X_y=True)
    X = X / 16
    clf = RBMClassifier(n_components=64, n_iter=10, random_state=0).fit(X[:1200], y[:1200])
    assert clf.score(X[1200:], y[1200:]) > 0.85
    assert clf.transform(X[:3]).shape == (3, 64)


def test_labels_of_any_type_and_order():
    X, y = small_data()
    names = np.array(["cat", "ant", "bee"])[y]
    clf = RBMClassifier(n_components=3, n_iter=3, random_state=0).fit(X, names)
    assert_array_equal(clf.classes_, ["ant", "bee", "cat"])
    assert set(clf.predict(X)) <= set(names)
    coded = RBMClassifier(n_components=3, n_iter=3, random_state=0).fit(
        X, np.array([0, 1, 2])[np.searchsorted(["ant", "bee", "cat"], names)])
    assert_allclose(clf.predict_proba(X), coded.predict_proba(X))


def test_partial_fit_follows_fit():
    X, y = small_data(n_rows=50)
    fitted = RBMClassifier(n_components=3, n_iter=3, learning="pcd",
                           random_state=0).fit(X, y)
    streamed = RBMClassifier(n_components=3, n_iter=3, learning="pcd", random_state=0)
    for _ in range(3):
        streamed.partial_fit(X, y, classes=[0, 1, 2])
    for name in ("components_", "class_weights_", "intercept_hidden_",
                 "intercept_visible_", "intercept_class_"):
        assert_allclose(getattr(streamed, name), getattr(fitted, name), rtol=0, atol=0)
    assert streamed.n_iter_ == 3


def test_partial_fit_refuses_a_changed_number_of_hidden_units():
    X, y = small_data()
    clf = RBMClassifier(n_components=3, random_state=0).partial_fit(X, y, classes=[0, 1, 2])
    before = clf.components_.copy()
    with pytest.raises(ValueError, match="n_components=4, .*fitted with n_components=3.*"
                                         "Call fit to start again"):
        clf.set_params(n_components=4).partial_fit(X, y)
    assert_array_equal(clf.components_, before)
    assert clf.set_params(n_components=4).fit(X, y).components_.shape == (4, X.shape[1])


def test_partial_fit_needs_every_class_first():
    X, y = small_data()
    clf = RBMClassifier(n_components=3)
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        clf.partial_fit(X, y)
    clf.partial_fit(X[y < 2], y[y < 2], classes=[0, 1, 2])  # a class not seen yet
    assert_array_equal(clf.classes_, [0, 1, 2])
    assert clf.predict_proba(X).shape == (60, 3)
    clf.partial_fit(X, y)  # later calls need not repeat them
    with pytest.raises(ValueError, match="not the same as on the first call"):
        clf.partial_fit(X, y, classes=[0, 1, 2, 3])
    with pytest.raises(ValueError, match="not among the classes"):
        clf.partial_fit(X, y + 1)


@pytest.mark.parametrize(
    "y, message",
    [(None, "requires y to be passed"),
     (np.zeros(60), "one class only"),
     (np.linspace(0, 1, 60), "Unknown label type"),
     (np.arange(59) % 3, "inconsistent numbers of samples"),
     (np.full(60, -1), "Every row of y is marked unlabelled")],
    ids=["none", "one class", "continuous", "length", "all unlabelled"],
)
def test_bad_labels_get_clear_errors(y, message):
    X, _ = small_data()
    clf = RBMClassifier(n_components=3, n_iter=1, unlabelled_marker=-1)
    with pytest.raises(ValueError, match=message):
        clf.fit(X, y)
    assert not hasattr(clf, "classes_") and not hasattr(clf, "n_features_in_")


def test_partial_fit_refuses_classes_holding_the_marker():
    X, y = small_data()
    with pytest.raises(ValueError, match="holds the unlabelled marker"):
        RBMClassifier(n_components=3, unlabelled_marker=-1).partial_fit(
            X, y, classes=[-1, 0, 1, 2])
    with pytest.raises(ValueError, match="fewer than 2 classes"):
        RBMClassifier(n_components=3).partial_fit(X, np.zeros(60), classes=[0])


def test_unlabelled_rows_enter_only_with_the_marker():
    X, y = small_data(n_rows=90)
    y_few = y.copy()
    y_few[10:] = -1
    semi = RBMClassifier(n_components=4, n_iter=3, unlabelled_marker=-1,
                         random_state=0).fit(X, y_few)
    assert_array_equal(semi.classes_, [0, 1, 2])
    # without the marker, -1 is a class (scikit-learn's convention), with a warning
    with pytest.warns(LabelConventionWarning, match="pass unlabelled_marker=-1"):
        plain = RBMClassifier(n_components=4, n_iter=3, random_state=0).fit(X, y_few)
    assert_array_equal(plain.classes_, [-1, 0, 1, 2])
    # with beta = 0 (and alpha = 0) the unlabelled rows add nothing: one full-batch
    # step per epoch is the labelled rows' mean gradient times 10 / 90, the same as a
    # fit on the labelled rows alone with the step scaled so
    common = dict(n_components=4, n_iter=3, generative_weight=0.0, batch_size=100,
                  random_state=0)
    ignored = RBMClassifier(unlabelled_marker=-1, unlabelled_weight=0.0,
                            learning_rate=0.9, **common).fit(X, y_few)
    alone = RBMClassifier(learning_rate=0.9 * 10 / 90, **common).fit(X[:10], y_few[:10])
    for name in ("components_", "class_weights_", "intercept_class_"):
        assert_allclose(getattr(ignored, name), getattr(alone, name), rtol=1e-10,
                        atol=1e-12)


def test_learns_from_few_labels_and_the_unlabelled_rows():
    X, y = load_digits(return_X_y=True)
    X = X / 16
    y_few = np.full_like(y[:1200], -1)
    keep = np.arange(0, 1200, 12)  # 100 labels
    y_few[keep] = y[keep]
    common = dict(n_components=64, n_iter=10, unlabelled_marker=-1, random_state=0)
    semi = RBMClassifier(**common).fit(X[:1200], y_few)
    assert semi.score(X[1200:], y[1200:]) > 0.6
    with warnings.catch_warnings():
        # 100 rows are too few for its density: its chains collapse (28 % blank)
        warnings.simplefilter("ignore", DegenerateModelWarning)
        ignoring = RBMClassifier(unlabelled_weight=0.0, **common).fit(X[:1200], y_few)
    assert not np.allclose(semi.components_, ignoring.components_)


def test_early_stopping_on_held_out_scores_keeps_the_best_epoch():
    X, y = load_digits(return_X_y=True)
    X = X / 16
    clf = RBMClassifier(n_components=32, n_iter=50, validation_fraction=0.2,
                        n_iter_no_change=2, tol=0.0, learning_rate=3.0,
                        random_state=0).fit(X[:600], y[:600])
    history = clf.history_
    assert clf.n_iter_ < 50 and len(history["log_loss_valid"]) == clf.n_iter_
    assert {"log_loss", "accuracy", "log_loss_valid", "accuracy_valid"} <= set(history)
    # the held-out rows: the first draw of the fit's generator (see _split_validation)
    seed = np.random.RandomState(0).randint(0, np.iinfo(np.int32).max)
    held_out = np.sort(np.random.default_rng(seed).permutation(600)[:120])
    log_proba = clf.predict_log_proba(X[held_out])
    log_loss = -np.mean(log_proba[np.arange(120), y[held_out]])
    best = min(history["log_loss_valid"])
    assert log_loss == pytest.approx(best, rel=1e-9)  # the best epoch's parameters
    assert history["log_loss_valid"][-1] > best  # not the last epoch's
    assert np.argmin(history["log_loss_valid"]) == clf.n_iter_ - 3  # 2 epochs later


@pytest.mark.parametrize("every", [2, 4])
def test_monitored_rows_are_labelled_wherever_the_labels_are(every):
    # Every 2nd (4th) row labelled, at odd positions: evenly spaced rows at an even
    # stride (2 for 300 rows, 4 for 900) held no label, every record was NaN and
    # early stopping ended the fit after n_iter_no_change epochs.
    n_rows = {2: 300, 4: 900}[every]
    X, y = small_data(n_rows=n_rows, n_features=8)
    y_few = np.where(np.arange(n_rows) % every == 1, y, -1)
    clf = RBMClassifier(n_components=4, n_iter=4, n_iter_no_change=2, tol=0.0,
                        unlabelled_marker=-1, random_state=0).fit(X, y_few)
    history = clf.history_
    assert np.isfinite(history["log_loss"]).all() and np.isfinite(history["accuracy"]).all()
    # the records are those of up to 256 evenly spaced labelled rows
    labelled = np.flatnonzero(y_few >= 0)
    rows = labelled[np.linspace(0, labelled.size - 1, min(labelled.size, 256)).astype(int)]
    first = RBMClassifier(n_components=4, n_iter=1, unlabelled_marker=-1,
                          random_state=0).fit(X, y_few)
    log_proba = first.predict_log_proba(X[rows])
    expected = -np.mean(log_proba[np.arange(rows.size), y[rows]])
    assert history["log_loss"][0] == pytest.approx(expected, rel=1e-4)  # float32 pass


def test_a_nan_score_never_ends_a_fit_silently():
    stopping = EarlyStopping("log_loss", -1.0, patience=2, tol=0.0, keep_best=False,
                             owner="RBMClassifier")
    params = np.zeros(3)
    with pytest.warns(UserWarning, match="RBMClassifier: early stopping has no log_loss "
                      "to follow in epoch 1 .*do not count towards n_iter_no_change"):
        assert not stopping.update({"epoch": 1, "log_loss": np.nan}, params)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per fit
        for epoch in range(2, 6):
            assert not stopping.update({"epoch": epoch, "log_loss": np.nan}, params)
    assert not stopping.update({"epoch": 6, "log_loss": 1.0}, params)  # a real score
    assert not stopping.update({"epoch": 7, "log_loss": 1.0}, params)
    assert stopping.update({"epoch": 8, "log_loss": 1.0}, params)  # 2 without progress


def test_history_records_classification_scores():
    X, y = small_data()
    clf = RBMClassifier(n_components=3, n_iter=4, random_state=0).fit(X, y)
    assert clf.history_["epoch"] == [1, 2, 3, 4]
    assert all(0 <= a <= 1 for a in clf.history_["accuracy"])
    assert all(loss > 0 for loss in clf.history_["log_loss"])


def test_a_failed_call_leaves_the_classifier_as_it_was():
    X, y = small_data()

    class Failing(PCD):
        def _fused_sampler(self, model, state, noise, progress):
            sampler = super()._fused_sampler(model, state, noise, progress)
            sample = sampler.sample

            def failing(positive, out, positive_input=None):
                if positive.shape[0] == 7:
                    raise RuntimeError("planned failure")
                sample(positive, out, positive_input)

            sampler.sample = failing
            return sampler

    clf = RBMClassifier(n_components=3, n_iter=2, learning=Failing(), batch_size=10,
                        random_state=0).fit(X, y)
    kept = {name: getattr(clf, name).copy() for name in
            ("components_", "class_weights_", "intercept_class_", "classes_")}
    history = clf.history_
    with pytest.raises(RuntimeError, match="planned failure"):
        clf.partial_fit(X[:27], y[:27])  # two full minibatches, then one of 7 rows
    for name, value in kept.items():
        assert_array_equal(getattr(clf, name), value)
    assert clf.history_ == history
    # a failed first fit leaves no classes behind
    fresh = RBMClassifier(n_components=3, learning=Failing(), batch_size=10)
    with pytest.raises(RuntimeError, match="planned failure"):
        fresh.fit(X[:27], y[:27])
    assert not hasattr(fresh, "classes_")
    # and a failed fit keeps the previous one's classes
    with pytest.raises(RuntimeError, match="planned failure"):
        clf.fit(X[:27], np.array(["a", "b", "c"])[y[:27]])
    assert_array_equal(clf.classes_, [0, 1, 2])


def test_a_diverging_fit_is_refused():
    X, y = small_data(n_rows=120, n_features=20, n_classes=4)
    with pytest.raises(TrainingDivergedError, match="learning rate"):
        RBMClassifier(n_components=20, generative_weight=0.0, learning_rate=1e4,
                      n_iter=2, random_state=0).fit(X, y)


@pytest.mark.parametrize("seed", range(3))
def test_a_fit_far_worse_than_guessing_is_refused(seed):
    # learning_rate=50 ended at chance with a log-loss of 4.7 to 8.0 nats on its
    # training rows against 2.30 for guessing: below the old limit, 4 log K.
    X, y = load_digits(return_X_y=True)
    clf = RBMClassifier(n_components=64, n_iter=10, learning_rate=50, random_state=seed)
    with pytest.raises(TrainingDivergedError, match=r"log-loss is \d.*far above the "
                       r"2.303 of guessing among 10 classes.*learning_rate=50\)"):
        clf.fit(X[:600] / 16, y[:600])
    assert not hasattr(clf, "classes_")


def test_weak_or_uninformed_fits_are_not_flagged():
    # A barely trained model sits at guessing (log K); so does one whose labels are
    # noise. Neither has diverged.
    X, y = load_digits(return_X_y=True)
    X = X[:600] / 16
    RBMClassifier(n_components=16, n_iter=2, learning_rate=1e-3, random_state=0).fit(
        X, y[:600])
    noise = np.random.default_rng(0).permutation(y[:600])
    RBMClassifier(n_components=16, n_iter=10, weight_decay=0.1, random_state=0).fit(X, noise)


def test_pipeline_grid_search_and_pickle():
    X, y = small_data(n_rows=90)
    search = GridSearchCV(
        make_pipeline(MinMaxScaler(), RBMClassifier(n_iter=20, random_state=0)),
        {"rbmclassifier__n_components": [2, 4],
         "rbmclassifier__generative_weight": [0.0, 0.1]}, cv=3,
    ).fit(X, y)
    assert search.best_score_ > 0.5  # accuracy, the classifier's score
    clf = search.best_estimator_
    restored = pickle.loads(pickle.dumps(clf))
    assert_allclose(restored.predict_proba(X), clf.predict_proba(X))


def test_sparse_input_gives_the_dense_model():
    import scipy.sparse as sp

    X, y = small_data()
    dense = RBMClassifier(n_components=3, n_iter=3, random_state=0).fit(X, y)
    sparse = RBMClassifier(n_components=3, n_iter=3, random_state=0)
    sparse.fit(sp.csr_matrix(X), y)
    assert_allclose(sparse.components_, dense.components_)
    assert_allclose(sparse.predict_proba(sp.csr_matrix(X)), dense.predict_proba(X))


def test_strategies_it_accepts_follow_its_view():
    from skboltz.learning import ExactGradient

    assert set(RBMClassifier._parameter_constraints["learning"][0].options) == {
        "cd", "pcd", "pt"}
    with pytest.raises(ValueError, match="binary units, but the model has softmax class"):
        RBMClassifier(learning=ExactGradient()).fit(*small_data())


def test_layout_names_the_blocks():
    layout = ClassRBMLayout(3)
    params = layout.pack(np.ones((2, 4)), np.full(4, 2.0), np.full(2, 3.0),
                         np.full((2, 3), 4.0), np.full(3, 5.0), np.float64)
    assert params.shape == (3, 8)
    assert_array_equal(params[:-1, :4], 1)
    assert_array_equal(params[:-1, 4:7], 4)
    assert_array_equal(params[:-1, -1], 3)
    assert_array_equal(params[-1, :4], 2)
    assert_array_equal(params[-1, 4:7], 5)
    assert params[-1, -1] == 0
