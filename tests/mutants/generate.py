#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Generated mutants: one-line bugs planted at random (seeded) on the lines
of lib/, plugin/ and tools/ that the fast suites execute, so that the
mutation score measures the suites and not a list written next to them.

    tests/mutants/generate.py --coverage DIR/fast.info [--seed S] [--count N]

prints N mutants in mutants.txt's format, each '@' line naming FILE:LINE
(tests/mutants/run --generate runs them; this is for looking at them).

Where: a line is drawn uniformly among the lines of a .c file that lcov's
tracefile (tests/coverage) marks as executed, then one of its mutation
sites.  What: the operators people get wrong, one per mutant:
  <  <=  >  >=  swapped (a boundary)       +  -  and  +=  -=  swapped
  *  /  and  *=  /=  swapped               an integer constant off by one
  a dropped !                              two adjacent arguments swapped
  a dropped statement (replaced by an empty one)
Not: comments and strings (masked before matching), asserts and log-only
lines, the size of an array in a declaration (a buffer one byte larger is
no bug), ++/-- (a flipped loop counter only hangs), the strings of a
strcmp() tested only for equality (they commute), the arguments of calloc()
and of a minimum or maximum (they commute too), statements that only
free memory or a handle (a leak: memcheck's and ASan's), and any mutant the
compiler objects to: each is compiled alone (gcc -fsyntax-only with
-Wall -Wextra -Wconversion) and dropped, and another drawn, when it does
not compile or warns where the original did not (two swapped arguments of
different types, a return dropped from a function that needs it).  Known
equivalent mutants, listed in tests/mutants/equivalent.txt (mutants.txt's
format, each with '= why'), are not drawn either.
"""

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
AREAS = ("lib/", "plugin/", "tools/")
EQUIVALENT = os.path.join(TOP, "tests", "mutants", "equivalent.txt")

# Lines whose only effect is a message to a log or a check of the
# programmer's own assumption: a mutant there is equivalent or merely noisy.
SKIP_LINE = re.compile(r"\bassert\s*\(|\bslurm_(debug\d?|verbose|info|error)\s*\(|"
                       r"\bslurm_spank_log\s*\(|^\s*#")
# Statements that only give memory or a handle back: dropped, they leak,
# which the sanitizer build and valgrind (tests/memcheck) catch, not what
# the fast suites look at.
RELEASE = re.compile(r"^\s*(free|va_end|fclose|closedir|close|json_decref|globfree|"
                     r"hwloc_topology_destroy|yaml_\w+_delete|\w+_(free|destroy|release))\s*\(")
# A function's success or failure (0 or -1, callers test < 0): off by one
# means the other one, not 1 or -2, which callers cannot tell apart.
RETURN_CODE = re.compile(r"^(\s*return\s+)(0|-1)(;.*)$")
KEYWORDS = {"if", "while", "for", "switch", "return", "sizeof", "case", "do", "else",
            "_Static_assert", "defined", "alignof", "_Alignof"}
TYPE_START = re.compile(r"^\s*(static\s+|const\s+|unsigned\s+|struct\s+|enum\s+)*"
                        r"(char|int|long|short|double|float|size_t|ssize_t|bool|"
                        r"u?int\d+_t|mesh_\w+_t|struct\s+\w+|[A-Za-z_]\w*_t)\b")


def mask(line, in_comment=False):
    """The line with the insides of strings, chars and comments blanked
    (same length), and whether a /* comment is still open at its end."""
    out, i, n = [], 0, len(line)
    while i < n:
        if in_comment:
            j = line.find("*/", i)
            if j < 0:
                out.append(" " * (n - i))
                return "".join(out), True
            out.append(" " * (j + 2 - i))
            i, in_comment = j + 2, False
        elif line.startswith("/*", i):
            in_comment = True
        elif line.startswith("//", i):
            out.append(" " * (n - i))
            break
        elif line[i] in "\"'":
            q, j = line[i], i + 1
            while j < n and line[j] != q:
                j += 2 if line[j] == "\\" else 1
            out.append(q + "_" * (min(j, n) - i - 1) + (q if j < n else ""))
            i = j + 1
        else:
            out.append(line[i])
            i += 1
    return "".join(out)[:n], in_comment


def masked_lines(text):
    lines, out, cm = text.split("\n"), [], False
    for ln in lines:
        m, cm = mask(ln, cm)
        out.append(m)
    return lines, out


def swap(a, b):
    return {a: b, b: a}


OPS = [
    ("boundary", re.compile(r"(?<![<>\-])(<=|>=|<|>)(?![<>=])"),
     {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}),
    ("+/-", re.compile(r"(?<= )(\+|-|\+=|-=)(?= )"), {**swap("+", "-"), **swap("+=", "-=")}),
    ("*,/", re.compile(r"(?<= )(\*|/|\*=|/=)(?= )"), {**swap("*", "/"), **swap("*=", "/=")}),
    ("!", re.compile(r"(!)(?!=)"), {"!": ""}),
]
PARAM = re.compile(r"^(const\s+|struct\s+|enum\s+|unsigned\s+)*[A-Za-z_]\w*\s*[\s*]\s*"
                   r"(const\s+)?\**\s*[A-Za-z_]\w*(\[\w*\])?$")
# strcmp(a, b) == 0 is strcmp(b, a) == 0: swapped, its first two arguments
# matter only where the result is ordered (< 0, > 0, or returned as is).
COMPARE = {"strcmp", "strncmp", "strcasecmp", "strncasecmp", "memcmp"}
# Calls whose two arguments commute whatever is done with the result: calloc
# (count and size: the same bytes) and a minimum or a maximum.
SYMMETRIC = {"calloc", "fmin", "fmax", "fminf", "fmaxf", "min_l", "max_l"}
ORDERED = re.compile(r"\s*(<|>|;)")
NUMBER = re.compile(r"(?<![\w.])(\d+)([uUlL]*)(?![\w.])")


def array_sizes(masked):
    """Where a declaration's [sizes] are: (start, end) spans."""
    if not TYPE_START.match(masked):
        return []
    return [m.span() for m in re.finditer(r"\[[^\]]*\]", masked.split("=")[0])]


def sites(code, masked, prev):
    """Every mutation of one line: (what, new line)."""
    out = []
    sizes = array_sizes(masked)
    inside = lambda pos: any(a <= pos < b for a, b in sizes)
    for name, rx, table in OPS:
        for m in rx.finditer(masked):
            if inside(m.start()):
                continue  # a buffer's size: one larger is no bug
            new = code[:m.start()] + table[m.group(1)] + code[m.end():]
            out.append(("%s: %s -> %s" % (name, m.group(1), table[m.group(1)] or "dropped"), new))
    rc = RETURN_CODE.match(code)
    if rc:
        flip = "-1" if rc.group(2) == "0" else "0"
        return out + [("constant: %s -> %s" % (rc.group(2), flip), rc.group(1) + flip + rc.group(3))]
    for m in NUMBER.finditer(masked):
        if inside(m.start()) or masked[max(0, m.start() - 1)] == "-":
            continue  # a negative constant: below
        v = int(m.group(1))
        for w in ([v + 1] if v == 0 else [v + 1, v - 1]):
            out.append(("constant: %d -> %d" % (v, w),
                        code[:m.start()] + str(w) + m.group(2) + code[m.end():]))
    out += swapped_arguments(code, masked)
    for m in re.finditer(r"(?<![\w)\]])-(\d+)\b(?![.\w])", masked):
        v = int(m.group(1))  # -v: towards zero (-2 and -1 are both "an error")
        out.append(("constant: -%d -> %d" % (v, 1 - v),
                    code[:m.start()] + str(1 - v) + code[m.end():]))
    stripped = masked.strip()
    if RELEASE.match(masked):
        return out
    if (stripped.endswith(";") and not stripped.startswith(("return", "}", "case", "default"))
            and not TYPE_START.match(masked) and prev.rstrip().endswith((";", "{", "}", ":", ")", "else"))
            and stripped.count("(") == stripped.count(")")):
        indent = code[:len(code) - len(code.lstrip())]
        out.append(("statement dropped", indent + ";"))
    return out


def swapped_arguments(code, masked):
    out = []
    for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", masked):
        if m.group(1) in KEYWORDS or m.group(1) in SYMMETRIC:
            continue
        depth, args, start = 0, [], m.end()
        for j in range(m.end(), len(masked)):
            c = masked[j]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                if depth == 0:
                    args.append((start, j))
                    break
                depth -= 1
            elif c == "," and depth == 0:
                args.append((start, j))
                start = j + 1
        else:
            continue  # the call goes on past the line
        # only tested for equality: a and b commute
        first = 1 if m.group(1) in COMPARE and not ORDERED.match(masked[args[-1][1] + 1:]) else 0
        for k in range(first, len(args) - 1):
            (a0, a1), (b0, b1) = args[k], args[k + 1]
            a, b = code[a0:a1].strip(), code[b0:b1].strip()
            if not a or not b or a == b or PARAM.match(a) or PARAM.match(b) or "..." in (a, b):
                continue  # the parameters of a definition or a prototype
            lead = code[a0:a1][:len(code[a0:a1]) - len(code[a0:a1].lstrip())]
            new = code[:a0] + lead + b + ", " + a + code[b1:]
            out.append(("arguments %d and %d of %s() swapped" % (k + 1, k + 2, m.group(1)), new))
    return out


def executed(info):
    """lcov tracefile -> {relative .c path: sorted executed line numbers}."""
    files, cur = {}, None
    with open(info, encoding="utf-8") as f:
        for line in f:
            key, _, val = line.rstrip("\n").partition(":")
            if key == "SF":
                rel = os.path.relpath(val, TOP)
                cur = files.setdefault(rel, set()) if rel.startswith(AREAS) and \
                    rel.endswith(".c") else None
            elif key == "DA" and cur is not None:
                n, count = val.split(",")[:2]
                if int(count) > 0:
                    cur.add(int(n))
    return {k: sorted(v) for k, v in files.items()}


class Checker:
    """Compiles one file alone, as the build would (warnings counted)."""

    def __init__(self, build):
        pc = subprocess.run("pkg-config --cflags yaml-0.1 hwloc jansson", shell=True,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        defs = ["-D%s='\"x\"'" % d for d in ("MESH_INSTALLED_MODELS_DIR", "MESH_JOB_SUBMIT_POLICY",
                                             "MESH_SYSTEM_POLICY", "MESH_BUILD_DIR",
                                             "MESH_SOURCE_MODELS_DIR")]
        self.flags = ("-fsyntax-only -std=c11 -D_GNU_SOURCE -DHAVE_CONFIG_H -Wall -Wextra "
                      "-Wconversion -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 "
                      "-Wno-unused-parameter %s -I%s/lib -I%s/lib -I%s %s" %
                      (" ".join(defs), TOP, build, build, pc.strip()))
        self.base = {}

    def warnings(self, path, text):
        """Sorted warnings (column-free) or None when it does not compile."""
        d = os.path.dirname(os.path.join(TOP, path))
        # outside the tree (nothing else must see it); -I finds its "headers"
        with tempfile.NamedTemporaryFile("w", suffix=".c", prefix="meshplan-mutant-",
                                         delete=False) as f:
            f.write(text)
        try:
            r = subprocess.run("gcc %s -I%s '%s'" % (self.flags, d, f.name), shell=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        finally:
            os.unlink(f.name)
        if r.returncode != 0:
            return None
        return sorted(re.sub(r":(\d+):\d+:", r":\1:", w) for w in r.stdout.split("\n")
                      if "warning:" in w)

    def accepts(self, path, orig, text):
        if path not in self.base:
            self.base[path] = self.warnings(path, orig)
        if self.base[path] is None:
            return True  # these flags cannot compile it: the real build decides
        w = self.warnings(path, text)
        return w is not None and w == self.base[path]


def known_equivalent():
    """(file, old line, new line) of every mutant equivalent.txt lists."""
    out = set()
    if not os.path.exists(EQUIVALENT):
        return out
    with open(EQUIVALENT, encoding="utf-8") as f:
        cur = None
        olds, news = [], []
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith("@ "):
                if cur:
                    out.update((cur, o, n) for o, n in zip(olds, news))
                cur, olds, news = line[2:].partition(": ")[0].split(":")[0].strip(), [], []
            elif line.startswith("- "):
                olds.append(line[2:].strip())
            elif line.startswith("+ "):
                news.append(line[2:].strip())
        if cur:
            out.update((cur, o, n) for o, n in zip(olds, news))
    return out


def by_kind(candidates, rng):
    """The line's mutants in a random order of operator, then of site, so that
    a line of many constants is not mostly constants."""
    kinds = {}
    for what, new in candidates:
        kinds.setdefault(what.split()[0], []).append((what, new))
    order = sorted(kinds)
    rng.shuffle(order)
    for k in order:
        rng.shuffle(kinds[k])
        yield from kinds[k]


def generate(info, seed, build, count=None):
    """Yields mutants (path, line number, what, old line, new line), drawn with
    seed, each one that compiles; the caller takes as many as it needs."""
    rng = random.Random(seed)
    lines_of = executed(info)
    pool = [(p, n) for p, ns in sorted(lines_of.items()) for n in ns]
    texts, checker, equivalent, seen = {}, Checker(build), known_equivalent(), set()
    rng.shuffle(pool)
    made = 0
    for path, n in pool:
        if path not in texts:
            with open(os.path.join(TOP, path), encoding="utf-8") as f:
                texts[path] = f.read()
            texts[path] = (texts[path],) + masked_lines(texts[path])
        text, lines, masked = texts[path]
        if n > len(lines) or SKIP_LINE.search(lines[n - 1]):
            continue
        prev = next((masked[k] for k in range(n - 2, -1, -1) if masked[k].strip()), "{")
        candidates = sites(lines[n - 1], masked[n - 1], prev)
        for what, new in by_kind(candidates, rng):
            key = (path, lines[n - 1].strip(), new.strip())
            if key in seen or key in equivalent:
                continue
            mutated = lines[:n - 1] + [new] + lines[n:]
            if not checker.accepts(path, text, "\n".join(mutated)):
                continue
            seen.add(key)
            yield path, n, what, lines[n - 1], new
            made += 1
            break
        if count is not None and made >= count:
            return


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--coverage", required=True, help="lcov tracefile (tests/coverage's fast.info)")
    ap.add_argument("--build", help="a configured build directory (config.h)",
                    default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=100)
    args = ap.parse_args()
    build = args.build or os.path.dirname(os.path.abspath(args.coverage))
    print("# %d mutants generated with seed %d" % (args.count, args.seed))
    for path, n, what, old, new in generate(args.coverage, args.seed, build, args.count):
        print("@ %s:%d: %s\n- %s\n+ %s\n" % (path, n, what, old.strip(), new.strip()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
