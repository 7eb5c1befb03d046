"""Start ryu-manager on this Python (3.11) with a current eventlet.

Ryu 4.34 imports eventlet.wsgi.ALREADY_HANDLED, which current eventlet
releases no longer define (and the releases that still do crash on
Python 3.11). Defining it before Ryu's wsgi module is imported is all
it takes; then this is ryu-manager, same arguments.
"""
import sys

import eventlet.wsgi

if not hasattr(eventlet.wsgi, 'ALREADY_HANDLED'):
    eventlet.wsgi.ALREADY_HANDLED = object()

from ryu.cmd.manager import main  # noqa: E402

if __name__ == '__main__':
    sys.exit(main())
