"""scikit-learn's callbacks (1.9+): epochs, DBN layers and classes as nested tasks."""

import numpy as np
import pytest
from joblib import parallel_config
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from skboltz import DBN, RBM, BoltzmannClassifier, BoltzmannMachine

callback = pytest.importorskip("sklearn.callback")


class Recorder:
    """Records each finished task as its path of (estimator, task name, task id).

    ``max_propagation_depth`` makes it auto-propagated: set on the outer estimator, it
    reaches every nested one. ``stop_after`` ends training after that many epochs.
    """

    max_propagation_depth = None

    def __init__(self, stop_after=None):
        self.stop_after = stop_after
        self.finished = []
        self.fitted = []
        self.setups = 0

    def setup(self, estimator, context):
        self.setups += 1

    def teardown(self, estimator, context):
        self.setups -= 1

    def on_fit_task_begin(self, estimator, context):
        pass

    def on_fit_task_end(self, estimator, context, *, fitted_estimator=None):
        path = []
        while context is not None:
            path.insert(0, (context.estimator_name, context.task_name, context.task_id))
            context = context.parent
        self.finished.append(tuple(path))
        self.fitted.append(fitted_estimator)
        return self.stop_after is not None and path[-1][1] == "epoch" and (
            path[-1][2] + 1 >= self.stop_after
        )


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:150] / 16, y[:150] % 3


@pytest.mark.parametrize(
    "model", [RBM(n_components=3, n_iter=3), BoltzmannMachine(n_hidden=1, n_iter=3)],
    ids=["RBM", "BoltzmannMachine"],
)
def test_each_epoch_is_a_task_of_the_fit(model, digits):
    X = digits[0][:, :8]
    recorder = Recorder()
    model = model.set_callbacks(recorder).fit(X)
    name = type(model).__name__
    assert recorder.finished == [
        ((name, "fit", 0), (name, "epoch", k)) for k in range(3)
    ] + [((name, "fit", 0),)]
    assert recorder.setups == 0  # set up once and torn down once
    assert recorder.fitted[-1].transform(X).shape == model.transform(X).shape

    recorder.finished.clear()
    model.partial_fit(X)
    assert recorder.finished == [((name, "fit", 0), (name, "epoch", 0)), ((name, "fit", 0),)]


def test_a_callback_can_stop_training(digits):
    rbm = RBM(n_components=3, n_iter=10, random_state=0)
    rbm.set_callbacks(Recorder(stop_after=4)).fit(digits[0])
    assert rbm.n_iter_ == 4
    assert rbm.history_["epoch"] == [1, 2, 3, 4]


def test_dbn_layers_are_tasks_holding_their_rbm_epochs(digits):
    recorder = Recorder()
    dbn = DBN((4, 3), rbm=RBM(n_iter=2), random_state=0).set_callbacks(recorder).fit(digits[0])
    root = ("DBN", "fit", 0)
    # A layer's task and its RBM's fit are one task (scikit-learn merges them).
    assert recorder.finished == [
        (root, ("RBM", "fit", 0), ("RBM", "epoch", 0)),
        (root, ("RBM", "fit", 0), ("RBM", "epoch", 1)),
        (root, ("RBM", "fit", 0)),
        (root, ("RBM", "fit", 1), ("RBM", "epoch", 0)),
        (root, ("RBM", "fit", 1), ("RBM", "epoch", 1)),
        (root, ("RBM", "fit", 1)),
        (root,),
    ]
    np.testing.assert_array_equal(recorder.fitted[-1].transform(digits[0]),
                                  dbn.transform(digits[0]))


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_classifier_classes_are_tasks_holding_their_models_epochs(digits, n_jobs):
    X, y = digits
    recorder = Recorder()
    clf = BoltzmannClassifier(RBM(n_components=2, n_iter=2), n_jobs=n_jobs, random_state=0)
    # Threads share the recorder; with processes, scikit-learn ships the events back.
    with parallel_config(backend="threading"):
        clf.set_callbacks(recorder).fit(X, y)
    root = ("BoltzmannClassifier", "fit", 0)
    expected = {(root,)}
    for k in range(3):
        expected |= {(root, ("RBM", "fit", k)),
                     (root, ("RBM", "fit", k), ("RBM", "epoch", 0)),
                     (root, ("RBM", "fit", k), ("RBM", "epoch", 1))}
    assert set(recorder.finished) == expected and len(recorder.finished) == 10
    assert recorder.finished[-1] == (root,)


def test_epochs_nest_inside_grid_search_and_pipeline(digits):
    X, y = digits
    recorder = Recorder()
    search = GridSearchCV(
        make_pipeline(RBM(n_iter=2, random_state=0), LogisticRegression(max_iter=20)),
        {"rbm__n_components": [2, 3]}, cv=2,
    )
    search.set_callbacks(recorder).fit(X, y)
    epochs = [path for path in recorder.finished if path[-1][1] == "epoch"]
    assert len(epochs) == (2 * 2 + 1) * 2  # (candidates x folds + refit) x epochs
    for path in epochs:
        names = [name for name, _, _ in path]
        assert names[0] == "GridSearchCV" and names[-3:] == ["Pipeline", "RBM", "RBM"]


def test_progress_bars_name_the_layers_and_classes(digits, capsys):
    pytest.importorskip("rich")
    X, y = digits
    bar = callback.ProgressBar(max_propagation_depth=None)
    DBN((4, 3), rbm=RBM(n_iter=2), random_state=0).set_callbacks(bar).fit(X)
    BoltzmannClassifier(RBM(n_components=2, n_iter=2), random_state=0).set_callbacks(
        callback.ProgressBar(max_propagation_depth=None)
    ).fit(X, y)
    out = capsys.readouterr().out
    for text in ("DBN - fit", "DBN - layer 1 | RBM - fit #0", "DBN - layer 2 | RBM - fit #1",
                 "BoltzmannClassifier - fit", "BoltzmannClassifier - class 2 | RBM - fit #2"):
        assert text in out


def test_epochs_are_tasks_and_a_callback_stops_training_under_dispatch(digits):
    """The dispatched path runs the same task tree, and a callback stops it."""
    from sklearn import config_context

    from _namespaces import xp_strict

    X = xp_strict.asarray(digits[0][:, :8])
    recorder = Recorder()
    with config_context(array_api_dispatch=True):
        RBM(n_components=3, n_iter=3).set_callbacks(recorder).fit(X)
        rbm = RBM(n_components=3, n_iter=10, random_state=0)
        rbm.set_callbacks(Recorder(stop_after=4)).fit(X)
    assert recorder.finished == [
        (("RBM", "fit", 0), ("RBM", "epoch", k)) for k in range(3)
    ] + [(("RBM", "fit", 0),)]
    assert recorder.setups == 0
    assert rbm.n_iter_ == 4
    assert rbm.history_["epoch"] == [1, 2, 3, 4]
