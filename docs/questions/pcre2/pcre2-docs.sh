#!/bin/sh
# Build the judged "questions over PCRE2's HTML documentation" set in OUT: our own 27
# questions (this folder) beside a copy of the 101 pages of PCRE2's doc/html folder
# (from its source distribution), which is read from the machine, never kept here.
# Each question was judged (2 = the page answers it, 1 = it helps) by reading the pages,
# before any ranking was seen; the contents page (index.html) is judged for none.
set -eu
if [ $# -ne 2 ]; then
    echo "usage: docs/questions/pcre2/pcre2-docs.sh PCRE2_HTML OUT (PCRE2's doc/html folder, the folder to build the set in)" >&2
    exit 2
fi
HTML=$1
OUT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
if [ ! -f "$HTML/pcre2api.html" ]; then
    echo "error: no PCRE2 HTML documentation at $HTML (its doc/html folder holds pcre2api.html)" >&2
    exit 2
fi
mkdir -p "$OUT"
cp "$HTML"/*.html "$OUT/"
cp "$HERE/queries.jsonl" "$HERE/qrels.tsv" "$OUT/"
