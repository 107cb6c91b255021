"""Installs the `impulse` package with a copy of the libimpulse it was built
with: $IMPULSE_LIBRARY, else ../build/libimpulse.so.0 (scripts/build.sh).
Without either, the installed package looks for an installed libimpulse
(cmake --install) at import time."""
import glob
import os
import shutil

import setuptools
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


cmdclass = {"build_py": BuildWithLibrary}
try:  # setuptools >= 70.1 has bdist_wheel; before, the `wheel` package does
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    try:
        from wheel.bdist_wheel import bdist_wheel
    except ImportError:  # no wheel support at all: pip says so (see python/README.md)
        bdist_wheel = None

if bdist_wheel is not None:
    class PlatformWheel(bdist_wheel):
        """A wheel that bundles libimpulse.so is for this platform only: tagged
        py3-none-<platform> (e.g. linux_x86_64): any Python 3 (the package
        uses ctypes, no CPython ABI), this machine's OS and architecture."""

        def get_tag(self):
            python, abi, plat = super().get_tag()
            return ("py3", "none", plat) if built_library() else (python, abi, plat)

    cmdclass["bdist_wheel"] = PlatformWheel



class Distribution(setuptools.Distribution):
    def has_ext_modules(self):  # a bundled native library: platform-specific (platlib, not purelib)
        return bool(built_library())


setup(cmdclass=cmdclass, distclass=Distribution)
