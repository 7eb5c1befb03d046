/* The rate allocation's kernels (kernels.c), for fluid/__init__.py.

   This header is the one statement of their signatures: kernels.c
   includes it, so the compiler checks the definitions against it, and
   netsched/build_kernels.py gives it to CFFI as the declarations of the
   Python module netsched.fluid._kernels (CFFI reads it without its
   preprocessor lines). Each function is described at its definition. */
#ifndef NETSCHED_FLUID_KERNELS_H
#define NETSCHED_FLUID_KERNELS_H

#include <stdint.h>

int ns_maxmin(int64_t F, int64_t H, int64_t L, int64_t P, const int64_t *pt,
              const int64_t *fpath, const int64_t *key,
              const int64_t *order_in, double *res, const double *cap,
              double rel_tol, double *rate, const double *rem,
              double *first, const double *add, int addx);

int ns_reserve(int64_t F, int64_t H, int64_t L, int64_t P,
               const int64_t *pt, const int64_t *fpath, const double *x,
               const double *cap, double *res, double *rate, double *load,
               double *over);

#endif
