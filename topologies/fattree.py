"""k-ary fat-tree (netsched.topology.fat_tree) as a Mininet topology.

    mn --custom topologies/fattree.py --topo fattree,4 \
       --switch ovs,datapath=user --controller remote,port=6653
with `netsched controller --topology fattree,4` running for the routes.
"""
import inspect
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(
    inspect.currentframe().f_code.co_filename)))
import _path  # noqa: E402

_path.add(inspect.currentframe().f_code.co_filename)
from netsched.emulator import mininet_topo  # noqa: E402
from netsched.topology import fat_tree  # noqa: E402


def fattree(k=4):
    return mininet_topo(fat_tree(int(k)))


topos = {'fattree': fattree}
