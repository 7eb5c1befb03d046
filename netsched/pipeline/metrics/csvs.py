"""A run's CSV files and summary.json, written; flows.csv with each
distinct value's text made once (a large run has millions of flows).
"""
import csv
import io
import json
import os

from .logread import Flows


def write_csv(path, header, rows):
    with open(path, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


class _Reprs(dict):
    """float -> repr (as the csv module writes a float), each value's
    made once; a zero's is not kept (0.0 and -0.0 are one key)."""

    def __missing__(self, x):
        r = repr(x)
        if x:
            self[x] = r
        return r


class _Scaled(dict):
    """float -> repr(float / scale), as _Reprs."""

    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def __missing__(self, x):
        r = repr(x / self.scale)
        if x:
            self[x] = r
        return r


class _CsvText(dict):
    """str -> the csv module's text of it as a field (quoted where it
    must be)."""

    def __missing__(self, x):
        buf = io.StringIO()
        csv.writer(buf).writerow([x, ''])
        r = self[x] = buf.getvalue()[:-3]      # less ',' and '\r\n'
        return r


FLOW_ROWS = 1 << 16       # flows.csv rows made and written at a time


class _Tails(dict):
    """(bytes, start, end) -> a flows.csv row's text from its bytes on
    (bytes, bytes / scale, start, end, end - start): the flows of a
    coflow that end together share it. Not kept where one is 0 (0.0 and
    -0.0 are one key)."""

    def __init__(self, scale):
        super().__init__()
        self.reprs, self.scaled = _Reprs(), _Scaled(scale)

    def __missing__(self, key):
        b, st, t = key
        num = self.reprs.__getitem__
        r = ','.join((num(b), self.scaled[b], num(st), num(t), num(t - st)))
        if b and st and t:
            self[key] = r
        return r


def _write_flows(path, header, fl, scale):
    """flows.csv of a plain Flows: the text csv.writer gives its rows
    ([id, coflow, src, dst, bytes, bytes / scale, start, end, end -
    start]: ints as str, floats as repr, names quoted where they must
    be), each distinct value's text made once, FLOW_ROWS at a time."""
    names, tails = _CsvText(), _Tails(scale)
    name, tail = names.__getitem__, tails.__getitem__
    with open(path, 'w', newline='') as f:
        csv.writer(f).writerow(header)
        for a in range(0, len(fl), FLOW_ROWS):
            b = a + FLOW_ROWS
            f.write('\r\n'.join(map(','.join, zip(
                map(str, fl.id[a:b]), map(name, fl.coflow[a:b]),
                map(name, fl.src[a:b]), map(name, fl.dst[a:b]),
                map(tail, zip(fl.bytes[a:b], fl.start[a:b],
                              fl.end[a:b]))))) + '\r\n')
            if len(tails) > 1 << 18:       # a long run's many ends
                tails.clear()


def write(out_dir, m, summary):
    """CSV files and summary.json into out_dir."""
    scale = summary.get('scale', 1.0)
    write_csv(os.path.join(out_dir, 'jobs.csv'),
               ['job', 'arrival_s', 'jct_s', 'iterations', 'iter_mean_s',
                'iter_p50_s', 'iter_p99_s'],
               [[j, r['arrival_s'], r['jct_s'], r['iterations'],
                 r['iteration_time_s']['mean'], r['iteration_time_s']['p50'],
                 r['iteration_time_s']['p99']]
                for j, r in summary['jobs'].items()])
    write_csv(os.path.join(out_dir, 'iterations.csv'),
               ['job', 'iter', 'end_s', 'iteration_time_s', 'loss'],
               [[job, it, end, dur, loss]
                for job, rows in m['iteration_times'].items()
                for it, end, dur, loss in rows])
    write_csv(os.path.join(out_dir, 'coflows.csv'),
               ['coflow', 'arrival_s', 'cct_s', 'bytes', 'emulated_bytes'],
               [[c, r['arrival_s'], r['cct_s'], r['bytes'],
                 None if r['bytes'] is None else r['bytes'] / scale]
                for c, r in summary['coflows'].items()])
    write_csv(os.path.join(out_dir, 'stages.csv'),
               ['stage', 'start_s', 'end_s', 'sct_s'],
               [[s, r['start_s'], r['end_s'], r['sct_s']]
                for s, r in summary['stages'].items()])
    head = ['id', 'coflow', 'src', 'dst', 'bytes', 'emulated_bytes',
            'start_s', 'end_s', 'fct_s']
    fl = m['flows']
    if isinstance(fl, Flows) and fl.plain:
        _write_flows(os.path.join(out_dir, 'flows.csv'), head, fl, scale)
    else:
        write_csv(os.path.join(out_dir, 'flows.csv'), head,
                   ([i, c, s, d, b, b / scale, st, t, t - st]
                    for i, c, s, d, b, st, t in fl))
    write_csv(os.path.join(out_dir, 'links.csv'),
               ['link', 'mean_util', 'peak_util'],
               [[k, r['mean_util'], r['peak_util']]
                for k, r in summary['links'].items()])
    with open(os.path.join(out_dir, 'summary.json'), 'w') as f:
        # one write of the whole text: json.dump writes each of its
        # (millions of) pieces on its own
        f.write(json.dumps(summary, indent=1, sort_keys=True) + '\n')
