/* dfpn.c -- a plain-C df-pn reference solver for two-player Lotus.
 *
 * A yardstick for niwa's single-core proof search (niwa.solver.proof): the same algorithm,
 * written as tightly as we could in one C file, so that "niwa's nodes and node rate against
 * a plain C df-pn" can be measured on one machine in one run (run.py compare).
 *
 * Rules: /work/shared/rules/lotus.md (docs/rules/lotus.md), two players, with niwa's action
 * model and action numbering, so perft counts and move names compare one to one:
 *     action = 4*source + 2*lane + bounce; source = 4*seat + (h-1) for a start tower of
 *     height h, or 16 + space index for a track space; PASS = 4*(16 + number of spaces).
 * Spaces: lane a (a1..aL) = 0..L-1, lane b = L..2L-1, shared positions L+1..R after them.
 * Moves are generated in niwa's order (start towers by height, lane a before b, land before
 * bounce; then track spaces by index), so ties of proof numbers break the same way.
 *
 * Representation. Two colours, so a stack is a word of colour bits (bit k = colour of the
 * k-th stone from the bottom) plus its height; tops[p] is a bitmask of the spaces whose
 * top stone is p's. Moves are made and unmade in place (no copies).
 *
 * Search: df-pn (Nagai 2002) in negamax form, as niwa.solver.proof's docstring describes:
 *  - MID(n, thpn, thdn) works below n while pn < thpn and dn < thdn; one MID call is one
 *    "node" (an expansion), counted on entry, as niwa counts them;
 *  - the 1+eps trick (Pawlewicz & Lew), eps = 1/4: the most-proving child runs until its
 *    number exceeds the second best by a factor 5/4;
 *  - mobility initial numbers: an unexplored child gets pn 1, dn = its number of legal
 *    moves (both in the child's mover's view);
 *  - when expanding: a move that wins at once proves n (the rest are not looked at), and
 *    a child the table holds as proven good for us does too (enhanced transposition cutoff);
 *  - after each descent the open siblings are read again from the table;
 *  - a child with the same mover (the pro opening's second stone) is taken unswapped.
 * Transposition table: buckets of 4 entries of 24 bytes (as niwa's), bucket chosen by a
 * hash of the key; the key is the whole position packed into 96 bits (exact: two positions
 * share an entry only if they are equal or lane mirrors), so no collision can mislead the
 * proof. Lane symmetry: a position and its mirror (lane a <-> lane b) have one key, the
 * smaller of the two encodings. Replacement: a full bucket gives up the entry with the
 * least work (expansions spent below it; ties: the first), and a stored entry's work adds
 * to what that position's entry held before (niwa's rule).
 *
 * Build: cc -O3 -o dfpn dfpn.c      (C99 plus GCC/Clang builtins and unsigned __int128)
 * Usage:
 *   dfpn solve   [variant options] [--tt-mb MB] [--max-nodes N] [--no-root-values] [--huge-pages]
 *   dfpn perft N [variant options]
 *   dfpn playout GAMES [variant options] [--seed S]
 * variant options: --rule basic|pro --trampoline optional|mandatory --towers 1..4
 *                  --lane L --shared S --trampoline-at T  (defaults 3, 11, 8; towers 4)
 *                  --position "NOTATION" (a niwa Lotus notation line; overrides the above)
 * Output: one line of JSON.
 */
#define _DEFAULT_SOURCE     /* MAP_ANONYMOUS, strtok_r, clock_gettime */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

typedef unsigned __int128 u128;

enum { MAXSP = 48, MAXH = 24, MAXM = 160, MAXPLY = 1024, GOAL = 255, BUCKET = 4 };
#define INF 0xFFFFFFFFu
#define PN_MAX 0xFFFFFFFEu

/* ---- geometry and variant (fixed for a run) -------------------------------------------- */
static int L = 3, SH = 11, R = 14, TPOS = 8, TSPACE, NSP, TOWERS = 4, STONES, PRO, MAND, PASS;
static uint8_t POS[MAXSP], LANE_OF[MAXSP];          /* route position (1-based), lane 0/1/2 */
static uint8_t START_DEST[5][2][2];                 /* [h][lane][bounce] -> space or GOAL */
static uint8_t TRACK_DEST[MAXSP][MAXH][2];          /* [space][distance][bounce] */
static uint8_t CNT_START[5], CNT_TRACK[MAXSP][MAXH]; /* actions of one stone (mobility) */

static int space_at(int lane, int p) { return p <= L ? lane * L + p - 1 : 2 * L + p - L - 1; }
static int dest_of(int lane, int p) { return p > R ? GOAL : space_at(lane, p); }
static int n_landings(int dest) { return (dest == TSPACE && !MAND) ? 2 : 1; }

static const char* setup_geometry(void) {
    static char err[200];
    if (L < 1 || L > 8 || SH < 1 || SH > 32 || TOWERS < 1 || TOWERS > 4) return "geometry out of range";
    if (!(L < TPOS && TPOS <= L + SH)) {
        snprintf(err, sizeof err, "trampoline_at=%d must be a shared space: %d..%d", TPOS, L + 1, L + SH);
        return err;
    }
    R = L + SH; NSP = 2 * L + SH; TSPACE = space_at(0, TPOS); PASS = 4 * (16 + NSP);
    STONES = TOWERS * (TOWERS + 1) / 2;
    /* key bits: 27 fixed + (2h + 1) per space, h summing to at most 2 * STONES */
    if (27 + 4 * STONES + NSP > 96) return "board too large for the 96-bit exact key";
    for (int s = 0; s < NSP; s++) {
        if (s < 2 * L) { POS[s] = s % L + 1; LANE_OF[s] = s / L; }
        else { POS[s] = s - 2 * L + L + 1; LANE_OF[s] = 2; }
    }
    for (int h = 1; h <= 4; h++)
        for (int ln = 0; ln < 2; ln++)
            for (int b = 0; b < 2; b++) START_DEST[h][ln][b] = dest_of(ln, h * (1 + b));
    for (int h = 1; h <= 4; h++) {
        if (h > R) CNT_START[h] = 1;
        else if (h <= L) CNT_START[h] = 2 * n_landings(space_at(0, h));
        else CNT_START[h] = n_landings(space_at(0, h));
    }
    for (int s = 0; s < NSP; s++)
        for (int d = 1; d < MAXH; d++) {
            for (int b = 0; b < 2; b++) TRACK_DEST[s][d][b] = dest_of(LANE_OF[s] & 1, POS[s] + d * (1 + b));
            int np = POS[s] + d;
            CNT_TRACK[s][d] = np > R ? 1 : n_landings(space_at(LANE_OF[s] & 1, np));
        }
    return NULL;
}

/* ---- position ------------------------------------------------------------------------ */
typedef struct {
    uint32_t col[MAXSP];     /* colour bits of each stack, bottom stone = bit 0 */
    uint8_t ht[MAXSP];       /* stack heights */
    uint64_t tops[2];        /* spaces whose top stone is p's */
    uint8_t start[2][5];     /* start[p][h]: p's start towers of height h */
    uint8_t smask[2];        /* bit h set when start[p][h] > 0 */
    uint8_t goal[2];
    uint8_t to_move, opening;  /* opening: pro 2p opening, 1 before seat 0's first action, 2 before its second */
    int8_t winner;           /* -1 while the game runs */
} Pos;

static Pos P;   /* the one position the search, perft and playouts work on, in place */

static void initial(Pos* p) {
    memset(p, 0, sizeof *p);
    for (int q = 0; q < 2; q++)
        for (int h = 1; h <= TOWERS; h++) { p->start[q][h] = 1; p->smask[q] |= 1u << h; }
    p->winner = -1;
    p->opening = PRO ? 1 : 0;
}

static inline int top_colour(const Pos* p, int s) { return (p->col[s] >> (p->ht[s] - 1)) & 1; }

static inline void push(Pos* p, int s, int c) {
    int h = p->ht[s];
    uint64_t bit = 1ULL << s;
    if (h) p->tops[(p->col[s] >> (h - 1)) & 1] &= ~bit;
    p->col[s] |= (uint32_t)c << h;
    p->ht[s] = h + 1;
    p->tops[c] |= bit;
}

static inline int pop(Pos* p, int s) {
    int h = p->ht[s] - 1, c = (p->col[s] >> h) & 1;
    uint64_t bit = 1ULL << s;
    p->ht[s] = h;
    p->col[s] &= ~(1u << h);
    p->tops[c] &= ~bit;
    if (h) p->tops[(p->col[s] >> (h - 1)) & 1] |= bit;
    return c;
}

/* ---- move generation (niwa's order) --------------------------------------------------- */
static inline int add_dest(int* out, int n, int base, int dest) {
    if (dest == TSPACE) {
        if (MAND) { out[n] = base | 1; return n + 1; }
        out[n] = base; out[n + 1] = base | 1; return n + 2;
    }
    out[n] = base;
    return n + 1;
}

static inline int gen_start(int* out, int n, int q, int h) {
    int base = 4 * (4 * q + h - 1);
    if (h > R) { out[n] = base; return n + 1; }
    if (h <= L) {
        n = add_dest(out, n, base, space_at(0, h));
        return add_dest(out, n, base | 2, space_at(1, h));
    }
    return add_dest(out, n, base, space_at(0, h));
}

static inline int gen_track(const Pos* p, int* out, int n, int s) {
    int base = 4 * (16 + s), np = POS[s] + p->ht[s];
    if (np > R) { out[n] = base; return n + 1; }
    return add_dest(out, n, base, space_at(LANE_OF[s] & 1, np));
}

static int gen(const Pos* p, int* out) {
    int n = 0, m = p->to_move;
    if (p->winner >= 0) return 0;
    if (p->opening == 2) {
        for (int h = 1; h <= TOWERS; h++)
            if (p->start[0][h]) n = gen_start(out, n, 0, h);
        out[n] = PASS;
        return n + 1;
    }
    for (unsigned hs = p->smask[m]; hs; hs &= hs - 1) n = gen_start(out, n, m, __builtin_ctz(hs));
    for (uint64_t b = p->tops[m]; b; b &= b - 1) n = gen_track(p, out, n, __builtin_ctzll(b));
    if (n > 0) return n;
    if (!PRO) {   /* blocked, basic rule: any free stone of the other player, or pass */
        for (unsigned hs = p->smask[1 - m]; hs; hs &= hs - 1) n = gen_start(out, n, 1 - m, __builtin_ctz(hs));
        for (uint64_t b = p->tops[1 - m]; b; b &= b - 1) n = gen_track(p, out, n, __builtin_ctzll(b));
    }
    out[n] = PASS;
    return n + 1;
}

/* The number of legal actions (what gen would return), without generating them. */
static inline int count_moves(const Pos* p) {
    int n = 0, m = p->to_move;
    if (p->opening == 2) {
        for (unsigned hs = p->smask[0]; hs; hs &= hs - 1) n += CNT_START[__builtin_ctz(hs)];
        return n + 1;
    }
    for (unsigned hs = p->smask[m]; hs; hs &= hs - 1) n += CNT_START[__builtin_ctz(hs)];
    for (uint64_t b = p->tops[m]; b; b &= b - 1) { int s = __builtin_ctzll(b); n += CNT_TRACK[s][p->ht[s]]; }
    if (n > 0 || PRO) return n > 0 ? n : 1;
    for (unsigned hs = p->smask[1 - m]; hs; hs &= hs - 1) n += CNT_START[__builtin_ctz(hs)];
    for (uint64_t b = p->tops[1 - m]; b; b &= b - 1) { int s = __builtin_ctzll(b); n += CNT_TRACK[s][p->ht[s]]; }
    return n + 1;
}

/* ---- make / unmake ------------------------------------------------------------------- */
typedef struct { uint8_t src, dst, colour, to_move, opening, moved; int8_t winner; } Undo;

static inline void make(Pos* p, int a, Undo* u) {
    u->to_move = p->to_move; u->opening = p->opening; u->winner = p->winner; u->moved = 0;
    if (a != PASS) {
        int src = a >> 2, b = a & 1, colour, dst;
        if (src < 16) {
            int q = src >> 2, h = (src & 3) + 1;
            if (--p->start[q][h] == 0) p->smask[q] &= ~(1u << h);
            if (h > 1) { p->start[q][h - 1]++; p->smask[q] |= 1u << (h - 1); }
            colour = q;
            dst = START_DEST[h][(a >> 1) & 1][b];
            u->src = 128 + h;
        } else {
            int s = src - 16, h = p->ht[s];
            colour = pop(p, s);
            dst = TRACK_DEST[s][h][b];
            u->src = s;
        }
        u->moved = 1; u->colour = colour; u->dst = dst;
        if (dst == GOAL) {
            if (++p->goal[colour] == STONES) { p->winner = colour; return; }
        } else {
            push(p, dst, colour);
        }
    }
    if (p->opening == 1) { p->opening = 2; return; }
    p->opening = 0;
    p->to_move ^= 1;
}

static inline void unmake(Pos* p, const Undo* u) {
    if (u->moved) {
        int c = u->colour;
        if (u->dst == GOAL) p->goal[c]--; else pop(p, u->dst);
        if (u->src >= 128) {
            int h = u->src - 128;
            p->start[c][h]++; p->smask[c] |= 1u << h;
            if (h > 1 && --p->start[c][h - 1] == 0) p->smask[c] &= ~(1u << (h - 1));
        } else {
            push(p, u->src, c);
        }
    }
    p->to_move = u->to_move; p->opening = u->opening; p->winner = u->winner;
}

/* ---- exact keys ---------------------------------------------------------------------- */
/* A stack of height h with colour bits c is coded as h ones, a zero, then the h colour bits
 * ((c << (h+1)) | (2^h - 1), 2h+1 bits): read from its low end it says where it stops, so
 * codes appended one after the other (each shifting the ones before it up) decode uniquely.
 * Key = [to_move, opening, both start counts (27 bits)] then the shared spaces, then lane a,
 * then lane b. The lane mirror's key differs only in the order of the two lane parts: the
 * smaller of the two is the key of both. At most 27 + 4*STONES + NSP <= 96 bits. */
static inline uint64_t stack_code(const Pos* p, int s, int* len) {
    int h = p->ht[s];
    *len = 2 * h + 1;
    return ((uint64_t)p->col[s] << (h + 1)) | ((1ULL << h) - 1);
}

static inline u128 key_of(const Pos* p) {
    uint64_t f = p->to_move | (uint64_t)p->opening << 1;
    for (int q = 0; q < 2; q++)
        for (int h = 1; h <= 4; h++) f = (f << 3) | p->start[q][h];
    u128 k = f;
    int len;
    for (int s = 2 * L; s < NSP; s++) { uint64_t c = stack_code(p, s, &len); k = (k << len) | c; }
    uint64_t a = 0, b = 0;
    int la = 0, lb = 0;
    for (int s = 0; s < L; s++) { uint64_t c = stack_code(p, s, &len); a = (a << len) | c; la += len; }
    for (int s = L; s < 2 * L; s++) { uint64_t c = stack_code(p, s, &len); b = (b << len) | c; lb += len; }
    uint64_t t1 = (a << lb) | b, t2 = (b << la) | a;    /* la + lb <= 2*(2*STONES) + 2L < 64 */
    return (k << (la + lb)) | (t1 < t2 ? t1 : t2);
}

/* ---- transposition table ------------------------------------------------------------- */
typedef struct { uint64_t klo; uint32_t khi, pn, dn, work; } Entry;   /* 24 bytes */

static Entry* TT;
static uint64_t NBUCKETS, USED, OVERWRITES;

static inline Entry* bucket_of(u128 k) {
    uint64_t x = (uint64_t)k * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(k >> 64) * 0xC2B2AE3D27D4EB4FULL;
    x ^= x >> 29; x *= 0xBF58476D1CE4E5B9ULL; x ^= x >> 32;
    return TT + (((x >> 32) * NBUCKETS) >> 32) * BUCKET;
}

static inline int probe(u128 k, uint32_t* pn, uint32_t* dn) {
    Entry* b = bucket_of(k);
    uint64_t lo = (uint64_t)k;
    uint32_t hi = (uint32_t)(k >> 64);
    for (int i = 0; i < BUCKET; i++)
        if (b[i].klo == lo && b[i].khi == hi && (b[i].pn | b[i].dn)) { *pn = b[i].pn; *dn = b[i].dn; return 1; }
    return 0;
}

static void store(u128 k, uint32_t pn, uint32_t dn, uint64_t work) {
    Entry* b = bucket_of(k);
    Entry *e = NULL, *empty = NULL, *victim = b;
    uint64_t lo = (uint64_t)k;
    uint32_t hi = (uint32_t)(k >> 64), vw = 0xFFFFFFFFu;
    for (int i = 0; i < BUCKET; i++) {
        if ((b[i].pn | b[i].dn) == 0) { if (!empty) empty = &b[i]; continue; }
        if (b[i].klo == lo && b[i].khi == hi) { e = &b[i]; work += b[i].work; break; }
        if (b[i].work < vw || i == 0) { victim = &b[i]; vw = b[i].work; }
    }
    if (!e) {
        if (empty) { e = empty; USED++; }
        else { e = victim; OVERWRITES++; }
    }
    e->klo = lo; e->khi = hi; e->pn = pn; e->dn = dn;
    e->work = work < 0xFFFFFFFFu ? (uint32_t)work : 0xFFFFFFFFu;
}

/* ---- df-pn ---------------------------------------------------------------------------- */
enum { KIND_FLIP = 0, KIND_SAME = 1, KIND_LOSS = 3 };

static int* C_MOVE;
static u128* C_KEY;
static uint8_t* C_KIND;
static uint32_t *C_P, *C_D;      /* children's numbers in the parent's view */
static uint64_t NODES, MAX_NODES;
static int STOP, DEEPEST;

static inline uint32_t select_best(const uint32_t* cp, const uint32_t* cd, int n,
                                   int* c1, uint64_t* p2o, uint32_t* dno) {
    uint32_t pn = INF;
    uint64_t p2 = INF, sum = 0;
    int best = 0;
    for (int i = 0; i < n; i++) {
        if (cp[i] < pn) { p2 = pn; pn = cp[i]; best = i; }
        else if (cp[i] < p2) p2 = cp[i];
        sum += cd[i];
    }
    *dno = pn == 0 ? INF : (uint32_t)(sum < PN_MAX ? sum : PN_MAX);
    *c1 = best;
    *p2o = p2;
    return pn;
}

static inline void read_child(size_t j) {
    uint32_t pn, dn;
    if (probe(C_KEY[j], &pn, &dn)) {
        if (C_KIND[j] == KIND_FLIP) { C_P[j] = dn; C_D[j] = pn; }
        else { C_P[j] = pn; C_D[j] = dn; }
    }
}

static void mid(int ply, u128 key, uint32_t thpn, uint32_t thdn, uint32_t* opn, uint32_t* odn) {
    uint64_t nodes0 = NODES;
    size_t base = (size_t)ply * MAXM;
    int* mv = C_MOVE + base;
    u128* ck = C_KEY + base;
    uint8_t* kind = C_KIND + base;
    uint32_t *cp = C_P + base, *cd = C_D + base;
    Undo u;
    NODES++;
    if (ply > DEEPEST) DEEPEST = ply;
    if (MAX_NODES && NODES >= MAX_NODES) STOP = 1;
    if (ply + 1 >= MAXPLY) STOP = 2;
    if (STOP) {
        if (!probe(key, opn, odn)) *opn = *odn = 1;
        return;
    }
    int mover = P.to_move;
    int n = gen(&P, mv);
    /* every move: an immediate win proves the position; the others get key and numbers */
    for (int i = 0; i < n; i++) {
        make(&P, mv[i], &u);
        if (P.winner >= 0) {
            int won = P.winner == mover;
            unmake(&P, &u);
            if (won) {
                store(key, 0, INF, NODES - nodes0);
                *opn = 0; *odn = INF;
                return;
            }
            kind[i] = KIND_LOSS; cp[i] = INF; cd[i] = 0;
            continue;
        }
        u128 k = key_of(&P);
        ck[i] = k;
        Entry* bk = bucket_of(k);
        __builtin_prefetch(bk);
        __builtin_prefetch((char*)bk + sizeof(Entry) * BUCKET - 1);   /* a bucket spans two lines */
        uint32_t moves = count_moves(&P);
        if (P.to_move != mover) { kind[i] = KIND_FLIP; cp[i] = moves; cd[i] = 1; }
        else { kind[i] = KIND_SAME; cp[i] = 1; cd[i] = moves; }
        unmake(&P, &u);
    }
    /* what the table knows overrides; a child proven good for us proves the position */
    for (int i = 0; i < n; i++) {
        if (kind[i] <= KIND_SAME) {
            read_child(base + i);
            if (cp[i] == 0) {
                store(key, 0, INF, NODES - nodes0);
                *opn = 0; *odn = INF;
                return;
            }
        }
    }
    uint32_t pn, dn, apn, adn;
    int c1;
    uint64_t p2;
    for (;;) {
        pn = select_best(cp, cd, n, &c1, &p2, &dn);
        if (pn == 0 || dn == 0 || pn >= thpn || dn >= thdn || STOP) break;
        uint64_t tp, td;
        if (p2 >= INF) tp = thpn;
        else {
            tp = p2 + (p2 >> 2);            /* 1 + eps, eps = 1/4 */
            if (tp <= p2) tp = p2 + 1;
            if (tp > thpn) tp = thpn;
        }
        if (thdn >= INF) td = INF;
        else {
            td = (uint64_t)thdn - dn + cd[c1];
            if (td >= INF) td = PN_MAX;
        }
        make(&P, mv[c1], &u);
        if (kind[c1] == KIND_FLIP) {
            mid(ply + 1, ck[c1], (uint32_t)td, (uint32_t)tp, &apn, &adn);
            cp[c1] = adn; cd[c1] = apn;
        } else {
            mid(ply + 1, ck[c1], (uint32_t)tp, (uint32_t)td, &apn, &adn);
            cp[c1] = apn; cd[c1] = adn;
        }
        unmake(&P, &u);
        if (cp[c1] != 0) {
            /* siblings may have changed meanwhile (transpositions inside c1's subtree);
               their buckets are fetched together first (the misses overlap) */
            for (int i = 0; i < n; i++)
                if (i != c1 && kind[i] <= KIND_SAME && cp[i] != 0 && cd[i] != 0) {
                    Entry* bk = bucket_of(ck[i]);
                    __builtin_prefetch(bk);
                    __builtin_prefetch((char*)bk + sizeof(Entry) * BUCKET - 1);
                }
            for (int i = 0; i < n; i++)
                if (i != c1 && kind[i] <= KIND_SAME && cp[i] != 0 && cd[i] != 0) read_child(base + i);
        }
    }
    store(key, pn, dn, NODES - nodes0);
    *opn = pn; *odn = dn;
}

/* 1 the mover of P wins, 0 it loses, -1 unknown (stopped). Starts at `ply`. */
static int prove(int ply) {
    uint32_t pn, dn;
    u128 key = key_of(&P);
    if (probe(key, &pn, &dn) && (pn == 0 || dn == 0)) return pn == 0;
    mid(ply, key, INF, INF, &pn, &dn);
    return pn == 0 ? 1 : dn == 0 ? 0 : -1;
}

/* ---- names (niwa's action_to_string) ---------------------------------------------------- */
static void space_name(int s, char* out) {
    if (LANE_OF[s] == 2) sprintf(out, "%d", POS[s]);
    else sprintf(out, "%c%d", "ab"[LANE_OF[s]], POS[s]);
}

static void dest_name(int p, int lane, char* out) {
    if (p > R) strcpy(out, "goal");
    else space_name(space_at(lane, p), out);
}

static void action_name(const Pos* p, int a, char* out) {
    char src[16], d1[16], d2[16];
    if (a == PASS) { strcpy(out, "pass"); return; }
    int s = a >> 2, lane = (a >> 1) & 1, dist, from;
    if (s < 16) { sprintf(src, "%c%d", "WB"[s >> 2], (s & 3) + 1); dist = (s & 3) + 1; from = 0; }
    else { s -= 16; space_name(s, src); dist = p->ht[s]; from = POS[s]; lane = LANE_OF[s] & 1; }
    dest_name(from + dist, lane, d1);
    if (a & 1) { dest_name(from + 2 * dist, lane, d2); sprintf(out, "%s-%s*%s", src, d1, d2); }
    else sprintf(out, "%s-%s", src, d1);
}

/* ---- perft and playouts ------------------------------------------------------------------ */
static uint64_t perft(int depth) {
    int mv[MAXM];
    int n = gen(&P, mv);
    if (depth == 1) return (uint64_t)n;
    uint64_t total = 0;
    Undo u;
    for (int i = 0; i < n; i++) {
        make(&P, mv[i], &u);
        total += perft(depth - 1);
        unmake(&P, &u);
    }
    return total;
}

static uint64_t rng_state;
static inline uint64_t splitmix64(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- notation (niwa's Lotus position line, two players) ---------------------------------- */
static int fail(const char* what) { fprintf(stderr, "Error: %s\n", what); exit(2); }

static int colour_of(char c) { return c == 'W' ? 0 : c == 'B' ? 1 : fail("position: colour must be W or B"); }

/* "lotus players=2 rule=.. trampoline=..[ lane=.. shared=.. trampoline_at=.. towers=..];
 *  track a3:BW 5:B; start WW W B; goal W:0 B:0; turn W[ opening=first|second]" */
static void parse_header(const char* text) {
    char buf[1024], *save = NULL;
    snprintf(buf, sizeof buf, "%s", text);
    char* head = strtok_r(buf, ";", &save);
    if (!head) fail("position: empty");
    char* w2 = NULL;
    for (char* w = strtok_r(head, " ", &w2); w; w = strtok_r(NULL, " ", &w2)) {
        if (!strcmp(w, "lotus")) continue;
        if (!strcmp(w, "players=2")) continue;
        if (!strncmp(w, "players=", 8)) fail("position: the reference handles 2 players only");
        else if (!strcmp(w, "rule=basic")) PRO = 0;
        else if (!strcmp(w, "rule=pro")) PRO = 1;
        else if (!strcmp(w, "trampoline=optional")) MAND = 0;
        else if (!strcmp(w, "trampoline=mandatory")) MAND = 1;
        else if (!strncmp(w, "lane=", 5)) L = atoi(w + 5);
        else if (!strncmp(w, "shared=", 7)) SH = atoi(w + 7);
        else if (!strncmp(w, "trampoline_at=", 14)) TPOS = atoi(w + 14);
        else if (!strncmp(w, "towers=", 7)) TOWERS = atoi(w + 7);
        else fail("position: unknown header word");
    }
}

static void parse_body(const char* text, Pos* p) {
    char buf[1024], *save = NULL;
    snprintf(buf, sizeof buf, "%s", text);
    strtok_r(buf, ";", &save);
    memset(p, 0, sizeof *p);
    p->winner = -1;
    for (char* part = strtok_r(NULL, ";", &save); part; part = strtok_r(NULL, ";", &save)) {
        char* w2 = NULL;
        char* w = strtok_r(part, " ", &w2);
        if (!w) fail("position: empty part");
        if (!strcmp(w, "track")) {
            while ((w = strtok_r(NULL, " ", &w2))) {
                if (!strcmp(w, "-")) continue;
                char* colon = strchr(w, ':');
                if (!colon) fail("position: track item needs SPACE:STACK");
                *colon = 0;
                int s = -1;
                for (int i = 0; i < NSP; i++) { char nm[16]; space_name(i, nm); if (!strcmp(nm, w)) s = i; }
                if (s < 0) fail("position: unknown track space");
                for (char* c = colon + 1; *c; c++) push(p, s, colour_of(*c));
            }
        } else if (!strcmp(w, "start")) {
            while ((w = strtok_r(NULL, " ", &w2))) {
                if (!strcmp(w, "-")) continue;
                int h = (int)strlen(w), c = colour_of(w[0]);
                if (h > TOWERS) fail("position: start tower too tall");
                p->start[c][h]++; p->smask[c] |= 1u << h;
            }
        } else if (!strcmp(w, "goal")) {
            while ((w = strtok_r(NULL, " ", &w2))) {
                if (strlen(w) < 3 || w[1] != ':') fail("position: goal item needs COLOUR:COUNT");
                p->goal[colour_of(w[0])] = atoi(w + 2);
            }
        } else if (!strcmp(w, "turn")) {
            w = strtok_r(NULL, " ", &w2);
            if (!w) fail("position: turn needs a colour");
            p->to_move = colour_of(w[0]);
            while ((w = strtok_r(NULL, " ", &w2))) {
                if (!strcmp(w, "opening=first")) p->opening = 1;
                else if (!strcmp(w, "opening=second")) p->opening = 2;
                else fail("position: unknown turn item");
            }
        } else fail("position: unknown part");
    }
    for (int c = 0; c < 2; c++) if (p->goal[c] == STONES) p->winner = c;
}

/* ---- main ------------------------------------------------------------------------------- */
static long long number(const char* s, const char* what) {
    char* end;
    long long v = strtoll(s, &end, 10);
    if (*s == 0 || *end != 0 || v < 0) { fprintf(stderr, "Error: %s must be a non-negative integer, got '%s'\n", what, s); exit(2); }
    return v;
}

int main(int argc, char** argv) {
    if (argc < 2) fail("usage: dfpn solve|perft N|playout GAMES [options] (see the file's head)");
    const char* mode = argv[1];
    long long arg = 0;
    int i = 2;
    if (!strcmp(mode, "perft") || !strcmp(mode, "playout")) {
        if (argc < 3) fail("perft and playout need a number");
        arg = number(argv[2], mode);
        i = 3;
    } else if (strcmp(mode, "solve")) fail("mode must be solve, perft or playout");
    double tt_mb = 1024;
    int root_values = 1, huge_pages = 0;
    const char* position = NULL;
    for (; i < argc; i++) {
        const char* o = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--no-root-values")) { root_values = 0; continue; }
        if (!strcmp(o, "--huge-pages")) { huge_pages = 1; continue; }
        if (!v) fail("an option is missing its value");
        i++;
        if (!strcmp(o, "--rule")) { if (!strcmp(v, "pro")) PRO = 1; else if (!strcmp(v, "basic")) PRO = 0; else fail("--rule must be basic or pro"); }
        else if (!strcmp(o, "--trampoline")) { if (!strcmp(v, "mandatory")) MAND = 1; else if (!strcmp(v, "optional")) MAND = 0; else fail("--trampoline must be optional or mandatory"); }
        else if (!strcmp(o, "--towers")) TOWERS = (int)number(v, "--towers");
        else if (!strcmp(o, "--lane")) L = (int)number(v, "--lane");
        else if (!strcmp(o, "--shared")) SH = (int)number(v, "--shared");
        else if (!strcmp(o, "--trampoline-at")) TPOS = (int)number(v, "--trampoline-at");
        else if (!strcmp(o, "--tt-mb")) { tt_mb = atof(v); if (!(tt_mb > 0)) fail("--tt-mb must be positive"); }
        else if (!strcmp(o, "--max-nodes")) MAX_NODES = (uint64_t)number(v, "--max-nodes");
        else if (!strcmp(o, "--seed")) rng_state = (uint64_t)number(v, "--seed");
        else if (!strcmp(o, "--position")) position = v;
        else { fprintf(stderr, "Error: unknown option %s\n", o); return 2; }
    }
    if (position) parse_header(position);
    const char* err = setup_geometry();
    if (err) { fprintf(stderr, "Error: %s\n", err); return 2; }
    if (position) parse_body(position, &P); else initial(&P);
    const char* variant_fmt = "\"rule\": \"%s\", \"trampoline\": \"%s\", \"towers\": %d, \"lane\": %d, \"shared\": %d, \"trampoline_at\": %d";
    char variant[256];
    snprintf(variant, sizeof variant, variant_fmt, PRO ? "pro" : "basic", MAND ? "mandatory" : "optional", TOWERS, L, SH, TPOS);

    if (!strcmp(mode, "perft")) {
        double t0 = cpu_seconds();
        uint64_t n = arg == 0 ? 1 : (P.winner >= 0 ? 0 : perft((int)arg));
        double t1 = cpu_seconds();
        printf("{\"mode\": \"perft\", %s, \"depth\": %lld, \"count\": %llu, \"cpu_s\": %.3f}\n",
               variant, arg, (unsigned long long)n, t1 - t0);
        return 0;
    }
    if (!strcmp(mode, "playout")) {
        Pos start = P;
        int mv[MAXM];
        Undo u;
        uint64_t actions = 0, wins[2] = {0, 0};
        double t0 = cpu_seconds();
        for (long long g = 0; g < arg; g++) {
            P = start;
            while (P.winner < 0) {
                int n = gen(&P, mv);
                make(&P, mv[((splitmix64() >> 32) * (uint64_t)n) >> 32], &u);
                actions++;
            }
            wins[P.winner]++;
        }
        double t1 = cpu_seconds(), dt = t1 - t0 > 0 ? t1 - t0 : 1e-9;
        printf("{\"mode\": \"playout\", %s, \"games\": %lld, \"actions\": %llu, \"wins\": [%llu, %llu], "
               "\"cpu_s\": %.3f, \"actions_per_s\": %.0f, \"games_per_s\": %.0f}\n",
               variant, arg, (unsigned long long)actions, (unsigned long long)wins[0],
               (unsigned long long)wins[1], dt, actions / dt, arg / dt);
        return 0;
    }

    /* solve */
    if (P.winner >= 0) fail("the position is already over: nothing to prove");
    NBUCKETS = (uint64_t)(tt_mb * 1048576.0 / (BUCKET * sizeof(Entry)));
    if (NBUCKETS < 1) NBUCKETS = 1;
    if (NBUCKETS >= (1ULL << 32)) fail("--tt-mb too large");
    size_t bytes = NBUCKETS * BUCKET * sizeof(Entry);
    TT = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    /* as niwa's ProofSearch(huge_pages=...): 2 MB pages for the table, on request */
    if (TT != MAP_FAILED && huge_pages) madvise(TT, bytes, MADV_HUGEPAGE);
    size_t slots = (size_t)MAXPLY * MAXM;
    C_MOVE = malloc(slots * sizeof *C_MOVE);
    C_KEY = malloc(slots * sizeof *C_KEY);
    C_KIND = malloc(slots);
    C_P = malloc(slots * sizeof *C_P);
    C_D = malloc(slots * sizeof *C_D);
    if (TT == MAP_FAILED || !C_MOVE || !C_KEY || !C_KIND || !C_P || !C_D) fail("cannot allocate the table");
    int mover = P.to_move;
    double t0 = cpu_seconds();
    int v = prove(0);
    double t1 = cpu_seconds();
    uint64_t proof_nodes = NODES;
    if (STOP == 2) fail("the game went deeper than the ply limit");
    /* value for the first player (seat 0) */
    printf("{\"mode\": \"solve\", %s, \"mover\": %d, ", variant, mover);
    if (v >= 0) printf("\"value_first_player\": %d, ", mover == 0 ? v : 1 - v);
    else printf("\"value_first_player\": null, ");
    printf("\"status\": \"%s\", \"nodes\": %llu, \"cpu_s\": %.3f, \"nodes_per_cpu_s\": %.0f, "
           "\"tt_entries\": %llu, \"tt_capacity\": %llu, \"tt_mb\": %g, \"overwrites\": %llu, \"deepest\": %d",
           v >= 0 ? "proven" : "node limit", (unsigned long long)proof_nodes, t1 - t0,
           proof_nodes / (t1 - t0 > 0 ? t1 - t0 : 1e-9), (unsigned long long)USED,
           (unsigned long long)(NBUCKETS * BUCKET), tt_mb, (unsigned long long)OVERWRITES, DEEPEST);
    if (v >= 0 && root_values) {
        /* each first move's value for the mover (mostly read from the table) */
        int mv[MAXM], n = gen(&P, mv);
        Undo u;
        printf(", \"first_move_values\": {");
        MAX_NODES = MAX_NODES ? NODES + MAX_NODES : 0;
        for (int j = 0; j < n; j++) {
            char name[48];
            action_name(&P, mv[j], name);
            make(&P, mv[j], &u);
            int cv;
            if (P.winner >= 0) cv = P.winner == mover;
            else {
                int w = prove(1);
                cv = w < 0 ? -1 : (P.to_move == mover ? w : 1 - w);
            }
            unmake(&P, &u);
            if (cv < 0) printf("%s\"%s\": null", j ? ", " : "", name);
            else printf("%s\"%s\": %d", j ? ", " : "", name, cv);
        }
        printf("}, \"followup_nodes\": %llu", (unsigned long long)(NODES - proof_nodes));
    }
    printf("}\n");
    return 0;
}
