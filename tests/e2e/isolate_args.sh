#!/usr/bin/env bash
# End-to-end tests of kernel arguments (issue #14). Struct arguments (P5) on
# tests/isolate/fixtures/structs: the parameter model counts the pointer members the harness
# sets and names them (params "members"), the harness carries their table (offsets, roles; a
# reference parameter's object, a list's links, a lock word) or, for a class with virtual
# functions, the note a fault's detail carries, and every harness compiles with the real nvcc
# (skipped, and said so, where nvcc is absent); tests/e2e/gpu_struct_args.sh runs them on a
# device. Template
# arguments (B4) on tests/isolate/fixtures/launches: a header kernel reached from a unit that
# does not launch it and from one that launches it through a host template is instantiated from
# the launch, whichever unit is stored first. Type parameters used as classes (B4/B5) on
# tests/isolate/fixtures/typeuse: without a launch, each takes the fixture's class declaring the
# members the kernel uses (a vector type for x/y), and every harness compiles with nvcc.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$T_TMP/work
q() { sqlite3 "$W/lscat.db" "$@"; }
dir() { q "SELECT dir FROM kernels WHERE name = '$1'"; }

t_expect isolate_args__struct_fixture_isolates 0 lscat-isolate --work "$W" --path "$ROOT/tests/isolate/fixtures/structs" -j2 -q
t_contains isolate_args__a_matrix_by_value_counts_its_pointer_member "$W/$(dir grid_add)/params.json" '"kind":"struct","bytes":24,"pointer_members":1'
t_contains isolate_args__size_members_take_their_roles "$W/$(dir grid_add)/harness.cu" '{ 2, 0, 8ULL, '"'s'"', 4, '"'x'"', 0, 0, "stride", "stride" },'
t_contains isolate_args__an_array_of_records_gets_element_members "$W/$(dir segment_points)/params.json" '"elem_pointer_members":1'
t_contains isolate_args__a_nested_private_pointer_is_found "$W/$(dir pair_count)/harness.cu" '"buffer", "in.data" }'
t_contains isolate_args__a_virtual_class_is_named "$W/$(dir shape_area)/params.json" '"note":"parameter '"'shapes'"': class Shape has virtual functions'
t_contains isolate_args__the_params_say_what_the_harness_fills "$W/$(dir grid_add)/params.json" '"members":[{"name":"width","role":"width"},{"name":"height","role":"height"},{"name":"stride","role":"stride"},{"name":"elements","role":"buffer"}]'
t_contains isolate_args__a_reference_parameter_is_a_reference "$W/$(dir count_by_ref)/params.json" '"kind":"reference","elem":"Counter","const":false,"elem_bytes":16,"template_dependent":false,"elem_pointer_members":1'
t_contains isolate_args__a_reference_parameter_members_are_set_in_its_object "$W/$(dir count_by_ref)/harness.cu" '{ 0, 1, 8ULL, '"'p'"', 8, '"'f'"', 4, 0, "buffer", "samples" },'
t_contains isolate_args__a_list_link_chains_the_array "$W/$(dir walk_list)/harness.cu" '{ 0, 1, 8ULL, '"'n'"', 8, '"'x'"', 16, 0, "next", "next" },'
t_contains isolate_args__a_lock_word_is_a_lock "$W/$(dir locked_add)/harness.cu" '{ 0, 0, 0ULL, '"'p'"', 8, '"'s'"', 4, 0, "lock", "mutex" },'

# -j1: a.cu (no launch) is stored first; b.cu's instantiation from its launch replaces it.
WL=$T_TMP/launches
t_expect isolate_args__launch_fixture_isolates 0 lscat-isolate --work "$WL" --path "$ROOT/tests/isolate/fixtures/launches" -j1 -q
got=$(sqlite3 "$WL/lscat.db" "SELECT name || template_args || ' ' || (SELECT count(*) FROM kernel_occurrences o WHERE o.kernel_id = k.id) FROM kernels k" | tr '\n' ' ')
if [ "$got" = "apply_op<float, Twice> 1 " ] && [ "$(find "$WL/kernels" -mindepth 2 -maxdepth 2 -type d | wc -l)" = 1 ]; then
    t_ok isolate_args__a_launch_through_a_host_template_wins_over_a_unit_without_one
else t_fail isolate_args__a_launch_through_a_host_template_wins_over_a_unit_without_one "got '$got', folders: $(find "$WL/kernels" -mindepth 2 -maxdepth 2 -type d | wc -l)"; fi

NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
if [ ! -x "$NVCC" ]; then
    t_skip isolate_args__every_harness_compiles_with_nvcc "nvcc not found ($NVCC)"
else
    B=$T_TMP/nvcc; mkdir -p "$B"
    q "SELECT name || ' ' || dir FROM kernels" > "$B/list"
    export NVCC ROOT W B
    xargs -P 2 -L 1 sh -c 'cd "$W/$1" && "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" -c harness.cu -o "$B/$0.o" >"$B/$0.log" 2>&1 || echo "$0"' < "$B/list" > "$B/failed"
    if [ -s "$B/failed" ] || [ "$(wc -l < "$B/list")" -ne 7 ]; then
        t_fail isolate_args__every_harness_compiles_with_nvcc "$(tr '\n' ' ' < "$B/failed"): $(cat "$B/$(head -1 "$B/failed").log" | grep -m3 error)"
    else t_ok isolate_args__every_harness_compiles_with_nvcc; fi
fi
WT=$T_TMP/typeuse
t_expect isolate_args__typeuse_fixture_isolates 0 lscat-isolate --work "$WT" --path "$ROOT/tests/isolate/fixtures/typeuse" -j1 -q
got=$(sqlite3 "$WT/lscat.db" "SELECT name || template_args FROM kernels ORDER BY name" | tr '\n' ' ')
want="flag<Flags> halve<float2> keep<float> mapk<Twice> rowcopy<Reader<float>, Writer> "
if [ "$got" = "$want" ]; then t_ok isolate_args__type_parameters_take_the_classes_whose_members_the_kernel_uses
else t_fail isolate_args__type_parameters_take_the_classes_whose_members_the_kernel_uses "got '$got', want '$want'"; fi
if [ ! -x "$NVCC" ]; then
    t_skip isolate_args__every_typeuse_harness_compiles_with_nvcc "nvcc not found ($NVCC)"
else
    B=$T_TMP/nvcc-typeuse; mkdir -p "$B"
    sqlite3 "$WT/lscat.db" "SELECT name || ' ' || dir FROM kernels" > "$B/list"
    export B WT
    xargs -P 2 -L 1 sh -c 'cd "$WT/$1" && "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" -c harness.cu -o "$B/$0.o" >"$B/$0.log" 2>&1 || echo "$0"' < "$B/list" > "$B/failed"
    if [ -s "$B/failed" ] || [ "$(wc -l < "$B/list")" -ne 5 ]; then
        t_fail isolate_args__every_typeuse_harness_compiles_with_nvcc "$(tr '\n' ' ' < "$B/failed"): $(grep -m3 error "$B/$(head -1 "$B/failed").log")"
    else t_ok isolate_args__every_typeuse_harness_compiles_with_nvcc; fi
fi
t_done
