"""Lets the topology files import netsched when Mininet's `mn` (system
Python) loads them with --custom: adds the repository and its .venv
site-packages to sys.path. `mn` exec()s custom files without __file__,
so the caller passes its own code object's file name."""
import glob
import os
import sys


def add(filename):
    root = os.path.dirname(os.path.dirname(os.path.abspath(filename)))
    extra = [root] + glob.glob(os.path.join(
        root, '.venv', 'lib', 'python3*', 'site-packages'))
    for p in reversed(extra):
        if p not in sys.path:
            sys.path.insert(0, p)


def topos(filename, name, builder, *params):
    """`topos` dict for Mininet: name -> function of the builder's
    integer parameters (Mininet passes them as strings) and keyword
    parameters (key=value, which Mininet passes as numbers)."""
    add(filename)
    from netsched import topology
    from netsched.emulator.mininet_adapter import mininet_topo
    build = getattr(topology, builder)

    def make(*args, **kwargs):
        return mininet_topo(build(*(int(a) for a in args), **kwargs))
    make.__doc__ = '%s(%s)' % (name, ', '.join(params))
    return {name: make}
