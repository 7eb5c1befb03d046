"""The ns-3 tests' shared prerequisite: the ns3 package (installed by
`make setup`). Without it a test module skips, except under CI
(CI=true), where a missing backend is a failure."""
from netsched.ns3 import loader
from tests.support import prerequisite


def require():
    """Call at a test module's top, before importing what needs ns-3."""
    if not loader.available():
        prerequisite.missing('ns-3 is not installed (make setup installs '
                             'it)', module=True)
