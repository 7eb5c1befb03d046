"""What a sweep runs over, as the command line names it: seeds
(``--seeds 1-5``) and policies under display labels (``--policies
mine=aalo:first_mb=40``), and the baseline its ratios are against."""
import re

from ..errors import ConfigError
from ..workload import bounds


def parse_seeds(text):
    """``1-5``, ``1,3,8`` or ``1-3,7`` -> sorted distinct seeds."""
    out = set()
    for part in str(text).split(','):
        part = part.strip()
        lo, dash, hi = part.partition('-')
        try:
            a = int(lo)
            b = int(hi) if dash else a
        except ValueError:
            raise ConfigError('--seeds: want N, N-M or a comma-separated '
                              'list of them, got %r' % text) from None
        if a < 0 or b < a:
            raise ConfigError('--seeds: %r is not a range of seeds >= 0'
                              % part)
        if b - a + 1 + len(out) > bounds.MAX_RUNS:
            raise ConfigError('--seeds: %r is %d seeds; a sweep runs at '
                              'most %d' % (part, b - a + 1, bounds.MAX_RUNS))
        out.update(range(a, b + 1))
    return sorted(out)


def labelled(text):
    """(label, spec) of one --policies entry. ``label=spec`` gives the
    policy a display name for the tables, figures, ratios.csv and run
    folders (``mine=aalo:first_mb=40``); a bare spec is its own label.
    The label is what comes before an ``=`` that precedes every ``:``,
    so ``aalo:first_mb=40`` and ``pkg.mod:Cls:k=1`` have none."""
    text = str(text)
    head, eq, spec = text.partition('=')
    if not eq or ':' in head:
        return text, text
    if not LABEL.fullmatch(head) or not spec:
        raise ConfigError(
            '--policies %s: want LABEL=POLICY (e.g. mine=aalo:first_mb=40), '
            'a label being up to %d letters, digits and ._+~- (starting '
            'with a letter or digit)' % (text, LABEL_MAX))
    return head, spec


# a label names folders and legend entries: short, and safe in a path
LABEL_MAX = 40
LABEL = re.compile(r'[A-Za-z0-9][A-Za-z0-9._+~-]{0,%d}' % (LABEL_MAX - 1))


def labels(policies):
    """[(label, spec)] of --policies entries, each label once and each
    spec once (two labels of one policy would run the same runs)."""
    out = [labelled(p) for p in policies]
    names = [n for n, _ in out]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise ConfigError('--policies names %s twice: %r'
                          % (twice, ','.join(policies)))
    specs = [sp for _, sp in out]
    twice = next((sp for sp in specs if specs.count(sp) > 1), None)
    if twice is not None:
        raise ConfigError('--policies: %s run the same policy %s'
                          % (' and '.join(n for n, sp in out if sp == twice),
                             twice))
    return out


def baseline_of(named, asked=None):
    """The label of the policy a sweep's ratios are against: ``asked``
    (a label, or the spec a label stands for), else fair where swept
    (by name or under a label), else the first."""
    names = [n for n, _ in named]
    by_spec = {sp: n for n, sp in named}
    if asked is None:
        return 'fair' if 'fair' in names else by_spec.get('fair', names[0])
    if asked in names:
        return asked
    if asked in by_spec:
        return by_spec[asked]
    raise ConfigError('--baseline %s: not among --policies %s'
                      % (asked, ','.join(names)))
