"""Leaf-spine Clos (netsched.topology.leaf_spine) as a Mininet topology.

    mn --custom topologies/fattree.py --topo leafspine,2,2,4 \
       --switch ovs,datapath=user --controller remote,port=6653
with `netsched controller --topology leafspine,2,2,4` running for the routes.
"""
import inspect
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(
    inspect.currentframe().f_code.co_filename)))
import _path  # noqa: E402

_path.add(inspect.currentframe().f_code.co_filename)
from netsched.emulator import mininet_topo  # noqa: E402
from netsched.topology import leaf_spine  # noqa: E402


def leafspine(leaves=2, spines=2, hosts_per_leaf=4):
    return mininet_topo(leaf_spine(int(leaves), int(spines), int(hosts_per_leaf)))


topos = {'leafspine': leafspine}
