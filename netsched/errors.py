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


class YamlAliasError(ConfigError):
    """A YAML document a user wrote uses an anchor or an alias
    (:func:`yaml_loader`); ``where`` is its file, ``line`` its line,
    ``token`` the anchor or alias (``&name``, ``*name``)."""

    def __init__(self, where, line, token):
        self.where, self.line, self.token = where, line, token
        super().__init__(
            '%s:%d: YAML anchors and aliases are not accepted (%s): write '
            'the value out in full' % (where, line, token))


_YAML_LOADER = []


def yaml_loader():
    """The YAML loader for what users write (experiments, model
    profiles, study files, --set values): PyYAML's safe loader that
    refuses anchors and aliases (YamlAliasError, naming the file and
    line). An alias is a reference: ``expect: *bomb`` of nine nested
    lists of nine aliases is a few lines that expand to 9**9 items
    wherever the value is walked, printed or copied."""
    if not _YAML_LOADER:
        import yaml

        class Loader(yaml.SafeLoader):
            def compose_node(self, parent, index):
                ev = self.peek_event()
                if isinstance(ev, yaml.AliasEvent):
                    token = '*%s' % ev.anchor
                elif getattr(ev, 'anchor', None) is not None:
                    token = '&%s' % ev.anchor
                else:
                    return super().compose_node(parent, index)
                raise YamlAliasError(ev.start_mark.name,
                                     ev.start_mark.line + 1,
                                     _short(token))
        _YAML_LOADER.append(Loader)
    return _YAML_LOADER[0]


def _short(text, n=40):
    return text if len(text) <= n else text[:n] + '...'
