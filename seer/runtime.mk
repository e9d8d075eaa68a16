# Builds libseer_select.a from the trees lscat seer train wrote into this folder.
#   make                      (nvcc from $CUDA_HOME/bin or PATH)
#   cc/nvcc your.c -I. -L. -lseer_select -lcudart
CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(shell test -x $(CUDA_HOME)/bin/nvcc && echo $(CUDA_HOME)/bin/nvcc || echo nvcc)
NVCC_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_75,code=compute_75

libseer_select.a: seer_select.o
	ar rcs $@ $^
seer_select.o: seer_select.cu seer_select.h seer_features.cuh seer_derived.h seer_classes.h \
               seer_known.h seer_gathered.h seer_selector.h
	$(NVCC) -O2 -std=c++17 $(NVCC_ARCH) -Xcompiler -fPIC -c $< -o $@
clean:
	rm -f seer_select.o libseer_select.a
