"""
================================================================
Categorical columns: softmax groups against one-hot binary units
================================================================

A table of categorical columns (survey answers, say) can go through
:class:`~sklearn.preprocessing.OneHotEncoder` into an :class:`~skboltz.RBM`: each
category becomes a binary unit. But the RBM does not know that exactly one category
of a column is on, so it spends probability on rows that cannot happen (two answers
to one question, or none), and its ``score_samples`` of a real row is not the log
probability of that row among the rows that can happen.

:class:`~skboltz.CategoricalRBM` models each column as one softmax group (one-of-K
units): every row it can generate is a possible row, the probabilities of all of them
sum to one, and its score is the log-probability of the row, in nats. Both models
here have 8 hidden units, so both log Z are exact.
"""

import itertools

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import OneHotEncoder

from skboltz import RBM, CategoricalRBM

# %%
# A table of 6 questions with 3 or 4 answers, drawn from 3 groups of respondents
# (each group answers each question independently, at its own rates).
rng = np.random.default_rng(0)
n_categories = [3, 4, 3, 4, 3, 3]
groups = rng.choice(3, size=2000, p=[0.5, 0.3, 0.2])
answer_rates = [rng.dirichlet(0.5 * np.ones(k), size=3) for k in n_categories]
X = np.column_stack([
    [rng.choice(k, p=rates[g]) for g in groups]
    for k, rates in zip(n_categories, answer_rates)])
X_train, X_test = train_test_split(X, test_size=0.25, random_state=0)

categorical = CategoricalRBM(n_components=8, random_state=0).fit(X_train)
encoder = OneHotEncoder(categories=[np.arange(k) for k in n_categories],
                        sparse_output=False).fit(X_train)
one_hot = RBM(n_components=8, n_iter=50, random_state=0).fit(encoder.transform(X_train))

# %%
# Every possible row (3 * 4 * 3 * 4 * 3 * 3 = 1296 of them), scored by both models.
# The categorical model's probabilities sum to one; the one-hot RBM gives the possible
# rows only part of its probability, the rest goes to binary vectors that are no row.
possible = np.array(list(itertools.product(*[range(k) for k in n_categories])))
mass = {
    "CategoricalRBM": np.exp(categorical.score_samples(possible)).sum(),
    "RBM on one-hot columns": np.exp(one_hot.score_samples(
        encoder.transform(possible))).sum(),
}
for name, total in mass.items():
    print(f"{name}: probability of the possible rows {total:.3f}")

samples = one_hot.sample(1000, random_state=0)
groups_on = np.add.reduceat(samples, np.cumsum([0] + n_categories[:-1]), axis=1)
print(f"RBM on one-hot columns: {np.mean((groups_on != 1).any(axis=1)):.0%} of its "
      "samples have a column with no category or several")

# %%
# Held out, the categorical model's score is the mean log-probability of the test
# rows. The one-hot RBM's score is not: renormalised over the possible rows (dividing
# by their total probability, which only enumeration gives here) it rises by
# -log(mass), and the two models then compare on the same footing. Independent
# columns (the training rows' shares, smoothed) are the baseline both should beat.
shares = [(np.bincount(X_train[:, j], minlength=k) + 0.5) / (len(X_train) + 0.5 * k)
          for j, k in enumerate(n_categories)]
independent = np.mean(sum(np.log(shares[j][X_test[:, j]]) for j in range(len(shares))))
scores = {
    "independent columns": independent,
    "RBM on one-hot\n(its score)": one_hot.score(encoder.transform(X_test)),
    "RBM on one-hot\n(renormalised)": (one_hot.score(encoder.transform(X_test))
                                       - np.log(mass["RBM on one-hot columns"])),
    "CategoricalRBM": categorical.score(X_test),
}
for name, score in scores.items():
    print(f"{name.replace(chr(10), ' ')}: {score:.3f} nats per row")

fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5),
                                  gridspec_kw={"width_ratios": [1, 2]})
left.bar(range(2), list(mass.values()), color=["C0", "C1"])
left.set_xticks(range(2), ["Categorical\nRBM", "RBM on\none-hot"])
left.set_ylabel("probability of the possible rows")
left.set_ylim(0, 1.05)
right.barh(range(len(scores)), list(scores.values()), color=["C7", "C1", "C1", "C0"])
right.set_yticks(range(len(scores)), list(scores))
right.set_xlim(min(scores.values()) - 0.3, max(scores.values()) + 0.1)
right.set_xlabel("held-out log-likelihood (nats per row)")
fig.tight_layout()
plt.show()
