import subprocess
import sys

import accl
import pytest

# Every test runs on the host reference and on the first Vulkan device
# (lavapipe in the test environment): results must agree with the known
# answers on both.
BACKENDS = ["host", 0]


@pytest.fixture(params=BACKENDS, ids=["host", "vulkan"])
def engine(request):
    e = accl.Engine(device=request.param)
    assert e.backend == ("host" if request.param == "host" else "vulkan")
    yield e
    # The validation layer watched every Vulkan call the test made.
    assert e.validation_messages() == []


@pytest.fixture(scope="session")
def kernel_path(tmp_path_factory):
    """A Jupyter data dir with the accl kernel spec installed in it."""
    prefix = tmp_path_factory.mktemp("jupyter")
    subprocess.run(
        [sys.executable, "-m", "accl.kernel", "install", "--prefix", str(prefix)],
        check=True,
    )
    return str(prefix / "share" / "jupyter")
