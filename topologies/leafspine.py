"""Leaf-spine Clos (netsched.topology.leaf_spine) as a Mininet topology.

    mn --custom topologies/leafspine.py --topo leafspine,2,2,4 \
       --switch ovs,datapath=user,protocols=OpenFlow13 \
       --controller remote,ip=127.0.0.1,port=6653
with `netsched controller --topology leafspine,2,2,4` running for the routes.
"""
import inspect
import os
import sys

_here = inspect.currentframe().f_code.co_filename   # mn exec()s: no __file__
sys.path.insert(0, os.path.dirname(os.path.abspath(_here)))
import _path  # noqa: E402

topos = _path.topos(_here, 'leafspine', 'leaf_spine', 'leaves', 'spines',
                    'hosts_per_leaf')
