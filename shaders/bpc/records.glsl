// The rate-control records of the BPC-PaCo encoder (BPC_RECORDS builds of
// bpc/encode.glsl): per pass the record of core bpc/encode/sequential.rs `walk`
// (kind, bitplane, codewords so far, distortion decrease), and the
// decrease at every codeword cut (host bpc/cpu.rs CutTrace, from the
// sequential encoder's SymbolObserver trace). Equal to the CPU's, integer
// for integer, at every subgroup size. Layout of both buffers: the module
// docs of host/src/bpc/gpu/records.rs.
//
// Decreases. Each coded symbol lowers the squared error of the spec's
// reconstruction (core record.rs): a significance with its sign symbol
// (significance_decrease), a refinement with its bit (refinement_decrease).
// Each lane adds its own decreases into rec_acc (the codeblock so far) and
// rec_pass (this pass); the team sums them only where a sum is needed: at
// a pass end (the record) and in a phase where some lane opens a codeword
// slot. In canonical order (core: lanes in order within a phase, each
// lane's decrease right after its symbol) the cut at the slot that lane t
// opens is every decrease before the phase, the team total of rec_acc,
// plus those of the lanes u < t in the phase, the team's exclusive prefix
// of the phase's decreases (phase A, the significance symbols, has none:
// a significance counts with its sign).
//
// Integer sums, exact in any order. A coefficient of magnitude v is, at
// every point, reconstructed between 0 and 2v, so its decrease so far is
// in [0, v^2], and one symbol's is in [-v^2/4, v^2]. So every value the
// team needs (a cut, a pass total, a phase's prefix, rec_acc, rec_pass)
// lies in [-E, E], E the codeblock's energy sum(v^2) <= N (2^(top+1) - 1)^2
// with N = width * height. The host codes on the device only codeblocks
// whose bound is below 2^63 (bpc::gpu_records::records_fit); for these
// every int64 here is exact, and the modulo-2^64 sums below give the
// exact value whatever the order of their terms. Larger codeblocks (from
// top bitplane 24 at 64x256) are coded on the CPU.
//
// The team sums use 32-bit subgroup arithmetic on 22-bit chunks of the
// two's complement (a chunk's sum over at most 64 invocations is below
// 2^28), so that no subgroup operation on 64-bit types, and no device
// feature beyond shaderInt64, is needed. With several subgroups per team
// (lavapipe's 4, 8 or 16 lanes) each subgroup's sums go through shared
// memory, combined without a loop (lavapipe's loop budget, see
// bpc_team_ballot in bpc/bpc.glsl) for up to BPC_REC_SUBGROUPS subgroups:
// subgroups of at least 4 lanes. The host refuses narrower subgroups, and
// main reports them (BPC_STATUS_RECORDS_SUBGROUPS) rather than sum wrong.

#define BPC_REC_SUBGROUPS 8u
#define BPC_STATUS_RECORDS_SUBGROUPS 4u

// This lane's decreases in the codeblock before the current phase, and in
// the current pass.
int64_t rec_acc = 0l;
int64_t rec_pass = 0l;
// Where the records of the codeblock being coded start.
uint rec_base = 0u;

// Per round and subgroup: (total of the prefix operand, total of the sum
// operand), two buffers used in turn like bpc_ballot_acc.
shared i64vec2 rec_share[2][BPC_REC_SUBGROUPS];
uint rec_round = 0u;

// The reconstruction rule (core record.rs reconstruct_magnitude).
uint rec_reconstruct(uint m, uint j) {
    return ((m >> j) << j) | (j == 0u ? 0u : 1u << (j - 1u));
}

// core record.rs significance_decrease: m^2 - (m - r_j)^2.
int64_t rec_significance_decrease(uint m, uint j) {
    int64_t v = int64_t(m);
    int64_t e = v - int64_t(rec_reconstruct(m, j));
    return v * v - e * e;
}

// core record.rs refinement_decrease: (m - r_{j+1})^2 - (m - r_j)^2.
int64_t rec_refinement_decrease(uint m, uint j) {
    int64_t v = int64_t(m);
    int64_t before = v - int64_t(rec_reconstruct(m, j + 1u));
    int64_t after = v - int64_t(rec_reconstruct(m, j));
    return before * before - after * after;
}

uvec3 rec_chunks(int64_t v) {
    uint64_t u = uint64_t(v);
    return uvec3(uint(u) & 0x3FFFFFu, uint(u >> 22) & 0x3FFFFFu, uint(u >> 44));
}

int64_t rec_join(uvec3 s) {
    return int64_t(uint64_t(s.x) + (uint64_t(s.y) << 22) + (uint64_t(s.z) << 44));
}

// Subgroup k's totals in round `cur`, where k < the subgroup count.
#define REC_TERM(k)                                                    \
    if ((k) < gl_NumSubgroups) {                                       \
        i64vec2 t = rec_share[cur][k];                                 \
        below += (k) < gl_SubgroupID ? t.x : 0l;                       \
        all += t.y;                                                    \
    }

// x: the team's exclusive prefix of `a` at this lane (lane order); y: the
// team's total of `b`. Uniform control flow only (it may hold a barrier).
i64vec2 rec_team(int64_t a, int64_t b) {
    uvec3 ca = rec_chunks(a);
    int64_t prefix = rec_join(subgroupExclusiveAdd(ca));
    int64_t total = rec_join(subgroupAdd(rec_chunks(b)));
    if (gl_NumSubgroups == 1u) {
        return i64vec2(prefix, total);
    }
    int64_t a_total = rec_join(subgroupAdd(ca));
    // Round r writes buffer r & 1, whose last readers (round r - 2) are past
    // round r - 1's barrier by the time any lane writes here.
    uint cur = rec_round & 1u;
    rec_round++;
    if (subgroupElect() && gl_SubgroupID < BPC_REC_SUBGROUPS) {
        rec_share[cur][gl_SubgroupID] = i64vec2(a_total, total);
    }
    barrier();
    int64_t below = 0l;
    int64_t all = 0l;
    REC_TERM(0u)
    REC_TERM(1u)
    REC_TERM(2u)
    REC_TERM(3u)
    REC_TERM(4u)
    REC_TERM(5u)
    REC_TERM(6u)
    REC_TERM(7u)
    return i64vec2(prefix + below, all);
}

// Called by encode_phase after the slot reservation: `need_mask` the
// team's lanes that open a slot (`slot` this lane's, when `need`), and
// `decrease` this lane's decrease in the phase (0 where it codes nothing
// or the phase has none). Uniform control flow only.
void rec_phase(uint need_mask, bool need, uint slot, int64_t decrease, uint cap) {
    if (need_mask != 0u) {
        i64vec2 s = rec_team(decrease, rec_acc);
        uint at = scratch_base + slot;
        if (need && slot < cap && at < uint(cuts.length())) {
            cuts[at] = s.y + s.x;
        }
    }
    rec_acc += decrease;
    rec_pass += decrease;
}

// Called after pass i (kind, bitplane j) of the codeblock: its record.
// Uniform control flow only.
void rec_pass_end(uint i, uint kind, uint j, bool three, uint lane) {
    int64_t total = rec_team(0l, rec_pass).y;
    rec_pass = 0l;
    uint at = rec_base + i;
    // No record outside the buffer, nor past a wrap of the start.
    if (lane == 0u && at >= rec_base && at < uint(records.length())) {
        uint64_t u = uint64_t(total);
        records[at] = uvec4(kind | j << 8, ac_next, uint(u), uint(u >> 32));
    }
}
