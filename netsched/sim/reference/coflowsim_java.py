"""Where ``model: coflowsim`` must compute as CoflowSim's Java does:
java.util.Random's draws, and the double subtractions by which it moves
bytes, step for step (sim.reference.coflowsim runs the model on them).

CoflowSim moves bytes one step at a time in doubles: a flow's bytes left
lose min(its bytes a step, what is left) each step, and so does its
reducer's count, one flow after the other. The rounding of those
subtractions decides what it does next (MADD reads the reducer's count:
where it drifted above its flows' bytes, the receiver keeps a few bit/s
free, and the next coflow there is given MADD rates on them instead of
being skipped), so a run that reproduces its numbers must round as it
does. It need not take the steps one by one: while x stays in one binade
[lo, 2 lo) of doubles (spacing u), x - c rounds to x - round(c / u) u
exactly, so n such steps are one multiplication; only the step that
leaves the binade, and a step whose amounts change, are taken as Java
takes them.
"""
import numpy as np

ZERO = 1e-3                  # CoflowSim's Constants.ZERO: bytes and bit/s


class JavaRandom:
    """java.util.Random's generator (a 48-bit linear congruential one):
    the deadline multipliers CoflowSim draws."""

    MULT, ADD, MASK = 0x5DEECE66D, 0xB, (1 << 48) - 1

    def __init__(self, seed):
        self.seed = (seed ^ self.MULT) & self.MASK

    def _next(self, bits):
        self.seed = (self.seed * self.MULT + self.ADD) & self.MASK
        return self.seed >> (48 - bits)

    def next_double(self):
        """Java's nextDouble(): 53 random bits over 2^53."""
        return ((self._next(26) << 27) + self._next(27)) * 2.0 ** -53


BIG = float(2 ** 62)             # "no limit" in step counts
_EXACT = float(2 ** 52)
_EXPONENT = np.int64(0x7FF0000000000000)


def _binade(x):
    """(lo, u) of positive normal doubles x: their binade [lo, 2 lo)
    (x with its mantissa bits cleared) and its spacing u = lo / 2^52."""
    lo = (np.asarray(x, float).view(np.int64) & _EXPONENT).view(float)
    return lo, lo * 2.0 ** -52


def _whole_steps(x, m, u, lo):
    """How many subtractions of m u (m whole) keep x at least u above lo
    (each of them then exact), and where lo <= ZERO the first that takes
    x to ZERO or below (BIG: none)."""
    n = (x - lo) / u
    with np.errstate(divide='ignore', invalid='ignore'):
        k = np.where(m > 0, np.floor((n - 1) / m), BIG)
    k[(m > 0) & (n - k * m < 1)] -= 1          # the quotient rounded up
    k = np.maximum(k, 0)
    kz = np.full(len(x), BIG)
    low = (lo <= ZERO) & (m > 0)
    if low.any():
        xl, dl = x[low], m[low] * u[low]
        z = np.maximum(np.ceil((xl - ZERO) / dl), 1)
        z[xl - z * dl > ZERO] += 1
        z[(z > 1) & (xl - (z - 1) * dl <= ZERO)] -= 1
        kz[low] = z
    return k, kz


def drain(x, c, n):
    """A flow's bytes left ``x`` after CoflowSim's steps x -= min(c, x),
    ``n`` of them (BIG: any number) or until x <= ZERO, each rounded as
    Java rounds it: (x, steps taken, whether it ended, its last amount)."""
    x = np.array(x, float)
    c = np.asarray(c, float)
    n = np.array(n, float) * np.ones(len(x))
    taken, last = np.zeros(len(x)), np.zeros(len(x))
    done = np.zeros(len(x), bool)
    go = np.flatnonzero((n > 0) & (c > 0) & (x > ZERO))
    while len(go):
        xi, ci, ni = x[go], c[go], n[go]
        lo, u = _binade(xi)
        q = ci / u
        # c a half-way between two spacings: x - c rounds to the even
        # neighbour, so once x / u is even it steps by the even rint(q)
        tie = q - np.floor(q) == 0.5
        exact = (q < _EXACT) & ~(tie & (np.fmod(xi / u, 2.0) != 0))
        m = np.where(exact, np.rint(q), 0.0)
        k, kz = _whole_steps(xi, m, u, lo)
        k[~exact] = 0
        kz[~exact] = BIG
        s = np.minimum(np.minimum(k, kz), ni)
        xi = xi - s * m * u
        ni = ni - s
        taken[go] += s
        fin = (s == kz) & (s > 0)
        last[go[fin]] = ci[fin]
        # the step out of the binade, as Java takes it
        one = (ni > 0) & ~fin
        b = np.minimum(ci, xi)
        xn = np.where(one, xi - b, xi)
        stuck = one & (xn == xi)               # c under half a spacing
        step = one & ~stuck
        taken[go[step]] += 1
        ni = np.where(step, ni - 1, ni)
        ni[stuck] = 0
        end = step & (xn <= ZERO)
        last[go[end]] = b[end]
        fin |= end
        x[go], n[go] = xn, ni
        done[go[fin]] = True
        go = go[(ni > 0) & ~fin]
    return x, taken, done, last


def count_down(left, fr, per, fin, last, s):
    """Reducers' counts ``left`` after ``s`` of CoflowSim's steps, in
    each of which their flows (reducer ``fr``, in flow order) take off
    ``per`` one after the other before their ending step ``fin`` (1 = the
    first; inf: none), ``last`` in it, nothing after. Returns (counts,
    the step at whose end each reached ZERO, 0 if none); a count stops
    there (CoflowSim ends the reducer)."""
    left = np.array(left, float)
    R = len(left)
    fin = np.asarray(fin, float)
    pos, zero_at = np.zeros(R), np.zeros(R)
    going = np.ones(len(fr), bool)
    on = left > ZERO
    # where an amount is half-way between spacings (a tie to even) a step's
    # drop depends on the parity of the count: the same every step once
    # one tie has been rounded. Such counts take steps as Java does until
    # two in a row stay in one binade with the same flows; the second's
    # drop is then every later one's.
    clean, drop = np.zeros(R), np.zeros(R)
    while True:
        on &= (pos < s) & (zero_at == 0)
        if not on.any():
            return left, zero_at
        f = np.flatnonzero(going & on[fr])
        r = fr[f]
        nxt = np.full(R, np.inf)
        if len(f):                         # flows come by reducer
            at = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
            nxt[r[at]] = np.minimum.reduceat(fin[f], at)
        run = np.where(on, np.minimum(nxt - 1, s) - pos, 0)
        lo, u = _binade(np.where(on, left, 1.0))
        q = per[f] / u[r]
        tie = q - np.floor(q) == 0.5
        m = np.bincount(r, np.rint(q), R)
        big = np.bincount(r, q >= _EXACT, R) > 0
        tied = np.bincount(r, tie, R) > 0
        steady = tied & (clean >= 2)
        m[steady] = drop[steady] / u[steady]
        k, kz = _whole_steps(left, m, u, lo)
        stop = big | (tied & ~steady)
        k[stop] = 0
        kz[stop] = BIG
        w = np.where(on, np.minimum(np.minimum(k, kz), run), 0)
        left = left - w * m * u
        pos += w
        z = on & (w == kz) & (w > 0)
        zero_at[z] = pos[z]
        # the next step as Java takes it: out of the binade, or a step in
        # which flows end, or one of the two that show a tie's drop
        one = on & ~z & (pos < s)
        g = f[one[r]]
        if len(g):
            before = left.copy()
            now = pos[fr[g]] + 1
            ends = fin[g] == now
            np.subtract.at(left, fr[g], np.where(ends, last[g], per[g]))
            going[g[ends]] = False
            pos[one] += 1
            z = one & (left <= ZERO)
            zero_at[z] = pos[z]
            same = one & ~z & (_binade(np.where(one & ~z, left, 1.0))[0]
                               == lo) & (np.bincount(fr[g], ends, R) == 0)
            clean = np.where(same, np.where(one, clean + 1, clean), 0)
            drop = np.where(same, before - left, drop)
