/* The simulator's per-step kernels: the flow table's send and finish
   steps, the per-coflow sums, and the text of the flow and link events
   (netsched/sim/kernels.py calls them, and runs the numpy and Python
   code they replace where they are not built). The same floating-point
   operations in the same order as that code, and the same text, byte
   for byte. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>

#include "kernels.h"

/* every function not static is a kernel, declared in kernels.h (else
   Python could not call it) */
#pragma GCC diagnostic error "-Wmissing-prototypes"

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
   writes the lines). The layout is netsched/events.py's FLOW_LINE
   (tests/unit/sim/test_flow_line.py holds the two to the same text). */
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
