"""
===================================================
Training curves and the free-energy overfitting gap
===================================================

Watch an RBM learn, epoch by epoch. With ``validation_fraction`` the model holds out
part of the rows given to ``fit`` and records in ``history_``, every epoch:

* the **reconstruction error** (cheap, but not what training optimises), on training
  and held-out rows;
* the **free-energy gap**: mean free energy of held-out rows minus that of training
  rows. log Z is the same for every row, so it cancels: the gap equals the difference
  of the two log-likelihoods without knowing Z, which is why it works as an overfitting
  monitor for models of any size (see :ref:`monitoring`);
* with ``monitor_likelihood=True``, the **log-likelihood** of training and held-out
  rows, here exact (12 hidden units: log Z enumerates 2**12 states every epoch).

A small training set (50 digits) makes overfitting visible within a few hundred epochs.
"""

# %%
# Fit with a held-out set
# -----------------------
# 500 digits, of which ``validation_fraction=0.9`` holds out 450: the model trains on
# the other 50, with the default negative phase (CD-1 with visible means), a brisk
# learning rate and no weight decay.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits

from skboltz import RBM
from skboltz.plotting import plot_history

X = (load_digits().data / 16).astype(np.float32)[:500]

settings = dict(n_components=12, learning_rate=0.05, weight_decay=0.0,
                validation_fraction=0.9, monitor_likelihood=True, random_state=0)
rbm = RBM(n_iter=200, **settings).fit(X)
history = rbm.history_
print("recorded every epoch:", sorted(history))

# %%
# The gap needs no partition function
# -----------------------------------
# All 50 training rows are monitored, so the free-energy gap must equal the
# log-likelihood gap up to rounding.
ll_gap = np.subtract(history["log_likelihood_train"], history["log_likelihood_valid"])
print("largest |free-energy gap - log-likelihood gap|:",
      f"{np.max(np.abs(ll_gap - history['free_energy_gap'])):.2e} nats")
best = int(np.argmax(history["log_likelihood_valid"]))
print(f"best held-out log-likelihood {history['log_likelihood_valid'][best]:.2f} nats "
      f"per digit at epoch {history['epoch'][best]}; after {rbm.n_iter_} epochs: train "
      f"{history['log_likelihood_train'][-1]:.2f}, held-out "
      f"{history['log_likelihood_valid'][-1]:.2f}, gap {history['free_energy_gap'][-1]:.2f}")

# %%
# Log-likelihood and the gap
# --------------------------
# The training likelihood keeps rising; the held-out one rises much more slowly. The
# curves are smooth because the published parameters are a moving average of the last
# 100 iterates (``average_window=100``, the default); without it the two curves jitter
# together from epoch to epoch, as log Z, shared by both, moves with the noisy
# updates, while the gap, which does not involve log Z, stays smooth.
# The distance between them is the free-energy gap in the middle panel, and it grows
# steadily: the model is
# memorising its 50 training rows. The cures are more weight decay, fewer epochs or
# more data. The reconstruction error (bottom) falls on both sets and says nothing of
# this.
plot_history(history, keys=[("log_likelihood_train", "log_likelihood_valid"),
                            "free_energy_gap",
                            ("reconstruction_error", "reconstruction_error_valid")],
             title="RBM on 50 digits: exact log-likelihood and free-energy gap")

# %%
# Early stopping
# --------------
# ``n_iter_no_change`` stops ``fit`` once the held-out log-likelihood (the criterion
# when ``monitor_likelihood=True``; otherwise the held-out reconstruction error) has not
# improved by more than ``tol`` for that many epochs, and keeps the parameters of the
# best epoch. On this model the held-out log-likelihood keeps improving, slowly, for
# some 350 epochs before it levels off, so allow up to 800 epochs and a wait of 40.
stopped = RBM(n_iter=800, n_iter_no_change=40, tol=0.0, **settings).fit(X)
curve = stopped.history_["log_likelihood_valid"]
print(f"early stopping: stopped after {stopped.n_iter_} epochs; best held-out "
      f"log-likelihood {max(curve):.2f} at epoch {int(np.argmax(curve)) + 1}, "
      "whose parameters were kept")

fig, ax = plt.subplots(figsize=(6.4, 3.4))
ax.plot(history["epoch"], history["log_likelihood_valid"], color="0.7",
        label="held-out, 200 epochs")
ax.plot(stopped.history_["epoch"], curve, label="held-out, early stopping")
ax.axvline(int(np.argmax(curve)) + 1, color="tab:red", ls="--", label="epoch kept")
ax.set_xlabel("epoch")
ax.set_ylabel("log-likelihood (nats per digit)")
ax.legend()
fig.tight_layout()
plt.show()
