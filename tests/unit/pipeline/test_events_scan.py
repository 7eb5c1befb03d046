"""events.scan (the simulator's flow lines as columns) and the metrics
made from it (metrics.from_log) against the plain reading: events.read
and metrics.compute give the same metrics, summary and files, for logs
in the simulator's layout and for lines only json reads right."""
import csv
import json
import os

import pytest

from netsched import events
from netsched.errors import ConfigError
from netsched.pipeline import metrics
from netsched.pipeline.metrics import logread

# the simulator's layout (sim.engine._log_flows), a send's ready and
# urgency on the second line
SIM = [
    '{"backend":"sim","policy":"fair","seed":1,"t":0.0,"ev":"run_start"}',
    '{"coflow":"c1","bytes":3000.0,"width":2,"t":0.5,"ev":"coflow"}',
    '{"t":1.5,"ev":"flow","id":0,"coflow":"c1","src":"h1","dst":"h2",'
    '"bytes":1000.0,"start":0.5}',
    '{"t":2.5,"ev":"flow","id":1,"coflow":"c1","src":"h3","dst":"h2",'
    '"bytes":2000.0,"start":0.5,"ready":0.75,"urgency":0.125}',
    '{"coflow":"c1","t":2.5,"ev":"coflow_end"}',
    '{"dt":1.0,"util":{"h1->s":0.5,"s->h2":0.25},"t":0.0,"ev":"links"}',
    '{"dt":1.0,"util":{"s->h2":0.75},"t":1.0,"ev":"links"}',
    '{"events":9,"decisions":1,"t":2.5,"ev":"run_end"}']


def _log(tmp_path, lines, name='events.jsonl', end='\n'):
    p = str(tmp_path / name)
    with open(p, 'w') as f:
        f.write('\n'.join(lines) + end)
    return p


def _files(tmp_path, m, tag):
    out = tmp_path / tag
    out.mkdir()
    s = metrics.summarize(m, {'scale': 2.0}, metrics.stop_state(m))
    metrics.write(str(out), m, s)
    return {f: (out / f).read_text() for f in sorted(os.listdir(out))}


def _same(tmp_path, path):
    """from_log's metrics and files are those of compute(read())."""
    fast = metrics.from_log(path)
    plain = metrics.compute(events.read(path))
    assert list(fast['flows']) == list(plain['flows'])
    for key in ('tensors', 'duration_s', 'coflows', 'log', 'sides'):
        assert fast[key] == plain[key], key
    assert dict(fast['links']) == dict(plain['links'])
    assert _files(tmp_path, fast, 'fast') == _files(tmp_path, plain, 'plain')
    return fast


def test_sim_layout_read_as_columns(tmp_path):
    path = _log(tmp_path, SIM)
    blocks = list(events.scan(path))
    (cols, evs, last), = blocks
    # lines 3 and 4 are the flows, taken as columns; the rest by json
    assert cols.id == [0, 1] and cols.src == ['h1', 'h3']
    assert cols.ready == [None, 0.75] and cols.urgency == [None, 0.125]
    assert last == 4 and [n for n, _ in evs] == [1, 2, 5, 6, 7, 8]
    m = _same(tmp_path, path)
    # fct: 1.5 - 0.5 = 1.0 and 2.5 - 0.5 = 2.0; one send with an urgency
    assert m['flows'].fct() == [1.0, 2.0]
    assert m['tensors'] == [(0.125, 0.75, 2.5)]
    # s->h2: busy 1.0 * 0.25 + 1.0 * 0.75 = 1.0 over 2.5 s: 0.4, peak 0.75
    s = metrics.summarize(m, {})
    assert s['links']['s->h2'] == {'mean_util': 0.4, 'peak_util': 0.75}
    assert m['links']['s->h2'] == [(0.0, 1.0, 0.25), (1.0, 1.0, 0.75)]
    assert m['log']['last_event'] == 'links'
    rows = list(csv.reader((tmp_path / 'fast' / 'flows.csv').open()))
    # emulated bytes at scale 2: 1000 / 2 = 500.0
    assert rows[1] == ['0', 'c1', 'h1', 'h2', '1000.0', '500.0', '0.5', '1.5',
                       '1.0']


@pytest.mark.parametrize('line, why', [
    ('{"t":1.5,"ev":"flow","id":2,"coflow":"c,1","src":"h1","dst":"h2",'
     '"bytes":8192,"start":0.5}', 'an int, a comma in a name'),
    ('{"t":1.5,"ev":"flow","id":2,"coflow":"c\\"1","src":"h1","dst":"h2",'
     '"bytes":1.0,"start":0.5}', 'an escaped quote'),
    ('{"t":1.5,"ev":"flow","id":2,"coflow":"c1","dst":"h1","src":"h2",'
     '"bytes":1.0,"start":0.5}', 'dst before src'),
    ('{"t":1.5,"ev":"flow","id":2,"coflow":"c\u00e91","src":"h1",'
     '"dst":"h2","bytes":1.0,"start":0.5}', 'not ASCII'),
    ('{"t":1.5,"ev":"flow","id":02,"coflow":"c1","src":"h1","dst":"h2",'
     '"bytes":1.0,"start":0.5}', 'not JSON'),
    ('{"t":1.5,"ev":"flow","id":2,"coflow":"c1","src":"h1","dst":"h2",'
     '"bytes":1.0,"start":5e-1,"wrote":0.75}', 'another field'),
    ('{"id":2,"coflow":"c1","src":"h1","dst":"h2","bytes":1.0,'
     '"start":0.5,"t":1.5,"ev":"flow"}', "the emulator's layout")])
def test_other_lines_as_json_reads_them(tmp_path, line, why):
    path = _log(tmp_path, SIM[:-1] + [line, SIM[-1]])
    if why == 'not JSON':
        with pytest.raises(ConfigError, match=':8: not a JSON event'):
            metrics.from_log(path)
        return
    m = _same(tmp_path, path)
    assert len(m['flows']) == 3, why


def test_cut_last_line_and_ints(tmp_path):
    # a killed run's cut line is left out and named, as read() does
    path = _log(tmp_path, SIM[:4] + ['{"t":3.0,"ev":"fl'], end='')
    cut = []
    m = metrics.from_log(path, cut)
    assert cut == [5] and len(m['flows']) == 2
    assert m['log']['last_event'] == 'flow' and not m['log']['ended']
    # ints where floats are written: the csv module's text (no .0)
    path = _log(tmp_path, SIM[:2] + [
        '{"t":2,"ev":"flow","id":0,"coflow":"c1","src":"h1","dst":"h2",'
        '"bytes":1000,"start":0}'], name='ints.jsonl')
    m = _same(tmp_path, path)
    assert not m['flows'].plain and list(m['flows'])[0][4:] == (1000, 0, 2)


def test_link_samples_not_float_kept_as_lists(tmp_path):
    # an int utilisation: the lists themselves, peak 1 (an int) as before
    path = _log(tmp_path, SIM[:5] + [
        '{"dt":1.0,"util":{"h1->s":0.5},"t":0.0,"ev":"links"}',
        '{"dt":1.0,"util":{"h1->s":1},"t":1.0,"ev":"links"}'])
    m = _same(tmp_path, path)
    assert m['links'].totals() is None
    s = metrics.summarize(m, {})
    # busy 0.5 + 1 = 1.5 over 2.5 s = 0.6
    assert json.dumps(s['links']['h1->s']) == \
        '{"mean_util": 0.6, "peak_util": 1}'


@pytest.mark.parametrize('block', [1, 2, 1 << 20])
def test_link_samples_in_blocks_and_nan(tmp_path, monkeypatch, block):
    # samples made into arrays every `block`: the same sums and lists
    monkeypatch.setattr(logread, 'LINK_BLOCK', block)
    path = _log(tmp_path, SIM)
    m = _same(tmp_path, path)
    # h1->s: one sample, 1.0 * 0.5 = 0.5 over 2.5 s: 0.2
    assert m['links'].totals()['h1->s'] == (0.5, 0.5)
    assert metrics.summarize(m, {})['links']['h1->s']['mean_util'] == 0.2
    # a NaN (json reads it): the lists, summed by summarize as before
    path = _log(tmp_path, SIM[:5] + [
        '{"dt":1.0,"util":{"h1->s":NaN,"s->h2":0.5},"t":0.0,"ev":"links"}',
        '{"dt":1.0,"util":{"h1->s":0.25},"t":1.0,"ev":"links"}'],
        name='nan.jsonl')
    m = metrics.from_log(path)
    assert m['links'].totals() is None
    assert m['links']['s->h2'] == [(0.0, 1.0, 0.5)]
    s = metrics.summarize(m, {})
    assert s['links']['s->h2'] == {'mean_util': 0.2, 'peak_util': 0.5}
    plain = metrics.summarize(metrics.compute(events.read(path)), {})
    assert json.dumps(s['links']) == json.dumps(plain['links'])


def test_flows_csv_as_the_csv_module_writes_it(tmp_path):
    # names the csv module quotes (a comma, a quote), a zero start, a
    # repeated (bytes, start, end): flows.csv as csv.writer gives it
    lines = SIM[:4] + [
        '{"t":2.5,"ev":"flow","id":%d,"coflow":%s,"src":"h1","dst":"h2",'
        '"bytes":%s,"start":%s}' % (i, json.dumps(c), b, st)
        for i, c, b, st in ((2, 'c,1', '2000.0', '0.5'),
                            (3, 'c"1', '2000.0', '0.5'),
                            (4, 'c1', '0.0', '0.0'), (5, '', '1e+16', '-0.0'))]
    m = metrics.from_log(_log(tmp_path, lines))
    assert m['flows'].plain
    metrics.write(str(tmp_path), m, {'jobs': {}, 'coflows': {},
                                     'stages': {}, 'links': {}, 'scale': 4})
    ref = tmp_path / 'ref.csv'
    metrics.write_csv(str(ref), [
        'id', 'coflow', 'src', 'dst', 'bytes', 'emulated_bytes', 'start_s',
        'end_s', 'fct_s'], ([i, c, s, d, b, b / 4, st, t, t - st]
                            for i, c, s, d, b, st, t in m['flows']))
    got = (tmp_path / 'flows.csv').read_bytes()
    assert got == ref.read_bytes()
    assert b'"c,1"' in got and b'"c""1"' in got and b',-0.0,2.5,2.5\r' in got
