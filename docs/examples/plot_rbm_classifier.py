"""
===========================================================
The classification RBM: exact p(y | x) and a density of x
===========================================================

:class:`skboltz.RBMClassifier` is one RBM over the features *and* the class
(Larochelle and Bengio, "Classification using discriminative restricted Boltzmann
machines", ICML 2008). Its class posterior p(y | x) is a sum of softplus terms per
class, computed exactly; training follows log p(y | x) plus a little of the joint
log-likelihood log p(x, y) (the hybrid objective).

Because it is also a density over x, the same model tells how typical an input is:
``score_samples`` returns log p(x), which a classifier's probabilities cannot give.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from skboltz import RBMClassifier

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X / 16, y, test_size=0.25, stratify=y, random_state=0
)

clf = RBMClassifier(n_components=128, n_iter=30, random_state=0).fit(X_train, y_train)
logistic = LogisticRegression(max_iter=2000).fit(X_train, y_train)
print(f"RBMClassifier accuracy:      {clf.score(X_test, y_test):.4f}")
print(f"logistic regression, pixels: {logistic.score(X_test, y_test):.4f}")

# %%
# Training, epoch by epoch
# ------------------------
# ``history_`` records the log-loss and accuracy of training rows each epoch.

fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(clf.history_["epoch"], clf.history_["log_loss"])
ax.set_xlabel("epoch")
ax.set_ylabel("training log-loss (nats)")
ax.set_yscale("log")
fig.tight_layout()

# %%
# The exact class posterior
# -------------------------
# The least confident test digits, with p(y | x) of their two most probable classes.

proba = clf.predict_proba(X_test)
doubtful = np.argsort(proba.max(axis=1))[:6]
fig, axes = plt.subplots(1, 6, figsize=(9, 2))
for ax, row in zip(axes, doubtful):
    first, second = np.argsort(proba[row])[::-1][:2]
    ax.imshow(X_test[row].reshape(8, 8), cmap="gray_r")
    ax.set_title(f"{first}: {proba[row, first]:.2f}\n{second}: {proba[row, second]:.2f}",
                 fontsize=9)
    ax.set_axis_off()
fig.suptitle("least confident test digits (true, then p(y | x))", fontsize=10)
fig.tight_layout()

# %%
# How typical is an input?
# ------------------------
# ``score`` is the accuracy, as for any scikit-learn classifier; ``score_samples`` is
# log p(x), the joint model's log-probability of the features with the class summed
# out (log Z estimated once, by annealed importance sampling for this size). Digits
# with a tenth of their pixels flipped at random score far lower. Their largest class
# probability drops too, but p(y | x) says how sure the class is, not whether the
# input looks like the training data: only log p(x) separates the two groups.

rng = np.random.default_rng(0)
flipped = np.abs(X_test - (rng.random(X_test.shape) < 0.1))
typical, unusual = clf.score_samples(X_test), clf.score_samples(flipped)
print(f"mean log p(x): test digits {typical.mean():.1f} nats, "
      f"with 10% of pixels flipped {unusual.mean():.1f} nats")
print(f"mean largest p(y | x): {proba.max(axis=1).mean():.3f} and "
      f"{clf.predict_proba(flipped).max(axis=1).mean():.3f}")
fig, ax = plt.subplots(figsize=(6, 3))
bins = np.linspace(min(unusual.min(), typical.min()), typical.max(), 40)
ax.hist(typical, bins=bins, alpha=0.7, label="test digits")
ax.hist(unusual, bins=bins, alpha=0.7, label="10% of pixels flipped")
ax.set_xlabel("log p(x) (nats)")
ax.set_ylabel("rows")
ax.legend()
fig.tight_layout()
plt.show()
