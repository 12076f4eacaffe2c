"""
=================================
RBM filters and samples on digits
=================================

Train a restricted Boltzmann machine on scikit-learn's 8x8 handwritten digits, then look
at what it learned in two ways:

* the **filters**: each hidden unit's weights to the 64 pixels, drawn as an 8x8 image
  (red pixels switch the unit on, blue ones switch it off);
* **samples**: visible states drawn from the model by block Gibbs sampling, i.e. digits
  the model "dreams" when nothing is clamped.

Samples are the honest test of a generative model: a model that reconstructs its
training data well can still put most of its probability on blobs. See
:ref:`rbm` in the user guide.
"""

# %%
# Data and model
# --------------
# Bernoulli units model values in [0, 1], so the pixel intensities (0 to 16) are scaled.
# The negative phase uses parallel tempering: persistent chains at several temperatures
# that swap states, so the chains that drive learning visit every kind of digit instead
# of getting stuck in one mode (with this short training, plain persistent CD tends to
# give samples that are mostly one digit).
import numpy as np
from sklearn.datasets import load_digits

from skboltz import RBM
from skboltz.plotting import plot_filters, plot_samples

digits = load_digits()
X = (digits.data / 16).astype(np.float32)  # float32 stays float32 and trains faster

rbm = RBM(n_components=64, learning="pt", n_iter=30, learning_rate=0.05, random_state=0)
rbm.fit(X)
print(f"trained {rbm.n_iter_} epochs; reconstruction error "
      f"{rbm.history_['reconstruction_error'][-1]:.4f}")

# %%
# Filters
# -------
# Each tile is one row of ``components_`` on its own symmetric colour scale. Many units
# respond to a stroke or a blob in one part of the image; together they tile the
# digit area.
plot_filters(rbm, (8, 8), title="Weights of the 64 hidden units")

# %%
# Samples
# -------
# Each sample is an independent Gibbs chain started from random pixels at the data's
# rates and run for 1000 steps. The training digits are shown first for comparison.
# After this short training many samples are still rough blends of several digits: the
# samples show plainly how far the model is from the data, which the reconstruction
# error does not.
plot_samples(X[:36], (8, 8), n_cols=12, tile_size=0.7, title="Training digits")
samples = rbm.sample(36, n_steps=1000, random_state=0)
plot_samples(samples, (8, 8), n_cols=12, tile_size=0.7,
             title="Samples from the RBM (1000 Gibbs steps)")

# %%
# How probable is a digit?
# ------------------------
# With 64 hidden units exact log Z would need 2**64 states, so ``score`` here would use
# annealed importance sampling (the default for models too large to enumerate). A
# 16-unit model is small enough to enumerate, and its held-out log-likelihood is exact.
small = RBM(n_components=16, n_iter=30, random_state=0).fit(X[:1400])
log_z = small.estimate_log_partition()
print(f"log Z = {log_z.value:.2f} ({log_z.method}, {log_z.cost['n_states']} states)")
print(f"held-out log-likelihood: {small.score(X[1400:]):.2f} nats per digit")
