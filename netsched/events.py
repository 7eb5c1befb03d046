"""The JSON-lines event log every run writes as it goes.

One object per line, always with ``t`` (seconds since the run started,
data-center units) and ``ev``. The kinds, their fields, and which metric
reads them are listed in docs/experiment-format.md ("events.jsonl"). Both
backends write the same kinds, so metrics cannot tell them apart.
"""
import codecs
import io
import json
import math
import re
import time

import numpy as np

from .errors import ConfigError


_quote = json.encoder.encode_basestring_ascii
_KEYS = {}                       # field name -> its quoted text and ':'


def _json(v):
    """json.dumps(v, separators=(',', ':')): a string, an int, a finite
    float or None without the encoder, anything else with it."""
    tp = type(v)
    if tp is str:
        return _quote(v)
    if tp is int:
        return int.__repr__(v)
    if tp is float and v - v == 0:
        return float.__repr__(v)
    if v is None:
        return 'null'
    return json.dumps(v, separators=(',', ':'))


class EventLog:
    """Append-only writer; flushed at least every ``flush_s`` of wall
    time so an interrupted run keeps what it measured."""

    def __init__(self, path, flush_s=1.0):
        self.path = path
        self._f = open(path, 'w')
        self._flush_s = flush_s
        self._last = time.monotonic()
        self.count = 0

    def write(self, t, ev, **fields):
        fields['t'] = round(float(t), 9)
        fields['ev'] = ev
        # json.dumps(fields, separators=(',', ':'))'s text, its encoder
        # not set up per line (a plan's every coflow has two lines)
        keys = _KEYS
        parts = []
        for k, v in fields.items():
            kq = keys.get(k)
            if kq is None:
                kq = keys[k] = _quote(k) + ':'
            parts.append(kq + _json(v))
        self._f.write('{' + ','.join(parts) + '}\n')
        self.count += 1
        if self.count % 256 == 0:
            now = time.monotonic()
            if now - self._last >= self._flush_s:
                self._f.flush()
                self._last = now

    def write_raw(self, lines):
        """Pre-formatted JSON lines (bulk writers)."""
        self._f.write(lines)
        self.count += lines.count('\n')

    def flush(self):
        self._f.flush()

    def close(self):
        if not self._f.closed:
            self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read(path, cut=None):
    """All events of a log; a truncated last line (killed run) is
    skipped, and its line number appended to the list ``cut`` where one
    is given (so that a summary can say so); any other bad line is an
    error naming the line."""
    try:
        f = open(path)
    except OSError as e:
        raise ConfigError('%s: %s' % (path, e.strerror)) from None
    with f:
        try:
            lines = f.readlines()
        except UnicodeDecodeError as e:
            raise ConfigError('%s: binary data, not JSON lines (byte 0x%02x)'
                              % (path, e.object[e.start])) from None
    if lines and not lines[-1].endswith('\n'):
        last = lines.pop()                 # complete, or the killed run's
        try:
            json.loads(last)
            lines.append(last + '\n')
        except ValueError:
            if cut is not None:
                cut.append(len(lines) + 1)
    body = [x for x in lines if x.strip()]
    try:                                   # one parse for the whole log
        out = json.loads('[' + ','.join(body) + ']')
    except ValueError:
        out = None
    if out is not None and len(out) == len(body) and all(
            isinstance(e, dict) and 't' in e
                               and 'ev' in e for e in out):
        return out
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
        except ValueError:
            if n == len(lines) and not line.endswith('\n'):
                break
            raise ConfigError('%s:%d: not a JSON event' % (path, n)) from None
        if not isinstance(e, dict) or 't' not in e or 'ev' not in e:
            raise ConfigError('%s:%d: an event needs t and ev' % (path, n))
        out.append(e)
    return out


class FlowLineSchema:
    """The flow event's line: its fields in order, each key with its
    value's text. The one layout its writers follow (the simulator's in
    Python, sim.engine, and in C, sim/kernels.c's ns_flow_lines; the
    ns-3 backend's) and :func:`scan` takes apart as columns.

    The values' texts: ``t`` repr(round(t, 9)); ``id`` decimal;
    ``coflow`` the name as json.dumps quotes it (a user's name); ``src``
    and ``dst`` host names, quoted as they are (netsched's names need no
    escape); ``bytes`` repr of the size; ``start`` repr(round(start,
    9)). A model data send adds ``ready`` (repr(round(ready, 9))) and
    ``urgency`` (repr) after ``start``."""

    FIELDS = (('t', '%r'), ('ev', '"flow"'), ('id', '%d'), ('coflow', '%s'),
              ('src', '"%s"'), ('dst', '"%s"'), ('bytes', '%s'),
              ('start', '%s'))
    EXTRA = (('ready', '%r'), ('urgency', '%r'))

    def __init__(self):
        def pairs(fields):
            return ','.join('"%s":%s' % kv for kv in fields)
        whole = '{%s%%s}\n' % pairs(self.FIELDS)
        cut = whole.index('"id":') + len('"id":')
        # HEAD % (t,): the line up to its id, one per event time; BODY %
        # (id, quoted coflow, src, dst, bytes' text, start's text, extra)
        self.HEAD, self.BODY = whole[:cut], whole[cut:]
        self.EXTRA_TEXT = ',' + pairs(self.EXTRA)

    def head(self, t):
        """The lines' start at log time ``t`` (already rounded)."""
        return self.HEAD % (t,)

    def line(self, head, id, coflow, src, dst, size, start, extra=''):
        """One line after :meth:`head`'s ``head``: ``coflow`` quoted,
        ``size`` and ``start`` their texts (repr, repr(round(start, 9)))
        and ``extra`` :meth:`extra`'s or ''."""
        return head + self.BODY % (id, coflow, src, dst, size, start, extra)

    def extra(self, ready, urgency):
        """A model data send's fields (``ready`` already rounded)."""
        return self.EXTRA_TEXT % (ready, urgency)

    def sep(self, key):
        """The text before ``key``'s value: its comma, quoted key and
        colon."""
        return (',"%s":' % key).encode('ascii')


FLOW_LINE = FlowLineSchema()

# a flow line (FLOW_LINE) starts with _HEAD and has _MARK at its first
# comma: the bulk of a long log, taken apart as columns
# (_vector_columns) instead of a JSON parse per line; a block with such
# a line in another layout is read by json
_HEAD = FLOW_LINE.HEAD.split('%')[0].encode('ascii')
_MARK = FLOW_LINE.sep('ev') + b'"flow"' + FLOW_LINE.sep('id')
_PAD = bytes(64)                 # after a block: room for _window's rows
_JSON_NUMBER = re.compile(r'-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?')
_PLAIN_STRING = re.compile(r'[^"\\\x00-\x1f]*')


class _NotPlain(Exception):
    """A block the columns do not take (read by json)."""


class _Numbers(dict):
    """JSON number text -> its value (json's: int without a fraction or
    exponent, else float), each text converted once."""

    ints = False                 # whether any text was an int

    def __missing__(self, k):
        if not _JSON_NUMBER.fullmatch(k):
            raise _NotPlain(k)
        if '.' in k or 'e' in k or 'E' in k:
            v = float(k)
        else:
            v = int(k)
            self.ints = True
        self[k] = v
        return v


class _Strings(dict):
    """JSON string body -> the string, where it needs no unescaping; one
    object per distinct name."""

    def __missing__(self, k):
        if not _PLAIN_STRING.fullmatch(k):
            raise _NotPlain(k)
        self[k] = k
        return k


def scan(path, cut=None, block=1 << 24):
    """The log as :func:`read` reads it (the same events, the same
    errors, a cut last line skipped and its number put in ``cut``), in
    blocks of about ``block`` bytes, without a dict per simulator flow
    line. Yields, per block, (flows, events, last_flow) in log order:
    ``flows`` the block's flow lines in the simulator's layout as
    columns (t, id, coflow, src, dst, bytes, start, ready, urgency; ready
    and urgency None where a line has none) or None, ``events`` the
    block's other events as (line number, dict), ``last_flow`` the line
    number of its last flow line in ``flows`` (0 without). ``flows`` has
    ``ints`` True where a t, bytes or start was written as an int."""
    try:
        f = open(path)
    except OSError as e:
        raise ConfigError('%s: %s' % (path, e.strerror)) from None
    nums, names = _Numbers(), _Strings()
    with f:
        # the bytes decoded as the text file would (its encoding, its
        # newlines), a block at a time, cut after a newline
        dec = io.IncrementalNewlineDecoder(codecs.getincrementaldecoder(
            f.encoding)(f.errors), True)
        done, rest, eof = 0, b'', False       # lines before the block
        while not eof:
            data = f.buffer.read(block)
            eof = not data
            data = rest + data
            cut_at = len(data) if eof else data.rfind(b'\n') + 1
            raw, rest = data[:cut_at], data[cut_at:]
            try:
                text = dec.decode(raw, eof)
            except UnicodeDecodeError as e:     # a binary file, or damaged
                at = min(e.start, len(raw) - 1)
                raise ConfigError('%s:%d: binary data, not a JSON line (byte '
                                  '0x%02x)' % (path, done + raw.count(
                                      b'\n', 0, at) + 1, raw[at])) from None
            if eof and text and not text.endswith('\n'):
                i = text.rfind('\n') + 1
                text, last = text[:i], text[i:]
                raw = None                 # the bytes are not the text's
                try:                       # complete, or the killed run's
                    json.loads(last)
                    text += last + '\n'
                except ValueError:
                    if cut is not None:
                        cut.append(done + text.count('\n') + 1)
            if not text:
                continue
            plain = raw is not None and text.isascii() and b'\r' not in raw
            cols, evs, last, n = _block(path, text, raw if plain else None,
                                        done, nums, names)
            yield cols, evs, last
            if len(nums) > 1 << 18:        # a long run's many start times
                nums.clear()
            done += n


def _block(path, text, raw, done, nums, names):
    """One block of scan (``text``, its lines; ``raw``: its bytes, where
    they are the text's, ASCII): its simulator flow lines by
    _vector_columns, the rest by json (one parse for all, else line by
    line for the error). Returns scan's three and the block's lines."""
    if raw is None:
        lines = text.split('\n')[:-1]
        return None, _by_json(path, [(done + n, x + '\n') for n, x in
                                     enumerate(lines, 1)]), 0, len(lines)
    a = np.frombuffer(raw + _PAD, np.uint8)
    ends = np.flatnonzero(a == 10)
    starts = np.r_[0, ends[:-1] + 1]
    commas = np.flatnonzero(a == 44)
    # a flow line: {"t": then ,"ev":"flow","id": at its first comma
    k = np.searchsorted(commas, starts)
    sel = _at(a, starts, _HEAD)
    if len(commas):
        first = commas[np.minimum(k, len(commas) - 1)]
        sel &= (first < ends) & _at(a, first, _MARK)
    else:
        sel[:] = False
    cols, last = None, 0
    if sel.any():
        try:
            cols = _vector_columns(a, raw, starts[sel], ends[sel], commas,
                                   k[sel], nums, names)
            last = done + 1 + int(np.flatnonzero(sel)[-1])
        except _NotPlain:                  # all of this block by json
            sel[:] = False
    rest = np.flatnonzero(~sel)
    evs = _by_json(path, [(done + 1 + n, text[i:j + 1]) for n, i, j in zip(
        rest.tolist(), starts[rest].tolist(), ends[rest].tolist())])
    if cols is not None and any(e['ev'] == 'flow' for _, e in evs):
        # flow lines of another layout too: all in the log's order
        return _block(path, text, None, done, nums, names)
    return cols, evs, last, len(ends)


def _by_json(path, lines):
    """(line number, line) but blank ones, as (line number, event)."""
    other = [(n, x) for n, x in lines if x.strip()]
    try:
        evs = json.loads('[' + ','.join([x for _, x in other]) + ']')
    except ValueError:
        evs = None
    if evs is None or len(evs) != len(other) or not all(
            isinstance(e, dict) and 't' in e and 'ev' in e for e in evs):
        evs = []
        for n, line in other:
            try:
                e = json.loads(line)
            except ValueError:
                raise ConfigError('%s:%d: not a JSON event'
                                  % (path, n)) from None
            if not isinstance(e, dict) or 't' not in e or 'ev' not in e:
                raise ConfigError('%s:%d: an event needs t and ev'
                                  % (path, n))
            evs.append(e)
    return [(n, e) for (n, _), e in zip(other, evs)]


def _rows(a, pos, width):
    """The ``width`` bytes of ``a`` from each position, as rows (a copy)."""
    items = np.ndarray((len(a) - width + 1,), 'V%d' % width, a, 0, (1,))
    return items[pos].view(np.uint8).reshape(len(pos), width)


def _words(a, s, e, width):
    """The spans [s, e) of ``a`` as 8-byte words (little-endian, bytes
    after a span's end zero), as many as the longest needs (_NotPlain
    where one is longer than ``width`` bytes, or empty). ``a`` ends in
    _PAD."""
    n = e - s
    if len(n) and (n.min() < 1 or n.max() > width):
        raise _NotPlain()
    u8 = np.ndarray((len(a) - 7,), '<u8', a, 0, (1,))    # unaligned
    return [u8[s + j] & _MASKS[np.clip(n - j, 0, 8)]
            for j in range(0, int(n.max()) if len(n) else 0, 8)]


# a word's first b bytes: _MASKS[b]
_MASKS = np.array([(1 << 8 * b) - 1 for b in range(9)], np.uint64)


def _has_byte(words, byte):
    """Whether a byte of a word is ``byte`` (not 0), by the zero-byte test
    on word ^ byte...byte (bytes after a span's end are 0, never it)."""
    ones = np.uint64(0x0101010101010101)
    high = np.uint64(0x8080808080808080)
    for w in words:
        x = w ^ (ones * np.uint64(byte))
        if ((x - ones) & ~x & high).any():
            return True
    return False


def _at(a, pos, text):
    """Per position of ``pos``: whether ``text`` is there in ``a``."""
    want = np.frombuffer(text + bytes(-len(text) % 8), '<u8')
    u8 = np.ndarray((len(a) - 7,), '<u8', a, 0, (1,))    # unaligned
    out = np.ones(len(pos), bool)
    for j, x in zip(range(0, len(text), 8), want):
        out &= (u8[pos + j] & _MASKS[min(len(text) - j, 8)]) == x
    return out


def _lit(a, pos, text):
    """Whether ``text`` is at each of the positions ``pos`` of ``a``."""
    return bool(_at(a, pos, text).all())


def _window(a, s, e, width):
    """The spans [s, e) of ``a`` as rows as wide as the longest (at most
    ``width`` bytes), zeros after each span's end; _NotPlain where one
    is longer. ``a`` ends in at least ``width`` zeros."""
    n = e - s
    wide = max(int(n.max()) if len(n) else 0, 1)
    if len(n) and (n.min() < 0 or wide > width):
        raise _NotPlain()
    w = _rows(a, s, wide)
    w[np.arange(wide) >= n[:, None]] = 0
    return w


def _count(mask, starts, ends):
    """How many of ``mask`` are in each span [starts, ends)."""
    at = np.flatnonzero(mask)
    return np.searchsorted(at, ends) - np.searchsorted(at, starts)


def _values(buf, a, s, e, conv, width=48):
    """The spans' texts through ``conv`` (a _Numbers or _Strings: checked
    and converted once per run of equal texts, or with many runs of
    texts of 8 bytes or fewer once per distinct text), as a list;
    _NotPlain where one holds a quote or is empty."""
    n = e - s
    words = _words(a, s, e, width)
    if _has_byte(words, 34):
        raise _NotPlain()
    new = np.ones(len(s), bool)
    new[1:] = n[1:] != n[:-1]
    for w in words:
        new[1:] |= w[1:] != w[:-1]
    first, run = np.flatnonzero(new), np.cumsum(new) - 1
    if len(first) > len(s) // 4 and len(words) == 1:
        # many runs (hosts): each distinct text once, by its word
        _, first, run = np.unique(words[0], return_index=True,
                                  return_inverse=True)
    texts = [buf[i:j].decode('ascii') for i, j in zip(
        s[first].tolist(), e[first].tolist())]
    vals = np.empty(len(texts), object)
    vals[:] = list(map(conv.__getitem__, texts))
    return vals[run.ravel()].tolist()


def _vector_columns(a, buf, starts, ends, commas, k, nums, names):
    """The flow lines [starts, ends) (ends: their newlines) of the block
    ``buf``, each starting {"t": with _MARK at its first comma (_block
    checked that), taken apart with numpy (``a``: the block's bytes then
    _PAD; ``commas``: where its commas are, ``k``: the first after each
    start): the comma positions place every other key, each of which is
    checked, and each value's text is converted (and checked as JSON)
    once per run of equal texts; _NotPlain where a line is not in the
    simulator's layout (the block is then read by json)."""
    count = np.searchsorted(commas, ends) - k
    nine = count == 9               # with a ready time and an urgency
    if not ((count == 7) | nine).all() or not (a[ends - 1] == 125).all():
        raise _NotPlain()
    c0, c1, c2, c3, c4, c5, c6 = [commas[k + j] for j in range(7)]
    c7, c8 = commas[k[nine] + 7], commas[k[nine] + 8]
    sep = FLOW_LINE.sep
    if not (_lit(a, c2, sep('coflow') + b'"')
            and _lit(a, c3 - 1, b'"' + sep('src') + b'"')
            and _lit(a, c4 - 1, b'"' + sep('dst') + b'"')
            and _lit(a, c5 - 1, b'"' + sep('bytes'))
            and _lit(a, c6, sep('start'))
            and _lit(a, c7, sep('ready'))
            and _lit(a, c8, sep('urgency'))):
        raise _NotPlain()
    # no backslash (an escape) and no control byte in a line (a quote in
    # a name: _values)
    if (b'\\' in buf and _count(a == 92, starts, ends).any()) or (
            np.count_nonzero(a < 32) != np.count_nonzero(a == 10)
            + len(_PAD) and _count(a < 32, starts, ends).any()):
        raise _NotPlain()
    # ids: decimal digits, no leading zero, at most 18 of them
    s, e = c1 + len(sep('id')), c2
    w = _window(a, s, e, 18)
    inside = np.arange(w.shape[1]) < (e - s)[:, None]
    d = w.astype(np.int64) - 48
    if ((e - s) < 1).any() or (inside & ((d < 0) | (d > 9))).any() or \
            ((w[:, 0] == 48) & ((e - s) > 1)).any():
        raise _NotPlain()
    ids = np.zeros(len(s), np.int64)
    for j in range(w.shape[1]):
        ids = np.where(inside[:, j], ids * 10 + d[:, j], ids)
    end_start = ends - 1
    end_start[nine] = c7
    num = nums
    out = FlowColumns(
        _values(buf, a, starts + len(_HEAD), c0, num), ids.tolist(),
        _values(buf, a, c2 + len(sep('coflow')) + 1, c3 - 1, names),
        _values(buf, a, c3 + len(sep('src')) + 1, c4 - 1, names),
        _values(buf, a, c4 + len(sep('dst')) + 1, c5 - 1, names),
        _values(buf, a, c5 + len(sep('bytes')), c6, num),
        _values(buf, a, c6 + len(sep('start')), end_start, num),
        None, None)
    if nine.any():
        ready = np.full(len(ends), None, object)
        urg = np.full(len(ends), None, object)
        ready[nine] = _values(buf, a, c7 + len(sep('ready')), c8, num)
        urg[nine] = _values(buf, a, c8 + len(sep('urgency')),
                            ends[nine] - 1, num)
        out.ready, out.urgency = ready.tolist(), urg.tolist()
    out.ints = nums.ints
    return out


class FlowColumns:
    """A block's simulator flow lines as columns (scan)."""

    __slots__ = ('t', 'id', 'coflow', 'src', 'dst', 'bytes', 'start',
                 'ready', 'urgency', 'ints')

    def __init__(self, t, id, coflow, src, dst, size, start, ready,
                 urgency):
        self.t, self.id, self.coflow, self.src, self.dst = \
            t, id, coflow, src, dst
        self.bytes, self.start, self.ready, self.urgency = \
            size, start, ready, urgency
        self.ints = False


def finite(x):
    return x if x is not None and math.isfinite(x) else None
