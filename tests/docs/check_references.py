#!/usr/bin/env python3
"""Checks that the repository's docs and comments only point at things inside the repository.

Usage: check_references.py SOURCE_DIR [--exclude DIR ...]

Fails (exit 1), listing file:line and the reason, when
  - a file mentions a document users do not have: the design specs the docs were written from
    (builtin-rules.md, rule-job-contract.md), or paths of the machine they were written on;
  - a citation `FILE.md §N` names a file that is not in the repository, or a section N that the
    file has no heading for (headings numbered `## N.` / `### N.M`);
  - a relative link in a Markdown file, or a `docs/....md` path anywhere, names a file that does
    not exist.
Scanned: README.md, docs/, and every text file of the source tree (sources, headers, CMake files,
scripts, tests), except build folders, .git and test fixtures.
"""
import argparse
import os
import re
import sys

# Written so that this file does not match its own patterns.
OUTSIDE = [
    (re.compile(r"builtin-rules" r"\.md"), "cites the design spec builtin-rules" ".md (not in the repository)"),
    (re.compile(r"rule-job-contract" r"\.md"), "cites the design spec rule-job-contract" ".md (not in the repository)"),
    (re.compile(r"\.\./shared" r"\b"), "points at ../shared (outside the repository)"),
    (re.compile(r"shared/" r"spec\b"), "points at shared/spec (outside the repository)"),
    (re.compile(r"(?<![\w.])/wo" r"rk/"), "points at /work/ (a path of the machine the docs were written on)"),
]
CITATION = re.compile(r"([\w./<>-]*?[\w-]+\.md)[`)]?\s*§\s*(\d+(?:\.\d+)*)")
MD_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
DOCS_PATH = re.compile(r"(?<![\w./-])(docs/[\w./-]+?\.md)\b")
HEADING = re.compile(r"^#+\s+§?(\d+(?:\.\d+)*)\.?(\s|$)")

SKIP_DIRS = {".git", "fixtures", "__pycache__"}
TEXT_EXTS = {".md", ".h", ".hpp", ".cc", ".cpp", ".c", ".txt", ".cmake", ".sh", ".py", ".in",
             ".yaml", ".yml", ".json", ".proto", ".supp", ".map", ".ld"}


def is_build_dir(path):
    return os.path.exists(os.path.join(path, "CMakeCache.txt"))


def files_to_scan(root, excludes):
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        keep = []
        for d in dirnames:
            rel = os.path.normpath(os.path.join(rel_dir, d))
            full = os.path.join(dirpath, d)
            if d in SKIP_DIRS or (d.startswith(".") and d != ".ci") or is_build_dir(full):
                continue
            if any(rel == e or rel.startswith(e + os.sep) for e in excludes):
                continue
            keep.append(d)
        dirnames[:] = sorted(keep)
        for name in sorted(filenames):
            ext = os.path.splitext(name)[1]
            if ext in TEXT_EXTS or name in ("CMakeLists.txt", "run", "README"):
                yield os.path.normpath(os.path.join(rel_dir, name))


def headings(path, cache={}):
    if path not in cache:
        found = set()
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = HEADING.match(line)
                if m:
                    found.add(m.group(1))
        cache[path] = found
    return cache[path]


def resolve(root, rel_file, target):
    """The existing file a reference names, trying the repository root and the citing file's
    folder (Markdown links are relative to it), or None."""
    for base in (os.path.dirname(rel_file), ""):
        candidate = os.path.normpath(os.path.join(root, base, target))
        if os.path.exists(candidate):
            return candidate
    return None


def check_file(root, rel, problems):
    try:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            lines = f.read().split("\n")
    except (UnicodeDecodeError, OSError):
        return
    is_md = rel.endswith(".md")
    self_path = os.path.normpath(os.path.abspath(__file__))
    if os.path.normpath(os.path.join(os.path.abspath(root), rel)) == self_path:
        return
    for n, line in enumerate(lines, 1):
        where = f"{rel}:{n}"
        for pattern, reason in OUTSIDE:
            if pattern.search(line):
                problems.append(f"{where}: {reason}: {line.strip()}")
        for m in CITATION.finditer(line):
            target, section = m.group(1), m.group(2)
            if "<" in target or OUTSIDE[0][0].search(target) or OUTSIDE[1][0].search(target):
                continue  # a placeholder (docs/rules/<RuleName>.md), or reported above
            path = resolve(root, rel, target)
            if path is None:
                problems.append(f"{where}: cites {target} §{section}, which is not in the repository")
            elif section not in headings(path):
                problems.append(f"{where}: cites {target} §{section}, but {os.path.relpath(path, root)} "
                                f"has no heading numbered {section}")
        for m in DOCS_PATH.finditer(line):
            if resolve(root, "", m.group(1)) is None:
                problems.append(f"{where}: names {m.group(1)}, which does not exist")
        if is_md:
            for m in MD_LINK.finditer(line):
                target = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                    continue
                target = target.split("#", 1)[0]
                if not target:
                    continue
                if not os.path.exists(os.path.normpath(os.path.join(root, os.path.dirname(rel), target))):
                    problems.append(f"{where}: links to {target}, which does not exist")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source_dir")
    parser.add_argument("--exclude", action="append", default=[],
                        help="a folder (relative to SOURCE_DIR) not to scan")
    args = parser.parse_args()
    root = args.source_dir
    excludes = [os.path.normpath(e) for e in args.exclude]
    problems = []
    scanned = 0
    for rel in files_to_scan(root, excludes):
        scanned += 1
        check_file(root, rel, problems)
    if problems:
        print(f"{len(problems)} reference(s) to files outside the repository or that do not exist:")
        for p in problems:
            print("  " + p)
        return 1
    print(f"checked {scanned} files: every reference points inside the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main())
