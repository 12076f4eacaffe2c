"""Settings changed between partial_fit calls (issue 23): a structural parameter is
refused with an error that says to call fit; another learning strategy (or other
settings of one) starts its own state from the current parameters."""

import copy
import pickle

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.datasets import load_digits

from skboltz import DBM, RBM, BoltzmannMachine, GaussianRBM, RBMClassifier
from skboltz.learning import PCD, MeanFieldPCD, ParallelTempering

DIGITS = load_digits().data[:200] / 16
BINARY = (DIGITS[:, 20:30] > 0.5).astype(float)
REAL = np.random.default_rng(0).normal(size=(120, 6))


def state_of(model):
    """The training state as bytes, without the epochs' times and the buffered noise
    (whose blocks a deep copy shares: its position shows in the next update)."""
    state = dict(vars(model._training_state))
    state.pop("noise")
    state["history"] = {key: values for key, values in state["history"].items()
                        if key != "time"}
    state.pop("minibatches", None)  # buffers
    return pickle.dumps(state)


def rbm(**params):
    return RBM(n_components=4, random_state=0, **params)


def gaussian(**params):
    return GaussianRBM(n_components=3, random_state=0, **params)


def machine(**params):
    return BoltzmannMachine(n_hidden=2, random_state=0, **params)


def dbm(**params):
    return DBM(hidden_layer_sizes=(4, 3), random_state=0, **params)


BM_MASK = np.ones((12, 12), dtype=bool)
np.fill_diagonal(BM_MASK, False)

STRUCTURAL = [
    (rbm, DIGITS, {"n_components": 8}),
    (gaussian, REAL, {"n_components": 5}),
    (gaussian, REAL, {"whiten": True}),
    (machine, BINARY, {"n_hidden": 3}),
    (machine, BINARY, {"connectivity": "bipartite"}),
    (machine, BINARY, {"connectivity": BM_MASK & ~np.eye(12, k=1, dtype=bool)
                       & ~np.eye(12, k=-1, dtype=bool)}),
    (dbm, BINARY, {"hidden_layer_sizes": (4, 2)}),
    (dbm, BINARY, {"hidden_layer_sizes": (4,)}),
]


@pytest.mark.parametrize("make, X, change", STRUCTURAL,
                         ids=lambda value: getattr(value, "__name__", None))
def test_a_changed_structural_parameter_is_refused(make, X, change):
    model = make().partial_fit(X)
    before = state_of(model)
    name = next(iter(change))
    with pytest.raises(ValueError, match=f"{name}=.* fitted with {name}=.*Call fit to start "
                                         "again"):
        model.set_params(**change).partial_fit(X)
    assert state_of(model) == before  # nothing changed
    model.set_params(**{name: make().get_params()[name]}).partial_fit(X)  # set back
    assert model.n_iter_ == 2
    model.set_params(**change).fit(X)  # fit starts again with the new setting
    model.partial_fit(X)


def test_an_unchanged_mask_given_anew_is_the_same_setting():
    model = machine(connectivity=BM_MASK.copy()).partial_fit(BINARY)
    model.set_params(connectivity=BM_MASK.astype(int).tolist()).partial_fit(BINARY)
    assert model.n_iter_ == 2


RBM_LEARNING = ["cd", "pcd", "pt", "exact", "tap"]
GAUSSIAN_LEARNING = ["cd", "pcd", "pt"]
BM_LEARNING = ["gibbs", "mean_field", "exact"]
SWITCHES = (
    [(rbm, DIGITS[:, :12], a, b) for a in RBM_LEARNING for b in RBM_LEARNING if a != b]
    + [(gaussian, REAL, a, b) for a in GAUSSIAN_LEARNING for b in GAUSSIAN_LEARNING
       if a != b]
    + [(machine, BINARY, a, b) for a in BM_LEARNING for b in BM_LEARNING if a != b]
)


@pytest.mark.parametrize("make, X, before, after", SWITCHES,
                         ids=lambda value: getattr(value, "__name__", value))
def test_switching_the_learning_strategy_starts_its_state(make, X, before, after):
    """Every pair, for every estimator: the new strategy's state starts from the
    current parameters and this call's rows (these pairs raised KeyError or
    TypeError), and training continues deterministically from there."""
    model = make(learning=before).partial_fit(X)
    twin = copy.deepcopy(model)
    for estimator in (model, twin):
        estimator.set_params(learning=after).partial_fit(X)
        estimator.partial_fit(X)  # continues the new strategy's state
    assert model.learning_.name == after and model.n_iter_ == 3
    assert state_of(model) == state_of(twin)
    assert_array_equal(model.partial_fit(X)._training_state.params,
                       twin.partial_fit(X)._training_state.params)
    chains = model.learning_.persistent_chains(model._training_state.sampler)
    if after == "pcd":
        assert chains.shape[0] == model.batch_size
    if after == "pt":
        assert chains.shape[0] == model.batch_size * model.learning_.n_temperatures


@pytest.mark.parametrize("before, after", [
    (PCD(n_chains=5), PCD(n_chains=20)),
    (ParallelTempering(n_temperatures=3), ParallelTempering(n_temperatures=6)),
])
def test_new_settings_of_the_same_strategy_start_its_state(before, after):
    model = rbm(learning=before).partial_fit(DIGITS)
    model.set_params(learning=after).partial_fit(DIGITS)
    chains = model.learning_.persistent_chains(model._training_state.sampler)
    expected = getattr(after, "n_chains", None) or 10
    assert chains.shape[0] == expected * getattr(after, "n_temperatures", 1)
    # a setting changed inside the user's object counts too
    model.set_params(learning__n_steps=2).partial_fit(DIGITS)
    assert model.learning_.n_steps == 2


def test_new_settings_of_the_dbm_strategy_start_its_state():
    model = dbm(learning=MeanFieldPCD(n_chains=5)).partial_fit(BINARY)
    model.set_params(learning=MeanFieldPCD(n_chains=20)).partial_fit(BINARY)
    chains = model.learning_.persistent_chains(model._training_state.sampler)
    assert chains.shape[0] == 20
    assert model.n_iter_ == 2


def test_an_unchanged_strategy_keeps_its_state():
    model = rbm(learning="pcd").partial_fit(DIGITS)
    chains = model._training_state.sampler["chains"].copy()
    reference = copy.deepcopy(model)
    model.set_params(learning=PCD()).partial_fit(DIGITS)  # the default object: the same
    reference.partial_fit(DIGITS)
    assert_array_equal(model.components_, reference.components_)
    assert not np.array_equal(model._training_state.sampler["chains"], chains)


CLASSIFIER_LEARNING = ["cd", "pcd", "pt"]


@pytest.mark.parametrize("before, after", [(a, b) for a in CLASSIFIER_LEARNING
                                           for b in CLASSIFIER_LEARNING if a != b])
def test_switching_the_classifiers_learning_strategy_starts_its_state(before, after):
    """The new strategy's chains start on the joint layer (x, y), from this call's rows
    and their classes, as a fresh fit's do (cd -> pt and the others raised 'shapes
    (200,65) and (75,17) not aligned')."""
    X, y = DIGITS[:, :12], np.arange(200) % 3
    model = RBMClassifier(n_components=4, learning=before, random_state=0)
    model.partial_fit(X, y, classes=[0, 1, 2])
    twin = copy.deepcopy(model)
    for estimator in (model, twin):
        estimator.set_params(learning=after).partial_fit(X, y)
        estimator.partial_fit(X, y)
    assert model.learning_.name == after and model.n_iter_ == 3
    assert_array_equal(model._training_state.params, twin._training_state.params)
    chains = model.learning_.persistent_chains(model._training_state.sampler)
    if after != "cd":
        assert_array_equal(chains, twin.learning_.persistent_chains(
            twin._training_state.sampler))
        fresh = RBMClassifier(n_components=4, learning=after, random_state=0)
        fresh.partial_fit(X, y, classes=[0, 1, 2])
        fresh_chains = fresh.learning_.persistent_chains(fresh._training_state.sampler)
        assert chains.shape == fresh_chains.shape  # (x, y) and the constant unit


def classifier(**params):
    return RBMClassifier(n_components=4, random_state=0, **params)


def classifier_cd(**params):
    # CD-1: noise labels (row index mod 3) at the automatic step of about 1 make the
    # persistent chains' classifier swing above the guessing log-loss, which the
    # divergence check refuses; the averaging is what these tests are about
    return classifier(learning="cd", **params)


AVERAGED = [(rbm, DIGITS[:100]), (gaussian, REAL[:100]), (classifier_cd, DIGITS[:100]),
            (dbm, BINARY[:100])]


def partial_fit(model, X):
    if isinstance(model, RBMClassifier):
        return model.partial_fit(X, np.arange(len(X)) % 3, classes=[0, 1, 2])
    return model.partial_fit(X)


def weights_of(model):
    return model.weights_[0] if isinstance(model, DBM) else model.components_


@pytest.mark.parametrize("make, X", AVERAGED, ids=lambda value: getattr(value, "__name__",
                                                                        None))
def test_averaging_starts_between_calls_from_the_published_parameters(make, X):
    """average_window None -> a number between partial_fit calls raised
    AttributeError ('NoneType' object has no attribute 'move' / 'n_pending'). The
    updates are those of a call without averaging; the call publishes their running
    mean with the published parameters it started from (one update's weight each:
    100 rows in 10 minibatches, fewer than the 16 updates between the average's
    moves)."""
    plain = partial_fit(make(average_window=None, batch_size=10), X)
    start = weights_of(plain).copy()
    averaged = copy.deepcopy(plain)
    partial_fit(plain, X)
    partial_fit(averaged.set_params(average_window=300), X)
    n = 10  # updates; the start counts as one more
    expected = start + (weights_of(plain) - start) * n / (n + 1)
    np.testing.assert_allclose(weights_of(averaged), expected, rtol=1e-6, atol=1e-12)
    partial_fit(averaged, X)  # and goes on averaging
    assert averaged._training_state.average is not None


@pytest.mark.parametrize("make, X", AVERAGED, ids=lambda value: getattr(value, "__name__",
                                                                        None))
def test_averaging_stops_between_calls_and_training_continues_from_the_published_parameters(
        make, X):
    """average_window a number -> None between partial_fit calls raised TypeError for
    GaussianRBM and RBMClassifier. Training continues from the published average: as
    a model that never averaged (the same updates, chains and random streams: the
    average does not steer them) does from a hand edit to that average."""
    model = partial_fit(make(average_window=300, batch_size=10), X)
    plain = partial_fit(make(average_window=None, batch_size=10), X)
    for name in ("components_", "intercept_hidden_", "intercept_visible_",
                 "class_weights_", "intercept_class_", "variance_", "weights_",
                 "biases_"):
        if hasattr(model, name):  # the published average, as a hand edit
            setattr(plain, name, copy.deepcopy(getattr(model, name)))
    partial_fit(model.set_params(average_window=None), X)
    partial_fit(plain, X)
    assert model._training_state.average is None
    assert model._training_state.iterate is model._training_state.params
    # (GaussianRBM's edited variances come back through a logarithm: rounding)
    np.testing.assert_allclose(weights_of(model), weights_of(plain), rtol=1e-6,
                               atol=1e-12)
    partial_fit(model, X)
    assert model.n_iter_ == 3
