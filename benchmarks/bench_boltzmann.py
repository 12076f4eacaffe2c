"""Benchmarks of the general Boltzmann machine.

1. The 4-2-4 encoder (Ackley, Hinton & Sejnowski 1985): two groups of 4 visible units
   that talk to each other only through 2 hidden units (a connectivity mask with no
   couplings between the groups), trained on the four one-hot patterns copied to both
   groups. A run succeeds when, for every pattern, clamping the first group to it makes
   the same pattern the most probable state of the second group (computed exactly,
   hidden units summed out). Success rate over 20 seeds and time per run for each
   learning method; the methods alternate seed by seed.
2. Sequential Gibbs sweeps per second for 1000 chains against the number of units,
   for ``skboltz._energy.bm_gibbs_sweep`` (blocked fields) and a plain per-unit
   reference sweep (field = S @ W[:, i] + b_i, sigmoid, compare), alternating.
   Target: >= 1000 sweeps/s at 64 units.

Run: OPENBLAS_NUM_THREADS=1 python benchmarks/bench_boltzmann.py [--quick]
"""

import sys
import time

import numpy as np

from skboltz import BoltzmannMachine
from skboltz._energy import binary_states, bm_gibbs_sweep, sigmoid
from skboltz.learning import Gibbs, MeanField

N_SEEDS = 20
PATTERNS = np.hstack([np.eye(4), np.eye(4)])  # one-hot patterns copied to both groups


def encoder_mask():
    """Full connectivity except between the two visible groups (units 0-3 and 4-7)."""
    mask = np.ones((10, 10), dtype=bool)
    mask[:4, 4:8] = mask[4:8, :4] = False
    return mask


def encoder_success(bm):
    """Every pattern on group 1 makes the same pattern the mode of p(group 2 | group 1)."""
    view = bm._model_view().astype(np.float64)
    S = binary_states(10)
    log_p = -view.energy(S) / view.temperature
    for k in range(4):
        keep = np.all(S[:, :4] == np.eye(4)[k], axis=1)
        codes = (S[keep][:, 4:8] @ (2 ** np.arange(4))).astype(int)
        weights = np.exp(log_p[keep] - log_p[keep].max())
        if np.bincount(codes, weights=weights, minlength=16).argmax() != 2**k:
            return False
    return True


METHODS = {
    "exact": lambda: "exact",
    "gibbs": lambda: Gibbs(n_sweeps=5, n_chains=100, annealing=[(4.0, 2), (2.0, 2), (1.5, 2)]),
    "mean_field": lambda: MeanField(linear_response=True),
}


def bench_encoder(n_seeds, max_iter):
    X = np.tile(PATTERNS, (5, 1))
    results = {name: {"success": [], "time": []} for name in METHODS}
    for seed in range(n_seeds):
        for name, learning in METHODS.items():  # alternate the methods seed by seed
            bm = BoltzmannMachine(
                n_hidden=2, connectivity=encoder_mask(), learning=learning(),
                learning_rate=0.3, momentum=0.9, batch_size=4, weight_decay=1e-4,
                max_iter=max_iter, random_state=seed,
            )
            start = time.perf_counter()
            bm.fit(X)
            results[name]["time"].append(time.perf_counter() - start)
            results[name]["success"].append(encoder_success(bm))
    print(f"\n4-2-4 encoder: {n_seeds} seeds, {max_iter} epochs of 5 updates (batch 4), "
          "lr 0.3, momentum 0.9")
    print(f"{'learning':<12}{'successes':>12}{'median s/run':>15}{'vs exact':>10}")
    reference = np.median(results["exact"]["time"])
    for name, r in results.items():
        t = np.median(r["time"])
        print(f"{name:<12}{sum(r['success']):>8d}/{n_seeds:<3d}{t:>15.3f}{t / reference:>10.1f}")


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
    bench_sweeps([16, 32, 64, 128], n_repeats=3 if quick else 7)
    bench_encoder(n_seeds=3 if quick else N_SEEDS, max_iter=30 if quick else 300)
