"""Data sets and splits shared by the benchmarks, so every table uses the same protocol.

- :func:`digits_splits`: the classification protocol of the issues: ``load_digits``
  scaled to [0, 1] (X / 16), 75/25 stratified ``train_test_split`` with seeds 0, 1, 2.
- :func:`labelled_subset`: which training rows keep their labels when only a few do
  (stratified, so every class is present; the rest are unlabelled).
- :func:`digits_784`: 784-pixel binary images made from the digits (8 x 8 upsampled
  bilinearly to 28 x 28 and binarized at 0.5), with their labels; optionally drawn with
  replacement with a fraction of pixels flipped, for MNIST-sized row counts;
  :func:`digits_784_split` draws training and held-out rows from different digits.

Usage, from a script in this directory::

    from _data import digits_splits, digits_784, digits_784_split, labelled_subset
"""

import numpy as np
from scipy.ndimage import zoom
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

#: The seeds of the three splits of the classification protocol.
SPLIT_SEEDS = (0, 1, 2)


def digits_splits(X=None, y=None, seeds=SPLIT_SEEDS):
    """Yield ``(seed, X_train, X_test, y_train, y_test)`` for each protocol split.

    ``X`` and ``y`` default to the digits scaled to [0, 1]; pass others (for example
    :func:`digits_784`) to split them the same way.
    """
    if X is None:
        X, y = load_digits(return_X_y=True)
        X = X / 16.0
    for seed in seeds:
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=0.25, stratify=y, random_state=seed
        )
        yield seed, X_train, X_test, y_train, y_test


def labelled_subset(y, n_labelled, seed):
    """Indices of ``n_labelled`` rows of ``y`` that keep their labels (stratified)."""
    if n_labelled is None or n_labelled >= len(y):
        return np.arange(len(y))
    keep, _ = train_test_split(
        np.arange(len(y)), train_size=n_labelled, stratify=y, random_state=seed
    )
    return np.sort(keep)


def digits_784(n_rows=None, flip=0.0, seed=0, dtype=np.float64, frame=False,
               originals=None):
    """784-pixel binary digit images and their labels.

    The 1797 digits, 8 x 8 upsampled to 28 x 28 (bilinear) and binarized at 0.5. With
    ``n_rows``, rows are drawn with replacement (seeded) and a fraction ``flip`` of the
    pixels flipped, for MNIST-sized data sets. With ``frame``, the digits are upsampled
    to 20 x 20 and centred in a 28 x 28 frame with a blank border of 4 pixels, as
    MNIST's are (``digits_784(4000, flip=0.01, frame=True)`` is the 784-pixel data of
    the issue "Classification that pays"). ``originals`` (indices into the 1797
    digits) restricts the draws to those digits, so that training and held-out rows
    can come from different digits (see :func:`digits_784_split`).

    Returns
    -------
    X : ndarray of shape (n_rows, 784)
    y : ndarray of shape (n_rows,)
    """
    digits = load_digits()
    if frame:
        border = ((0, 0), (4, 4), (4, 4))
        images = np.pad(zoom(digits.images / 16.0, (1, 2.5, 2.5), order=1), border) > 0.5
    else:
        images = zoom(digits.images / 16.0, (1, 3.5, 3.5), order=1) > 0.5
    X, y = images.reshape(len(images), -1), digits.target
    if originals is not None:
        X, y = X[originals], y[originals]
    if n_rows is not None:
        rng = np.random.default_rng(seed)
        rows = rng.integers(0, len(X), n_rows)
        X, y = X[rows], y[rows]
        if flip:
            X = X ^ (rng.random(X.shape) < flip)
    return X.astype(dtype), y


def digits_784_split(n_train, n_test, flip=0.0, seed=0, dtype=np.float64):
    """Training and held-out 784-pixel rows drawn from different digits.

    The 1797 digits are split 75/25 (stratified, ``seed``); ``n_train`` rows are drawn
    from the first part and ``n_test`` from the second, as :func:`digits_784` draws
    them (with replacement, ``flip`` of the pixels flipped), so no held-out row is a
    noisy copy of a training digit.

    Returns
    -------
    X_train, X_test, y_train, y_test : ndarrays
    """
    y = load_digits().target
    train, test = train_test_split(np.arange(len(y)), test_size=0.25, stratify=y,
                                   random_state=seed)
    X_train, y_train = digits_784(n_train, flip, seed, dtype, originals=np.sort(train))
    X_test, y_test = digits_784(n_test, flip, seed + 1, dtype, originals=np.sort(test))
    return X_train, X_test, y_train, y_test
