-- lscat store, schema v3: how a measurement's samples launched the kernel. Since v3 the timing
-- core captures a sample of several launches into a CUDA graph of up to 128 launches and
-- launches that graph (tune/timing.h): the host then never delays the GPU between short kernels,
-- and consecutive kernels start with less launch latency between them. graph_nodes is the number
-- of launches in that graph (a sample is launches_per_sample / graph_nodes graph launches);
-- 0 = launched one by one from the host (one launch per sample, `LSCAT_TIMING_GRAPH=0`, or a
-- launch that cannot be captured); NULL = measured before v3 (one by one) or not reported.
ALTER TABLE measurements ADD COLUMN graph_nodes INTEGER;
