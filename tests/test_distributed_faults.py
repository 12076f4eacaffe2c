"""A dask grid search that loses a worker mid-way still gives the local results.

Needs the optional extra ``skboltz[distributed]``; skipped without. Two worker
processes under nannies on the loopback interface; one is killed abruptly (as by the
OOM killer) while the search runs, and dask re-runs its tasks elsewhere. Fits are
deterministic functions of their inputs, so the results must not change. The data
must be broadcast to every worker (``parallel_backend("dask", scatter=[X])``): data
scattered to the lost worker alone cannot be recomputed.
"""

import os
import threading
import time

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV

from skboltz import RBM

distributed = pytest.importorskip("distributed")
joblib = pytest.importorskip("joblib")


def _exit_soon():
    """Make the calling worker process die 10 ms from now, without any cleanup."""
    threading.Timer(0.01, os._exit, args=(1,)).start()


def _search():
    return GridSearchCV(
        RBM(n_iter=20, random_state=0),
        {"n_components": [4, 8, 12], "learning_rate": [0.02, 0.05]},
        cv=3,
    )


def test_grid_search_survives_the_loss_of_a_worker():
    # 120 rows: GridSearchCV's index arrays stay under the 1 kB above which joblib's
    # dask backend scatters an argument to a single worker (whose loss would cancel
    # the search: dask cannot recompute scattered data). X itself is broadcast below.
    X = load_digits().data[:120] / 16
    local = _search().fit(X)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    ) as cluster, distributed.Client(cluster) as client:
        client.wait_for_workers(2)
        victim = sorted(client.scheduler_info()["workers"])[0]
        killed = threading.Event()

        def kill_when_busy():
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                processing = client.processing()
                if processing.get(victim):  # it is running one of the fits
                    client.run(_exit_soon, workers=[victim])
                    killed.set()
                    return
                time.sleep(0.05)

        killer = threading.Thread(target=kill_when_busy)
        killer.start()
        # Data scattered by the backend lives on one worker, and losing it cancels the
        # search ("already forgotten"); scatter=[X] broadcasts it to every worker.
        with joblib.parallel_backend("dask", scatter=[X]):
            remote = _search().fit(X)
        killer.join()
    assert killed.is_set(), "the worker was never busy: the fault was not injected"
    np.testing.assert_array_equal(
        local.cv_results_["mean_test_score"], remote.cv_results_["mean_test_score"]
    )
    assert local.best_params_ == remote.best_params_
