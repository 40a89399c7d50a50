# A small, fast, seedable PRNG (xoshiro256**, seeded by splitmix64) usable from C loops.
# Every random decision in niwa's engines and searchers goes through one of these, so a run
# is reproducible from its seed.
from libc.stdint cimport uint64_t, uint32_t

cdef struct RngState:
    uint64_t s0, s1, s2, s3

cdef inline uint64_t _rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))

cdef inline uint64_t splitmix64(uint64_t* x) noexcept nogil:
    x[0] += 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = x[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)

cdef inline void rng_seed(RngState* r, uint64_t seed) noexcept nogil:
    cdef uint64_t x = seed
    r.s0 = splitmix64(&x)
    r.s1 = splitmix64(&x)
    r.s2 = splitmix64(&x)
    r.s3 = splitmix64(&x)

cdef inline uint64_t rng_next(RngState* r) noexcept nogil:
    cdef uint64_t result = _rotl(r.s1 * 5, 7) * 9
    cdef uint64_t t = r.s1 << 17
    r.s2 ^= r.s0
    r.s3 ^= r.s1
    r.s1 ^= r.s2
    r.s0 ^= r.s3
    r.s2 ^= t
    r.s3 = _rotl(r.s3, 45)
    return result

cdef inline uint32_t rng_below(RngState* r, uint32_t n) noexcept nogil:
    # Lemire's multiply-shift: uniform enough for n << 2^32 and branch-free.
    return <uint32_t>(((rng_next(r) >> 32) * <uint64_t>n) >> 32)

cdef inline double rng_uniform(RngState* r) noexcept nogil:
    return (rng_next(r) >> 11) * (1.0 / 9007199254740992.0)
