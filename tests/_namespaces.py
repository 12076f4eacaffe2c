"""What the array API tests share: the namespaces they run on and the conversions.

array-api-strict always (it is in the test extra); torch CPU where it is installed
(never a requirement).
"""

import numpy as np
import pytest

from skboltz.utils._array_api import to_numpy

xp_strict = pytest.importorskip("array_api_strict")

try:  # torch is never a requirement: its tests run where it is installed
    import torch
except ImportError:
    torch = None

#: The namespaces the tests run on.
NAMESPACES = ["array_api_strict"] + (["torch"] if torch is not None else [])


def as_namespace(name, X, dtype="float64"):
    """``X`` as an array of the namespace ``name`` (on its default device)."""
    if name == "torch":
        return torch.asarray(np.asarray(X).astype(dtype))
    return xp_strict.asarray(np.asarray(X).astype(dtype))


def namespace_of(array):
    """The library of an array: "torch", "array_api_strict", "numpy"."""
    return type(array).__module__.split(".")[0]


def to_host(array):
    """A NumPy copy of a torch or array-api-strict array (a NumPy array as it is)."""
    if isinstance(array, np.ndarray):
        return array
    if namespace_of(array) == "torch":
        return array.cpu().numpy()
    return to_numpy(array, xp_strict)
