# The uniheap addon. scripts/build.js runs node-gyp with
# UNIHEAP_LIB_DIR (the CMake build folder holding libuniheap.so.0) and
# UNIHEAP_INCLUDE_DIR (the folder of uniheap.h) in the environment; the
# library is linked from there and found at run time beside the addon
# ($ORIGIN), where build.js copies it.
{
  "variables": {
    "uniheap_build": "<!(node -p \"process.env.UNIHEAP_LIB_DIR || '../build'\")",
    "uniheap_include": "<!(node -p \"process.env.UNIHEAP_INCLUDE_DIR || '../libuniheap/include'\")"
  },
  "targets": [
    {
      "target_name": "uniheap",
      "sources": [
        "src/addon.cc",
        "src/collections.cc",
        "src/errors.cc",
        "src/fields.cc",
        "src/pins.cc",
        "src/records.cc",
        "src/registry.cc",
        "src/session.cc",
        "src/values.cc",
        "src/wait.cc"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "<(uniheap_include)"
      ],
      "defines": [
        "NAPI_VERSION=8",
        "NAPI_DISABLE_CPP_EXCEPTIONS",
        "NODE_ADDON_API_DISABLE_DEPRECATED"
      ],
      "cflags_cc": [ "-std=c++17", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter" ],
      "libraries": [
        "-L<(uniheap_build)",
        "-luniheap",
        "-Wl,-rpath,'$$ORIGIN'"
      ]
    }
  ]
}
