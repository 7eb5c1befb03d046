"""Loading ns-3 (the ``ns3`` package from PyPI: its Python bindings) and
netsched's C++ beside it (core.h), once per process."""
import os

from ..errors import ConfigError

INSTALL_HINT = ('the ns-3 backend needs the ns3 package (ns-3 with Python '
                'bindings, about 90 s to install): run `make setup`, or '
                '.venv/bin/pip install ns3==3.44.post0')

_loaded = None


def available():
    """Whether ns-3's bindings can be imported here (without importing
    them: that takes seconds)."""
    from importlib.util import find_spec
    try:
        return find_spec('ns') is not None and find_spec('cppyy') is not None
    except (ImportError, ValueError):
        return False


def version():
    """The installed ns3 package's version, '' where it is not known."""
    from importlib import metadata
    try:
        return metadata.version('ns3')
    except metadata.PackageNotFoundError:
        return ''


def load():
    """(ns, netsched's C++ namespace): ns-3's bindings with core.h
    compiled into them. A ConfigError saying how to install ns-3 where
    it is missing."""
    global _loaded
    if _loaded is not None:
        return _loaded
    if not available():
        raise ConfigError(INSTALL_HINT)
    # the bindings print a C++ warning per static initialiser they cannot
    # re-run (harmless): keep them off the user's terminal
    fd = os.dup(2)
    try:
        with open(os.devnull, 'w') as null:
            os.dup2(null.fileno(), 2)
            try:
                from ns import ns
                import cppyy
                cppyy.include(os.path.join(os.path.dirname(__file__),
                                           'core.h'))
            finally:
                os.dup2(fd, 2)
    finally:
        os.close(fd)
    _loaded = (ns, cppyy.gbl.netsched)
    return _loaded
