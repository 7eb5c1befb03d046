"""The C kernels, built with the package (the rest is in setup.cfg)."""
from setuptools import setup

setup(cffi_modules=['netsched/build_kernels.py:fluid_ffi',
                    'netsched/build_kernels.py:sim_ffi'])
