"""
===================================================
Training curves and the free-energy overfitting gap
===================================================

Watch an RBM learn, epoch by epoch, with three curves:

* the **reconstruction error** recorded in ``history_`` (cheap, but not what training
  optimises);
* the exact **log-likelihood** of the training rows and of held-out rows (the model is
  small enough to enumerate its partition function);
* the **free-energy gap**: mean free energy of held-out rows minus that of training
  rows. log Z is the same for every row, so it cancels: the gap equals the difference of
  the two log-likelihoods without knowing Z, which is why it works as an overfitting
  monitor for models of any size (see :ref:`monitoring`).

A small training set makes overfitting visible.
"""

# %%
# Train one epoch at a time
# -------------------------
# ``partial_fit`` continues the parameters, momentum and persistent chains, so a loop
# over it is the same training as ``fit``, with a look at the model after every epoch.
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from skboltz import RBM
from skboltz.plotting import plot_history

X = (load_digits().data / 16).astype(np.float32)
X_train, X_valid = train_test_split(X, train_size=100, test_size=400, random_state=0)

rbm = RBM(n_components=16, learning_rate=0.01, weight_decay=0.0, random_state=0)
curves = {"epoch": [], "log_likelihood_train": [], "log_likelihood_valid": [],
          "free_energy_gap": []}
for epoch in range(1, 301):
    rbm.partial_fit(X_train)
    if epoch % 5 == 0:
        curves["epoch"].append(epoch)
        curves["log_likelihood_train"].append(rbm.score(X_train))
        curves["log_likelihood_valid"].append(rbm.score(X_valid))
        curves["free_energy_gap"].append(
            rbm.free_energy(X_valid).mean() - rbm.free_energy(X_train).mean()
        )

# %%
# The gap needs no partition function
# -----------------------------------
# Here the "training slice" is the whole training set, so the free-energy gap must equal
# the log-likelihood gap up to rounding.
ll_gap = np.subtract(curves["log_likelihood_train"], curves["log_likelihood_valid"])
print("largest |free-energy gap - log-likelihood gap|:",
      f"{np.max(np.abs(ll_gap - curves['free_energy_gap'])):.2e} nats")
print(f"final log-likelihood: train {curves['log_likelihood_train'][-1]:.2f}, "
      f"held-out {curves['log_likelihood_valid'][-1]:.2f} nats per digit")

# %%
# Reconstruction error from ``history_``
# --------------------------------------
# Recorded automatically, every epoch.
plot_history(rbm.history_, keys=["reconstruction_error"],
             title="Reconstruction error (history_)")

# %%
# Log-likelihood and the gap
# --------------------------
# The held-out curve sits below the training curve; the distance between them is the
# free-energy gap in the lower panel. When it grows while the held-out likelihood stops
# improving, the model is memorising its training rows: stop earlier, add weight decay
# or get more data.
plot_history(curves, keys=[("log_likelihood_train", "log_likelihood_valid"),
                           "free_energy_gap"],
             title="Exact log-likelihood (nats per digit) and free-energy gap")
