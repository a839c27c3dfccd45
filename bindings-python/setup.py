"""Build of the _uniheap extension.

libuniheap comes from the repository's CMake build ($UNIHEAP_BUILD, else
../build); when there is none, from an installed libuniheap that
pkg-config finds (`make install`); else the repository's build is made
first (cmake + ninja). The library is copied next to the extension, which
finds it through an $ORIGIN rpath, so an installed package does not depend
on the build tree or the installed library.
"""
import os
import shutil
import subprocess
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
BUILD = Path(os.environ.get("UNIHEAP_BUILD", REPO / "build")).resolve()
LIB = "libuniheap.so.0"


def pkg_config_dirs():
    """(include folder, library folder) of an installed libuniheap, or
    None when pkg-config does not know one."""
    dirs = []
    for var in ("includedir", "libdir"):
        try:
            r = subprocess.run(["pkg-config", f"--variable={var}", "uniheap"],
                               capture_output=True, text=True)
        except OSError:
            return None
        if r.returncode != 0 or not r.stdout.strip():
            return None
        dirs.append(Path(r.stdout.strip()))
    return dirs if (dirs[1] / LIB).exists() else None


# Where uniheap.h and libuniheap come from (see the top of this file).
INCLUDE, LIBDIR = REPO / "libuniheap" / "include", BUILD
if "UNIHEAP_BUILD" not in os.environ and not (BUILD / LIB).exists():
    INCLUDE, LIBDIR = pkg_config_dirs() or (INCLUDE, LIBDIR)


def ensure_libuniheap():
    if (LIBDIR / LIB).exists():
        return
    if not (REPO / "CMakeLists.txt").exists():
        raise SystemExit(f"libuniheap not found in {BUILD}, nor by pkg-config; set "
                         "UNIHEAP_BUILD to the CMake build directory of uniheap, or "
                         "install uniheap (make install) where pkg-config finds it")
    subprocess.check_call(["cmake", "-S", str(REPO), "-B", str(BUILD), "-G", "Ninja",
                           "-DCMAKE_BUILD_TYPE=RelWithDebInfo"])
    subprocess.check_call(["cmake", "--build", str(BUILD), "--target", "uniheap"])


class BuildExt(build_ext):
    def run(self):
        ensure_libuniheap()
        super().run()
        # Ship the library beside the extension (found via $ORIGIN).
        for ext in self.extensions:
            dest = Path(self.get_ext_fullpath(ext.name)).parent / LIB
            dest.parent.mkdir(parents=True, exist_ok=True)
            # Copy, then rename: processes that have the old file mapped
            # keep it (overwriting it in place would crash them).
            tmp = dest.with_name(LIB + ".tmp")
            shutil.copy2(LIBDIR / LIB, tmp)
            os.replace(tmp, dest)


ext = Extension(
    "uniheap._uniheap",
    sources=sorted(str(p.relative_to(HERE)) for p in (HERE / "src").glob("*.c")),
    include_dirs=[str(INCLUDE)],
    library_dirs=[str(LIBDIR)],
    libraries=["uniheap"],
    runtime_library_dirs=["$ORIGIN"],
    extra_compile_args=["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter",
                        "-Wno-missing-field-initializers", "-Wno-cast-function-type"],
    depends=[str(p.relative_to(HERE)) for p in (HERE / "src").glob("*.h")]
    + [str(INCLUDE / "uniheap.h")],
)

setup(ext_modules=[ext], cmdclass={"build_ext": BuildExt})
