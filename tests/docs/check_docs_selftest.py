#!/usr/bin/env python3
"""check_docs.py against scratch trees: a clean one passes, and each planted fault is named
with its file and line. The one argument is the source tree (for scripts/install-deps.sh)."""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", ".."))


def packages():
    out = subprocess.run([os.path.join(SOURCE, "scripts", "install-deps.sh"), "--list", "build"],
                         capture_output=True, text=True, check=True)
    return out.stdout.split()


def clean_tree(root):
    files = {
        "README.md": "# Project\n\nSee [the docs](docs/guide.md#running-it) and `src/core/a.h`.\n\n"
                     "<!-- build packages: scripts/install-deps.sh --list build -->\n"
                     "```text\n" + " ".join(packages()) + "\n```\n\n"
                     "A restart with a million live holds answers in 1.09 s.\n",
        "docs/guide.md": "# Guide\n\n## Running it\n\n```sh\nmake serve\n```\n\n"
                         "Back to the [README](../README.md); the code is in `src/core/*.h`\n"
                         "and `src/core/a.{h,cc}`, the tests under `tests/core/...`.\n",
        "docs/performance.md": "# Performance\n\nA restart with a million live holds answers "
                               "in 1.09 s.\n",
        "src/core/a.h": "// See docs/guide.md and core/b.cc.\n#include <sys/socket.h>\n",
        "src/core/a.cc": "",
        "src/core/b.cc": "// A key in a string literal is no path.\nconst char* k = \"x/y.h\";\n",
        "tests/core/a_test.cc": "",
        "docs/libs.md": "# Libraries\n\n```sh\nnpm install ioredis@6.0.0 redlock@5.0.0-beta.2 left-pad\n```\n",
        "tests/clients/node/package-lock.json": """{"packages": {
            "node_modules/redlock": {"version": "5.0.0-beta.2"},
            "node_modules/ioredis": {"version": "5.11.1"},
            "node_modules/ioredis-6": {"version": "6.0.0",
              "resolved": "https://registry.npmjs.org/ioredis/-/ioredis-6.0.0.tgz"}}}""",
    }
    for name, text in files.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    # The real list, printed as the real script prints it.
    script = os.path.join(root, "scripts", "install-deps.sh")
    os.makedirs(os.path.dirname(script))
    with open(script, "w") as f:
        f.write("#!/bin/sh\nprintf '%s\\n' " + " ".join(packages()) + "\n")
    os.chmod(script, 0o755)


def run_check(root):
    out = subprocess.run([sys.executable, os.path.join(HERE, "check_docs.py"), root],
                         capture_output=True, text=True)
    return out.returncode, out.stdout


def edit(root, name, old, new):
    path = os.path.join(root, name)
    with open(path) as f:
        text = f.read()
    assert old in text, (name, old)
    with open(path, "w") as f:
        f.write(text.replace(old, new, 1))


# (what is planted, the edit, the finding expected: file:line and a phrase of it)
FAULTS = [
    ("text after a closing fence", ("docs/guide.md", "make serve\n```\n", "make serve\n``` Back\n"),
     "docs/guide.md:7: text after the closing fence"),
    ("an unclosed fence", ("docs/guide.md", "make serve\n```\n", "make serve\n"),
     "docs/guide.md:5: this code fence is never closed"),
    ("a link to a missing file", ("README.md", "docs/guide.md#", "docs/gide.md#"),
     "README.md:3: link to docs/gide.md#running-it: docs/gide.md does not exist"),
    ("a link to a missing heading", ("README.md", "#running-it", "#running"),
     "README.md:3: link to docs/guide.md#running: docs/guide.md has no heading"),
    ("a missing path in a page", ("README.md", "`src/core/a.h`", "`src/store/a.h`"),
     "README.md:3: names src/store/a.h"),
    ("a glob that matches nothing", ("docs/guide.md", "`src/core/*.h`", "`src/core/*.hpp`"),
     "docs/guide.md:9: names src/core/*.hpp"),
    ("a brace pattern with a missing part", ("docs/guide.md", "a.{h,cc}", "a.{h,cc,inl}"),
     "docs/guide.md:10: names src/core/a.{h,cc,inl}"),
    ("an ellipsis under a missing folder", ("docs/guide.md", "tests/core/...", "tests/cor/..."),
     "docs/guide.md:10: names tests/cor/..."),
    ("a missing path in a comment", ("src/core/a.h", "core/b.cc", "core/c.cc"),
     "src/core/a.h:1: names core/c.cc"),
    ("a package the README lacks", ("README.md", " cmake ", " "),
     "README.md:5: the build package list differs from `scripts/install-deps.sh --list build`: "
     "missing cmake"),
    ("a numbered change in a page", ("docs/guide.md", "# Guide\n", "# Guide\n\nAs change 12 did.\n"),
     "docs/guide.md:3: speaks of a numbered change"),
    ("a numbered change in a comment", ("src/core/a.h", "// See", "// (performance.md, change 3) See"),
     "src/core/a.h:1: speaks of a numbered change"),
    ("an issue number in a page", ("docs/guide.md", "# Guide\n", "# Guide\n\nFixed for #42.\n"),
     "docs/guide.md:3: speaks of an issue number"),
    ("an npm package without its version", ("docs/libs.md", "redlock@5.0.0-beta.2", "redlock"),
     "docs/libs.md:4: npm install redlock without a version"),
    ("an npm package at another version", ("docs/libs.md", "ioredis@6.0.0", "ioredis@6.1.0"),
     "docs/libs.md:4: npm install ioredis@6.1.0; the client suites run ioredis@5.11.1, 6.0.0"),
    ("two restart times", ("docs/performance.md", "1.09 s", "0.78 s"),
     "README.md:1: the restart time differs"),
    ("a long performance page", ("docs/performance.md", "# Performance\n",
                                 "# Performance\n" + "line\n" * 200),
     "docs/performance.md:200: 203 lines"),
]


def main():
    failures = []
    with tempfile.TemporaryDirectory() as scratch:
        root = os.path.join(scratch, "clean")
        clean_tree(root)
        code, out = run_check(root)
        if code != 0 or out:
            failures.append(f"the clean tree: exit {code}, findings:\n{out}")
        for what, (name, old, new), expected in FAULTS:
            root = os.path.join(scratch, what.replace(" ", "-"))
            clean_tree(root)
            edit(root, name, old, new)
            code, out = run_check(root)
            if code != 1 or not any(line.startswith(expected) for line in out.splitlines()):
                failures.append(f"{what}: exit {code}, expected a finding starting with "
                                f"{expected!r}, got:\n{out}")
    for f in failures:
        print("FAIL", f)
    print(f"check_docs selftest: {len(FAULTS) + 1 - len(failures)} of {len(FAULTS) + 1} cases "
          "as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
