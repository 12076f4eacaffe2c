"""skboltz.RBM against scikit-learn's BernoulliRBM, side by side in one process.

Part 1, speed: the digits (scaled to [0, 1], and binarized), n_components 16, 64, 256,
batch 10 and 100, float32 and float64: BernoulliRBM (PCD-1 with batch_size chains, its
only method) against skboltz.RBM at its defaults (CD-1 with the visible units' means in
the negative statistics) and with BernoulliRBM's algorithm
(``learning=PCD(negative_visible="sample")``, column "skb PCD"). The estimators are
timed alternately (fit of N_EPOCHS epochs, wall time, median over REPEATS fits); the
table shows milliseconds per epoch and the speed-ups, and, to show what limits them,
each time as a multiple of the bare matrix products of a PCD-1 epoch (the BLAS work
BernoulliRBM does; CD-1 and skboltz's PCD-1 do the same).

Also: streaming, the time of one partial_fit call on one minibatch (every call
validates its input and records a history_ entry, as fit does per epoch; the
divergence check runs once the calls since it last ran have trained on 256 rows).

And MNIST-sized training: 784 visible units (real images: the first 12,000 of
Fashion-MNIST's 60,000 training images, binarized at 0.5,
``_data.images_784("fashion-binary")``; skipped, with how to get them, when the files
are missing), 500 hidden units, batch 100:
seconds per epoch of BernoulliRBM (with the BLAS threads a process gets by default, one
per core) and of skboltz choosing its own, with CD-1 (``learning="cd"``, visible means;
the previous default) and with BernoulliRBM's
PCD-1, against the bare matrix products of a PCD-1 epoch with 1 and with 2 BLAS threads;
then the same skboltz fits with one BLAS thread in CPU time against the products' CPU
time (a ratio the machine's other jobs hardly move).

Part 2, quality: the exact held-out log-likelihood (16 hidden units, so log Z is exact
by enumerating 2**16 hidden states) of skboltz.RBM(n_components=16) with its defaults
against BernoulliRBM(n_components=16) with its defaults, on a 75/25 split, mean and
standard deviation over SEEDS seeds: at equal epochs, and at equal wall time (skboltz
trains epoch by epoch with partial_fit, its overhead included, until it has used the
time BernoulliRBM took for its epochs). skboltz's defaults (CD-1 with the visible
units' means in the negative statistics, weight decay, and iterate averaging: its
fitted parameters are a moving average of the updates, where BernoulliRBM keeps the
last one) differ from BernoulliRBM's PCD-1 (see skboltz.RBM's Notes). The target:
skboltz better in every row (the last line says how many).

Run from the repository root:  python benchmarks/bench_rbm_vs_sklearn.py
(all parts), or pick parts: --speed, --partial-fit, --mnist, --quality
(--speed-only is --speed --partial-fit, --quality-only is --quality).
"""

import argparse
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: one BLAS thread

import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's skboltz

import numpy as np
from _data import available_images_784, images_784
from _epoch_timing import (
    MNIST_BATCH_SIZE,
    MNIST_EPOCHS,
    MNIST_HIDDEN,
    MNIST_REPEATS,
    N_EPOCHS,
    N_MNIST_ROWS,
    PARTIAL_FIT_CALLS,
    PARTIAL_FIT_ROUNDS,
    PARTIAL_FIT_SETTINGS,
    REPEATS,
    cpu_seconds,
    digits,
    fit_seconds,
    partial_fit_call_seconds,
    speed_settings,
)
from _machine import print_machine
from sklearn.model_selection import train_test_split
from sklearn.neural_network import BernoulliRBM
from threadpoolctl import threadpool_limits

from skboltz import RBM
from skboltz.models._rbm_energy import RBMView
from skboltz.learning import PCD
from skboltz.partition import Exact

SEEDS = 5
QUALITY_EPOCHS = (5, 10, 20)


def floor_operands(X, n_components, batch_size):
    """The operands of the floor's products: weights, data and chain rows stacked,
    the hidden probabilities of both, the chains' hidden states."""
    weights = np.full((X.shape[1], n_components), 0.01, dtype=X.dtype)
    stacked = np.ascontiguousarray(np.vstack([X[:batch_size], X[:batch_size]]))
    hidden = np.full((2 * batch_size, n_components), 0.5, dtype=X.dtype)
    return weights, stacked, hidden, hidden[:batch_size].copy()


def matrix_product_floor(X, n_components, batch_size, repeats=50):
    """Seconds per epoch of the bare matrix products a PCD-1 epoch cannot avoid.

    Each update needs five products of batch x visible x hidden multiply-adds (hidden
    inputs of data and of chains, visible inputs of the chains, both gradient terms),
    here in three calls on stacked rows, the cheapest numpy form. Everything else an
    implementation spends (random numbers, elementwise work, call overhead, set-up)
    is on top of this floor; a speed-up over BernoulliRBM cannot exceed sklearn's
    time over the floor.
    """
    weights, stacked, hidden, chains_hidden = floor_operands(X, n_components, batch_size)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        stacked @ weights
        chains_hidden @ weights.T
        stacked.T @ hidden
        times.append(time.perf_counter() - start)
    return np.median(times) * int(np.ceil(X.shape[0] / batch_size))


def speed_table(repeats=REPEATS):
    print(f"Per-epoch time (ms; fit of {N_EPOCHS} epochs, median of {repeats}, alternating)")
    print("floor: the bare matrix products of a PCD-1 epoch (benchmarks' "
          "matrix_product_floor); x floor: each implementation's time over it")
    header = (f"{'data':10s} {'dtype':8s} {'hidden':>6s} {'batch':>5s} {'sklearn':>9s} "
              f"{'skboltz':>9s} {'speed-up':>9s} {'skb PCD':>9s} {'speed-up':>9s} "
              f"{'floor':>7s} {'x floor sk/skb':>15s}")
    print(header)
    print("-" * len(header))
    ratios, same_algorithm = {}, {}
    for dtype, kind, n_components, batch_size in speed_settings():
        X, _ = digits(kind, dtype)
        settings = dict(n_components=n_components, batch_size=batch_size, n_iter=N_EPOCHS)
        times = {"sklearn": [], "skboltz": [], "skb PCD": []}
        for repeat in range(repeats):
            times["sklearn"].append(
                fit_seconds(BernoulliRBM(random_state=repeat, **settings), X))
            times["skboltz"].append(fit_seconds(RBM(random_state=repeat, **settings), X))
            times["skb PCD"].append(fit_seconds(RBM(
                learning=PCD(negative_visible="sample"), random_state=repeat, **settings), X))
        sk, skb, pcd = (np.median(times[k]) / N_EPOCHS * 1e3 for k in times)
        floor = matrix_product_floor(X, n_components, batch_size) * 1e3
        key = (np.dtype(dtype).name, kind, n_components, batch_size)
        ratios[key], same_algorithm[key] = sk / skb, sk / pcd
        print(f"{kind:10s} {np.dtype(dtype).name:8s} {n_components:6d} "
              f"{batch_size:5d} {sk:9.2f} {skb:9.2f} {sk / skb:8.2f}x "
              f"{pcd:9.2f} {sk / pcd:8.2f}x "
              f"{floor:7.2f} {sk / floor:7.1f}/{skb / floor:<7.1f}", flush=True)
    for label, speed_ups in (("defaults", ratios),
                             ("BernoulliRBM's algorithm", same_algorithm)):
        f32 = [r for key, r in speed_ups.items() if key[0] == "float32"]
        f64 = [r for key, r in speed_ups.items() if key[0] == "float64"]
        print(f"\nskboltz {label}: median speed-up at float32: {np.median(f32):.2f}x "
              f"(target >= 2.5x); at float64: {np.median(f64):.2f}x (target >= 2x); "
              f"smallest speed-up over all settings: {min(speed_ups.values()):.2f}x "
              "(target >= 1x)")
    print()


def floor_cpu_seconds(X, n_components, batch_size):
    """CPU seconds of the bare products of one PCD-1 epoch, run as an epoch runs them
    (one after the other, not a median of repeats): the floor of the CPU-time table."""
    weights, stacked, hidden, chains_hidden = floor_operands(X, n_components, batch_size)
    start = time.process_time()
    for _ in range(int(np.ceil(X.shape[0] / batch_size))):
        stacked @ weights
        chains_hidden @ weights.T
        stacked.T @ hidden
    return time.process_time() - start


def mnist_table(n_hidden=MNIST_HIDDEN, batch_size=MNIST_BATCH_SIZE, n_epochs=MNIST_EPOCHS,
                repeats=MNIST_REPEATS):
    """Seconds per epoch at MNIST size, alternating; floors with 1 and 2 BLAS threads.

    skboltz with CD-1 (``learning="cd"``, visible means) and with BernoulliRBM's
    algorithm (PCD-1, sampled visible states; the issue's row). Then the same fits
    with one BLAS thread in CPU time (``time.process_time``), against the floor's CPU
    time: what the elementwise work and the overheads add to the products, a ratio
    that other jobs on the machine hardly move (wall times with two threads on a
    shared machine mostly measure the other jobs).
    """
    if not available_images_784(["fashion-binary"]):
        print("(the MNIST-sized part is skipped)\n")
        return
    default_threads = os.cpu_count()  # what OpenBLAS uses unless told otherwise
    print(f"MNIST-sized training: 784 visible, {n_hidden} hidden, batch {batch_size}, "
          f"{N_MNIST_ROWS} rows: Fashion-MNIST's first training images, binarized at 0.5 "
          f"(s per epoch; fit of {n_epochs} epochs, median of {repeats}, alternating)")
    print(f"sklearn runs with BLAS at {default_threads} threads (a process's default); "
          "skboltz chooses its own; floor 1t / 2t: the bare products with 1 / 2 threads; "
          "CD-1: learning='cd' (visible means), "
          "PCD-1: learning=PCD(negative_visible='sample')")
    header = (f"{'dtype':8s} {'sklearn':>8s} {'CD-1':>8s} {'PCD-1':>8s} {'speed-up':>9s} "
              f"{'floor 1t':>9s} {'floor 2t':>9s} {'CD-1 / best':>12s} {'PCD-1 / best':>13s}")
    print(header)
    print("-" * len(header))
    learnings = {"CD-1": "cd", "PCD-1": PCD(negative_visible="sample")}
    cpu_rows = []
    for dtype in (np.float32, np.float64):
        X = images_784("fashion-binary", dtype=dtype, n_train=N_MNIST_ROWS)[0]
        settings = dict(n_components=n_hidden, batch_size=batch_size, n_iter=n_epochs)
        times = {"sklearn": [], "CD-1": [], "PCD-1": []}
        cpu = {"floor": [], "CD-1": [], "PCD-1": []}
        with threadpool_limits(limits=default_threads, user_api="blas"):
            for repeat in range(repeats):
                times["sklearn"].append(
                    fit_seconds(BernoulliRBM(random_state=repeat, **settings), X))
                for name, learning in learnings.items():
                    times[name].append(fit_seconds(
                        RBM(learning=learning, random_state=repeat, **settings), X))
        with threadpool_limits(limits=1, user_api="blas"):
            for repeat in range(repeats):
                cpu["floor"].append(floor_cpu_seconds(X, n_hidden, batch_size))
                for name, learning in learnings.items():
                    cpu[name].append(cpu_seconds(
                        RBM(learning=learning, random_state=repeat, **settings), X))
        sk, cd, pcd = (np.median(times[k]) / n_epochs for k in times)
        floors = []
        for threads in (1, 2):
            with threadpool_limits(limits=threads, user_api="blas"):
                floors.append(matrix_product_floor(X, n_hidden, batch_size, repeats=20))
        best = min(floors)
        print(f"{np.dtype(dtype).name:8s} {sk:8.3f} {cd:8.3f} {pcd:8.3f} {sk / pcd:8.2f}x "
              f"{floors[0]:9.3f} {floors[1]:9.3f} {cd / best:11.2f}x {pcd / best:12.2f}x",
              flush=True)
        floor_cpu = np.median(cpu["floor"])
        cpu_rows.append(
            f"{np.dtype(dtype).name:8s} {floor_cpu:9.3f} "
            + " ".join(f"{np.median(cpu[k]) / n_epochs:8.3f} "
                       f"{np.median(cpu[k]) / n_epochs / floor_cpu:6.2f}x"
                       for k in learnings))
    print("speed-up: sklearn over PCD-1 (the same algorithm); target: x best floor <= 1.15")
    print("\nThe same fits with 1 BLAS thread, CPU seconds per epoch (median of "
          f"{repeats}) against the floor's CPU seconds")
    header = (f"{'dtype':8s} {'floor':>9s} {'CD-1':>8s} {'x floor':>7s} {'PCD-1':>8s} "
              f"{'x floor':>7s}")
    print(header)
    print("-" * len(header))
    print("\n".join(cpu_rows) + "\n")


def partial_fit_table(n_calls=PARTIAL_FIT_CALLS, rounds=PARTIAL_FIT_ROUNDS):
    """Streaming: microseconds per partial_fit call on one minibatch, alternating."""
    print(f"partial_fit on one minibatch (us per call; median of {rounds} rounds of "
          f"{n_calls} calls, alternating)")
    header = (f"{'dtype':8s} {'hidden':>6s} {'batch':>5s} {'sklearn':>9s} {'skboltz':>9s} "
              f"{'speed-up':>9s}")
    print(header)
    print("-" * len(header))
    for dtype in (np.float32, np.float64):
        X, _ = digits("scaled", dtype)
        for n_components, batch_size in PARTIAL_FIT_SETTINGS:
            times = {"sklearn": [], "skboltz": []}
            for _ in range(rounds):
                for name, cls in (("sklearn", BernoulliRBM), ("skboltz", RBM)):
                    model = cls(n_components=n_components, batch_size=batch_size,
                                random_state=0)
                    times[name].append(
                        partial_fit_call_seconds(model, X, batch_size, n_calls) * 1e6)
            sk, skb = np.median(times["sklearn"]), np.median(times["skboltz"])
            print(f"{np.dtype(dtype).name:8s} {n_components:6d} {batch_size:5d} "
                  f"{sk:9.0f} {skb:9.0f} {sk / skb:8.2f}x", flush=True)
    print("targets: speed-up >= 1x at batch 10, >= 1.3x at batch 100\n")


def held_out_log_likelihood(weights, visible_bias, hidden_bias, X):
    """Mean exact log p(x) of the rows of X, log Z by enumeration (float64)."""
    view = RBMView(*(np.asarray(a, dtype=np.float64)
                     for a in (weights, visible_bias, hidden_bias)))
    log_z = Exact().estimate(view).value
    return float(np.mean(-view.free_energy(X.astype(np.float64)))) - log_z


def log_likelihood_of(model, X):
    return held_out_log_likelihood(model.components_, model.intercept_visible_,
                                   model.intercept_hidden_, X)


def epoch_range(epochs):
    """Median epochs and, since each seed's budget is one timing on a noisy machine,
    their range (a seed given few epochs widens the spread of the row)."""
    return f"{int(np.median(epochs))} ({min(epochs)}-{max(epochs)})"


def quality_table(dtype=np.float32):
    print(f"Exact held-out log-likelihood, nats per image (16 hidden units, "
          f"{np.dtype(dtype).name}; mean +- sd over {SEEDS} seeds; higher is better)")
    print("BernoulliRBM(n_components=16) and skboltz.RBM(n_components=16), other "
          "settings at their defaults (n_iter varied for equal epochs)")
    header = (f"{'data':10s} {'comparison':22s} {'sklearn':>15s} {'skboltz':>15s} "
              f"{'skboltz epochs':>17s} {'better':>8s}")
    print(header)
    print("-" * len(header))
    wins = []

    def row(kind, comparison, sk, skb, epochs):
        wins.append(np.mean(skb) > np.mean(sk))  # a nan (no epoch in time) is a loss
        print(f"{kind:10s} {comparison:22s} {np.mean(sk):8.2f} +- {np.std(sk):4.2f} "
              f"{np.mean(skb):8.2f} +- {np.std(skb):4.2f} {epochs:>17s} "
              f"{'skboltz' if wins[-1] else 'sklearn':>8s}", flush=True)

    for kind in ("scaled", "binarized"):
        X, y = digits(kind, dtype)
        X_train, X_test = train_test_split(X, test_size=0.25, random_state=0, stratify=y)
        for n_epochs in QUALITY_EPOCHS:
            sk, skb, sk_time, skb_epochs = [], [], [], []
            for seed in range(SEEDS):
                model = BernoulliRBM(n_components=16, n_iter=n_epochs, random_state=seed)
                sk_time.append(fit_seconds(model, X_train))
                sk.append(log_likelihood_of(model, X_test))
                model = RBM(n_components=16, n_iter=n_epochs, random_state=seed)
                model.fit(X_train)
                skb.append(log_likelihood_of(model, X_test))
            row(kind, f"equal epochs ({n_epochs})", sk, skb, str(n_epochs))
            # Equal wall time: skboltz gets the time BernoulliRBM just took, per seed.
            skb = []
            for seed, budget in enumerate(sk_time):
                model = RBM(n_components=16, random_state=seed)
                used, epochs, snapshot = 0.0, 0, None
                while True:
                    start = time.perf_counter()
                    model.partial_fit(X_train)
                    used += time.perf_counter() - start
                    if used > budget:
                        break
                    epochs += 1
                    snapshot = (model.components_, model.intercept_visible_,
                                model.intercept_hidden_)
                skb_epochs.append(epochs)
                skb.append(held_out_log_likelihood(*snapshot, X_test) if snapshot
                           else np.nan)
            row(kind, f"equal time ({np.median(sk_time) * 1e3:.0f} ms)", sk, skb,
                epoch_range(skb_epochs))
    print(f"target: skboltz's defaults better than BernoulliRBM's in every row: "
          f"{sum(wins)} of {len(wins)} rows, {'MET' if all(wins) else 'MISSED'}")


PARTS = {"speed": speed_table, "partial_fit": partial_fit_table, "mnist": mnist_table,
         "quality": quality_table}

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for part in PARTS:
        parser.add_argument(f"--{part.replace('_', '-')}", action="store_true",
                            help=f"run the {part.replace('_', ' ')} part (default: all)")
    parser.add_argument("--speed-only", action="store_true",
                        help="the speed and partial_fit parts")
    parser.add_argument("--quality-only", action="store_true", help="the quality part")
    parser.add_argument("--repeats", type=int, default=REPEATS,
                        help="fits per setting in the speed table (median; more on a busy "
                        "machine)")
    args = parser.parse_args()
    args.speed |= args.speed_only
    args.partial_fit |= args.speed_only
    args.quality |= args.quality_only
    chosen = [part for part in PARTS if getattr(args, part)] or list(PARTS)
    warnings.simplefilter("ignore", category=UserWarning)
    start = time.perf_counter()
    print_machine()
    for part in chosen:
        PARTS[part](**({"repeats": args.repeats} if part == "speed" else {}))
    print(f"\ntotal {time.perf_counter() - start:.0f} s; load average after: "
          "%.2f %.2f %.2f" % os.getloadavg())
