"""The epoch benchmarks' settings, data and timers, shared by the scripts that time them.

``bench_rbm_vs_sklearn.py`` times skboltz against scikit-learn's BernoulliRBM and
``compare_checkouts.py`` times two versions of skboltz against each other, on the same
settings: the grid of the speed table, the streaming calls, the MNIST-sized fits. This
module holds what they share and imports no skboltz, so that each script chooses which
skboltz it times.

Usage, from a script in this directory::

    from _epoch_timing import N_EPOCHS, digits, fit_seconds, speed_settings
"""

import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.preprocessing import StandardScaler

#: Epochs per timed fit of the speed table (BernoulliRBM's default n_iter).
N_EPOCHS = 10
#: Timed fits per setting (the median is reported).
REPEATS = 3
#: The speed table's grid: dtypes, data, hidden units, minibatch sizes.
SPEED_DTYPES = (np.float32, np.float64)
SPEED_KINDS = ("scaled", "binarized")
SPEED_COMPONENTS = (16, 64, 256)
SPEED_BATCH_SIZES = (10, 100)
#: Streaming: (hidden units, minibatch size) of the partial_fit calls, calls per round,
#: rounds (the median is reported).
PARTIAL_FIT_SETTINGS = ((64, 10), (256, 100))
PARTIAL_FIT_CALLS = 200
PARTIAL_FIT_ROUNDS = 7
#: MNIST-sized training: rows (the first of Fashion-MNIST's training images, binarized
#: at 0.5), hidden units, minibatch size, epochs per fit, fits per setting.
N_MNIST_ROWS = 12000
MNIST_HIDDEN = 500
MNIST_BATCH_SIZE = 100
MNIST_EPOCHS = 2
MNIST_REPEATS = 3


def digits(kind, dtype):
    """The digits scaled to [0, 1] (``kind="scaled"``) or binarized at 0.5, and labels."""
    data = load_digits()
    X = data.data / 16
    if kind == "binarized":
        X = (X > 0.5).astype(float)
    return X.astype(dtype), data.target


def standardized_digits(dtype):
    """The digits as real values for a GaussianRBM: the 3 constant pixels dropped (61
    features), each standardised; and the labels."""
    data = load_digits()
    X = data.data[:, data.data.std(axis=0) > 0]
    return StandardScaler().fit_transform(X).astype(dtype), data.target


def speed_settings(kinds=SPEED_KINDS, components=SPEED_COMPONENTS,
                   batch_sizes=SPEED_BATCH_SIZES, dtypes=SPEED_DTYPES):
    """Yield ``(dtype, kind, n_components, batch_size)`` in the speed table's order."""
    for dtype in dtypes:
        for kind in kinds:
            for n_components in components:
                for batch_size in batch_sizes:
                    yield dtype, kind, n_components, batch_size


def fit_seconds(model, *data):
    """Wall seconds of ``model.fit(*data)``."""
    start = time.perf_counter()
    model.fit(*data)
    return time.perf_counter() - start


def cpu_seconds(model, *data):
    """CPU seconds of this process during ``model.fit(*data)``."""
    start = time.process_time()
    model.fit(*data)
    return time.process_time() - start


def partial_fit_call_seconds(model, X, batch_size, n_calls):
    """Wall seconds per ``partial_fit`` call on one minibatch of ``batch_size`` rows.

    One untimed call first (it sets the model up), then ``n_calls`` timed calls on
    consecutive minibatches of X.
    """
    model.partial_fit(X[:batch_size])
    start = time.perf_counter()
    for call in range(n_calls):
        first = call * batch_size % (X.shape[0] - batch_size)
        model.partial_fit(X[first : first + batch_size])
    return (time.perf_counter() - start) / n_calls
