"""The controller app's fixtures (tests/support/ryu_shell.py), for every
test of this room that names them."""
from tests.support.ryu_shell import app_module, shell  # noqa: F401
