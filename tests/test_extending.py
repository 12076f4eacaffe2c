"""The extension surface: users' own strategies, strategy kinds, registries, set_params."""

import re

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.special import logsumexp
from sklearn import config_context
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.utils._param_validation import InvalidParameterError

from skboltz import RBM, BoltzmannMachine
from skboltz.learning import (
    CD,
    LEARNING_STRATEGIES,
    PCD,
    BMLearningStrategy,
    ExactGradient,
    Gibbs,
    MeanFieldGradient,
    RBMLearningStrategy,
    TAPGradient,
)
from skboltz.partition import Z_ESTIMATORS, LogZ, ZEstimator
from skboltz.views import BMView, ModelView, RBMView


def _binary_data(n_rows=120, n_features=6, seed=0):
    rng = np.random.default_rng(seed)
    prototypes = np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]], dtype=float)
    X = prototypes[rng.integers(0, 2, n_rows), :n_features]
    return np.abs(X - (rng.random(X.shape) < 0.05))


class UniformImportance(ZEstimator):
    """A user's estimator: no _parameter_constraints, only __init__ and estimate."""

    def __init__(self, n_draws=20000):
        self.n_draws = n_draws

    def estimate(self, model, *, rng=None, data_rates=None):
        rng = np.random.default_rng(rng)
        n = model.n_state_units
        S = (rng.random((self.n_draws, n)) < 0.5).astype(np.float64)
        log_w = model.log_unnormalized(S) + n * np.log(2)
        return LogZ(float(logsumexp(log_w) - np.log(self.n_draws)), method="uniform")


class ExactRows(RBMLearningStrategy):
    """A user's RBM negative phase: exact samples of p(v), drawn by enumeration.

    The update is then the exact likelihood gradient up to sampling noise.
    """

    def __init__(self, n_rows=500):
        self.n_rows = n_rows

    def init_state(self, model, X, batch_size, rng):
        return {"n_calls": 0}

    def negative_phase(self, model, batch, state, rng, progress):
        state["n_calls"] += 1
        n = model.n_visible
        states = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(model.dtype)
        log_p = model.log_unnormalized(states)
        p = np.exp(log_p - logsumexp(log_p))
        return states[rng.choice(2**n, size=self.n_rows, p=p / p.sum())]


class MeanOnlyBM(BMLearningStrategy):
    """A user's BM strategy for fully visible machines: exact moments by enumeration."""

    def positive_phase(self, model, batch, state, rng):
        moments = batch.T @ batch / batch.shape[0]
        np.fill_diagonal(moments, batch.mean(axis=0))
        return moments

    def negative_phase(self, model, batch, state, rng, progress):
        n = model.n_units
        S = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(np.float64)
        log_p = model.log_unnormalized(S)
        w = np.exp(log_p - logsumexp(log_p))
        moments = S.T @ (S * w[:, None])
        np.fill_diagonal(moments, w @ S)
        return moments


def test_user_z_estimator_trains_and_scores():
    X = _binary_data()
    estimator = UniformImportance()
    rbm = RBM(n_components=3, n_iter=3, z_estimator=estimator, random_state=0).fit(X)
    assert rbm.z_estimator_ is not estimator and rbm.z_estimator_.n_draws == 20000
    exact = rbm.estimate_log_partition("exact").value
    assert abs(rbm.estimate_log_partition().value - exact) < 0.05
    assert_allclose(rbm.score(X), -np.mean(rbm.free_energy(X)) - rbm.estimate_log_partition().value)
    bm = BoltzmannMachine(n_hidden=0, learning="exact", n_iter=2, z_estimator=estimator,
                          random_state=0).fit(X)
    assert abs(bm.estimate_log_partition().value
               - bm.estimate_log_partition("exact").value) < 0.05


def test_user_rbm_strategy_trains_towards_the_likelihood():
    X = _binary_data()
    strategy = ExactRows()
    start = RBM(n_components=3, n_iter=0, random_state=0).fit(X).score(X)
    settings = dict(n_components=3, n_iter=15, momentum=0.0, learning_rate=0.5,
                    random_state=0)
    rbm = RBM(learning=strategy, **settings).fit(X)
    assert rbm.learning_ is not strategy and rbm.learning_.n_rows == 500
    assert rbm.score(X) > start + 2.0
    # its rows are exact samples, so it follows exact learning closely
    assert abs(rbm.score(X) - RBM(learning="exact", **settings).fit(X).score(X)) < 0.1
    assert rbm._training_state.sampler["n_calls"] == 15 * 12  # one call per update


def test_user_rbm_strategy_with_a_wrong_shape_gets_a_clear_error():
    class WrongShape(RBMLearningStrategy):
        def negative_phase(self, model, batch, state, rng, progress):
            return np.zeros((4, model.n_visible + 1))

    with pytest.raises(ValueError, match=r"negative_phase must return .* shape \(n_rows, 6\)"):
        RBM(n_components=2, learning=WrongShape(), n_iter=1).fit(_binary_data())


def test_user_bm_strategy_trains():
    X = _binary_data()
    ours = BoltzmannMachine(n_hidden=0, learning=MeanOnlyBM(), n_iter=20, random_state=0)
    exact = BoltzmannMachine(n_hidden=0, learning="exact", n_iter=20, random_state=0)
    assert_allclose(ours.fit(X).coupling_, exact.fit(X).coupling_, atol=1e-10)


@pytest.mark.parametrize(
    "model, strategy",
    [(RBM(n_components=2), Gibbs()), (RBM(n_components=2), MeanFieldGradient()),
     (BoltzmannMachine(n_hidden=1), PCD()), (BoltzmannMachine(n_hidden=1), TAPGradient())],
    ids=["RBM-Gibbs", "RBM-MeanFieldGradient", "BM-PCD", "BM-TAPGradient"],
)
def test_a_strategy_of_the_other_kind_is_a_clear_error_at_fit(model, strategy):
    expected = "RBMLearningStrategy" if isinstance(model, RBM) else "BMLearningStrategy"
    model = clone(model).set_params(learning=strategy, n_iter=1)
    with pytest.raises(InvalidParameterError, match=f"'learning' parameter.*{expected}"):
        model.fit(_binary_data())
    assert not hasattr(model, "n_features_in_")


def test_exact_gradient_trains_both_kinds():
    X = _binary_data()
    RBM(n_components=2, learning=ExactGradient(), n_iter=1).fit(X)
    BoltzmannMachine(n_hidden=1, learning=ExactGradient(), n_iter=1).fit(X)


def test_string_options_are_the_registries():
    X = _binary_data(n_rows=40)
    for name in Z_ESTIMATORS:  # every registered estimator is accepted by name
        RBM(n_components=2, n_iter=1, z_estimator=name, random_state=0).fit(X)
    assert "visited_states" in Z_ESTIMATORS
    for model, kind in ((RBM, "rbm"), (BoltzmannMachine, "bm")):
        constraint = model._parameter_constraints["learning"][0]
        assert constraint.options == set(LEARNING_STRATEGIES[kind])
        constraint = model._parameter_constraints["z_estimator"][0]
        assert constraint.options == {"auto", *Z_ESTIMATORS}


@pytest.mark.parametrize("model, kind", [(RBM, "rbm"), (BoltzmannMachine, "bm")])
def test_docstrings_list_the_registered_names(model, kind):
    def listed(parameter):
        match = re.search(rf"    {parameter} : \{{([^}}]*)\}}", model.__doc__)
        return set(re.findall(r'"(\w+)"', match.group(1)))

    assert listed("learning") == set(LEARNING_STRATEGIES[kind])
    assert listed("z_estimator") == {"auto", *Z_ESTIMATORS}


def test_views_follow_the_protocol():
    rbm_view = RBMView(np.zeros((2, 3)), np.zeros(3), np.zeros(2))
    bm_view = BMView(np.zeros((3, 3)), np.zeros(3), n_visible=2)
    assert isinstance(rbm_view, ModelView) and isinstance(bm_view, ModelView)
    assert not isinstance(object(), ModelView)
    assert RBMView.__module__ == "skboltz.views"


@pytest.mark.parametrize("model, key", [
    (RBM(), "learning__n_steps"),
    (RBM(), "z_estimator__n_chains"),
    (BoltzmannMachine(), "learning__n_steps"),
])
def test_nested_setting_of_a_string_strategy_says_to_pass_the_object(model, key):
    with pytest.raises(ValueError, match="Pass the strategy object instead"):
        model.set_params(**{key: 3})
    # with the object, the nested setting works (also when set in the same call)
    strategy = PCD() if isinstance(model, RBM) else Gibbs()
    if key.startswith("learning"):
        model.set_params(learning=strategy, learning__n_steps=3)
        assert model.learning.n_steps == 3


def test_grid_search_over_a_string_strategy_setting_fails_clearly():
    search = GridSearchCV(RBM(n_components=2, n_iter=1), {"learning__n_steps": [1, 2]}, cv=2)
    with pytest.raises(ValueError, match=r"learning='cd' is a string .* learning=CD\("):
        search.fit(_binary_data())
    search = GridSearchCV(RBM(n_components=2, n_iter=1, learning=CD()),
                          {"learning__n_steps": [1, 2]}, cv=2).fit(_binary_data())
    assert search.best_params_["learning__n_steps"] in (1, 2)


def test_skip_parameter_validation_is_honoured(monkeypatch):
    def refuse(self):
        raise AssertionError("validated")

    monkeypatch.setattr(RBM, "_validate_params", refuse)
    with pytest.raises(AssertionError, match="validated"):
        RBM(n_components=2, n_iter=1).fit(_binary_data())
    with config_context(skip_parameter_validation=True):
        RBM(n_components=2, n_iter=1).fit(_binary_data())
