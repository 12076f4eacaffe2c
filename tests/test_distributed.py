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


def test_the_guides_local_cluster_snippet_runs_as_a_script(tmp_path):
    """Issue 31: the snippet of docs/distributed.rst, pasted into a script, failed with
    "Nanny failed to start" (no ``if __name__ == "__main__":`` guard: the worker
    processes import the script again and start clusters of their own)."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    page = Path(__file__).resolve().parent.parent / "docs" / "distributed.rst"
    block = re.search(r"\.\. code-block:: python\n\n((?:    .*\n|\n)+)", page.read_text())
    snippet = "\n".join(line[4:] for line in block.group(1).splitlines())
    assert "LocalCluster" in snippet
    script = tmp_path / "search.py"
    script.write_text(snippet)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "n_components" in done.stdout
