# tune/: the timing core (timing.cu + stats.c, linked into every harness), the sweep engine
# and `lscat tune`. CPU parts build with cc everywhere; the CUDA parts (lscat-gpuinfo, the GPU
# tests and their fixture harnesses) only where nvcc exists, else they are listed in SKIPPED.
NVCC_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_75,code=compute_75
NVCC_FLAGS := -O2 -std=c++17 $(NVCC_ARCH) -I. -Xcompiler -Wall,-Wextra,-Werror

# The timing core's sources, listed once: every harness build compiles them (execute/build.c
# hashes this list, passed as -DLSCAT_TIMING_CORE_FILES), make install ships them, and the
# objects below depend on them.
TIMING_CORE_SRCS := tune/timing.h tune/timing.cu tune/stats.c tune/nvml_dl.h

TUNE_OBJS := $(B)/tune/chunkstore.o $(B)/tune/stats.o $(B)/tune/space.o $(B)/tune/runner.o $(B)/tune/runner_host.o \
             $(B)/tune/runner_proc.o \
             $(B)/tune/gpus.o $(B)/tune/plan.o $(B)/tune/sweep.o $(B)/tune/bonsai.o \
             $(B)/tune/usersweep.o $(B)/tune/usersweep_build.o $(B)/tune/usersweep_out.o \
             $(B)/tune/timing_args.o
$(B)/libtune.a: $(TUNE_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
TUNE_LIBS := $(B)/libtune.a $(B)/libstore.a $(B)/libcommon.a -lsqlite3 -ljansson -ldl

PROGRAMS += $(B)/bin/lscat-tune
$(B)/bin/lscat-tune: $(B)/tune/cmd.o $(B)/libtune.a $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(TUNE_LIBS) $(LDLIBS)

# lscat-sweep: a user's kernel + driver over a BONSAI space. Its builds compile
# tune/sweep_host.cu and the timing core from the source tree (or <prefix>/share/lscat).
$(B)/tune/usersweep_build.o: CPPFLAGS += -DLSCAT_SOURCE_DIR='"$(CURDIR)"'
PROGRAMS += $(B)/bin/lscat-sweep
$(B)/bin/lscat-sweep: $(B)/tune/sweep_cmd.o $(B)/libtune.a $(B)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(B)/libtune.a $(B)/libcommon.a $(LDLIBS)

install: install-sweep-share
.PHONY: install-sweep-share
install-sweep-share: all
	install -d $(DESTDIR)$(PREFIX)/share/lscat/tune
	install -m 0644 tune/sweep_host.cu tune/sweep_driver.h $(DESTDIR)$(PREFIX)/share/lscat/tune/

# lscat-runner: the long-lived harness host (one per GPU; it dlopens harness.so files). Host-only
# C that loads libcuda at run time, so it builds and runs (with --no-cuda) where there is no
# CUDA too. Built without sanitizers, like the stand-ins below: it runs harness code, whose
# crashes must be real signals, and ASan's shadow memory clashes with CUDA's mappings.
PROGRAMS += $(B)/bin/lscat-runner
$(B)/bin/lscat-runner: tune/runnerd.c tune/nvml_dl.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -std=c11 -O2 -g -Wall -Wextra -Werror -o $@ $< -ldl

TEST_DIRS += tune
TEST_LIBS_tune := $(TUNE_LIBS)

# Stand-ins for CPU-only tests: a harness speaking the protocol that crashes/hangs on chosen
# configurations, and an NVML that refuses to lock clocks. Built without sanitizers: their
# crashes must be real signals, as a harness's are.
TUNE_TEST_HELPERS := $(B)/tests/tune/support/fake_harness $(B)/tests/tune/support/fake_harness.so \
                     $(B)/tests/tune/support/libfake_nvml.so
$(B)/tests/tune/support/fake_harness: tests/tune/support/fake_harness.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -std=c11 -O2 -Wall -Wextra -Werror -o $@ $<
$(B)/tests/tune/support/fake_harness.so: tests/tune/support/fake_harness.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DFAKE_HARNESS_SO -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -o $@ $<
$(B)/tests/tune/support/libfake_nvml.so: tests/tune/support/fake_nvml.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -o $@ $<
TEST_PROGRAMS += $(TUNE_TEST_HELPERS)

ifneq ($(NVCC)$(filter 1,$(SANITIZE)),)
ifeq ($(SANITIZE),1)
# CUDA programs are not built under sanitizers (ASan's shadow memory and CUDA's mappings clash).
SKIPPED += lscat-gpuinfo tune-gpu-tests tune-fixture-harnesses
else
# Position-independent: also linked into the fixtures' harness.so (lscat-runner loads them).
$(B)/tune/timing.cu.o: tune/timing.cu $(TIMING_CORE_SRCS)
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_FLAGS) -Xcompiler -fPIC -c $< -o $@
# Host-only stats for nvcc links (no sanitizer runtime in CUDA programs).
$(B)/tune/stats.cu-host.o: tune/stats.c $(TIMING_CORE_SRCS)
	@mkdir -p $(@D)
	$(NVCC) -O2 -I. -Xcompiler -fPIC -x c -c $< -o $@
TIMING_CORE := $(B)/tune/timing.cu.o $(B)/tune/stats.cu-host.o

PROGRAMS += $(B)/bin/lscat-gpuinfo
$(B)/bin/lscat-gpuinfo: tune/gpuinfo.cu $(TIMING_CORE)
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_FLAGS) -o $@ $< $(TIMING_CORE)

# GPU tests (programs named gpu_*, run by `make test-gpu`; they skip without a device).
TUNE_GPU_TESTS := $(patsubst tests/tune/%.cu,$(B)/tests/tune/%,$(wildcard tests/tune/gpu_*.cu))
$(B)/tests/tune/gpu_%: tests/tune/gpu_%.cu $(TIMING_CORE) $(B)/libtest.a $(B)/libcommon.a
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_FLAGS) -o $@ $< $(TIMING_CORE) $(B)/libtest.a $(B)/libcommon.a -lm
# Fixture kernels: a folder per kernel with harness.cu, built like execute builds harnesses.
TUNE_FIXTURES := $(patsubst tests/tune/fixtures/%/harness.cu,$(B)/tests/tune/fixtures/%/harness,\
                   $(wildcard tests/tune/fixtures/*/harness.cu))
# As execute builds them: one PIC object linked as the executable and as harness.so.
$(B)/tests/tune/fixtures/%/harness.o: tests/tune/fixtures/%/harness.cu \
                                      tests/tune/fixtures/harness_main.h tune/timing.h
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_FLAGS) -Xcompiler -fPIC -c $< -o $@
$(B)/tests/tune/fixtures/%/harness: $(B)/tests/tune/fixtures/%/harness.o $(TIMING_CORE)
	$(NVCC) $(NVCC_FLAGS) -o $@ $^
$(B)/tests/tune/fixtures/%/harness.so: $(B)/tests/tune/fixtures/%/harness.o $(TIMING_CORE)
	$(NVCC) $(NVCC_FLAGS) -shared -Xlinker -Bsymbolic -o $@ $^
TEST_PROGRAMS += $(TUNE_GPU_TESTS) $(TUNE_FIXTURES) $(TUNE_FIXTURES:%=%.so)
endif
else
SKIPPED += lscat-gpuinfo tune-gpu-tests tune-fixture-harnesses
endif

# lscat-mpi: `lscat execute|tune|sweep --mpi` under mpirun (the dispatcher execs it on --mpi).
# The only stage-side program that links libmpi (built with mpicc where Open MPI is installed);
# it runs the stages' own programs as children, so nothing else changes.
MPICC ?= $(shell command -v mpicc)
ifneq ($(MPICC),)
TUNE_MPI_OBJS := $(B)/tune/mpi_cmd.o $(B)/tune/mpi_serve.o $(B)/tune/mpi_work.o \
                 $(B)/tune/mpi_merge.o
$(TUNE_MPI_OBJS): $(B)/tune/mpi_%.o: tune/mpi_%.c
	@mkdir -p $(@D)
	OMPI_CC=$(CC) $(MPICC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
$(TUNE_MPI_OBJS): | $(B)/gen/schema.c
PROGRAMS += $(B)/bin/lscat-mpi
$(B)/bin/lscat-mpi: $(TUNE_MPI_OBJS) $(B)/libtune.a $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(@D)
	OMPI_CC=$(CC) $(MPICC) $(LDFLAGS) -o $@ $(TUNE_MPI_OBJS) $(TUNE_LIBS) $(LDLIBS)
else
SKIPPED += lscat-mpi
endif
