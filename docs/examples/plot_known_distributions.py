"""
=================================================
Learning distributions whose answer is known
=================================================

A log-likelihood on its own says little: is -4.8 nats per row good? On data drawn from a
known distribution the best achievable value is known too, so a learnt model can be
judged against the truth. :mod:`skboltz.datasets` makes two such data sets:

* **bars and stripes** (:func:`~skboltz.datasets.make_bars_and_stripes`): the 30
  patterns of a 4x4 grid whose columns, or whose rows, are each all on or all off,
  drawn uniformly. The best model puts probability 1/30 on each, a log-likelihood of
  -log 30 = -3.40 nats;
* **samples of a random RBM** (:func:`~skboltz.datasets.make_boltzmann_samples`): exact
  draws from an RBM with known parameters, returned with the generating model, whose
  held-out log-likelihood is the target.

All log-likelihoods below are exact (log Z by enumeration).
"""

# %%
# Bars and stripes
# ----------------
# Every pattern, then 3000 uniform draws to train on.
import numpy as np

from skboltz import RBM
from skboltz.datasets import make_bars_and_stripes, make_boltzmann_samples
from skboltz.plotting import plot_samples

patterns, labels = make_bars_and_stripes(shape=(4, 4))
X, _ = make_bars_and_stripes(3000, shape=(4, 4), random_state=0)
print(f"{len(patterns)} patterns ({(labels == 0).sum()} bars, {(labels == 1).sum()} "
      f"stripes); optimum {-np.log(len(patterns)):.2f} nats")
plot_samples(patterns, (4, 4), n_cols=15, tile_size=0.55,
             title="The 30 bars-and-stripes patterns")

# %%
# Three negative phases, same model size and training. ``mass`` is the total
# probability the model gives the 30 patterns, and the smallest and largest
# probability of a single pattern show how evenly it is shared (each should be
# 1/30 = 0.033). After this short training, persistent CD puts almost all its mass on
# the patterns but piles much of it on one, leaving others with almost nothing, which
# costs many nats; parallel tempering, whose chains move between the modes, comes
# closest to the optimum.
models = {}
for learning in ["cd", "pcd", "pt"]:
    rbm = RBM(n_components=16, learning=learning, n_iter=30, random_state=0).fit(X)
    p = np.exp(rbm.score_samples(patterns))
    print(f"{learning:>3}: mean log p = {rbm.score(patterns):6.2f} nats, mass {p.sum():.3f}, "
          f"per pattern {p.min():.1e} to {p.max():.2f}")
    models[learning] = rbm

samples = models["pt"].sample(30, n_steps=1000, random_state=0)
plot_samples(samples, (4, 4), n_cols=15, tile_size=0.55,
             title="Samples of the RBM trained with PT")

# %%
# Samples of a known RBM
# ----------------------
# 12 visible and 6 hidden units with strong couplings; half the rows for training,
# half held out. The true model's held-out score is the best any model can expect;
# the gap to it is what a learnt model misses, in nats per row. Here the distribution
# has few strong modes and all three negative phases come within about a tenth of a
# nat of the truth: the differences between them show on multi-modal data such as
# bars and stripes.
X, true_model = make_boltzmann_samples(4000, n_visible=12, n_hidden=6, coupling_scale=1.5,
                                       return_model=True, random_state=0)
X_train, X_test = X[:2000], X[2000:]
best = true_model.score(X_test)
print(f"true model: {best:.3f} nats per row")
for learning in ["cd", "pcd", "pt"]:
    rbm = RBM(n_components=6, learning=learning, n_iter=30, random_state=0).fit(X_train)
    print(f"{learning:>3}: {rbm.score(X_test):.3f} (gap {best - rbm.score(X_test):.3f})")
