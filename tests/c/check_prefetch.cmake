# check_prefetch.cmake -- a ctest: the read paths of libuniheap.so keep
# their prefetch instructions. A function that does nothing but prefetch
# has no effect a compiler can see, so it may drop every call to it
# (uhint.h, UH_PREFETCH_FN); the sorted map's reads lost all of theirs
# that way, unnoticed, for several versions. Each read path below (a
# public function and the lean helper it may or may not inline) must
# hold at least one prefetch instruction. A function counts with the
# clones the compiler may split it into (name.part.0, name.isra.0, ...).
#
#   cmake -DLIB=<libuniheap.so> -DOBJDUMP=<objdump> -P check_prefetch.cmake

#
# Where they live: sm_get_lean in smap_search.c, sm_node_load in
# smap_node.c, sm_next_lean and sm_next_body in smap_scan.c (the sorted
# map's prefetch helpers, static inline, in smap_int.h and smap_scan.c);
# lean_begin in map_get.c; a record's copy (prefetch_record) in
# getrecord.c, a found value's (uh_prefetch_value) in value.h.
set(paths
  "sorted-map get:uh_smap_get,sm_get_lean"
  "sorted-map node load:sm_node_load"
  "sorted-map batch (uh_smap_next_n):uh_smap_next_n,sm_next_lean"
  "sorted-map scan step:sm_next_body"
  "hash-map get:uh_map_get,lean_begin"
  "record get (uh_*_get_record):value_record,get_record,uh_smap_get_record,uh_map_get_record"
  "record scan (uh_smap_next_records):uh_smap_next_records,scan_record")

if(NOT OBJDUMP OR NOT EXISTS "${OBJDUMP}")
  message(FATAL_ERROR "check_prefetch: no objdump (binutils) to read ${LIB} with")
endif()

# Every function symbol, for the clones of the names below.
execute_process(COMMAND ${OBJDUMP} -t ${LIB} OUTPUT_VARIABLE symtab RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_prefetch: ${OBJDUMP} -t failed on ${LIB}")
endif()
string(REGEX MATCHALL "[ \t]F [^\n]*[ \t][A-Za-z_][A-Za-z0-9_.]*\n" fns "${symtab}")

set(passed 0)
set(failed 0)
foreach(path ${paths})
  string(REPLACE ":" ";" parts "${path}")
  list(GET parts 0 name)
  list(GET parts 1 syms)
  string(REPLACE "," ";" syms "${syms}")
  set(count 0)
  set(found "")
  foreach(sym ${syms})
    foreach(fn ${fns})
      string(REGEX REPLACE ".*[ \t]([A-Za-z0-9_.]+)\n$" "\\1" fn "${fn}")
      if(NOT fn MATCHES "^${sym}(\\..+)?$")
        continue()
      endif()
      execute_process(COMMAND ${OBJDUMP} -d --no-show-raw-insn --disassemble=${fn} ${LIB}
        OUTPUT_VARIABLE asm RESULT_VARIABLE rc)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "check_prefetch: ${OBJDUMP} failed on ${LIB}")
      endif()
      list(APPEND found ${fn})
      # x86-64 prefetcht0/nta/w, aarch64 prfm
      string(REGEX MATCHALL "\t(prefetch[a-z0-9]*|prfm)[ \t]" hits "${asm}")
      list(LENGTH hits n)
      math(EXPR count "${count} + ${n}")
    endforeach()
  endforeach()
  list(JOIN found ", " found_text)
  if(NOT found)
    message("FAIL ${name}: none of ${syms} is a symbol of ${LIB} (renamed or inlined? update this list)")
    math(EXPR failed "${failed} + 1")
  elseif(count EQUAL 0)
    message("FAIL ${name}: no prefetch instruction in ${found_text}: the compiler dropped them")
    math(EXPR failed "${failed} + 1")
  else()
    message("ok   ${name}: ${count} prefetch instructions in ${found_text}")
    math(EXPR passed "${passed} + 1")
  endif()
endforeach()
message("${passed} passed, ${failed} failed")
if(failed GREATER 0)
  message(FATAL_ERROR "check_prefetch: read paths without their prefetches")
endif()
