#!/bin/sh
# tests/packages/deb.sh DEB: installs the Debian package as a user would
# (apt-get install ./file.deb, so that its Depends are resolved), runs the
# installed heapd on a temporary heap and socket, compiles a client with
# `pkg-config --cflags --libs uniheap` against the installed files and runs
# it, then purges the package and checks that none of its files, its state
# folder or its user is left. Needs root (dpkg). The checkout's own build
# is never used: every program is called by its installed path, and
# pkg-config looks only in /usr's folders.
# Refuses to run when uniheap is installed already (dpkg), or the user
# uniheap or /var/lib/uniheap exist: the purge check would remove them.
set -u
. "$(dirname "$0")/common.sh"

DEB=$(readlink -f "$1")
SRC=$(cd "$(dirname "$0")/../.." && pwd)

if [ "$(id -u)" != 0 ]; then
	echo "deb: needs root (dpkg); skipped"
	summary
	exit 0
fi
if dpkg -s uniheap >/dev/null 2>&1 || getent passwd uniheap >/dev/null ||
	[ -e /var/lib/uniheap ]; then
	echo "deb: uniheap is installed here already (package, user or /var/lib/uniheap); refusing"
	exit 1
fi

check "apt-get installs $(basename "$DEB")" \
	env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$DEB"
dpkg -L uniheap >"$TMP/files" 2>/dev/null
check "postinst made the user and group uniheap" \
	sh -c 'getent passwd uniheap && getent group uniheap'
# (/lib is /usr/lib on a merged-/usr system: paths are compared resolved.)
LIB=/usr/lib/libuniheap.so.0.1.0
check "the installed library is known to ld.so" \
	sh -c "ldconfig -p | sed -n 's/^.*libuniheap.so.0 (.*=> //p' | xargs readlink -f | grep -qx $LIB"
check "installed heapd starts on a temporary heap" start_heapd /usr/bin/heapd /usr/bin/heapctl
check "installed heapctl status" /usr/bin/heapctl status

# pkg-config of the installed package only (not a /usr/local install).
PC="env PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=/usr/lib/pkgconfig:/usr/share/pkgconfig pkg-config"
check "pkg-config names the installed files" \
	sh -c "[ \"\$($PC --variable=libdir uniheap)\" = /usr/lib ] &&
		[ \"\$($PC --variable=includedir uniheap)\" = /usr/include ]"
check "a client compiles with pkg-config against the installed files" \
	sh -c "cc -o '$TMP/demo' '$SRC/examples/c/demo_readme.c' \$($PC --cflags --libs uniheap) &&
		ldd '$TMP/demo' | sed -n 's/^.*libuniheap.so.0 => \\([^ ]*\\) .*/\\1/p' |
		xargs readlink -f | grep -qx $LIB"
check "the client runs" sh -c "env -u LD_LIBRARY_PATH '$TMP/demo' | grep -q 'root readme.point -> object'"
check "installed heapctl roots lists the client's root" \
	sh -c '/usr/bin/heapctl roots | grep -q readme.point'
check "installed heapctl check (libexec uniheap-check)" /usr/bin/heapctl check
check "installed heapctl metrics" sh -c '/usr/bin/heapctl metrics | grep -q "^uniheap_roots{.*} 1$"'
check "man page heapd(8) installed" test -f /usr/share/man/man8/heapd.8.gz
check "systemd units and sysusers.d installed" \
	test -f /usr/lib/systemd/system/heapd.service -a -f /usr/lib/systemd/system/heapd@.service \
	-a -f /usr/lib/sysusers.d/uniheap.conf
check "the unit runs the installed heapd" grep -q '^ExecStart=/usr/bin/heapd ' \
	/usr/lib/systemd/system/heapd.service
check "find_package(uniheap) files installed" test -f /usr/lib/cmake/uniheap/uniheap-config.cmake
stop_heapd
# What `systemctl enable heapd` leaves (made by hand: systemd may not run);
# a folder made here is removed at the end.
WANTS=/etc/systemd/system/multi-user.target.wants
[ -d "$WANTS" ] || { mkdir -p "$WANTS" && MADE_WANTS=1; }
ln -sf /usr/lib/systemd/system/heapd.service "$WANTS/"
check "dpkg --remove keeps the user (only purge removes it)" \
	sh -c 'dpkg --remove uniheap && getent passwd uniheap'

check "dpkg --purge uniheap" dpkg --purge uniheap
check "the links of systemctl enable are gone" \
	test ! -L "$WANTS/heapd.service"
[ -n "${MADE_WANTS:-}" ] && rmdir "$WANTS"
check "no file of the package is left" \
	sh -c "while read -r f; do [ -d \"\$f\" ] && continue; [ -e \"\$f\" -o -L \"\$f\" ] && { echo \"left: \$f\"; exit 1; }; done <'$TMP/files'; exit 0"
check "the user and group uniheap are gone" \
	sh -c '! getent passwd uniheap && ! getent group uniheap'
check "no /var/lib/uniheap is left" test ! -e /var/lib/uniheap
check "dpkg knows no uniheap" sh -c '! dpkg -s uniheap 2>/dev/null | grep -q "^Status: install"'
summary
