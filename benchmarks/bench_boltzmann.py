"""Benchmarks of the general Boltzmann machine.

1. The 4-2-4 encoder (Ackley, Hinton & Sejnowski 1985): two groups of 4 visible units
   that talk to each other only through 2 hidden units (a connectivity mask with no
   couplings between the groups), trained on the four one-hot patterns copied to both
   groups. A run succeeds when, for every pattern k, clamping the first group to k
   gives the second group the state k with probability > 1/2 under the model's exact
   conditional (hidden units summed out), i.e. k is the unique most probable state.
   Success rate over 20 seeds, median exact log-likelihood and time per run for each
   learning method, with the same settings for every method and seed; the methods
   alternate seed by seed. "exact, uncentred" is exact learning with
   ``centering=False``, to show what the centred gradient changes.
2. Sequential Gibbs sweeps per second for 1000 chains against the number of units,
   for ``skboltz._energy.bm_gibbs_sweep`` (logistic noise drawn per sweep, one
   threshold product per block of units) and a plain per-unit reference sweep
   (field = S @ W[:, i] + b_i, sigmoid, compare), alternating; medians of repeats.
   Target: >= 1000 sweeps/s at 64 units.

Run from the repository root (PYTHONPATH=. so the working copy is imported):
PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/bench_boltzmann.py [--quick]
"""

import sys
import time

import numpy as np

from _machine import print_machine
from skboltz import BoltzmannMachine
from skboltz._energy import binary_states, bm_gibbs_sweep, sigmoid
from skboltz.learning import Gibbs, MeanFieldGradient

N_SEEDS = 20
PATTERNS = np.hstack([np.eye(4), np.eye(4)])  # one-hot patterns copied to both groups


def encoder_mask(hidden_coupled=True):
    """Full connectivity except between the two visible groups (units 0-3 and 4-7), and
    between the two hidden units (8, 9) when ``hidden_coupled`` is False."""
    mask = np.ones((10, 10), dtype=bool)
    mask[:4, 4:8] = mask[4:8, :4] = False
    if not hidden_coupled:
        mask[8:, 8:] = False
    return mask


def encoder_conditionals(bm):
    """p(group 2 = pattern k | group 1 = pattern k) for each k, exactly (hidden summed out)."""
    view = bm._model_view().astype(np.float64)
    S = binary_states(10)
    log_p = -view.energy(S) / view.temperature
    correct = np.empty(4)
    for k in range(4):
        keep = np.all(S[:, :4] == np.eye(4)[k], axis=1)
        codes = (S[keep][:, 4:8] @ (2 ** np.arange(4))).astype(int)
        weights = np.exp(log_p[keep] - log_p[keep].max())
        correct[k] = weights[codes == 2**k].sum() / weights.sum()
    return correct


def encoder_success(bm):
    """Success: for every pattern k, with group 1 clamped to k, the pattern k itself has
    probability > 1/2 under p(group 2 | group 1) (exact), so it is the unique most
    probable group-2 state. (Two patterns sharing a hidden code give 1/2 each: a fail.)
    """
    return bool(np.all(encoder_conditionals(bm) > 0.5))


#: The methods compared. "exact, uncentred" shows the effect of ``centering``.
METHODS = {
    "exact": (lambda: "exact", True),
    "exact, uncentred": (lambda: "exact", False),
    "gibbs": (lambda: Gibbs(n_steps=5, n_chains=100, annealing=[(4.0, 2), (2.0, 2), (1.5, 2)]),
              True),
    "mean_field": (lambda: MeanFieldGradient(linear_response=True), True),
}

#: The same settings for every method and seed: full batch (the 4 patterns), so the
#: exact method follows the exact gradient.
ENCODER_SETTINGS = dict(learning_rate=0.3, momentum=0.9, batch_size=4, weight_decay=1e-4)


def bench_encoder(n_seeds, max_iter, hidden_coupled=True):
    X = PATTERNS
    results = {name: {"success": [], "time": [], "ll": []} for name in METHODS}
    for seed in range(n_seeds):
        for name, (learning, centering) in METHODS.items():  # alternate seed by seed
            bm = BoltzmannMachine(
                n_hidden=2, connectivity=encoder_mask(hidden_coupled), learning=learning(),
                centering=centering, n_iter=max_iter, random_state=seed,
                **ENCODER_SETTINGS,
            )
            start = time.perf_counter()
            bm.fit(X)
            results[name]["time"].append(time.perf_counter() - start)
            results[name]["success"].append(encoder_success(bm))
            results[name]["ll"].append(bm.score(X))  # exact mean log-likelihood
    coupled = "hidden units coupled" if hidden_coupled else "hidden units NOT coupled"
    print(f"\n4-2-4 encoder ({coupled}; groups fully connected inside): {n_seeds} seeds, {max_iter} updates on the 4 patterns (full "
          f"batch), lr {ENCODER_SETTINGS['learning_rate']}, momentum "
          f"{ENCODER_SETTINGS['momentum']}, weight decay {ENCODER_SETTINGS['weight_decay']}")
    print("success: p(group 2 = k | group 1 = k) > 1/2 for all 4 patterns (exact); "
          f"optimum log-likelihood -log 4 = {-np.log(4):.3f}, two patterns sharing a "
          "hidden code -1.733")
    print(f"{'learning':<18}{'successes':>10}{'median loglik':>15}{'median s/run':>14}"
          f"{'vs exact':>10}")
    reference = np.median(results["exact"]["time"])
    for name, r in results.items():
        t = np.median(r["time"])
        print(f"{name:<18}{sum(r['success']):>6d}/{n_seeds:<3d}{np.median(r['ll']):>15.3f}"
              f"{t:>14.3f}{t / reference:>10.1f}")


def reference_sweep(S, coupling, bias, rng, temperature=1.0):
    """Plain sequential sweep: one matrix-vector product and a sigmoid per unit."""
    uniform = rng.random(S.shape, dtype=S.dtype)
    for i in range(S.shape[1]):
        field = S @ coupling[:, i] + bias[i]
        S[:, i] = uniform[:, i] < sigmoid(field / temperature)
    return S


def sweeps_per_second(sweep, S, coupling, bias, rng, n_sweeps):
    start = time.perf_counter()
    for _ in range(n_sweeps):
        sweep(S, coupling, bias, rng)
    return n_sweeps / (time.perf_counter() - start)


def bench_sweeps(sizes, n_repeats, n_chains=1000):
    rng = np.random.default_rng(0)
    print(f"\nSequential Gibbs sweeps per second, {n_chains} chains "
          f"(median of {n_repeats} alternating repeats)")
    print(f"{'n units':>8}{'dtype':>9}{'bm_gibbs_sweep':>16}{'reference':>11}{'ratio':>7}")
    for n in sizes:
        W = np.triu(rng.normal(0, 1 / np.sqrt(n), size=(n, n)), 1)
        W = W + W.T
        b = rng.normal(0, 0.5, size=n)
        for dtype in (np.float32, np.float64):
            W_d, b_d = W.astype(dtype), b.astype(dtype)
            fast_S = np.asfortranarray(rng.integers(0, 2, (n_chains, n)).astype(dtype))
            slow_S = np.ascontiguousarray(fast_S)
            n_sweeps = max(2, 4096 // n)
            fast, slow = [], []
            for _ in range(n_repeats):
                fast.append(sweeps_per_second(bm_gibbs_sweep, fast_S, W_d, b_d, rng, n_sweeps))
                slow.append(sweeps_per_second(reference_sweep, slow_S, W_d, b_d, rng,
                                              max(1, n_sweeps // 4)))
            f, s = np.median(fast), np.median(slow)
            print(f"{n:>8}{np.dtype(dtype).name:>9}{f:>16.0f}{s:>11.0f}{f / s:>7.1f}")


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    print_machine()
    bench_sweeps([16, 32, 64, 128], n_repeats=3 if quick else 7)
    for hidden_coupled in (True, False):
        bench_encoder(n_seeds=3 if quick else N_SEEDS, max_iter=30 if quick else 600,
                      hidden_coupled=hidden_coupled)
