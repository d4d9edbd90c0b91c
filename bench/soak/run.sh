#!/usr/bin/env bash
# Soak run: sim web, router, plain-HTTP fetcher, browser fetcher, API, producer and sampler, as the README runs them.
# Usage: bench/soak/run.sh [minutes]   (from the repository root; DATABASE_URL must name a migrated database of its own)
# Writes bench/soak/out/{*.log,pids,soak.csv}; stops everything it started after the given minutes (default 40).
set -euo pipefail
MIN=${1:-40}
OUT=bench/soak/out
mkdir -p "$OUT"
export DATABASE_URL=${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/crawler_soak}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379}
export QUEUE_PREFIX=${QUEUE_PREFIX:-'{soak}'}
export FETCH_ALLOW_HOSTS=127.0.0.0/8
export LOG_LEVEL=${LOG_LEVEL:-info}
BASE=${SOAK_PORT_BASE:-9610}
N="nice -n 10"
$N node bench/soak/sim.mjs "$OUT/sites.json" > "$OUT/sim.log" 2>&1 & echo "sim=$!" > "$OUT/pids"
for i in $(seq 1 30); do [ -s "$OUT/sites.json" ] && break; sleep 1; done
METRICS_PORT=$((BASE+1)) $N node apps/router/dist/main.js > "$OUT/router.log" 2>&1 & echo "router=$!" >> "$OUT/pids"
METRICS_PORT=$((BASE+2)) FETCHERS=simple_http:8 $N node apps/fetcher/dist/main.js > "$OUT/http.log" 2>&1 & echo "http=$!" >> "$OUT/pids"
METRICS_PORT=$((BASE+3)) FETCHERS=playwright:2,playwright_stealth:1 $N node apps/fetcher/dist/main.js > "$OUT/browser.log" 2>&1 & echo "browser=$!" >> "$OUT/pids"
PORT=$((BASE+4)) $N node apps/api/dist/main.js > "$OUT/api.log" 2>&1 & echo "api=$!" >> "$OUT/pids"
sleep 8
$N node bench/soak/producer.mjs "$OUT/sites.json" "http://127.0.0.1:$((BASE+4))" > "$OUT/producer.log" 2>&1 & echo "producer=$!" >> "$OUT/pids"
. <(sed 's/^/P_/' "$OUT/pids")
SOAK_PIDS="router=$P_router,http=$P_http,browser=$P_browser,api=$P_api" \
SOAK_METRICS="router=http://127.0.0.1:$((BASE+1))/metrics,http=http://127.0.0.1:$((BASE+2))/metrics,browser=http://127.0.0.1:$((BASE+3))/metrics,api=http://127.0.0.1:$((BASE+4))/metrics" \
  $N node bench/soak/sample.mjs "$OUT/soak.csv" > "$OUT/sample.log" 2>&1 & echo "sample=$!" >> "$OUT/pids"
echo "started: $(tr '\n' ' ' < "$OUT/pids")"
sleep $((MIN*60))
kill $(grep -E '^(producer|sample)=' "$OUT/pids" | cut -d= -f2) 2>/dev/null || true
kill $P_api $P_router $P_http $P_browser 2>/dev/null || true
sleep 15
kill $P_sim 2>/dev/null || true
echo "stopped"
