"""
=================================================
Novelty detection with a log-likelihood in nats
=================================================

:class:`skboltz.LikelihoodOutlierDetector` fits a density model to normal rows and
flags new rows the model finds improbable. Here it learns the eights of the digits
and is shown held-out eights and other digits. Its scores are log-likelihoods in nats,
so the threshold is one too: a row 5 nats below it is exp(5), about 150 times, less
probable than a row on it.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

from skboltz import LikelihoodOutlierDetector

X, y = load_digits(return_X_y=True)
X = X / 16.0
eights_train, eights_test = train_test_split(X[y == 8], test_size=0.25, random_state=0)
others = X[y != 8][np.random.default_rng(0).choice(np.sum(y != 8), 200, replace=False)]

detector = LikelihoodOutlierDetector(random_state=0).fit(eights_train)
print("density model:", type(detector.estimator_).__name__)
print(f"threshold offset_ = {detector.offset_:.1f} nats (log density of a row on it)")
print(f"held-out eights kept: {np.mean(detector.predict(eights_test) == 1):.2f}")
print(f"other digits flagged: {np.mean(detector.predict(others) == -1):.2f}")
scores = detector.score_samples(np.vstack([eights_test, others]))
truth = np.r_[np.ones(len(eights_test)), np.zeros(len(others))]
print(f"ROC AUC of score_samples: {roc_auc_score(truth, scores):.4f}")

# %%
# The decision function
# ---------------------
# ``decision_function = score_samples - offset_``: negative for outliers. The default
# threshold (``contamination="auto"``) is Tukey's lower fence of the log-likelihoods
# the training eights get from models fitted without them; a row's own fit flatters it
# (the training eights score several nats higher than held-out ones). Rows below
# -150 nats are counted in the first bin.

fig, ax = plt.subplots(figsize=(6, 3.5))
decision_eights = detector.decision_function(eights_test)
decision_others = detector.decision_function(others)
bins = np.linspace(max(decision_others.min(), -150), decision_eights.max(), 40)
ax.hist(np.maximum(decision_others, bins[0]), bins=bins, alpha=0.7, label="other digits")
ax.hist(decision_eights, bins=bins, alpha=0.7, label="held-out eights")
ax.axvline(0, color="k", lw=1)
ax.set_xlabel("decision_function (nats above the threshold)")
ax.set_ylabel("rows")
ax.legend()
fig.tight_layout()

# %%
# The most and the least probable test rows
# -----------------------------------------

rows = np.vstack([eights_test, others])
order = np.argsort(scores)
fig, axes = plt.subplots(2, 6, figsize=(7, 3.6))
for ax, index in zip(axes[0], order[::-1][:6]):
    ax.imshow(rows[index].reshape(8, 8), cmap="gray_r")
    ax.set_title(f"{scores[index]:.0f}", fontsize=9)
for ax, index in zip(axes[1], order[:6]):
    ax.imshow(rows[index].reshape(8, 8), cmap="gray_r")
    ax.set_title(f"{scores[index]:.0f}", fontsize=9)
for ax in axes.ravel():
    ax.set_axis_off()
fig.suptitle("log-likelihood (nats): most probable (top), least probable (bottom)")
fig.tight_layout()
plt.show()
