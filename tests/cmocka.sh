# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=sh
# Sourced by the shell suites: the result lines CMocka prints, which automake
# keeps in each suite's .log and tests/run-all adds up.
#   begin NAME;  ok NAME  or  failed NAME;  ...;  summary  (exits 1 after a failure)
PASS=0
FAIL=0
FAILED=""
begin() { echo "[ RUN      ] $1"; }
ok() {
    echo "[       OK ] $1"
    PASS=$((PASS + 1))
}
failed() {
    echo "[  FAILED  ] $1"
    FAIL=$((FAIL + 1))
    FAILED="$FAILED $1"
}
summary() {
    echo "[==========] $((PASS + FAIL)) test(s) run."
    echo "[  PASSED  ] $PASS test(s)."
    [ "$FAIL" -gt 0 ] || exit 0
    echo "[  FAILED  ] $FAIL test(s), listed below:"
    for n in $FAILED; do echo "[  FAILED  ] $n"; done
    exit 1
}
