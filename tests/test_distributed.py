"""GridSearchCV over skboltz models on a dask.distributed cluster gives the local results.

Needs the optional extra ``skboltz[distributed]`` (dask, distributed); skipped without.
The cluster runs two worker processes on the loopback interface only.
"""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

from skboltz import RBM, BoltzmannClassifier

distributed = pytest.importorskip("distributed")
joblib = pytest.importorskip("joblib")


@pytest.fixture(scope="module")
def client():
    # Worker processes (not threads): arguments and fitted models really are pickled
    # and shipped, as on a real cluster. Everything stays on 127.0.0.1.
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    ) as cluster, distributed.Client(cluster) as client:
        yield client


def searches():
    X, y = load_digits(return_X_y=True)
    X, y = X[:240] / 16, y[:240]
    likelihood = GridSearchCV(
        RBM(n_iter=3, random_state=0),
        {"n_components": [4, 8], "learning_rate": [0.02, 0.05]},
        cv=3,
    )
    pipeline = GridSearchCV(
        Pipeline(
            [
                ("rbm", RBM(n_iter=3, random_state=0)),
                ("logistic", LogisticRegression(max_iter=200)),
            ]
        ),
        {"rbm__n_components": [8, 16], "logistic__C": [1.0, 10.0]},
        cv=3,
    )
    classifier = GridSearchCV(
        BoltzmannClassifier(RBM(n_iter=3, random_state=0)),
        {"estimator__n_components": [2, 4]},
        cv=3,
    )
    return [(likelihood, X, None), (pipeline, X, y), (classifier, X, y)]


def test_grid_search_on_dask_equals_local_run(client):
    local = [search.fit(X, y) for search, X, y in searches()]
    with distributed.get_task_stream(client) as task_stream:
        with joblib.parallel_backend("dask"):
            remote = [search.fit(X, y) for search, X, y in searches()]
    assert len(task_stream.data) >= 4 + 4 + 2  # the fits really ran on the cluster
    for a, b in zip(local, remote):
        np.testing.assert_array_equal(
            a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"]
        )
        assert a.best_params_ == b.best_params_
        assert np.isfinite(a.best_score_)
