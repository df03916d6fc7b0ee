// Profiling aid (not part of wavelane; see README.md): a CUDA twin of shaders/vle_encode_pairs.comp
// (common/vle_encode.glsl with VLE_SCAN_64 and VLE_PAIRS: persistent 128-thread
// workgroups, a ticket per 4096-symbol block, 32 symbols per thread, table in
// shared memory, a workgroup scan of three barriers, the 128-block-segment
// inter-block scan on 64-bit atomics, pairs of codewords packed into a 1025-word
// shared staging buffer, coalesced copy-out ORing the two edge words), so that
// Nsight Compute, which does not see Vulkan dispatches, can say where its time
// goes. The output is checked against a sequential packing on the host.
//
//   nvcc -O3 -arch=sm_90 -lineinfo -o vle_twin vle_encode_twin.cu
//   ./vle_twin [MB=128] [repeats=5] [workgroups=1056] [dynamic shared bytes=0] [zipf|random]
// KEPT_MINB (-DKEPT_MINB=N) sets __launch_bounds__' minimum blocks per SM
// (fewer registers); the dynamic shared bytes pad each workgroup (fewer per SM).
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define WG 128
#ifndef KEPT_MINB
#define KEPT_MINB 1
#endif
#define TSYM 32
#define BSYM 4096
#define STAGE 1025
#define SEG 128
#define SUM_BITS 55
#define SUM_MASK ((1ull << SUM_BITS) - 1ull)
#define FLAG_P (1ull << 63)

__device__ __forceinline__ uint32_t bswap(uint32_t x) { return __byte_perm(x, 0, 0x0123); }
__device__ __forceinline__ uint32_t add_count(uint64_t v) { return (uint32_t)(v >> SUM_BITS) & 0xffu; }
__device__ __forceinline__ uint64_t poll(uint64_t* cells, uint32_t at) {
    uint64_t v = 0;
    if ((threadIdx.x & 31) == 0) v = atomicAdd((unsigned long long*)&cells[at], 0ull);
    return __shfl_sync(0xffffffffu, v, 0);
}
__device__ __forceinline__ uint64_t wait_cell(uint64_t* cells, uint32_t at, uint32_t count, bool or_prefix) {
    uint64_t v = poll(cells, at);
    while (!(add_count(v) == count || (or_prefix && v >= FLAG_P))) v = poll(cells, at);
    return v;
}

__global__ void __launch_bounds__(WG, KEPT_MINB) vle_encode(const uint4* __restrict__ in, const uint32_t* __restrict__ codes,
                                                 uint32_t* out, uint64_t* cells, uint32_t* control,
                                                 uint32_t n_symbols, uint32_t n_blocks, uint32_t out_capacity) {
    __shared__ uint32_t s_table[256];
    __shared__ uint32_t s_buf[STAGE];
    __shared__ uint32_t s_block, s_completer, s_segment_total, s_wg_total;
    __shared__ uint64_t s_pos;
    __shared__ uint32_t s_sg[WG / 32];
    const uint32_t t = threadIdx.x, lane = t & 31, sg = t >> 5;
    for (uint32_t i = t; i < 256; i += WG) s_table[i] = codes[i];
    while (true) {
        __syncthreads();
        if (t == 0) { s_block = atomicAdd(&control[0], 1u); s_completer = 0; }
        __syncthreads();
        uint32_t block = s_block;
        if (block >= n_blocks) break;
        uint32_t first = block * BSYM + t * TSYM;
        uint32_t count = first < n_symbols ? min(n_symbols - first, (uint32_t)TSYM) : 0;
        uint32_t words[8];
        uint4 x0 = make_uint4(0, 0, 0, 0), x1 = x0;
        if (count > 0) { x0 = in[first / 16]; x1 = in[first / 16 + 1]; }
        words[0] = x0.x; words[1] = x0.y; words[2] = x0.z; words[3] = x0.w;
        words[4] = x1.x; words[5] = x1.y; words[6] = x1.z; words[7] = x1.w;
        uint32_t entry[TSYM];
        uint32_t bits = 0;
#pragma unroll
        for (int i = 0; i < TSYM; i++) {
            uint32_t e = s_table[(words[i >> 2] >> ((i & 3) * 8)) & 0xffu];
            entry[i] = (uint32_t)i < count ? e : 0u;
            bits += entry[i] & 0xffu;
        }
        // Workgroup exclusive scan (three barriers, as common/scan.glsl).
        __syncthreads();
        uint32_t incl = bits;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) { uint32_t y = __shfl_up_sync(0xffffffffu, incl, d); if (lane >= d) incl += y; }
        uint32_t sg_sum = __shfl_sync(0xffffffffu, incl, 31);
        if (lane == 0) s_sg[sg] = sg_sum;
        __syncthreads();
        if (sg == 0) {
            uint32_t v = lane < WG / 32 ? s_sg[lane] : 0, e = v;
#pragma unroll
            for (int d = 1; d < 32; d <<= 1) { uint32_t y = __shfl_up_sync(0xffffffffu, e, d); if (lane >= d) e += y; }
            uint32_t total = __shfl_sync(0xffffffffu, e, 31);
            if (lane < WG / 32) s_sg[lane] = e - v;
            if (lane == 0) s_wg_total = total;
        }
        __syncthreads();
        uint32_t block_bits = s_wg_total;
        uint32_t off = s_sg[sg] + incl - bits;
        // Inter-block position (GVLE scan, 128-block segments).
        uint32_t seg = block / SEG, j = block % SEG;
        uint32_t add_end = min((uint32_t)SEG, n_blocks - seg * SEG);
        if (t >= j && t < add_end) {
            uint64_t old = atomicAdd((unsigned long long*)&cells[seg * SEG + t], (1ull << SUM_BITS) | (uint64_t)block_bits);
            if (t == SEG - 1 && add_count(old) == SEG - 1) { s_completer = 1; s_segment_total = (uint32_t)(old & SUM_MASK) + block_bits; }
        }
        __syncthreads();
        if (sg == 0) {
            uint64_t in_seg = 0, before = 0;
            if (j > 0) in_seg = wait_cell(cells, seg * SEG + j - 1, j, false) & SUM_MASK;
            bool done = seg == 0;
            for (uint32_t s = seg; !done;) {
                s--;
                uint64_t v = wait_cell(cells, s * SEG + SEG - 1, SEG, true);
                before += v & SUM_MASK;
                done = v >= FLAG_P || s == 0;
            }
            if (lane == 0) {
                if (s_completer && seg > 0)
                    atomicExch((unsigned long long*)&cells[seg * SEG + SEG - 1], FLAG_P | (before + s_segment_total));
                s_pos = before + in_seg;
            }
        }
        __syncthreads();
        uint64_t p = s_pos;
        uint32_t lead = (uint32_t)p & 31u;
        uint32_t p_word = (uint32_t)(p >> 5);
        if (lead + block_bits > STAGE * 32) { if (t == 0) atomicOr(&control[1], 4u); continue; }
        bool last_writer = count > 0 && (t == WG - 1 || first + TSYM >= n_symbols);
        uint32_t pos = lead + off;
        uint32_t n = pos & 31u;
        uint32_t word = pos >> 5;
        uint64_t acc = 0;
#pragma unroll
        for (int i = 0; i < TSYM; i += 2) {
            uint32_t second = entry[i + 1] & 0xffu;
            uint32_t len = (entry[i] & 0xffu) + second;
            uint32_t code = ((entry[i] >> 8) << second) | (entry[i + 1] >> 8);
            acc = (acc << len) | code;
            n += len;
            if (n >= 32) { n -= 32; uint32_t v = (uint32_t)(acc >> n); if (word < STAGE) s_buf[word] = v; word++; }
        }
        uint32_t tail = n == 0 ? 0u : (uint32_t)(acc << (32 - n));
        if (last_writer && n > 0 && word < STAGE) s_buf[word] = tail;
        __syncthreads();
        if (count > 0 && !last_writer && n > 0 && word < STAGE) s_buf[word] |= tail;
        __syncthreads();
        uint32_t n_words = (lead + block_bits + 31) >> 5;
        for (uint32_t w = t; w < n_words; w += WG) {
            uint32_t g = p_word + w;
            if (g >= out_capacity) { atomicOr(&control[1], 4u); continue; }
            uint32_t v = bswap(s_buf[w]);
            if (w == 0 || w + 1 == n_words) atomicOr(&out[g], v); else out[g] = v;
        }
        if (t == 0 && block + 1 == n_blocks) { uint64_t tot = p + block_bits; control[2] = (uint32_t)tot; control[3] = (uint32_t)(tot >> 32); }
    }
}



int main(int argc, char** argv) {
    size_t n = (argc > 1 ? atoll(argv[1]) : 128) * 1000000ull;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    int groups = argc > 3 ? atoi(argv[3]) : 1056;
    int pad = argc > 4 ? atoi(argv[4]) : 0;
    n = n / 16 * 16;
    // Zipf-like bytes; codeword length by rank (2..16 bits, about 4.3 bits a
    // byte on average), code bits = rank (masked): the packing does not care
    // whether the code is prefix-free.
    // Kind: "zipf" (default) or "random" (uniform bytes, every code 8 bits,
    // like `wavelane bench vle --kind random`).
    bool random = argc > 5 && argv[5][0] == 'r';
    std::vector<uint8_t> data(n);
    std::vector<double> cdf(256); double z = 0;
    for (int r = 0; r < 256; r++) { z += 1.0 / (r + 1.5); cdf[r] = z; }
    uint64_t st = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
        st ^= st << 13; st ^= st >> 7; st ^= st << 17;
        double u = (st >> 11) * (1.0 / 9007199254740992.0) * z;
        data[i] = random ? (uint8_t)(st >> 56) : (uint8_t)(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
    }
    std::vector<uint32_t> codes(256);
    for (int r = 0; r < 256; r++) {
        int len = random ? 8 : std::min(16, 2 + (int)(1.2 * log2(r + 1.0)));
        codes[r] = ((uint32_t)(r & ((1 << len) - 1)) << 8) | len;
    }
    uint64_t total_bits = 0; for (size_t i = 0; i < n; i++) total_bits += codes[data[i]] & 0xff;
    uint32_t n_blocks = (uint32_t)((n + BSYM - 1) / BSYM);
    size_t out_words = total_bits / 32 + 2;
    uint4* d_in; uint32_t *d_codes, *d_out, *d_ctrl; uint64_t* d_cells;
    cudaMalloc(&d_in, n); cudaMalloc(&d_codes, 1024); cudaMalloc(&d_out, out_words * 4);
    cudaMalloc(&d_ctrl, 64); size_t cells = ((n_blocks + SEG - 1) / SEG) * SEG; cudaMalloc(&d_cells, cells * 8);
    cudaMemcpy(d_in, data.data(), n, cudaMemcpyHostToDevice);
    cudaMemcpy(d_codes, codes.data(), 1024, cudaMemcpyHostToDevice);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    float best = 1e9;
    for (int i = 0; i < reps + 2; i++) {
        cudaMemset(d_out, 0, out_words * 4); cudaMemset(d_ctrl, 0, 64); cudaMemset(d_cells, 0, cells * 8);
        cudaEventRecord(e0);
        vle_encode<<<groups, WG, pad>>>(d_in, d_codes, d_out, d_cells, d_ctrl, (uint32_t)n, n_blocks, (uint32_t)out_words);
        cudaEventRecord(e1); cudaEventSynchronize(e1);
        float ms; cudaEventElapsedTime(&ms, e0, e1); if (i >= 2) best = std::min(best, ms);
    }
    std::vector<uint32_t> out(out_words), ctrl(16);
    cudaMemcpy(out.data(), d_out, out_words * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(ctrl.data(), d_ctrl, 64, cudaMemcpyDeviceToHost);
    // Host reference: MSB-first concatenation, bytes in stream order.
    std::vector<uint8_t> ref(out_words * 4, 0); uint64_t bp = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t e = codes[data[i]], len = e & 0xff, c = e >> 8;
        for (int k = len - 1; k >= 0; k--, bp++) if ((c >> k) & 1) ref[bp >> 3] |= 0x80 >> (bp & 7);
    }
    bool same = memcmp(ref.data(), out.data(), out_words * 4) == 0;
    uint64_t tot = ctrl[2] | ((uint64_t)ctrl[3] << 32);
    printf("%zu bytes, %.3f bits/byte, %d workgroups: best %.4f ms = %.1f GB/s; stream %s, total bits %s, errors %u\n",
           n, (double)total_bits / n, groups, best, n / best / 1e6, same ? "equal" : "DIFFERS", tot == total_bits ? "ok" : "WRONG", ctrl[1]);
    return same ? 0 : 1;
}
