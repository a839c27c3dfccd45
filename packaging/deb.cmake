# The Debian package (`make deb`, or `cpack -G DEB` in the build folder):
# uniheap_VERSION_ARCH.deb with what `cmake --install` installs (heapd,
# heapctl, uniheap-check, libuniheap.so.0, uniheap.h, pkg-config and CMake
# files, man pages, systemd units, sysusers.d) under /usr, plus the
# maintainer scripts and documents of packaging/debian.
# Invariants: Depends is computed by dpkg-shlibdeps from the ELF files,
# never written by hand; the package installs with DESTDIR staging and the
# prefix /usr, so the files that name the prefix (uniheap.pc, the units)
# name /usr and not the staging folder.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME uniheap)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "uniheap maintainers <maintainers@uniheap.example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "shared persistent object heap (daemon, tools, C library)")
set(CPACK_PACKAGE_DESCRIPTION
  "uniheap is a persistent object heap that processes written in C, Java,
Python and Node share: each maps the heap file and works on its objects in
place, in failure-atomic blocks, while the daemon heapd owns the file and
answers control requests on a UNIX socket.
.
This package holds heapd, heapctl, the C client library libuniheap with its
header, pkg-config and CMake files, the man pages and the systemd units.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# cmake --install runs with --prefix /usr and DESTDIR=<staging>, so that
# packaging/install-configured.cmake writes /usr into uniheap.pc and units.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION database)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://uniheap.example.org")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# uniheap-check links libuniheap.so.0 of this very package.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_BINARY_DIR})
# A shlibs file for packages that link libuniheap (the ldconfig trigger is
# packaging/debian/triggers).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${CMAKE_SOURCE_DIR}/packaging/debian/postinst
  ${CMAKE_SOURCE_DIR}/packaging/debian/prerm
  ${CMAKE_SOURCE_DIR}/packaging/debian/postrm
  ${CMAKE_SOURCE_DIR}/packaging/debian/triggers)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
# The copyright file, the changelog and lintian's overrides go into the
# staging folder after the install and before the archive is made (CPack
# hands only CPACK_* variables to that script).
set(CPACK_UNIHEAP_DEBIAN_DIR ${CMAKE_SOURCE_DIR}/packaging/debian)
set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_SOURCE_DIR}/packaging/deb-staging.cmake)
set(CPACK_OUTPUT_FILE_PREFIX ${CMAKE_BINARY_DIR}/dist)
include(CPack)
