"""Command lines of the YCSB clients: the official Java client with the
bindings of bench/ycsb/java, and the Python and Node ports. Every client
takes the same options (-load/-t, -db, -P, -p, -threads, -s) and prints
the same report, so the runner treats them alike.
"""
import os
import shutil
import sys
from pathlib import Path

YCSB = Path(__file__).resolve().parent.parent           # bench/ycsb
REPO = YCSB.parent.parent
WORKLOADS = YCSB / "workloads"
JAVA_PROJECT = YCSB / "java"
NODE_CLIENT = YCSB / "node" / "bin" / "ycsb.js"
JAVA_HOME = Path(os.environ.get("YCSB_JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64"))

LANGUAGES = ("java", "python", "node")

# -db of each language for each backend; None: that language has none.
DB_NAMES = {
    "java": {"uniheap": "org.uniheap.ycsb.uniheap.UniheapDB", "lmdb": "org.uniheap.ycsb.LmdbDB",
             "memory": "org.uniheap.ycsb.SkipListDB", "chronicle": "org.uniheap.ycsb.ChronicleMapDB"},
    "python": {"uniheap": "uniheap", "lmdb": "lmdb", "memory": "memory", "redis": "redis"},
    "node": {"uniheap": "uniheap", "lmdb": "lmdb", "memory": "memory", "redis": "redis"},
}

# What the JVM needs opened for the peers' libraries on JDK 25 (each
# finding is in bench/ycsb/README.md); uniheap needs only native access.
JAVA_FLAGS = {
    "uniheap": ["--enable-native-access=ALL-UNNAMED"],
    "lmdb": ["--add-opens=java.base/java.nio=ALL-UNNAMED",
             "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED"],
    "memory": [],
    "chronicle": ["--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
                  "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
                  "--add-opens=java.base/java.lang=ALL-UNNAMED",
                  "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
                  "-Dchronicle.analytics.disable=true"],
}


def available(lang):
    """None if lang's client can run here, else why not."""
    if lang == "python":
        return None
    if lang == "node":
        if not NODE_CLIENT.exists():
            return "bench/ycsb/node is missing"
        if not (YCSB / "node" / "node_modules").exists():
            return "bench/ycsb/node/node_modules is missing: run make deps"
        return None if shutil.which("node") else "node is not installed"
    if lang == "java":
        if not (JAVA_HOME / "bin" / "java").exists():
            return f"no JDK 25 at {JAVA_HOME} (set YCSB_JAVA_HOME)"
        if not (JAVA_PROJECT / "target" / "classes").exists():
            return "bench/ycsb/java is not built: make ycsb-java"
        return None
    return f"unknown language {lang!r}"


def has_db(lang, backend):
    if DB_NAMES.get(lang, {}).get(backend) is None:
        return False
    if lang == "java" and backend == "uniheap":
        return (JAVA_PROJECT / "target" / "classes" / "org" / "uniheap" / "ycsb" / "uniheap"
                / "UniheapDB.class").exists()
    if lang == "node" and backend == "uniheap":
        return (REPO / "bindings-node" / "build" / "Release" / "uniheap.node").exists()
    return True


def _java_classpath():
    target = JAVA_PROJECT / "target"
    return f"{target / 'classes'}:{target / 'lib'}/*"


def _pythonpath():
    parts = [str(YCSB / "python"), str(REPO / "bindings-python")]
    if os.environ.get("PYTHONPATH"):
        parts.append(os.environ["PYTHONPATH"])
    return os.pathsep.join(parts)


def command(lang, phase, backend, workload, props, threads=1, status=False, build=None):
    """(argv, extra environment) of one client run: phase "load" or "run",
    workload a letter a..f or a path, props the -p properties."""
    wl = workload if os.sep in str(workload) else WORKLOADS / f"workload{workload}"
    args = ["-load" if phase == "load" else "-t", "-db", DB_NAMES[lang][backend],
            "-P", str(wl), "-threads", str(threads)]
    if status:
        args.append("-s")
    for k, v in props.items():
        args += ["-p", f"{k}={v}"]
    env = {}
    if build:
        env["UNIHEAP_BUILD"] = str(build)
    if lang == "python":
        env["PYTHONPATH"] = _pythonpath()
        return [sys.executable, "-m", "ycsb"] + args, env
    if lang == "node":
        return ["node", str(NODE_CLIENT)] + args, env
    if lang == "java":
        flags = JAVA_FLAGS[backend] + ["-Xss2m"]
        if backend == "uniheap" and build:
            flags.append(f"-Djava.library.path={build}")
        return ([str(JAVA_HOME / "bin" / "java")] + flags
                + ["-cp", _java_classpath(), "site.ycsb.Client"] + args), env
    raise ValueError(f"unknown language {lang!r}")
