"""A minimal general-Boltzmann-machine view for testing the partition estimators.

It follows the model-view protocol (VIEW_PROTOCOL) with brute-force, obviously correct
formulas, so the estimators can be checked on general BMs independently of the
package's own BoltzmannMachine. Units are 0/1, visible first.
"""

from dataclasses import dataclass

import numpy as np

from skboltz.utils._energy import base_bias_from_rates, binary_states, sigmoid, softplus
from skboltz.partition._exact import split_half_log_weights


@dataclass(frozen=True, eq=False)
class ReferenceBMView:
    coupling: np.ndarray  # (n_units, n_units) symmetric, zero diagonal
    bias: np.ndarray  # (n_units,)
    n_visible: int
    temperature: float = 1.0

    @property
    def n_units(self):
        return self.bias.shape[0]

    @property
    def n_hidden(self):
        return self.n_units - self.n_visible

    @property
    def n_state_units(self):
        return self.n_units

    @property
    def n_enumerated_units(self):
        return self.n_units

    @property
    def dtype(self):
        return self.coupling.dtype

    def astype(self, dtype):
        return ReferenceBMView(self.coupling.astype(dtype), self.bias.astype(dtype),
                               self.n_visible, self.temperature)

    def coupling_matrix(self):
        return np.asarray(self.coupling, dtype=np.float64) / self.temperature

    def bias_vector(self):
        return np.asarray(self.bias, dtype=np.float64) / self.temperature

    def log_unnormalized(self, S):
        S = np.asarray(S, dtype=np.float64)
        energy = -0.5 * np.einsum("ni,ni->n", S @ self.coupling, S) - S @ self.bias
        return -energy / self.temperature

    def gibbs_step(self, S, rng):
        S = np.array(S, dtype=np.float64)
        for i in range(self.n_units):
            field = (S @ self.coupling[:, i] + self.bias[i]) / self.temperature
            S[:, i] = rng.random(S.shape[0]) < sigmoid(field)
        return S

    def interpolate(self, beta, base_bias):
        return ReferenceBMView(
            beta * self.coupling / self.temperature,
            (1 - beta) * np.asarray(base_bias) + beta * self.bias / self.temperature,
            self.n_visible,
        )

    def base_bias_from_rates(self, data_rates):
        return base_bias_from_rates(data_rates, self.n_visible, self.n_state_units)

    def base_log_partition(self, base_bias):
        return float(softplus(np.asarray(base_bias, dtype=np.float64)).sum())

    def enumerate_log_weights(self, chunk_size):
        return split_half_log_weights(self.coupling_matrix(), self.bias_vector())

    # -- brute force, for the tests --------------------------------------------------
    def brute_force_log_weights(self):
        return self.log_unnormalized(binary_states(self.n_units))


def random_bm(n_units, n_visible, scale, rng, temperature=1.0):
    coupling = rng.normal(0.0, scale, (n_units, n_units))
    coupling = np.triu(coupling, 1)
    coupling = coupling + coupling.T
    bias = rng.normal(0.0, scale, n_units)
    return ReferenceBMView(coupling, bias, n_visible, temperature)
