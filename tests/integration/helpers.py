import subprocess

from netsched.emulator import ovs, runstate
from netsched import topology as topo
from netsched.emulator.mininet_adapter import switch_interfaces


def leftovers(g, pids=()):
    """Bridges, switch-side interfaces and processes of a fabric that
    still exist."""
    left = [b for b in topo.switches(g) if b in set(ovs.bridges())]
    left += runstate.interfaces_present(switch_interfaces(g))
    left += ['pid %d' % p for p, s in pids if runstate.alive(p, s)]
    veths = subprocess.run(['ip', '-o', 'link', 'show', 'type', 'veth'],
                           capture_output=True, text=True).stdout
    names = set(switch_interfaces(g))
    left += [l for l in veths.split() if l.split('@')[0] in names]
    return left
