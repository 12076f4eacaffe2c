"""log Z estimators: the targets of the log-likelihood issue, before and after, one run.

Prints the CPU (and numpy's SIMD level), then one row per target with the value
measured now and with the previous defaults ("before"), and MET / MISSED:

- default ``score`` of the default ``RBM()`` (256 hidden) on the digits X/16;
- AIS at its defaults on a digits-trained 64 x 20 RBM, several seeds, against exact;
- AIS with ``target_std_error=0.1`` on a 784 x 500 RBM trained on MNIST-sized data
  built from the digits (upsampled to 28 x 28, binarized, 1 % of the bits flipped), with
  a budget of ``MNIST_BUDGET`` seconds (``max_time``): the standard error reached in it;
- ``GridSearchCV(RBM(), {"n_components": [64, 128, 256]}, cv=3)`` on the digits with
  the default scorer: total time and the share spent estimating log Z;
- exact log Z of a 64 x 20 RBM and of a fully connected 28-unit BM;
- TAP and naive mean field against exact.

"Before" is the code path of the previous defaults kept here as small reference
functions: AIS with 100 chains x 10,000 betas in float64 through the models'
``interpolate`` / ``log_unnormalized`` / ``gibbs_step`` (uniform hidden base), exact
enumeration with one softplus (exp and log1p) per state and unit, the split-half BM
sum with one exponential per state, damped parallel TAP iteration. Then a table of
every estimator on every model (errors against exact, medians over ``--repeats``).

Run:  OPENBLAS_NUM_THREADS=1 python benchmarks/bench_partition.py [--repeats 3]
      [--skip-before]  (the "before" runs take several minutes)
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "tests"))

from _machine import machine_line, print_machine  # noqa: E402
from scipy.ndimage import zoom  # noqa: E402
from scipy.special import logsumexp  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402

import skboltz._base  # noqa: E402
from skboltz import RBM  # noqa: E402
from skboltz._boltzmann_energy import BMView
from skboltz._energy import binary_states, sigmoid, softplus_row_sums
from skboltz._rbm_energy import RBMView
from skboltz.exceptions import MeanFieldConvergenceWarning  # noqa: E402
from skboltz.partition import AIS, TAP, Exact, MeanField, VisitedStates  # noqa: E402
from skboltz.partition._ais import _InterpolatedChains, anneal_forward, beta_schedule  # noqa: E402
from skboltz.partition._mean_field import mean_field_free_energy  # noqa: E402

try:
    from _bm_reference import random_bm  # the test suite's reference BM view
except ImportError:  # pragma: no cover
    random_bm = None


def timed(function):
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


# -- "before": the previous defaults' code paths ----------------------------------------
class _GenericView:
    """Hides a view's own fast paths, so AIS runs the generic float64 code."""

    def __init__(self, view):
        self._view = view

    def __getattr__(self, name):
        if name in ("annealing", "annealing_base"):
            raise AttributeError(name)
        return getattr(self._view, name)


def ais_before(view, data_rates, rng):
    """The previous default: 100 chains x 10,000 betas, float64, uniform hidden base."""
    base = view.base_bias_from_rates(data_rates)
    log_w = anneal_forward(_InterpolatedChains(view, base, 100, np.random.default_rng(rng)),
                           beta_schedule(10000, "linear"))
    shift = log_w.max()
    w = np.exp(log_w - shift)
    value = view.base_log_partition(base) + shift + np.log(w.mean())
    return value, w.std(ddof=1) / w.mean() / np.sqrt(w.size)


def exact_rbm_before(view, chunk_size=4096):
    """One softplus (exp and log1p, float64) per enumerated state and unit."""
    view = view.astype(np.float64)
    if view.n_visible <= view.n_hidden:
        to_other, bias, other_bias = view.weights.T, view.visible_bias, view.hidden_bias
    else:
        to_other, bias, other_bias = view.weights, view.hidden_bias, view.visible_bias
    n_units = view.n_enumerated_units
    n_low = min(n_units, int(chunk_size).bit_length() - 1)
    low = binary_states(n_low)
    low_input = low @ to_other[:n_low] + other_bias
    low_linear = low @ bias[:n_low]
    chunks = []
    for high in binary_states(n_units - n_low):
        x = low_input + high @ to_other[n_low:]
        chunks.append(logsumexp(low_linear + high @ bias[n_low:]
                                + softplus_row_sums(x, overwrite=True)))
    return float(logsumexp(chunks))


def exact_bm_before(coupling, bias, block_states=2**18):
    """Split-half enumeration with one exponential per joint state."""
    n_units = bias.shape[0]
    n_a = n_units // 2
    states_b = binary_states(n_units - n_a)
    log_b = 0.5 * np.einsum("ni,ni->n", states_b @ coupling[n_a:, n_a:], states_b)
    log_b += states_b @ bias[n_a:]
    projected_b = coupling[:n_a, n_a:] @ states_b.T
    rows = max(1, block_states // states_b.shape[0])
    parts = []
    for start in range(0, 2**n_a, rows):
        states_a = binary_states(n_a, start, min(start + rows, 2**n_a))
        log_a = 0.5 * np.einsum("ni,ni->n", states_a @ coupling[:n_a, :n_a], states_a)
        log_a += states_a @ bias[:n_a]
        block = states_a @ projected_b + log_b
        parts.append(log_a + logsumexp(block, axis=1))
    return float(logsumexp(np.concatenate(parts)))


def tap_before(view, data_rates, damping=0.5, max_iter=1000, tol=1e-10):
    """Damped parallel iteration of the TAP equations from the data rates."""
    coupling, bias = view.coupling_matrix(), view.bias_vector()
    m = sigmoid(bias.copy())
    if data_rates is not None:
        m[: view.n_visible] = np.clip(data_rates, 1e-3, 1 - 1e-3)
    squared = coupling**2
    for _ in range(max_iter):
        target = sigmoid(coupling @ m + bias + (0.5 - m) * (squared @ (m * (1 - m))))
        change = np.max(np.abs(target - m))
        m += damping * (target - m)
        if change < tol:
            break
    return mean_field_free_energy(coupling, bias, m, order=2)


# -- data and models ----------------------------------------------------------------
def digits_scaled():
    return load_digits().data / 16.0


def digits_binary():
    return (load_digits().data > 7).astype(np.float64)


def mnist_like(n_rows=12000, seed=0):
    """MNIST-sized rows from the digits: 20 x 20 in a 28 x 28 frame, binarized, 1 % flips."""
    rng = np.random.default_rng(seed)
    images = load_digits().images / 16.0
    big = np.pad(np.stack([zoom(image, 2.5, order=1) for image in images]),
                 ((0, 0), (4, 4), (4, 4)))
    X = (big[rng.integers(0, len(big), n_rows)].reshape(n_rows, -1) > 0.5)
    flips = rng.random(X.shape) < 0.01
    return (X ^ flips).astype(np.float32)


def digits_rbm(n_hidden, n_iter=30):
    X = digits_binary()
    rbm = RBM(n_components=n_hidden, n_iter=n_iter, random_state=0).fit(X)
    return rbm._model_view(), X.mean(axis=0)


# -- the targets ----------------------------------------------------------------------
def verdict(ok):
    return "MET" if ok else "MISSED"


def target_default_score(rows, skip_before):
    X = digits_scaled()
    rbm = RBM(random_state=0).fit(X)
    score, seconds = timed(lambda: rbm.score(X))
    log_z = rbm.estimate_log_partition()
    before = "-"
    if not skip_before:
        (value, se), before_seconds = timed(lambda: ais_before(
            rbm._model_view(), rbm._training_state.data_rates, 0))
        before = f"{before_seconds:.1f} s, se {se:.3f}"
    ok = seconds <= 2 and log_z.std_error <= 0.02
    rows.append(("default score, RBM() 64x256 on digits X/16",
                 f"{seconds:.2f} s, se {log_z.std_error:.3f} "
                 f"({log_z.cost['n_chains']} chains x {log_z.cost['n_betas']} betas, "
                 f"{log_z.cost['hidden_base']} hidden base)",
                 before, "<= 2 s, se <= 0.02", verdict(ok)))


def target_ais_64x20(rows, skip_before, seeds=5):
    view, rates = digits_rbm(20)
    exact = Exact().estimate(view).value
    times, ses, z_scores = [], [], []
    for seed in range(seeds):
        log_z, seconds = timed(lambda: AIS().estimate(view, rng=seed, data_rates=rates))
        times.append(seconds)
        ses.append(log_z.std_error)
        z_scores.append((log_z.value - exact) / log_z.std_error)
    covered = sum(abs(z) <= 3 for z in z_scores)
    before = "-"
    if not skip_before:
        (value, se), before_seconds = timed(lambda: ais_before(view, rates, 0))
        before = f"{before_seconds:.1f} s, se {se:.3f}, err {value - exact:+.3f}"
    ok = max(times) <= 1 and max(ses) <= 0.02 and covered == seeds
    rows.append((f"AIS default, binarized digits 64x20 ({seeds} seeds)",
                 f"max {max(times):.2f} s, max se {max(ses):.3f}, err/se "
                 f"{' '.join(f'{z:+.1f}' for z in z_scores)}; exact in 3 se: "
                 f"{covered}/{seeds}", before, "<= 1 s, se <= 0.02, covered", verdict(ok)))


#: Seconds AIS may spend on the 784 x 500 model (twice the target's 60 s): without a
#: budget the estimate of a one-epoch model with the current defaults ran over 20 min.
MNIST_BUDGET = 120


def target_mnist(rows, skip_before):
    X = mnist_like()
    rbm, fit_seconds = timed(lambda: RBM(n_components=500, n_iter=1, random_state=0).fit(X))
    view, rates = rbm._model_view(), rbm._training_state.data_rates
    log_z, seconds = timed(lambda: AIS(target_std_error=0.1, max_time=MNIST_BUDGET).estimate(
        view, rng=0, data_rates=rates))
    cost = log_z.cost
    rows.append((f"AIS(target_std_error=0.1, max_time={MNIST_BUDGET}), 784x500 MNIST-like",
                 f"{seconds:.1f} s, se {log_z.std_error:.3f}, log Z {log_z.value:.2f} "
                 f"({cost['n_chains']} x {cost['n_betas']}, {cost['hidden_base']}, spread "
                 f"{cost['log_weight_spread']:.2f}; fit {fit_seconds:.0f} s)",
                 "-", "<= 60 s, se <= 0.1",
                 verdict(seconds <= 60 and log_z.std_error <= 0.1)))
    if not skip_before:  # the old default, cut at 100 betas x 100 chains (x100 for 10k)
        base = view.base_bias_from_rates(rates)
        log_w, before_seconds = timed(lambda: anneal_forward(
            _InterpolatedChains(view, base, 100, np.random.default_rng(0)),
            beta_schedule(101, "linear")))
        rows[-1] = rows[-1][:2] + (
            f"~{before_seconds * 100:.0f} s (x100 of 100 betas), spread at 100 betas "
            f"{np.std(log_w):.1f}",) + rows[-1][3:]


def target_grid_search(rows, skip_before):
    X = digits_scaled()
    spent = {"log_z": 0.0}
    original = skboltz._base.BoltzmannBase.estimate_log_partition

    def timed_estimate(self, z_estimator=None):
        start = time.perf_counter()
        try:
            return original(self, z_estimator)
        finally:
            spent["log_z"] += time.perf_counter() - start

    def run(estimator):
        spent["log_z"] = 0.0
        skboltz._base.BoltzmannBase.estimate_log_partition = timed_estimate
        try:
            search, seconds = timed(lambda: GridSearchCV(
                estimator, {"n_components": [64, 128, 256]}, cv=3).fit(X))
        finally:
            skboltz._base.BoltzmannBase.estimate_log_partition = original
        return seconds, spent["log_z"], search.best_params_["n_components"]

    seconds, log_z_seconds, best = run(RBM(random_state=0))
    share = log_z_seconds / seconds
    before = "-"
    if not skip_before:
        import skboltz.partition._ais as ais_module

        original_chains = ais_module._chains
        ais_module._chains = lambda model, *args, **kwargs: original_chains(
            _GenericView(model), *args, **kwargs)
        try:
            old = AIS(n_chains=100, n_betas=10000, hidden_base="uniform",
                      target_std_error=None)
            b_seconds, b_log_z, b_best = run(RBM(z_estimator=old, random_state=0))
        finally:
            ais_module._chains = original_chains
        before = f"{b_seconds:.0f} s, log Z {100 * b_log_z / b_seconds:.0f} %, best {b_best}"
    rows.append(("GridSearchCV(RBM(), n_components 64/128/256, cv=3)",
                 f"{seconds:.1f} s, log Z {log_z_seconds:.2f} s = {100 * share:.0f} %, "
                 f"best {best}", before, "log Z share <= 25 %", verdict(share <= 0.25)))


def target_exact(rows, skip_before):
    view, _ = digits_rbm(20)
    value, seconds = timed(lambda: Exact().estimate(view).value)
    before = "-"
    if not skip_before:
        old, old_seconds = timed(lambda: exact_rbm_before(view))
        before = f"{old_seconds:.2f} s (same value to {abs(old - value):.1e})"
    rows.append(("exact log Z, digits RBM 64x20", f"{seconds:.3f} s", before, "<= 0.5 s",
                 verdict(seconds <= 0.5)))
    reference = random_bm(28, 14, 0.3, np.random.default_rng(28))
    bm = BMView(reference.coupling, reference.bias, 14)
    value, seconds = timed(lambda: Exact().estimate(bm).value)
    before = "-"
    if not skip_before:
        old, old_seconds = timed(lambda: exact_bm_before(bm.coupling_matrix(),
                                                         bm.bias_vector()))
        before = f"{old_seconds:.2f} s (same value to {abs(old - value):.1e})"
    rows.append(("exact log Z, fully connected BM, 28 units", f"{seconds:.3f} s", before,
                 "<= 3 s", verdict(seconds <= 3)))


def target_tap(rows):
    print("\nTAP and naive mean field against exact (nats; before: damped parallel TAP)")
    print(f"  {'model':32s} {'mean field':>11s} {'TAP':>8s} {'TAP before':>11s}")
    models = [(f"digits RBM 64x{h} (binarized)", *digits_rbm(h)) for h in (16, 20)]
    X = digits_scaled()
    rbm = RBM(n_components=20, random_state=0).fit(X)
    models.append(("digits RBM 64x20 (X/16)", rbm._model_view(), X.mean(axis=0)))
    closer = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MeanFieldConvergenceWarning)
        for name, view, rates in models:
            exact = Exact().estimate(view).value
            naive = MeanField().estimate(view, data_rates=rates).value - exact
            tap = TAP().estimate(view, data_rates=rates).value - exact
            before = tap_before(view, rates) - exact
            closer.append(abs(tap) <= abs(naive))
            print(f"  {name:32s} {naive:11.3f} {tap:8.3f} {before:11.3f}")
    rows.append(("TAP at least as close as naive mean field (digits)",
                 f"{sum(closer)}/{len(closer)} models", "0/2 (binarized ones)",
                 "all", verdict(all(closer))))


def print_targets(rows):
    print("\nTargets")
    widths = (50, 74, 40, 28)
    header = ("target", "now", "before", "goal")
    print("  " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " | verdict")
    for row in rows:
        print("  " + " | ".join(str(c).ljust(w) for c, w in zip(row[:4], widths))
              + f" | {row[4]}")


# -- every estimator on every model ------------------------------------------------------
def strategies():
    return {
        "exact": Exact(),
        "ais (default)": AIS(),
        "mean_field": MeanField(),
        "tap": TAP(),
        "visited_states": VisitedStates(),
    }


def random_models():
    out = []
    for scale in (0.05, 0.1, 0.2):
        rng = np.random.default_rng(int(scale * 1000))
        view = RBMView(rng.normal(0, scale, (16, 64)), rng.normal(0, scale, 64),
                       rng.normal(0, scale, 16))
        out.append((f"random RBM 64x16 w~{scale}", view, None))
    for scale in (0.1, 0.3, 1.0):
        reference = random_bm(20, 12, scale, np.random.default_rng(int(scale * 100)))
        out.append((f"random BM 20 units w~{scale}",
                    BMView(reference.coupling, reference.bias, 12), None))
    return out


def run_table(repeats):
    models = [(f"digits RBM 64x{h}", *digits_rbm(h)) for h in (16, 20)] + random_models()
    print(f"\nEvery estimator on every model (medians over {repeats} runs)")
    print(f"  {'model':28s} {'strategy':16s} {'median err':>10s} {'max |err|':>9s} "
          f"{'median se':>9s} {'time s':>8s}")
    for name, view, rates in models:
        exact = Exact().estimate(view).value
        records = {key: [] for key in strategies()}
        for repeat in range(repeats):
            items = list(strategies().items())
            if repeat % 2:
                items.reverse()
            for key, estimator in items:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", MeanFieldConvergenceWarning)
                    log_z, seconds = timed(lambda: estimator.estimate(
                        view, rng=np.random.default_rng(1000 * repeat + 7), data_rates=rates))
                records[key].append((log_z.value - exact, log_z.std_error, seconds))
        for key, values in records.items():
            errors, ses, times = zip(*values)
            se = "-" if ses[0] is None else f"{np.median(ses):.4f}"
            print(f"  {name:28s} {key:16s} {np.median(errors):10.4f} "
                  f"{np.max(np.abs(errors)):9.4f} {se:>9s} {np.median(times):8.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-before", action="store_true")
    parser.add_argument("--skip-table", action="store_true")
    args = parser.parse_args()
    print_machine()
    rows = []
    for target in (target_exact, target_ais_64x20, target_default_score, target_grid_search,
                   target_mnist):
        target(rows, args.skip_before)
        print(f"  done: {rows[-1][0]}  (load average {os.getloadavg()[0]:.2f})", flush=True)
    target_tap(rows)
    print_targets(rows)
    if not args.skip_table:
        run_table(args.repeats)
    print("\n" + machine_line())
