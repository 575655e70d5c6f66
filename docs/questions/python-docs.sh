#!/bin/sh
# Build the two "questions over documentation" sets for `ctxsearch tune-fusion` in OUT:
# our own judged questions (this folder) beside a copy of Python's HTML documentation
# (Debian/Ubuntu package python3-doc), which is read from the machine, never kept here.
#   OUT/python-library: the 317 pages of the library reference, 32 questions
#   OUT/python-guides:  the FAQ, HOWTOs, tutorial, language reference, "using" and
#                       "extending" guides (index pages left out), 30 questions
set -eu
if [ $# -ne 1 ]; then
    echo "usage: docs/questions/python-docs.sh OUT (the folder to build the two sets in)" >&2
    exit 2
fi
OUT=$1
HTML=${PYTHON_DOCS:-/usr/share/doc/python3.11/html}
HERE=$(cd "$(dirname "$0")" && pwd)
if [ ! -d "$HTML/library" ]; then
    echo "error: no Python HTML documentation at $HTML (install python3-doc, or set PYTHON_DOCS)" >&2
    exit 2
fi
mkdir -p "$OUT/python-library" "$OUT/python-guides"
cp "$HTML"/library/*.html "$OUT/python-library/"
for part in faq howto tutorial reference using extending; do
    for page in "$HTML/$part"/*.html; do
        name=$(basename "$page")
        [ "$name" = index.html ] || cp "$page" "$OUT/python-guides/$part-$name"
    done
done
for set in python-library python-guides; do
    cp "$HERE/$set/queries.jsonl" "$HERE/$set/qrels.tsv" "$OUT/$set/"
done
echo "$OUT/python-library: $(ls "$OUT/python-library" | grep -c html$) pages"
echo "$OUT/python-guides: $(ls "$OUT/python-guides" | grep -c html$) pages"
