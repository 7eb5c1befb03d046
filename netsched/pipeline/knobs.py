"""Measuring knobs: settings that change what a run does without being
part of the method under study (a host's TCP settings, a diagnostic in
the controller's scheduler, the simulator's timing noise). They are
experiment keys in three blocks, checked by ``netsched check``, carried
to where they act and recorded in run.json and summary.json (``knobs``)::

    emulator:
      tcp: {congestion_control: cubic, rto_min_ms: 3000, initcwnd: 2,
            cwnd_clamp: 6}
      host_sysctl: {net.ipv4.tcp_early_retrans: 0}
      drain: true
    scheduler: {floor_release: false, hold_starved: false}
    simulator: {send_jitter_ms: 0, send_jitter_seed: 0}

Where each acts: ``emulator.tcp`` (but ``congestion_control``) and
``host_sysctl`` when the fabric sets up its hosts (emulator.interfaces),
``congestion_control`` and ``drain`` in the agents (their plan;
``drain`` also in the ns-3 backend's senders),
``scheduler`` in the controller's scheduler (the fabric description) and
in the simulator's rate setter (``floor_release``), ``simulator`` in the
simulator's workload driver. A key that does not act on the backend that
runs is kept and recorded, so one file serves both backends (crosscheck).

The knobs were environment variables once (``NETSCHED_CC`` and so on,
:data:`ENVIRONMENT`). Those are still read, here only
(:func:`from_environment`), as overrides of the keys: they win over the
file and ``--set``, ``netsched run`` and ``check`` say that they did, and
run.json records them (``knobs.from_environment``).
"""
import json
import os
import re
from dataclasses import dataclass

import yaml

from ..errors import ConfigError, yaml_loader
from .checker import Checker

# a kernel congestion-control module's name (TCP_CA_NAME_MAX is 16)
CC_NAME = re.compile(r'^[a-z][a-z0-9_]{0,14}$')
# only per-network-namespace settings: a host's sysctl outside net.*
# would change the whole machine's
SYSCTL_KEY = re.compile(r'^net(\.[A-Za-z0-9_-]+)+$')
# a sysctl value: numbers and words (several for vectors such as
# tcp_rmem); it goes into a shell command, quoted
SYSCTL_VALUE = re.compile(r'^[A-Za-z0-9_.:-]+( [A-Za-z0-9_.:-]+)*$')
RTO_MAX_MS = 120000        # the kernel's longest retransmission timeout
MAX_JITTER_MS = 1000.0


@dataclass(frozen=True)
class Knobs:
    """The measuring knobs of one experiment, defaults: nothing changed."""
    congestion_control: str = None    # None: the hosts' default
    rto_min_ms: int = None            # None: the kernel's (200 ms)
    initcwnd: int = None              # packets; None: the kernel's (10)
    cwnd_clamp: int = None            # packets in flight at most
    host_sysctl: tuple = ()           # ((key, value), ...)
    drain: bool = True
    floor_release: bool = False
    hold_starved: bool = False
    send_jitter_ms: float = 0.0
    send_jitter_seed: int = 0
    from_environment: tuple = ()      # ((variable, text), ...) applied

    def host_tcp(self):
        """What the fabric sets in every host (emulator.interfaces)."""
        return {'rto_min_ms': self.rto_min_ms, 'initcwnd': self.initcwnd,
                'cwnd_clamp': self.cwnd_clamp,
                'sysctl': tuple(self.host_sysctl)}

    def scheduler(self):
        """What the controller's scheduler is started with (the fabric
        description's ``scheduler``)."""
        return {'floor_release': self.floor_release,
                'hold_starved': self.hold_starved}

    def record(self):
        """run.json's and summary.json's ``knobs``: the blocks as the
        file spells them, every key with the value the run used."""
        return {'emulator': {
                    'tcp': {'congestion_control': self.congestion_control,
                            'rto_min_ms': self.rto_min_ms,
                            'initcwnd': self.initcwnd,
                            'cwnd_clamp': self.cwnd_clamp},
                    'host_sysctl': dict(self.host_sysctl),
                    'drain': self.drain},
                'scheduler': self.scheduler(),
                'simulator': {'send_jitter_ms': self.send_jitter_ms,
                              'send_jitter_seed': self.send_jitter_seed},
                'from_environment': dict(self.from_environment)}

    def changed(self):
        """The knobs set away from their defaults, as ``key=value`` (what
        ``netsched check`` lists)."""
        out, default = [], Knobs().record()

        def walk(rec, dflt, prefix):
            for k, v in rec.items():
                if isinstance(v, dict) and k != 'host_sysctl':
                    walk(v, dflt[k], prefix + k + '.')
                elif v != dflt[k]:
                    out.append('%s%s=%s' % (prefix, k, json.dumps(v)))
        rec = self.record()
        rec.pop('from_environment')
        walk(rec, default, '')
        return out

    def environment_lines(self):
        """What a run or a check says of the overrides it took from the
        environment (one line each; none without)."""
        keys = dict((v, k) for v, k, _ in ENVIRONMENT)
        return ['measuring knob from the environment: %s=%s sets %s '
                '(over the file and --set; recorded in run.json)'
                % (var, text, keys[var]) for var, text in
                self.from_environment]


def _scalar(var, text):
    """A number where the text is one, else the text (the key's check
    then names what is wrong with it)."""
    try:
        v = yaml.load(text, Loader=yaml_loader())
    except (yaml.YAMLError, ConfigError):   # an alias: yaml_loader
        return text
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) \
        else text


def _switch(var, text):
    t = text.strip().lower()
    if t in ('1', 'true', 'yes', 'on'):
        return True
    if t in ('0', 'false', 'no', 'off'):
        return False
    return text


def _sysctl(var, text):
    out = {}
    for kv in text.split():
        k, eq, v = kv.partition('=')
        if not eq or not k or not v:
            raise ConfigError('%s=%s: want KEY=VALUE ..., got %r'
                              % (var, text, kv))
        out[k] = _scalar(var, v)
    return out


def _jitter(var, text):
    """``MS[,SEED]``: the jitter, and its seed where given."""
    parts = text.split(',')
    if len(parts) > 2:
        raise ConfigError('%s=%s: want MS[,SEED]' % (var, text))
    out = [(('simulator', 'send_jitter_ms'), _scalar(var, parts[0]))]
    if len(parts) == 2:
        out.append((('simulator', 'send_jitter_seed'),
                    _scalar(var, parts[1])))
    return out


# variable, the key it sets (as --set names it), how its text is read
ENVIRONMENT = (
    ('NETSCHED_CC', 'emulator.tcp.congestion_control',
     lambda var, text: text.strip()),
    ('NETSCHED_RTO_MIN_MS', 'emulator.tcp.rto_min_ms', _scalar),
    ('NETSCHED_INITCWND', 'emulator.tcp.initcwnd', _scalar),
    ('NETSCHED_CWND_CLAMP', 'emulator.tcp.cwnd_clamp', _scalar),
    ('NETSCHED_HOST_SYSCTL', 'emulator.host_sysctl', _sysctl),
    ('NETSCHED_DRAIN', 'emulator.drain', _switch),
    ('NETSCHED_FLOOR_RELEASE', 'scheduler.floor_release', _switch),
    ('NETSCHED_HOLD_STARVED', 'scheduler.hold_starved', _switch),
    ('NETSCHED_SIM_SEND_JITTER_MS',
     'simulator.send_jitter_ms[,send_jitter_seed]', _jitter),
)


def from_environment(environ=None):
    """The overrides the environment gives: ([(key path, value)],
    ((variable, text), ...)). The one place netsched reads these
    variables; an empty one is unset."""
    environ = os.environ if environ is None else environ
    sets, used = [], []
    for var, key, read in ENVIRONMENT:
        text = environ.get(var, '')
        if not text.strip():
            continue
        v = read(var, text)
        sets += v if isinstance(v, list) else [(tuple(key.split('.')), v)]
        used.append((var, text))
    return sets, tuple(used)


def apply_environment(d, environ=None):
    """A copy of the experiment mapping ``d`` with the environment's
    overrides set, and the variables used."""
    sets, used = from_environment(environ)
    if not sets or not isinstance(d, dict):
        return d, used
    out = dict(d)
    for path, value in sets:
        cur = out
        for i, part in enumerate(path[:-1]):
            nxt = cur.get(part)
            if nxt is None:
                nxt = {}
            elif not isinstance(nxt, dict):
                raise ConfigError('%s: %s is %r, not a mapping (set from the'
                                  ' environment: %s)' % (
                                      '.'.join(path), '.'.join(path[:i + 1]),
                                      nxt, ', '.join(v for v, _ in used)))
            cur[part] = nxt = dict(nxt)
            cur = nxt
        cur[path[-1]] = value
    return out, used


def parse(c, used=()):
    """The knobs of an experiment, from its checker ``c``
    (a pipeline.checker.Checker over the whole file); ``used``: the
    environment variables applied, named in any error."""
    try:
        return _parse(c, used)
    except ConfigError as e:
        if not used:
            raise
        # the variables whose key the error names, else all applied
        keys = dict((v, k) for v, k, _ in ENVIRONMENT)
        named = [u for u in used if ': '.join(
            keys[u[0]].split('[')[0].split('.')) in str(e)] or used
        raise ConfigError('%s (from the environment: %s)' % (
            e, ' '.join('%s=%s' % u for u in named))) from None


def _parse(c, used):
    kw = {}
    emu = c.get('emulator')
    if emu is not None:
        ec = Checker('%s: emulator' % c.where, emu)
        tcp = ec.get('tcp')
        if tcp is not None:
            tc = Checker('%s: emulator: tcp' % c.where, tcp)
            cc = tc.string('congestion_control')
            # fullmatch: $ also matches before a final newline
            if cc is not None and not CC_NAME.fullmatch(cc):
                tc.fail('congestion_control', 'must be the name of a kernel '
                        'congestion control (cubic, bbr, reno, ...), got %r'
                        % cc)
            kw.update(congestion_control=cc,
                      rto_min_ms=tc.num('rto_min_ms', integer=True,
                                        minimum=1, maximum=RTO_MAX_MS),
                      initcwnd=tc.num('initcwnd', integer=True, minimum=1),
                      cwnd_clamp=tc.num('cwnd_clamp', integer=True,
                                        minimum=1))
            tc.done()
        kw['host_sysctl'] = _host_sysctl(ec)
        kw['drain'] = ec.flag('drain', True)
        ec.done()
    sch = c.get('scheduler')
    if sch is not None:
        sc = Checker('%s: scheduler' % c.where, sch)
        kw.update(floor_release=sc.flag('floor_release'),
                  hold_starved=sc.flag('hold_starved'))
        sc.done()
    sim = c.get('simulator')
    if sim is not None:
        mc = Checker('%s: simulator' % c.where, sim)
        kw.update(send_jitter_ms=float(mc.num('send_jitter_ms', 0.0,
                                              minimum=0,
                                              maximum=MAX_JITTER_MS)),
                  send_jitter_seed=mc.num('send_jitter_seed', 0,
                                          integer=True, minimum=0))
        mc.done()
    return Knobs(from_environment=tuple(used), **kw)


def _host_sysctl(ec):
    v = ec.get('host_sysctl')
    if v is None:
        return ()
    if not isinstance(v, dict):
        ec.fail('host_sysctl', 'must map sysctl keys to values '
                '({net.ipv4.tcp_early_retrans: 0}), got %r' % (v,))
    out = []
    for k, x in v.items():
        if not isinstance(k, str) or not SYSCTL_KEY.fullmatch(k):
            ec.fail('host_sysctl', '%r: only per-network-namespace keys '
                    '(net.*) may be set in the hosts; others would change '
                    'the whole machine' % (k,))
        if isinstance(x, bool) or not isinstance(x, (int, str)) or \
                not SYSCTL_VALUE.fullmatch(str(x)):
            ec.fail('host_sysctl', '%s: must be a number or words of '
                    'letters, digits and ._:-, got %r' % (k, x))
        out.append((k, str(x)))
    return tuple(sorted(out))
