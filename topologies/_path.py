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
