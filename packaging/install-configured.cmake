# Run by `cmake --install` (install(SCRIPT) in CMakeLists.txt): the files
# that name the installation prefix are configured here, because
# `--prefix` is chosen only now. The install(CODE) before this script set
# UH_SOURCE_DIR, UH_BINARY_DIR, UH_VERSION and the UH_*DIR folders
# relative to the prefix. file(INSTALL) honours $DESTDIR.
set(UH_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(UH_BINDIR "${UH_PREFIX}/${UH_BINDIR_REL}")
set(src "${UH_SOURCE_DIR}/packaging")
set(out "${UH_BINARY_DIR}/packaging/installed")

configure_file("${src}/uniheap.pc.in" "${out}/uniheap.pc" @ONLY)
file(INSTALL "${out}/uniheap.pc" DESTINATION "${UH_PREFIX}/${UH_LIBDIR}/pkgconfig")

# Units and sysusers.d go where systemd looks under this prefix
# (/usr/lib/systemd/system, /usr/local/lib/systemd/system, ...): one
# template makes the unit of the default heap and the one per named heap.
set(UH_UNIT heapd.service)
set(UH_UNIT_FOR "")
set(UH_UNIT_CONF /etc/uniheap/heapd.conf)
set(UH_UNIT_HEAP heap)
set(UH_UNIT_RUN uniheap)
configure_file("${src}/systemd/heapd.service.in" "${out}/${UH_UNIT}" @ONLY)
set(UH_UNIT heapd@.service)
set(UH_UNIT_FOR " for the heap %i")
set(UH_UNIT_CONF /etc/uniheap/%i.conf)
set(UH_UNIT_HEAP "%i.heap --name %i")
set(UH_UNIT_RUN uniheap-%i)
configure_file("${src}/systemd/heapd.service.in" "${out}/${UH_UNIT}" @ONLY)
file(INSTALL "${out}/heapd.service" "${out}/heapd@.service"
     DESTINATION "${UH_PREFIX}/lib/systemd/system")
file(INSTALL "${src}/systemd/uniheap.sysusers" DESTINATION "${UH_PREFIX}/lib/sysusers.d"
     RENAME uniheap.conf)
