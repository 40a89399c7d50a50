# Proof-number search (df-pn) over the game contract (see proof.pyx).
from cpython.ref cimport PyObject
from libc.stdint cimport int32_t, uint32_t, uint64_t
from niwa.ext.exact cimport ExactValues
from niwa.ext.game cimport State

cdef enum:
    PN_BUCKET = 4           # entries per table bucket (probe and replacement stay in it)

# One transposition-table entry as the search reads it (a copy, checked against its key).
# pn/dn are in the perspective of the player to move at that position (pn = 0: the mover
# wins; dn = 0: the mover loses).
cdef struct PNEntry:
    uint64_t key
    uint32_t pn
    uint32_t dn
    uint32_t work           # positions expanded below this one, summed over visits (saturates)
    int32_t best            # the proving move once pn = 0, else -1

# How an entry lies in the table: three 64-bit words, 24 bytes. The first holds the key
# xor the other two (Hyatt's lockless hashing; the third word multiplied by an odd
# constant), so a slot whose words come from two different writes (processes sharing the
# table write without locks) fails the check and reads as a miss. An all-zero slot is
# empty (no real key checks against it but by a 64-bit coincidence).
cdef struct PNSlot:
    uint64_t check          # key ^ nums ^ (extra * odd constant)
    uint64_t nums           # pn | dn << 32
    uint64_t extra          # work | (uint32) best << 32

# A table several processes map (MAP_SHARED): a header page, then the buckets. Made by the
# parent before it forks its workers; each worker's ProofSearch works in it.
cdef struct SharedHeader:
    uint64_t magic
    uint64_t nbuckets
    uint32_t draws_seen     # some worker met a draw (pass-1 proofs then need pass 0 too)

cdef class SharedProofTable:
    cdef void* mem
    cdef size_t mem_bytes
    cdef SharedHeader* header
    cdef PNSlot* slots
    cdef readonly uint64_t nbuckets
    cdef readonly double tt_mb

# Maps a position to the 64-bit value its table key is made from. The default is the game's
# own hash; a hook may fold symmetric positions onto one key (SymmetricKeys uses the game's
# State.c_symmetric_hash), which is sound as long as symmetric positions have equal values.
cdef class KeyHook:
    cdef uint64_t key(self, State s) noexcept
    cpdef bint accepts(self, State s)

cdef class ProofSearch:
    cdef KeyHook hook
    cdef PNSlot* tt
    cdef readonly SharedProofTable shared     # None: a private table (mapped by this object)
    cdef uint64_t nbuckets
    cdef size_t tt_bytes
    cdef readonly long long capacity, used
    cdef readonly double tt_mb, eps
    cdef readonly long long nodes, max_nodes
    cdef readonly long long overwrites, overwritten_unproven, overwritten_big
    cdef readonly long long big_work
    cdef readonly unsigned int max_overwritten_work
    cdef readonly int max_ply, deepest
    cdef readonly bint reprobe
    cdef readonly bint twins        # keep one child per key (see merge_twins)
    cdef readonly bint order, auto_symmetry
    cdef readonly int init_mode
    cdef readonly bint weak
    cdef double deadline
    cdef bint cpu_clock             # deadline in this thread's CPU seconds (solve's cpu_time)
    cdef bint stop
    cdef object error
    cdef object stop_reason
    cdef PyObject** states
    cdef list state_refs
    # per-ply child lists (max_ply x MAX_ACTIONS each)
    cdef int* c_move
    cdef uint64_t* c_key
    cdef unsigned char* c_kind
    cdef uint32_t* c_p
    cdef uint32_t* c_d
    cdef float* c_score
    cdef int* scratch
    # exact values (endgame tables) consulted at every node; in use for this root only
    # when exact.accepts(root) (exact_on)
    cdef readonly ExactValues exact
    cdef bint exact_on
    cdef readonly long long table_hits
    # draws (returns 0.5/0.5) are decided in two passes: in pass w a drawn end counts as a
    # win for seat w; pass 1 is the default (its table keys unsalted), pass 0 is searched
    # only once a draw has been met (draws_seen, reset by clear())
    cdef int draw_winner
    cdef uint64_t pass_salt
    cdef readonly bint draws_seen

    cdef void prefetch(self, uint64_t key) noexcept
    cdef bint probe(self, uint64_t key, PNEntry* out) noexcept
    cdef bint draws_anywhere(self) noexcept
    cdef void note_draw(self) noexcept
    cdef void store(self, uint64_t key, uint32_t pn, uint32_t dn, long long work, int best) noexcept
    cdef uint64_t key_of(self, State s, int mover) noexcept
    cdef void mid(self, int ply, uint64_t key, uint32_t thpn, uint32_t thdn,
                  uint32_t* out_pn, uint32_t* out_dn) noexcept
    cdef bint enter_node(self, int ply, uint64_t key, uint32_t* out_pn, uint32_t* out_dn) noexcept
    cdef int expand_children(self, int ply, uint64_t key, long long nodes0,
                             uint32_t* out_pn, uint32_t* out_dn) noexcept
    cdef int init_child(self, State child, int mover, size_t k) noexcept
    cdef int merge_twins(self, size_t base, int n) noexcept
    cdef void read_child(self, size_t j) noexcept
    cdef int probe_children(self, size_t base, int n) noexcept
    cdef void sort_children(self, size_t base, int n) noexcept
    cdef void reprobe_siblings(self, size_t base, int n, int c1) noexcept
    cdef int prove_at_root(self, State s)
    cdef void set_pass(self, int draw_winner) noexcept
    cdef int _terminal_halves(self, State s, int pov)
    cdef int _combine(self, State s, int pov, bint search)
    cdef int _pass_value(self, State s, int mover, int draw_winner, bint search)
    cdef int _resolve(self, State s, int pov)
    cdef int _known(self, State s, int pov)
    cdef long long _work(self, State s)
    cdef bint _won_in_pass(self, State s, int winner, long long* work)
    cdef int _cheapest_win(self, State state, int winner, bint current_pass)
