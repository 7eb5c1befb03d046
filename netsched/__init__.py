"""netsched: network flow and coflow scheduling emulator for DL clusters."""
import os

__version__ = "0.1.0"

# the repository: controllers/, workloads/, experiments/ live beside the
# package
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
