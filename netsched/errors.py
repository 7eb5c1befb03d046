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
