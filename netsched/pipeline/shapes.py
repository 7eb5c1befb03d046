"""What the readers of a results folder take: the shape of summary.json,
run.json, compare.json, sweep.json and of each event in events.jsonl,
checked before (or, for the event log, when) a reader relies on it, so
that a damaged folder gets one line naming the file, the key and what
is wrong instead of a traceback from deep inside a reader.

A shape is one of:

- a type word: ``num`` (int or float, not bool), ``int``, ``str``,
  ``bool``, ``key`` (str or int: a job, coflow or host name), ``scalar``
  (str, num or bool), ``dict``, ``list``, ``any``; with ``?`` after it
  null is taken too (``num?``);
- a dict of key -> shape: a JSON object with these keys (a key ending
  in ``?`` may be missing; ``*`` is the shape of every other key, which
  are otherwise taken as they are);
- ``('map', shape)``: an object whose every value has the shape;
- ``('list', shape)`` or ``('list', shape, n_min, n_max)``: a list of
  such items (n_max None: no bound);
- ``('tuple', (shape, ...))``: a list of exactly these items;
- ``('opt', shape)``: null or the shape.
"""
from ..errors import ConfigError

_NUMBER = (int, float)


def _is(word, v):
    if word == 'any':
        return True
    if word == 'num':
        return isinstance(v, _NUMBER) and not isinstance(v, bool)
    if word == 'int':
        return isinstance(v, int) and not isinstance(v, bool)
    if word == 'str':
        return isinstance(v, str)
    if word == 'bool':
        return isinstance(v, bool)
    if word == 'key':
        return isinstance(v, str) or (isinstance(v, int)
                                      and not isinstance(v, bool))
    if word == 'scalar':
        return isinstance(v, (str, int, float))
    if word == 'dict':
        return isinstance(v, dict)
    if word == 'list':
        return isinstance(v, list)
    raise ValueError('no such shape word: %r' % word)


_WORDS = {'num': 'a number', 'int': 'an integer', 'str': 'text',
          'bool': 'true or false', 'key': 'a name (text or an integer)',
          'scalar': 'text or a number', 'dict': 'an object', 'list': 'a list',
          'any': 'anything'}


def brief(v, n=60):
    """A value as a short text for an error line (never the 312 MB of a
    huge one)."""
    if isinstance(v, dict):
        return 'an object' if v else '{}'
    if isinstance(v, list):
        return 'a list of %d' % len(v) if v else '[]'
    if v is None or isinstance(v, bool):
        return json_word(v)
    r = repr(v)
    return r if len(r) <= n else r[:n] + '...'


def json_word(v):
    return {None: 'null', True: 'true', False: 'false'}[v]


def problem(v, shape, at=''):  # noqa: C901 (one check per shape rule)
    """None where ``v`` has ``shape``, else (key path, what it should
    be, the value there)."""
    if isinstance(shape, str):
        word, opt = shape.rstrip('?'), shape.endswith('?')
        if (opt and v is None) or _is(word, v):
            return None
        return at, _WORDS[word] + (' or null' if opt else ''), v
    if isinstance(shape, dict):
        if not isinstance(v, dict):
            return at, 'an object', v
        rest = shape.get('*')
        for k, sub in shape.items():
            if k == '*':
                continue
            name, opt = k.rstrip('?'), k.endswith('?')
            if name not in v:
                if opt:
                    continue
                return _join(at, name), 'there (it is missing)', None
            bad = problem(v[name], sub, _join(at, name))
            if bad:
                return bad
        if rest is not None:
            known = {k.rstrip('?') for k in shape}
            for k, x in v.items():
                if k not in known:
                    bad = problem(x, rest, _join(at, k))
                    if bad:
                        return bad
        return None
    kind = shape[0]
    if kind == 'opt':
        return None if v is None else problem(v, shape[1], at)
    if kind == 'map':
        if not isinstance(v, dict):
            return at, 'an object', v
        for k, x in v.items():
            bad = problem(x, shape[1], _join(at, k))
            if bad:
                return bad
        return None
    if kind == 'tuple':
        if not isinstance(v, list) or len(v) != len(shape[1]):
            return at, 'a list of %d items' % len(shape[1]), v
        for i, (x, sub) in enumerate(zip(v, shape[1])):
            bad = problem(x, sub, '%s[%d]' % (at, i))
            if bad:
                return bad
        return None
    if kind == 'list':
        if not isinstance(v, list):
            return at, 'a list', v
        lo, hi = (shape[2], shape[3]) if len(shape) > 2 else (0, None)
        if len(v) < lo or (hi is not None and len(v) > hi):
            return at, 'a list of %s items' % (
                lo if lo == hi else '%d or more' % lo if hi is None
                else '%d to %d' % (lo, hi)), v
        for i, x in enumerate(v):
            bad = problem(x, shape[1], '%s[%d]' % (at, i))
            if bad:
                return bad
        return None
    raise ValueError('no such shape: %r' % (shape,))


def _join(at, key):
    return '%s.%s' % (at, key) if at else str(key)


def check(v, shape, where, what=None):
    """``v`` read from ``where`` (a file, or file:line), or a
    ConfigError naming it, the key and what the value should be
    (``what``: the thing, for a value that is wrong as a whole, e.g.
    'a netsched summary')."""
    bad = problem(v, shape)
    if bad is None:
        return v
    at, want, got = bad
    if not at:
        raise ConfigError('%s: not %s (it is %s, not %s)' % (
            where, what or 'readable', brief(got), want))
    if want.startswith('there'):
        raise ConfigError('%s: %s: missing' % (where, at))
    raise ConfigError('%s: %s: want %s, got %s' % (where, at, want,
                                                   brief(got)))


# --- the files ---------------------------------------------------------------

NUM_OR_NULL = 'num?'
# a summary's meta (what run.meta records, and run.json's 'meta')
META = {'experiment?': 'scalar?', 'backend?': 'str?', 'policy?': 'str?',
        'policy_params?': ('opt', 'dict'), 'circuit_scheduler?': 'str?',
        'seed?': 'int?', 'scale?': 'num?', 'topology?': 'str?',
        'link_bps?': 'num?', 'queues?': 'scalar?'}
_STATS = {'mean': 'num?', 'p50?': 'num?', 'p99?': 'num?'}
# a summary as a run writes it, as far as a run's page and its printed
# table take it
SUMMARY_PAGE = dict(META, **{
    'format': 'str',
    'seed': 'int?', 'scale': 'num?', 'topology': 'str?',
    'queues': 'scalar?', 'duration_s': 'num',
    'jobs': ('map', {'arrival_s': 'num?', 'jct_s': 'num?',
                     'iterations': 'int', 'iteration_time_s': _STATS,
                     'early_iteration_s?': 'num?', 'finished?': 'bool',
                     'failed?': 'any'}),
    'coflows': ('map', {'arrival_s?': 'num?', 'cct_s': 'num?',
                        'bytes?': 'num?'}),
    'stages': ('map', {'start_s?': 'num?', 'end_s?': 'num?',
                       'sct_s': 'num?'}),
    'links': ('map', {'mean_util': 'num', 'peak_util': 'num'}),
    'flows?': {'count': 'int', 'fct_s?': ('map', 'num?')},
    'totals': {'jobs_done': 'int', 'coflows_done': 'int',
               'iterations_done?': 'int', '*': 'num?'},
    'complete?': 'bool',
    'incomplete?': ('opt', {'reason': 'str', 'cause': 'str',
                            'stopped_s': 'num', 'last_event?': 'str?',
                            'cut_line?': 'int?',
                            'unfinished_jobs?': ('list', 'key')}),
    'longest_gap?': ('opt', {'gap_s': 'num', 'from_s': 'num',
                             'to_s': 'num', 'in_flight': 'int',
                             'transfers': ('list', {'src': 'key',
                                                    'dst': 'key',
                                                    'side': 'str?'})}),
    'faults?': ('opt', ('list', {
        'kind': 'key', 'target': 'any', 'down_s': 'num', 'up_s': 'num?',
        'reroutes': ('list', 'dict'),
        'jobs': ('map', {'slowdown?': 'num?'}), 'hurt?': 'list'})),
    'circuits?': ('opt', {'total?': ('opt', {'share?': 'num?',
                                             'reconfigurations?': 'int'})}),
    'tensors?': ('opt', 'dict'), 'shifts?': ('opt', 'dict'),
    'placements?': ('opt', 'dict')})
# what every reader of a summary takes (compare needs its jobs and
# coflows only): the page's keys, each but these three optional, of
# their types where given; a job's and a coflow's keys too
SUMMARY = {(k if k.endswith('?') or k in ('format', 'jobs', 'coflows')
            else k + '?'): v for k, v in SUMMARY_PAGE.items()}
SUMMARY['jobs'] = ('map', {k.rstrip('?') + '?': v for k, v in
                           SUMMARY_PAGE['jobs'][1].items()})
SUMMARY['jobs'][1]['iteration_time_s?'] = {
    k.rstrip('?') + '?': v for k, v in _STATS.items()}
SUMMARY['coflows'] = ('map', {k.rstrip('?') + '?': v for k, v in
                              SUMMARY_PAGE['coflows'][1].items()})
# run.json, as far as a reader of a run that did not finish takes it
RUN_RECORD = {'meta?': ('opt', META),
              'stopped?': ('opt', {'cause?': 'str', 'reason?': 'str'}),
              'status?': 'any'}
COMPARE = {'a': 'str', 'b': 'str', 'a_label': 'str', 'b_label': 'str',
           # kind, key, A's value, B's value, relative error
           'rows': ('list', ('tuple', ('str', 'key', 'num?', 'num?',
                                       'num?'))),
           'incomplete?': ('map', 'str')}
SWEEP = {'experiment': 'str', 'policies': ('list', 'str'),
         'seeds': ('list', 'int'),
         'sets?': ('list', ('tuple', ('str', 'list'))),
         'backends': ('list', 'str'), 'baseline?': 'str?'}

# each event kind's fields as metrics.compute reads them (every event
# has t, a number, and ev; dt where given is a number)
EVENT = {'t': 'num', 'ev': 'str', 'dt?': 'num'}
_GRID = ('opt', ('list', 'num', 3, None))
EVENTS = {
    'job_start': {'job': 'key', 'workers?': 'int?'},
    'job_end': {'job': 'key'},
    'iter': {'job': 'key', 'iter': 'key', 'loss?': 'num?', 'host?': 'key?',
             'compute?': ('opt', ('list', ('list', 'num', 2, 2)))},
    'coflow': {'coflow': 'key', 'bytes': 'num?', 'job?': 'key?'},
    'coflow_end': {'coflow': 'key'},
    'stage_start': {'stage': 'key'},
    'stage_end': {'stage': 'key'},
    'flow': {'id': 'key', 'coflow': 'key', 'src': 'key', 'dst': 'key',
             'bytes': 'num', 'start': 'num', 'urgency?': 'num?',
             'ready?': 'num', 'first_read?': 'num?'},
    'writes': {'wrote': ('map', 'num?')},
    'links': {'dt': 'num', 'util': ('map', 'num')},
    'shifts': {'shifts': ('map', _GRID)},
    'gate': {'job': 'key', 'start': 'num', 'drift': 'num'},
    'placement': {'job': 'key', 'candidates': 'any', 'chosen': 'any',
                  'by': 'any'},
    'circuits': {'step': 'str', 'circuits': ('list', ('list', 'key', 3,
                                                        3))},
    'fault': {'kind': 'key', 'target': 'key', 'what': 'str',
              'links': 'any'},
    'job_failed': {'job': 'key'},
    'run_start': {'backend?': 'str?', 'policy?': 'str?', 'seed?': 'int?'},
    'run_incomplete': {'cause?': 'str?', 'why?': 'str?'},
}


def event_problem(e):
    """None for an event metrics.compute can take, else (key, what it
    should be, the value)."""
    bad = problem(e, EVENT)
    if bad is None and e['ev'] in EVENTS:
        bad = problem(e, EVENTS[e['ev']])
    if bad is None and e['ev'] == 'writes':
        for k in e['wrote']:
            try:
                int(k)
            except ValueError:
                return 'wrote.%s' % k, 'a flow id (an integer)', k
    return bad
