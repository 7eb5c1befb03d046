"""The ns-3 tests' shared prerequisite: the ns3 package (installed by
`make setup`). Without it a test module skips, except under CI
(CI=true), where a missing backend is a failure."""
import os

import pytest

from netsched.ns3 import loader


def require():
    """Call at a test module's top, before importing what needs ns-3."""
    if loader.available():
        return
    if os.environ.get('CI', '').lower() == 'true':
        raise RuntimeError('CI: the ns3 package is missing (make setup '
                           'installs it); the ns-3 tests cannot run')
    pytest.skip('ns-3 is not installed (make setup installs it)',
                allow_module_level=True)
