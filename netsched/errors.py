"""The one exception type that means "the user asked for something wrong".

The CLI prints these as one clear line and exits non-zero, without a
traceback; anything else escaping is a bug and keeps its traceback.
"""


class NetschedError(Exception):
    """A user-facing error: bad parameter, bad file, missing prerequisite."""


class TopologyError(NetschedError, ValueError):
    """A topology function was given a parameter it cannot build."""


class ConfigError(NetschedError, ValueError):
    """An experiment, workload or fabric description is invalid."""


class PrerequisiteError(NetschedError):
    """Something the emulator needs (root, OVS, a package) is missing."""


def read_text(path, what=''):
    """The text of a file a user named (UTF-8), or a ConfigError that
    names it (``what``, e.g. 'trace ', goes first): missing, unreadable,
    a path with a NUL byte in it, or the line of a byte that is not
    UTF-8 (a reader handed such bytes raised UnicodeDecodeError)."""
    try:
        with open(path, 'rb') as f:
            data = f.read()
    except (OSError, ValueError) as e:        # ValueError: NUL in the path
        raise ConfigError('%s%s: %s' % (what, path, getattr(
            e, 'strerror', None) or e)) from None
    try:
        return data.decode('utf-8')
    except UnicodeDecodeError as e:
        raise ConfigError('%s%s:%d: not UTF-8 text (byte 0x%02x)' % (
            what, path, data.count(b'\n', 0, e.start) + 1,
            data[e.start])) from None
