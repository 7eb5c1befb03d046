"""Names a user gives that become file names.

An experiment's ``name:``, a policy as named on the command line
(``geryon:classes=1``, ``package.module:Class``), a sweep's axis values
and a study's id all end up in the name of a folder. Each goes through
:func:`safe_name` first, so that none can climb out of the folder it is
meant for (``../../x``, ``/etc``), hide (``.x``), or make a name the
file system refuses (a NUL byte, 5,000 characters).
"""
import hashlib
import re

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
