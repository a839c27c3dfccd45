#!/usr/bin/env python3
"""cycles.py -- list file-level dependency cycles in uniheap's C code.

A *module* is a source file together with the header of the same name
(smap.c + smap.h); a header with no source of its own is a module alone.
Module A depends on module B when

  - a file of A includes B's header (#include "b.h"), or
  - A's object file uses a symbol that B's object file defines
    (the extern-symbol cross-reference, read with nm from the build).

Layers point one way, so every component must be a DAG: a strongly
connected set of two or more modules is a cycle, printed with the edges
that make it, and the script exits 1.  Components checked: common/,
libuniheap, heapd and the Python binding's C extension; each is checked
on its own (common/ is below both libuniheap and heapd, so an edge from
common/ up into another component is reported too).

Usage: scripts/cycles.py [--build DIR]   (default ./build; run after make)
"""
import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCE_EXT = ('.c', '.cc')

# name -> (source folders, folders searched for its object files)
COMPONENTS = {
    'common': (['common'], ['{build}/CMakeFiles/uhcommon.dir/common']),
    'libuniheap': (['libuniheap/src'],
                   ['{build}/CMakeFiles/uniheap.dir/libuniheap/src']),
    'heapd': (['heapd/src'], ['{build}/CMakeFiles/heapd.dir/heapd/src']),
    'bindings-python': (['bindings-python/src'], ['bindings-python/build']),
}


def module_of(path):
    """smap.c, smap.h -> smap (the module a file belongs to)."""
    return os.path.splitext(os.path.basename(path))[0]


def source_files(folders):
    files = []
    for folder in folders:
        full = os.path.join(ROOT, folder)
        if not os.path.isdir(full):
            continue
        for name in sorted(os.listdir(full)):
            if name.endswith(SOURCE_EXT + ('.h',)):
                files.append(os.path.join(full, name))
    return files


def object_files(folders, build):
    found = {}
    for folder in folders:
        full = os.path.join(ROOT, folder.format(build=build))
        for dirpath, _, names in os.walk(full):
            for name in names:
                if name.endswith('.o'):
                    # heap.c.o (CMake) or heap.o (setuptools, node-gyp)
                    base = name[:-2]
                    found[module_of(base)] = os.path.join(dirpath, name)
    return found


def nm_symbols(obj):
    """(defined, undefined) global symbols of one object file."""
    out = subprocess.run(['nm', '-P', obj], capture_output=True, text=True,
                         check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        sym, kind = parts[0], parts[1]
        if kind == 'U':
            undefined.add(sym)
        elif kind in 'TDBRVWGS':
            defined.add(sym)
    return defined, undefined


def graph_of(name, build):
    folders, obj_folders = COMPONENTS[name]
    files = source_files(folders)
    modules = {module_of(f) for f in files}
    # An include names a module of this component only if the header is
    # here: heapd's gcfile.c is not the module of common/gcfile.h.
    headers = {os.path.basename(f) for f in files if f.endswith('.h')}
    edges = defaultdict(dict)		# a -> {b: why}

    for f in files:
        a = module_of(f)
        with open(f, encoding='utf-8', errors='replace') as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            b = module_of(inc)
            if (b != a and b in modules and not inc.startswith('..')
                    and os.path.basename(inc) in headers):
                edges[a].setdefault(b, '#include "%s" in %s'
                                    % (inc, os.path.basename(f)))

    objs = object_files(obj_folders, build)
    owner = {}
    uses = {}
    for mod, obj in objs.items():
        if mod not in modules:
            continue
        defined, undefined = nm_symbols(obj)
        for sym in defined:
            owner.setdefault(sym, mod)
        uses[mod] = undefined
    for a, syms in uses.items():
        for sym in sorted(syms):
            b = owner.get(sym)
            if b and b != a:
                edges[a].setdefault(b, 'calls %s' % sym)
    return modules, edges, len(objs)


def cycles(modules, edges):
    """Strongly connected sets of >= 2 modules (Tarjan, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(modules):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, {}))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            pushed = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                    pushed = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if pushed:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                scc = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    scc.append(w)
                    if w == v:
                        break
                if len(scc) > 1:
                    out.append(sorted(scc))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--build', default='build')
    ap.add_argument('components', nargs='*', default=list(COMPONENTS))
    args = ap.parse_args()

    bad = 0
    for name in args.components:
        modules, edges, nobj = graph_of(name, args.build)
        if not modules:
            continue
        if nobj == 0:
            print('cycles: %s: no object files under the build (run make '
                  'first)' % name, file=sys.stderr)
            bad += 1
            continue
        found = cycles(modules, edges)
        for scc in found:
            bad += 1
            print('%s: cycle of %d files: %s' % (name, len(scc),
                                                 ' '.join(scc)))
            members = set(scc)
            for a in scc:
                for b, why in sorted(edges.get(a, {}).items()):
                    if b in members:
                        print('    %s -> %s  (%s)' % (a, b, why))
        if not found:
            print('%s: %d files, no cycle' % (name, len(modules)))
    print('%d passed, %d failed' % (len(args.components) - bad
                                     if bad <= len(args.components) else 0,
                                     bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
