#ifndef REDUCE_H
#define REDUCE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Sum of n floats already on the device; returns the result on the host. */
float reduce_sum(const float *d_in, int n);

#ifdef __cplusplus
}
#endif

#endif
