"""The extension surface: users' own strategies, strategy kinds, registries, set_params."""

import re
from dataclasses import dataclass

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.special import logsumexp
from sklearn import config_context
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from skboltz import RBM, BoltzmannMachine, GaussianRBM, TabularRBM
from skboltz.estimators._layered_rbm import LayeredRBM
from skboltz.core._monitoring import Monitor
from skboltz.learning import (
    CD,
    LEARNING_STRATEGIES,
    PCD,
    BMLearningStrategy,
    ExactGradient,
    Gibbs,
    LearningStrategy,
    MeanFieldGradient,
    RBMLearningStrategy,
    TAPGradient,
)
from skboltz.partition import AIS, Z_ESTIMATORS, LogZ, MeanField, ZEstimator
from skboltz.views import (
    ANNEALING,
    BINARY,
    ENUMERATION,
    RESTRICTED,
    BMView,
    Capabilities,
    BinaryUnits,
    GaussianRBMView,
    Layer,
    ModelView,
    RBMView,
    Requires,
    RestrictedView,
    supports,
)

from _oracles import sampling_total_variation


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
    "model, strategy, missing",
    [(RBM(n_components=2), Gibbs(), "general Boltzmann learning rule"),
     (RBM(n_components=2), MeanFieldGradient(), "general Boltzmann learning rule"),
     (BoltzmannMachine(n_hidden=1), PCD(), "restricted learning rule"),
     (BoltzmannMachine(n_hidden=1), TAPGradient(), "restricted learning rule"),
     (GaussianRBM(n_components=2), ExactGradient(), "binary units, but the model has "
      "gaussian visible units"),
     (GaussianRBM(n_components=2), TAPGradient(), "binary units")],
    ids=["RBM-Gibbs", "RBM-MeanFieldGradient", "BM-PCD", "BM-TAPGradient",
         "GaussianRBM-ExactGradient", "GaussianRBM-TAPGradient"],
)
def test_a_strategy_the_model_cannot_serve_is_a_clear_error_at_fit(model, strategy, missing):
    view = type(model)._view_class.__name__
    model = clone(model).set_params(learning=strategy, n_iter=1)
    name = type(strategy).__name__
    with pytest.raises(ValueError, match=rf"cannot use learning={name}: it needs .*{missing}"
                                         rf".*model view: {view}.* Use learning="):
        model.fit(_binary_data())
    assert not hasattr(model, "n_features_in_")


def test_a_z_estimator_the_model_cannot_serve_is_refused_before_training():
    model = GaussianRBM(n_components=2, z_estimator=MeanField())
    with pytest.raises(ValueError, match="cannot use z_estimator=MeanField: it needs binary "
                                         "units, but the model has gaussian visible units"):
        model.fit(_binary_data())
    assert not hasattr(model, "n_features_in_")
    fitted = GaussianRBM(n_components=2, n_iter=1).fit(_binary_data())
    with pytest.raises(ValueError, match="cannot use z_estimator=TAP"):
        fitted.estimate_log_partition("tap")  # registered, but not for Gaussian units


class BinaryUnitsOnly(ExactRows):
    """A user's strategy that declares it needs binary units (the rows it enumerates)."""

    requires = Requires(units={BINARY}, operations={RESTRICTED})


class BinaryImportance(UniformImportance):
    """A user's log Z estimator declaring what it needs."""

    requires = Requires(units={BINARY}, operations={ENUMERATION})


def test_a_users_declared_requirements_are_checked():
    X = _binary_data()
    RBM(n_components=2, learning=BinaryUnitsOnly(n_rows=20), n_iter=1).fit(X)
    with pytest.raises(ValueError, match="GaussianRBM cannot use learning=BinaryUnitsOnly: "
                                         "it needs binary units"):
        GaussianRBM(n_components=2, learning=BinaryUnitsOnly()).fit(X)
    with pytest.raises(ValueError, match="cannot use z_estimator=BinaryImportance"):
        GaussianRBM(n_components=2, z_estimator=BinaryImportance()).fit(X)
    # a binary-only estimator, were it registered, would not be among GaussianRBM's names
    assert supports(RBMView, BinaryImportance) and not supports(GaussianRBMView, BinaryImportance)


def test_a_strategy_without_declarations_gets_its_kinds_defaults():
    class Plain(RBMLearningStrategy):
        def negative_phase(self, model, batch, state, rng, progress):
            return batch

    assert Plain.requires == RBMLearningStrategy.requires
    RBM(n_components=2, learning=Plain(), n_iter=1).fit(_binary_data())
    GaussianRBM(n_components=2, learning=Plain(), n_iter=1).fit(_binary_data())
    with pytest.raises(ValueError, match="BoltzmannMachine cannot use learning=Plain"):
        BoltzmannMachine(learning=Plain()).fit(_binary_data())

    class Undeclared(LearningStrategy):  # neither kind: nothing says what it trains
        pass

    with pytest.raises(ValueError, match="cannot use learning=Undeclared: it needs a "
                                         "declaration of what the strategy requires"):
        RBM(learning=Undeclared()).fit(_binary_data())


def test_exact_gradient_trains_both_kinds():
    X = _binary_data()
    RBM(n_components=2, learning=ExactGradient(), n_iter=1).fit(X)
    BoltzmannMachine(n_hidden=1, learning=ExactGradient(), n_iter=1).fit(X)


EXPECTED_OPTIONS = {
    RBM: ({"cd", "exact", "pcd", "pt", "tap"},
          {"auto", "ais", "exact", "mean_field", "tap", "visited_states"}),
    GaussianRBM: ({"cd", "pcd", "pt"}, {"auto", "ais", "exact", "visited_states"}),
    TabularRBM: ({"cd", "pcd", "pt"}, {"auto", "ais", "exact", "visited_states"}),
    BoltzmannMachine: ({"exact", "gibbs", "mean_field"},
                       {"auto", "ais", "exact", "mean_field", "tap", "visited_states"}),
}


def _supported(registry, model):
    return {name for name, cls in registry.items() if supports(model._view_class, cls)}


@pytest.mark.parametrize("model", list(EXPECTED_OPTIONS), ids=lambda m: m.__name__)
def test_string_options_are_the_registered_entries_the_view_supports(model):
    learning, z_estimator = EXPECTED_OPTIONS[model]
    assert _supported(LEARNING_STRATEGIES, model) == learning
    assert {"auto", *_supported(Z_ESTIMATORS, model)} == z_estimator
    assert model._parameter_constraints["learning"][0].options == learning
    assert model._parameter_constraints["z_estimator"][0].options == z_estimator
    X = _binary_data(n_rows=40)
    for name in z_estimator:  # every option is accepted by name
        model(n_iter=1, z_estimator=name, random_state=0).fit(X)
    assert "visited_states" in Z_ESTIMATORS


@pytest.mark.parametrize("model", list(EXPECTED_OPTIONS), ids=lambda m: m.__name__)
def test_docstrings_list_the_registered_names(model):
    def listed(parameter):
        match = re.search(rf"    {parameter} : \{{([^}}]*)\}}", model.__doc__)
        return set(re.findall(r'"(\w+)"', match.group(1)))

    learning, z_estimator = EXPECTED_OPTIONS[model]
    assert listed("learning") == learning
    assert listed("z_estimator") == z_estimator


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
    with pytest.raises(ValueError, match=r"learning='pcd' is a string .* learning=PCD\("):
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


# -- a strategy's state is its own ----------------------------------------------------
@dataclass
class ChainState:
    chains: np.ndarray
    n_calls: int = 0


class DataclassChains(RBMLearningStrategy):
    """A user's persistent chains kept in a dataclass (the estimator never looks inside)."""

    def __init__(self, n_chains=10, fail_on_rows=None):
        self.n_chains = n_chains
        self.fail_on_rows = fail_on_rows

    def init_state(self, model, X, batch_size, rng):
        chains = rng.random((self.n_chains, model.n_visible)) < 0.5
        return ChainState(chains.astype(model.dtype))

    def negative_phase(self, model, batch, state, rng, progress):
        state.n_calls += 1
        if batch.shape[0] == self.fail_on_rows:
            raise RuntimeError("planned failure")
        state.chains = model.gibbs_step(state.chains, rng)
        return state.chains

    def persistent_chains(self, state):
        return state.chains


def test_a_strategy_with_a_dataclass_state_fits_and_continues():
    X = _binary_data()
    rbm = RBM(n_components=3, learning=DataclassChains(), batch_size=10, n_iter=2,
              random_state=0).fit(X)
    state = rbm._training_state.sampler
    assert isinstance(state, ChainState) and state.n_calls == 2 * 12
    rbm.partial_fit(X[:30].astype(np.float32))  # a dtype switch: the strategy casts it
    state = rbm._training_state.sampler
    assert state.n_calls == 2 * 12 + 3 and state.chains.dtype == np.float32
    assert rbm.components_.dtype == np.float32


def test_a_failed_partial_fit_leaves_a_dataclass_state_as_it_was():
    X = _binary_data()

    def fitted(strategy):
        model = RBM(n_components=3, learning=strategy, batch_size=6, random_state=0)
        return model.partial_fit(X[:12])

    failing, reference = fitted(DataclassChains(fail_on_rows=5)), fitted(DataclassChains())
    kept = failing._training_state.sampler
    for rows in (X[12:17], X[12:29]):  # fails at once, and after two updates
        with pytest.raises(RuntimeError, match="planned failure"):
            failing.partial_fit(rows)
        assert failing._training_state.sampler is kept and kept.n_calls == 2
    for model in (failing, reference):
        model.partial_fit(X[12:24])
    assert_allclose(failing.components_, reference.components_, rtol=0, atol=0)
    assert_allclose(failing._training_state.sampler.chains,
                    reference._training_state.sampler.chains, rtol=0, atol=0)
    assert failing._training_state.sampler.n_calls == 4
    assert failing.history_ == reference.history_ | {"time": failing.history_["time"]}


def test_strategies_report_their_diagnostics_in_history():
    X = _binary_data()
    rbm = RBM(n_components=3, learning="pt", n_iter=3, random_state=0).fit(X)
    acceptance = rbm.history_["swap_acceptance"]
    assert len(acceptance) == 3 and all(0 <= rate <= 1 for rate in acceptance)
    # each epoch's own rate: the strategy's counters restart every epoch
    assert rbm._training_state.sampler["n_swaps_proposed"] == 0
    bm = BoltzmannMachine(n_hidden=1, n_iter=2, random_state=0,
                          learning=MeanFieldGradient(free_phase="fixed_point", max_iter=1,
                                                     tol=0.0)).fit(X)
    assert bm.history_["mean_field_unconverged"] == [12, 12]  # one unconverged solve per update


# -- the base's loop serves an estimator trained on (X, y) -----------------------------
class LabelledMonitor(Monitor):
    """LabelledRBM's records and early stopping: a monitor of its own."""

    def record(self, state, **timing):
        record = super().record(state, **timing)
        monitor, X = self.rows, self.estimator.X_
        assert_allclose(monitor.train, X[monitor.train_labels])
        if monitor.valid is not None:  # fit's held-out rows come with their labels
            assert_allclose(monitor.valid, X[monitor.valid_labels])
            record["score_valid"] = -float(state.n_iter)  # never improves after epoch 1
        return record

    def stopping_criterion(self):
        return 1.0, "score_valid"


class LabelledRBM(RBM):
    """An RBM that takes labels through the base's seams (a classifier's plumbing)."""

    def _validate_y(self, X, y, *, reset, classes=None):
        return None if y is None else np.asarray(y)

    def _minibatch_gradient(self, model, batch, labels, state, learning, rule):
        # each minibatch arrives with its own rows' labels (here: the rows' indices)
        assert_allclose(batch, self.X_[labels])
        self.n_labelled_batches_ = getattr(self, "n_labelled_batches_", 0) + 1
        return super()._minibatch_gradient(model, batch, labels, state, learning, rule)

    _monitor_class = LabelledMonitor


def test_the_loop_serves_an_estimator_trained_on_labels():
    X = _binary_data(n_rows=50)
    model = LabelledRBM(n_components=2, learning="exact", batch_size=10, n_iter=10,
                        validation_fraction=0.2, n_iter_no_change=2, random_state=0)
    model.X_ = X
    model.fit(X, np.arange(50))
    assert model.n_labelled_batches_ == 3 * 4  # 40 training rows, 3 epochs
    assert model.history_["score_valid"] == [-1.0, -2.0, -3.0]  # stopped by the monitor
    model.partial_fit(X[:10], np.arange(10))
    assert model.n_labelled_batches_ == 3 * 4 + 1


def test_a_new_unit_type_gets_the_strategies_that_handle_it():
    class SoftmaxVisibleView:  # a hypothetical view: only its declaration matters here
        capabilities = Capabilities(units=(("visible", "softmax"), ("hidden", BINARY)),
                                    operations={RESTRICTED, ENUMERATION, ANNEALING})

    learning = {name for name, cls in LEARNING_STRATEGIES.items()
                if supports(SoftmaxVisibleView, cls)}
    z_estimators = {name for name, cls in Z_ESTIMATORS.items()
                    if supports(SoftmaxVisibleView, cls)}
    assert learning == {"cd", "pcd", "pt"}  # the samplers; not exact, tap, gibbs, ...
    assert z_estimators == {"ais", "exact", "visited_states"}  # no mean field
    assert not supports(SoftmaxVisibleView, BinaryUnitsOnly)


# -- a new unit type: one layer class, trained and scored exactly ------------------------
class SpinUnits(Layer):
    """Units that take the values -1 and +1: E = -b . s, so given its field f a unit is
    +1 with probability sigmoid(2 f) and its mean is tanh(f)."""

    unit_type = "spin"

    def mean(self, input):
        return np.tanh(input + self.bias)

    def log_partition(self, input, overwrite=False, add_to=None):
        fields = input + self.bias
        log_z = np.logaddexp(fields, -fields).sum(axis=1)
        return log_z if add_to is None else add_to + log_z

    @property
    def log_n_states(self):
        return self.n_units * np.log(2.0)

    @property
    def n_states(self):
        return 2**self.n_units

    def states(self, start, stop):
        codes = np.arange(start, stop)[:, None] >> np.arange(self.n_units)
        return 2.0 * (codes & 1) - 1.0

    def base_bias_from_rates(self, rates):
        return np.arctanh(np.clip(rates, -0.998, 0.998))

    def draw_units(self, fields, noise, out, logistic=None):
        np.greater(2 * fields, noise.logistic(fields.shape), out=out)
        out *= 2
        out -= 1

    def mean_of_unit_fields(self, fields):
        np.tanh(fields, out=fields)

    def draw_independent(self, start, rng):
        up = rng.random(start.shape) < (1 + start) / 2
        return np.where(up, 1.0, -1.0).astype(self.dtype)

    def write_states(self, rows, rng, out):
        out[...] = self.draw_independent(np.clip(rows, -1, 1), rng)


class SpinRBMView(RestrictedView):
    visible_units = SpinUnits


class SpinRBM(LayeredRBM):
    _view_class = SpinRBMView


def spin_log_probabilities(weights, visible_bias, hidden_bias):
    """log p(s) of every spin row of ``SpinUnits.states``, by enumerating (s, h)."""
    S = SpinUnits(visible_bias).states(0, 2 ** len(visible_bias))
    H = ((np.arange(2 ** len(hidden_bias))[:, None] >> np.arange(len(hidden_bias))) & 1)
    joint = S @ weights.T @ H.T + (S @ visible_bias)[:, None] + (H @ hidden_bias)[None, :]
    marginal = logsumexp(joint, axis=1)
    return S, marginal - logsumexp(marginal)


def test_a_users_unit_type_trains_and_scores_exactly():
    # spin rows near two opposite prototypes, 5 % of the spins flipped: about log 2 +
    # 6 H(0.05) = 1.89 nats per row, where independent spins need 6 log 2 = 4.16
    X = 2 * _binary_data(n_rows=3000, seed=1) - 1
    S = SpinUnits(np.zeros(6)).states(0, 64)
    train, test = X[:2000], X[2000:]
    model = SpinRBM(n_components=2, n_iter=30, random_state=0).fit(train)

    # exact scores: the fitted parameters' log p(s) by brute force, summing to 1
    _, log_p = spin_log_probabilities(model.components_, model.intercept_visible_,
                                      model.intercept_hidden_)
    assert_allclose(model.score_samples(S), log_p, atol=1e-10)
    assert_allclose(np.exp(model.score_samples(S)).sum(), 1.0, rtol=1e-12)
    assert model.estimate_log_partition().kind == "exact"

    # the model learnt the prototypes: near the data's entropy, far above independent
    # spins at the training rates
    rates = train.mean(axis=0)
    independent = np.log((1 + test * rates) / 2).sum(axis=1).mean()
    assert independent < -4.0
    assert model.score(test) > -2.1

    # AIS agrees with enumeration
    estimate = model.estimate_log_partition(AIS(n_chains=200, n_betas=200))
    exact = model.estimate_log_partition().value
    assert abs(estimate.value - exact) < 3 * estimate.std_error + 1e-3

    # the layer's draws make Gibbs chains of the exact distribution (a model with
    # moderate weights, which the chains mix over)
    rng = np.random.default_rng(2)
    weights, visible_bias, hidden_bias = rng.normal(0, 0.8, (3, 6)), rng.normal(0, 0.5, 6), \
        rng.normal(0, 0.5, 3)
    view = SpinRBMView(weights, SpinUnits(visible_bias), BinaryUnits(hidden_bias))
    _, log_p = spin_log_probabilities(weights, visible_bias, hidden_bias)
    samples = view.draw_samples(20000, 50, np.zeros(6), rng)
    observed = np.bincount(((samples + 1) / 2).astype(int) @ (2 ** np.arange(6)),
                           minlength=64) / len(samples)
    mean, std = sampling_total_variation(log_p, len(samples))
    assert 0.5 * np.abs(observed - np.exp(log_p)).sum() < mean + 6 * std

    # the strategies it gets: the samplers of the restricted rule, exact and AIS
    assert supports(SpinRBMView, CD) and not supports(SpinRBMView, ExactGradient)


def test_a_users_learning_strategy_runs_under_dispatch_when_it_writes_negative_sample():
    """A strategy of the user's trains under array API dispatch by its capability
    (a negative_sample method), not by its class; one without says what it lacks."""
    from sklearn import config_context

    from _namespaces import to_host, xp_strict
    from skboltz.learning import RBMLearningStrategy
    from skboltz.utils._energy import bernoulli_sample

    class OneStepFromTheData(RBMLearningStrategy):
        """CD-1, written once for every namespace the layers take."""

        negative_rows_start_at_batch = True

        def negative_phase(self, model, batch, state, rng, progress):
            return model.gibbs_step(batch, rng)

        def negative_sample(self, model, chains, positive, positive_hidden, source,
                            n_steps, rows_are_means):
            hidden = bernoulli_sample(positive_hidden, source)
            negative = model.visible.sample(model.visible_input(hidden), source)
            return negative, model.hidden_probability(negative)

    class NumPyOnly(RBMLearningStrategy):
        def negative_phase(self, model, batch, state, rng, progress):
            return model.gibbs_step(batch, rng)

    X = (np.random.default_rng(0).random((200, 6)) < 0.3).astype(float)
    rbm = RBM(n_components=3, n_iter=3, learning=OneStepFromTheData(), random_state=0)
    assert rbm.__sklearn_tags__().array_api_support
    with config_context(array_api_dispatch=True):
        rbm.fit(xp_strict.asarray(X))
        scores = to_host(rbm.score_samples(xp_strict.asarray(X)))
    assert type(rbm.components_).__module__.startswith("array_api_strict")
    assert np.all(np.isfinite(scores)) and np.all(scores < 0)
    assert not RBM(learning=NumPyOnly()).__sklearn_tags__().array_api_support
    with config_context(array_api_dispatch=True), pytest.raises(
            ValueError, match="negative_sample"):
        RBM(n_components=3, n_iter=1, learning=NumPyOnly()).fit(xp_strict.asarray(X))
