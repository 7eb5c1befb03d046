"""``netsched sweep --cluster tcp://HOST:PORT``: a sweep's runs on a Dask
distributed cluster, their run folders back in the sweep folder.

Each run is still ``netsched run`` in a child process (sweep.execute), now
started by a task on a worker: the task runs it into a temporary folder
under the worker's local directory and returns (status, error line, wall
seconds, the run folder as tar.gz bytes, the log text, the worker's
address). The client unpacks the folder into ``DIR/<key>`` (replacing
what an earlier attempt left), writes ``DIR/logs/<key>.log`` headed by the
worker that ran it, and hands the run to the sweep as the local executor
would. Tasks are submitted with fresh keys and no retries: a run is an
experiment, not a pure function.

Starting the cluster::

    dask scheduler --port 8786                     # one, anywhere
    dask worker tcp://SCHED:8786 --nworkers 1 --nthreads <cores> \\
        --resources emulator=1                     # on each machine

One worker process per machine, because Dask counts resources per worker
process: every emulation asks for ``emulator=1``, so a machine runs its
emulations one at a time (they share OVS and interface names), while its
simulations, which ask for nothing, fill the threads. Threads do not fight
over the GIL: each only waits on its child process. Start the worker as
root where emulations run (the emulator needs it), and from the same
netsched checkout or install as the client, at the same path: the runs
name their experiment (and ``--trace``) file by absolute path, and a
worker without it fails that run with a clear error.

Ctrl-C cancels the runs not started and sets a ``distributed.Event``
(one per sweep) that every running task polls: it passes one SIGINT to its
child, which tears down, and the sweep keeps each run's result as it
would locally (status ``interrupted``).
"""
import io
import os
import shutil
import socket
import sys
import tarfile
import tempfile
import threading
import time
import uuid
from urllib.parse import urlsplit

from ..errors import NetschedError, PrerequisiteError
from . import sweep

# the resource a worker offers once (--resources emulator=1): one
# emulation at a time per worker process
EMULATOR = 'emulator'


class ClusterExecutor:
    """Runs specs on the Dask cluster at ``address``; the interface of
    sweep.LocalExecutor."""

    # sweep.execute gives an interrupted child 120 s to tear down before
    # it terminates it; the tasks then still pack their folders
    STOP_WAIT_S = 150

    def __init__(self, address, connect_timeout_s=10):
        self.address = _check_address(address)
        try:
            import distributed
        except ImportError:
            raise PrerequisiteError(
                '--cluster needs the Dask distributed package: pip install '
                '"netsched[cluster]" (or distributed)') from None
        self.distributed = distributed
        try:
            self.client = distributed.Client(
                self.address, timeout=connect_timeout_s,
                set_as_default=False)
        except OSError as e:
            raise NetschedError('--cluster %s: cannot reach the Dask '
                                'scheduler (%s)' % (address, e)) from None
        sweep_id = uuid.uuid4().hex[:12]
        self.prefix = 'netsched-%s-' % sweep_id
        self.stop = distributed.Event('netsched-stop-%s' % sweep_id,
                                      client=self.client)
        self.futures = {}                   # future -> spec, until collected
        self.root = self.on_done = None
        self.lock = threading.Lock()
        self.stopped = self.closed = False

    def run(self, specs, root, on_done):
        """Run every spec into ``root/<key>``; ``on_done(spec, status,
        error, wall)`` as each ends."""
        self.root, self.on_done = root, on_done
        self._warn_capacity(specs)
        finished = False
        try:
            for spec in specs:
                f = self.client.submit(
                    _task, spec, self.stop, key=self.prefix + spec.key,
                    pure=False, retries=0, resources={EMULATOR: 1}
                    if spec.backend == 'emu' else None)
                self.futures[f] = spec
            # as_completed waits in 0.1 s slices: Ctrl-C reaches us
            for f in self.distributed.as_completed(
                    list(self.futures), loop=self.client.loop):
                self._collect(f)
            finished = True
        finally:
            if finished:
                self._close()
            else:
                self.interrupt()

    def interrupt(self):
        """Stop: the runs not started are cancelled; the running ones pass
        one SIGINT to their child and are waited for (at most STOP_WAIT_S)
        and collected."""
        with self.lock:
            if self.stopped or self.closed:
                return
            self.stopped = True
        try:
            # set first: a run that starts after this sees it and drops
            # itself, so cancelling by the scheduler's view cannot race
            self.stop.set()
            running = {k for keys in self.client.processing().values()
                       for k in keys}
            unstarted = [f for f in self.futures
                         if f.key not in running and not f.done()]
            self.client.cancel(unstarted)
            for f in unstarted:
                del self.futures[f]
            left = list(self.futures)
            try:
                for f in self.distributed.as_completed(
                        left, loop=self.client.loop,
                        timeout=self.STOP_WAIT_S):
                    self._collect(f)
            except TimeoutError:
                print('netsched: %d cluster run(s) still stopping after %d '
                      's; their results are lost' % (
                          len(self.futures), self.STOP_WAIT_S),
                      file=sys.stderr)
        finally:
            self._close()

    def _collect(self, f):
        """A finished future's run into the sweep folder, then on_done."""
        spec = self.futures.pop(f, None)
        if spec is None:
            return
        if f.status == 'finished':
            res = f.result()
            if res is None:                 # dropped: started after Ctrl-C
                return
            status, err, wall, packed, log, worker = res
        else:
            # the task raised past its own handler (its worker died, say)
            # or the cluster dropped it
            err = _describe(f.exception()) if f.status == 'error' else \
                'cancelled on the cluster (was the scheduler lost?)'
            status, wall, packed, log, worker = 'failed', 0.0, None, '', '?'
        out = os.path.join(self.root, spec.key)
        if os.path.isdir(out):
            shutil.rmtree(out)              # what an earlier attempt left
        if packed:
            try:
                _unpack(packed, out)
            except (tarfile.TarError, ValueError) as e:
                # one bad reply fails its run, not the whole sweep
                status, err = 'failed', 'its run folder: %s' % e
        log_path = os.path.join(self.root, 'logs', spec.key + '.log')
        os.makedirs(os.path.dirname(log_path), exist_ok=True)
        with open(log_path, 'w') as fh:
            fh.write('dask worker: %s\n%s' % (worker, log))
        self.on_done(spec, status, err, wall)

    def _warn_capacity(self, specs):
        """Say so when no worker could take some of the runs yet: Dask
        holds such tasks until one joins, which looks like a hang."""
        workers = self.client.scheduler_info(n_workers=-1)['workers']
        if not workers:
            print('netsched: warning: the Dask scheduler at %s has no '
                  'workers yet; the runs wait for one' % self.address,
                  file=sys.stderr)
        elif any(s.backend == 'emu' for s in specs) and not any(
                w.get('resources', {}).get(EMULATOR) for w in
                workers.values()):
            print('netsched: warning: no Dask worker offers resource '
                  '%s=1 yet (dask worker ... --resources %s=1); the emu '
                  'runs wait for one' % (EMULATOR, EMULATOR),
                  file=sys.stderr)

    def _close(self):
        with self.lock:
            if self.closed:
                return
            self.closed = True
        try:
            if self.stopped and not self.futures:
                # the scheduler forgets it; kept while a task may still
                # have to see it
                self.stop.clear()
        finally:
            self.client.close()


def _check_address(address):
    """``tcp://HOST:PORT`` (or tls://), else a clear error: without a
    scheme or port Dask would guess, and the error would be about that."""
    u = urlsplit(address or '')
    try:
        port = u.port
    except ValueError:
        port = None
    if u.scheme not in ('tcp', 'tls') or not u.hostname or port is None \
            or u.path not in ('', '/') or u.query or u.fragment:
        raise NetschedError('--cluster %r: want the Dask scheduler as '
                            'tcp://HOST:PORT' % address)
    return address.rstrip('/')


def _describe(exc):
    return '%s: %s' % (type(exc).__name__, exc)


def _unpack(packed, out):
    """A task's tar.gz into ``out``, refusing what a run folder never
    holds (links, devices, paths leaving ``out``)."""
    with tarfile.open(fileobj=io.BytesIO(packed), mode='r:gz') as tar:
        members = tar.getmembers()
        for m in members:
            parts = m.name.split('/')
            if not (m.isfile() or m.isdir()) or m.name.startswith('/') \
                    or '..' in parts:
                raise ValueError('the worker sent an unexpected entry %r'
                                 % m.name)
        os.makedirs(out)
        tar.extractall(out, members)


# --- on the worker ---------------------------------------------------------

class _Stop:
    """sweep.execute's ``stop`` over a Dask Event. execute asks five times
    a second per run; this asks the scheduler at most every ``every`` s."""

    def __init__(self, event, every=0.5):
        self.event, self.every = event, every
        self.checked = None
        self.value = False

    def is_set(self):
        now = time.monotonic()
        if not self.value and (self.checked is None
                               or now - self.checked >= self.every):
            self.checked = now
            try:
                self.value = bool(self.event.is_set())
            except OSError:
                # a scheduler hiccup must not raise out of execute, which
                # would leave the child running unwatched; ask again later
                pass
        return self.value


def _task(spec, event):
    """One run on a worker: (status, error, wall, folder tar.gz, log text,
    worker address), or None when the sweep was stopped before it
    started."""
    from distributed import get_worker
    worker = get_worker()
    where = '%s (host %s)' % (worker.address, socket.gethostname())
    stop = _Stop(event)
    if stop.is_set():
        return None
    for path in (spec.experiment, spec.trace):
        if path and not os.path.isfile(path):
            return ('failed', 'no such file on worker %s: %s (a worker '
                    'needs the files a run names at the same paths as the '
                    'client)' % (where, path), 0.0, None, '', where)
    tmp = tempfile.mkdtemp(prefix='netsched-run-',
                           dir=worker.local_directory)
    try:
        out = os.path.join(tmp, spec.key)
        log_path = os.path.join(tmp, 'run.log')
        status, err, wall = sweep.execute(spec, out, log_path, stop=stop)
        packed = None
        if os.path.isdir(out):
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode='w:gz') as tar:
                tar.add(out, arcname='.')
            packed = buf.getvalue()
        with open(log_path, errors='replace') as f:
            log = f.read()
        return status, err, wall, packed, log, where
    except Exception as e:
        # a bug or a full disk here is this run's failure, not the sweep's
        return 'failed', _describe(e), 0.0, None, '', where
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
