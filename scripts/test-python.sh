#!/usr/bin/env bash
# The Python package as a user installs it (called by scripts/test.sh after
# the build): a virtual environment on Debian's Python that sees Debian's
# numpy, `pip install` of python/ without network (it bundles build/'s
# libimpulse), then tests/python/acceptance.py run from outside the tree:
# one model of each strand simulated, trained (with a callback) and
# evaluated from numpy arrays, and a training stopped by SIGINT.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$(mktemp -d)/venv
trap 'rm -rf "$(dirname "$venv")"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/pip" install --quiet --no-build-isolation --no-index ./python
cd "$(dirname "$venv")"
env -u IMPULSE_LIBRARY "$venv/bin/python" "$root/tests/python/acceptance.py"
