"""Installing: `cmake --install` and `make install` into a temporary prefix
lay out programs, libuniheap, uniheap.h, pkg-config and CMake package files,
man pages and units; a C program compiled against the installed library
(with pkg-config, and with find_package(uniheap)) runs against the installed
heapd, which then stops cleanly."""

import os
import re
import shutil
import sys
import zipfile
from pathlib import Path

from processes import jdk25_java, uniheap_jar

from conftest import REPO, Daemon, build_dir, clean_env, run

EXAMPLE = REPO / "examples" / "c" / "demo_readme.c"
VERSION = "0.1.0"

# What an install holds, relative to the prefix (the library folder is
# "lib" for prefixes other than /usr).
LAYOUT = [
    "bin/heapd", "bin/heapctl", "libexec/uniheap/uniheap-check",
    "lib/libuniheap.so", "lib/libuniheap.so.0", f"lib/libuniheap.so.{VERSION}",
    "include/uniheap.h", "lib/pkgconfig/uniheap.pc",
    "lib/cmake/uniheap/uniheap-config.cmake",
    "lib/cmake/uniheap/uniheap-config-version.cmake",
    "lib/cmake/uniheap/uniheap-targets.cmake",
    "share/man/man8/heapd.8", "share/man/man1/heapctl.1",
    "lib/systemd/system/heapd.service", "lib/systemd/system/heapd@.service",
    "lib/sysusers.d/uniheap.conf",
]


def files_under(prefix):
    return sorted(str(p.relative_to(prefix)) for p in Path(prefix).rglob("*")
                  if p.is_file() or p.is_symlink())


def dynamic_section(path):
    r = run(["objdump", "-p", path])
    assert r.returncode == 0, r.stderr
    return dict(re.findall(r"^\s+(SONAME|RUNPATH|RPATH)\s+(\S+)", r.stdout, re.M))


def test_layout(installed):
    have = set(files_under(installed))
    missing = [f for f in LAYOUT if f not in have]
    assert not missing, f"not installed: {missing}"
    lib = installed / "lib"
    assert os.readlink(lib / "libuniheap.so") == "libuniheap.so.0"
    assert os.readlink(lib / "libuniheap.so.0") == f"libuniheap.so.{VERSION}"
    assert dynamic_section(lib / f"libuniheap.so.{VERSION}")["SONAME"] == "libuniheap.so.0"
    # Installed programs find libuniheap relative to themselves, never in
    # the build tree.
    check = dynamic_section(installed / "libexec/uniheap/uniheap-check")
    assert check.get("RUNPATH") == "$ORIGIN/../../lib", check
    for prog in ("bin/heapd", "bin/heapctl"):
        assert str(build_dir()) not in str(dynamic_section(installed / prog))
    for prog in ("heapd", "heapctl"):
        r = run([installed / "bin" / prog, "--version"])
        assert r.returncode == 0 and r.stdout.startswith(f"{prog} {VERSION}"), r


def test_man_pages_match_help(installed):
    """The man pages are made from --help: every option is in them."""
    for prog, page in (("heapd", "man8/heapd.8"), ("heapctl", "man1/heapctl.1")):
        help_text = run([installed / "bin" / prog, "--help"]).stdout
        man = (installed / "share/man" / page).read_text()
        options = set(re.findall(r"--[a-z][a-z-]+", help_text))
        assert options, help_text
        for opt in options:
            assert opt.replace("-", r"\-") in man, f"{opt} missing from {page}"


def test_make_install_matches_cmake_install(installed, tmp_dir):
    prefix = tmp_dir / "prefix"
    r = run(["make", "-C", REPO, "install", f"PREFIX={prefix}", f"BUILD={build_dir()}"],
            timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert files_under(prefix) == files_under(installed)
    pc = (prefix / "lib/pkgconfig/uniheap.pc").read_text()
    assert f"prefix={prefix}\n" in pc
    unit = (prefix / "lib/systemd/system/heapd.service").read_text()
    assert f"ExecStart={prefix}/bin/heapd " in unit


def test_make_install_into_destdir(installed, tmp_dir):
    """Packagers stage with DESTDIR: the files land below it, and name the
    final prefix."""
    stage = tmp_dir / "stage"
    r = run(["make", "-C", REPO, "install", "PREFIX=/usr/local", f"BUILD={build_dir()}"],
            env=clean_env(DESTDIR=stage), timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert files_under(stage / "usr/local") == files_under(installed)
    assert "prefix=/usr/local\n" in (stage / "usr/local/lib/pkgconfig/uniheap.pc").read_text()
    unit = (stage / "usr/local/lib/systemd/system/heapd.service").read_text()
    assert "ExecStart=/usr/local/bin/heapd " in unit


def pkg_config(installed, *args):
    env = clean_env(PKG_CONFIG_PATH=installed / "lib/pkgconfig")
    r = run(["pkg-config", *args, "uniheap"], env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def build_with_pkg_config(installed, out):
    assert pkg_config(installed, "--modversion") == [VERSION]
    flags = pkg_config(installed, "--cflags", "--libs")
    assert f"-I{installed}/include" in flags and "-luniheap" in flags, flags
    libdir = pkg_config(installed, "--variable=libdir")[0]
    r = run(["cc", "-o", out, EXAMPLE, *flags, f"-Wl,-rpath,{libdir}"])
    assert r.returncode == 0, r.stderr
    return out


CMAKE_PROJECT = """cmake_minimum_required(VERSION 3.18)
project(uses_uniheap C)
find_package(uniheap 0.1 REQUIRED)
add_executable(demo demo.c)
target_link_libraries(demo PRIVATE uniheap::uniheap)
"""


def build_with_find_package(installed, folder):
    folder.mkdir()
    (folder / "CMakeLists.txt").write_text(CMAKE_PROJECT)
    shutil.copy(EXAMPLE, folder / "demo.c")
    r = run(["cmake", "-S", folder, "-B", folder / "build", "-G", "Ninja",
             f"-DCMAKE_PREFIX_PATH={installed}"], timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{installed}/lib/cmake/uniheap" in (folder / "build/CMakeCache.txt").read_text()
    r = run(["cmake", "--build", folder / "build"], timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return folder / "build" / "demo"


def test_clients_built_against_the_install(installed, tmp_dir, daemons):
    demos = [build_with_pkg_config(installed, tmp_dir / "demo_pc"),
             build_with_find_package(installed, tmp_dir / "proj")]
    for demo in demos:
        r = run(["ldd", demo])
        assert f"{installed}/lib/libuniheap.so.0" in r.stdout, r.stdout

    xdg, a, b = (tmp_dir / n for n in ("xdg", "a", "b"))
    for d in (xdg, a, b):
        d.mkdir(mode=0o700)
    env = clean_env(XDG_RUNTIME_DIR=xdg)
    heapd = Daemon([installed / "bin/heapd", "--heap", tmp_dir / "heap", "--create",
                    "--size", "64M", "--durability", "memory"],
                   xdg / "uniheap/heapd.sock", tmp_dir / "heapd.log", env=env, cwd=a)
    daemons.append(heapd.start())
    for demo in demos:
        r = run([demo], env=env, cwd=b)
        assert r.returncode == 0, r.stderr
        assert "root readme.point -> object at offset" in r.stdout
    heapctl = installed / "bin/heapctl"
    r = run([heapctl, "roots"], env=env, cwd=b)
    assert r.returncode == 0 and "readme.point" in r.stdout, r.stdout + r.stderr
    r = run([heapctl, "check"], env=env, cwd=b)   # runs libexec/uniheap/uniheap-check
    assert r.returncode == 0 and r.stdout.startswith("ok:"), r.stdout + r.stderr
    assert heapd.stop() == 0
    assert "event=stopped" in heapd.log_text()
    assert not (xdg / "uniheap/heapd.sock").exists()


PY_CLIENT = """
import uniheap

class Point(uniheap.PObject, name="t.Point"):
    x = uniheap.i64()

with uniheap.connect() as heap:          # the default socket
    p = Point(heap)
    with heap.atomic():
        p.x = 42
        heap.roots["p"] = p
    print(uniheap.__file__, heap.roots["p"].x)
"""


def test_python_package_built_against_the_install(installed, tmp_dir, daemons):
    """pip installs the Python package from a copy of bindings-python alone
    (no build tree around it): libuniheap and uniheap.h come from the
    installed prefix, found by pkg-config."""
    src = tmp_dir / "bindings-python"
    shutil.copytree(REPO / "bindings-python", src,
                    ignore=shutil.ignore_patterns("build", "tests", "*.so", "*.so.*",
                                                  "__pycache__", "*.egg-info"))
    site = tmp_dir / "site"
    env = clean_env(PKG_CONFIG_PATH=installed / "lib/pkgconfig", UNIHEAP_BUILD=None)
    r = run([sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation",
             "--no-deps", "--target", site, src], env=env, cwd=tmp_dir, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert (site / "uniheap" / "libuniheap.so.0").exists()

    xdg = tmp_dir / "xdg"
    xdg.mkdir(mode=0o700)
    env = clean_env(XDG_RUNTIME_DIR=xdg, PYTHONPATH=site)
    heapd = Daemon([installed / "bin/heapd", "--heap", tmp_dir / "heap", "--create",
                    "--size", "64M", "--durability", "memory"],
                   xdg / "uniheap/heapd.sock", tmp_dir / "heapd.log", env=env)
    daemons.append(heapd.start())
    r = run([sys.executable, "-c", PY_CLIENT], env=env, cwd=tmp_dir)
    assert r.returncode == 0, r.stderr
    where, x = r.stdout.split()
    assert where.startswith(str(site)) and x == "42", r.stdout
    assert heapd.stop() == 0


NODE_CLIENT = """
const uniheap = require(process.argv[1]);
const heap = uniheap.connect();          // the default socket
const Point = heap.defineClass('t.Point', { x: 'i64' });
const p = new Point({});
heap.atomic(() => { p.x = 42; heap.roots.set('p', p); });
console.log(require.resolve(process.argv[1]), heap.roots.get('p').x);
heap.close();
"""


def test_node_package_built_against_the_install(installed, tmp_dir, daemons):
    """The Node package built from a copy of bindings-node alone (no
    checkout around it, no UNIHEAP_BUILD) links the installed libuniheap
    that pkg-config finds, and carries a copy beside the addon."""
    src = tmp_dir / "pkg" / "uniheap"
    shutil.copytree(REPO / "bindings-node", src,
                    ignore=shutil.ignore_patterns("build", "node_modules", "test"))
    # The build's own tools (node-gyp, node-addon-api), as make deps installed them.
    (src / "node_modules").symlink_to(REPO / "bindings-node" / "node_modules")
    env = clean_env(PKG_CONFIG_PATH=installed / "lib/pkgconfig", UNIHEAP_BUILD=None)
    r = run(["node", "scripts/build.js"], env=env, cwd=src, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    addon = src / "build" / "Release" / "uniheap.node"
    assert (addon.parent / "libuniheap.so.0").exists()
    r = run(["readelf", "-d", addon])
    assert "libuniheap.so.0" in r.stdout and "$ORIGIN" in r.stdout, r.stdout

    xdg = tmp_dir / "xdg"
    xdg.mkdir(mode=0o700)
    env = clean_env(XDG_RUNTIME_DIR=xdg)
    heapd = Daemon([installed / "bin/heapd", "--heap", tmp_dir / "heap", "--create",
                    "--size", "64M", "--durability", "memory"],
                   xdg / "uniheap/heapd.sock", tmp_dir / "heapd.log", env=env)
    daemons.append(heapd.start())
    r = run(["node", "-e", NODE_CLIENT, str(src)], env=env, cwd=tmp_dir)
    assert r.returncode == 0, r.stderr
    where, x = r.stdout.split()
    assert where.startswith(str(src)) and x == "42", r.stdout
    assert heapd.stop() == 0


JAVA_CLIENT = """
import java.nio.file.*;
import org.uniheap.*;

public class Client {
    public static void main(String[] args) throws Exception {
        try (Heap heap = Heap.connect()) {          // the default socket
            PMap<String, Object> m = heap.newMap(String.class);
            heap.atomic(() -> { m.put("x", 42L); heap.roots().put("m", m); });
            // Which libuniheap this process mapped.
            String lib = Files.readAllLines(Path.of("/proc/self/maps")).stream()
                    .filter(l -> l.contains("libuniheap")).map(l -> l.substring(l.indexOf('/')))
                    .findFirst().orElse("none");
            System.out.println(lib + " " + m.get("x"));
        }
    }
}
"""


def test_java_jar_without_a_copy_uses_the_install(installed, tmp_dir, daemons):
    """A uniheap jar that ships no libuniheap of its own loads the installed
    one through the system's dynamic linker (here LD_LIBRARY_PATH; after
    an install into a system prefix, ldconfig's cache)."""
    jar, java = uniheap_jar(REPO), jdk25_java()
    assert jar, "bindings-java/target has no jar: build first (make)"
    assert java, "no JDK 25 (set JAVA25_HOME); make deps checks for one"
    bare = tmp_dir / "uniheap-bare.jar"
    with zipfile.ZipFile(jar) as zin, zipfile.ZipFile(bare, "w") as zout:
        for item in zin.infolist():
            if "/native/" not in item.filename:
                zout.writestr(item, zin.read(item.filename))
    (tmp_dir / "Client.java").write_text(JAVA_CLIENT)

    xdg = tmp_dir / "xdg"
    xdg.mkdir(mode=0o700)
    heapd = Daemon([installed / "bin/heapd", "--heap", tmp_dir / "heap", "--create",
                    "--size", "64M", "--durability", "memory"],
                   xdg / "uniheap/heapd.sock", tmp_dir / "heapd.log",
                   env=clean_env(XDG_RUNTIME_DIR=xdg))
    daemons.append(heapd.start())
    argv = [java, "--enable-native-access=ALL-UNNAMED", "-cp", bare, tmp_dir / "Client.java"]
    r = run(argv, env=clean_env(XDG_RUNTIME_DIR=xdg, UNIHEAP_LIB=None,
                                LD_LIBRARY_PATH=installed / "lib"), cwd=tmp_dir, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    lib, x = r.stdout.split()
    assert lib.startswith(f"{installed}/lib/libuniheap.so") and x == "42", r.stdout
    assert heapd.stop() == 0
