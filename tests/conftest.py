"""Test session settings.

scikit-learn's array API dispatch needs SciPy's array API support, which SciPy reads
from SCIPY_ARRAY_API when it is first imported: set here, before any test imports it,
so that the array API tests (tests/test_array_api.py, and scikit-learn's array API
checks in tests/test_common.py) run instead of being skipped.
"""

import importlib.util
import os

import pytest

os.environ.setdefault("SCIPY_ARRAY_API", "1")


def pytest_collection_modifyitems(config, items):
    """Skip scikit-learn's array API checks on CUDA where torch has no usable GPU.

    scikit-learn skips them when torch was built without CUDA, but a CUDA build of
    torch on a machine without a GPU (or with an older driver) fails them instead.
    torch is imported only where it is installed, and only if such checks were
    collected. A check of ``parametrize_with_checks`` names its device in its
    parameters (a partial with ``device_name='cuda'``), not in the test's id.
    """
    cuda_items = [item for item in items if "cuda" in item.nodeid or "cuda" in repr(
        getattr(getattr(item, "callspec", None), "params", {}).get("check", ""))]
    if not cuda_items or importlib.util.find_spec("torch") is None:
        return
    try:
        import torch
    except ImportError:  # a broken install: scikit-learn's checks skip torch then
        return
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="torch has no usable CUDA device here")
    for item in cuda_items:
        item.add_marker(skip)
