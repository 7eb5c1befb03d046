"""Names a user gives that become file names.

An experiment's ``name:``, a policy as named on the command line
(``geryon:classes=1``, ``package.module:Class``), a sweep's axis values
and a study's id all end up in the name of a folder. Each goes through
:func:`safe_name` first, so that none can climb out of the folder it is
meant for (``../../x``, ``/etc``), hide (``.x``), or make a name the
file system refuses (a NUL byte, 5,000 characters). An --out folder
follows one set of rules for every command that writes one
(:func:`check_out`).
"""
import hashlib
import os
import re

from ..errors import ConfigError

# what a name keeps as it is; any other run of characters becomes '_'
_UNSAFE = re.compile(r'[^A-Za-z0-9._=+~-]+')
# and what it does not start or end with (hidden, '..', '~' a home)
_ENDS = re.compile(r'^[_.~]+|[_.]+$')
# the longest name safe_name gives (a file name may have 255 bytes: room
# is left for what a caller puts around it)
MAX_NAME = 96


def safe_name(text, limit=MAX_NAME):
    """``text`` as one path component: its letters, digits and ``._=+~-``
    kept, every other run of characters (separators, spaces, control
    characters, NUL, anything not ASCII) one ``_``, no ``_`` or ``.`` at
    either end and no ``~`` first (so never ``.``, ``..``, a hidden name
    or ``~``), ``_`` for nothing; longer than ``limit`` characters, cut
    and ended with ``~`` and a short hash of the whole text, so two long
    names stay apart. A name that is already safe and short comes back
    as it is."""
    text = str(text)
    name = _ENDS.sub('', _UNSAFE.sub('_', text)) or '_'
    if len(name) > limit:
        tag = '~' + hashlib.sha1(text.encode('utf-8', 'surrogatepass')) \
            .hexdigest()[:8]
        name = name[:max(1, limit - len(tag))].rstrip('_.') + tag
    return name


def is_component(name):
    """Whether ``name`` (read from a file: runs.csv's run) is one folder
    name: text, not empty, not '.' or '..', no separator or NUL, at most
    255 bytes. Joined to a folder, it stays inside."""
    return isinstance(name, str) and name not in ('', '.', '..') and \
        '/' not in name and '\0' not in name and \
        len(name.encode('utf-8', 'surrogatepass')) <= 255


# the file that says what a results folder holds, in the order looked for
# (a run that did not finish has its event log only)
KINDS = (('reproduce', 'reproduce.json'), ('sweep', 'sweep.json'),
         ('crosscheck', 'crosscheck.json'), ('compare', 'compare.json'),
         ('run', 'summary.json'), ('run', 'events.jsonl'))


def folder_kind(path):
    """What a results folder holds: reproduce, sweep, crosscheck,
    compare or run (by the file each writes), or None."""
    held = _held(path)
    return held[0] if held else None


def _held(path):
    """(kind, the file that says so) of a results folder, or None."""
    for k, f in KINDS:
        if os.path.isfile(os.path.join(path, f)):
            return k, f
    return None


def check_out(out_dir, force=False, own=None):
    """An --out folder: new (its nearest existing folder writable, no
    file on its way), or an empty folder, or with ``force`` a folder
    that is not empty; with ``own`` (the kind of folder the command
    writes: run, compare, ...) never one that holds results of another
    kind (a run's report.html is not a compare's to replace). Otherwise
    a ConfigError that names it. Nothing is written."""
    if out_dir is None:
        return
    if '\0' in os.fsdecode(out_dir):
        raise ConfigError('--out %r: not a path (a NUL byte in it)'
                          % out_dir)
    if not os.path.lexists(out_dir):
        parent = os.path.dirname(os.path.abspath(out_dir))
        while not os.path.lexists(parent):
            parent = os.path.dirname(parent)
        if not os.path.isdir(parent):
            raise ConfigError('--out %s: cannot be made: %s is a file, not '
                              'a folder' % (out_dir, parent))
        if not os.access(parent, os.W_OK | os.X_OK):
            raise ConfigError('--out %s: cannot be made (%s is not '
                              'writable)' % (out_dir, parent))
        return
    if not os.path.isdir(out_dir):
        raise ConfigError('--out %s: exists and is not a folder' % out_dir)
    try:
        there = os.listdir(out_dir)
    except OSError as e:
        raise ConfigError('--out %s: %s' % (out_dir, e.strerror)) from None
    if not os.access(out_dir, os.W_OK | os.X_OK):
        raise ConfigError('--out %s: not writable' % out_dir)
    held = _held(out_dir) if there and own else None
    if held is not None and held[0] != own:
        raise ConfigError('--out %s: holds a %s (%s); a %s is not written '
                          'over it, even with --force: choose another '
                          'folder' % (out_dir, held[0], held[1], own))
    if there and not force:
        raise ConfigError('--out %s: exists and is not empty; choose another '
                          'folder, or give --force to write into it'
                          % out_dir)
