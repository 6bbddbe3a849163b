#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The guides show code that is built and tested: every literalinclude
of doc/guides names a file that exists, with its :start-after: and
:end-before: markers in that file once each, the end after the start
and lines between them, and a :dedent: that strips whitespace only.
Every marked part of a program a page includes from (a start marker
"Name. 8<" and its end ">8 End of name.", as DPDK's examples mark them)
is shown by some page, so no part is left out of the page.

With docutils importable, each page that has a literalinclude is also
parsed as reStructuredText, with Sphinx's own roles and directives
stubbed, and every warning or error docutils reports fails the check.
Without docutils that part is skipped, and a line says so. (The project
does not build its guides with Sphinx.)

  doc_includes.py SOURCE_ROOT

Exit 0 when every check passes, 1 if not.
"""
import glob
import io
import os
import re
import sys

ROOT = sys.argv[1]
DOC = os.path.join(ROOT, "doc", "guides")
failures = 0


def check(ok, what):
    global failures
    print(("ok: " if ok else "FAIL: ") + what, flush=True)
    if not ok:
        failures += 1
    return ok


def directives(text):
    """(target, options) of each literalinclude of a page."""
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)\.\. literalinclude::\s*(\S+)\s*$", line)
        if not m:
            continue
        opts = {}
        for o in lines[i + 1:]:
            om = re.match(r"^\s+:([a-z-]+):\s*(.*?)\s*$", o)
            if not om or len(o) - len(o.lstrip()) <= len(m.group(1)):
                break
            opts[om.group(1)] = om.group(2)
        found.append((m.group(2), opts))
    return found


def shown(path, opts, where, quiet=False):
    """The lines Sphinx shows for one literalinclude, checking as it
    goes (quiet: without printing); None when a check fails."""
    check = globals()["check"] if not quiet else (lambda ok, what: ok)
    if not check(os.path.isfile(path), "%s: %s exists" % (where, path)):
        return None
    with open(path) as f:
        lines = f.read().splitlines()
    start = opts.get("start-after")
    end = opts.get("end-before")
    first, last = 0, len(lines)
    if start is not None:
        hits = [i for i, l in enumerate(lines) if start in l]
        if not check(len(hits) == 1, "%s: start-after %r once in %s (%d)"
                     % (where, start, os.path.basename(path), len(hits))):
            return None
        first = hits[0] + 1
    if end is not None:
        hits = [i for i, l in enumerate(lines) if end in l]
        if not check(len(hits) == 1, "%s: end-before %r once in %s (%d)"
                     % (where, end, os.path.basename(path), len(hits))):
            return None
        if not check(hits[0] > first, "%s: end-before %r after the start"
                     % (where, end)):
            return None
        last = hits[0]
    part = lines[first:last]
    if not check(any(l.strip() for l in part), "%s: %r..%r shows code"
                 % (where, start, end)):
        return None
    dedent = int(opts.get("dedent", "0") or 0)
    check(all(not l[:dedent].strip() for l in part),
          "%s: dedent %d strips whitespace only" % (where, dedent))
    return [l[dedent:] for l in part]


def marked_parts(path):
    """Start markers ("Name. 8<") of a file, each with its end present."""
    with open(path) as f:
        text = f.read()
    starts = re.findall(r"/\* ([A-Z][^*]*?)\. 8< \*/", text)
    for s in starts:
        check(re.search(r"/\* >8 End of %s\. \*/" % re.escape(s), text,
                        re.I) is not None,
              "%s: part %r has its end marker" % (os.path.basename(path), s))
    return [s + ". 8<" for s in starts]


def parse_rst(page, text):
    """docutils' warnings and errors for a page, or None without it."""
    try:
        from docutils import nodes
        from docutils.core import publish_doctree
        from docutils.parsers.rst import Directive, directives, roles
        from docutils.parsers.rst.directives.body import CodeBlock
    except ImportError:
        return None

    base = os.path.dirname(page)

    class LiteralInclude(Directive):
        required_arguments = 1
        option_spec = {"language": directives.unchanged,
                       "start-after": directives.unchanged,
                       "end-before": directives.unchanged,
                       "dedent": directives.unchanged}

        def run(self):
            path = os.path.normpath(os.path.join(base, self.arguments[0]))
            part = shown(path, self.options, "", quiet=True) or []
            return [nodes.literal_block("\n".join(part), "\n".join(part))]

    def doc_role(name, rawtext, text, lineno, inliner, options={},
                 content=[]):
        return [nodes.literal(rawtext, text)], []

    directives.register_directive("literalinclude", LiteralInclude)
    directives.register_directive("code-block", CodeBlock)
    roles.register_local_role("doc", doc_role)
    stream = io.StringIO()
    publish_doctree(text, source_path=page, settings_overrides={
        "report_level": 2, "halt_level": 5, "warning_stream": stream,
        "syntax_highlight": "none", "file_insertion_enabled": False})
    return stream.getvalue()


def main():
    pages = sorted(glob.glob(os.path.join(DOC, "**", "*.rst"), recursive=True))
    check(len(pages) > 0, "guides found under %s" % DOC)
    shown_starts = {}
    for page in pages:
        with open(page) as f:
            text = f.read()
        incs = directives(text)
        if not incs:
            continue
        rel = os.path.relpath(page, ROOT)
        for target, opts in incs:
            path = os.path.normpath(os.path.join(os.path.dirname(page), target))
            if shown(path, opts, rel) is not None and "start-after" in opts:
                shown_starts.setdefault(path, set()).add(opts["start-after"])
        report = parse_rst(page, text)
        if report is None:
            print("docutils not installed: %s not parsed as reST" % rel)
        else:
            check(report == "", "%s parses as reST without a warning%s"
                  % (rel, "" if report == "" else ":\n" + report))
    check(len(shown_starts) > 0, "some page includes marked code")
    for path, starts in sorted(shown_starts.items()):
        for s in marked_parts(path):
            check(s in starts, "%s: part %r is shown by a page"
                  % (os.path.relpath(path, ROOT), s))
    print("doc_includes: %s" % ("every check passed" if failures == 0
                                else "%d checks failed" % failures))
    return 1 if failures else 0


sys.exit(main())
