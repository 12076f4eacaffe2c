"""
================================================
Deep belief net: stacked features and samples
================================================

A :class:`skboltz.DBN` is trained greedily: an RBM on the digits, a second RBM on the
first one's hidden probabilities, and so on: the greedy layer-wise training of Hinton,
Osindero and Teh, "A fast learning algorithm for deep belief nets" (2006).
We compare logistic regression on the features of each depth, then draw samples: Gibbs
sampling in the top RBM followed by a pass down through the lower layers' P(v | h).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from skboltz import DBN, RBM
from skboltz.plotting import plot_samples

X, y = load_digits(return_X_y=True)
X = X / 16.0
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.25, random_state=0, stratify=y
)

template = RBM(n_iter=20)  # the default learning rate, 0.1, for every layer
dbn = DBN(hidden_layer_sizes=(100, 64), rbm=template, random_state=0).fit(X_train)
print([layer.components_.shape for layer in dbn.layers_])

# %%
# Features of each depth
# ----------------------
# ``transform`` goes through all layers; the layers themselves give the intermediate
# representations. On 1,347 small images a linear classifier does best on the pixels,
# and each unsupervised layer loses a little class information: depth pays off on
# larger, richer data, or with supervised fine-tuning of the whole stack
# (:class:`skboltz.DBNClassifier`, see
# :ref:`sphx_glr_auto_examples_plot_dbn_classifier.py`).

H_train, H_test = X_train, X_test


def accuracy(H_train, H_test):
    logistic = LogisticRegression(C=10, max_iter=3000).fit(H_train, y_train)
    return logistic.score(H_test, y_test)


print(f"depth 0 (pixels): accuracy {accuracy(H_train, H_test):.3f}")
for depth, layer in enumerate(dbn.layers_, start=1):
    H_train, H_test = layer.transform(H_train), layer.transform(H_test)
    print(f"depth {depth} ({layer.n_components} units): accuracy {accuracy(H_train, H_test):.3f}")
assert np.allclose(H_test, dbn.transform(X_test))

# %%
# Samples
# -------
# ``down_pass="mean"`` shows P(v = 1 | h) below the top sample (smooth images);
# ``down_pass="sample"`` draws binary states at every layer (a true sample of the
# model).

mean = dbn.sample(10, random_state=0, n_steps=1000, down_pass="mean")
binary = dbn.sample(10, random_state=0, n_steps=1000, down_pass="sample")
plot_samples(mean, (8, 8), n_cols=10, tile_size=0.7, title="down_pass='mean'")
plot_samples(binary, (8, 8), n_cols=10, tile_size=0.7, title="down_pass='sample'")
plt.show()
