#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Hold each library's version.map to the library and to its headers.

    symbol_maps.py SRCDIR MAP=LIBRARY [MAP=LIBRARY...]

MAP is a version.map relative to SRCDIR, LIBRARY the shared library built
from it. For each pair:
  - the library exports exactly the symbols the map lists (nothing the
    map does not name, nothing the map names that is gone);
  - a symbol of the INTERNAL node is declared __qpio_internal in a
    header beside the map, so an application's call of it does not
    compile (config/qpio_internal.h);
  - a symbol of the QPIO_0.1 node is declared in a header beside the map
    and not marked __qpio_internal.
Exit 0, or 1 with every fault printed (the map, the symbol, the rule).
"""
import glob
import os
import re
import subprocess
import sys


def map_nodes(path):
    """{node: [symbol, ...]} of a version script (global names only)."""
    text = re.sub(r'/\*.*?\*/', '', open(path).read(), flags=re.S)
    nodes = {}
    for m in re.finditer(r'(\w[\w.]*)\s*\{(.*?)\}\s*[\w.]*\s*;', text, re.S):
        body = m.group(2)
        glob_part = re.split(r'\blocal\s*:', body)[0]
        glob_part = re.sub(r'\bglobal\s*:', '', glob_part)
        nodes[m.group(1)] = [s.strip() for s in glob_part.split(';')
                             if s.strip()]
    return nodes


def exported(lib):
    out = subprocess.run(['nm', '-D', '--defined-only', lib],
                         capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] != 'A':       # 'A': the version nodes
            names.add(f[2].split('@')[0])
    return names


def declarations(dirname):
    """{symbol: internal?} for every qpio_ name declared in the headers
    of dirname: a prototype or an extern, one statement each."""
    decl = {}
    for h in glob.glob(os.path.join(dirname, '*.h')):
        text = re.sub(r'/\*.*?\*/|//[^\n]*', '', open(h).read(), flags=re.S)
        # preprocessor lines (continuations included) are no statements
        text = re.sub(r'^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', ';', text, flags=re.M)
        for stmt in re.split(r'[;{}]', text):
            m = re.match(r'\s*(__qpio_internal\s+)?(?:extern\s+)?'
                         r'(?:(?:const|struct|enum|unsigned|static|inline)'
                         r'\s+)*\w+[\s*]+(qpio_\w+)\s*(\(|\[|$)', stmt)
            if m:
                decl[m.group(2)] = decl.get(m.group(2), False) or \
                    bool(m.group(1))
    return decl


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src = sys.argv[1]
    faults = []
    for pair in sys.argv[2:]:
        rel, lib = pair.split('=', 1)
        path = os.path.join(src, rel)
        nodes = map_nodes(path)
        public = set(nodes.get('QPIO_0.1', []))
        internal = set(nodes.get('INTERNAL', []))
        unknown = set(nodes) - {'QPIO_0.1', 'INTERNAL'}
        if unknown:
            faults.append(f'{rel}: version nodes {sorted(unknown)}: only '
                          'QPIO_0.1 and INTERNAL')
        have = exported(lib)
        for s in sorted(have - public - internal):
            faults.append(f'{rel}: {os.path.basename(lib)} exports {s}, '
                          'which the map does not list: add it to QPIO_0.1 '
                          '(API) or INTERNAL (__qpio_internal), or make it '
                          'static')
        for s in sorted((public | internal) - have):
            faults.append(f'{rel}: lists {s}, which '
                          f'{os.path.basename(lib)} does not define')
        decl = declarations(os.path.dirname(path))
        for s in sorted(internal):
            if not decl.get(s, False):
                faults.append(f'{rel}: INTERNAL {s} is not declared '
                              '__qpio_internal in a header beside the map')
        for s in sorted(public):
            if s not in decl:
                faults.append(f'{rel}: QPIO_0.1 {s} is declared in no '
                              'header beside the map')
            elif decl[s]:
                faults.append(f'{rel}: QPIO_0.1 {s} is declared '
                              '__qpio_internal: move it to INTERNAL')
    for f in faults:
        print(f, file=sys.stderr)
    print(f'{len(sys.argv) - 2} maps checked, {len(faults)} faults')
    return 1 if faults else 0


if __name__ == '__main__':
    sys.exit(main())
