/* The rate allocation's kernels: fluid.allocate's progressive filling
   and its explicit reservations, compiled (netsched/fluid/kernels.py
   calls them, and runs the numpy code they replace where they are not
   built). They do the same floating-point operations in the same order
   as the numpy code (no fused multiply-add, no reassociation: built with
   -ffp-contract=off, never -ffast-math), so they give the same bits. */
#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#include "kernels.h"

/* every function not static is a kernel, declared in kernels.h (else
   Python could not call it) */
#pragma GCC diagnostic error "-Wmissing-prototypes"

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
