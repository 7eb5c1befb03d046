"""Start netsched's controller app under Ryu (the default) or os-ken.

    launch.py [--framework ryu|os-ken] [manager options] APP...

Under Ryu this is ryu-manager on this Python (3.11) with a current
eventlet (sdn_framework.ryu_shim), same arguments. os-ken 4 ships no
manager command, so for it this is one built on os-ken's app manager
that takes the same options (--ofp-listen-host, --ofp-tcp-listen-port,
the log options and the apps to load).
"""
import sys

import sdn_framework


def split_framework(argv):
    """(framework, the other arguments): --framework NAME or
    --framework=NAME anywhere, Ryu when absent."""
    name, rest, it = sdn_framework.DEFAULT, [], iter(argv)
    for a in it:
        if a == '--framework':
            name = next(it, '')
        elif a.startswith('--framework='):
            name = a.split('=', 1)[1]
        else:
            rest.append(a)
    return sdn_framework.check(name), rest


def run_ryu(args):
    """ryu-manager itself, once its eventlet import is shimmed."""
    sdn_framework.ryu_shim()
    from ryu.cmd.manager import main
    return main(args=args)


def run_os_ken(args):
    """What ryu-manager does, with os-ken's names: parse the options,
    set up logging, load the apps (with the services they depend on, the
    OpenFlow listener among them) and run them until they stop."""
    from os_ken.lib import hub
    hub.patch(thread=False)     # eventlet hub: patch first; native: no-op
    import logging
    from os_ken import cfg, log
    log.early_init_log(logging.DEBUG)
    from os_ken.base.app_manager import AppManager
    conf = cfg.CONF
    conf.register_cli_opts([cfg.MultiStrOpt(
        'app', positional=True, default=[],
        help='application module name (or file) to run')])
    conf(args=args, prog='netsched-os-ken-manager', project='os_ken')
    log.init_log()
    hub.patch(thread=True)
    AppManager.run_apps(conf.app or ['os_ken.controller.ofp_handler'])
    return 0


def main(argv=None):
    """Pick the framework, then run that framework's manager."""
    name, args = split_framework(sys.argv[1:] if argv is None else argv)
    sdn_framework.choose(name)
    return run_os_ken(args) if name == 'os-ken' else run_ryu(args)


if __name__ == '__main__':
    sys.exit(main())
