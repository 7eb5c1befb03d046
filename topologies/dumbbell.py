"""Dumbbell (netsched.topology.dumbbell) as a Mininet topology.

    mn --custom topologies/fattree.py --topo dumbbell,2 \
       --switch ovs,datapath=user --controller remote,port=6653
with `netsched controller --topology dumbbell,2` running for the routes.
"""
import inspect
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(
    inspect.currentframe().f_code.co_filename)))
import _path  # noqa: E402

_path.add(inspect.currentframe().f_code.co_filename)
from netsched.emulator import mininet_topo  # noqa: E402
from netsched.topology import dumbbell as dumbbell_graph  # noqa: E402


def dumbbell(n=2):
    return mininet_topo(dumbbell_graph(int(n)))


topos = {'dumbbell': dumbbell}
