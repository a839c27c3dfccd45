"""The default socket (uh_default_socket() in uniheap.h): heapd and its
clients, started from different folders by the same user with no --socket,
meet on it, with and without XDG_RUNTIME_DIR; an unsafe per-user folder
under /tmp is refused by every one of them with the reason."""

import os
import shutil
import stat
import sys

import pytest

from conftest import IS_ROOT, REPO, Daemon, as_user, built, clean_env, run, spare_uid


def heapd_argv(heap):
    return [built("heapd"), "--heap", heap, "--create", "--size", "64M",
            "--durability", "memory"]


def python_default_socket(env, cwd, uid=None):
    """What the Python binding (uniheap.default_socket()) says."""
    env = dict(env, PYTHONPATH=str(REPO / "bindings-python"))
    r = run([*as_user(uid), sys.executable, "-c",
             "import uniheap; print(uniheap.default_socket())"], env=env, cwd=cwd)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def folders(base, uid, *names):
    """Subfolders of base owned by uid (None: by us)."""
    out = []
    for n in names:
        d = base / n
        d.mkdir(mode=0o700)
        if uid is not None:
            os.chown(d, uid, uid)
        out.append(d)
    return out


def clients_meet(sock, env, cwd, uid=None):
    """heapctl (C++, the shared rule), a libuniheap program (C,
    uh_connect(NULL)) and the Python binding find heapd on sock from cwd."""
    r = run([*as_user(uid), built("heapctl"), "status"], env=env, cwd=cwd)
    assert r.returncode == 0, f"heapctl status: {r.stderr}"
    r = run([*as_user(uid), built("examples/c/demo_readme")], env=env, cwd=cwd)
    assert r.returncode == 0, f"demo_readme: {r.stderr}"
    assert "readme.point" in r.stdout
    assert python_default_socket(env, cwd, uid) == str(sock)


def test_meet_under_xdg_runtime_dir(tmp_dir, daemons):
    xdg, a, b = folders(tmp_dir, None, "xdg", "a", "b")
    env = clean_env(XDG_RUNTIME_DIR=xdg)
    sock = xdg / "uniheap" / "heapd.sock"
    daemons.append(Daemon(heapd_argv(tmp_dir / "heap"), sock, tmp_dir / "heapd.log",
                          env=env, cwd=a).start())
    # heapd made the folder of its socket, private to its user.
    assert stat.S_IMODE((xdg / "uniheap").stat().st_mode) == 0o700
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    clients_meet(sock, env, b)
    assert daemons[0].stop() == 0


@pytest.fixture
def tmp_uid():
    """The uid heapd and its clients run as when XDG_RUNTIME_DIR is unset:
    a spare one when we are root (its /tmp/uniheap-<uid> is removed
    before and after), else our own."""
    if not IS_ROOT:
        yield None, os.geteuid()
        return
    uid = spare_uid()
    shutil.rmtree(f"/tmp/uniheap-{uid}", ignore_errors=True)
    yield uid, uid
    shutil.rmtree(f"/tmp/uniheap-{uid}", ignore_errors=True)


def test_meet_without_xdg_runtime_dir(tmp_dir, daemons, tmp_uid):
    run_as, uid = tmp_uid
    state, a, b = folders(tmp_dir, run_as, "state", "a", "b")
    env = clean_env()
    sock = f"/tmp/uniheap-{uid}/heapd.sock"
    daemons.append(Daemon(heapd_argv(state / "heap"), sock, tmp_dir / "heapd.log",
                          env=env, cwd=a, uid=run_as).start())
    st = os.lstat(f"/tmp/uniheap-{uid}")
    assert stat.S_ISDIR(st.st_mode) and st.st_uid == uid
    assert stat.S_IMODE(st.st_mode) & 0o077 == 0
    clients_meet(sock, env, b, run_as)
    # A relative XDG_RUNTIME_DIR is invalid: the /tmp rule applies.
    env_rel = clean_env(XDG_RUNTIME_DIR="run")
    assert python_default_socket(env_rel, b, run_as) == sock
    r = run([*as_user(run_as), built("heapctl"), "health"], env=env_rel, cwd=b)
    assert r.returncode == 0 and r.stdout.strip() == "SERVING", r.stderr
    assert daemons[0].stop() == 0


def test_uniheap_socket_wins(tmp_dir):
    xdg, = folders(tmp_dir, None, "xdg")
    env = clean_env(XDG_RUNTIME_DIR=xdg, UNIHEAP_SOCKET=tmp_dir / "mine.sock")
    assert python_default_socket(env, tmp_dir) == str(tmp_dir / "mine.sock")
    r = run([built("heapctl"), "status"], env=env, cwd=tmp_dir)
    assert r.returncode == 2
    assert str(tmp_dir / "mine.sock") in r.stderr


def spoil(folder, how, uid):
    """Make /tmp/uniheap-<uid> unsafe in one way."""
    if how == "symlink":
        target = folder.parent / (folder.name + "-target")
        target.mkdir(mode=0o700)
        os.chown(target, uid, uid)
        folder.symlink_to(target)
        return "is a symbolic link"
    folder.mkdir(mode=0o700)
    if how == "owner":
        return "belongs to uid 0, not to you"
    os.chown(folder, uid, uid)
    folder.chmod(0o777)
    return "is writable by other users (mode 0777)"


@pytest.mark.skipif(not IS_ROOT, reason="acting as another user needs root")
@pytest.mark.parametrize("how", ["symlink", "owner", "mode"])
def test_unsafe_tmp_folder_refused(tmp_dir, tmp_uid, how):
    uid = tmp_uid[0]
    folder = tmp_dir.parent / f"uniheap-{uid}"
    try:
        fault = spoil(folder, how, uid)
        (state,) = folders(tmp_dir, uid, "state")
        env = clean_env()
        want = f"refusing the socket folder {folder}: it {fault}"
        r = run([*as_user(uid), *heapd_argv(state / "heap")], env=env, cwd=state)
        assert r.returncode == 1 and want in r.stderr, r.stderr
        assert "UNIHEAP_SOCKET" in r.stderr          # the remedy
        r = run([*as_user(uid), built("heapctl"), "status"], env=env, cwd=state)
        assert r.returncode == 2 and want in r.stderr, r.stderr
        r = run([*as_user(uid), built("examples/c/demo_readme")], env=env, cwd=state)
        assert r.returncode == 1 and want in r.stderr, r.stderr
        assert not (state / "heap").exists()
    finally:
        if folder.is_symlink():
            folder.unlink()
        shutil.rmtree(folder.parent / (folder.name + "-target"), ignore_errors=True)
