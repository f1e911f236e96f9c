#!/bin/sh
# Runs the busted specs (all of tests/, or the files given) against the
# freshly built lib/moonlab.so under a stock lua5.4, then prints one summary
# line: "tests: N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
export LUA_CPATH="$PWD/lib/?.so;${LUA_CPATH:-;}"
export MOONLAB_BIN="$PWD/bin/moonlab"
log=$(mktemp)
rcfile=$(mktemp)
trap 'rm -f "$log" "$rcfile"' EXIT
[ $# -gt 0 ] || set -- tests
{ lua5.4 "$(command -v busted)" --output=utfTerminal "$@"; echo $? >"$rcfile"; } 2>&1 | tee "$log"
status=$(cat "$rcfile")
summary=$(sed 's/\x1b\[[0-9;]*m//g' "$log" |
  sed -n 's/^\([0-9]*\) success.* \([0-9]*\) failure.* \([0-9]*\) error.* \([0-9]*\) pending.*/\1 \2 \3 \4/p' | tail -1)
if [ -z "$summary" ]; then
  echo "tests: busted printed no summary"
  exit 1
fi
set -- $summary
echo "tests: $1 passed, $(($2 + $3)) failed, $4 skipped"
[ "$(($2 + $3))" -eq 0 ] && [ "$status" -eq 0 ]
