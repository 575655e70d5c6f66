#!/usr/bin/env bash
# Load test of `ctxsearch serve` before and after a change, in one run, on one index:
#   docs/serve-loadtest.sh BEFORE_CHECKOUT AFTER_CHECKOUT INDEX [SECONDS] [ROUNDS]
# Both checkouts' servers run side by side on 127.0.0.1 (ports 8798 and 8799), each
# warmed with one hybrid query. For each mode (hybrid, lexical) and client count (1, 8,
# 32), `ctxsearch loadtest` (AFTER's) loads BEFORE's server then AFTER's, SECONDS each,
# back to back, so that both see the same machine; ROUNDS repeats the whole table.
# The lines printed are `ctxsearch loadtest`'s own, each after the side it measured.
set -euo pipefail
before=$1 after=$2 index=$3 seconds=${4:-15} rounds=${5:-1}
python=${PYTHON:-/work/main/.venv/bin/python}
export HF_HUB_OFFLINE=1
declare -A port=([before]=8798 [after]=8799) checkout=([before]=$before [after]=$after)
servers=()
trap 'kill "${servers[@]}" 2>/dev/null || true' EXIT
for side in before after; do
    (cd "${checkout[$side]}" && exec "$python" -m search serve --index "$index" \
        --port "${port[$side]}") >"/tmp/serve-$side.log" 2>&1 &
    servers+=($!)
done
for side in before after; do
    until curl -sf "http://127.0.0.1:${port[$side]}/health" >/dev/null; do sleep 0.5; done
    curl -sf "http://127.0.0.1:${port[$side]}/search?q=warm+up&mode=hybrid" >/dev/null
done
for round in $(seq "$rounds"); do
    for mode in hybrid lexical; do
        for clients in 1 8 32; do
            for side in before after; do
                printf '%s  ' "$side"
                (cd "$after" && "$python" -m search loadtest "http://127.0.0.1:${port[$side]}" \
                    --clients "$clients" --seconds "$seconds" --mode "$mode")
            done
        done
    done
done
