#!/usr/bin/env bash
# End-to-end tests of `lscat isolate` on the fixture trees (tests/isolate/fixtures): the exact
# kernels found, the failures recorded for bad input, idempotence (a second run changes
# nothing), and that every isolated kernel + its harness compiles with the real nvcc (skipped,
# and said so, where nvcc is absent).
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FIX=$ROOT/tests/isolate/fixtures
W=$T_TMP/work
mkdir -p "$T_TMP/repos"
cp -r "$FIX/good" "$FIX/bad" "$T_TMP/repos/"
echo '#define OUTSIDE_VALUE 42.0f' > "$T_TMP/outside.h"   # reached by bad/escape.cu via ../../
# An enormous file (4.1 MB of comments) over the default --max-file-bytes.
head -c 4100000 /dev/zero | tr '\0' 'a' | fold -w 100 | sed 's#^#// #' > "$T_TMP/repos/bad/enormous.cu"
q() { sqlite3 "$W/lscat.db" "$@"; }
# Without a CUDA toolkit (CI) parsing still finds every kernel, but CUDA headers are missing
# headers and kernels using threadIdx parse with errors: a few expectations differ.
HAVE_CUDA=1
# The parse timeout of the bad tree: far above what an ordinary file takes on a loaded machine
# (2.6-3.7 s measured on a busy 2-core one); only bad/heat.cu, which cannot finish, reaches it.
PARSE_TIMEOUT_S=30
[ -f "${CUDA_HOME:-/usr/local/cuda}/include/cuda_runtime.h" ] || HAVE_CUDA=0

t_expect isolate__good_tree_exits_zero 0 lscat-isolate --work "$W" --path "$T_TMP/repos/good" -j2 -q
got=$(q "SELECT name || COALESCE(template_args, '') FROM kernels ORDER BY 1" | tr '\n' ' ')
want="(anonymous)::anon_kernel alpha::beta::nested dyn_shared first::dup gather header_fill matmul<BX> random_init reduce<float, BX> saxpy second::dup split_kernel static_kernel with_ctor "
if [ "$got" = "$want" ]; then t_ok isolate__finds_exactly_the_good_kernels
else t_fail isolate__finds_exactly_the_good_kernels "got '$got'"; fi

n=$(q "SELECT count(*) FROM kernel_occurrences o JOIN kernels k ON k.id = o.kernel_id WHERE k.name = 'header_fill'")
[ "$n" = 1 ] && t_ok isolate__kernel_in_a_header_of_three_units_is_one_kernel \
    || t_fail isolate__kernel_in_a_header_of_three_units_is_one_kernel "$n occurrences"
n=$(q "SELECT count(*) FROM failures WHERE class = 'kernel_without_body'")
[ "$n" = 0 ] && t_ok isolate__declared_here_defined_there_is_not_bodiless \
    || t_fail isolate__declared_here_defined_there_is_not_bodiless "$n kernel_without_body failures"

d=$(q "SELECT dir FROM kernels WHERE name = 'saxpy'")
for text in '#define SAT(x) CLAMP(x, 0.0f, 1.0f)' '#define CLAMP(x, lo, hi)' 'struct Pair {' \
            'enum Mode {' 'static const int kRepeat = 2;' '__constant__ real_t c_coef[4];' \
            '__device__ real_t scale_value(real_t v);' 'int fact(int n)' 'real_t twice(real_t v)'; do
    grep -qF -- "$text" "$W/$d/kernel.cu" || { t_fail isolate__saxpy_closure_is_complete "lacks '$text'"; break; }
done && t_ok isolate__saxpy_closure_is_complete
if grep -q 'header_fill\|BLOCK 256\|g_counter\|#include' "$W/$d/kernel.cu"; then
    t_fail isolate__saxpy_closure_has_nothing_extra "$(grep -n 'header_fill\|BLOCK 256\|g_counter\|#include' "$W/$d/kernel.cu")"
else t_ok isolate__saxpy_closure_has_nothing_extra; fi
if [ $HAVE_CUDA = 0 ]; then t_skip isolate__system_headers_are_included "no CUDA headers"; else
t_contains isolate__system_headers_are_included "$W/$(q "SELECT dir FROM kernels WHERE name = 'random_init'")/kernel.cu" '#include <curand_kernel.h>'
fi
t_contains isolate__params_json_has_roles "$W/$d/params.json" '"name":"alpha","type":"float","canonical":"float","kind":"scalar","bits":32,"float":true,"role":"scale"'
t_contains isolate__macros_tested_by_ifdef_are_copied "$W/$(q "SELECT dir FROM kernels WHERE name = 'dyn_shared'")/kernel.cu" '#define COUNT_CALLS'
t_contains isolate__dynamic_shared_is_detected "$W/$(q "SELECT dir FROM kernels WHERE name = 'dyn_shared'")/params.json" '"dynamic_shared":true'

t_expect isolate__bad_tree_records_failures_and_exits_one 1 \
    lscat-isolate --work "$W" --path "$T_TMP/repos/bad" -j2 -q --timeout "$PARSE_TIMEOUT_S" --mem-mb 2048
got=$(q "SELECT k.name FROM kernels k JOIN kernel_occurrences o ON o.kernel_id = k.id JOIN sources s ON s.id = o.source_id WHERE s.root LIKE '%/bad' ORDER BY 1" | tr '\n' ' ')
want="absolute_kernel cycle_kernel escape_kernel latin1_kernel survives_missing "
[ "$got" = "$want" ] && t_ok isolate__bad_tree_still_yields_its_kernels \
    || t_fail isolate__bad_tree_still_yields_its_kernels "got '$got'"
got=$(q "SELECT p.path || ':' || p.status FROM parses p JOIN sources s ON s.id = p.source_id WHERE s.root LIKE '%/bad' ORDER BY 1" | tr '\n' ' ')
want="absolute.cu:ok binary.cu:skipped bodiless.cu:ok cycle.cu:errors empty.cu:skipped enormous.cu:skipped escape.cu:errors heat.cu:timeout missing.cu:errors nonutf8.cu:ok not_c.cu:errors "
[ "$got" = "$want" ] && t_ok isolate__bad_files_get_their_parse_status \
    || t_fail isolate__bad_files_get_their_parse_status "got '$got'"
got=$(q "SELECT class FROM failures WHERE $HAVE_CUDA = 1 OR message NOT LIKE '%curand%' AND message NOT LIKE '%cooperative%' AND message NOT LIKE '%cuda_runtime%' ORDER BY 1" | tr '\n' ' ')
want="file_skipped file_skipped file_skipped include_refused include_refused kernel_without_body missing_header non_utf8 parse_timeout "
[ "$got" = "$want" ] && t_ok isolate__bad_input_failures_have_classes \
    || t_fail isolate__bad_input_failures_have_classes "got '$got'"
q "SELECT message FROM failures" > "$T_TMP/failures.txt"
t_contains isolate__binary_reason_is_readable "$T_TMP/failures.txt" 'binary file (NUL bytes), not C/CUDA source'
t_contains isolate__refused_include_names_the_file "$T_TMP/failures.txt" '#include "/etc/hostname" names a file outside the repository tree'
t_contains isolate__endless_compile_time_work_times_out "$T_TMP/failures.txt" "timeout after $PARSE_TIMEOUT_S.0 s"

# Running again changes nothing: same rows, same files.
snap() { q "SELECT id, name, dir, params FROM kernels ORDER BY id; SELECT * FROM kernel_occurrences ORDER BY 1,2,3,4; SELECT source_id, path, sha256, status, reason, kernels FROM parses ORDER BY 1,2; SELECT subject, class, message FROM failures ORDER BY 1,2,3"; (cd "$W/kernels" && find . -type f | sort | xargs sha256sum); }
snap > "$T_TMP/before"
lscat-isolate --work "$W" --path "$T_TMP/repos/good" -j2 -q >/dev/null 2>&1
lscat-isolate --work "$W" --path "$T_TMP/repos/bad" -j2 -q --timeout "$PARSE_TIMEOUT_S" --mem-mb 2048 >/dev/null 2>&1
snap > "$T_TMP/after"
if cmp -s "$T_TMP/before" "$T_TMP/after"; then t_ok isolate__second_run_changes_nothing
else t_fail isolate__second_run_changes_nothing "$(diff "$T_TMP/before" "$T_TMP/after" | head -5)"; fi
runs=$(q "SELECT count(*) FROM stage_runs WHERE stage = 'isolate' AND ended_at IS NOT NULL")
[ "$runs" = 4 ] && t_ok isolate__every_run_is_recorded || t_fail isolate__every_run_is_recorded "$runs runs"

# Kernels isolated by an older isolate (another harness generator): the next run parses again and
# rewrites their generated files; the kernels and their ids stay.
sd=$(q "SELECT dir FROM kernels WHERE name = 'saxpy'")
echo "// generated by an older isolate" >> "$W/$sd/harness.cu"
q "UPDATE parses SET isolate_version = '1'"
lscat-isolate --work "$W" --path "$T_TMP/repos/good" -j2 -q >/dev/null 2>&1
lscat-isolate --work "$W" --path "$T_TMP/repos/bad" -j2 -q --timeout "$PARSE_TIMEOUT_S" --mem-mb 2048 >/dev/null 2>&1
snap > "$T_TMP/upgraded"
old=$(q "SELECT count(*) FROM parses WHERE isolate_version = '1'")
if cmp -s "$T_TMP/before" "$T_TMP/upgraded" && [ "$old" = 0 ]; then t_ok isolate__an_older_isolates_harness_is_regenerated
else t_fail isolate__an_older_isolates_harness_is_regenerated "$old old parses; $(diff "$T_TMP/before" "$T_TMP/upgraded" | head -5)"; fi

# Without --path: every fetched repository's tree under <work>/trees/<owner>/<name>.
W2=$T_TMP/work2
mkdir -p "$W2/trees/acme" "$W2/trees/gone"
cp -r "$FIX/good" "$W2/trees/acme/good"
lscat-init --work "$W2" -q >/dev/null 2>&1
sqlite3 "$W2/lscat.db" "INSERT INTO repos(full_name, fetch_status) VALUES ('acme/good', 'fetched'), ('acme/pending', 'pending')"
t_expect isolate__fetched_repositories_are_isolated 0 lscat-isolate --work "$W2" -j2 -q
got=$(sqlite3 "$W2/lscat.db" "SELECT count(*), count(DISTINCT o.source_id), max(s.repo_id) FROM kernels k JOIN kernel_occurrences o ON o.kernel_id = k.id JOIN sources s ON s.id = o.source_id")
[ "$got" = "14|1|1" ] && t_ok isolate__fetched_tree_gives_the_same_kernels \
    || t_fail isolate__fetched_tree_gives_the_same_kernels "got '$got'"
# Killed at any moment (SIGKILL), the next run completes the work: same kernels as a clean run.
W3=$T_TMP/work3
{
    lscat-isolate --work "$W3" --path "$T_TMP/repos/good" -j1 -q >/dev/null 2>&1 &
    pid=$!
    # killed once the first kernels are in the store (a point the run shows, not a time)
    some_in() { [ "$(sqlite3 "$W3/lscat.db" "SELECT count(*) FROM kernels" 2>/dev/null || echo 0)" -ge 1 ] || ! kill -0 $pid 2>/dev/null; }
    t_wait_until some_in
    kill -9 $pid
    wait $pid
    lscat-isolate --work "$W3" --path "$T_TMP/repos/good" -j2 -q >/dev/null 2>&1
} 2>/dev/null
a=$(q "SELECT id FROM kernels k WHERE EXISTS (SELECT 1 FROM kernel_occurrences o JOIN sources s ON s.id = o.source_id WHERE o.kernel_id = k.id AND s.root LIKE '%/good') ORDER BY 1" | sha256sum)
b=$(sqlite3 "$W3/lscat.db" "SELECT id FROM kernels ORDER BY 1" | sha256sum)
[ "$a" = "$b" ] && t_ok isolate__a_killed_run_is_completed_by_the_next \
    || t_fail isolate__a_killed_run_is_completed_by_the_next "kernel ids differ from a clean run"
# The golden harnesses the GPU test runs are what isolate generates today.
LSCAT_BIN=$LSCAT_BIN "$ROOT/tests/isolate/support/golden.sh" "$T_TMP/golden" >/dev/null 2>&1
if [ $HAVE_CUDA = 0 ]; then t_skip isolate__golden_harnesses_are_current "no CUDA headers"
elif diff -r "$ROOT/tests/isolate/fixtures/harness-golden" "$T_TMP/golden" >"$T_TMP/golden.diff"; then
    t_ok isolate__golden_harnesses_are_current
else t_fail isolate__golden_harnesses_are_current "run tests/isolate/support/golden.sh: $(head -3 "$T_TMP/golden.diff")"; fi
t_expect isolate__unknown_option_is_a_usage_error 2 lscat-isolate --work "$W2" --bogus

# A missing header costs only the kernels using what it declares; a kernel left out of its
# header's own parse but isolated from a .cu file that includes what it needs is no failure.
M=$T_TMP/repos/missing; mkdir -p "$M"
printf 'typedef float Vector;\n' > "$M/defs.h"
printf '#include "gen_config.h"\n__global__ void from_header(Vector *v) { v[threadIdx.x] = 0; }\n' > "$M/k.cuh"
printf '#include <Python.h>\n#include "defs.h"\n#include "k.cuh"\n#include "gone.h"\n__global__ void lacks(float *x) { x[0] = GONE_SCALE; }\n__global__ void whole(float *x) { x[threadIdx.x] *= 2; }\nstatic PyObject *wrap(PyObject *s, PyObject *a) { return Py_None; }\n' > "$M/main.cu"
WM=$T_TMP/work-missing
lscat-isolate --work "$WM" --path "$M" -j2 -q >/dev/null 2>&1
got=$(sqlite3 "$WM/lscat.db" "SELECT name FROM kernels ORDER BY 1" | tr '\n' ' ')
[ "$got" = "from_header whole " ] && t_ok isolate__a_missing_header_costs_only_the_kernels_using_it \
    || t_fail isolate__a_missing_header_costs_only_the_kernels_using_it "got '$got'"
got=$(sqlite3 "$WM/lscat.db" "SELECT message FROM failures WHERE class = 'kernel_missing_header'")
case "$got" in
"main.cu:5: kernel 'lacks' needs what a missing header declares (use of undeclared identifier 'GONE_SCALE' at main.cu:5; not found: "*"'gone.h'); not isolated"*)
    t_ok isolate__a_kernel_lacking_a_header_is_recorded_once_with_the_header ;;
*)  t_fail isolate__a_kernel_lacking_a_header_is_recorded_once_with_the_header "got '$got'" ;;
esac

# A `.cu` file written to be #included after the header that declares its types, parsed alone,
# gives its kernels an incomplete closure (Learn-CUDA-Programming's gpuSolverFunctions.cu without
# the stSolverState typedef): the includer's complete copy wins whichever unit is stored first,
# and a kernel no unit completes is kept, marked "incomplete" with what it lacks.
U=$T_TMP/repos/units; mkdir -p "$U"
printf 'typedef struct { int rows; float *d; } State;\n__global__ void elim(State s, float *a);\n' > "$U/solver.h"
printf '__global__ void elim(State s, float *a)\n{ int i = threadIdx.x; if (i < s.rows) a[i] = 2 * s.d[i]; }\n' > "$U/funcs.cu"
printf '#include "solver.h"\n#include "funcs.cu"\nvoid run(State s, float *a) { elim<<<1, 32>>>(s, a); }\n' > "$U/main.cu"
printf '__global__ void lone(Orphan o, float *a) { a[threadIdx.x] = o.scale; }\n' > "$U/lone.cu"
for j in 1 2; do
    WU=$T_TMP/work-units-$j
    lscat-isolate --work "$WU" --path "$U" -j$j -q >/dev/null 2>&1
    d=$(sqlite3 "$WU/lscat.db" "SELECT dir FROM kernels WHERE name = 'elim'")
    n=$(sqlite3 "$WU/lscat.db" "SELECT count(*) FROM kernels WHERE name = 'elim'")
    if [ "$n" = 1 ] && grep -q "} State;" "$WU/$d/kernel.cu" && ! grep -q incomplete "$WU/$d/params.json"; then
        t_ok "isolate__the_includers_complete_copy_of_a_kernel_wins_with_j$j"
    else t_fail "isolate__the_includers_complete_copy_of_a_kernel_wins_with_j$j" "$n kernel(s): $(cat "$WU/$d/kernel.cu" 2>&1 | head -3)"; fi
done
got=$(sqlite3 "$WU/lscat.db" "SELECT json_extract(params, '$.incomplete') FROM kernels WHERE name = 'lone'")
case "$got" in
"unknown type name 'Orphan' at lone.cu:1") t_ok isolate__a_kernel_no_unit_completes_is_kept_and_marked_incomplete ;;
*) t_fail isolate__a_kernel_no_unit_completes_is_kept_and_marked_incomplete "got '$got'" ;;
esac

# One definition in a header reached through two includers whose closures differ (one brings
# host headers and `using namespace std;`, as shoc's scan_kernel.h through its two includers):
# the run keeps the same copy, the longer closure, whichever includer sorts or is parsed first
# (session 13: two -j 2 runs kept different copies, so the kernel's id changed run to run).
K='template <class T>\n__global__ void inc(T *a, int n)\n{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 1; }\n'
L='#include <string>\n#include <vector>\nusing namespace std;\n#include "inc_kernel.h"\nvoid run_long(float *a, int n) { vector<int> v; inc<float><<<n / 256, 256>>>(a, n); }\n'
S='#include "inc_kernel.h"\nvoid run_short(float *a, int n) { inc<float><<<n / 256, 256>>>(a, n); }\n'
ids=""
for order in long-first short-first; do
    O=$T_TMP/repos/includers-$order; mkdir -p "$O"
    printf "$K" > "$O/inc_kernel.h"
    if [ "$order" = long-first ]; then printf "$L" > "$O/a.cu"; printf "$S" > "$O/b.cu"
    else printf "$S" > "$O/a.cu"; printf "$L" > "$O/b.cu"; fi
    for j in 1 2; do
        WI=$T_TMP/work-includers-$order-$j
        lscat-isolate --work "$WI" --path "$O" -j$j -q >/dev/null 2>&1
        ids="$ids $(sqlite3 "$WI/lscat.db" "SELECT count(*), id FROM kernels WHERE name = 'inc' GROUP BY id")"
        d=$(sqlite3 "$WI/lscat.db" "SELECT dir FROM kernels WHERE name = 'inc'")
        grep -q "namespace std" "$WI/$d/kernel.cu" 2>/dev/null || ids="$ids(short-copy-kept)"
    done
done
set -- $ids
if [ "$#" = 4 ] && [ "$1" = "$2" ] && [ "$2" = "$3" ] && [ "$3" = "$4" ] && [ "${1%%|*}" = 1 ]; then
    t_ok isolate__two_includers_give_one_kernel_whatever_their_order
else t_fail isolate__two_includers_give_one_kernel_whatever_their_order "count|id per run:$ids"; fi

# A C++ file holding a kernel (a HIP port whose runtime header is missing here) is parsed alone
# like a header; a C++ file without one is not parsed; a kernel templated on an enumeration is
# instantiated (the first enumerator, or the value of the tree's own launch).
C=$T_TMP/repos/cppkern; mkdir -p "$C"
printf '#include <hip/hip_runtime.h>\n#define TBSIZE 256\ntemplate <class T>\n__global__ void triad(T *a, const T *b, T s, int n)\n{ int i = blockIdx.x * TBSIZE + threadIdx.x; if (i < n) a[i] = s * b[i]; }\nvoid run(float *a, float *b, int n) { hipLaunchKernelGGL(triad<float>, dim3(n / TBSIZE), dim3(TBSIZE), 0, 0, a, b, 2.0f, n); }\n' > "$C/port.cpp"
printf 'int main() { return 0; }\n' > "$C/host.cpp"
printf 'enum class Op { kAdd, kMul };\ntemplate <Op OP, int N>\n__global__ void combine(float *x, const float *y, int n)\n{ int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) x[i] = OP == Op::kMul ? x[i] * y[i] : x[i] + y[i] + N; }\nvoid go(float *x, float *y, int n) { combine<Op::kMul, 2><<<n / 128, 128>>>(x, y, n); }\n' > "$C/enum.cu"
printf '#ifdef USE_OPT\n__global__ void opt_k(float *x) { x[threadIdx.x] = 1; }\n#endif\n' > "$C/opt.cuh"
printf '#define USE_OPT\n#include "opt.cuh"\n#ifdef DEBUG_K\n__global__ void dbg_k(float *x) { x[0] = 0; }\n#endif\n' > "$C/dbg.cu"
WC=$T_TMP/work-cppkern
lscat-isolate --work "$WC" --path "$C" -j2 -q >/dev/null 2>&1
got=$(sqlite3 "$WC/lscat.db" "SELECT name || COALESCE(template_args, '') FROM kernels ORDER BY 1" | tr '\n' ' ')
if [ $HAVE_CUDA = 1 ]; then want="combine<(Op)1, 2> opt_k triad<float> "; else want="combine<(Op)0, 1> opt_k triad<float> "; fi
[ "$got" = "$want" ] && t_ok isolate__kernels_in_cpp_files_and_enumeration_templates_are_found \
    || t_fail isolate__kernels_in_cpp_files_and_enumeration_templates_are_found "got '$got', want '$want'"
got=$(sqlite3 "$WC/lscat.db" "SELECT path FROM parses ORDER BY 1" | tr '\n' ' ')
[ "$got" = "dbg.cu enum.cu opt.cuh port.cpp " ] && t_ok isolate__a_cpp_file_without_kernels_is_not_parsed \
    || t_fail isolate__a_cpp_file_without_kernels_is_not_parsed "got '$got'"
# A kernel in a branch no parse takes is recorded; one its header's own parse skips but an
# includer's takes is isolated and not recorded.
got=$(sqlite3 "$WC/lscat.db" "SELECT message FROM failures WHERE class = 'kernel_inactive_branch'")
case "$got" in
"dbg.cu:4: kernel 'dbg_k' is in a preprocessor branch this parse does not take"*)
    t_ok isolate__a_kernel_in_a_branch_no_parse_takes_is_recorded_once ;;
*)  t_fail isolate__a_kernel_in_a_branch_no_parse_takes_is_recorded_once "got '$got'" ;;
esac

# Every isolated kernel + harness compiles with nvcc (escape_kernel needs the refused header).
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
if [ ! -x "$NVCC" ]; then
    t_skip isolate__every_harness_compiles_with_nvcc "nvcc not found ($NVCC)"
else
    B=$T_TMP/nvcc; mkdir -p "$B"
    "$NVCC" -std=c++17 -arch=sm_90 -I"$ROOT" -c "$ROOT/tune/timing.cu" -o "$B/timing.o" 2>"$B/timing.log" &
    q "SELECT name || ' ' || dir FROM kernels WHERE name <> 'escape_kernel'" > "$B/list"
    export NVCC ROOT W B
    xargs -P 2 -L 1 sh -c 'cd "$W/$1" && "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" -c harness.cu -o "$B/$(basename "$1").o" >"$B/$0.log" 2>&1 || echo "$0"' < "$B/list" > "$B/failed"
    wait
    if [ -s "$B/failed" ]; then
        t_fail isolate__every_harness_compiles_with_nvcc "$(tr '\n' ' ' < "$B/failed"): $(cat "$B/$(head -1 "$B/failed").log" | grep -m3 error)"
    else t_ok isolate__every_harness_compiles_with_nvcc; fi
    sqlite3 "$WC/lscat.db" "SELECT name || ' ' || dir FROM kernels" > "$B/list-cpp"
    W=$WC xargs -P 2 -L 1 sh -c 'cd "$W/$1" && "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" -c harness.cu -o "$B/cpp-$0.o" >"$B/cpp-$0.log" 2>&1 || echo "$0"' < "$B/list-cpp" > "$B/failed-cpp"
    if [ -s "$B/failed-cpp" ] || [ ! -s "$B/list-cpp" ]; then
        t_fail isolate__cpp_and_enumeration_kernels_compile_with_nvcc "$(tr '\n' ' ' < "$B/failed-cpp"): $(grep -hm3 error "$B"/cpp-*.log)"
    else t_ok isolate__cpp_and_enumeration_kernels_compile_with_nvcc; fi
    # The documented build command, whole, for one kernel.
    d=$(q "SELECT dir FROM kernels WHERE name = 'reduce'")
    if (cd "$W/$d" && "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" harness.cu "$ROOT/isolate/harness_core.cu" "$ROOT/tune/timing.cu" "$ROOT/tune/stats.c" -o "$B/harness" >"$B/link.log" 2>&1); then
        t_ok isolate__documented_build_command_links_a_harness
    else t_fail isolate__documented_build_command_links_a_harness "$(grep -m3 error "$B/link.log")"; fi
    d=$(q "SELECT dir FROM kernels WHERE name = 'escape_kernel'")
    if (cd "$W/$d" && "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" -c harness.cu -o "$B/escape.o" >/dev/null 2>&1); then
        t_fail isolate__refused_include_is_not_copied "escape_kernel compiled: the outside header leaked in"
    else t_ok isolate__refused_include_is_not_copied; fi
fi
t_done
