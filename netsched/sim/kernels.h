/* The simulator's per-step kernels (kernels.c), for netsched/sim.

   This header is the one statement of their signatures: kernels.c
   includes it, so the compiler checks the definitions against it, and
   netsched/build_kernels.py gives it to CFFI as the declarations of the
   Python module netsched.sim._kernels (CFFI reads it without its
   preprocessor lines). Each function is described at its definition. */
#ifndef NETSCHED_SIM_KERNELS_H
#define NETSCHED_SIM_KERNELS_H

#include <stdint.h>

int64_t ns_flow_lines(int64_t n, const char *head, int64_t hlen,
                      const int64_t *ids, const int64_t *cof,
                      const int64_t *src, const int64_t *dst,
                      const double *size, const double *start,
                      const char *qnames, const int64_t *qoff,
                      const char *hosts, const int64_t *hoff, char *out);

int64_t ns_util_text(int64_t n, const int64_t *idx, const double *util,
                     const char *names, const int64_t *off, char *out);

int ns_coflow_sum(int64_t F, int64_t C, const int64_t *cof,
                  const double *v, double *out, int64_t *count);

int ns_coflow_count(int64_t F, int64_t C, const int64_t *cof, int64_t *out);

int ns_port_bytes(int64_t F, int64_t H, int64_t P, int64_t C, int64_t L,
                  const int64_t *pt, const int64_t *path,
                  const int64_t *cof, const double *v, double *out);

void ns_send(int64_t F, const double *rate, double *rem, const int64_t *cof,
             double dt, double *acc);

int64_t ns_send_done(int64_t F, const double *rate, double *rem,
                     const int64_t *cof, double dt, double *acc,
                     const double *start, double now, double rel_tol,
                     double resolution, int64_t *done_pos, double *rs);

void ns_add_bytes(int64_t L, const double *load, double dt, double *bins);

int ns_first_finish(int64_t F, const double *rate, const double *rem,
                    double *out);

int64_t ns_done(int64_t F, const double *rem, const double *rate,
                const double *start, double now, double rel_tol,
                double resolution, int64_t *done_pos);

void ns_compact(int64_t F, int64_t nd, const int64_t *done_pos,
                int64_t ncol, int64_t **col);

#endif
