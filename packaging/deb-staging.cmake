# Run by CPack (CPACK_PRE_BUILD_SCRIPTS in packaging/deb.cmake) once the
# files are staged and before the .deb is made: adds what Debian wants in
# every package besides the installed files (the copyright file, a native
# package's changelog; both it and the man pages gzipped, without a time
# stamp, so that the same source gives the same bytes) and lintian's
# overrides.
# CPACK_TEMPORARY_INSTALL_DIRECTORY is the staging root; with
# CPACK_SET_DESTDIR the files are under its usr/.
set(root "${CPACK_TEMPORARY_INSTALL_DIRECTORY}")
set(src "${CPACK_UNIHEAP_DEBIAN_DIR}")
set(doc "${root}/usr/share/doc/${CPACK_PACKAGE_NAME}")
file(MAKE_DIRECTORY "${doc}" "${root}/usr/share/lintian/overrides")
file(COPY_FILE "${src}/copyright" "${doc}/copyright")
execute_process(COMMAND gzip -9 -n -c "${src}/changelog"
  OUTPUT_FILE "${doc}/changelog.gz" COMMAND_ERROR_IS_FATAL ANY)
file(COPY_FILE "${src}/lintian-overrides"
  "${root}/usr/share/lintian/overrides/${CPACK_PACKAGE_NAME}")
file(CHMOD "${doc}/copyright" "${doc}/changelog.gz"
  "${root}/usr/share/lintian/overrides/${CPACK_PACKAGE_NAME}"
  PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
file(GLOB pages "${root}/usr/share/man/man*/*.[0-9]")
foreach(page ${pages})
  execute_process(COMMAND gzip -9 -n -f "${page}" COMMAND_ERROR_IS_FATAL ANY)
endforeach()
