"""What the fuzz tests (tests/unit/*/test_fuzz_*.py, issue 27) share: the
hypothesis settings, strategies that take a valid document and break one
thing in it (random documents alone rarely get past the first check),
raw junk, the check that an input got a result or a clear error, and a
guard that sees any file written or process started.

Settings: ``NETSCHED_FUZZ_EXAMPLES`` examples per test (default 200,
what CI runs), the same examples every run (derandomized) unless
``NETSCHED_FUZZ_SEED`` picks other ones; no example database, and
hypothesis' own cache goes to the temporary folder, not the checkout.
"""
import contextlib
import math
import os
import sys
import tempfile

from hypothesis import HealthCheck, seed, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from netsched.errors import NetschedError

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, 'fuzz_corpus')
EXAMPLES_ENV = 'NETSCHED_FUZZ_EXAMPLES'
SEED_ENV = 'NETSCHED_FUZZ_SEED'

# hypothesis writes its unicode table cache under its home folder, by
# default .hypothesis/ in the working directory: keep the checkout clean
set_hypothesis_home_dir(os.path.join(tempfile.gettempdir(),
                                     'netsched-hypothesis-%d' % os.getuid()))

EXAMPLES = int(os.environ.get(EXAMPLES_ENV) or 200)
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                    derandomize=not os.environ.get(SEED_ENV),
                    print_blob=False,
                    suppress_health_check=list(HealthCheck))


def fuzz(test=None, examples=None):
    """The fuzz tests' settings (module docstring) on ``test``;
    ``examples``: fewer examples for a test whose every example runs a
    simulation (``@fuzz(examples=N)``)."""
    if test is None:
        return lambda t: fuzz(t, examples)
    test = (settings(SETTINGS, max_examples=examples) if examples
            else SETTINGS)(test)
    if os.environ.get(SEED_ENV):
        test = seed(int(os.environ[SEED_ENV]))(test)
    return test


# ------------------------------------------------------------ outcomes

def outcome(fn, *names):
    """``fn()``'s result, or the NetschedError it raised, which must name
    one of ``names`` (the file, key, option or line the input came
    from). Any other exception is a bug and propagates, traceback and
    all, for hypothesis to shrink."""
    try:
        return fn()
    except NetschedError as e:
        msg = str(e)
        assert msg.strip(), 'an empty error message'
        assert any(n in msg for n in names), \
            'the error names none of %r: %s' % (names, msg)
        return e


# ------------------------------------------------------ nothing happens

class _Guard:
    """Records, while armed, every audit event that writes or removes a
    file, starts a process or opens a socket: a parser must do none."""
    WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    EVENTS = {'subprocess.Popen', 'os.system', 'os.fork', 'os.forkpty',
              'os.posix_spawn', 'os.exec', 'os.spawn', 'os.kill',
              'os.mkdir', 'os.remove', 'os.rename', 'os.rmdir',
              'os.symlink', 'os.link', 'os.truncate', 'os.chmod',
              'shutil.rmtree', 'shutil.copyfile', 'shutil.move',
              'socket.bind', 'socket.connect', 'tempfile.mkstemp',
              'tempfile.mkdtemp'}

    def __init__(self):
        self.armed = False
        self.seen = []
        sys.addaudithook(self._hook)

    def _hook(self, event, args):
        if not self.armed:
            return
        if event == 'open':
            path, _, flags = (tuple(args) + (None, None, 0))[:3]
            # bytecode caches written by a first import are not the parser's
            if flags and flags & self.WRITE and \
                    '__pycache__' not in str(path):
                self.seen.append((event, path))
        elif event in self.EVENTS:
            self.seen.append((event, args[:2] if isinstance(args, tuple)
                              else args))


_GUARD = None


@contextlib.contextmanager
def nothing_happens():
    """Fails if the code in the block wrote a file, started a process or
    opened a socket (an audit hook: it sees every way there is)."""
    global _GUARD
    if _GUARD is None:
        _GUARD = _Guard()       # audit hooks cannot be removed: one only
    _GUARD.seen, _GUARD.armed = [], True
    try:
        yield
    finally:
        _GUARD.armed = False
    assert not _GUARD.seen, 'the parser did I/O: %r' % (_GUARD.seen[:5],)


def children():
    """The processes this one has started and that are still there."""
    import psutil
    return psutil.Process().children(recursive=True)


# ------------------------------------------------------------- values

# numbers at and past the edges: 64-bit, float range, int(str) digits
EDGES = [0, -1, 1, 2 ** 31, 2 ** 63, -2 ** 63, 10 ** 18, 10 ** 30,
         10 ** 400, -10 ** 400, 0.5, -0.0, 1e-300, 5e-324, 1e300, 1.7e308,
         -1e308, math.inf, -math.inf, math.nan]
numbers = st.one_of(st.sampled_from(EDGES), st.integers(),
                    st.floats(allow_nan=True, allow_infinity=True))
texts = st.one_of(
    st.text(max_size=16),
    st.sampled_from(['', ' ', '\x00', '\n', 'a\nb', '\udcff', '\u2028',
                     '1e400', 'nan', '-inf', '0x10', 'true', 'null',
                     '[1, 2]', '{a: 1}', '&a [*a]', '%s%s', '$(id)',
                     '; rm -rf x', 'x' * 5000, 'é' * 100]))
keys = st.one_of(st.text(max_size=12), st.integers(), st.booleans(),
                 st.none(), st.floats(allow_nan=False))
scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
# what a YAML file can hold: nested lists and mappings of anything
junk = st.recursive(
    st.one_of(scalars, st.binary(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(keys, inner, max_size=4)),
    max_leaves=8)
# what a JSON line can hold (NaN and Infinity included: Python's json
# reads them)
json_junk = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=16)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=8), inner,
                                            max_size=4)),
    max_leaves=8)


def near(value):
    """Values close to ``value`` that a checker may get wrong: the edges
    of its type, the same thing in another type, one step off."""
    out = [None, True, False, [], {}, [value], {'x': value}, '', str(value)]
    if isinstance(value, bool):
        out += [0, 1, 'yes', 'true']
    elif isinstance(value, (int, float)):
        out += [0, -1, -value, value + 1, value - 1, value * 1000,
                math.nan, math.inf, -math.inf, 10 ** 400, 1e-300,
                # huge and tiny, whose consequences a run meets (issue 40)
                1e300, -1e300, 1e12, 1e-9, 2 ** 63]
        if abs(value) < 1e300:
            out += [value + 0.5, float(value)]
        if isinstance(value, float) and math.isfinite(value):
            out.append(int(value))
    elif isinstance(value, str):
        out += [value + 'x', value[:-1], value.upper(), ' ' + value,
                value + '\n', value + '\x00', value * 50, 0, 1.5]
    elif isinstance(value, list):
        out += [value[:-1], value + value[-1:], value[::-1],
                value + [None], [[x] for x in value]]
    elif isinstance(value, dict):
        out += [{k: None for k in value}, dict(value, x=1)]
    return out


# ---------------------------------------------------------- mutations

def paths(doc, prefix=()):
    """Every node's path in a document (the root's is ())."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from paths(v, prefix + (i,))


def _at(doc, path):
    for p in path:
        doc = doc[p]
    return doc


def _copy(doc):
    """A deep copy of a plain document (faster than copy.deepcopy)."""
    if isinstance(doc, dict):
        return {k: _copy(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_copy(v) for v in doc]
    return doc


@st.composite
def mutated(draw, bases, values=junk, key_names=keys):
    """A document from ``bases`` with one thing (sometimes two) broken:
    a value replaced by junk or by a near miss, a key or list item
    removed, an unknown key added, a key renamed. The base itself comes
    now and then, so the valid path is exercised too."""
    doc = _copy(draw(st.sampled_from(bases)))
    for _ in range(draw(st.sampled_from([0, 1, 1, 1, 1, 1, 2]))):
        where = draw(st.sampled_from(list(paths(doc))))
        node = _at(doc, where)
        op = draw(st.sampled_from(['junk', 'near', 'near', 'drop', 'add',
                                   'rename']))
        if op in ('junk', 'near') or not where and op == 'drop':
            v = draw(values if op == 'junk' else st.sampled_from(near(node)))
            if not where:
                doc = v
            else:
                _at(doc, where[:-1])[where[-1]] = v
        elif op == 'drop' and where:
            parent = _at(doc, where[:-1])
            del parent[where[-1]]
        elif op == 'add' and isinstance(node, dict):
            node[draw(key_names)] = draw(values)
        elif op == 'rename' and where and isinstance(
                _at(doc, where[:-1]), dict):
            parent = _at(doc, where[:-1])
            parent[draw(key_names)] = parent.pop(where[-1])
    return doc


@st.composite
def mangled(draw, text):
    """``text`` (str or bytes) with a few random edits: characters or
    bytes inserted, removed or replaced, lines cut or doubled."""
    binary = isinstance(text, bytes)
    piece = st.binary(min_size=1, max_size=8) if binary else \
        st.text(min_size=1, max_size=8)
    for _ in range(draw(st.integers(1, 3))):
        n = len(text)
        i = draw(st.integers(0, n))
        j = draw(st.integers(i, min(n, i + 12)))
        op = draw(st.sampled_from(['insert', 'delete', 'replace', 'cut',
                                   'double']))
        if op == 'insert':
            text = text[:i] + draw(piece) + text[i:]
        elif op == 'delete':
            text = text[:i] + text[j:]
        elif op == 'replace':
            text = text[:i] + draw(piece) + text[j:]
        elif op == 'cut':
            text = text[:i]
        else:
            text = text[:i] + text[i:j] * draw(st.integers(2, 8)) + text[j:]
    return text


def write(folder, name, content):
    """Write a file of the fuzz input (text or bytes) and return its
    path."""
    path = os.path.join(str(folder), name)
    with open(path, 'wb' if isinstance(content, bytes) else 'w',
              **({} if isinstance(content, bytes)
                 else {'encoding': 'utf-8', 'errors': 'surrogatepass',
                       'newline': ''})) as f:
        f.write(content)
    return path
