"""The number generators of YCSB 0.17.0's CoreWorkload, ported.

Each generator draws from a random.Random it is given (one per client
thread, like Java's ThreadLocalRandom), so a fixed `seed` property makes a
run repeatable. The counters that the client threads share in Java (the
load key sequence, the acknowledged insert counter of workloads D and E)
live in counters.py; the generators here only read them.

Java's long arithmetic is kept where it shows in results: fnvhash64 wraps
at 64 bits and takes a signed abs; the zipfian draw truncates toward zero.
"""
import math

FNV_OFFSET_BASIS_64 = 0xCBF29CE484222325
FNV_PRIME_64 = 1099511628211
_MASK64 = (1 << 64) - 1
_SIGN64 = 1 << 63

ZIPFIAN_CONSTANT = 0.99
# Precomputed zeta(ITEM_COUNT, 0.99) of the scrambled zipfian: the sum has
# 10^10 terms, too many to compute at start-up (YCSB ships the constant).
SCRAMBLED_ZETAN = 26.46902820178302
SCRAMBLED_ITEM_COUNT = 10_000_000_000

_pow = math.pow


def _fnv_two_octets():
    """The FNV-1 state after each possible pair of low octets (65,536
    entries, built in ~15 ms at import)."""
    b, p, m = FNV_OFFSET_BASIS_64, FNV_PRIME_64, _MASK64
    return [(((b ^ (lo & 0xFF)) * p) ^ (lo >> 8)) * p & m for lo in range(1 << 16)]


_FNV_LOW2 = _fnv_two_octets()
# A zero octet's round is a multiplication: the rest of them, at once.
_FNV_PRIME_POW = [pow(FNV_PRIME_64, k, 1 << 64) for k in range(7)]


def fnvhash64(val):
    """FNV-1 over the 8 low-order octets of val, as YCSB's Utils.fnvhash64:
    signed 64-bit wrap-around, arithmetic shift, abs of the result.
    fnvhash64(0) == 6284781860667377211. The octets are those of val's
    two's complement, least significant first (what Java's shifts by 8
    take): the first two from a table, the others until only zero octets
    are left, whose rounds are one multiplication by a power of the prime.
    The state is reduced mod 2^64 once, at the end (XOR with an octet and
    multiplication commute with the reduction)."""
    v = val & _MASK64
    h = _FNV_LOW2[v & 0xFFFF]
    v >>= 16
    left = 6
    while v:                        # bound: 6 octets
        h = (h ^ (v & 0xFF)) * FNV_PRIME_64
        v >>= 8
        left -= 1
    h = h * _FNV_PRIME_POW[left] & _MASK64
    if h & _SIGN64:                 # _abs64, inline
        return (1 << 64) - h if h != _SIGN64 else -_SIGN64
    return h


def _abs64(h):
    """Java's Math.abs of the signed 64-bit value of h (0 <= h < 2^64)."""
    if h & _SIGN64:
        # Java's Math.abs(Long.MIN_VALUE) stays negative; keep that too.
        return (1 << 64) - h if h != _SIGN64 else -_SIGN64
    return h


class ConstantIntegerGenerator:
    """Always the same value (the field length of constant-size fields)."""

    def __init__(self, value):
        self.value = value

    def next_value(self):
        return self.value


class UniformLongGenerator:
    """Uniform over [lb, ub]. Java draws abs(nextLong()) % (ub-lb+1); 63
    random bits give the same distribution without the sign step."""

    def __init__(self, rng, lb, ub):
        if ub < lb:
            raise ValueError(f"uniform generator: upper bound {ub} below lower bound {lb}")
        self._bits = rng.getrandbits
        self.lb = lb
        self.ub = ub
        self.interval = ub - lb + 1

    def next_value(self):
        return self._bits(63) % self.interval + self.lb


def zetastatic(n, theta, start=0, initialsum=0.0):
    """sum over i in [start, n) of 1/(i+1)^theta, added to initialsum."""
    s = initialsum
    for i in range(start, n):
        s += 1.0 / math.pow(i + 1, theta)
    return s


class ZipfianGenerator:
    """Zipfian over [min, max] (Gray et al., SIGMOD 1994), popular items
    first: min is the most popular. zetan is computed once; when a caller
    asks for more items (next_long(itemcount) with a bigger count, as the
    latest generator does) it is extended incrementally, while eta keeps
    using the item count given at construction, as in YCSB."""

    def __init__(self, rng, lo, hi, theta=ZIPFIAN_CONSTANT, zetan=None):
        self._random = rng.random
        self.items = hi - lo + 1
        self.base = lo
        self.theta = theta
        self.zeta2theta = zetastatic(2, theta)
        self.alpha = 1.0 / (1.0 - theta)
        self.zetan = zetastatic(self.items, theta) if zetan is None else zetan
        self.countforzeta = self.items
        self.eta = self._eta()
        self._half_pow_theta = math.pow(0.5, theta)
        self._second = 1.0 + self._half_pow_theta
        self.next_value()           # YCSB draws once at construction

    def _eta(self):
        return ((1 - math.pow(2.0 / self.items, 1 - self.theta))
                / (1 - self.zeta2theta / self.zetan))

    def next_long(self, itemcount):
        if itemcount > self.countforzeta:
            self.zetan = zetastatic(itemcount, self.theta, self.countforzeta, self.zetan)
            self.countforzeta = itemcount
            self.eta = self._eta()
        u = self._random()
        uz = u * self.zetan
        if uz < 1.0:
            return self.base
        if uz < 1.0 + self._half_pow_theta:
            return self.base + 1
        return self.base + int(itemcount * math.pow(self.eta * u - self.eta + 1, self.alpha))

    def next_value(self):
        """next_long(items), inline: with its own item count zetan never
        needs extending (countforzeta starts there and only grows)."""
        u = self._random()
        uz = u * self.zetan
        if uz < 1.0:
            return self.base
        if uz < self._second:
            return self.base + 1
        eta = self.eta
        return self.base + int(self.items * _pow(eta * u - eta + 1, self.alpha))


class ScrambledZipfianGenerator:
    """Zipfian popularity spread over [min, max] by hashing: a zipfian over
    10^10 items (with the precomputed zeta), then fnvhash64 modulo the item
    count, so the popular keys are scattered over the key space."""

    def __init__(self, rng, lo, hi):
        self.min = lo
        self.max = hi
        self.itemcount = hi - lo + 1
        self._gen = ZipfianGenerator(rng, 0, SCRAMBLED_ITEM_COUNT, ZIPFIAN_CONSTANT,
                                     SCRAMBLED_ZETAN)
        # The items of the zipfian's first 2^16 values (about 44% of the
        # draws), from the table of fnvhash64's first two octets: their
        # other six octets are zero.
        lo, n, p6, mask = self.min, self.itemcount, _FNV_PRIME_POW[6], _MASK64
        self._first = [lo + _abs64(h * p6 & mask) % n for h in _FNV_LOW2]
        # The zipfian's next_value, inline below: its item count is fixed,
        # so are its zetan and eta.
        g = self._gen
        self._random = g._random
        self._zetan, self._second, self._eta = g.zetan, g._second, g.eta
        self._items, self._alpha = g.items, g.alpha

    def next_value(self):
        u = self._random()
        uz = u * self._zetan
        if uz < self._second:       # the zipfian's 0 or 1
            return self._first[0 if uz < 1.0 else 1]
        eta = self._eta
        z = int(self._items * _pow(eta * u - eta + 1, self._alpha))
        if z < 65536:
            return self._first[z]
        return self.min + fnvhash64(z) % self.itemcount


class SkewedLatestGenerator:
    """Recent keys most popular (workload D): last - zipfian(last), where
    last is the basis counter's last acknowledged value at each draw."""

    def __init__(self, rng, basis):
        self._basis = basis
        self._zipf = ZipfianGenerator(rng, 0, basis.last_value() - 1)
        self.next_value()

    def next_value(self):
        last = self._basis.last_value()
        return last - self._zipf.next_long(last)


class DiscreteGenerator:
    """One of several values with given weights (the operation mix)."""

    def __init__(self, rng):
        self._random = rng.random
        self.values = []
        self._shares = ()

    def add_value(self, weight, value):
        self.values.append((weight, value))
        # Each value's share w / sum(weights), as YCSB computes it at every
        # draw: the same floats, divided once.
        total = sum(w for w, _ in self.values)
        self._shares = tuple((w / total, v) for w, v in self.values)

    def next_value(self):
        val = self._random()
        for pw, v in self._shares:
            if val < pw:
                return v
            val -= pw
        # Rounding left val just above the last share: YCSB asserts here;
        # the last value is the only one it can be.
        return self.values[-1][1]
