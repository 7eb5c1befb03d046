"""Progress of long work: a bar on a terminal (tqdm), one plain line per
step elsewhere (a CI log, a file), so what scrolls past stays readable.
"""
import sys
import time


def is_terminal(stream=None):
    stream = stream or sys.stderr
    return hasattr(stream, 'isatty') and stream.isatty()


# the metric a run's line shows where none is asked for: the first its
# row has, in the order of the sweep page's answer (report.PRIMARY)
METRICS = ('avg_jct_s', 'avg_sct_s', 'avg_cct_s', 'avg_iteration_s')


class SweepProgress:
    """A sweep's runs: done, failed, skipped, ETA, and each run's
    ``metric`` (a study's own; default: the first of METRICS a run has)."""

    def __init__(self, stream=None, bar=None, label='sweep', metric=None):
        self.label = label
        self.metric = metric
        self.last = ''                  # the last run's metric, for the bar
        self.stream = stream or sys.stderr
        self.bar_on = is_terminal(self.stream) if bar is None else bar
        self.bar = None
        self.ok = self.failed = self.interrupted = self.skipped = 0
        self.total = 0
        self.t0 = time.monotonic()

    def start(self, total, skipped):
        self.total, self.skipped = total, skipped
        self.t0 = time.monotonic()
        if self.bar_on:
            from tqdm import tqdm
            self.bar = tqdm(total=total, initial=skipped, unit='run',
                            file=self.stream, dynamic_ncols=True,
                            desc=self.label)
            self._postfix()
        else:
            self._line('%s: %d runs, %d already done (skipped)'
                       % (self.label, total, skipped))

    def update(self, key, row):
        metric = self._metric(row)
        if metric:
            self.last = metric
        if row['status'] == 'ok':
            self.ok += 1
        elif row['status'] == 'interrupted':
            self.interrupted += 1
        else:
            self.failed += 1
        if self.bar is not None:
            self.bar.update(1)
            self._postfix()
            if row['status'] != 'ok':
                self.bar.write('%s: %s: %s' % (key, row['status'],
                                               row.get('error') or ''))
            return
        n = self.ok + self.failed + self.interrupted + self.skipped
        ran = n - self.skipped
        eta = (time.monotonic() - self.t0) / ran * (self.total - n)
        self._line('[%*d/%d] %-11s %s  %.1f s%s%s  (ETA %s)' % (
            len(str(self.total)), n, self.total, row['status'], key,
            row.get('wall_s') or 0, '  ' + metric if metric else '',
            '  ' + row['error'] if row.get('error') else '',
            time.strftime('%H:%M:%S', time.gmtime(eta))))

    def _metric(self, row):
        """'avg_cct_s 1.234' of a run's row, or ''."""
        for m in (self.metric,) if self.metric else METRICS:
            if row.get(m) is not None:
                return '%s %.4g' % (m, row[m])
        return ''

    def _postfix(self):
        self.bar.set_postfix_str('done %d, failed %d, skipped %d%s%s' % (
            self.ok, self.failed, self.skipped, ', interrupted %d'
            % self.interrupted if self.interrupted else '',
            ', last %s' % self.last if self.last else ''))

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        else:
            self._line('%s: %d ok, %d failed, %d skipped%s in %.1f s'
                       % (self.label, self.ok, self.failed, self.skipped,
                          ', %d interrupted' % self.interrupted
                          if self.interrupted else '',
                          time.monotonic() - self.t0))

    def _line(self, text):
        print(text, file=self.stream, flush=True)


class RunBar:
    """A single run's work on a terminal: ``bar(done, total)`` as the
    runner goes (flows on the simulator, transfers and marks on the
    emulator), drawn once the total is known."""

    def __init__(self, desc, unit='step', stream=None):
        self.desc, self.unit = desc, unit
        self.stream = stream or sys.stderr
        self.bar = None
        self.n = 0

    def __call__(self, done, total):
        if self.bar is None:
            if not total:
                return
            from tqdm import tqdm
            self.bar = tqdm(total=total, desc=self.desc, file=self.stream,
                            unit=self.unit, dynamic_ncols=True,
                            leave=False)
        if done > self.n:
            self.bar.update(done - self.n)
            self.n = done

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None
