"""
=====================================================
Deep Boltzmann machine: scores, bound and samples
=====================================================

A :class:`skboltz.DBM` with two hidden layers, trained jointly on binarized digits: the
data's side of the gradient from the mean-field posterior of the hidden layers, the
model's from persistent two-colour block Gibbs chains (Salakhutdinov and Hinton, "Deep
Boltzmann machines", 2009). The machine is small enough to score exactly, so we can
see how far the mean-field bound, which large machines are scored by, lies below the
true log-likelihood; then we draw samples from it.
"""

import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from skboltz import DBM, RBM
from skboltz.exceptions import ApproximateScoreWarning
from skboltz.plotting import plot_samples

X, y = load_digits(return_X_y=True)
X = (X > 7).astype(float)  # binary pixels
X_train, X_test = train_test_split(X, test_size=0.25, random_state=0, stratify=y)

start = time.perf_counter()
dbm = DBM(hidden_layer_sizes=(48, 16), learning_rate=0.05, batch_size=20, n_iter=60,
          random_state=0).fit(X_train)
print(f"DBM 64-48-16: {time.perf_counter() - start:.1f} s for {dbm.n_iter_} epochs")

# %%
# Exact score, bound and log Z
# ----------------------------
# The 16 units of the top layer are few enough to enumerate, so ``score_samples`` sums
# the hidden layers of each row exactly (``likelihood="auto"``), and log Z is found by
# annealed importance sampling (the 48 units of the first hidden layer are too many to
# enumerate, the odd layers are summed out at every temperature): an estimate with a
# standard error. ``likelihood="bound"`` scores by the mean-field bound instead, as
# larger machines are by default; on the same log Z it is a lower bound (and says so,
# with an :class:`~skboltz.exceptions.ApproximateScoreWarning`, which we expect here).

log_z = dbm.estimate_log_partition()
exact = dbm.score(X_test)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ApproximateScoreWarning)
    bound = dbm.set_params(likelihood="bound").score(X_test)  # the same log Z, reused
dbm.set_params(likelihood="auto")
print(f"log Z = {log_z.value:.2f} +- {log_z.std_error:.2f} ({log_z.method})")
print(f"held-out log-likelihood: {exact:.2f} nats, mean-field bound {bound:.2f}")

rbm = RBM(n_components=16, learning_rate=0.05, batch_size=20, n_iter=60,
          random_state=0).fit(X_train)
print(f"RBM with 16 hidden units (exact): {rbm.score(X_test):.2f}")

# %%
# Samples
# -------
# ``sample`` starts chains at the pixels' rates and runs two-colour block Gibbs sweeps:
# the first hidden layer given the pixels and the top layer, then the pixels and the
# top layer given the first hidden layer.

samples = dbm.sample(30, random_state=0, n_steps=1000)
plot_samples(samples, (8, 8), n_cols=10, tile_size=0.7, title="DBM samples")
plot_samples(X_test[:30], (8, 8), n_cols=10, tile_size=0.7, title="held-out digits")
plt.show()
