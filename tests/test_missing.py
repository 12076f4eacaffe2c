"""Missing entries (NaN): scores, hidden units, imputations and training, against brute force.

A missing entry is summed out of the model: log p(x_observed) = log of the sum (or
integral) over the missing entries of p(x), which small models give by listing every
completion of a row (each scored by the model's own complete-row ``score_samples``), or
by numerical integration for real values.
"""

import itertools
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy.integrate import quad
from scipy.special import logsumexp

import skboltz.models._missing as missing_module
from skboltz import (
    DBM,
    RBM,
    BoltzmannMachine,
    CategoricalRBM,
    GaussianRBM,
    RBMClassifier,
    RBMImputer,
    TabularRBM,
)
from skboltz.models._missing import IncompleteRows, RowStreams
from skboltz.views import (
    BinaryUnits,
    GaussianUnits,
    LayerGroups,
    RestrictedView,
    SoftmaxUnits,
)

RNG = np.random.default_rng(0)


def binary_model(n_visible=6, n_hidden=4, seed=0, scale=1.0):
    """A small fitted RBM whose parameters are set by hand (strong couplings)."""
    rng = np.random.default_rng(seed)
    rbm = RBM(n_components=n_hidden, n_iter=1, random_state=seed)
    rbm.fit(rng.integers(0, 2, size=(20, n_visible)).astype(float))
    rbm.components_ = rng.normal(0, scale, size=(n_hidden, n_visible))
    rbm.intercept_visible_ = rng.normal(0, 0.5, n_visible)
    rbm.intercept_hidden_ = rng.normal(0, 0.5, n_hidden)
    return rbm


def categorical_model(sizes=(2, 3, 2), n_hidden=3, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, k, size=40) for k in sizes]).astype(float)
    rbm = CategoricalRBM(n_components=n_hidden, n_iter=1, random_state=seed).fit(X)
    rbm.components_ = rng.normal(0, 1.0, size=rbm.components_.shape)
    rbm.intercept_visible_ = rng.normal(0, 0.5, rbm.intercept_visible_.shape)
    rbm.intercept_hidden_ = rng.normal(0, 0.5, n_hidden)
    return rbm


def gaussian_model(n_visible=3, n_hidden=3, seed=0):
    rng = np.random.default_rng(seed)
    rbm = GaussianRBM(n_components=n_hidden, n_iter=1, random_state=seed)
    rbm.fit(rng.normal(size=(30, n_visible)))
    rbm.components_ = rng.normal(0, 0.8, size=(n_hidden, n_visible))
    rbm.intercept_visible_ = rng.normal(0, 0.5, n_visible)
    rbm.intercept_hidden_ = rng.normal(0, 0.5, n_hidden)
    rbm.variance_ = rng.uniform(0.5, 1.5, n_visible)
    return rbm


def completions(row, values):
    """Every completion of ``row``'s NaN entries with the given values per entry."""
    gaps = np.flatnonzero(np.isnan(row))
    choices = [values[i] for i in gaps]
    for filling in itertools.product(*choices):
        full = row.copy()
        full[gaps] = filling
        yield full


def brute_log_probability(model, row, values):
    """log p(x_observed): the model's own complete-row scores, summed over completions."""
    full = np.array(list(completions(row, values)))
    return logsumexp(model.score_samples(full))


def incomplete_rows(n_features, n_rows, rng, fraction=0.4):
    X = rng.integers(0, 2, size=(n_rows, n_features)).astype(float)
    X[rng.random(X.shape) < fraction] = np.nan
    X[0] = np.nan  # nothing observed: log p = 0
    X[1, 1:] = np.nan
    return X


# -- scores: log p(x_observed) against brute force -------------------------------------
@pytest.mark.parametrize("max_cost", [None, 1e3], ids=["cheapest", "completions"])
def test_binary_scores_of_incomplete_rows_are_exact(max_cost, monkeypatch):
    if max_cost is not None:  # the hidden route priced out: the completions' route
        monkeypatch.setattr(missing_module, "EXACT_ROW_COST", max_cost)
    rbm = binary_model()
    X = incomplete_rows(6, 12, np.random.default_rng(1))
    scores = rbm.score_samples(X)
    expected = [brute_log_probability(rbm, row, [(0.0, 1.0)] * 6) for row in X]
    assert_allclose(scores, expected, rtol=0, atol=1e-10)
    assert scores[0] == 0.0
    assert_array_equal(rbm.score_samples_std_error(X), 0.0)


def test_categorical_scores_of_incomplete_rows_are_exact():
    rbm = categorical_model()
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.integers(0, k, size=15) for k in (2, 3, 2)]).astype(float)
    X[rng.random(X.shape) < 0.4] = np.nan
    values = [tuple(float(c) for c in range(k)) for k in (2, 3, 2)]
    expected = [brute_log_probability(rbm, row, values) for row in X]
    assert_allclose(rbm.score_samples(X), expected, rtol=0, atol=1e-10)
    # the probabilities of the observed entries add up to one over their values
    row = np.array([np.nan, np.nan, np.nan])
    partial = [[a, np.nan, np.nan] for a in (0.0, 1.0)]
    assert_allclose(logsumexp(rbm.score_samples(partial)), 0.0, atol=1e-10)
    assert_allclose(rbm.score_samples([row]), 0.0, atol=1e-12)


def test_gaussian_scores_of_incomplete_rows_integrate_the_density():
    rbm = gaussian_model()
    rows = np.array([[0.3, np.nan, -0.7], [np.nan, 1.1, np.nan], [np.nan, np.nan, 0.2]])
    scores = rbm.score_samples(rows)

    def log_density(row):
        gaps = np.flatnonzero(np.isnan(row))
        if len(gaps) == 1:
            def density(t):
                full = row.copy()
                full[gaps[0]] = t
                return np.exp(rbm.score_samples(full[None])[0])
            return np.log(quad(density, -12, 12, epsabs=1e-13, epsrel=1e-11)[0])
        # two gaps: the mixture over hidden states, each a product of Gaussians
        view = rbm._model_view()
        observed = ~np.isnan(row)
        H = np.array(list(itertools.product([0.0, 1.0], repeat=view.n_hidden)))
        means = view.visible_bias + H @ view.weights
        # p(h) from the complete model: integrate v out in closed form
        log_h = (H @ view.hidden_bias
                 + ((means**2 - view.visible_bias**2) / (2 * view.variance)).sum(axis=1))
        log_h -= logsumexp(log_h)
        variance = view.variance[observed]
        log_normal = -0.5 * (((row[observed] - means[:, observed]) ** 2 / variance)
                             + np.log(2 * np.pi * variance)).sum(axis=1)
        return logsumexp(log_h + log_normal)

    assert_allclose(scores, [log_density(row) for row in rows], rtol=0, atol=1e-8)


def test_mixed_groups_sum_missing_entries_out_exactly():
    # a Gaussian unit, a softmax group of 3 and a binary unit, as a mixed table's layer
    rng = np.random.default_rng(3)
    layer = LayerGroups([GaussianUnits(rng.normal(size=1), variance=np.array([0.7])),
                         SoftmaxUnits(rng.normal(size=3), (3,)),
                         BinaryUnits(rng.normal(size=1))])
    view = RestrictedView(rng.normal(0, 0.8, size=(3, 5)), layer,
                          BinaryUnits(rng.normal(size=3)))

    def log_joint(v):
        h = np.array(list(itertools.product([0.0, 1.0], repeat=3)))
        return logsumexp(-view.energy(np.repeat(v[None], len(h), axis=0), h))

    def brute(row):
        discrete = [(np.array([1.0, 0, 0]), np.array([0, 1.0, 0]), np.array([0, 0, 1.0]))
                    if np.isnan(row[1]) else (row[1:4],),
                    (0.0, 1.0) if np.isnan(row[4]) else (row[4],)]
        total = []
        for group, unit in itertools.product(*discrete):
            def at(t, group=group, unit=unit):
                return np.exp(log_joint(np.concatenate([[t], group, [unit]])))
            if np.isnan(row[0]):
                total.append(np.log(quad(at, -15, 15, epsabs=1e-14)[0]))
            else:
                total.append(np.log(at(row[0])))
        return logsumexp(total)

    nan3 = [np.nan] * 3
    rows = np.array([[0.4, *nan3, 1.0], [np.nan, 0, 1, 0, np.nan], [np.nan, *nan3, 0.0],
                     [-1.2, 0, 0, 1, np.nan]])
    for max_cost in (None, 1e3):  # the cheapest exact route, then the hidden states'
        result = IncompleteRows(view, rows, max_cost=max_cost)
        assert result.exact.all()
        assert_allclose(result.log_weights()[0], [brute(row) for row in rows], atol=1e-7)
    with pytest.raises(ValueError, match="missing as a whole"):
        IncompleteRows(view, np.array([[0.4, np.nan, 0, 0, 1.0]]))


def test_complete_rows_score_as_without_missing_entries():
    rbm = binary_model(n_visible=8, n_hidden=5)
    X = np.random.default_rng(4).integers(0, 2, size=(30, 8)).astype(float)
    mixed = X.copy()
    mixed[::3, 2] = np.nan
    complete = ~np.isnan(mixed).any(axis=1)
    assert_allclose(rbm.score_samples(mixed)[complete], rbm.score_samples(X[complete]),
                    rtol=1e-13)
    assert_allclose(rbm.transform(mixed)[complete], rbm.transform(X[complete]), rtol=1e-13)


# -- the hidden units and the missing entries given the observed ones ------------------
def brute_conditionals(rbm, row):
    """P(h | x_o) and E[x | x_o] of a binary RBM by listing every (completion, h)."""
    view = rbm._model_view()
    states, log_weights, hidden = [], [], []
    for full in completions(row, [(0.0, 1.0)] * len(row)):
        for h in itertools.product([0.0, 1.0], repeat=view.n_hidden):
            states.append(full)
            hidden.append(h)
            log_weights.append(-view.energy(full[None], np.array([h]))[0])
    p = np.exp(np.array(log_weights) - logsumexp(log_weights))
    return p @ np.array(hidden), p @ np.array(states)


def test_transform_and_imputations_are_the_exact_conditionals():
    rbm = binary_model()
    X = incomplete_rows(6, 8, np.random.default_rng(5))
    expected = [brute_conditionals(rbm, row) for row in X]
    assert_allclose(rbm.transform(X), [h for h, _ in expected], atol=1e-12)
    assert_allclose(rbm._complete_rows(X), [v for _, v in expected], atol=1e-12)
    filled = RBMImputer(rbm).fit(np.r_[X, np.ones((1, 6)), np.zeros((1, 6))])
    filled.estimator_ = rbm  # the hand-set model
    assert_allclose(filled.transform(X), [v for _, v in expected], atol=1e-12)


def test_categorical_imputations_are_the_exact_conditional_modes():
    rbm = categorical_model(sizes=(3, 3, 2), n_hidden=3, seed=6)
    rng = np.random.default_rng(7)
    X = np.column_stack([rng.integers(0, k, size=20) for k in (3, 3, 2)]).astype(float)
    X[rng.random(X.shape) < 0.5] = np.nan
    values = [tuple(float(c) for c in range(k)) for k in (3, 3, 2)]
    imputed = rbm._complete_rows(X)
    for row, filled in zip(X, imputed):
        full = np.array(list(completions(row, values)))
        p = np.exp(rbm.score_samples(full) - logsumexp(rbm.score_samples(full)))
        for column in np.flatnonzero(np.isnan(row)):
            marginal = [p[full[:, column] == code].sum() for code in values[column]]
            assert filled[column] == np.argmax(marginal)
        assert_array_equal(filled[~np.isnan(row)], row[~np.isnan(row)])


def test_estimated_means_and_hidden_units_come_close_to_exact(monkeypatch):
    rbm = binary_model(n_visible=10, n_hidden=8, seed=8)
    X = incomplete_rows(10, 30, np.random.default_rng(9), fraction=0.5)
    exact_hidden, exact_means = rbm.transform(X), rbm._complete_rows(X)
    monkeypatch.setattr(missing_module, "EXACT_ROW_COST", 0)  # every row estimated
    hidden, means = rbm.transform(X), rbm._complete_rows(X)
    assert np.abs(means - exact_means).mean() < 0.01  # chain averages
    assert np.abs(hidden - exact_hidden).mean() < 0.05  # mean field
    assert 0 < np.abs(hidden - exact_hidden).mean()  # (estimated indeed)
    # deterministic, and row by row: a row's values do not depend on the others
    order = np.random.default_rng(0).permutation(30)[:17]
    assert_allclose(rbm._complete_rows(X[order]), means[order], atol=1e-12)
    assert_allclose(rbm.transform(X[order]), hidden[order], atol=1e-12)


def test_estimated_scores_cover_the_exact_values_within_three_standard_errors(monkeypatch):
    rbm = binary_model(n_visible=10, n_hidden=8, seed=10, scale=0.8)
    X = incomplete_rows(10, 40, np.random.default_rng(11), fraction=0.5)[2:]
    exact = rbm.score_samples(X)
    monkeypatch.setattr(missing_module, "EXACT_ROW_COST", 0)
    rbm._log_z_cache.clear()
    estimate, std_error = rbm.score_samples(X), rbm.score_samples_std_error(X)
    assert (std_error > 0).all() and std_error.max() < 0.05
    assert (np.abs(estimate - exact) <= 3 * std_error).all()
    order = np.random.default_rng(1).permutation(len(X))
    assert_allclose(rbm.score_samples(X[order]), estimate[order], atol=1e-12)


def test_draws_follow_the_exact_conditional_distribution():
    rbm = binary_model(seed=12)
    row = np.array([1.0, np.nan, 0.0, np.nan, 1.0, np.nan])
    full = np.array(list(completions(row, [(0.0, 1.0)] * 6)))
    exact = np.exp(rbm.score_samples(full) - logsumexp(rbm.score_samples(full)))
    draws = rbm._complete_rows(np.repeat(row[None], 4000, axis=0),
                               random_state=np.random.default_rng(0))
    codes = draws[:, [1, 3, 5]] @ [1, 2, 4]
    found = np.bincount(codes.astype(int), minlength=8) / len(draws)
    assert 0.5 * np.abs(found - exact[np.argsort(full[:, [1, 3, 5]] @ [1, 2, 4])]).sum() < 0.03


def test_row_streams_give_each_row_its_own_numbers():
    both = RowStreams([1, 2], n_chains=3).random((6, 4))
    alone = RowStreams([2], n_chains=3).random((3, 4))
    assert_array_equal(both[3:], alone)


# -- training ------------------------------------------------------------------------
def known_rbm_samples(n_rows, seed=0):
    """Rows drawn from an RBM of 20 visible and 6 hidden units with strong weights."""
    rng = np.random.default_rng(seed)
    weights = rng.normal(0, 1.5, size=(6, 20))
    truth = RestrictedView(weights,
                           BinaryUnits(rng.normal(0, 0.5, 20) - 0.25 * weights.sum(axis=0)),
                           BinaryUnits(rng.normal(0, 0.5, 6)))
    V = (rng.random((n_rows, 20)) < 0.5).astype(float)
    for _ in range(500):
        V = truth.visible_gibbs_step(V, rng)
    return V


def test_training_with_entries_missing_at_random_recovers_the_complete_data_model():
    # Unbiased gradients (learning="exact"), so that the positive phase alone differs.
    # Measured: 0.045-0.054 nats per row below the complete rows' model, 0.15-0.16
    # above the model of the rows with each column's mean filled in (two seeds).
    data = known_rbm_samples(3500)
    train, test = data[:3000], data[3000:]
    rng = np.random.default_rng(1)
    incomplete = train.copy()
    incomplete[rng.random(train.shape) < 0.3] = np.nan

    def held_out(X):
        # one weight decay and one step for all three (the automatic ones would give the
        # mean-filled rows, grey, others than the binary ones)
        model = RBM(n_components=6, learning="exact", n_iter=30, weight_decay=1e-3,
                    learning_rate=0.1, random_state=0).fit(X)
        return model.score(test)

    complete, missing = held_out(train), held_out(incomplete)
    mean_filled = held_out(np.where(np.isnan(incomplete), np.nanmean(incomplete, axis=0),
                                    incomplete))
    # close to the model of the complete rows, far better than filling the means in
    assert complete - missing < 0.1
    assert missing - mean_filled > 0.08


@pytest.mark.parametrize("make", [
    lambda: RBM(n_components=4, n_iter=3, random_state=0),
    lambda: RBM(n_components=4, learning="cd", n_iter=3, random_state=0),
    lambda: RBM(n_components=4, learning="pt", n_iter=3, random_state=0),
    lambda: RBM(n_components=4, learning="exact", n_iter=3, random_state=0),
    lambda: GaussianRBM(n_components=3, n_iter=3, random_state=0),
    lambda: CategoricalRBM(n_components=3, n_iter=3, random_state=0),
], ids=["pcd", "cd", "pt", "exact", "gaussian", "categorical"])
def test_fit_partial_fit_monitoring_and_pickles_take_missing_entries(make):
    X = np.random.default_rng(13).integers(0, 3, size=(60, 5)).astype(float)
    if not isinstance(make(), CategoricalRBM):
        X = X / 2
    X[np.random.default_rng(14).random(X.shape) < 0.3] = np.nan
    model = make().set_params(validation_fraction=0.2, monitor_likelihood=True).fit(X)
    history = model.history_
    for key in ("reconstruction_error", "free_energy_gap", "log_likelihood_valid"):
        assert np.isfinite(history[key]).all(), key
    model.partial_fit(X[:7])
    model.partial_fit(np.where(np.arange(5) == 2, np.nan, X[:4]))  # a column all missing
    restored = pickle.loads(pickle.dumps(model))
    assert_allclose(restored.score_samples(X), model.score_samples(X))
    assert model._training_state.imputation is None
    assert np.isfinite(model.transform(X)).all()


def test_a_fit_with_missing_entries_is_reproducible():
    X = known_rbm_samples(200)
    X[np.random.default_rng(2).random(X.shape) < 0.3] = np.nan
    a = RBM(n_components=4, n_iter=3, random_state=0).fit(X)
    b = RBM(n_components=4, n_iter=3, random_state=0).fit(X)
    assert_array_equal(a.components_, b.components_)


# -- bad input -----------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: RBM(n_iter=1), lambda: GaussianRBM(n_iter=1), lambda: CategoricalRBM(n_iter=1),
], ids=["RBM", "GaussianRBM", "CategoricalRBM"])
def test_a_column_never_observed_is_refused_clearly(make):
    X = np.random.default_rng(0).integers(0, 2, size=(20, 3)).astype(float)
    X[:, 1] = np.nan
    with pytest.raises(ValueError, match=r"column\(s\) \[1\] hold no observed value"):
        make().fit(X)
    with pytest.raises(ValueError, match="first partial_fit"):
        make().partial_fit(X)


def test_methods_that_need_complete_rows_say_so():
    rbm = binary_model()
    X = incomplete_rows(6, 5, np.random.default_rng(0))
    for method in ("reconstruct", "free_energy", "gibbs"):
        with pytest.raises(ValueError, match=f"RBM.{method} takes complete rows.*RBMImputer"):
            getattr(rbm, method)(X)
    with pytest.raises(ValueError, match="complete rows"):
        rbm.estimate_log_likelihood_bounds(X)
    with pytest.raises(ValueError, match="dense input only"):
        rbm.transform(sp.csr_matrix(np.where(np.isnan(X), np.nan, 1.0)))


def test_whitening_and_other_estimators_refuse_nan():
    X = np.random.default_rng(0).normal(size=(20, 3))
    X[0, 1] = np.nan
    with pytest.raises(ValueError, match=r"whiten=True\) takes complete rows"):
        GaussianRBM(whiten=True, n_iter=1).fit(X)
    binary = np.where(np.isnan(X), np.nan, (X > 0).astype(float))
    for estimator in (BoltzmannMachine(n_iter=1), DBM(n_iter=1)):
        with pytest.raises(ValueError, match="NaN"):
            estimator.fit(binary)
    with pytest.raises(ValueError, match="NaN"):
        RBMClassifier(n_iter=1).fit(binary, np.arange(20) % 2)


def test_the_allow_nan_tag():
    assert RBM().__sklearn_tags__().input_tags.allow_nan
    assert CategoricalRBM().__sklearn_tags__().input_tags.allow_nan
    assert GaussianRBM().__sklearn_tags__().input_tags.allow_nan
    assert not GaussianRBM(whiten=True).__sklearn_tags__().input_tags.allow_nan
    assert not RBMClassifier().__sklearn_tags__().input_tags.allow_nan
    assert TabularRBM().__sklearn_tags__().input_tags.allow_nan
    assert RBMImputer().__sklearn_tags__().input_tags.allow_nan


# -- mixed tables (TabularRBM): numbers integrated out, categories summed out -----------
def tabular_model(seed=0):
    """A small fitted TabularRBM set by hand: the columns (number, 3 categories, number,
    2 categories), standardised by a scale and location of its own."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=40), rng.integers(0, 3, 40),
                         rng.normal(size=40), rng.integers(0, 2, 40)])
    model = TabularRBM(n_components=3, categorical_features=[1, 3], n_iter=1,
                       random_state=seed).fit(X)
    model.components_ = rng.normal(0, 0.8, size=model.components_.shape)
    model.intercept_visible_ = rng.normal(0, 0.5, model.intercept_visible_.shape)
    model.intercept_hidden_ = rng.normal(0, 0.5, 3)
    model.variance_ = rng.uniform(0.5, 1.5, 2)
    model.numeric_mean_ = np.array([1.0, -3.0])
    model.numeric_scale_ = np.array([2.0, 0.5])
    return model


def tabular_integrals(model, row, of=None, n_grid=401):
    """Numerical integration over a row's missing numbers (a fine grid over +-12
    standard deviations of the standardised column: the integrands are Gaussian
    mixtures, which the trapezoid rule integrates to rounding), summed over its missing
    categories: the integral of p(x) and, with ``of``, of ``of(x) p(x)``, over the
    completions x of the row, from the model's complete-row scores."""
    numeric = [0, 2]
    grids = {}
    for j, position in zip(numeric, range(2)):
        if np.isnan(row[j]):
            z = np.linspace(-12, 12, n_grid)
            grids[j] = (model.numeric_mean_[position] + model.numeric_scale_[position] * z,
                        model.numeric_scale_[position] * (z[1] - z[0]))
    values = [tuple(grids[j][0]) if j in grids else (row[j],) for j in numeric]
    categories = {1: (0.0, 1.0, 2.0), 3: (0.0, 1.0)}
    weight = np.prod([step for _, step in grids.values()])
    template = row.copy()
    template[[0, 2]] = 0  # (numbers placed below)
    full = np.array(list(completions(np.where(np.isin(np.arange(4), numeric), 0, row),
                                     categories)))
    mesh = np.array(list(itertools.product(*values)))
    rows = np.repeat(full, len(mesh), axis=0)
    rows[:, numeric] = np.tile(mesh, (len(full), 1))
    density = np.exp(model.score_samples(rows)) * weight
    total = density.sum()
    return total if of is None else (total, density @ of(rows) / total)


def tabular_incomplete_rows():
    nan = np.nan
    return np.array([[0.3, 1, -2.5, 0], [nan, 2, -3.2, 1], [1.5, nan, -2.9, nan],
                     [nan, nan, -3.0, 0], [-1.0, 0, nan, 1], [nan, 1, nan, nan],
                     [nan, nan, nan, nan], [2.0, nan, nan, 1]])


def test_tabular_scores_of_incomplete_rows_integrate_and_sum_the_density():
    model = tabular_model()
    X = tabular_incomplete_rows()
    expected = [np.log(tabular_integrals(model, row)) if np.isnan(row).any()
                else model.score_samples(row[None])[0] for row in X]
    assert_allclose(model.score_samples(X), expected, rtol=0, atol=1e-9)
    assert model.score_samples(X)[6] == 0.0  # nothing observed
    assert_array_equal(model.score_samples_std_error(X), 0.0)  # 8 hidden states: exact


def test_tabular_transform_and_imputations_are_the_exact_conditionals():
    model = tabular_model(seed=1)
    X = tabular_incomplete_rows()
    hidden, imputed = model.transform(X), model._complete_rows(X)
    for row, h, filled in zip(X, hidden, imputed):
        _, expected_h = tabular_integrals(model, row, of=model.transform)
        assert_allclose(h, expected_h, atol=1e-9)
        for j in (0, 2):  # numbers: the conditional mean, in the input's units
            if np.isnan(row[j]):
                assert_allclose(filled[j], tabular_integrals(model, row,
                                                             of=lambda V: V[:, j])[1],
                                atol=1e-9)
        for j, k in ((1, 3), (3, 2)):  # categories: the conditional mode
            if np.isnan(row[j]):
                shares = [tabular_integrals(model, np.where(np.arange(4) == j, code, row))
                          for code in range(k)]
                assert filled[j] == np.argmax(shares)
        assert_allclose(filled[~np.isnan(row)], row[~np.isnan(row)], rtol=1e-14)
    imputer = RBMImputer(TabularRBM(categorical_features=[1, 3], n_iter=1),
                         random_state=0).fit(np.r_[X, model._complete_rows(X)])
    imputer.estimator_ = model
    assert_allclose(imputer.transform(X), imputed, rtol=1e-12)


def test_tabular_estimated_scores_cover_the_exact_values(monkeypatch):
    model = tabular_model(seed=2)
    X = tabular_incomplete_rows()[[1, 2, 3, 4, 5, 7]]
    exact = model.score_samples(X)
    monkeypatch.setattr(missing_module, "EXACT_ROW_COST", 0)
    model._log_z_cache.clear()
    estimate, std_error = model.score_samples(X), model.score_samples_std_error(X)
    assert (std_error > 0).all() and std_error.max() < 0.05
    assert (np.abs(estimate - exact) <= 3 * std_error).all()


def test_tabular_rbm_trains_on_incomplete_tables_and_frames():
    rng = np.random.default_rng(5)
    kind = rng.integers(0, 3, size=300)
    value = 50.0 + 10.0 * kind + 3.0 * rng.normal(size=300)
    X = np.column_stack([value, kind, rng.normal(size=300)])
    holed = X.copy()
    holed[rng.random(X.shape) < 0.2] = np.nan
    model = TabularRBM(n_components=3, categorical_features=[1], n_iter=100,
                       random_state=0).fit(holed)
    assert_allclose(model.numeric_mean_, np.nanmean(holed[:, [0, 2]], axis=0))
    assert_allclose(model.numeric_scale_, np.nanstd(holed[:, [0, 2]], axis=0))
    assert model.__sklearn_tags__().input_tags.allow_nan
    # the kind of a row from its value (the kinds' values 10 apart, 3 wide); measured:
    # 0.82 (0.91 by the model fitted on the complete rows, 0.84 with the means filled in)
    guessed = model._complete_rows(np.column_stack([value, np.full(300, np.nan), X[:, 2]]))
    assert np.mean(guessed[:, 1] == kind) > 0.75
    model.partial_fit(holed[:30])
    assert np.isfinite(model.score_samples(holed)).all()
    short = dict(n_components=3, n_iter=5, random_state=0)
    first = TabularRBM(categorical_features=[1], **short).fit(holed)
    same = TabularRBM(categorical_features=[1], **short).fit(holed)
    assert_array_equal(same.components_, first.components_)  # reproducible
    # a DataFrame: NaN, None or pd.NA in a categorical column
    import pandas as pd

    frame = pd.DataFrame({"value": holed[:, 0],
                          "kind": pd.Categorical(np.array(["a", "b", "c"])[kind]),
                          "noise": holed[:, 2]})
    frame.loc[np.isnan(holed[:, 1]), "kind"] = None
    fitted = TabularRBM(**short).fit(frame)  # the same model as of the codes
    assert_allclose(fitted.score_samples(frame), first.score_samples(holed), rtol=1e-10)


def test_a_tabular_column_never_observed_is_refused_clearly():
    X = np.random.default_rng(0).normal(size=(20, 4))
    X[:, 1] = np.random.default_rng(1).integers(0, 3, 20)
    for column in (1, 2):
        holed = X.copy()
        holed[:, column] = np.nan
        with pytest.raises(ValueError, match=rf"column\(s\) \[{column}\] hold no observed"):
            TabularRBM(categorical_features=[1], n_iter=1).fit(holed)
    import pandas as pd

    frame = pd.DataFrame({"a": X[:, 0], "b": [None] * 20, "c": X[:, 2]})
    frame["b"] = frame["b"].astype(object)
    with pytest.raises(ValueError, match="'b' holds no observed value"):
        TabularRBM(categorical_features=["b"], n_iter=1).fit(frame)


@pytest.mark.parametrize("make", [
    lambda: RBM(n_components=3, n_iter=1, random_state=0),
    lambda: GaussianRBM(n_components=3, n_iter=1, random_state=0),
    lambda: CategoricalRBM(n_components=3, n_iter=1, random_state=0),
    lambda: TabularRBM(n_components=3, n_iter=1, random_state=0),
], ids=["RBM", "GaussianRBM", "CategoricalRBM", "TabularRBM"])
def test_the_four_models_that_take_missing_entries_and_where(make):
    """The reliability guide's promise: these four take NaN as a missing entry in fit,
    partial_fit, transform, score_samples and score; their methods that need complete
    rows refuse it naming RBMImputer, and infinity is refused everywhere."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(40, 4)).astype(float)
    if not isinstance(make(), CategoricalRBM):
        X = X / 2
    incomplete = X.copy()
    incomplete[::4, 1] = np.nan
    model = make().fit(incomplete)
    model.partial_fit(incomplete)
    assert np.isfinite(model.transform(incomplete)).all()
    assert np.isfinite(model.score_samples(incomplete)).all()
    assert np.isfinite(model.score(incomplete))
    for method in ("free_energy", "reconstruct", "gibbs"):
        with pytest.raises(ValueError, match=f"{method} takes complete rows.*RBMImputer"):
            getattr(model, method)(incomplete)
    infinite = X.copy()
    infinite[0, 0] = np.inf
    for method in ("fit", "partial_fit", "transform", "score_samples"):
        with pytest.raises(ValueError, match="[Ii]nf"):
            getattr(make() if method == "fit" else model, method)(infinite)
