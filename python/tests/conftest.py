import atexit
import os
import shutil
import tempfile

import numpy as np
import pytest

# Each run compiles into a cache directory of its own, removed at the end, as the C++ suites do.
if "PTXJIT_CACHE_DIR" not in os.environ:
    os.environ["PTXJIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="ptxjit-pytest-cache-")
    atexit.register(shutil.rmtree, os.environ["PTXJIT_CACHE_DIR"], ignore_errors=True)


@pytest.fixture
def rng():
    """Fresh random data every run; the seed is printed when a test fails."""
    seed = int.from_bytes(os.urandom(4), "little")
    print("numpy seed", seed)
    return np.random.default_rng(seed)


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs PyTorch and a CUDA device; skipped otherwise")
