"""RBM epochs and AIS log Z: NumPy on the CPU against torch on CUDA (and on the CPU).

One short script for a machine with a GPU (a few minutes at the default sizes): CD-1
epochs of ``RBM(500)`` on Fashion-MNIST-sized float32 data (60,000 x 784: the real
images when the Debian package ``dataset-fashion-mnist`` is installed, otherwise
generated grey images of that size) at minibatches of 10, 100 and 1000,

- NumPy on the CPU cores (the fused loop; BLAS on every core),
- torch on CUDA under ``sklearn.config_context(array_api_dispatch=True)``,
- torch on the CPU cores under dispatch (its thread pool runs the elementwise work on
  every core too),

then AIS log Z of a fitted model on the NumPy path and on CUDA (the same fixed
schedule), and, where ``learnergy`` is installed, its CD-1 epoch at the same settings
on the same GPU. Then one epoch of each other restricted estimator at its default
learning strategy (batch 100, the first 10,000 rows; ``--no-others`` skips them):
``RBM(500)`` with parallel tempering (10 temperatures), ``GaussianRBM(500)`` on the
standardised pixels that vary, ``CategoricalRBM(500)`` on the pixels cut into four
grey levels (3,136 softmax units) and ``TabularRBM(500)`` on half the varying pixels
standardised beside as many four-level ones. Prints the machine, the device and the ratios side by side. The
epoch time is each fit's ``history_["time"][0]`` (the epoch alone, without
validation).

Usage::

    SCIPY_ARRAY_API=1 python benchmarks/bench_gpu.py            # the GPU run
    SCIPY_ARRAY_API=1 python benchmarks/bench_gpu.py --small    # a check on a CPU

``--small`` runs 3,000 x 784 rows, 64 hidden units and AIS with 100 betas, in seconds.
On a busy machine give torch fewer CPU threads (``--torch-threads 1``): on the shared
2-core development machine its default threads made torch CPU epochs 10-100 times
slower than with one thread.
"""

import argparse
import os
import sys
import time
import warnings

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # scikit-learn's dispatch needs it

import numpy as np  # noqa: E402
from sklearn import config_context  # noqa: E402

from _machine import print_machine  # noqa: E402

from skboltz import RBM, CategoricalRBM, GaussianRBM, TabularRBM  # noqa: E402
from skboltz.exceptions import DegenerateModelWarning, LogZAccuracyWarning  # noqa: E402
from skboltz.partition import AIS  # noqa: E402


def data(n_rows, dtype=np.float32):
    """Fashion-MNIST's first ``n_rows`` training images, or generated ones."""
    try:
        from _data import fashion_mnist

        X = fashion_mnist(dtype=dtype, n_train=n_rows, n_test=1)[0]
        if len(X) == n_rows:
            return X, "Fashion-MNIST"
    except (FileNotFoundError, ImportError):
        pass
    rng = np.random.default_rng(0)
    # grey images with a few bright blobs' worth of correlated pixels
    prototypes = rng.random((10, 784)) ** 3
    X = np.clip(prototypes[rng.integers(0, 10, n_rows)]
                + 0.2 * rng.standard_normal((n_rows, 784)), 0, 1)
    return X.astype(dtype), "generated"


def epoch_seconds(X, n_hidden, batch_size):
    """One CD-1 epoch of ``RBM(n_hidden)`` at ``batch_size`` (any namespace)."""
    rbm = RBM(n_components=n_hidden, learning="cd", batch_size=batch_size, n_iter=1,
              random_state=0)
    rbm.fit(X)
    return rbm.history_["time"][0], rbm


def other_estimators(X, n_hidden):
    """(name, make, rows) of the other restricted estimators' epochs: each at its
    default learning strategy, batch 100."""
    varying = X[:, X.std(axis=0) > 0]  # a Gaussian unit refuses a constant pixel
    standardised = ((varying - varying.mean(axis=0)) / varying.std(axis=0)).astype(X.dtype)
    levels = np.minimum((X * 4).astype(np.int64), 3).astype(X.dtype)  # codes 0..3
    half = standardised.shape[1] // 2
    mixed = np.hstack([standardised[:, :half], levels[:, :half]])
    settings = dict(n_components=n_hidden, batch_size=100, n_iter=1, random_state=0)
    return [
        ("RBM, pt (10 temperatures)", lambda: RBM(learning="pt", **settings), X),
        ("GaussianRBM (pt)", lambda: GaussianRBM(**settings), standardised),
        ("CategoricalRBM (pcd)", lambda: CategoricalRBM(**settings), levels),
        ("TabularRBM (pt)", lambda: TabularRBM(
            categorical_features=list(range(half, 2 * half)), **settings), mixed),
    ]


def learnergy_epoch(X, n_hidden, batch_size, device):
    """learnergy's CD-1 epoch at the same settings, or None where it is absent."""
    try:
        import torch
        from learnergy.models.bernoulli import RBM as LearnergyRBM
    except ImportError:
        return None
    model = LearnergyRBM(n_visible=X.shape[1], n_hidden=n_hidden, steps=1,
                         learning_rate=0.1, use_gpu=device == "cuda")
    dataset = torch.utils.data.TensorDataset(torch.asarray(X), torch.zeros(len(X)))
    start = time.perf_counter()
    model.fit(dataset, batch_size=batch_size, epochs=1)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true",
                        help="3,000 rows, 64 hidden units, 100 AIS betas (a CPU check)")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--no-others", action="store_true",
                        help="skip the other restricted estimators' epochs")
    parser.add_argument("--torch-threads", type=int, default=None,
                        help="torch's CPU threads (default: its own choice); on a "
                             "loaded machine its spinning threads can slow it tenfold")
    args = parser.parse_args()
    n_rows, n_hidden, n_betas = (3000, 64, 100) if args.small else (60000, 500, 1000)

    print_machine()
    try:
        import torch
    except ImportError:
        sys.exit("torch is not installed: this benchmark times torch against NumPy.")
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    cuda = torch.cuda.is_available()
    print(f"torch {torch.__version__}; device: "
          + (torch.cuda.get_device_name(0) if cuda else "no CUDA device (CPU only)")
          + f"; torch CPU threads: {torch.get_num_threads()}")
    X, source = data(n_rows)
    print(f"data: {source}, {X.shape[0]} x {X.shape[1]} float32; RBM({n_hidden}), CD-1, "
          "one epoch per setting\n")

    devices = (["cuda"] if cuda else []) + ["cpu"]
    if cuda:  # start CUDA and its kernels before timing
        with config_context(array_api_dispatch=True):
            epoch_seconds(torch.asarray(X[:500], device="cuda"), n_hidden, 100)

    rows = []
    for batch_size in args.batch_sizes:
        row = {"batch": batch_size, "numpy": epoch_seconds(X, n_hidden, batch_size)[0]}
        for device in devices:
            with config_context(array_api_dispatch=True):
                row[f"torch {device}"] = epoch_seconds(
                    torch.asarray(X, device=device), n_hidden, batch_size)[0]
        if cuda:
            row["learnergy cuda"] = learnergy_epoch(X, n_hidden, batch_size, "cuda")
        rows.append(row)
        print("  " + ", ".join(f"{k}: {v:.3g}" if isinstance(v, float) else f"{k}: {v}"
                               for k, v in row.items()), flush=True)

    columns = [key for key in rows[0] if key != "batch"]
    print("\nepoch seconds (ratio: NumPy time / this time; > 1 is faster than NumPy)")
    print(f"{'batch':>6} " + " ".join(f"{c:>22}" for c in columns))
    for row in rows:
        cells = []
        for column in columns:
            value = row[column]
            cells.append(f"{'-':>22}" if value is None else
                         f"{value:>10.3f} (x{row['numpy'] / value:>7.2f})")
        print(f"{row['batch']:>6} " + " ".join(cells))

    # AIS log Z of a model fitted at batch 100, the same fixed schedule on both paths
    ais = AIS(n_chains=100, n_betas=n_betas, schedule="three_stage", max_time=None,
              target_std_error=None)
    numpy_model = epoch_seconds(X, n_hidden, 100)[1]
    start = time.perf_counter()
    with warnings.catch_warnings():  # a fixed schedule: its LogZ says if unconverged
        warnings.simplefilter("ignore", LogZAccuracyWarning)
        numpy_log_z = numpy_model.estimate_log_partition(ais)
    numpy_seconds = time.perf_counter() - start
    device = devices[0]
    with config_context(array_api_dispatch=True):
        model = epoch_seconds(torch.asarray(X, device=device), n_hidden, 100)[1]
        start = time.perf_counter()
        log_z = model.estimate_log_partition(ais)
        seconds = time.perf_counter() - start
    print(f"\nAIS log Z ({ais.n_chains} chains, {n_betas} betas, three-stage schedule):")
    print(f"  NumPy CPU: {numpy_seconds:.3f} s, {numpy_log_z}")
    print(f"  torch {device}: {seconds:.3f} s, {log_z} (x{numpy_seconds / seconds:.2f})")
    print("  (two fits from different random streams: their log Z differ as fits do)")

    if args.no_others:
        return
    n_others = 1000 if args.small else 10000
    print(f"\nother restricted estimators: one epoch, batch 100, {n_others} rows "
          "(ratio: NumPy time / this time)")
    for name, make, rows in other_estimators(X[:n_others], n_hidden):
        with warnings.catch_warnings():  # one epoch: a timing, not a model
            warnings.simplefilter("ignore", DegenerateModelWarning)
            numpy_seconds = make().fit(rows).history_["time"][0]
        cells = [f"NumPy {numpy_seconds:.3f} s"]
        for device in devices:
            with config_context(array_api_dispatch=True):
                seconds = make().fit(torch.asarray(rows, device=device)).history_["time"][0]
            cells.append(f"torch {device} {seconds:.3f} s (x{numpy_seconds / seconds:.2f})")
        print(f"  {name:<28} " + "   ".join(cells), flush=True)


if __name__ == "__main__":
    main()
