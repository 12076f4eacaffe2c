"""
============================================
Gaussian RBM: real-valued data, true density
============================================

A :class:`~skboltz.GaussianRBM` models real-valued features: given the binary hidden
units, each visible unit is normal, so the model is a mixture of 2**n_components
Gaussians whose means are sums of the hidden units' weight vectors. Its
``score_samples`` is the true log density in nats (the partition function is a sum of
Gaussian integrals over the hidden states, exact for up to 20 hidden units).

This example shows

* the log density of a two-dimensional toy dataset, drawn as contours next to the
  points;
* the filters learned on the 8x8 digits treated as real-valued pixels;
* samples from that model next to real digits.

See :ref:`gaussian_rbm` in the user guide.
"""

# %%
# A density in two dimensions
# ---------------------------
# Two interleaved half-moons, standardised. Eight hidden units give 256 mixture
# components; the contours are levels of the exact log density. All components share
# one variance per feature, which keeps the density smooth: it follows the arcs, but
# cannot be thinner than that shared width.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits, make_moons
from sklearn.preprocessing import StandardScaler

from skboltz import GaussianRBM
from skboltz.plotting import plot_filters, plot_samples

X, _ = make_moons(n_samples=600, noise=0.08, random_state=0)
X = StandardScaler().fit_transform(X)
moons = GaussianRBM(n_components=8, n_iter=60, random_state=0).fit(X)
print(f"mean log density of the training points: {moons.score(X):.3f} nats")

grid = np.linspace(-2.6, 2.6, 200)
a, b = np.meshgrid(grid, grid)
log_density = moons.score_samples(np.column_stack([a.ravel(), b.ravel()])).reshape(a.shape)

fig, ax = plt.subplots(figsize=(5.5, 4.5))
levels = np.linspace(-8, log_density.max(), 15)
contour = ax.contourf(a, b, np.maximum(log_density, -8), levels=levels, cmap="viridis")
ax.scatter(X[:, 0], X[:, 1], s=4, c="white", edgecolors="none", alpha=0.7)
fig.colorbar(contour, ax=ax, label="log density (nats)")
ax.set(title="GaussianRBM(8) on two moons", xlabel="feature 1", ylabel="feature 2")
ax.set_aspect("equal")

# %%
# Digits as real-valued pixels
# ----------------------------
# Gaussian units want standardised features; the three pixels that are 0 in every
# image carry no information (and would trigger a warning), so they are dropped and
# put back as zeros for display. Every filter adds its weights to the visible means
# when its hidden unit is on.
digits = load_digits()
keep = digits.data.std(axis=0) > 0
scaler = StandardScaler().fit(digits.data[:, keep])
X_digits = scaler.transform(digits.data[:, keep]).astype(np.float32)

model = GaussianRBM(n_components=36, learning="pt", n_iter=15, random_state=0)
model.fit(X_digits)


def as_images(rows):
    """Rows over the kept pixels, back on the full 8x8 grid."""
    images = np.zeros((rows.shape[0], 64), dtype=rows.dtype)
    images[:, keep] = rows
    return images


plot_filters(as_images(model.components_), (8, 8), n_cols=12,
             title="Weights of the 36 hidden units (standardised pixel units)")

# %%
# Samples next to real digits
# ---------------------------
# Samples are drawn by block Gibbs sampling (v -> h -> v, 1000 steps per chain) and
# mapped back to pixel intensities with the scaler; real digits are shown first. The
# samples keep the Gaussian noise of p(v | h), so they are grainier than the data.
plot_samples(as_images(digits.data[:24, keep]) / 16, (8, 8), n_cols=12,
             title="Training digits")
samples = scaler.inverse_transform(model.sample(24, n_steps=1000, random_state=0))
plot_samples(np.clip(as_images(samples) / 16, 0, 1), (8, 8), n_cols=12,
             title="Samples from the Gaussian RBM")
plt.show()
