"""The CFFI builders of netsched's C kernels, run at install time
(setup.py's ``cffi_modules``): netsched.fluid._kernels from
fluid/kernels.c and netsched.sim._kernels from sim/kernels.c.

Each module's declarations are its kernels.h, which its kernels.c
includes: the compiler checks the C against the one set of signatures
Python calls through. Warnings are on (``-Wall -Wextra``) and are errors
where ``CI`` is ``true`` or ``NETSCHED_WERROR`` is set. The floating
point stays as written (``-ffp-contract=off``, never ``-ffast-math``):
the kernels give the same bits as the numpy code they replace.

Where nothing can compile them the install goes on without them (but
under CI, where it fails) and the numpy code runs
(netsched.fluid.kernels, netsched.sim.kernels).
"""
import os

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))


def strict(env=None):
    """Whether warnings are errors and a failed build fails the install
    (CI=true, or NETSCHED_WERROR set)."""
    env = os.environ if env is None else env
    return env.get('CI', '').lower() == 'true' or \
        bool(env.get('NETSCHED_WERROR'))


def flags(env=None):
    """The compiler's options: warnings on, errors where strict."""
    out = ['-std=c99', '-O2', '-ffp-contract=off', '-fno-fast-math',
           '-Wall', '-Wextra']
    return out + ['-Werror'] if strict(env) else out


def declarations(header):
    """A header's text as CFFI's cdef takes it: without its preprocessor
    lines (the include guard, #include)."""
    with open(header) as f:
        return ''.join(line for line in f
                       if not line.lstrip().startswith('#'))


def builder(package):
    """The FFI builder of ``netsched.<package>._kernels``."""
    folder = os.path.join(HERE, package)
    ffi = FFI()
    ffi.cdef(declarations(os.path.join(folder, 'kernels.h')))
    # setuptools wants the sources relative to the project (its cwd)
    src = os.path.relpath(os.path.join(folder, 'kernels.c'))
    # optional: outside CI a machine without a compiler still installs
    # (and runs the numpy code)
    ffi.set_source('netsched.%s._kernels' % package, '#include "kernels.h"',
                   sources=[src], include_dirs=[os.path.relpath(folder)],
                   depends=[os.path.relpath(os.path.join(folder,
                                                         'kernels.h'))],
                   extra_compile_args=flags(), optional=not strict())
    return ffi


fluid_ffi = builder('fluid')
sim_ffi = builder('sim')
