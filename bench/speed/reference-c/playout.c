/* Random playouts and perft of two-player Lotus, basic rule, in plain C99: a yardstick
 * for the speed of niwa's Cython engine (ext/lotus.pyx), not a second engine. Rules:
 * docs/rules/lotus.md; the board is the default one (towers 4..1, lanes of 3, 11 shared
 * spaces, trampoline at route position 8), trampoline optional or mandatory.
 *
 * Representation. Spaces are numbered as in niwa: a1..a3 = 0..2, b1..b3 = 3..5, shared
 * 4..14 = 6..16; GOAL = 17 is a destination only. A stack is a word of colour bits with
 * its top stone in bit 0 (push = w << 1 | colour, pop = w >> 1) and a height byte; tops[c]
 * has bit s set when the top stone of space s is colour c. A player's start is four 4-bit
 * counts of towers by height (nibble h = towers of height h; nibble 0 collects the towers
 * that are gone).
 *
 * Actions. An action is (source, destination) in 16 bits, the bounce already folded into
 * the destination, so niwa's "land" and "land+bounce" are two actions with different
 * destinations and a mandatory bounce is one. A space's top stone has its one or two
 * actions for each stack height precomputed in a 32-bit table entry, a player's start its
 * actions for each set of tower heights in a list; generation copies entries, so a
 * playout does no rule logic beyond table lookups. The actions are niwa's, in niwa's
 * order (start towers by height, lane a before b; then spaces in index order, land before
 * bounce; when blocked the other player's, then pass). The order is not needed for
 * perft, but with it the same seed plays the same games as niwa's playouts(): equal
 * totals are a check. Random draws: xoshiro256** seeded by splitmix64 and Lemire's
 * multiply-shift bounded draw, as in niwa's ext/rng.pxd, so both sides pay the same RNG.
 *
 * Build: cc -O3 -std=c99 -o playout playout.c   (no -march: as a portable wheel is built;
 * bench/speed/reference_c.py builds it into build/).
 */
#define _POSIX_C_SOURCE 199309L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LANE 3
#define SHARED 11
#define ROUTE (LANE + SHARED)
#define TRAMP_POS 8
#define TOWERS 4
#define STONES (TOWERS * (TOWERS + 1) / 2)  /* 10 a player */
#define NSPACES (2 * LANE + SHARED)         /* 17 */
#define GOAL NSPACES                        /* destination code of the goal */
#define MAXH (2 * STONES)                   /* tallest possible stack */
#define START_SRC 32                        /* source code of start tower (q, h): 32 + 4q + h - 1 */
#define PASS_SRC 64
#define ACT(src, dst) ((uint32_t)(src) | (uint32_t)(dst) << 8)
#define PASS_ACT ACT(PASS_SRC, 0)
#define TWO (1u << 31)                      /* table entry holds two actions */
#define START_INIT (1u << 4 | 1u << 8 | 1u << 12 | 1u << 16)  /* one tower of each height */

_Static_assert(NSPACES < 32, "space bitmasks are 32-bit");
_Static_assert(MAXH <= 32, "a stack's colours fit in 32 bits");
_Static_assert(TRAMP_POS > LANE && TRAMP_POS <= ROUTE, "trampoline on a shared space");
_Static_assert(TOWERS == 4, "the start's nibbles and their bit gather assume towers 4..1");

typedef struct {
    uint32_t stack[NSPACES];    /* colours, top stone in bit 0 */
    uint32_t tops[2];
    uint8_t height[NSPACES];
    uint32_t start[2];
    uint8_t goal[2];
    uint8_t to_move;
} Pos;

/* track_gen[s][d]: the actions of the top stone of space s on a stack of height d (row
 * stride 32: the index is a shift). start_list[q][m]: the actions of player q's start
 * when bit h-1 of m says a tower of height h is there, start_n[q][m] their number (one
 * 16-byte copy instead of a loop over heights). */
static uint32_t track_gen[NSPACES][32];
static uint16_t start_list[2][1 << TOWERS][8];
static int start_n[2][1 << TOWERS];

static int space_at(int lane, int p)
{
    return p <= LANE ? lane * LANE + p - 1 : LANE + p - 1;
}

static int dest(int lane, int p)
{
    return p > ROUTE ? GOAL : space_at(lane, p);
}

/* The action(s) of a stone leaving `src`, at route position p (0 = start) in `lane`,
 * going d forward. */
static uint32_t moves_from(int src, int lane, int p, int d, int mandatory)
{
    int to = dest(lane, p + d);
    if (to != space_at(0, TRAMP_POS))
        return ACT(src, to);
    if (mandatory)
        return ACT(src, dest(lane, p + 2 * d));
    return ACT(src, to) | ACT(src, dest(lane, p + 2 * d)) << 16 | TWO;
}

/* Append a table entry: always store both halves, count the second only if present
 * (no branch; buf has room for the spare slot). */
static inline int put(uint16_t *buf, int n, uint32_t e)
{
    memcpy(buf + n, &e, 4);
    return n + 1 + (int)(e >> 31);
}

static void init_tables(int mandatory)
{
    for (int s = 0; s < NSPACES; s++) {
        int lane = s < 2 * LANE ? s / LANE : 0;
        int p = s < 2 * LANE ? s % LANE + 1 : s - LANE + 1;
        for (int d = 1; d <= MAXH; d++)
            track_gen[s][d] = moves_from(s, lane, p, d, mandatory);
    }
    for (int q = 0; q < 2; q++)
        for (int m = 0; m < 1 << TOWERS; m++) {
            uint16_t buf[2 * TOWERS + 2] = {0};
            int n = 0;
            for (int h = 1; h <= TOWERS; h++) {
                int src = START_SRC + 4 * q + h - 1;
                /* in the lanes: one action per lane (never the trampoline: it is shared) */
                if (m >> (h - 1) & 1)
                    n = put(buf, n, h <= LANE
                        ? ACT(src, space_at(0, h)) | ACT(src, space_at(1, h)) << 16 | TWO
                        : moves_from(src, 0, 0, h, mandatory));
            }
            memcpy(start_list[q][m], buf, sizeof start_list[q][m]);
            start_n[q][m] = n;
        }
}

/* ---- xoshiro256** (niwa's ext/rng.pxd) ------------------------------------------- */
typedef struct { uint64_t s[4]; } Rng;

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void rng_seed(Rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static inline uint64_t rng_next(Rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Lemire's multiply-shift: bias below n / 2^32, negligible for n < 64. */
static inline uint32_t rng_below(Rng *r, uint32_t n)
{
    return (uint32_t)(((rng_next(r) >> 32) * n) >> 32);
}

/* ---- rules ------------------------------------------------------------------------ */
static void initial(Pos *p)
{
    memset(p, 0, sizeof *p);
    p->start[0] = p->start[1] = START_INIT;
}

/* Every action moving a free stone of colour q (start towers, tops of stacks). */
static inline int gen_colour(const Pos *p, int q, uint16_t *buf, int n)
{
    uint32_t x = p->start[q] & ~0xFu;
    uint32_t hs = (x | x >> 1 | x >> 2) & 0x11110u;  /* bit 4h: a tower of height h */
    hs = (hs >> 4) * 0x1248u >> 12 & 0xF;             /* gather bits 0, 4, 8, 12 */
    memcpy(buf + n, start_list[q][hs], sizeof start_list[q][hs]);
    n += start_n[q][hs];
    for (uint32_t t = p->tops[q]; t; t &= t - 1) {
        int s = __builtin_ctz(t);
        n = put(buf, n, track_gen[s][p->height[s]]);
    }
    return n;
}

/* The legal actions; a blocked player (no free stone of its own) may move any free
 * stone of the other player or pass (basic rule). */
static inline int gen(const Pos *p, uint16_t *buf)
{
    int n = gen_colour(p, p->to_move, buf, 0);
    if (n)
        return n;
    n = gen_colour(p, p->to_move ^ 1, buf, 0);
    buf[n] = PASS_ACT;
    return n + 1;
}

/* Play action a; returns the winner's colour, or -1 while the game runs. */
static inline int apply(Pos *p, uint32_t a)
{
    uint32_t src = a & 0xFF, dst = (a >> 8) & 0x7F, c;
    if (src < NSPACES) {
        uint32_t w = p->stack[src], bit = 1u << src;
        c = w & 1;
        w >>= 1;
        p->stack[src] = w;
        p->tops[c] &= ~bit;
        p->tops[w & 1] |= bit & -(uint32_t)(--p->height[src] > 0);  /* the uncovered stone */
    } else if (src < PASS_SRC) {
        uint32_t k = src - START_SRC, h = (k & 3) + 1;
        c = k >> 2;
        p->start[c] += (1u << 4 * (h - 1)) - (1u << 4 * h);  /* one tower h -> h - 1 */
    } else {
        p->to_move ^= 1;
        return -1;
    }
    if (dst == GOAL) {
        if (++p->goal[c] == STONES)
            return (int)c;
    } else {
        uint32_t bit = 1u << dst;
        p->tops[0] &= ~bit;
        p->tops[1] &= ~bit;
        p->tops[c] |= bit;
        p->stack[dst] = p->stack[dst] << 1 | c;
        p->height[dst]++;
    }
    p->to_move ^= 1;
    return -1;
}

static uint64_t perft(const Pos *p, int depth)
{
    uint16_t buf[64];
    if (depth == 0)
        return 1;
    int n = gen(p, buf);
    if (depth == 1)
        return (uint64_t)n;
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        Pos c = *p;
        if (apply(&c, buf[i]) < 0)  /* a finished game has no longer sequences */
            total += perft(&c, depth - 1);
    }
    return total;
}

/* One game from a copy of the start position; returns the winner, adds its plies. */
static inline int playout(const Pos *start, Rng *r, uint64_t *plies)
{
    uint16_t buf[64];
    Pos p = *start;
    uint64_t k = 0;
    int w;
    do {
        int n = gen(&p, buf);
        w = apply(&p, buf[rng_below(r, (uint32_t)n)]);
        k++;
    } while (w < 0);
    *plies += k;
    return w;
}

/* ---- command line ----------------------------------------------------------------- */
static void fail(const char *msg, const char *arg)
{
    fprintf(stderr, "Error: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    exit(2);
}

static uint64_t parse_u64(const char *s, const char *what, uint64_t lo, uint64_t hi)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-')
        fail(what, s ? s : "missing");
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        fail(what, s);
    return (uint64_t)v;
}

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static const char *USAGE =
    "usage: playout perft N [--trampoline optional|mandatory]\n"
    "       playout run GAMES [--seed S] [--trampoline optional|mandatory]";

int main(int argc, char **argv)
{
    if (argc < 3)
        fail("missing arguments", USAGE);
    int is_perft = strcmp(argv[1], "perft") == 0;
    if (!is_perft && strcmp(argv[1], "run") != 0)
        fail("unknown mode (perft or run)", argv[1]);
    uint64_t count = is_perft ? parse_u64(argv[2], "depth must be 0..40", 0, 40)
                              : parse_u64(argv[2], "GAMES must be a positive integer", 1,
                                          UINT64_MAX);
    uint64_t seed = 1;
    int mandatory = 0;
    for (int i = 3; i < argc; i += 2) {
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--trampoline") == 0) {
            if (val && strcmp(val, "mandatory") == 0)
                mandatory = 1;
            else if (!val || strcmp(val, "optional") != 0)
                fail("--trampoline must be optional or mandatory", val);
        } else if (strcmp(argv[i], "--seed") == 0 && !is_perft) {
            seed = parse_u64(val, "--seed must be an unsigned 64-bit integer", 0, UINT64_MAX);
        } else {
            fail("unknown option", argv[i]);
        }
    }
    init_tables(mandatory);
    Pos start;
    initial(&start);

    if (is_perft) {
        printf("{\"mode\":\"perft\",\"depth\":%d,\"nodes\":%llu}\n", (int)count,
               (unsigned long long)perft(&start, (int)count));
        return 0;
    }
    Rng rng;
    rng_seed(&rng, seed);
    uint64_t actions = 0, wins[2] = {0, 0};
    double t0 = cpu_seconds();
    for (uint64_t g = 0; g < count; g++)
        wins[playout(&start, &rng, &actions)]++;
    double cpu = cpu_seconds() - t0;
    printf("{\"mode\":\"playout\",\"trampoline\":\"%s\",\"seed\":%llu,\"games\":%llu,"
           "\"actions\":%llu,\"wins\":[%llu,%llu],\"cpu_s\":%.6f,\"actions_per_s\":%.0f,"
           "\"games_per_s\":%.0f}\n",
           mandatory ? "mandatory" : "optional", (unsigned long long)seed,
           (unsigned long long)count, (unsigned long long)actions,
           (unsigned long long)wins[0], (unsigned long long)wins[1], cpu,
           (double)actions / cpu, (double)count / cpu);
    return 0;
}
