#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Generated mutants: one-line bugs planted at random (seeded) on the lines
of lib/, plugin/ and tools/ that the fast suites execute, so that the
mutation score measures the suites and not a list written next to them.

    tests/mutants/generate.py --coverage DIR/fast.info [--seed S] [--count N]
                              [--build BUILDDIR] [--jobs J]
    tests/mutants/generate.py --judge LIST --build BUILDDIR

prints N mutants in mutants.txt's format, each '@' line naming FILE:LINE
(tests/mutants/run --generate runs them; this is for looking at them), and
how many it discarded by their object code (below).  --judge only judges
LIST's mutants (mutants.txt's format) by their objects and prints a verdict
each: same, duplicate, differs or unbuilt; an '=' line starting with one of
those words is the expected verdict, and another one is an error
(tests/mutants/check-tce runs it on tce-cases.txt in make check).

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
strcmp() tested only for equality (they commute), the arguments of calloc(),
of a minimum or maximum and of the two name tests (they commute too), statements that only
free memory or a handle (a leak: memcheck's and ASan's), and any mutant the
compiler objects to: each is compiled alone (gcc -fsyntax-only with
-Wall -Wextra -Wconversion) and dropped, and another drawn, when it does
not compile or warns where the original did not (two swapped arguments of
different types, a return dropped from a function that needs it).  Known
equivalent mutants, listed in tests/mutants/equivalent.txt (mutants.txt's
format, each with '= why'), are not drawn either.

Trivial Compiler Equivalence (Papadakis et al., "Trivial Compiler
Equivalence: A Large Scale Empirical Study of a Simple, Fast and Effective
Equivalent Mutant Detection Technique", ICSE 2015): each mutant that passes
the check above is compiled to an object as the build compiles its file
(the flags `make -n` shows for the file's object in BUILDDIR -- the
coverage build's by default --, its -O0 and --coverage replaced by the
build's -O2, without -g, which changes no code), and so is the original
file, once a run.  The objects are compared whole but for debug
information: every section's bytes, the relocations (the same bytes may
call another function) and the symbols, less the object's name and gcc's
numbered local labels.  A mutant whose object is the original's changes
nothing the program does (a dead store, a test the compiler proves always
or never true, a tie of a maximum): it is discarded and another drawn, and
counted ("same object code").  A mutant whose object is that of a mutant
already drawn of the same file is the same mutant: discarded and counted
("duplicate").  The file is compiled where it stands (-iquote its
directory) and __FILE__ kept as its own (-fmacro-prefix-map), and a
one-line edit moves no line, so __LINE__, __FILE__ and assert() make
neither every mutant differ nor every mutant equal.  Only equivalence
within the file is seen: a store the compiler cannot prove dead (it escapes
through a pointer, another file reads it) still differs.  An object that
does not compile so (another compiler, an unknown file) is not judged.

Lines are judged --jobs at a time, ahead of the caller; so that the set
does not depend on which line finishes first, each line orders its
mutants with a generator of its own, seeded with the seed and the line (a
seed draws another set than it did before this check).
"""

import argparse
import collections
import concurrent.futures
import hashlib
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading

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
# (count and size: the same bytes), a minimum or a maximum, and the two
# tests of one name (gpu.c's mesh_gpu_same_name, policy.c's same_key: each
# a strcmp(...) == 0 of both sides, since seed 51205, which drew both), and
# choose.c's mesh_same_shape (five fields compared for equality, since seed
# 120845, which drew it).
SYMMETRIC = {"calloc", "fmin", "fmax", "fminf", "fmaxf", "min_l", "max_l", "mesh_gpu_same_name",
             "same_key", "mesh_same_shape"}
ORDERED = re.compile(r"\s*(<|>|;)")
NUMBER = re.compile(r"(?<![\w.])(\d+)([uUlL]*)(?![\w.])")


def array_sizes(masked):
    """Where a declaration's [sizes] are: (start, end) spans, in each of its
    declarators (`char a[8] = "", b[16];`: both), not in their initializers."""
    if not TYPE_START.match(masked):
        return []
    spans, depth, start, init = [], 0, 0, False
    for i, c in enumerate(masked + ","):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if depth == 0 and c == "=" and not init:
            init = True  # the rest of this declarator is its value
            spans += [(start + m.start(), start + m.end())
                      for m in re.finditer(r"\[[^\]]*\]", masked[start:i])]
        elif depth == 0 and c in ",;":
            if not init:
                spans += [(start + m.start(), start + m.end())
                          for m in re.finditer(r"\[[^\]]*\]", masked[start:i])]
            start, init = i + 1, False
    return spans


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


class Objects:
    """Trivial Compiler Equivalence (Papadakis et al., ICSE 2015): a file
    compiled to an object as the build compiles it, at -O2, and that object
    reduced to what the program is made of -- every section's bytes but the
    debug ones, the relocations, the symbols -- so that two versions of the
    file can be compared.  The same object as the original's: the mutant
    changes nothing the program does (a store overwritten before it is read,
    a test the compiler proves always true, ...).  The same object as
    another mutant's: the two are one mutant."""

    # the build's optimisation, debug information, coverage and sanitizer
    # instrumentation (a sanitizer build's checks differ where the plain
    # program does not: lib/layout.c:88's equivalent boundary in
    # tce-cases.txt), dependency files
    STRIP = re.compile(r"^(-O\S*|-g\S*|--coverage|-fprofile-arcs|-ftest-coverage|"
                       r"-fsanitize\S*|-fno-sanitize\S*|-fno-omit-frame-pointer|-MD|-MP|-c)$")

    def __init__(self, build):
        self.build = build
        with open(os.path.join(build, "Makefile"), encoding="utf-8") as f:
            self.makefile = f.read()
        self.lock, self.base, self.cmds = threading.Lock(), {}, {}

    def target(self, path):
        """The object the build makes of path (a product's, not a test
        program's copy), or None."""
        d, name = os.path.split(path)
        stem = re.escape(name[:-2])
        rx = re.compile(r"^(%s/(?:\w+-)?%s\.(?:lo|o|\$\(OBJEXT\))):" % (re.escape(d), stem),
                        re.M)
        found = [t.replace("$(OBJEXT)", "o") for t in rx.findall(self.makefile)]
        found.sort(key=lambda t: (os.path.basename(t).startswith("tests_"), not t.endswith(".lo")))
        return found[0] if found else None

    def command(self, path):
        """gcc's arguments for path, as `make -n` shows them, with -O2 for
        the build's optimisation (a coverage build's -O0 --coverage out, a
        sanitizer build's -fsanitize out), no debug information (-g changes
        no code) and no dependency files;
        libtool's -fPIC for a library object.  None when unknown."""
        if path in self.cmds:
            return self.cmds[path]
        cmd, obj = None, self.target(path)
        if obj:
            r = subprocess.run(["make", "-n", "-W", path, obj], cwd=self.build, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            line = next((ln for ln in r.stdout.split("\n") if " -c " in ln and obj in ln), None)
            if line:
                line = line.split("--mode=compile", 1)[-1]
                line = re.sub(r"`[^`]*`\S*", "", line).split("&&")[0]
                cc = re.search(r"^CC = (.*)$", self.makefile, re.M)
                cc = cc.group(1).strip() if cc else "gcc"
                words = shlex.split(line[line.index(cc):] if cc in line else line)
                cmd, skip = [], False
                for w in words:
                    if skip or w in ("-MT", "-MF", "-o"):
                        skip = not skip
                        continue
                    if not self.STRIP.match(w) and not w.endswith(os.path.basename(path)):
                        cmd.append(w)
                cmd += ["-O2", "-g0"] + (["-fPIC", "-DPIC"] if obj.endswith(".lo") else [])
        self.cmds[path] = cmd
        return cmd

    def digest(self, path, text):
        """The object's digest, or None when it does not compile so."""
        cmd = self.command(path)
        if not cmd:
            return None
        src_dir = os.path.dirname(os.path.join(TOP, path))
        tmp = tempfile.mkdtemp(prefix="meshplan-tce-")
        try:
            src, obj = os.path.join(tmp, os.path.basename(path)), os.path.join(tmp, "m.o")
            with open(src, "w", encoding="utf-8") as f:
                f.write(text)
            # "headers" found next to the file; __FILE__ as the file's own
            r = subprocess.run(cmd + ["-iquote", src_dir, "-fmacro-prefix-map=%s=%s" %
                                      (tmp, src_dir), "-c", "-o", obj, src], cwd=self.build,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if r.returncode != 0:
                return None
            r = subprocess.run(["objdump", "-s", "-r", "-t", obj], text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return hashlib.sha1(self.reduced(r.stdout).encode()).hexdigest()

    @staticmethod
    def reduced(dump):
        """objdump's text less the object's name and the debug sections."""
        out, keep = [], True
        for ln in dump.split("\n"):
            if "file format" in ln or " df " in ln or re.search(r"\s\.L\w*$", ln):
                continue  # the object's path; the FILE symbol; gcc's numbered labels
            head = re.match(r"^(Contents of section|RELOCATION RECORDS FOR \[)(\S+?)\]?:", ln)
            if head:
                keep = not head.group(2).startswith((".debug", ".rela.debug"))
            if keep and ".debug" not in ln:
                out.append(ln)
        return "\n".join(out)

    def original(self, path, text):
        """The unmutated file's digest, computed once."""
        with self.lock:
            ev = self.base.get(path)
            if ev is None:
                ev = self.base[path] = [threading.Event(), None]
                mine = True
            else:
                mine = False
        if mine:
            ev[1] = self.digest(path, text)
            ev[0].set()
        ev[0].wait()
        return ev[1]


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


def judge_line(path, n, candidates, start, text, lines, checker, objects, equivalent):
    """The first of a line's mutants from candidates[start] that compiles as
    the original does and is not equivalent: (index, what, new line, object
    digest or None), or None; and how many had the original's object."""
    same = 0
    for i in range(start, len(candidates)):
        what, new = candidates[i]
        if (path, lines[n - 1].strip(), new.strip()) in equivalent:
            continue
        mutated = "\n".join(lines[:n - 1] + [new] + lines[n:])
        if not checker.accepts(path, text, mutated):
            continue
        digest = objects.digest(path, mutated) if objects else None
        if digest is not None and digest == objects.original(path, text):
            same += 1
            continue
        return (i, what, new, digest), same
    return None, same


def generate(info, seed, build, count=None, jobs=1, stats=None, tce=True):
    """Yields mutants (path, line number, what, old line, new line), drawn with
    seed, each one that compiles and whose object differs from the original's
    and from every mutant's before it; the caller takes as many as it needs.
    stats counts those discarded: "same" (the original's object), "duplicate"
    (another mutant's).  Lines are judged jobs at a time, ahead of the caller."""
    rng = random.Random(seed)
    lines_of = executed(info)
    pool = [(p, n) for p, ns in sorted(lines_of.items()) for n in ns]
    texts, checker, equivalent, seen = {}, Checker(build), known_equivalent(), set()
    objects = Objects(build) if tce else None
    stats = stats if stats is not None else {}
    stats.setdefault("same", 0)
    stats.setdefault("duplicate", 0)
    digests = set()
    rng.shuffle(pool)

    def line_work(path, n):
        """The line's mutants in an order drawn from the seed and the line
        alone (so that lines can be judged in any order), and its verdict."""
        text, lines, masked = texts[path]
        prev = next((masked[k] for k in range(n - 2, -1, -1) if masked[k].strip()), "{")
        lrng = random.Random("%d:%s:%d" % (seed, path, n))
        candidates = list(by_kind(sites(lines[n - 1], masked[n - 1], prev), lrng))
        return candidates, judge_line(path, n, candidates, 0, text, lines, checker, objects,
                                      equivalent)

    def todo():
        for path, n in pool:
            if path not in texts:
                with open(os.path.join(TOP, path), encoding="utf-8") as f:
                    texts[path] = f.read()
                texts[path] = (texts[path],) + masked_lines(texts[path])
            lines = texts[path][1]
            if n <= len(lines) and not SKIP_LINE.search(lines[n - 1]):
                yield path, n

    made, lines_todo = 0, todo()
    pending = collections.deque()
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as ex:
        try:
            while True:
                while len(pending) < 2 * max(1, jobs):
                    nxt = next(lines_todo, None)
                    if nxt is None:
                        break
                    pending.append((nxt, ex.submit(line_work, *nxt)))
                if not pending:
                    return
                (path, n), fut = pending.popleft()
                candidates, (pick, same) = fut.result()
                text, lines, _ = texts[path]
                while pick:
                    stats["same"] += same
                    i, what, new, digest = pick
                    key = (path, lines[n - 1].strip(), new.strip())
                    dup = digest is not None and (path, digest) in digests
                    if key not in seen and not dup:
                        break
                    stats["duplicate"] += dup
                    pick, same = judge_line(path, n, candidates, i + 1, text, lines, checker,
                                            objects, equivalent)
                else:
                    stats["same"] += same
                    continue
                seen.add(key)
                digests.add((path, digest))
                yield path, n, what, lines[n - 1], new
                made += 1
                if count is not None and made >= count:
                    return
        finally:
            for _, fut in pending:
                fut.cancel()


def read_mutants(path):
    """mutants.txt's format: [(file, line or None, [old], [new], expected
    verdict: the first word of its '=' line, or None)]."""
    out = []
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith("@ "):
                where = line[2:].partition(": ")[0].strip().split(":")
                out.append([where[0], int(where[1]) if len(where) > 1 else None, [], [], None,
                            line[2:]])
            elif line.startswith(("- ", "+ ")) and out:
                out[-1][2 if line[0] == "-" else 3].append(line[2:])
            elif line.startswith("= ") and out:
                out[-1][4] = line[2:].split()[0].rstrip(":,")
    return out


def planted(text, lineno, old, new):
    """text with a mutant planted: a generated one's whole line at its
    number, a hand-written one's text where it is found once; or None."""
    lines = text.split("\n")
    if lineno and len(old) == 1 and lines[lineno - 1].strip() == old[0].strip():
        indent = lines[lineno - 1][:len(lines[lineno - 1]) - len(lines[lineno - 1].lstrip())]
        lines[lineno - 1] = indent + new[0].strip()
        return "\n".join(lines)
    hits = [i for i in range(len(lines) - len(old) + 1)
            if all(o in lines[i + k] for k, o in enumerate(old))]
    if len(hits) != 1:
        return None
    for k, (o, n) in enumerate(zip(old, new)):
        lines[hits[0] + k] = lines[hits[0] + k].replace(o, n, 1)
    return "\n".join(lines)


def judge(listing, build):
    """Each mutant of listing judged by its object: 'same' (as the
    original's), 'duplicate' (of a mutant before it in the listing),
    'differs', or 'unbuilt'.  Prints them; a mutant whose '=' line starts
    with one of those words and gets another is an error.  Returns the
    number of errors."""
    objects, seen, errors = Objects(build), {}, 0
    for path, lineno, old, new, expected, name in read_mutants(listing):
        with open(os.path.join(TOP, path), encoding="utf-8") as f:
            text = f.read()
        mutated = planted(text, lineno, old, new)
        digest = objects.digest(path, mutated) if mutated else None
        if digest is None:
            verdict = "unbuilt"
        elif digest == objects.original(path, text):
            verdict = "same"
        elif (path, digest) in seen:
            verdict = "duplicate"
        else:
            verdict = "differs"
            seen[(path, digest)] = name
        wrong = expected in ("same", "duplicate", "differs", "unbuilt") and expected != verdict
        errors += wrong
        print("%-9s %s%s" % (verdict, name, "   (expected: %s)" % expected if wrong else ""))
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--coverage", help="lcov tracefile (tests/coverage's fast.info)")
    ap.add_argument("--build", help="a configured build directory (its Makefile, config.h); "
                    "default: the tracefile's")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="lines judged at once")
    ap.add_argument("--judge", metavar="LIST",
                    help="only judge LIST's mutants (mutants.txt's format) by their objects")
    args = ap.parse_args()
    if args.judge:
        if not args.build:
            ap.error("--judge needs --build")
        return 1 if judge(args.judge, os.path.abspath(args.build)) else 0
    if not args.coverage:
        ap.error("--coverage is needed")
    build = args.build or os.path.dirname(os.path.abspath(args.coverage))
    stats = {}
    print("# %d mutants generated with seed %d" % (args.count, args.seed))
    for path, n, what, old, new in generate(args.coverage, args.seed, build, args.count,
                                            args.jobs, stats):
        print("@ %s:%d: %s\n- %s\n+ %s\n" % (path, n, what, old.strip(), new.strip()))
    print("# discarded: %d with the original's object code, %d with another mutant's" %
          (stats["same"], stats["duplicate"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
