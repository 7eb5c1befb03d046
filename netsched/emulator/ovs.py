"""Open vSwitch daemon checks, and the shared send buffer of its
userspace datapath (docs/emulation.md: every packet of every bridge leaves
through one AF_PACKET socket; when its send buffer fills, OVS drops
packets on all ports)."""
import ctypes
import os
import re
import socket
import subprocess

from ..errors import PrerequisiteError

VSWITCHD_PIDFILE = '/var/run/openvswitch/ovs-vswitchd.pid'
SYS_PIDFD_OPEN, SYS_PIDFD_GETFD = 434, 438
SO_SNDBUFFORCE = 32


def _run(args, timeout=10):
    return subprocess.run(args, capture_output=True, text=True,
                          timeout=timeout)


def running():
    try:
        return _run(['ovs-vsctl', '--timeout=3', 'show'], 5).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def require_running():
    if not running():
        raise PrerequisiteError(
            'Open vSwitch is not running: run `make setup` (as root) to '
            'install and start it')


def bridges():
    out = _run(['ovs-vsctl', '--timeout=5', 'list-br'])
    return out.stdout.split() if out.returncode == 0 else []


def del_bridges(names):
    """Delete exactly these bridges if they exist; returns those deleted."""
    present = [b for b in names if b in set(bridges())]
    if present:
        cmd = ['ovs-vsctl', '--timeout=20']
        for b in present:
            cmd += ['--', '--if-exists', 'del-br', b]
        _run(cmd, 30)
    return present


def vswitchd_pid():
    with open(VSWITCHD_PIDFILE) as f:
        return int(f.read().strip())


def _shared_tx_fds(pid):
    """fds of ovs-vswitchd's AF_PACKET sockets not bound to a device."""
    out = _run(['ss', '-0', '-a', '-p']).stdout
    fds = []
    for line in out.splitlines():
        if 'pid=%d,' % pid in line and '[0]:*' in line:
            fds += [int(x) for x in re.findall(r'pid=%d,fd=(\d+)' % pid, line)]
    return fds


def shared_sndbuf(size=None):
    """SO_SNDBUF of the shared tx socket(s), setting it first when size
    is given (the kernel doubles what is set). Returns {} when the socket
    does not exist yet (it is created with the first packet sent)."""
    pid = vswitchd_pid()
    fds = _shared_tx_fds(pid)
    if not fds:
        return {}
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = libc.syscall(SYS_PIDFD_OPEN, pid, 0)
    if pidfd < 0:
        raise OSError(ctypes.get_errno(), 'pidfd_open(ovs-vswitchd)')
    res = {}
    try:
        for fd in fds:
            dup = libc.syscall(SYS_PIDFD_GETFD, pidfd, fd, 0)
            if dup < 0:
                raise OSError(ctypes.get_errno(), 'pidfd_getfd')
            s = socket.socket(fileno=dup)
            try:
                if size is not None:
                    s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, size)
                res[fd] = s.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
            finally:
                s.close()           # closes our duplicate only
    finally:
        os.close(pidfd)
    return res


def ensure_sndbuf(min_bytes):
    """Make the shared tx buffer at least min_bytes; returns its size
    (None if the socket does not exist yet)."""
    cur = shared_sndbuf()
    if not cur:
        return None
    if min(cur.values()) < min_bytes:
        cur = shared_sndbuf(min_bytes // 2)
    return min(cur.values())
