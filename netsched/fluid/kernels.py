"""Compiled kernels for the simulator's hot loops, with the numpy code
they replace as the fallback.

The rate allocation (:func:`fluid.allocate`) is progressive filling: a
loop of rounds, each freezing the links with the smallest fair share.
In numpy every round costs a score of array calls whatever its size, and
the Facebook trace needs a few hundred rounds at each of its 9,000
allocations; a C loop does a round in microseconds. The kernels do the
same floating-point operations in the same order as the numpy code (no
fused multiply-add, no reassociation: ``-ffp-contract=off``, no
``-ffast-math``), so they give the same bits, and the simulator's event
logs stay identical (tests/unit/test_kernels.py checks them against the
numpy path on random inputs; benchmarks/sim_identity.py on whole runs).

The C source below is compiled on first use with the system's C
compiler (``$CC``, else ``cc``) into a per-user cache
(``$NETSCHED_CACHE``, else ``$XDG_CACHE_HOME/netsched``, else
``~/.cache/netsched``) and loaded with ctypes: nothing to install, and a
machine without a compiler runs the numpy path (same results, slower).
``NETSCHED_KERNELS=off`` in the environment netsched starts in forces
the numpy path (tests set ``kernels.OFF``).
"""
import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading

import numpy as np

SOURCE = r'''
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

/* Work arrays of one allocation: per link (L), per path (P), per flow
   (F); groups (a level's live flows of one path) number at most F. */
typedef struct {
    double *n;           /* live flows per link (zero between levels) */
    int64_t *off, *end;  /* a link's slice of lst */
    int64_t *used, *full;
    char *isfull;
    int64_t *live;       /* the level's live flows */
    int64_t nlive;
    int64_t *fgroup;     /* each live flow's group, in step */
    int64_t *gidx;       /* path -> its group in this level, -1: none */
    int64_t *gpath;      /* group -> path */
    int64_t *gl;         /* group -> its links, H each (a copy: read in
                            order, not gathered from the path table) */
    double *gw;          /* group -> its flows */
    double *grate;       /* group -> rate */
    int64_t ng;
    int64_t *glive;      /* groups not yet frozen */
    int64_t nglive;
    int64_t *lst;        /* groups per link, ng * H */
    char *active;        /* per group: not yet frozen */
    int csr;             /* freezing through lst (else by scanning) */
    int64_t H;
    const int64_t *pt;
    const double *add;   /* per flow, added to its rate (or NULL) */
    int addx;            /* add holds explicit rates: only 0 < x < inf */
    const double *rem;   /* per flow, bytes left (or NULL) */
} work;

/* A flow's rate: the filling's r plus its reservation where there is
   one (fluid's rate + reserved, in that order), and with rem its finish
   time taken into the soonest (ns_first_finish's). */
static inline void put_rate(int64_t f, double r, double *rate, double *first,
                            int *moving, const work *w)
{
    if (w->add) {
        double a = w->add[f];
        if (w->addx && !(a > 0 && a < INFINITY))
            a = 0.0;                /* reserved nothing */
        r = r + a;
    }
    rate[f] = r;
    if (w->rem && r > 0) {
        double t = w->rem[f] * 8.0 / r;
        if (!*moving || t < *first) {
            *first = t;
            *moving = 1;
        }
    }
}

/* The groups left are indexed by link (lst) rather than scanned at every
   round once a round has frozen less than half of those it scanned, or
   after SCAN_ROUNDS rounds: a level filled in a round or two (a coflow
   under strict priority) never pays for the index, one with many
   bottlenecks (all flows fair) builds it after its first round. */
#define SCAN_ROUNDS 3

/* A group frozen at the level: its rate, and it leaves its links'
   counts. */
static inline void freeze(int64_t g, double level, work *w)
{
    const int64_t *p = w->gl + g * w->H;
    w->grate[g] = level;
    for (int64_t h = 0; h < w->H; h++)
        if (p[h] >= 0)
            w->n[p[h]] -= w->gw[g];
}

/* Freezing by scanning: every live group crossing a full link is
   frozen; the others stay, in order. */
static void freeze_scan(double level, work *w)
{
    int64_t k, h, keep = 0, H = w->H;
    for (k = 0; k < w->nglive; k++) {
        int64_t g = w->glive[k];
        const int64_t *p = w->gl + g * H;
        for (h = 0; h < H; h++)
            if (p[h] >= 0 && w->isfull[p[h]])
                break;
        if (h == H)
            w->glive[keep++] = g;
        else
            freeze(g, level, w);
    }
    w->nglive = keep;
}

/* Freezing through the index: the groups on link l still live. */
static void freeze_link(int64_t l, double level, work *w)
{
    for (int64_t j = w->off[l]; j < w->end[l]; j++) {
        int64_t g = w->lst[j];
        if (!w->active[g])
            continue;
        w->active[g] = 0;
        freeze(g, level, w);
    }
}

/* The live groups indexed by link: every link of a live group has a
   live count, so it is among used[0..nused). */
static void index_links(int64_t nused, work *w)
{
    int64_t i, k, h, H = w->H, acc = 0;
    for (i = 0; i < nused; i++)
        w->off[w->used[i]] = 0;
    /* (only live groups enter lst: the frozen ones' flags are not read) */
    for (k = 0; k < w->nglive; k++) {
        const int64_t *p = w->gl + w->glive[k] * H;
        w->active[w->glive[k]] = 1;
        for (h = 0; h < H; h++)
            if (p[h] >= 0)
                w->off[p[h]]++;
    }
    for (i = 0; i < nused; i++) {
        int64_t l = w->used[i], c = w->off[l];
        w->off[l] = w->end[l] = acc;
        acc += c;
    }
    for (k = 0; k < w->nglive; k++) {
        const int64_t *p = w->gl + w->glive[k] * H;
        for (h = 0; h < H; h++)
            if (p[h] >= 0)
                w->lst[w->end[p[h]]++] = w->glive[k];
    }
    w->csr = 1;
}

/* The rounds of progressive filling over the links used[0..nused)
   (live counts in n): every round the smallest share over them, added to
   the level; the links within rel_tol of full (and the one with that
   share) are full, and the groups crossing them are frozen at the level
   and leave the other links' counts. fluid's _fill, operation for
   operation (its groups are a level's flows of one path; the counts are
   sums of whole numbers, exact in any order). */
static void rounds(int64_t nused, double *res, const double *cap,
                   double rel_tol, work *w)
{
    int64_t i, nr = 0;
    double level = 0.0;
    w->csr = 0;
    while (nused > 0) {
        /* the smallest share; ties: the lowest link index (numpy's
           argmin over links in index order) */
        int64_t bl = -1;
        double bs = 0.0;
        for (i = 0; i < nused; i++) {
            int64_t l = w->used[i];
            double s = res[l] / w->n[l];
            if (bl < 0 || s < bs || (s == bs && l < bl)) {
                bs = s;
                bl = l;
            }
        }
        double inc = (0.0 > bs) ? 0.0 : bs;
        level += inc;
        int64_t nf = 0;
        for (i = 0; i < nused; i++) {
            int64_t l = w->used[i];
            res[l] -= inc * w->n[l];
            if (res[l] <= rel_tol * cap[l]) {
                w->full[nf++] = l;
                w->isfull[l] = 1;
            }
        }
        if (!w->isfull[bl]) {               /* numerical guard */
            w->full[nf++] = bl;
            w->isfull[bl] = 1;
        }
        for (i = 0; i < nf; i++)
            res[w->full[i]] = 0.0;
        int64_t scanned = w->nglive;
        if (w->csr)
            for (i = 0; i < nf; i++)
                freeze_link(w->full[i], level, w);
        else
            freeze_scan(level, w);
        for (i = 0; i < nf; i++) {
            w->n[w->full[i]] = 0.0;
            w->isfull[w->full[i]] = 0;
        }
        for (i = 0; i < nused; ) {
            if (w->n[w->used[i]] > 0.5)
                i++;
            else
                w->used[i] = w->used[--nused];
        }
        if (!w->csr && nused > 0 &&
            (++nr >= SCAN_ROUNDS || 2 * w->nglive > scanned))
            index_links(nused, w);
    }
}

/* Flows of the level being filled join it: order[a..b) (order NULL: the
   flows a..b). A flow crossing a link that is already full gets nothing
   (fluid's _by_level); the others are live, grouped by path (fill_level
   gives them their group's rate). */
static void join(const int64_t *order, int64_t a, int64_t b, int64_t H,
                 const int64_t *pt, const int64_t *fpath, const double *res,
                 double *rate, int anyfull, double *first, int *moving,
                 work *w)
{
    int64_t i, h;
    for (i = a; i < b; i++) {
        int64_t f = order ? order[i] : i, p = fpath[f];
        if (anyfull) {
            const int64_t *pl = pt + p * H;
            for (h = 0; h < H; h++)
                if (pl[h] >= 0 && res[pl[h]] <= 0.0)
                    break;
            if (h < H) {
                put_rate(f, 0.0, rate, first, moving, w);
                continue;
            }
        }
        int64_t g = w->gidx[p];
        if (g < 0) {
            g = w->gidx[p] = w->ng++;
            w->gpath[g] = p;
            w->gw[g] = 0.0;
            w->grate[g] = 0.0;
            for (h = 0; h < H; h++)
                w->gl[g * H + h] = pt[p * H + h];
        }
        w->gw[g] += 1.0;
        w->fgroup[w->nlive] = g;
        w->live[w->nlive++] = f;
    }
}

/* The level's live flows filled (fluid's _fill of its groups), each
   given its group's rate; with rem, first gets the smallest rem * 8 /
   rate of those with a rate (ns_first_finish's); then the next level
   starts empty. */
static void fill_level(int64_t H, const int64_t *pt, double *res,
                       const double *cap, double rel_tol, double *rate,
                       double *first, int *moving, work *w)
{
    int64_t nt = 0, g, h, k;
    for (g = 0; g < w->ng; g++) {
        const int64_t *p = w->gl + g * H;
        w->glive[g] = g;
        for (h = 0; h < H; h++) {
            int64_t l = p[h];
            if (l < 0)
                continue;
            if (w->n[l] == 0.0)
                w->used[nt++] = l;
            w->n[l] += w->gw[g];
        }
    }
    w->nglive = w->ng;
    if (nt > 0) {
        w->H = H;
        w->pt = pt;
        rounds(nt, res, cap, rel_tol, w);
    }
    for (k = 0; k < w->nlive; k++)
        put_rate(w->live[k], w->grate[w->fgroup[k]], rate, first, moving, w);
    for (g = 0; g < w->ng; g++)
        w->gidx[w->gpath[g]] = -1;
    w->ng = 0;
    w->nlive = 0;
}

/* One level: the flows order[a..b) (order NULL: the flows a..b). */
static void level(const int64_t *order, int64_t a, int64_t b, int64_t H,
                  const int64_t *pt, const int64_t *fpath, double *res,
                  const double *cap, double rel_tol, double *rate,
                  int anyfull, double *first, int *moving, work *w)
{
    join(order, a, b, H, pt, fpath, res, rate, anyfull, first, moving, w);
    fill_level(H, pt, res, cap, rel_tol, rate, first, moving, w);
}

/* The work arrays, kept from call to call (grown as needed, never
   shrunk): fresh ones would cost page faults at every allocation. n and
   isfull are zero between calls. Not for concurrent callers (kernels.py
   holds a lock). */
static work W;
static int64_t capL = 0, capP = 0, capF = 0, capH = 0, capK = 0;
static int64_t *S_order = NULL, *S_count = NULL;

/* Flows that come in at most MAX_RUNS runs of equal keys (a coflow's
   flows are together) are filled run by run, the runs of a key in flow
   order: no sort, no order array. R_start: where each run starts. */
#define MAX_RUNS 256
static int64_t R_start[MAX_RUNS + 1], R_by[MAX_RUNS];

static int grow(void **p, int64_t n, size_t item)
{
    void *q = realloc(*p, (n > 0 ? n : 1) * item);
    if (!q)
        return 0;
    *p = q;
    return 1;
}

static int reserve(int64_t L, int64_t P, int64_t F, int64_t H, int64_t K)
{
    int64_t i;
    if (L > capL) {
        int64_t n = L + L / 2;
        if (!grow((void **)&W.n, n, sizeof(double)) ||
            !grow((void **)&W.off, n, sizeof(int64_t)) ||
            !grow((void **)&W.end, n, sizeof(int64_t)) ||
            !grow((void **)&W.used, n, sizeof(int64_t)) ||
            !grow((void **)&W.full, n, sizeof(int64_t)) ||
            !grow((void **)&W.isfull, n, 1))
            return 0;
        for (i = capL; i < n; i++) {
            W.n[i] = 0.0;
            W.isfull[i] = 0;
        }
        capL = n;
    }
    if (P > capP) {
        int64_t n = P + P / 2;
        if (!grow((void **)&W.gidx, n, sizeof(int64_t)))
            return 0;
        for (i = capP; i < n; i++)
            W.gidx[i] = -1;
        capP = n;
    }
    if (F > capF || H > capH) {
        int64_t n = F + F / 2, h = H > capH ? H : capH;
        if (!grow((void **)&W.lst, n * h + 1, sizeof(int64_t)) ||
            !grow((void **)&W.active, n, 1) ||
            !grow((void **)&W.live, n, sizeof(int64_t)) ||
            !grow((void **)&W.fgroup, n, sizeof(int64_t)) ||
            !grow((void **)&W.gpath, n, sizeof(int64_t)) ||
            !grow((void **)&W.gw, n, sizeof(double)) ||
            !grow((void **)&W.grate, n, sizeof(double)) ||
            !grow((void **)&W.glive, n, sizeof(int64_t)) ||
            !grow((void **)&W.gl, n * h + 1, sizeof(int64_t)) ||
            !grow((void **)&S_order, n, sizeof(int64_t)))
            return 0;
        capF = n;
        capH = h;
    }
    if (K + 1 > capK) {
        int64_t n = K + 1 + K / 2;
        if (!grow((void **)&S_count, n, sizeof(int64_t)))
            return 0;
        capK = n;
    }
    return 1;
}

/* Strict priority levels (ascending key), max-min fair inside each:
   fluid's allocate after its explicit reservations. pt: (P, H) path
   table, -1 padded; res: (L,) residual capacity, reduced in place; rate:
   (F,) out. order: the flows sorted by key (stable), or NULL to sort
   them here by counting (returns 1 if the keys' range is too wide for
   that: the caller sorts); -1 if out of memory; 2 if a path id is
   outside pt (then order must be NULL: the first call checks). Flows
   already in key order, or in at most MAX_RUNS runs of equal keys (the
   simulator keeps a coflow's flows together), are taken as they are.
   rem (or NULL): the flows' bytes left; first (or NULL) then gets {1,
   the smallest rem * 8 / rate of the flows with a rate} ({0, 0} if none
   has one): ns_first_finish of the rates, made as they are. add (or
   NULL): per flow, added to its rate before that (the reservations
   ns_reserve made), without a pass of its own; with addx, add holds the
   explicit rates themselves, each added where 0 < x < inf (0 elsewhere:
   ns_reserve's rates where it scaled none). */
int ns_maxmin(int64_t F, int64_t H, int64_t L, int64_t P, const int64_t *pt,
              const int64_t *fpath, const int64_t *key,
              const int64_t *order_in, double *res, const double *cap,
              double rel_tol, double *rate, const double *rem,
              double *first, const double *add, int addx)
{
    int64_t i, K = 0, kmin = 0, nr = 0;
    const int64_t *order = order_in;
    int sorted = 0;
    if (F == 0)
        return 0;
    if (order == NULL) {
        int64_t kmax = key[0];
        int bad = 0;
        kmin = key[0];
        sorted = 1;
        for (i = 0; i < F; i++) {
            if (key[i] < kmin) kmin = key[i];
            if (key[i] > kmax) kmax = key[i];
            bad |= fpath[i] < 0 || fpath[i] >= P;
            sorted &= i == 0 || key[i] >= key[i - 1];
            if (i == 0 || key[i] != key[i - 1]) {
                if (nr < MAX_RUNS)
                    R_start[nr] = i;
                nr++;
            }
        }
        if (bad)                            /* would read past pt */
            return 2;
        if (!sorted && nr > MAX_RUNS && kmax - kmin > 4 * F + 65536)
            return 1;
        K = sorted || nr <= MAX_RUNS ? 0 : kmax - kmin + 1;
    }
    if (!reserve(L, P, F, H, K))
        return -1;
    W.add = add;
    W.addx = addx;
    W.rem = first ? rem : NULL;
    /* with rem: first = {1, ns_first_finish's time} if a flow moves,
       else {0, 0} */
    int moving = 0;
    double soonest = 0.0;
    if (first) {
        first[0] = 0.0;
        first[1] = 0.0;
    }
    /* whether some link is full: before the first level, one with
       flows on it fills at least one (the numerical guard) */
    int anyfull = 0;
    for (i = 0; i < L && !anyfull; i++)
        anyfull = res[i] <= 0.0;
    if (order == NULL && !sorted && nr <= MAX_RUNS) {
        /* the runs in key order (insertion sort by key, stable), each
           key's runs one level */
        int64_t j, m;
        R_start[nr] = F;
        for (j = 0; j < nr; j++) {
            int64_t r = j, kr = key[R_start[j]];
            for (m = j; m > 0 && key[R_start[R_by[m - 1]]] > kr; m--)
                R_by[m] = R_by[m - 1];
            R_by[m] = r;
        }
        for (j = 0; j < nr; ) {
            int64_t k = key[R_start[R_by[j]]];
            for (; j < nr && key[R_start[R_by[j]]] == k; j++)
                join(NULL, R_start[R_by[j]], R_start[R_by[j] + 1], H, pt,
                     fpath, res, rate, anyfull, &soonest, &moving, &W);
            fill_level(H, pt, res, cap, rel_tol, rate, &soonest, &moving,
                       &W);
            anyfull = 1;
        }
        if (first) {
            first[0] = moving;
            first[1] = soonest;
        }
        return 0;
    }
    if (order == NULL && !sorted) {
        /* sorted by counting; each key's flows are then the slice
           o[end of the key before .. count[k]) */
        int64_t *count = S_count, *o = S_order, a = 0, k;
        for (i = 0; i <= K; i++)
            count[i] = 0;
        for (i = 0; i < F; i++)
            count[key[i] - kmin + 1]++;
        for (i = 0; i < K; i++)
            count[i + 1] += count[i];
        for (i = 0; i < F; i++)
            o[count[key[i] - kmin]++] = i;
        for (k = 0; k < K; k++) {
            if (count[k] == a)
                continue;
            level(o, a, count[k], H, pt, fpath, res, cap, rel_tol, rate,
                  anyfull, &soonest, &moving, &W);
            anyfull = 1;
            a = count[k];
        }
        if (first) {
            first[0] = moving;
            first[1] = soonest;
        }
        return 0;
    }
    int64_t a = 0;
    while (a < F) {
        int64_t b = a + 1;
        if (order)
            while (b < F && key[order[b]] == key[order[a]])
                b++;
        else
            while (b < F && key[b] == key[a])
                b++;
        level(order, a, b, H, pt, fpath, res, cap, rel_tol, rate, anyfull,
              &soonest, &moving, &W);
        anyfull = 1;
        a = b;
    }
    if (first) {
        first[0] = moving;
        first[1] = soonest;
    }
    return 0;
}

/* fluid.allocate's explicit reservations, operation for operation. The
   flows with 0 < x < inf reserve x, scaled down where the reservations
   would exceed a link: load per link summed in (flow, hop) order (numpy's
   bincount; a -1 hop counts on the dummy link L), over = cap / load where
   load > cap (else 1; the dummy's 1), each flow's factor the smallest
   over its hops (np.minimum's NaN rule), e = x * factor; then res = the
   larger of cap - load and 0 (np.maximum's rule) over the scaled
   reservations, res[L] = inf, and rate = 0 + e (0 elsewhere). cap, res,
   load, over: L + 1 each; rate: F. Returns 1 (nothing to use) if a path
   id or a link index is out of range; 3 if no link was over its capacity
   (res made, rate not written: each flow's is its x where 0 < x < inf,
   else 0, which ns_maxmin's addx adds). */
int ns_reserve(int64_t F, int64_t H, int64_t L, int64_t P,
               const int64_t *pt, const int64_t *fpath, const double *x,
               const double *cap, double *res, double *rate, double *load,
               double *over)
{
    int64_t i, h, l;
    for (l = 0; l <= L; l++)
        load[l] = 0.0;
    /* only the flows with a reservation read the path table (the
       filling checks every flow's path id) */
    for (i = 0; i < F; i++)
        if (x[i] > 0 && x[i] < INFINITY) {
            if (fpath[i] < 0 || fpath[i] >= P)
                return 1;
            const int64_t *p = pt + fpath[i] * H;
            for (h = 0; h < H; h++) {
                if (p[h] >= L)
                    return 1;
                load[p[h] >= 0 ? p[h] : L] += x[i];
            }
        }
    /* no link over its capacity (MADD's rates fit by design): every
       factor is 1, so e = x and the second pass would add the same
       loads in the same order; the rates are then x where 0 < x < inf,
       which ns_maxmin adds itself (addx), and rate is not written */
    int fits = 1;
    for (l = 0; l < L; l++)
        fits &= !(load[l] > cap[l]);
    if (fits) {
        for (l = 0; l < L; l++) {
            double d = cap[l] - load[l];
            res[l] = (d >= 0.0 || d != d) ? d : 0.0;
        }
        res[L] = INFINITY;
        return 3;
    }
    for (l = 0; l <= L; l++)
        over[l] = load[l] > cap[l] ? cap[l] / load[l] : 1.0;
    over[L] = 1.0;
    for (l = 0; l <= L; l++)
        load[l] = 0.0;
    for (i = 0; i < F; i++) {
        if (!(x[i] > 0 && x[i] < INFINITY)) {
            rate[i] = 0.0;
            continue;
        }
        const int64_t *p = pt + fpath[i] * H;
        double f = 1.0;
        if (H > 0) {
            f = over[p[0] >= 0 ? p[0] : L];
            for (h = 1; h < H; h++) {
                double o = over[p[h] >= 0 ? p[h] : L];
                f = (f <= o || f != f) ? f : o;
            }
        }
        double e = x[i] * f;
        for (h = 0; h < H; h++)
            load[p[h] >= 0 ? p[h] : L] += e;
        rate[i] = 0.0 + e;
    }
    for (l = 0; l <= L; l++) {
        double d = cap[l] - load[l];
        res[l] = (d >= 0.0 || d != d) ? d : 0.0;
    }
    res[L] = INFINITY;
    return 0;
}

/* The text Python's repr(round(u, 6)) gives, for 0 < u < 2^32, into buf
   (at least 32 bytes); returns its length, or -1 for any other u (then
   Python's own is used). round(u, 6) is the double nearest the correctly
   rounded 6-decimal text of u, which printf's "%.6f" gives (both round
   the exact binary value, ties to even); below 2^32 two such texts are
   further apart than the double's spacing, so repr's shortest text is
   that one without its trailing zeros, in repr's notation: "1.0" for an
   integer, exponent form below 1e-4 ("1.2e-05", "5e-06"; 0 is "0.0"). */
/* x as "%.<places>f" (the correctly rounded text) into s (48 bytes):
   its length, the point's position in *dot; -1 where the text is not
   "I...I.d...d". */
static int fixed(double x, int places, char *s, int *dot)
{
    int n = snprintf(s, 48, "%.*f", places, x);
    if (n < places + 2 || n >= 48)
        return -1;
    *dot = n - places - 1;
    return s[*dot] == '.' ? n : -1;
}

/* s[0 .. n) without its trailing zeros (one decimal kept) into buf. */
static int stripped(const char *s, int n, int dot, char *buf)
{
    while (n > dot + 2 && s[n - 1] == '0')
        n--;
    memcpy(buf, s, n);
    return n;
}

static int repr_round6(double u, char *buf)
{
    char s[48];
    int n, i, dot;
    if (!(u > 0.0 && u < 4294967296.0))
        return -1;
    if ((n = fixed(u, 6, s, &dot)) < 0)
        return -1;
    if (dot == 1 && s[0] == '0' && s[2] == '0' && s[3] == '0' &&
        s[4] == '0' && s[5] == '0') {
        /* below 1e-4 after rounding: 0.0000ab */
        char a = s[6], b = s[7];
        if (a == '0' && b == '0') {
            memcpy(buf, "0.0", 3);
            return 3;
        }
        i = 0;
        if (a != '0') {
            buf[i++] = a;
            if (b != '0') {
                buf[i++] = '.';
                buf[i++] = b;
            }
            memcpy(buf + i, "e-05", 4);
        } else {
            buf[i++] = b;
            memcpy(buf + i, "e-06", 4);
        }
        return i + 4;
    }
    return stripped(s, n, dot, buf);
}

/* The text Python's repr(round(x, 9)) gives, for 0 <= x < 2^22, into
   buf (at least 32 bytes); returns its length, or -1 for any other x, or
   where repr would write an exponent (0 < rounded < 1e-4). As in
   repr_round6: "%.9f" is the correctly rounded text, and below 2^22 two
   such texts are further apart than a double's spacing, so repr's
   shortest text is that one without its trailing zeros. */
static int repr_round9(double x, char *buf)
{
    char s[48];
    int n, dot;
    if (x == 0.0 && !signbit(x)) {
        memcpy(buf, "0.0", 3);
        return 3;
    }
    if (!(x > 0.0 && x < 4194304.0))
        return -1;
    if ((n = fixed(x, 9, s, &dot)) < 0)
        return -1;
    if (dot == 1 && s[0] == '0' && memcmp(s + 2, "0000", 4) == 0) {
        if (memcmp(s + 6, "00000", 5) != 0)
            return -1;                      /* repr: "1.5e-05" */
        memcpy(buf, "0.0", 3);              /* rounded to 0 */
        return 3;
    }
    return stripped(s, n, dot, buf);
}

/* repr(b) for a whole b with 0 < b < 1e16 ("1048576.0"), else -1. */
static int repr_whole(double b, char *buf)
{
    if (!(b > 0.0 && b < 1e16) || b != floor(b))
        return -1;
    int n = snprintf(buf, 32, "%.0f", b);
    memcpy(buf + n, ".0", 2);
    return n + 2;
}

/* The simulator's flow events (Engine._log_flows' lines) for n flows:
   head (the line's start up to its id), then per flow its id, quoted
   coflow name (qnames[qoff[c] .. qoff[c + 1])), hosts
   (hosts[hoff[h] .. hoff[h + 1])), repr of its bytes and repr(round(
   start, 9)), into out (room enough: the caller's bound). Returns the
   length, or -1 where a number is outside the texts above (the caller
   writes the lines). */
int64_t ns_flow_lines(int64_t n, const char *head, int64_t hlen,
                      const int64_t *ids, const int64_t *cof,
                      const int64_t *src, const int64_t *dst,
                      const double *size, const double *start,
                      const char *qnames, const int64_t *qoff,
                      const char *hosts, const int64_t *hoff, char *out)
{
    int64_t k, m = 0;
    /* a coflow's flows share their start and often their size: the last
       texts are kept (printf's are the costly part of a line) */
    char sb[32], st[32];
    int nsb = 0, nst = 0;
    double lastb = 0.0, lasts = 0.0;
#define PUT(p, len) (memcpy(out + m, (p), (len)), m += (len))
#define TEXT(blob, off, i) PUT((blob) + (off)[i], (off)[(i) + 1] - (off)[i])
    for (k = 0; k < n; k++) {
        PUT(head, hlen);
        if (ids[k] >= 0 && ids[k] < 10) {
            out[m++] = (char)('0' + ids[k]);
        } else {
            char d[24];
            int64_t v = ids[k], j = 0;
            if (v < 0)
                return -1;
            for (; v; v /= 10)
                d[j++] = (char)('0' + v % 10);
            while (j)
                out[m++] = d[--j];
        }
        PUT(",\"coflow\":", 10);
        TEXT(qnames, qoff, cof[k]);
        PUT(",\"src\":\"", 8);
        TEXT(hosts, hoff, src[k]);
        PUT("\",\"dst\":\"", 9);
        TEXT(hosts, hoff, dst[k]);
        PUT("\",\"bytes\":", 10);
        if (!nsb || size[k] != lastb) {
            if ((nsb = repr_whole(size[k], sb)) < 0)
                return -1;
            lastb = size[k];
        }
        PUT(sb, nsb);
        PUT(",\"start\":", 9);
        /* (0.0 and -0.0 are equal but not one text) */
        if (!nst || start[k] != lasts || start[k] == 0.0) {
            if ((nst = repr_round9(start[k], st)) < 0)
                return -1;
            lasts = start[k];
        }
        PUT(st, nst);
        PUT("}\n", 2);
    }
#undef TEXT
#undef PUT
    return m;
}

/* A links event's util body: for each k < n, name idx[k] (its text in
   names[off[idx[k]] .. off[idx[k] + 1]), quoted, with its colon) then
   repr(round(util[k], 6)), comma separated, into out (room enough: the
   names' lengths plus 32 bytes each). Returns the length, or -1 where a
   util is outside repr_round6's range (the caller writes the line). */
int64_t ns_util_text(int64_t n, const int64_t *idx, const double *util,
                     const char *names, const int64_t *off, char *out)
{
    int64_t k, m = 0;
    for (k = 0; k < n; k++) {
        int64_t a = off[idx[k]], b = off[idx[k] + 1];
        if (k)
            out[m++] = ',';
        memcpy(out + m, names + a, b - a);
        m += b - a;
        int len = repr_round6(util[k], out + m);
        if (len < 0)
            return -1;
        m += len;
    }
    return m;
}

/* FlowTable.finish's test for one flow: rem <= max(rate * max(rel_tol
   * (now - start), resolution) / 8, 1e-6). */
static int is_done(double rem, double rate, double start, double now,
                   double rel_tol, double resolution)
{
    double win = rel_tol * (now - start);
    if (!(win >= resolution))
        win = resolution;
    double lim = rate * win / 8.0;
    if (!(lim >= 1e-6))
        lim = 1e-6;
    return rem <= lim;
}

/* acc[k] += x, for a sequence of k that comes in runs (a coflow's flows
   are together): the run's sum is kept in sum (c: its k, -1 before the
   first) and stored when the run ends; the caller stores the last
   (acc[c] = sum if c >= 0). The same additions in the same order as
   acc[k] += x each time, without a store and a load per item. */
#define RUN_ADD(acc, k, x, c, sum)                  \
    do {                                            \
        if ((k) != (c)) {                           \
            if ((c) >= 0)                           \
                (acc)[c] = (sum);                   \
            (c) = (k);                              \
            (sum) = (acc)[c];                       \
        }                                           \
        (sum) += (x);                               \
    } while (0)

/* Per coflow, the sum of v over its flows in flow order (numpy's
   bincount with weights), into out (zeros on entry): Snapshot.coflow_rate.
   Zeros are skipped: out starts at +0.0 and so is never -0.0, and x +
   0.0 == x for every other x. With count (zeros on entry), each
   coflow's flows counted too (ns_coflow_count's). Returns 1 if a coflow
   index is outside 0..C-1 (out and count are then to be dropped). */
int ns_coflow_sum(int64_t F, int64_t C, const int64_t *cof,
                  const double *v, double *out, int64_t *count)
{
    int64_t c = -1, a = 0;
    double sum = 0.0;
    for (int64_t i = 0; i < F; i++) {
        if (cof[i] < 0 || cof[i] >= C)
            return 1;
        if (v[i] != 0.0)
            RUN_ADD(out, cof[i], v[i], c, sum);
        if (count && cof[i] != cof[a]) {
            count[cof[a]] += i - a;
            a = i;
        }
    }
    if (c >= 0)
        out[c] = sum;
    if (count && F > 0)
        count[cof[a]] += F - a;
    return 0;
}

/* Per coflow, its flows (numpy's bincount), into out (zeros on entry),
   a run of one coflow's flows counted at once. Returns 1 if a coflow
   index is outside 0..C-1 (out is then to be dropped). */
int ns_coflow_count(int64_t F, int64_t C, const int64_t *cof, int64_t *out)
{
    int64_t i, a = 0;
    for (i = 0; i < F; i++) {
        if (cof[i] < 0 || cof[i] >= C)
            return 1;
        if (cof[i] != cof[a]) {
            out[cof[a]] += i - a;
            a = i;
        }
    }
    if (F > 0)
        out[cof[a]] += F - a;
    return 0;
}

/* Snapshot.coflow_port_bytes' sums: out[cof[i] * L + l] += v[i] for
   every flow i and every link l of its path (pt row path[i], H links,
   -1 padded), in (flow, hop) order: numpy's bincount over those pairs.
   out: (C * L,) zeros on entry. Returns 1 if a path, coflow or link
   index is out of range (out is then to be dropped). */
int ns_port_bytes(int64_t F, int64_t H, int64_t P, int64_t C, int64_t L,
                  const int64_t *pt, const int64_t *path,
                  const int64_t *cof, const double *v, double *out)
{
    int64_t i, h;
    for (i = 0; i < F; i++)
        if (path[i] < 0 || path[i] >= P || cof[i] < 0 || cof[i] >= C)
            return 1;
    for (i = 0; i < F; i++) {
        const int64_t *p = pt + path[i] * H;
        double *row = out + cof[i] * L;
        for (h = 0; h < H; h++)
            if (p[h] >= 0) {
                if (p[h] >= L)
                    return 1;
                row[p[h]] += v[i];
            }
    }
    return 0;
}

/* The active flows ran dt at their rates (sim/flows.py, FlowTable.send):
   rem -= rate * dt / 8, and each flow's bytes added to its coflow's
   entry of acc (zeros on entry) in flow order, as numpy's bincount adds
   them. */
void ns_send(int64_t F, const double *rate, double *rem, const int64_t *cof,
             double dt, double *acc)
{
    int64_t c = -1;
    double sum = 0.0;
    for (int64_t i = 0; i < F; i++) {
        double s = rate[i] * dt / 8.0;
        rem[i] -= s;
        RUN_ADD(acc, cof[i], s, c, sum);
    }
    if (c >= 0)
        acc[c] = sum;
}

/* ns_send, then the positions of the flows done at now (ns_done's test)
   in the same pass; returns how many. rs (or NULL; zeros on entry): per
   coflow, the sum of the rates of the flows not done, as ns_coflow_sum
   gives it over them once the done ones have left (the same additions
   in the same order). */
int64_t ns_send_done(int64_t F, const double *rate, double *rem,
                     const int64_t *cof, double dt, double *acc,
                     const double *start, double now, double rel_tol,
                     double resolution, int64_t *done_pos, double *rs)
{
    int64_t nd = 0, c = -1;
    double sum = 0.0, rsum = 0.0;
    for (int64_t i = 0; i < F; i++) {
        double s = rate[i] * dt / 8.0;
        rem[i] -= s;
        if (cof[i] != c) {
            if (c >= 0) {
                acc[c] = sum;
                if (rs)
                    rs[c] = rsum;
            }
            c = cof[i];
            sum = acc[c];
            if (rs)
                rsum = rs[c];
        }
        sum += s;
        if (is_done(rem[i], rate[i], start[i], now, rel_tol, resolution))
            done_pos[nd++] = i;
        else if (rate[i] != 0.0)
            rsum += rate[i];
    }
    if (c >= 0) {
        acc[c] = sum;
        if (rs)
            rs[c] = rsum;
    }
    return nd;
}

/* bins += load * dt / 8 (sim/links.py: the bytes each link carried);
   no branch, so the compiler vectorises it. */
void ns_add_bytes(int64_t L, const double *load, double dt, double *bins)
{
    for (int64_t i = 0; i < L; i++)
        bins[i] += load[i] * dt / 8.0;
}

/* Time until the first moving flow finishes at its rate (rem * 8 / rate,
   the smallest over flows with rate > 0) into *out; returns 0 if none
   moves. */
int ns_first_finish(int64_t F, const double *rate, const double *rem,
                    double *out)
{
    int any = 0;
    double best = 0.0;
    for (int64_t i = 0; i < F; i++) {
        if (rate[i] > 0) {
            double t = rem[i] * 8.0 / rate[i];
            if (!any || t < best) {
                best = t;
                any = 1;
            }
        }
    }
    *out = best;
    return any;
}

/* The positions of the flows done at now (FlowTable.finish's test:
   rem <= max(rate * max(rel_tol * (now - start), resolution) / 8, 1e-6))
   into done_pos, in order; returns how many. */
int64_t ns_done(int64_t F, const double *rem, const double *rate,
                const double *start, double now, double rel_tol,
                double resolution, int64_t *done_pos)
{
    int64_t nd = 0;
    for (int64_t i = 0; i < F; i++)
        if (is_done(rem[i], rate[i], start[i], now, rel_tol, resolution))
            done_pos[nd++] = i;
    return nd;
}

/* Drop the rows done_pos (ascending) from the ncol columns (8-byte
   items) in place, keeping the others' order: rows before the first one
   done stay where they are. */
void ns_compact(int64_t F, int64_t nd, const int64_t *done_pos,
                int64_t ncol, int64_t **col)
{
    if (nd == 0)
        return;
    for (int64_t c = 0; c < ncol; c++) {
        int64_t *x = col[c], k = done_pos[0];
        for (int64_t d = 0; d < nd; d++) {
            /* the run of kept rows after the d-th one done */
            int64_t a = done_pos[d] + 1, b = d + 1 < nd ? done_pos[d + 1] : F;
            if (b > a) {
                memmove(x + k, x + a, (b - a) * sizeof(int64_t));
                k += b - a;
            }
        }
    }
}
'''

FLAGS = ['-O2', '-fPIC', '-shared', '-ffp-contract=off', '-fno-fast-math',
         '-std=c99']

_lib = None
_tried = False
_LOCK = threading.Lock()
why_not = None          # why the numpy path runs, when it does


def _cache_dir():
    d = os.environ.get('NETSCHED_CACHE')
    if not d:
        base = os.environ.get('XDG_CACHE_HOME') or os.path.join(
            os.path.expanduser('~'), '.cache')
        d = os.path.join(base, 'netsched')
    return d


def _build():
    """Compile (or find compiled) and load the kernels; None if not."""
    global why_not
    cc = os.environ.get('CC') or shutil.which('cc') or shutil.which('gcc')
    if not cc:
        why_not = 'no C compiler (cc or $CC)'
        return None
    tag = hashlib.sha256('\0'.join([SOURCE, cc, sys.platform] + FLAGS)
                         .encode()).hexdigest()[:16]
    d = _cache_dir()
    so = os.path.join(d, 'kernels-%s.so' % tag)
    try:
        if not os.path.exists(so):
            os.makedirs(d, exist_ok=True)
            # compiled beside its final name, then renamed: processes
            # started together never load a half-written library
            fd, tmp = tempfile.mkstemp(suffix='.so', dir=d)
            os.close(fd)
            src = tmp[:-3] + '.c'
            with open(src, 'w') as f:
                f.write(SOURCE)
            try:
                r = subprocess.run([cc] + FLAGS + ['-o', tmp, src],
                                   capture_output=True, text=True)
                if r.returncode:
                    why_not = 'compiling failed: %s' % r.stderr.strip()[:300]
                    os.remove(tmp)
                    return None
                os.replace(tmp, so)
            finally:
                if os.path.exists(src):
                    os.remove(src)
        lib = ctypes.CDLL(so)
    except OSError as e:
        why_not = 'cannot build or load %s: %s' % (so, e)
        return None
    p, i = ctypes.c_void_p, ctypes.c_int64
    lib.ns_maxmin.argtypes = [i, i, i, i, p, p, p, p, p, p, ctypes.c_double,
                              p, p, p, p, ctypes.c_int]
    lib.ns_maxmin.restype = ctypes.c_int
    d = ctypes.c_double
    lib.ns_send.argtypes = [i, p, p, p, d, p]
    lib.ns_send.restype = None
    lib.ns_send_done.argtypes = [i, p, p, p, d, p, p, d, d, d, p, p]
    lib.ns_send_done.restype = i
    lib.ns_add_bytes.argtypes = [i, p, d, p]
    lib.ns_add_bytes.restype = None
    lib.ns_first_finish.argtypes = [i, p, p, p]
    lib.ns_first_finish.restype = ctypes.c_int
    lib.ns_done.argtypes = [i, p, p, p, d, d, d, p]
    lib.ns_done.restype = i
    lib.ns_compact.argtypes = [i, i, p, i, p]
    lib.ns_compact.restype = None
    lib.ns_reserve.argtypes = [i, i, i, i, p, p, p, p, p, p, p, p]
    lib.ns_reserve.restype = ctypes.c_int
    lib.ns_util_text.argtypes = [i, p, p, p, p, p]
    lib.ns_util_text.restype = i
    lib.ns_flow_lines.argtypes = [i, p, i, p, p, p, p, p, p, p, p, p, p, p]
    lib.ns_flow_lines.restype = i
    lib.ns_coflow_count.argtypes = [i, i, p, p]
    lib.ns_coflow_count.restype = ctypes.c_int
    lib.ns_coflow_sum.argtypes = [i, i, p, p, p, p]
    lib.ns_coflow_sum.restype = ctypes.c_int
    lib.ns_port_bytes.argtypes = [i, i, i, i, i, p, p, p, p, p]
    lib.ns_port_bytes.restype = ctypes.c_int
    return lib


# NETSCHED_KERNELS=off, read once: every call would pay for the lookup
OFF = os.environ.get('NETSCHED_KERNELS', '').lower() in ('off', '0', 'no')


def lib():
    """The loaded kernels, or None (then the numpy path runs; why_not
    says why)."""
    global _lib, _tried, why_not
    if OFF:
        why_not = 'NETSCHED_KERNELS=off'
        return None
    if not _tried:
        _tried = True
        _lib = _build()
    return _lib


def _ptr(a):
    """The address of a contiguous array's data (from_buffer is the
    cheaper way, for writable arrays)."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(a))
    except (TypeError, ValueError):
        return a.ctypes.data


def _plain(dtypes, *arrays):
    """Whether the kernels can take these arrays as they are: contiguous,
    of one of ``dtypes`` (anything else goes the numpy way)."""
    return all(isinstance(a, np.ndarray) and a.flags.c_contiguous
               and a.dtype in dtypes for a in arrays)


F64, I64 = (np.float64,), (np.int64,)


def maxmin(path_links, flow_path, flow_key, residual, capacity, rel_tol,
           remaining=None, add=None, add_explicit=False):
    """Per-flow max-min rates under strict priority by ``flow_key``
    (lower first): fluid.allocate's filling, compiled. ``residual``:
    (L,) float64 per link (numpy's path adds a dummy last link, which no
    path crosses), reduced in place; ``capacity`` likewise. None if the
    kernels are not available. ``add`` ((F,) float64): added to each
    flow's rate as it is written (the filling's + add); with
    ``add_explicit``, ``add`` is the explicit rates :func:`reserve` found
    to fit, each added where 0 < x < inf. With ``remaining`` ((F,) bytes
    left per flow): (rates, (found, s)), :func:`first_finish` of those
    rates, made as they are."""
    k = lib()
    if k is None:
        return None
    F = len(flow_path)
    rate = np.empty(F)                  # every flow's is written
    if remaining is not None and not (_plain(F64, remaining)
                                      and len(remaining) == F):
        remaining = np.ascontiguousarray(remaining, dtype=np.float64)
    if add is not None and not (_plain(F64, add) and len(add) == F):
        raise ValueError('add: %d float64 values wanted' % F)
    if F == 0:
        return rate if remaining is None else (rate, (False, 0.0))
    pt = np.ascontiguousarray(path_links, dtype=np.int64)
    fp = np.ascontiguousarray(flow_path, dtype=np.int64)
    key = np.ascontiguousarray(flow_key, dtype=np.int64)
    assert residual.dtype == np.float64 and residual.flags.c_contiguous
    cap = np.ascontiguousarray(capacity, dtype=np.float64)
    args = [F, pt.shape[1], len(residual), len(pt), _ptr(pt), _ptr(fp),
            _ptr(key)]
    first = None if remaining is None else np.zeros(2)
    rest = [_ptr(residual), _ptr(cap), float(rel_tol), _ptr(rate),
            None if remaining is None else _ptr(remaining),
            None if first is None else _ptr(first),
            None if add is None else _ptr(add), int(bool(add_explicit))]
    with _LOCK:                         # the kernels' work arrays
        rc = k.ns_maxmin(*args, None, *rest)
        if rc == 1:                     # keys too spread to count
            order = np.argsort(key, kind='stable')
            rc = k.ns_maxmin(*args, _ptr(order), *rest)
    if rc == 2:                         # C would have read past the table
        raise IndexError('flow_path: a path id outside the path table')
    if rc:
        raise MemoryError('ns_maxmin: out of memory')
    if first is None:
        return rate
    return rate, (bool(first[0]), float(first[1]))


def send(rate, rem, cof, dt, ncoflows):
    """FlowTable.send's step, compiled: ``rem`` reduced in place by
    rate * dt / 8; returns the (ncoflows,) bytes sent per coflow (as
    numpy's bincount sums them). None without the kernels."""
    k = lib()
    if k is None or not (_plain(F64, rate, rem) and _plain(I64, cof)):
        return None
    acc = np.zeros(ncoflows)
    k.ns_send(len(rem), _ptr(rate), _ptr(rem), _ptr(cof), float(dt),
              _ptr(acc))
    return acc


def send_done(rate, rem, cof, dt, ncoflows, start, now, rel_tol,
              resolution, rate_sums=False):
    """:func:`send`, then :func:`done` at ``now``, in one pass: (bytes
    per coflow, positions done); None without the kernels. With
    ``rate_sums`` a third: per coflow the sum of the rates of the flows
    not done, as :func:`coflow_sum` gives it over them once the done ones
    have left."""
    k = lib()
    if k is None or not (_plain(F64, rate, rem, start) and _plain(I64, cof)):
        return None
    acc = np.zeros(ncoflows)
    out = np.empty(len(rem), np.int64)
    rs = np.zeros(ncoflows) if rate_sums else None
    nd = k.ns_send_done(len(rem), _ptr(rate), _ptr(rem), _ptr(cof),
                        float(dt), _ptr(acc), _ptr(start), float(now),
                        float(rel_tol), float(resolution), _ptr(out),
                        None if rs is None else _ptr(rs))
    return (acc, out[:nd]) if rs is None else (acc, out[:nd], rs)


def add_bytes(load, dt, bins):
    """``bins += load * dt / 8`` in one pass (LinkMeter), in place;
    False without the kernels (nothing done)."""
    k = lib()
    if k is None or not _plain(F64, load, bins) or len(load) != len(bins):
        return False
    k.ns_add_bytes(len(load), _ptr(load), float(dt), _ptr(bins))
    return True


def first_finish(rate, rem):
    """FlowTable.first_finish_s, compiled: (found, seconds); None
    without the kernels."""
    k = lib()
    if k is None or not _plain(F64, rate, rem):
        return None
    out = ctypes.c_double()
    found = k.ns_first_finish(len(rem), _ptr(rate), _ptr(rem),
                              ctypes.addressof(out))
    return bool(found), out.value


def done(rem, rate, start, now, rel_tol, resolution):
    """FlowTable.finish's test, compiled: the positions of the flows done
    at ``now``, ascending; None without the kernels."""
    k = lib()
    if k is None or not _plain(F64, rem, rate, start):
        return None
    out = np.empty(len(rem), np.int64)
    nd = k.ns_done(len(rem), _ptr(rem), _ptr(rate), _ptr(start),
                   float(now), float(rel_tol), float(resolution),
                   _ptr(out))
    return out[:nd]


def compact(cols, pos):
    """The columns ``cols`` (equal lengths, contiguous, 8-byte items)
    without the rows ``pos`` (ascending), compacted in place: returns
    views of them, or None without the kernels (nothing changed). Rows
    before the first one dropped are not touched."""
    k = lib()
    if k is None or not (_plain(F64 + I64, *cols) and _plain(I64, pos)):
        return None
    F = len(cols[0])
    # columns that share memory would be compacted twice
    at = sorted(c.ctypes.data for c in cols)
    if any(b - a < 8 * F for a, b in zip(at, at[1:])):
        return None
    if len(pos):
        ptrs = ctypes.c_void_p * len(cols)
        k.ns_compact(F, len(pos), _ptr(pos), len(cols),
                     ptrs(*[_ptr(c) for c in cols]))
    return [c[:F - len(pos)] for c in cols]


def coflow_sum(cof, v, ncoflows, count=False):
    """(ncoflows,) per coflow the sum of ``v`` over its flows, as
    ``np.bincount(cof, weights=v, minlength=ncoflows)`` gives it (the
    same additions in the same order), compiled; None without the
    kernels or where cof is outside 0..ncoflows-1. With ``count``:
    (sums, :func:`coflow_count`), made in the same pass."""
    k = lib()
    if k is None or not (_plain(I64, cof) and _plain(F64, v)) or \
            len(cof) != len(v):
        return None
    out = np.zeros(ncoflows)
    n = np.zeros(ncoflows, np.int64) if count else None
    if k.ns_coflow_sum(len(cof), ncoflows, _ptr(cof), _ptr(v), _ptr(out),
                       None if n is None else _ptr(n)):
        return None
    return out if n is None else (out, n)


def coflow_count(cof, ncoflows):
    """(ncoflows,) int64: per coflow, how many of ``cof`` are it, as
    ``np.bincount(cof, minlength=ncoflows)`` gives it, compiled; None
    without the kernels or where cof is outside 0..ncoflows-1."""
    k = lib()
    if k is None or not _plain(I64, cof):
        return None
    out = np.zeros(ncoflows, np.int64)
    if k.ns_coflow_count(len(cof), ncoflows, _ptr(cof), _ptr(out)):
        return None
    return out


def port_bytes(path_links, path, cof, v, ncoflows, nlinks):
    """(ncoflows, nlinks): per coflow and link, the sum of ``v`` over
    the flows (path ids ``path`` into ``path_links``, coflows ``cof``)
    whose path crosses the link, added in (flow, hop) order as
    Snapshot.coflow_port_bytes' bincount adds them; compiled. None
    without the kernels or where an index is out of range."""
    k = lib()
    if k is None or not (_plain(I64, path_links, path, cof)
                         and _plain(F64, v)) or path_links.ndim != 2 or \
            not len(path) == len(cof) == len(v):
        return None
    out = np.zeros(ncoflows * nlinks)
    P, H = path_links.shape
    if k.ns_port_bytes(len(path), H, P, ncoflows, nlinks, _ptr(path_links),
                       _ptr(path), _ptr(cof), _ptr(v), _ptr(out)):
        return None
    return out.reshape(ncoflows, nlinks)


def reserve(path_links, flow_path, explicit, cap, residual, fits=False):
    """fluid.allocate's explicit reservations, compiled: ``residual``
    ((L + 1,), the last the dummy link) filled, and the (F,) reserved
    rates returned, as the numpy code makes them (the same bits); None
    without the kernels or where an index is out of range (nothing
    usable written). With ``fits``, where no link is over its capacity
    (no reservation scaled) 'fits' is returned instead of the rates: each
    flow's is then its explicit rate where 0 < x < inf, which
    :func:`maxmin` adds itself (``add_explicit``)."""
    k = lib()
    if k is None or not (_plain(I64, path_links, flow_path)
                         and _plain(F64, explicit, cap, residual)) \
            or path_links.ndim != 2:
        return None
    L = len(cap) - 1
    work = np.empty(2 * (L + 1))
    P, H = path_links.shape
    args = [len(flow_path), H, L, P, _ptr(path_links), _ptr(flow_path),
            _ptr(explicit), _ptr(cap), _ptr(residual)]
    rest = [_ptr(work), _ptr(work[L + 1:])]
    rate = np.empty(len(flow_path))     # written only if one is scaled
    rc = k.ns_reserve(*args, _ptr(rate), *rest)
    if rc == 0:
        return rate
    if rc == 3:
        if fits:
            return 'fits'
        x = explicit
        return np.where((x > 0) & (x < np.inf), 0.0 + x, 0.0)
    return None


class UtilText:
    """A links event's util body (LinkMeter): per link of ``idx``, its
    quoted name and colon then repr(round(util, 6)), comma separated,
    compiled; :meth:`text` gives None where the kernels cannot (absent,
    or a util outside the range whose text they know)."""

    def __init__(self, names):
        blob = [n.encode('ascii') for n in names]
        self.names = np.frombuffer(b''.join(blob) or b'\0', np.uint8)
        self.off = np.r_[0, np.cumsum([len(b) for b in blob])].astype(
            np.int64)
        self.widest = max([len(b) for b in blob] + [0]) + 32

    def text(self, idx, util):
        k = lib()
        if k is None or not (_plain(I64, idx) and _plain(F64, util)) or \
                len(idx) != len(util):
            return None
        out = np.empty(len(idx) * (self.widest + 1) + 1, np.uint8)
        m = k.ns_util_text(len(idx), _ptr(idx), _ptr(util),
                           _ptr(self.names), _ptr(self.off), _ptr(out))
        if m < 0:
            return None
        return out[:m].tobytes().decode('ascii')


class FlowText:
    """The simulator's flow event lines (Engine._log_flows), compiled:
    :meth:`lines` gives None where the kernels cannot (absent, or a
    number whose text they do not know: bytes not whole, a start time
    outside 0..2^22 s or rounding below 1e-4)."""

    def __init__(self, hosts):
        raw = [h.encode('ascii') for h in hosts]
        self.hosts = np.frombuffer(b''.join(raw) or b'\0', np.uint8)
        self.hoff = np.r_[0, np.cumsum([len(b) for b in raw])].astype(
            np.int64)
        self.widest = 2 * max([len(b) for b in raw] + [0])
        # the coflows' quoted names, appended as coflows come (capacity
        # doubled: a run's every new coflow must not copy them all)
        self.qnames = np.zeros(1024, np.uint8)
        self.qoff = np.zeros(64, np.int64)
        self.nq, self.qwidest = 0, 0

    def _names(self, quoted):
        for q in quoted[self.nq:]:
            b = q.encode('ascii')
            at = int(self.qoff[self.nq])
            if at + len(b) > len(self.qnames):
                self.qnames = np.resize(self.qnames,
                                        2 * (at + len(b)))
            if self.nq + 2 > len(self.qoff):
                self.qoff = np.resize(self.qoff, 2 * (self.nq + 2))
            self.qnames[at:at + len(b)] = np.frombuffer(b, np.uint8)
            self.nq += 1
            self.qoff[self.nq] = at + len(b)
            self.qwidest = max(self.qwidest, len(b))

    def lines(self, head, ids, cof, src, dst, size, start, quoted):
        """The lines of flows ``ids`` (coflow indices ``cof`` into
        ``quoted``, their JSON names; host indices; bytes; start times)
        after ``head``, or None."""
        k = lib()
        if k is None or not (_plain(I64, ids, cof, src, dst)
                             and _plain(F64, size, start)):
            return None
        self._names(quoted)
        h = head.encode('ascii')
        out = np.empty(len(ids) * (len(h) + self.widest + self.qwidest
                                   + 120) + 1, np.uint8)
        m = k.ns_flow_lines(len(ids), h, len(h), _ptr(ids), _ptr(cof),
                            _ptr(src), _ptr(dst), _ptr(size), _ptr(start),
                            _ptr(self.qnames), _ptr(self.qoff),
                            _ptr(self.hosts), _ptr(self.hoff), _ptr(out))
        if m < 0:
            return None
        return out[:m].tobytes().decode('ascii')
