#!/usr/bin/env bash
# Load test of `ctxsearch serve` before and after a change, in one run, on one index:
#   docs/serve-loadtest.sh BEFORE_CHECKOUT AFTER_CHECKOUT INDEX [SECONDS]
# Each checkout's server is started in turn on 127.0.0.1 (the loadtest client is always
# AFTER's), warmed with one hybrid query, then loaded with 1, 8 and 32 clients in hybrid
# and lexical mode for SECONDS each. The lines printed are `ctxsearch loadtest`'s own.
set -euo pipefail
before=$1 after=$2 index=$3 seconds=${4:-15}
python=${PYTHON:-/work/main/.venv/bin/python}
export HF_HUB_OFFLINE=1
port=8799
for side in before after; do
    checkout=$before
    [ "$side" = after ] && checkout=$after
    (cd "$checkout" && exec "$python" -m search serve --index "$index" --port $port) \
        >"/tmp/serve-$side.log" 2>&1 &
    server=$!
    until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do sleep 0.5; done
    curl -sf "http://127.0.0.1:$port/search?q=warm+up&mode=hybrid" >/dev/null
    for mode in hybrid lexical; do
        for clients in 1 8 32; do
            printf '%s  ' "$side"
            (cd "$after" && "$python" -m search loadtest "http://127.0.0.1:$port" \
                --clients "$clients" --seconds "$seconds" --mode "$mode")
        done
    done
    kill "$server"
    wait "$server" || true
done
