#!/usr/bin/env bash
# Builds ReproLab's .venv, idempotently, with or without root.
#
# Meep (not on PyPI), mpi4py and h5py must be importable by the interpreter the
# venv is built from; the venv (--system-site-packages) adds the pins of
# requirements.txt. That interpreter is, in order: $REPROLAB_PYTHON; an active
# conda env's python ($CONDA_PREFIX); `python3` on PATH (an environment module,
# a container); Debian's /usr/bin/python3 (Debian's meep is built for it only).
# apt is used in one case only: as root on Debian, when packages are missing for
# Debian's interpreter. Otherwise nothing is installed system-wide: what is
# missing is listed with the ways to get it, and the script stops.
# Safe to run again: it does only what is missing and exits fast otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

DEBIAN_PACKAGES=(python3-meep-mpi-default openmpi-bin python3-mpi4py python3-h5py
  python3-matplotlib python3-venv bubblewrap)
# Only the tests use these (the HTML report's layout, rendered in a real browser);
# installed alongside when setup runs as root, never needed to reproduce a paper.
TEST_PACKAGES=(chromium)
SYSTEM_PYTHON=/usr/bin/python3
MODULES=(meep mpi4py h5py)
VENV=.venv
STAMP="$VENV/.reprolab-installed"

has_modules() { # python: imports every module quietly (meep prints at exit)
  local IFS=,
  "$1" -c "import ${MODULES[*]}" >/dev/null 2>&1
}
in_venv() { # a venv's interpreter is no base for another venv
  "$1" -c "import sys; sys.exit(sys.prefix == sys.base_prefix)" >/dev/null 2>&1
}
pick_python() {
  if [ -n "${REPROLAB_PYTHON:-}" ]; then
    echo "$REPROLAB_PYTHON"
    return
  fi
  local candidate
  for candidate in "${CONDA_PREFIX:+$CONDA_PREFIX/bin/python}" "$(command -v python3 || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] && ! in_venv "$candidate" &&
      has_modules "$candidate"; then
      echo "$candidate"
      return
    fi
  done
  echo "$SYSTEM_PYTHON"
}
missing_for() { # python -> what it lacks, space-separated
  local py=$1 out=() mod
  if ! "$py" -c "import sys" >/dev/null 2>&1; then
    echo "a working interpreter ($py)"
    return
  fi
  for mod in "${MODULES[@]}"; do
    "$py" -c "import $mod" >/dev/null 2>&1 || out+=("$mod")
  done
  "$py" -c "import venv, ensurepip" >/dev/null 2>&1 || out+=("venv/ensurepip")
  command -v mpirun >/dev/null 2>&1 || [ -x "$(dirname "$py")/mpirun" ] || out+=("mpirun")
  echo "${out[*]}"
}
debian_missing() {
  command -v dpkg-query >/dev/null 2>&1 || return 0
  local pkg
  for pkg in "${DEBIAN_PACKAGES[@]}" "${TEST_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || echo "$pkg"
  done
}

PYTHON=$(pick_python)
# Root on Debian, building from Debian's interpreter: install what is missing.
if [ "$PYTHON" = "$SYSTEM_PYTHON" ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  mapfile -t apt_missing < <(debian_missing)
  if [ ${#apt_missing[@]} -gt 0 ]; then
    echo "setup: installing Debian packages: ${apt_missing[*]}"
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
      "${apt_missing[@]}" >/dev/null
  fi
fi
missing=$(missing_for "$PYTHON")
if [ -n "$missing" ]; then
  cat >&2 <<MSG
setup: cannot build $VENV: $PYTHON lacks: $missing
Get Meep (MPI build), mpi4py, h5py and OpenMPI one of three ways, then run this again:
  1. Debian 12, as root:  apt-get install ${DEBIAN_PACKAGES[*]}
  2. conda, no root:      conda env create -f envs/reprolab.yaml && conda activate reprolab
  3. a container:         apptainer build reprolab.sif envs/reprolab.def, then
                          apptainer exec reprolab.sif make demo
Or set REPROLAB_PYTHON to an interpreter that has them (e.g. after \`module load\`).
MSG
  exit 1
fi
if ! command -v bwrap >/dev/null 2>&1; then
  echo "setup: note: no bwrap (bubblewrap): simulations will refuse to run until it is" \
    "installed (as root: apt-get install bubblewrap); .venv/bin/reprolab doctor says more" >&2
fi

# A venv is rebuilt when it is broken (interrupted creation: no python or no pip)
# or was made from another interpreter; it is never patched in place then.
base=$("$PYTHON" -c "import sys; print(sys.base_prefix)")
if [ -e "$VENV" ]; then
  if [ ! -x "$VENV/bin/pip" ] || ! "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
    echo "setup: $VENV is incomplete (no working python or pip; interrupted?): rebuilding it"
    rm -rf "$VENV"
  elif [ "$("$VENV/bin/python" -c "import sys; print(sys.base_prefix)")" != "$base" ]; then
    echo "setup: $VENV was built from another interpreter; rebuilding it from $PYTHON"
    rm -rf "$VENV"
  fi
fi

# Our own modules' bytecode, refreshed where a source changed: every pipeline step is
# a fresh interpreter, and where PYTHONDONTWRITEBYTECODE is set (as on our CI machines)
# it would otherwise compile ~60 modules from source each time (~55 ms a step).
compile_sources() { "$VENV/bin/python" -m compileall -q reprolab agents >/dev/null; }

# Reinstall the venv's packages only when what they are built from changed.
want=$(cat requirements.txt constraints.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && has_modules "$VENV/bin/python"; then
  compile_sources
  exit 0
fi
echo "setup: building $VENV from $PYTHON (Python packages pinned in requirements.txt)"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv --system-site-packages "$VENV"
pip=("$VENV/bin/python" -m pip install -q --disable-pip-version-check)
"${pip[@]}" -r requirements.txt -c constraints.txt
"${pip[@]}" --no-deps -e .
# Debian's meep is compiled against numpy 1: numpy 2 in the venv would break it.
if ! check=$("$VENV/bin/python" -c "import meep, mpi4py, h5py, numpy
assert numpy.__version__.startswith('1.'), 'numpy ' + numpy.__version__" 2>&1); then
  echo "setup: $VENV cannot import meep with its packages:" >&2
  echo "$check" | tail -5 >&2
  exit 1
fi
compile_sources
echo "$want" >"$STAMP"
echo "setup: ready"
