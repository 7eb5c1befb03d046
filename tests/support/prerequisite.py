"""What a test does without one of its prerequisites (a package, a
backend, root, a browser): a local run skips it with the reason; under CI
(CI=true), which installs every prerequisite, it fails instead, so that
a missing one never passes as a silent skip."""
import os

import pytest


def under_ci():
    return os.environ.get('CI', '').lower() == 'true'


def missing(msg, module=False):
    """Skip the running test for want of what ``msg`` names (with
    ``module``, the test module being imported); fail it under CI."""
    if under_ci():
        pytest.fail(msg, pytrace=False)
    pytest.skip(msg, allow_module_level=module)
