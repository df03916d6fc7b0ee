// The buckets of the codeblock order (bpc_order.comp): by decreasing top
// bitplane M, empty or refused codeblocks (top above BPC_MAX_BITPLANE, e.g.
// BPC_EMPTY) last. Shared by bpc_measure.comp, which counts them.
#define BPC_ORDER_BUCKETS 29u

uint bpc_order_bucket(uint top) {
    return top > 27u ? 28u : 27u - top;
}
