// The counting build of the BPC-PaCo encoder (BPC_COUNTS, included by
// bpc/encode.glsl): the encoder's walk over each codeblock's passes, adding
// every symbol to its cell instead of coding it. These are the counts host
// bpc/train.rs `Trainer` makes through core's SymbolObserver, the table
// fit's statistics (docs/codec.md, "Probability tables"). Which symbols are
// coded, and in which contexts, depends only on the coefficients, never on
// the probabilities or the coder, so nothing is coded: no lane reserves a
// codeword slot and every codeblock's codeword count is 0.
//
// Cells. A symbol of bitplane j coded with entry `at` of the bitplane's
// table row (bpc/bpc.glsl: sig 0-8, sign 9-12, ref 13, cp_sig 14-22,
// cp_sign 23-26; the entry names the symbol's class and context) counts in
// cell c = (at * 16 + group) * 15 + j. Symbols of bitplanes 15 and up have
// no table row and are not counted, as in the Trainer. Layout of the
// Cells buffer (uint words; host bpc/gpu/counts.rs reads it):
//   word 0: ~b of a codeblock b that bpc_measure.comp refused for a
//           coefficient too large to code (the smallest such b; 0: none);
//   word 1: ~b of one it refused for its descriptor (likewise);
//   words 2 + 2c, 2 + 2c + 1: the low 32 bits of cell c's zeros and total;
//   the same COUNT_CELLS * 2 words again after them: the high 32 bits.
// The table entries of 2-pass codeblocks are 0-13, so a 2-pass count's
// low words are a prefix of the buffer (the host downloads only those,
// and the high words only where the counted coefficients reach 2^32).
//
// Each workgroup counts its codeblock in shared memory, one word per (j,
// at): zeros in the high half, the total in the low half. A codeblock codes
// at most one symbol per coefficient in any one class and bitplane, so a
// cell gets at most 64 x 256 = 2^14 of its symbols and neither half carries
// into the other. After the codeblock, its nonzero words are added to the
// cells, a 32-bit atomic add on the low word and one more on the high word
// when that add wrapped: the 64-bit sums are exact, the same in any order
// and at any subgroup size, without 64-bit atomics.
//
// Selection: one word per codeblock: 0 counts nothing, 1 every pass,
// 2 | j << 8 | order << 16 the passes through the one of bitplane j and
// order `order` within its bitplane (SPP 0, MRP 1, CP 2), in coding order:
// bitplanes downwards, passes upwards within a bitplane (host
// bpc::train::BlockSymbols). That set is a prefix of the schedule, so the
// walk stops at the first pass outside it.

#ifdef BPC_RECORDS
#error "a counting build codes nothing, so it has no records"
#endif

#define COUNT_WORDS (BPC_TABLE_BITPLANES * BPC_ROW_LEN)
#define COUNT_CELLS (COUNT_WORDS * BPC_GROUPS)
#define COUNT_LOW 2u
#define COUNT_HIGH (COUNT_LOW + 2u * COUNT_CELLS)

shared uint count_shared[COUNT_WORDS];
// The bitplane of the pass being walked, and the codeblock's selection
// (the same in every lane).
uint count_j = 0u;
uint count_sel = 0u;

// Once per invocation, before bpc_team_init's barrier publishes it.
void count_init(uint lane) {
    for (uint i = lane; i < COUNT_WORDS; i += BPC_LANES) {
        count_shared[i] = 0u;
    }
}

// Codeblock b's selection (none where the buffer has no entry for it).
void count_select(uint b) {
    count_sel = b < uint(selection.length()) ? selection[b] : 0u;
}

// Whether the pass of `kind` (BPC_SPP, BPC_MRP, BPC_CP: also its order
// within the bitplane) at bitplane j is counted.
bool count_pass(uint kind, uint j) {
    if (count_sel <= 1u) {
        return count_sel == 1u;
    }
    uint last_j = (count_sel >> 8) & 0xFFu;
    uint last_order = (count_sel >> 16) & 0xFFu;
    return j > last_j || (j == last_j && kind <= last_order);
}

// encode_phase of the counting build: every visiting lane counts its
// symbol in the cell of table entry `at`. The lanes of a subgroup that
// count in its lowest entry of the phase add as one (a ballot of them and
// of their zeros, one atomic add by one lane), the others one by one: a
// phase's lanes mostly share a context (context 0 of a significance
// phase on a smooth image), and atomics on one shared word are serialized.
// Uniform control flow only (subgroup operations; called where the
// encoder's encode_phase is).
void encode_phase(bool visit, bool symbol, uint at, uint lane) {
    bool counted = visit && count_j < BPC_TABLE_BITPLANES && at < BPC_ROW_LEN;
    uint lead = subgroupMin(counted ? at : BPC_ROW_LEN);
    if (lead >= BPC_ROW_LEN) {
        return; // no lane of this subgroup counts
    }
    bool same = counted && at == lead;
    uint total = subgroupBallotBitCount(subgroupBallot(same));
    uint zeros = subgroupBallotBitCount(subgroupBallot(same && !symbol));
    uint base = count_j * BPC_ROW_LEN;
    if (subgroupElect()) {
        atomicAdd(count_shared[base + lead], zeros << 16 | total);
    }
    if (counted && !same) {
        atomicAdd(count_shared[base + at], symbol ? 1u : 0x10001u);
    }
}

// Adds v to the 64-bit count whose low word is `word` (counted from
// COUNT_LOW): any control flow.
void count_add(uint word, uint v) {
    if (v != 0u && COUNT_HIGH + word < uint(cells.length())) {
        uint old = atomicAdd(cells[COUNT_LOW + word], v);
        if (old + v < old) {
            atomicAdd(cells[COUNT_HIGH + word], 1u);
        }
    }
}

// After the codeblock's passes: its counts into the cells of `group`, and
// the shared words cleared for the next codeblock (whose maps are cleared
// after a barrier, bpc_body_clear). Uniform control flow only.
void count_flush(uint group, uint lane) {
    barrier(); // every symbol of the codeblock is counted
    for (uint i = lane; i < COUNT_WORDS; i += BPC_LANES) {
        uint v = count_shared[i];
        if (v != 0u) {
            count_shared[i] = 0u;
            uint j = i / BPC_ROW_LEN;
            uint at = i - j * BPC_ROW_LEN;
            uint cell = (at * BPC_GROUPS + group) * BPC_TABLE_BITPLANES + j;
            count_add(2u * cell, v >> 16);
            count_add(2u * cell + 1u, v & 0xFFFFu);
        }
    }
}

// Codeblock b was refused by bpc_measure.comp (or is empty: status 0,
// nothing to report).
void count_refused(uint b) {
    uint s = b < uint(status.length()) ? status[b] : 1u;
    if (s != 0u) {
        atomicMax(cells[s == 2u ? 0u : 1u], ~b);
    }
}
