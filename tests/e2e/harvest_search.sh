#!/usr/bin/env bash
# End-to-end: `lscat harvest search` against a fake GitHub search API on 127.0.0.1
# (tests/harvest/support/fault_server.py): date slicing under the 1,000-result cap, Link
# pagination, a day over the cap counted as truncated, GITHUB_TOKEN sent but never stored.
source "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
W=$T_TMP/w
SRV=$T_TMP/srv
db() { sqlite3 "$W/lscat.db" "$@"; }
check() { if [ "$2" = "$3" ]; then t_ok "$1"; else t_fail "$1" "want '$2', got '$3'"; fi; }
mkdir -p "$SRV"
python3 - "$SRV/search.json" <<'PY'
import json, sys
repos = []
for d in range(1, 11):          # 2024-01-01..10: 250 Cuda repos a day, 2,500 in all
    for i in range(250):
        repos.append({"full_name": "dev%d/kern-%02d-%03d" % (i % 7, d, i), "id": d * 1000 + i,
                      "language": "Cuda", "description": "kernels" if i % 2 else "CUDA things",
                      "pushed_at": "2024-01-%02dT%02d:00:00Z" % (d, i % 24)})
    for i in range(30):
        repos.append({"full_name": "py/tool-%02d-%03d" % (d, i), "id": 900000 + d * 100 + i,
                      "language": "Python", "description": None,
                      "pushed_at": "2024-01-%02dT05:00:00Z" % d})
for i in range(1100):           # 2024-02-01: one day over the cap
    repos.append({"full_name": "busy/r%04d" % i, "id": 500000 + i, "language": "Cuda",
                  "description": "", "pushed_at": "2024-02-01T%02d:00:00Z" % (i % 24)})
json.dump(repos, open(sys.argv[1], "w"))
PY
python3 "$ROOT/tests/harvest/support/fault_server.py" "$SRV" "$T_TMP/port" "$T_TMP/requests" &
SERVER_PID=$!
trap 'kill $SERVER_PID 2>/dev/null; [ "$T_FAILED" = 0 ] && rm -rf "$T_TMP"' EXIT
port_known() { [ -s "$T_TMP/port" ]; }
t_wait_until port_known
API="http://127.0.0.1:$(cat "$T_TMP/port")"

t_expect harvest_search__slices_and_paginates 0 env GITHUB_TOKEN=s3cr3t-token lscat harvest --work "$W" -q \
    search --language Cuda --pushed-since 2024-01-01 --pushed-until 2024-01-10 --api-url "$API"
check harvest_search__finds_every_repository_under_the_cap 2500 "$(db "SELECT count(*) FROM repos WHERE source = 'search'")"
check harvest_search__keeps_to_the_language 0 "$(db "SELECT count(*) FROM repos WHERE full_name LIKE 'py/%'")"
check harvest_search__records_evidence_and_push_time "description_keyword,search_language 2024-01-01T00:00:00Z" \
    "$(db "SELECT evidence || ' ' || pushed_at FROM repos WHERE full_name = 'dev0/kern-01-000'")"
over=$(grep '/search/repositories' "$T_TMP/requests" | grep -c 'page=1 ')
[ "$over" -ge 3 ] && t_ok harvest_search__splits_ranges_over_the_cap || t_fail harvest_search__splits_ranges_over_the_cap "$over first pages"
[ "$(grep -c 'page=[2-9]' "$T_TMP/requests")" -ge 1 ] && t_ok harvest_search__follows_link_headers ||
    t_fail harvest_search__follows_link_headers "no page>1 request"
grep -q ' noauth ' "$T_TMP/requests" && t_fail harvest_search__sends_the_token "a request without Authorization" ||
    t_ok harvest_search__sends_the_token
if grep -rq 's3cr3t-token' "$W" "$T_ERR" "$T_OUT"; then t_fail harvest_search__never_stores_the_token "found in the work folder or logs"
else t_ok harvest_search__never_stores_the_token; fi
t_expect harvest_search__exit_1_when_a_day_is_over_the_cap 1 lscat harvest --work "$W" -q \
    search --pushed-since 2024-02-01 --pushed-until 2024-02-01 --api-url "$API"
check harvest_search__takes_the_cap_of_a_full_day 1000 "$(db "SELECT count(*) FROM repos WHERE full_name LIKE 'busy/%'")"
t_expect harvest_search__needs_pushed_since 2 lscat harvest --work "$W" search --api-url "$API"
t_done
