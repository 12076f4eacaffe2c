"""
==========================================
Imputing a mixed table with a tabular RBM
==========================================

:class:`~skboltz.RBMImputer` fits a Boltzmann machine on a table with holes, leaving
the missing entries out of the model (never filling them with a constant first), and
fills each one from the model's conditional distribution given the row's observed
entries: the conditional mean of a numeric column, the most probable category of a
categorical one, or with ``sample_posterior=True`` a draw of the row's missing entries
together (multiple imputation).

The table here is scikit-learn's iris data as a mixed table: four measurements (numbers)
and the species (a category, as a code). A fifth of its entries are hidden at random;
the imputers fill them, and the hidden values tell how well. With a column of codes
beside numeric columns, ``RBMImputer()`` chooses a :class:`~skboltz.TabularRBM`
(Gaussian units for the numbers, standardised inside the model, and a softmax group
for the species).

See :ref:`tables` in the user guide ("Missing entries and imputation").
"""

# %%
# A table with holes
# ------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_iris
from sklearn.impute import KNNImputer, SimpleImputer

from skboltz import RBMImputer

iris = load_iris()
table = np.column_stack([iris.data, iris.target]).astype(float)
names = [*iris.feature_names, "species"]
rng = np.random.default_rng(0)
hidden = rng.random(table.shape) < 0.2
holed = np.where(hidden, np.nan, table)
print(f"{hidden.sum()} of {table.size} entries hidden; "
      f"{(~hidden).all(axis=1).sum()} of {len(table)} rows complete")

# %%
# Three imputers
# --------------
# Each column's mean (the species' most frequent code), the five nearest rows on the
# observed columns (the species code averaged, then rounded), and the RBM fitted on the
# incomplete rows themselves.
imputers = {
    "column means / mode": np.column_stack([
        SimpleImputer(strategy="mean").fit_transform(holed[:, :4]),
        SimpleImputer(strategy="most_frequent").fit_transform(holed[:, 4:])]),
    "KNNImputer (k=5)": KNNImputer(n_neighbors=5).fit_transform(holed),
}
rbm_imputer = RBMImputer(random_state=0).fit(holed)
model = rbm_imputer.estimator_
print(f"the model RBMImputer chose: {type(model).__name__}, categorical column(s) "
      f"{np.flatnonzero(model.is_categorical_)}")
imputers["RBMImputer"] = rbm_imputer.transform(holed)
imputers["KNNImputer (k=5)"][:, 4] = np.round(imputers["KNNImputer (k=5)"][:, 4])

scale = table[:, :4].std(axis=0)
errors, accuracies = {}, {}
for name, filled in imputers.items():
    numeric = hidden[:, :4]
    standardised = (filled[:, :4] - table[:, :4]) / scale
    errors[name] = np.sqrt(np.mean(standardised[numeric] ** 2))
    accuracies[name] = np.mean(filled[hidden[:, 4], 4] == table[hidden[:, 4], 4])
    print(f"{name:<22} numbers: RMSE {errors[name]:.3f} standard deviations; "
          f"species: {accuracies[name]:.0%} right")

fig, axes = plt.subplots(1, 2, figsize=(9, 3))
axes[0].barh(list(errors), list(errors.values()), color="tab:blue")
axes[0].set_xlabel("RMSE on the hidden numbers (standard deviations)")
axes[1].barh(list(accuracies), list(accuracies.values()), color="tab:green")
axes[1].set_xlabel("share of the hidden species right")
axes[1].set_yticks([])
fig.tight_layout()

# %%
# Multiple imputation
# -------------------
# ``sample_posterior=True`` fills each row's missing entries with a draw from the model
# given its observed ones: each ``transform`` draws anew. Here a row whose petal
# length is hidden, and the spread of its draws (the true value is the dashed line).
# The spread is the model's uncertainty about that entry, which a single imputed value
# hides.
row = np.flatnonzero(hidden[:, 2] & ~hidden[:, 4] & ~hidden[:, 3])[0]
draws = RBMImputer(sample_posterior=True, random_state=1).fit(holed)
values = np.concatenate([draws.transform(np.repeat(holed[row:row + 1], 50, axis=0))[:, 2]
                         for _ in range(4)])
fig, ax = plt.subplots(figsize=(5, 3))
ax.hist(values, bins=25, color="tab:gray")
ax.axvline(table[row, 2], color="black", linestyle="--", label="hidden value")
ax.axvline(imputers["RBMImputer"][row, 2], color="tab:red", label="conditional mean")
observed = ", ".join(names[j] for j in np.flatnonzero(~hidden[row]))
ax.set_xlabel(f"{names[2]} of row {row} (observed: {observed})")
ax.legend()
fig.tight_layout()
plt.show()
