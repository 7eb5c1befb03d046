"""k-ary fat-tree (netsched.topology.fat_tree) as a Mininet topology.

    mn --custom topologies/fattree.py --topo fattree,4 \
       --switch ovs,datapath=user,protocols=OpenFlow13 \
       --controller remote,ip=127.0.0.1,port=6653
with `netsched controller --topology fattree,4` running for the routes.
"""
import inspect
import os
import sys

_here = inspect.currentframe().f_code.co_filename   # mn exec()s: no __file__
sys.path.insert(0, os.path.dirname(os.path.abspath(_here)))
import _path  # noqa: E402

topos = _path.topos(_here, 'fattree', 'fat_tree', 'k')
