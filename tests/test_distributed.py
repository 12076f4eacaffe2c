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


# -- larger-than-memory data: partial_fit block by block (docs/large_data.rst) ----------
def _digit_blocks():
    da = pytest.importorskip("dask.array")
    X = (load_digits().data / 16).astype(np.float32)
    return X, da.from_array(X, chunks=(450, 64))  # 4 blocks of rows


def _partial_fit_loop(X, n_passes):
    rbm = RBM(n_components=8, random_state=0)
    for _ in range(n_passes):
        for block in np.array_split(X, [450, 900, 1350]):
            rbm.partial_fit(block)
    return rbm


def test_a_loop_over_dask_blocks_is_a_partial_fit_loop():
    X, X_dask = _digit_blocks()
    assert X_dask.numblocks == (4, 1)
    rbm = RBM(n_components=8, random_state=0)
    for _ in range(2):
        for i in range(X_dask.numblocks[0]):
            rbm.partial_fit(X_dask.blocks[i].compute())
    expected = _partial_fit_loop(X, n_passes=2)
    assert rbm.n_iter_ == 8
    np.testing.assert_array_equal(rbm.components_, expected.components_)


def test_dask_ml_incremental_trains_block_by_block_on_the_cluster(client):
    wrappers = pytest.importorskip("dask_ml.wrappers")
    X, X_dask = _digit_blocks()
    model = wrappers.Incremental(RBM(n_components=8, random_state=0), shuffle_blocks=False)
    model.fit(X_dask)
    model.partial_fit(X_dask)  # a second pass continues the fitted model
    rbm = model.estimator_
    expected = _partial_fit_loop(X, n_passes=2)
    assert rbm.n_iter_ == 8
    np.testing.assert_array_equal(rbm.components_, expected.components_)
    np.testing.assert_allclose(model.transform(X_dask).compute(), expected.transform(X),
                               rtol=1e-5)  # float32 products of a block vs. of all rows

    # Scoring: the wrapper wants a y; y=None works (the array is loaded into memory),
    # and the block-by-block mean of score_samples gives the same exact value.
    with pytest.raises(TypeError, match="'y'"):
        model.score(X_dask)
    assert model.score(X_dask, None) == pytest.approx(expected.score(X), abs=1e-12)
    rbm.estimate_log_partition()
    log_p = X_dask.map_blocks(rbm.score_samples, drop_axis=1, dtype=np.float64)
    assert log_p.mean().compute() == pytest.approx(expected.score(X), abs=1e-12)
