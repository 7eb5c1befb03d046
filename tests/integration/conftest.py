"""Integration tests run the real emulator: root, Mininet, a running
Open vSwitch. Without them a local run skips with the reason; under CI
(CI=true) a missing prerequisite is a failure. Every test here carries
the ``integration`` marker (setup.cfg), so ``-m "not integration"``
leaves them out of a run over all of tests/."""
import os

import pytest

from netsched.emulator import ovs
from tests.support import prerequisite

HERE = os.path.dirname(os.path.abspath(__file__))


def missing_prerequisites():
    why = []
    if os.geteuid() != 0:
        why.append('not running as root')
    try:
        import mininet.net  # noqa: F401
    except ImportError:
        why.append('Mininet is not installed')
    if not ovs.running():
        why.append('Open vSwitch is not running')
    return why


def pytest_runtest_setup(item):
    why = missing_prerequisites()
    if not why:
        return
    prerequisite.missing('emulator prerequisites missing: %s (run `make '
                         'test`, as root)' % '; '.join(why))


def pytest_collection_modifyitems(items):
    # this hook sees the whole session's tests: mark only this folder's
    for item in items:
        if str(item.path).startswith(HERE + os.sep):
            item.add_marker(pytest.mark.integration)
