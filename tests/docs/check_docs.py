#!/usr/bin/env python3
"""Keeps the docs and the tree from drifting apart.

Checks, over the source tree given as the one argument (default: this checkout):
  fences    every Markdown file has balanced code fences, and nothing follows a closing fence
            on its line (the rest of the file would render as code);
  links     every relative Markdown link names a file that exists, and an anchor on a link to a
            Markdown file names one of its headings;
  paths     every path named in the docs and in the comments of the code (one going up with
            two dots, one under a top-level folder such as src/ or docs/, and `dir/file.ext`
            relative to the naming file's folder or one above it, src/, include/ or tests/)
            exists; `*` and `{a,b}` are globs, and a path cut short with an ellipsis needs only
            its named part to exist; what a build makes (build/, build-*/) is not looked for;
  packages  the build packages README.md lists are the ones `scripts/install-deps.sh --list
            build` prints;
  npm       every `npm install` in the docs that names a package the client suites pin
            (tests/clients/node/package-lock.json) names it with a version the lock file has,
            so the line installs what the tests ran;
  figures   docs/performance.md stays a summary (under 200 lines; the history is the log), and
            it and README.md give the same restart time;
  words     no product page (README.md, docs/*.md but the performance log, bench/README.md,
            clients/js/README.md) speaks of numbered changes or log entries, issue numbers or
            work sessions, nor does a code comment of numbered changes or issues: a reader gets
            the point, or a heading to look under.
Every finding is printed as file:line: what is wrong; the exit status is 1 when there is any.
"""

import glob
import os
import re
import subprocess
import sys
import unicodedata

SKIP_DIRS = {".git", "node_modules", "dist", "__pycache__", "data"}
# bench/results holds generated reports, each true of the tree it ran on.
SKIP_PREFIXES = ("bench/results/",)
CODE_SUFFIXES = (".h", ".cc", ".cpp", ".c", ".hpp", ".py", ".sh", ".cmake", ".mjs", ".js",
                 ".ts", ".json", ".toml", ".txt", ".lua", ".in")
CODE_NAMES = ("CMakeLists.txt", "Makefile")
TOP = ("src", "docs", "tests", "include", "bench", "scripts", "examples", "clients", "fuzz")
# The product pages: what a user reads. The performance log is the history, numbered.
PRODUCT_PAGES = ("README.md", "bench/README.md", "clients/js/README.md")

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
# A path-like token: a ../ path, a path under a top-level folder, or dir/file.ext.
PATH = re.compile(
    r"(?<![\w./@:$<-])("
    r"(?:\.\./)+[\w.*{},…-]+(?:/[\w.*{},…-]*)*"
    r"|(?:" + "|".join(TOP) + r")/[\w.*{},…-]*(?:/[\w.*{},…-]*)*"
    r"|[a-z_][\w-]*(?:/[\w.*{},-]+)*/[\w*{},-]+\.(?:h|cc|md|sh|py|mjs|ts|json|cmake|toml|txt)(?![\w])"
    r"|[a-z_][\w-]*(?:/[\w.*{},-]+)*/[\w-]+\.(?:\*|\{[\w,]+\})"
    r")")
# (pattern, what it is, whether code comments are held to it too: a session in the code is a
# connection's or a database's, and "entry 3" may be an array's).
WORDS = [
    (re.compile(r"\bchanges? \d+\b", re.I), "a numbered change", True),
    (re.compile(r"\b(?:log )?entr(?:y|ies) \d+\b", re.I), "a numbered log entry", False),
    (re.compile(r"\bissues? #?\d+\b|(?<![\w&#(/])#\d{1,4}\b(?![\w-])", re.I),
     "an issue number", True),
    (re.compile(r"\b(?:work|helper|coding|agent) sessions?\b", re.I), "a work session", True),
    (re.compile(r"\bsessions? \d+\b", re.I), "a numbered session", False),
]


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, text=True, check=True)
        names = [n for n in out.stdout.splitlines() if os.path.isfile(os.path.join(root, n))]
    except (OSError, subprocess.CalledProcessError):
        names = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith("build")]
            names += [os.path.relpath(os.path.join(d, f), root) for f in files]
    keep = []
    for n in names:
        parts = n.split("/")
        if any(p in SKIP_DIRS or p == "build" or p.startswith("build-") for p in parts[:-1]):
            continue
        if n.startswith(SKIP_PREFIXES):
            continue
        keep.append(n)
    return sorted(keep)


def read_lines(root, name):
    with open(os.path.join(root, name), encoding="utf-8", errors="replace") as f:
        return f.read().split("\n")


class Findings:
    def __init__(self):
        self.items = []

    def add(self, name, line, what):
        self.items.append(f"{name}:{line}: {what}")


def check_fences(name, lines, out):
    """Returns the set of line numbers inside fences (the fences included)."""
    inside = set()
    open_at = None
    opener = ""
    for i, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if open_at is None:
            if m:
                open_at, opener = i, m.group(2)
                inside.add(i)
            continue
        inside.add(i)
        if m and m.group(2)[0] == opener[0] and len(m.group(2)) >= len(opener):
            rest = m.group(3).strip()
            if rest:
                out.add(name, i, f"text after the closing fence (opened on line {open_at}): "
                        f"{rest[:60]!r}; it and what follows render as code")
            open_at = None
    if open_at is not None:
        out.add(name, open_at, "this code fence is never closed")
    return inside


def slug(heading):
    """GitHub's anchor for a heading."""
    text = re.sub(r"`|\*\*|__", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in " -_" or cat[0] in "LN" or cat == "Mn":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def anchors(root, name, cache):
    if name not in cache:
        found, seen, fenced = set(), {}, False
        for line in read_lines(root, name):
            if FENCE.match(line):
                fenced = not fenced
                continue
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m and not fenced:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                found.add(s if n == 0 else f"{s}-{n}")
            for a in re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", line):
                found.add(a)
        cache[name] = found
    return cache[name]


def check_links(root, name, lines, fenced, out, cache):
    base = os.path.dirname(name)
    for i, line in enumerate(lines, 1):
        if i in fenced:
            continue
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue  # http:, https:, mailto:
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(base, path)) if path else name
            if not os.path.exists(os.path.join(root, dest)):
                out.add(name, i, f"link to {target}: {dest} does not exist")
                continue
            if anchor and dest.endswith(".md") and anchor not in anchors(root, dest, cache):
                out.add(name, i, f"link to {target}: {dest} has no heading with anchor #{anchor}")


def expand_braces(pattern):
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    out = []
    for alt in m.group(1).split(","):
        out += expand_braces(pattern[:m.start()] + alt + pattern[m.end():])
    return out


def exists(root, candidate):
    """Every alternative of a {a,b} pattern must exist; a glob must match something."""
    for p in expand_braces(candidate):
        full = os.path.join(root, p)
        if any(ch in p for ch in "*?["):
            if not glob.glob(full, recursive=True):
                return False
        elif not os.path.exists(full) and not (
                p.endswith(".js") and os.path.exists(full[:-3] + ".ts")):  # TypeScript imports
            return False
    return True


def normalize(token):
    """The part of a path token that must exist, or None for one that names nothing."""
    t = token.rstrip(".,;:")
    for cut in ("...", "…"):
        if cut in t:
            t = t[:t.index(cut)]
            t = t[:t.rfind("/") + 1] if not t.endswith("/") else t
    t = t.rstrip("/")
    if any(p == "build" or p.startswith("build-") for p in t.split("/")):
        return None  # what a build makes
    if not t or t in TOP or t.count("/") == 0 and not t.startswith(".."):
        return None
    return t


def path_exists(root, name, path):
    """Relative to the naming file's folder or one above it, or to src/, include/ or tests/ (as
    an #include names its header)."""
    bases, d = [], os.path.dirname(name)
    while True:
        bases.append(d)
        if not d:
            break
        d = os.path.dirname(d)
    if not path.startswith(".."):
        bases += ["src", "include", "tests", "src/server"]
    return any(exists(root, os.path.normpath(os.path.join(b, path))) for b in bases)


# Paths outside the tree a file may name on purpose, with why.
OUTSIDE = {
    # The CEL conformance cases live beside the checkout; the test is left out without them.
    ("tests/cel/CMakeLists.txt", "../shared"),
    ("tests/cel/CMakeLists.txt", "../../shared"),
}


def check_paths(root, name, lines, out):
    for i, line in enumerate(lines, 1):
        for m in PATH.finditer(line):
            path = normalize(m.group(1))
            if path is None or (name, path) in OUTSIDE:
                continue
            if not path_exists(root, name, path):
                out.add(name, i, f"names {m.group(1)}, which does not exist in the tree")


C_LIKE = (".h", ".cc", ".cpp", ".c", ".hpp", ".mjs", ".js", ".ts", ".lua")
COMMENT_C = re.compile(r"(?<![:\"'])//(.*)$|/\*(.*)$|(?<![\w\"'])--\s(.*)$")


def comments(name, lines):
    """Each line's comment text ("" where it has none): after // or inside /* */ in C-like
    files (-- in Lua), after # in the rest. Strings are left alone, so a URL or a key in a
    string literal is not taken for a path."""
    out, in_block = [], False
    c_like = name.endswith(C_LIKE)
    for line in lines:
        text = ""
        if c_like:
            if in_block:
                end = line.find("*/")
                text, in_block = (line, True) if end < 0 else (line[:end], False)
            else:
                m = COMMENT_C.search(line)
                if m and m.group(1) is not None:
                    text = m.group(1)
                elif m and m.group(2) is not None:
                    rest = m.group(2)
                    end = rest.find("*/")
                    text, in_block = (rest, True) if end < 0 else (rest[:end], False)
                elif m and name.endswith(".lua"):
                    text = m.group(3)
        else:
            m = re.search(r"(?:^|\s)#(?!!)(.*)$", line)
            text = m.group(1) if m else ""
        out.append(text)
    return out


def check_packages(root, out):
    lines = read_lines(root, "README.md")
    listed, at = None, 0
    for i, line in enumerate(lines, 1):
        if "<!-- build packages" in line:
            at = i
            block = []
            for follow in lines[i:]:
                if FENCE.match(follow):
                    if block or listed is not None:
                        break
                    listed = []
                    continue
                block.append(follow)
            listed = " ".join(block).split()
            break
    if listed is None:
        out.add("README.md", 1, "no build package list (a fenced block after "
                "'<!-- build packages: scripts/install-deps.sh --list build -->')")
        return
    script = os.path.join(root, "scripts", "install-deps.sh")
    try:
        printed = subprocess.run([script, "--list", "build"], capture_output=True, text=True,
                                 check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError) as e:
        out.add("scripts/install-deps.sh", 1, f"--list build failed: {e}")
        return
    if listed != printed:
        missing = [p for p in printed if p not in listed]
        extra = [p for p in listed if p not in printed]
        what = []
        if missing:
            what.append("missing " + " ".join(missing))
        if extra:
            what.append("not in the script: " + " ".join(extra))
        if not what:
            what.append("in another order")
        out.add("README.md", at, "the build package list differs from "
                "`scripts/install-deps.sh --list build`: " + "; ".join(what))


NPM_INSTALL = re.compile(r"\bnpm (?:install|i|add)\s+([^`#\n]*)")
NPM_LOCK = "tests/clients/node/package-lock.json"


def pinned_versions(root):
    """package name -> the versions the lock file installs of it (aliases included)."""
    import json
    path = os.path.join(root, NPM_LOCK)
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        lock = json.load(f)
    found = {}
    for where, entry in lock.get("packages", {}).items():
        if not where.startswith("node_modules/") or "version" not in entry:
            continue
        name = where[len("node_modules/"):]
        if "/node_modules/" in name:
            continue
        m = re.match(r"^https?://.*/-/([^/]+)-[^/]+\.tgz$", entry.get("resolved", ""))
        real = entry.get("name") or name
        if m and "@" not in real:
            real = m.group(1) if not name.startswith("@") else name
        found.setdefault(real, set()).add(entry["version"])
        found.setdefault(name, set()).add(entry["version"])
    return found


def check_npm(root, name, lines, pins, out):
    for i, line in enumerate(lines, 1):
        for m in NPM_INSTALL.finditer(line):
            for word in m.group(1).split():
                if word.startswith("-") or word.startswith(".") or "/" in word and not word.startswith("@"):
                    continue
                at = word.rfind("@")
                pkg, version = (word[:at], word[at + 1:]) if at > 0 else (word, None)
                if pkg not in pins:
                    continue
                want = ", ".join(sorted(pins[pkg]))
                if version is None:
                    out.add(name, i, f"npm install {pkg} without a version; the client suites "
                            f"run {pkg}@{want} ({NPM_LOCK})")
                elif version not in pins[pkg]:
                    out.add(name, i, f"npm install {pkg}@{version}; the client suites run "
                            f"{pkg}@{want} ({NPM_LOCK})")


RESTART = re.compile(r"restart with a\s+million live holds answers in ([\d.]+) s")


def check_figures(root, out):
    perf = read_lines(root, "docs/performance.md")
    count = len(perf) - (perf[-1] == "")
    if count >= 200:
        out.add("docs/performance.md", 200, f"{count} lines: keep it a summary under 200 "
                "lines (the history goes to docs/performance-log.md)")
    said = {}
    for name in ("README.md", "docs/performance.md"):
        text = " ".join(read_lines(root, name))
        m = RESTART.search(re.sub(r"\s+", " ", text))
        if not m:
            out.add(name, 1, "no 'restart with a million live holds answers in N s' to compare")
        else:
            said[name] = m.group(1)
    if len(set(said.values())) > 1:
        out.add("README.md", 1, "the restart time differs from docs/performance.md's: " +
                ", ".join(f"{k} {v} s" for k, v in said.items()))


def check_words(name, lines, out, code):
    for i, line in enumerate(lines, 1):
        line = LINK.sub("", line)  # an anchor may hold a heading's number
        for rx, what, in_code in WORDS:
            m = rx.search(line)
            if m and (in_code or not code):
                out.add(name, i, f"speaks of {what} ({m.group(0)!r}); say the point, or name a "
                        "heading to read under")


def is_product_page(name):
    if name in PRODUCT_PAGES:
        return True
    return name.startswith("docs/") and name.endswith(".md") and name != "docs/performance-log.md"


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    out = Findings()
    cache = {}
    pins = pinned_versions(root)
    files = tracked_files(root)
    for name in files:
        base = os.path.basename(name)
        if name.endswith(".md"):
            lines = read_lines(root, name)
            fenced = check_fences(name, lines, out)
            check_links(root, name, lines, fenced, out, cache)
            # Paths in prose and in code blocks alike; a link's target was checked above.
            check_paths(root, name, [LINK.sub("", line) for line in lines], out)
            check_npm(root, name, lines, pins, out)
            if is_product_page(name):
                check_words(name, lines, out, code=False)
        elif name.endswith(CODE_SUFFIXES) or base in CODE_NAMES:
            if name.endswith(("package-lock.json", ".json")) and "package" in base:
                continue
            lines = comments(name, read_lines(root, name))
            check_paths(root, name, lines, out)
            check_words(name, lines, out, code=True)
    check_packages(root, out)
    check_figures(root, out)
    for item in out.items:
        print(item)
    print(f"check_docs: {len(files)} files, {len(out.items)} findings", file=sys.stderr)
    return 1 if out.items else 0


if __name__ == "__main__":
    sys.exit(main())
