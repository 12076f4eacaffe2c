"""
======================================================
Error bars of a held-out score, and comparing two RBMs
======================================================

A held-out score, the mean log-likelihood of test rows, has two errors:

- log Z's (``LogZ.std_error``, zero when log Z is exact), one number shared by every
  row, which no number of test rows shrinks;
- the test set's, the spread of the rows' scores over the square root of their number.

Two models scored on the same rows are compared on the paired differences of their
rows' scores, which vary far less than either score: both models find the same rows
easy or hard. :func:`~skboltz.partition.held_out_score` and
:func:`~skboltz.partition.paired_score_difference` give both parts.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from skboltz import RBM
from skboltz.partition import held_out_score, paired_score_difference

X = load_digits().data / 16
X_train, X_test = train_test_split(X, test_size=0.3, random_state=0)

# 16 hidden units: log Z exact (2**16 states); 32: estimated by AIS, with an error bar.
small = RBM(n_components=16, n_iter=20, random_state=0).fit(X_train)
large = RBM(n_components=32, n_iter=20, random_state=0).fit(X_train)

scores = {name: held_out_score(model, X_test) for name, model in
          [("16 hidden (exact log Z)", small), ("32 hidden (AIS)", large)]}
for name, score in scores.items():
    print(f"{name}: {score.mean:.3f} nats per image; test set's error "
          f"{score.rows_std_error:.3f}, log Z's {score.log_z_std_error:.3f}")

difference = paired_score_difference(large, small, X_test)
print(f"32 minus 16 hidden: {difference.difference:+.3f} nats per image; paired test "
      f"rows' error {difference.rows_std_error:.3f}, log Z's "
      f"{difference.log_z_std_error:.3f}: {difference.z:.1f} standard errors")

# %%
# Each score alone is uncertain by about a tenth of a nat (the test set's error), but
# the paired difference is pinned down to a few hundredths, comparable with log Z's
# error: that is the scale of differences a comparison on these rows can resolve.
fig, ax = plt.subplots(figsize=(6, 3.5))
names = list(scores)
means = [scores[name].mean for name in names]
ax.errorbar(range(2), means, yerr=[2 * scores[name].std_error for name in names],
            fmt="o", capsize=4, label="each score, 2 standard errors (both parts)")
ax.errorbar([1.15], [means[0] + difference.difference],
            yerr=[2 * difference.std_error], fmt="s", capsize=4, color="C3",
            label="16 hidden + paired difference, 2 standard errors")
ax.set_xticks(range(2), names)
ax.set_xlim(-0.5, 1.5)
ax.set_ylabel("held-out log-likelihood (nats per image)")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
