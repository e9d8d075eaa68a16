# Shared by bench/execute_overlap.sh and bench/execute_probekey.sh (sourced, not run): a store
# query helper and the stand-in kernels they build. Needs LSCAT_DB, LSCAT_WORK and FIXTURE.
FX=tests/execute/fixtures
# sql: a script on stdin; sql QUERY: print the first column of the first row.
sql() { python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("PRAGMA foreign_keys = ON")
r = c.execute(sys.argv[2]).fetchall() if len(sys.argv) > 2 else c.executescript(sys.stdin.read())
c.commit()
if len(sys.argv) > 2: print(r[0][0])' "$LSCAT_DB" "$@"; }
# add_kernels PREFIX COUNT: COUNT copies of the $FIXTURE kernel, each a distinct kernel (its
# constant differs), as isolate would have left them.
add_kernels() {
    local i id d
    { echo "BEGIN;"
      for i in $(seq 1 "$2"); do
          id=$(printf "%s-%d" "$1" "$i" | sha256sum | cut -c1-64)
          d=$LSCAT_WORK/kernels/${id:0:2}/$id
          mkdir -p "$d/include"
          sed "s/2.0f \* x\[i\]/$i.0f * x[i]/" "$FX/kernels/$FIXTURE/kernel.cu" >"$d/kernel.cu"
          if [ -e "$FX/kernels/$FIXTURE/harness.cu" ]; then cp "$FX/kernels/$FIXTURE/harness.cu" "$d/"
          else cp "$FX/harness.cu" "$d/"; fi
          cp "$FX/harness_main.h" "$d/include/"
          echo "INSERT INTO kernels(id, name, dir, params, param_count, created_at) VALUES ('$id', '$1$i', 'kernels/${id:0:2}/$id', '[]', 2, '2026-01-01T00:00:00Z');"
      done
      echo "COMMIT;"; } | sql
}
now() { date +%s.%N; }
