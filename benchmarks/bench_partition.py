"""Error (against exact enumeration) and time of every log Z strategy.

Models: RBMs trained on the binarized digits (64 visible, 16 and 20 hidden), random
RBMs (64 x 16) and random general BMs (20 units) of growing weight scale. Every
strategy runs on every model ``--repeats`` times with different seeds, strategies
alternating within each repeat, in one process; the table gives medians.

Targets (DESIGN / issue): exact log Z of the 64 x 20 RBM in <= 0.5 s, of a 28-unit BM in
<= 3 s; AIS at its default settings within 0.1 nats of exact on the digits 64 x 20
model in <= 10 s.

Run:  OPENBLAS_NUM_THREADS=1 python benchmarks/bench_partition.py [--repeats 3]
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "tests"))

from sklearn.datasets import load_digits  # noqa: E402

from _machine import print_machine  # noqa: E402
from skboltz import RBM  # noqa: E402
from skboltz._energy import RBMView  # noqa: E402
from skboltz.exceptions import MeanFieldConvergenceWarning  # noqa: E402
from skboltz.partition import AIS, TAP, Exact, MeanField, VisitedStates  # noqa: E402

try:
    from _bm_reference import random_bm  # the test suite's reference BM view
except ImportError:  # pragma: no cover
    random_bm = None


def strategies():
    return {
        "exact": Exact(),
        "ais (default: linear)": AIS(),
        "ais three_stage": AIS(schedule="three_stage"),
        "mean_field": MeanField(),
        "tap": TAP(),
        "visited_states": VisitedStates(),
    }


def digits_models():
    X = (load_digits().data > 7).astype(np.float64)
    out = []
    for n_hidden in (16, 20):
        rbm = RBM(n_components=n_hidden, n_iter=30, random_state=0).fit(X)
        out.append((f"digits RBM 64x{n_hidden}", rbm._model_view(), X.mean(axis=0), X))
    return out


def random_models():
    out = []
    for scale in (0.05, 0.1, 0.2):
        rng = np.random.default_rng(int(scale * 1000))
        view = RBMView(rng.normal(0, scale, (16, 64)), rng.normal(0, scale, 64),
                       rng.normal(0, scale, 16))
        out.append((f"random RBM 64x16 w~{scale}", view, None, None))
    if random_bm is not None:
        for scale in (0.1, 0.3, 1.0):
            view = random_bm(20, 12, scale, np.random.default_rng(int(scale * 100)))
            out.append((f"random BM 20 units w~{scale}", view, None, None))
    return out


def timed(function):
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def run(repeats):
    rows = []
    for name, view, rates, X in digits_models() + random_models():
        exact = Exact().estimate(view).value
        records = {key: [] for key in strategies()}
        for repeat in range(repeats):
            items = list(strategies().items())
            if repeat % 2:  # alternate the order between repeats
                items.reverse()
            for key, estimator in items:
                rng = np.random.default_rng(1000 * repeat + 7)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", MeanFieldConvergenceWarning)
                    log_z, seconds = timed(
                        lambda: estimator.estimate(view, rng=rng, data_rates=rates)
                    )
                records[key].append((log_z.value - exact, log_z.std_error, seconds))
        exact_time = np.median([t for _, _, t in records["exact"]])
        for key, values in records.items():
            errors, ses, times = zip(*values)
            se = None if ses[0] is None else float(np.median(ses))
            rows.append((name, key, float(np.median(errors)), float(np.max(np.abs(errors))),
                         se, float(np.median(times)), float(np.median(times)) / exact_time))
        if X is not None:  # reverse AIS: conservative mean log-likelihood on 200 rows
            rows_x = X[np.random.default_rng(0).choice(X.shape[0], 200, replace=False)]
            exact_ll = np.mean(-view.astype(np.float64).free_energy(rows_x)) - exact
            reverse, seconds = timed(lambda: AIS(n_betas=1000).reverse_log_likelihood(
                view, rows_x, rng=0, data_rates=rates))
            rows.append((name, "reverse ais LL (200 rows, 1000 betas)",
                         float(np.mean(reverse) - exact_ll), float(abs(np.mean(reverse)
                                                                       - exact_ll)),
                         float(np.std(reverse) / np.sqrt(reverse.size)), seconds,
                         seconds / exact_time))
    return rows


def print_table(rows):
    header = (f"{'model':30s} {'strategy':38s} {'median err':>10s} {'max |err|':>10s} "
              f"{'median se':>10s} {'time s':>8s} {'x exact':>8s}")
    print(header)
    print("-" * len(header))
    for name, key, err, max_err, se, seconds, ratio in rows:
        se_text = "-" if se is None else f"{se:.4f}"
        print(f"{name:30s} {key:38s} {err:10.4f} {max_err:10.4f} {se_text:>10s} "
              f"{seconds:8.3f} {ratio:8.2f}")


def targets(repeats):
    print("\nTargets (medians over repeats)")
    X = (load_digits().data > 7).astype(np.float64)
    rbm = RBM(n_components=20, n_iter=30, random_state=0).fit(X)
    view = rbm._model_view()
    exact_times, ais_errors, ais_times = [], [], []
    bm = random_bm(28, 14, 0.3, np.random.default_rng(28)) if random_bm else None
    bm_times = []
    for repeat in range(repeats):
        exact, seconds = timed(lambda: Exact().estimate(view).value)
        exact_times.append(seconds)
        log_z, seconds = timed(lambda: AIS().estimate(
            view, rng=np.random.default_rng(repeat), data_rates=X.mean(axis=0)))
        ais_errors.append(abs(log_z.value - exact))
        ais_times.append(seconds)
        if bm is not None:
            bm_times.append(timed(lambda: Exact().estimate(bm))[1])
    lines = [
        ("exact log Z, digits RBM 64x20", f"{np.median(exact_times):.3f} s", "<= 0.5 s"),
        ("AIS default, digits 64x20: |err|",
         f"{np.median(ais_errors):.4f} nats (max {np.max(ais_errors):.4f})", "<= 0.1"),
        ("AIS default, digits 64x20: time", f"{np.median(ais_times):.2f} s", "<= 10 s"),
    ]
    if bm_times:
        lines.append(("exact log Z, BM 28 units", f"{np.median(bm_times):.3f} s", "<= 3 s"))
    for what, value, target in lines:
        print(f"  {what:38s} {value:34s} target {target}")
    print(f"  load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print_machine()
    print_table(run(args.repeats))
    targets(args.repeats)
