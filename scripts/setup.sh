#!/usr/bin/env bash
# Installs everything ReproLab needs on a fresh Debian 12 machine, idempotently:
# Debian's MPI build of Meep (not on PyPI), OpenMPI, and a .venv that sees it.
# Safe to run again: it installs only what is missing and exits fast otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

DEBIAN_PACKAGES=(python3-meep-mpi-default openmpi-bin python3-mpi4py python3-h5py
  python3-matplotlib python3-venv)
# meep is built for Debian's interpreter, not whatever python3 is first on PATH.
SYSTEM_PYTHON=/usr/bin/python3
VENV=.venv
STAMP="$VENV/.reprolab-installed"

missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Reinstall the venv only when what it is built from changed.
want=$(cat requirements.txt constraints.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && "$VENV/bin/python" -c "import meep" >/dev/null 2>&1; then
  exit 0
fi
echo "setup: building $VENV (Python packages pinned in requirements.txt)"
[ -x "$VENV/bin/python" ] || "$SYSTEM_PYTHON" -m venv --system-site-packages "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check -r requirements.txt -c constraints.txt
"$VENV/bin/pip" install -q --disable-pip-version-check --no-deps -e .
"$VENV/bin/python" -c "import meep, numpy; assert numpy.__version__.startswith('1.')" >/dev/null
echo "$want" >"$STAMP"
echo "setup: ready"
