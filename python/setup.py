"""Installs the `impulse` package with a copy of the libimpulse it was built
with: $IMPULSE_LIBRARY, else ../build/libimpulse.so.0 (scripts/build.sh).
Without either, the installed package looks for an installed libimpulse
(cmake --install) at import time."""
import glob
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def built_library():
    env = os.environ.get("IMPULSE_LIBRARY")
    if env:
        return env
    for cand in [os.path.join(HERE, "..", "build", "libimpulse.so.0")] + [p for p in \
            sorted(glob.glob(os.path.join(HERE, "..", "build*", "libimpulse.so.0"))) if "build-san" not in p]:
        if os.path.exists(cand):
            return cand
    return None


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        lib = built_library()
        if lib:
            dest = os.path.join(self.build_lib, "impulse", "libimpulse.so.0")
            shutil.copyfile(os.path.realpath(lib), dest)
            print(f"impulse: bundling {os.path.realpath(lib)}")
        else:
            print("impulse: no built libimpulse found; the package will use an installed one")


setup(cmdclass={"build_py": BuildWithLibrary})
