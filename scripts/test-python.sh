#!/usr/bin/env bash
# The Python package as a user installs it (called by scripts/test.sh after
# the build): a virtual environment on Debian's Python that sees Debian's
# numpy, `pip install` of python/ without network (it bundles build/'s
# libimpulse), then tests/python/acceptance.py run from outside the tree:
# one model of each strand simulated, trained (with a callback) and
# evaluated from numpy arrays, and a training stopped by SIGINT. Then the
# wheel's platform tag, and the install into a plain venv (README, "Python").
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$(mktemp -d)/venv
trap 'rm -rf "$(dirname "$venv")"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/pip" install --quiet --no-build-isolation --no-index ./python
# the installed wheel is tagged for this platform (it bundles libimpulse.so.0)
tag=$(grep -h '^Tag:' "$venv"/lib/python3*/site-packages/impulse-*.dist-info/WHEEL)
plat=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_platform().replace("-", "_").replace(".", "_"))')
[[ "$tag" == "Tag: py3-none-$plat" ]] || { echo "FAILED: wheel tag '$tag', want py3-none-$plat" >&2; exit 1; }
# a plain venv (no system site packages), offline, with nothing but Debian's .whl files
# (python3-setuptools-whl, python3-wheel-whl): the build works; numpy must come from a
# wheel the user brings, and without one `import impulse` says so
plain=$(dirname "$venv")/plain
/usr/bin/python3 -m venv "$plain"
PIP_CONFIG_FILE=/dev/null env -u PIP_FIND_LINKS "$plain/bin/pip" install --quiet --no-index \
    --find-links /usr/share/python-wheels --no-deps ./python
msg=$(cd / && env -u IMPULSE_LIBRARY "$plain/bin/python" -c "import impulse" 2>&1 || true)
[[ "$msg" == *"impulse needs numpy"*"--system-site-packages"* ]] ||
    { echo "FAILED: a plain venv without numpy: '$msg'" >&2; exit 1; }
cd "$(dirname "$venv")"
env -u IMPULSE_LIBRARY "$venv/bin/python" "$root/tests/python/acceptance.py"
