"""DBN: greedy stacking, transform through all layers, sampling with a down pass."""

import copy
import pickle

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.base import clone
from sklearn.datasets import load_digits

from skboltz import DBN, RBM, GaussianRBM
from skboltz.core._transactions import held_updates
from skboltz.utils._runtime import make_generator
from skboltz.exceptions import TrainingDivergedError


@pytest.fixture(scope="module")
def digits():
    return load_digits().data[:300] / 16


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def test_layer_shapes_and_template_settings(digits):
    template = RBM(learning="cd", learning_rate=0.02, n_iter=2, random_state=0)
    dbn = DBN(hidden_layer_sizes=(20, 7, 5), rbm=template).fit(digits)
    assert [layer.components_.shape for layer in dbn.layers_] == [(20, 64), (7, 20), (5, 7)]
    for layer, size in zip(dbn.layers_, (20, 7, 5)):
        assert layer is not template
        params = layer.get_params()
        assert params.pop("n_components") == size
        expected = template.get_params()
        expected.pop("n_components")
        assert params == expected
    assert not hasattr(template, "components_")  # the template is never fitted
    assert dbn.n_features_in_ == 64
    assert list(dbn.get_feature_names_out()) == [f"dbn{i}" for i in range(5)]


def test_greedy_stacking_trains_each_layer_on_the_hidden_probabilities_below(digits):
    template = RBM(n_iter=2, random_state=0)
    dbn = DBN(hidden_layer_sizes=(12, 6), rbm=template).fit(digits)
    first = clone(template).set_params(n_components=12).fit(digits)
    np.testing.assert_array_equal(dbn.layers_[0].components_, first.components_)
    second = clone(template).set_params(n_components=6).fit(first.transform(digits))
    np.testing.assert_array_equal(dbn.layers_[1].components_, second.components_)


def test_transform_is_the_composition_of_the_layers(digits):
    dbn = DBN(hidden_layer_sizes=(16, 8), rbm=RBM(n_iter=2), random_state=0).fit(digits)
    H = digits
    for layer in dbn.layers_:
        H = sigmoid(H @ layer.components_.T + layer.intercept_hidden_)
    np.testing.assert_allclose(dbn.transform(digits), H, rtol=1e-10)
    assert dbn.transform(digits).shape == (300, 8)
    H32 = dbn.transform(digits.astype(np.float32))
    assert H32.dtype == np.float32
    np.testing.assert_allclose(H32, H, atol=1e-5)


def test_random_state_seeds_layers_differently_and_reproducibly(digits):
    dbn = DBN(hidden_layer_sizes=(8, 8), rbm=RBM(n_iter=1), random_state=3).fit(digits)
    seeds = [layer.random_state for layer in dbn.layers_]
    assert seeds[0] != seeds[1]
    again = DBN(hidden_layer_sizes=(8, 8), rbm=RBM(n_iter=1), random_state=3).fit(digits)
    for a, b in zip(dbn.layers_, again.layers_):
        np.testing.assert_array_equal(a.components_, b.components_)


def test_sample_top_gibbs_then_down_pass(digits):
    dbn = DBN(hidden_layer_sizes=(16, 8), rbm=RBM(n_iter=3), random_state=0).fit(digits)
    n, steps = 2000, 20
    mean = dbn.sample(n, random_state=5, n_steps=steps, down_pass="mean")
    # The same top-RBM chains by hand, then P(v | h) of the bottom layer.
    top = dbn.layers_[1].sample(n, random_state=make_generator(5), n_steps=steps)
    bottom = dbn.layers_[0]
    expected = sigmoid(top @ bottom.components_ + bottom.intercept_visible_)
    np.testing.assert_allclose(mean, expected, rtol=1e-10)

    binary = dbn.sample(n, random_state=5, n_steps=steps, down_pass="sample")
    assert binary.shape == (n, 64)
    assert set(np.unique(binary)) <= {0.0, 1.0}
    # Same chains, Bernoulli draws from the same probabilities: the averages agree.
    np.testing.assert_allclose(binary.mean(axis=0), mean.mean(axis=0), atol=0.05)
    np.testing.assert_array_equal(binary, dbn.sample(n, random_state=5, n_steps=steps))


def test_single_layer_dbn_samples_like_its_rbm(digits):
    dbn = DBN(hidden_layer_sizes=[10], rbm=RBM(n_iter=2, random_state=0)).fit(digits)
    np.testing.assert_array_equal(
        dbn.sample(5, random_state=1, n_steps=7),
        dbn.layers_[0].sample(5, random_state=make_generator(1), n_steps=7),
    )


def test_partial_fit_trains_every_layer_one_epoch(digits):
    dbn = DBN(hidden_layer_sizes=(8, 4), rbm=RBM(n_iter=5), random_state=0)
    dbn.partial_fit(digits)
    assert [layer.n_iter_ for layer in dbn.layers_] == [1, 1]
    first_layers = dbn.layers_
    dbn.partial_fit(digits)
    assert dbn.layers_ is first_layers
    assert [layer.n_iter_ for layer in dbn.layers_] == [2, 2]
    assert dbn.transform(digits).shape == (300, 4)


@pytest.mark.parametrize("sizes", [(), (3, 0), (2.5,), [[2, 3]]])
def test_bad_layer_sizes(digits, sizes):
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        DBN(hidden_layer_sizes=sizes).fit(digits)


def test_no_likelihood_is_offered():
    # A deep stack's log p(x) is intractable; the DBN does not pretend otherwise.
    assert not hasattr(DBN(), "score_samples")
    assert not hasattr(DBN(), "score")


def test_bad_down_pass(digits):
    dbn = DBN(hidden_layer_sizes=[4], rbm=RBM(n_iter=1), random_state=0).fit(digits)
    with pytest.raises(ValueError, match="down_pass"):
        dbn.sample(2, down_pass="max")


def test_verbose_names_each_layer_and_passes_down(digits, capsys):
    DBN(hidden_layer_sizes=(6, 4), rbm=RBM(n_iter=2), random_state=0, verbose=1).fit(digits)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "[DBN] layer 1/2 (6 hidden units): fitting"
    assert [line[:5] for line in lines[1:3]] == ["[RBM]", "[RBM]"]  # one per epoch
    assert lines[3].startswith("[DBN] layer 1/2 (6 hidden units): done in ")
    assert lines[4] == "[DBN] layer 2/2 (4 hidden units): fitting"
    assert len(lines) == 8 and lines[7].endswith("s")

    dbn = DBN(hidden_layer_sizes=(6, 4), rbm=RBM(n_iter=2), random_state=0)
    dbn.fit(digits)
    assert capsys.readouterr().out == ""
    dbn.set_params(verbose=1).partial_fit(digits)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "[DBN] layer 1/2 (6 hidden units): training one epoch (partial_fit)"
    assert len(lines) == 4  # the layers keep the verbose they were created with


def test_partial_fit_failing_in_an_upper_layer_keeps_every_layer(digits, monkeypatch):
    dbn = DBN(hidden_layer_sizes=(6, 3), rbm=RBM(n_iter=1), random_state=0)
    dbn.partial_fit(digits)
    layers = dbn.layers_
    before = [(layer.components_.copy(), layer.n_iter_) for layer in layers]
    original = RBM.partial_fit

    def fail_on_the_top_layer(self, X, y=None):
        if self.n_components == 3:
            raise KeyboardInterrupt  # e.g. the user stops the stream mid-way
        return original(self, X, y)

    monkeypatch.setattr(RBM, "partial_fit", fail_on_the_top_layer)
    with pytest.raises(KeyboardInterrupt):
        dbn.partial_fit(digits)
    assert dbn.layers_ is layers
    for layer, (components, n_iter) in zip(dbn.layers_, before):
        assert_array_equal(layer.components_, components)
        assert layer.n_iter_ == n_iter


@pytest.mark.parametrize("method", ["score", "score_samples"])
def test_the_missing_score_says_why_and_what_to_use(method):
    dbn = DBN(hidden_layer_sizes=(3, 2), rbm=RBM(n_iter=1), random_state=0)
    assert not hasattr(dbn, method)  # so GridSearchCV asks for a scorer
    with pytest.raises(AttributeError, match=f"DBN has no {method}: .*tractable.*scoring="):
        getattr(dbn, method)


def _layer_states(dbn):
    """What a DBN's next partial_fit continues from: each layer's parameters, epochs,
    history and random streams."""
    return [
        (layer.components_.copy(), layer.n_iter_, layer.history_["epoch"],
         layer._training_state.rng.bit_generator.state,
         layer._training_state.noise.checkpoint())
        for layer in dbn.layers_
    ]


class _FailingCallback:
    """Raises when the given layer's task ends, after the layer published its epoch (a
    user's callback failing mid-call). The layer's own task is merged with the DBN's
    task of that layer: it ends as the RBM's "fit" task, numbered from 0."""

    max_propagation_depth = None

    def __init__(self, layer):
        self.layer = layer

    def setup(self, estimator, context):
        pass

    def teardown(self, estimator, context):
        pass

    def on_fit_task_begin(self, estimator, context):
        pass

    def on_fit_task_end(self, estimator, context, *, fitted_estimator=None):
        if (context.estimator_name, context.task_name, context.task_id) == (
            "RBM", "fit", self.layer - 1
        ):
            raise RuntimeError("callback failed")
        return False


@pytest.mark.parametrize("failure", ["divergence", "callback"])
def test_a_failed_partial_fit_leaves_every_layer_as_if_never_called(digits, failure):
    """All or nothing across layers: layer 1's successful epoch of a call that fails
    in layer 2 is undone too (its history and random streams included), so the next
    call continues exactly as a DBN that never saw the failed call."""
    dbn = DBN((16, 8), rbm=RBM(n_iter=1), random_state=0).partial_fit(digits)
    untouched = copy.deepcopy(dbn)
    before = _layer_states(dbn)
    if failure == "divergence":
        dbn.layers_[1].set_params(learning_rate=1e5)
        error = TrainingDivergedError
    else:
        pytest.importorskip("sklearn.callback")
        dbn.set_callbacks(_FailingCallback(layer=2))
        error = RuntimeError
    with pytest.raises(error):
        dbn.partial_fit(digits)
    after = _layer_states(dbn)
    assert pickle.dumps(after) == pickle.dumps(before)
    # The next call continues as if the failed one had never happened.
    dbn.layers_[1].set_params(learning_rate=untouched.layers_[1].learning_rate)
    if failure == "callback":
        dbn.set_callbacks()
    dbn.partial_fit(digits)
    untouched.partial_fit(digits)
    for layer, reference in zip(dbn.layers_, untouched.layers_):
        assert_array_equal(layer.components_, reference.components_)
        assert layer.history_["epoch"] == reference.history_["epoch"] == [1, 2]


def test_held_updates_undo_several_models_at_once(digits):
    first = RBM(n_components=4, random_state=0).partial_fit(digits)
    second = RBM(n_components=4, random_state=1).partial_fit(digits)
    references = copy.deepcopy([first, second])
    with pytest.raises(KeyboardInterrupt), held_updates([first, second]):
        first.partial_fit(digits)
        second.fit(digits)
        raise KeyboardInterrupt
    for model, reference in zip([first, second], references):
        assert model.n_iter_ == 1 and model.history_ == reference.history_
        model.partial_fit(digits)
        reference.partial_fit(digits)
        assert_array_equal(model.components_, reference.components_)
    with held_updates([first]):  # a block that finishes keeps its updates
        first.partial_fit(digits)
    assert first.n_iter_ == 3


@pytest.mark.parametrize("change", [
    {"hidden_layer_sizes": (8, 8)}, {"hidden_layer_sizes": (16,)},
    {"first_layer": GaussianRBM(learn_variance=False)},
])
def test_partial_fit_refuses_a_changed_structure(digits, change):
    dbn = DBN((16, 8), rbm=RBM(n_iter=1), random_state=0).partial_fit(digits)
    name = next(iter(change))
    with pytest.raises(ValueError, match=f"{name}.*fitted.*Call fit to start again"):
        dbn.set_params(**change).partial_fit(digits)
    assert [layer.n_iter_ for layer in dbn.layers_] == [1, 1]
    assert dbn.fit(digits).transform(digits).shape[0] == digits.shape[0]


def test_a_stream_of_partial_fit_calls_keeps_a_bounded_history(digits, monkeypatch):
    """Each call is an epoch with its records: a stream of calls kept them all, its
    memory and every read of history_ growing with the number of calls. The history
    is cut back to the latest HISTORY_EPOCHS epochs (a small bound here)."""
    import skboltz.core._training as training

    monkeypatch.setattr(training, "HISTORY_EPOCHS", 5)
    dbn = DBN(hidden_layer_sizes=(4, 2), random_state=0)
    for _ in range(40):
        dbn.partial_fit(digits[:20])
    for layer in dbn.layers_:
        assert layer.n_iter_ == 40
        assert layer.history_["epoch"] == [36, 37, 38, 39, 40]
        assert all(len(values) <= 10 for values in layer._training_state.history.values())


def test_a_failed_call_that_cut_the_history_puts_it_back(digits, monkeypatch):
    import skboltz.core._training as training

    monkeypatch.setattr(training, "HISTORY_EPOCHS", 3)
    dbn = DBN(hidden_layer_sizes=(4, 2), rbm=RBM(n_iter=1), random_state=0)
    for _ in range(5):
        dbn.partial_fit(digits[:20])
    kept = [copy.deepcopy(layer._training_state.history) for layer in dbn.layers_]
    assert len(kept[0]["epoch"]) == 5  # the next call cuts the history back
    original = RBM.partial_fit

    def fail_on_the_top_layer(self, X, y=None):
        if self.n_components == 2:
            raise KeyboardInterrupt
        return original(self, X, y)

    monkeypatch.setattr(RBM, "partial_fit", fail_on_the_top_layer)
    with pytest.raises(KeyboardInterrupt):
        dbn.partial_fit(digits[:20])
    assert [layer._training_state.history for layer in dbn.layers_] == kept
