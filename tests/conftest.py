"""Test session settings.

scikit-learn's array API dispatch needs SciPy's array API support, which SciPy reads
from SCIPY_ARRAY_API when it is first imported: set here, before any test imports it,
so that the array API tests (tests/test_array_api.py, and scikit-learn's array API
checks in tests/test_common.py) run instead of being skipped.
"""

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")
