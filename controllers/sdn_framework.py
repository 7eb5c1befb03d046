"""The one place that imports an SDN framework: Ryu (the default) or its
maintained fork os-ken. The two share their API under different package
names, so the app (netsched_app.py) binds to whichever :func:`load`
returns and is otherwise the same code under both.

Which one: the launcher's :func:`choose`, else the framework whose app
manager is already running (plain ``ryu-manager`` imports Ryu's before it
loads the app), else Ryu.

One difference is not in the names: os-ken 4 runs its hub on native
threads, where the hub's Event ignores its timeout; :func:`load` hands
the app a threading.Event there.
"""
import sys
import threading
import types

FRAMEWORKS = {'ryu': 'ryu', 'os-ken': 'os_ken'}     # name -> package
DEFAULT = 'ryu'
_chosen = None


def check(name):
    """The framework name, or ValueError listing the known ones (the
    launcher's and the CLI's --framework)."""
    if name not in FRAMEWORKS:
        raise ValueError('unknown framework %r (known: %s)'
                         % (name, ', '.join(FRAMEWORKS)))
    return name


def choose(name):
    """Fix the framework the app binds to when it is imported next (the
    launcher, before its app manager loads the app; None: detect)."""
    global _chosen
    _chosen = None if name is None else check(name)


def chosen():
    """The framework the app binds to: the one chosen, else the only one
    whose app manager is loaded, else Ryu."""
    if _chosen is not None:
        return _chosen
    running = [n for n, pkg in FRAMEWORKS.items()
               if pkg + '.base.app_manager' in sys.modules]
    return running[0] if len(running) == 1 else DEFAULT


def ryu_shim():
    """Ryu 4.34 imports eventlet.wsgi.ALREADY_HANDLED, which current
    eventlet no longer defines (the releases that still do crash on
    Python 3.11); defining it before Ryu's wsgi module loads suffices."""
    import eventlet.wsgi
    if not hasattr(eventlet.wsgi, 'ALREADY_HANDLED'):
        eventlet.wsgi.ALREADY_HANDLED = object()


def load(name=None):
    """The framework's names the app uses, as one namespace: App (the
    base class), ofp_event, set_ev_cls, the dispatcher states, hub,
    ofproto_v1_3, Event (whose wait honours its timeout) and the name."""
    name = check(name or chosen())
    if name == 'os-ken':
        from os_ken.base.app_manager import OSKenApp as App
        from os_ken.controller import ofp_event
        from os_ken.controller.handler import (CONFIG_DISPATCHER,
                                               DEAD_DISPATCHER,
                                               MAIN_DISPATCHER, set_ev_cls)
        from os_ken.lib import hub
        from os_ken.ofproto import ofproto_v1_3
    else:
        ryu_shim()
        from ryu.base.app_manager import RyuApp as App
        from ryu.controller import ofp_event
        from ryu.controller.handler import (CONFIG_DISPATCHER,
                                            DEAD_DISPATCHER,
                                            MAIN_DISPATCHER, set_ev_cls)
        from ryu.lib import hub
        from ryu.ofproto import ofproto_v1_3
    native = getattr(hub, 'HUB_TYPE', 'eventlet') == 'native'
    return types.SimpleNamespace(
        name=name, App=App, ofp_event=ofp_event, set_ev_cls=set_ev_cls,
        CONFIG_DISPATCHER=CONFIG_DISPATCHER, MAIN_DISPATCHER=MAIN_DISPATCHER,
        DEAD_DISPATCHER=DEAD_DISPATCHER, hub=hub, ofproto_v1_3=ofproto_v1_3,
        native=native, Event=threading.Event if native else hub.Event)
