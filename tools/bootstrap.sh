#!/usr/bin/env bash
# Install whatever netsched needs that is missing, then exit. Safe to re-run.
#
#   1. Debian packages (Mininet, Open vSwitch, iperf3, ethtool, iproute2,
#      Chromium with its driver for the report's browser test, and a C
#      compiler for the simulator's kernels)
#   2. the virtual environment .venv (system site-packages, for Mininet)
#      with the pinned Python dependencies (pandas and pyarrow among
#      them: netsched[analysis]; mlc-chakra: netsched[chakra]) and
#      netsched itself
#   3. the Open vSwitch daemons, userspace datapath (there is no kernel
#      module here). Its shared send buffer is enlarged by each fabric at
#      start (netsched/ovs.py): the socket is created at the first packet,
#      so a sysctl around the daemon's start does not reach it.
#
# Each step checks first and does nothing when already done.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
VENV="$here/.venv"
SYS_PY=/usr/bin/python3
# gcc and libc6-dev: netsched's install builds the simulator's C kernels
# (netsched/build_kernels.py; without them it runs slower, on numpy)
APT_PKGS=(mininet openvswitch-switch iperf3 ethtool iproute2 iputils-ping procps python3-venv
          chromium chromium-driver gcc libc6-dev)

say() { printf 'bootstrap: %s\n' "$*"; }
is_root() { [ "$(id -u)" -eq 0 ]; }

apt_missing() {
  local p missing=()
  for p in "${APT_PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
      || missing+=("$p")
  done
  echo "${missing[@]:-}"
}

step_apt() {
  local missing
  missing=$(apt_missing)
  [ -z "$missing" ] && return 0
  if ! is_root; then
    say "missing Debian packages: $missing (run this as root to install them)"
    return 1
  fi
  say "installing Debian packages: $missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  # shellcheck disable=SC2086
  apt-get install -y -q --no-install-recommends $missing >/dev/null
}

# pip warns about every local index path this machine's pip.conf names
# but does not have; keep its real errors, drop that noise.
pip_quiet() {
  "$@" 2>&1 | { grep -v "^WARNING: Location '.*' is ignored" || true; }
  return "${PIPESTATUS[0]}"
}

# what the install reads: a change to any of them (the kernels' C among
# them) reinstalls, which rebuilds the kernels
venv_stamp() {
  cat requirements.lock setup.cfg setup.py pyproject.toml MANIFEST.in \
      netsched/build_kernels.py netsched/fluid/kernels.[ch] netsched/sim/kernels.[ch] \
    | sha256sum | cut -d' ' -f1
}

# the kernels are built where a compiler is (a checkout cleaned of them,
# or built before one was installed, is rebuilt)
kernels_built() {
  command -v cc >/dev/null 2>&1 || return 0
  "$VENV/bin/python" -c 'import netsched.fluid._kernels, netsched.sim._kernels' 2>/dev/null
}

step_venv() {
  local want
  want=$(venv_stamp)
  if [ -f "$VENV/.netsched-stamp" ] && [ "$(cat "$VENV/.netsched-stamp")" = "$want" ] \
     && "$VENV/bin/python" -c 'import netsched, ryu, os_ken, networkx, numpy, distributed, jinja2, tqdm, selenium, hypothesis, pandas, pyarrow, chakra.schema.protobuf.et_def_pb2' 2>/dev/null \
     && "$VENV/bin/python" -c 'import importlib.util as u; assert u.find_spec("ns") and u.find_spec("cppyy")' 2>/dev/null \
     && kernels_built; then
    return 0
  fi
  say "building the virtual environment in $VENV"
  [ -x "$VENV/bin/python" ] || "$SYS_PY" -m venv --system-site-packages "$VENV"
  local pip=(pip_quiet "$VENV/bin/python" -m pip install -q --disable-pip-version-check)
  # mlc-chakra without its dependencies (requirements.lock says why)
  "${pip[@]}" -r <(grep -v '^mlc-chakra==' requirements.lock)
  "${pip[@]}" --no-deps "$(grep '^mlc-chakra==' requirements.lock)"
  # ryu 4.34's setup.py needs pbr and setuptools' old easy_install hooks:
  # build it against the pinned setuptools, without build isolation.
  "$VENV/bin/python" -c 'import ryu' 2>/dev/null \
    || "${pip[@]}" --no-build-isolation --no-deps ryu==4.34
  # builds the C kernels in place (setup.py's cffi_modules)
  "${pip[@]}" --no-build-isolation --no-deps -e .
  echo "$want" > "$VENV/.netsched-stamp"
}

ovs_running() {
  timeout 5 ovs-vsctl --timeout=3 show >/dev/null 2>&1
}

step_ovs() {
  if ! is_root; then
    ovs_running || say "Open vSwitch is not running (run this as root to start it)"
    return 0
  fi
  ovs_running && return 0
  say "starting Open vSwitch (userspace datapath)"
  local rc=0
  /usr/share/openvswitch/scripts/ovs-ctl --system-id=random start >/tmp/netsched-ovs-ctl.log 2>&1 || rc=$?
  if ! ovs_running; then
    say "Open vSwitch did not start (ovs-ctl exit $rc); its output:"
    cat /tmp/netsched-ovs-ctl.log >&2
    return 1
  fi
}

step_apt
step_venv
step_ovs
