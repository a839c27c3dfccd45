#!/usr/bin/env node
// Builds the addon (build/Release/uniheap.node) against libuniheap from the
// repository's CMake build: $UNIHEAP_BUILD, else ../build. When the library
// is missing and this is a checkout, it is built first (cmake + ninja).
// Outside a checkout (the package copied or packed on its own) without
// $UNIHEAP_BUILD, it uses an installed uniheap that pkg-config finds.
// The library is copied beside the addon, which finds it through an $ORIGIN
// rpath, so an installed package does not depend on the build tree staying.
// Node's headers come from the Node installation itself when it ships them
// (Debian/NodeSource: /usr/include/node), so no download is needed.
// With --prebuild (`make node`), the addon and its library are also copied,
// stripped, to prebuilds/<platform>-<arch>/: what the npm package carries
// so that it installs without a compiler (lib/addon-path.js loads it).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const HERE = path.resolve(__dirname, '..');
const REPO = path.resolve(HERE, '..');
const BUILD = path.resolve(process.env.UNIHEAP_BUILD || path.join(REPO, 'build'));
const LIB = 'libuniheap.so.0';

function fail(msg) {
  console.error(`uniheap: ${msg}`);
  process.exit(1);
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.error) fail(`cannot run ${cmd}: ${r.error.message}`);
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} failed (exit ${r.status})`);
}

function ensureLibuniheap() {
  if (fs.existsSync(path.join(BUILD, LIB))) return;
  if (!fs.existsSync(path.join(REPO, 'CMakeLists.txt'))) {
    fail(`${LIB} not found in ${BUILD}: set UNIHEAP_BUILD to the CMake build folder of ` +
      'a uniheap checkout (where `make` put libuniheap.so.0)');
  }
  console.error(`uniheap: ${LIB} missing in ${BUILD}; building it (cmake, ninja)`);
  run('cmake', ['-S', REPO, '-B', BUILD, '-G', 'Ninja', '-DCMAKE_BUILD_TYPE=RelWithDebInfo']);
  run('cmake', ['--build', BUILD, '--target', 'uniheap']);
}

// node-gyp: the package's own (make deps installs it), else the one npm runs
// install scripts with.
function nodeGyp() {
  try {
    return require.resolve('node-gyp/bin/node-gyp.js', { paths: [HERE] });
  } catch {
    const npmGyp = process.env.npm_config_node_gyp;
    if (npmGyp && fs.existsSync(npmGyp)) return npmGyp;
  }
  fail('node-gyp not found: run `npm install` in bindings-node (make deps does)');
}

// The folder holding include/node/node_api.h of the running Node, if any.
function nodeDir() {
  if (process.env.npm_config_nodedir) return process.env.npm_config_nodedir;
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  if (fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h'))) return prefix;
  return null;
}

// The folder of uniheap.h: the checkout's, else the source folder the CMake
// build in BUILD was configured from.
function includeDir() {
  const own = path.join(REPO, 'libuniheap', 'include');
  if (fs.existsSync(path.join(own, 'uniheap.h'))) return own;
  try {
    const cache = fs.readFileSync(path.join(BUILD, 'CMakeCache.txt'), 'utf8');
    const m = /^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$/m.exec(cache);
    if (m) return path.join(m[1], 'libuniheap', 'include');
  } catch { /* reported below */ }
  fail(`uniheap.h not found: ${BUILD} is not a CMake build folder of uniheap`);
}

// libdir and includedir of an installed uniheap, or null.
function pkgConfig() {
  const dirs = {};
  for (const v of ['libdir', 'includedir']) {
    const r = spawnSync('pkg-config', [`--variable=${v}`, 'uniheap'], { encoding: 'utf8' });
    if (r.error || r.status !== 0 || !r.stdout.trim()) return null;
    dirs[v] = r.stdout.trim();
  }
  if (!fs.existsSync(path.join(dirs.libdir, LIB))) return null;
  return { libDir: dirs.libdir, include: dirs.includedir };
}

// Where libuniheap.so.0 and uniheap.h come from.
function locate() {
  if (process.env.UNIHEAP_BUILD || fs.existsSync(path.join(REPO, 'CMakeLists.txt'))) {
    ensureLibuniheap();
    return { libDir: BUILD, include: includeDir() };
  }
  return pkgConfig() ||
    fail(`no uniheap build or installed uniheap found: set UNIHEAP_BUILD to the CMake build ` +
      'folder of a uniheap checkout, or install uniheap (make install) where pkg-config ' +
      'finds it (PKG_CONFIG_PATH)');
}

function main() {
  const lib = locate();
  try {
    require.resolve('node-addon-api', { paths: [HERE] });
  } catch {
    fail('node-addon-api not found: run `npm install` in bindings-node (make deps does)');
  }
  const args = [nodeGyp(), 'configure', 'build', '--silent'];
  const dir = nodeDir();
  if (dir) args.push(`--nodedir=${dir}`);
  const env = { ...process.env, UNIHEAP_LIB_DIR: lib.libDir, UNIHEAP_INCLUDE_DIR: lib.include };
  run(process.execPath, args, { cwd: HERE, env });
  // Copy, then rename: a process that has the old library mapped keeps it.
  const dest = path.join(HERE, 'build', 'Release', LIB);
  fs.copyFileSync(path.join(lib.libDir, LIB), `${dest}.tmp`);
  fs.renameSync(`${dest}.tmp`, dest);
  if (process.argv.includes('--prebuild')) prebuild(path.dirname(dest));
}

// Copies uniheap.node and libuniheap.so.0 from built to the package's
// prebuilds folder for this platform, each replaced by a rename.
function prebuild(built) {
  const { PLATFORM } = require('../lib/addon-path');
  const dir = path.join(HERE, 'prebuilds', PLATFORM);
  fs.mkdirSync(dir, { recursive: true });
  for (const f of ['uniheap.node', LIB]) {
    const tmp = path.join(dir, `${f}.tmp`);
    fs.copyFileSync(path.join(built, f), tmp);
    // Debug sections are most of the bytes; a missing strip only costs size.
    spawnSync('strip', ['--strip-unneeded', tmp], { stdio: 'ignore' });
    fs.renameSync(tmp, path.join(dir, f));
  }
}

main();
