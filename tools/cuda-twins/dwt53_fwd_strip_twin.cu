// Profiling aid (not part of wavelane; see README.md): a CUDA port of the forward 5/3 strip
// kernel of shaders/common/dwt_block.glsl (one level, one subgroup per strip,
// lane j owns columns 4j..4j+3, 16-byte loads, 8-byte Mallat stores, LL to a
// compact buffer), so that Nsight Compute (which does not see Vulkan
// dispatches) can say where its time goes. Same geometry: 64-thread blocks,
// 32-lane warps, HALO 1, HALO_X 2, strips of OUT_PY output pair rows.
//
//   nvcc -O3 -arch=sm_90 -lineinfo -o dwt_twin dwt53_fwd_strip_twin.cu
//   ./dwt_twin [side=8192] [output pair rows per strip=9] [repeats=10]
// Strips inside the image take the lean stream of the shader's
// stream_inside, odd strip rows walking up as the shader's do (-DNO_ALT
// walks every strip down); -DNO_LEAN builds the window-only kernel the
// shader had before the lean stream (docs/history/dwt.md). MINB (-DMINB=N)
// sets __launch_bounds__' minimum blocks per SM. The level is
// timed next to a 16-byte grid-stride copy of the same bytes.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define HALO 1
#ifndef MINB
#define MINB 1
#endif
#define HALO_X 2
#define NSTEPS 2
#define WIN (NSTEPS + 3)

__device__ __forceinline__ int lift(int s, int x, int a, int b) {
    return s == 0 ? x - ((a + b) >> 1) : x + ((a + b + 2) >> 2);
}
__device__ __forceinline__ int mirror(int i, int n) {
    if (n <= 1) return 0;
    if (i >= 0 && i < n) return i;
    int period = 2 * (n - 1);
    int m = (i < 0 ? -i : i) % period;
    return m >= n ? period - m : m;
}
__device__ __forceinline__ void horizontal(int row[4], int lane) {
    bool first = lane == 0, last = lane == 31;
    int right = __shfl_down_sync(0xffffffffu, row[0], 1);
    right = last ? row[2] : right;
    row[1] = lift(0, row[1], row[0], row[2]);
    row[3] = lift(0, row[3], row[2], right);
    int left = __shfl_up_sync(0xffffffffu, row[3], 1);
    left = first ? row[1] : left;
    row[0] = lift(1, row[0], left, row[1]);
    row[2] = lift(1, row[2], row[1], row[3]);
}

__global__ void __launch_bounds__(64, MINB) fwd53(const int* __restrict__ a, int* __restrict__ b,
                                            int* __restrict__ c, int w, int h, int out_py) {
    const int lane = threadIdx.x & 31;
    const int sg = threadIdx.x >> 5;
    const int pairs_x = 64;
    const int out_px = pairs_x - 2 * HALO_X;
    int pairs_y = (h + 1) / 2;
    int nbx = ((w + 1) / 2 + out_px - 1) / out_px;
    int nby = (pairs_y + out_py - 1) / out_py;
    int total = nbx * nby;
    int c_stride = (w + 1) / 2;
    for (int blk = blockIdx.x * 2 + sg; blk < total; blk += gridDim.x * 2) {
        int bx = blk % nbx, by = blk / nbx;
        int x0 = bx * out_px * 2 - 2 * HALO_X + 4 * lane;
        int out_y0 = by * out_py;
        int y0 = out_y0 * 2 - 2 * HALO;
        int steps = min(out_py, pairs_y - out_y0) + 2 * HALO;
#ifndef NO_LEAN
        // The shader's stream_inside (5/3): a strip inside the image with vector
        // access for every lane (build with -DNO_LEAN for the window only).
        int strip_x0 = x0 - 4 * lane;
        if ((w & 3) == 0 && ((w | c_stride | ((w + 1) >> 1)) & 1) == 0 && strip_x0 >= 0 &&
            strip_x0 + 128 <= w && y0 >= 0 && y0 + 2 * steps <= h) {
            bool store_lane = 2 * lane >= HALO_X && 2 * lane < pairs_x - HALO_X;
#ifdef NO_ALT
            const bool up = false;
#else
            // As the shader: odd strip rows walk up, from the
            // last row they load, with every index moving the other way.
            const bool up = (by & 1) == 1;
#endif
            ptrdiff_t a4_row = w >> 2;
            ptrdiff_t a4_odd = up ? -a4_row : a4_row;
            ptrdiff_t b2_row = up ? -(ptrdiff_t)(w >> 1) : (w >> 1);
            ptrdiff_t c2_row = up ? -(ptrdiff_t)(c_stride >> 1) : (c_stride >> 1);
            int last_row = up ? steps - 1 - 2 * HALO : 0;
            const int4* a4 = reinterpret_cast<const int4*>(a + (size_t)y0 * w + x0) +
                             (up ? (2 * steps - 2) * a4_row : 0);
            int2* be = reinterpret_cast<int2*>(b + (size_t)(out_y0 + last_row) * w);
            int2* bo = reinterpret_cast<int2*>(b + (size_t)(pairs_y + out_y0 + last_row) * w);
            int2* ce = reinterpret_cast<int2*>(c + (size_t)(out_y0 + last_row) * c_stride);
            int l2 = x0 >> 2, h2 = (((w + 1) >> 1) + x0 / 2) >> 1;
            int4 q = a4[0];
            int e[4] = {q.x, q.y, q.z, q.w};
            q = a4[a4_odd];
            int o[4] = {q.x, q.y, q.z, q.w};
            a4 += 2 * a4_odd;
            q = a4[0];
            int ne[4] = {q.x, q.y, q.z, q.w};
            q = a4[a4_odd];
            int no[4] = {q.x, q.y, q.z, q.w};
            int dp[4] = {0, 0, 0, 0};
            for (int k = 1; k < steps; k++) {
                // Walking up, the odd row stored with this step's even row
                // is the one the previous step finished.
                int odd_before[4] = {dp[0], dp[1], dp[2], dp[3]};
                int s4[4], d[4];
#pragma unroll
                for (int q2 = 0; q2 < 4; q2++) {
                    d[q2] = lift(0, o[q2], e[q2], ne[q2]);
                    s4[q2] = lift(1, e[q2], dp[q2], d[q2]);
                    dp[q2] = d[q2]; e[q2] = ne[q2]; o[q2] = no[q2];
                }
                if (k + 1 < steps) {
                    a4 += 2 * a4_odd;
                    q = a4[0]; ne[0] = q.x; ne[1] = q.y; ne[2] = q.z; ne[3] = q.w;
                    // As the shader: the last odd row is never lifted.
                    if (k + 2 < steps) {
                        q = a4[a4_odd]; no[0] = q.x; no[1] = q.y; no[2] = q.z; no[3] = q.w;
                    }
                }
                if (k >= 2 * HALO) {
#pragma unroll
                    for (int q2 = 0; q2 < 4; q2++) d[q2] = up ? odd_before[q2] : d[q2];
                    horizontal(s4, lane);
                    horizontal(d, lane);
                    if (store_lane) {
                        ce[l2] = make_int2(s4[0], s4[2]);
                        be[h2] = make_int2(s4[1], s4[3]);
                        bo[l2] = make_int2(d[0], d[2]);
                        bo[h2] = make_int2(d[1], d[3]);
                    }
                    be += b2_row; bo += b2_row; ce += c2_row;
                }
            }
            continue;
        }
#endif
        int cx[4], col[4];
        bool store_x[4];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            cx[k] = mirror(x0 + k, w);
            int pair = 2 * lane + (k >> 1);
            store_x[k] = pair >= HALO_X && pair < pairs_x - HALO_X && x0 + k < w;
            int x = x0 + k;
            col[k] = (x & 1) ? ((w + 1) >> 1) + (x >> 1) : (x >> 1);
        }
        // Vectors only where every row start is aligned (as the shader's
        // vec_rows / vec_cols): 4-sample loads, 2-sample Mallat stores.
        bool inside = x0 >= 0 && x0 + 3 < w;
        bool vec_load = inside && (w & 3) == 0;
        bool vec_store = inside && store_x[0] && ((w | c_stride | ((w + 1) >> 1)) & 1) == 0;
        int win[WIN][4];
#pragma unroll
        for (int r = 0; r < WIN; r++)
#pragma unroll
            for (int k = 0; k < 4; k++) win[r][k] = 0;
        int ah[2][4];
#define LOAD_ROW(slot, yi) { \
            size_t base = (size_t)mirror((yi), h) * w; \
            if (vec_load) { \
                int4 q = *reinterpret_cast<const int4*>(a + base + cx[0]); \
                ah[slot][0] = q.x; ah[slot][1] = q.y; ah[slot][2] = q.z; ah[slot][3] = q.w; \
            } else { \
                _Pragma("unroll") for (int k = 0; k < 4; k++) ah[slot][k] = a[base + cx[k]]; \
            } }
        LOAD_ROW(0, y0);
        LOAD_ROW(1, y0 + 1);
        for (int k = 0; k < steps; k++) {
#pragma unroll
            for (int r = 0; r < WIN - 2; r++)
#pragma unroll
                for (int q = 0; q < 4; q++) win[r][q] = win[r + 2][q];
#pragma unroll
            for (int q = 0; q < 4; q++) { win[WIN - 2][q] = ah[0][q]; win[WIN - 1][q] = ah[1][q]; }
            if (k + 1 < steps) {
                int ya = y0 + 2 * k + 2;
                LOAD_ROW(0, ya);
                // As the shader: the last odd row is not loaded.
                if (k + 2 < steps) LOAD_ROW(1, ya + 1);
            }
#pragma unroll
            for (int s = 0; s < NSTEPS; s++) {
                int r = 2 * k - 1 - s;
                if (r >= 0) {
                    const int i = WIN - 3 - s;
#pragma unroll
                    for (int q = 0; q < 4; q++) {
                        int up = r == 0 ? win[i + 1][q] : win[i - 1][q];
                        win[i][q] = lift(s, win[i][q], up, win[i + 1][q]);
                    }
                }
            }
            if (k >= 2 * HALO) {
                int y_even = 2 * (out_y0 + k - 2 * HALO);
#pragma unroll
                for (int r = 0; r < 2; r++) {
                    int row[4] = {win[1 + r][0], win[1 + r][1], win[1 + r][2], win[1 + r][3]};
                    horizontal(row, lane);
                    int y = y_even + r;
                    if (y < h) {
                        int out_row = (y & 1) ? ((h + 1) >> 1) + (y >> 1) : (y >> 1);
                        bool low_y = r == 0;
                        size_t b_base = (size_t)out_row * w;
                        size_t c_base = (size_t)out_row * c_stride;
                        if (vec_store) {
                            int2 l = make_int2(row[0], row[2]);
                            if (low_y) *reinterpret_cast<int2*>(c + c_base + col[0]) = l;
                            else *reinterpret_cast<int2*>(b + b_base + col[0]) = l;
                            *reinterpret_cast<int2*>(b + b_base + col[1]) = make_int2(row[1], row[3]);
                        } else {
#pragma unroll
                            for (int q = 0; q < 4; q++) {
                                if (!store_x[q]) continue;
                                if (low_y && (((x0 + q) & 1) == 0)) c[c_base + col[q]] = row[q];
                                else b[b_base + col[q]] = row[q];
                            }
                        }
                    }
                }
            }
        }
    }
}

__global__ void copy4(const int4* __restrict__ s, int4* __restrict__ d, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) d[i] = s[i];
}


// Host reference: one 5/3 level, vertical before horizontal, whole-sample
// symmetric extension, Mallat layout (LL to its own compact plane).
static int mirror_host(int i, int n) {
    if (n <= 1) return 0;
    int period = 2 * (n - 1);
    int m = (i < 0 ? -i : i) % period;
    return m >= n ? period - m : m;
}
static void lift_line(int* v, size_t step, int n) {
    if (n < 2) return;
    auto at = [&](int i) { return v[(size_t)mirror_host(i, n) * step]; };
    for (int i = 1; i < n; i += 2) v[(size_t)i * step] -= (at(i - 1) + at(i + 1)) >> 1;
    for (int i = 0; i < n; i += 2) v[(size_t)i * step] += (at(i - 1) + at(i + 1) + 2) >> 2;
}
static int mallat_host(int i, int n) { return (i & 1) ? ((n + 1) >> 1) + (i >> 1) : (i >> 1); }

int main(int argc, char** argv) {
    int n = argc > 1 ? atoi(argv[1]) : 8192;
    int out_py = argc > 2 ? atoi(argv[2]) : 9;
    int reps = argc > 3 ? atoi(argv[3]) : 10;
    size_t N = (size_t)n * n;
    int *a, *b, *c;
    cudaMalloc(&a, N * 4); cudaMalloc(&b, N * 4); cudaMalloc(&c, (size_t)((n + 1) / 2) * ((n + 1) / 2) * 4);
    std::vector<int> host(N);
    unsigned long long st = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < N; i++) { st ^= st << 13; st ^= st >> 7; st ^= st << 17; host[i] = (int)(st >> 56) - 128; }
    cudaMemcpy(a, host.data(), N * 4, cudaMemcpyHostToDevice);
    int pairs_y = (n + 1) / 2;
    int nbx = ((n + 1) / 2 + 59) / 60, nby = (pairs_y + out_py - 1) / out_py;
    int total = nbx * nby;
    int groups = std::min(65535, (total + 1) / 2);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    float best = 1e9, bestc = 1e9;
    for (int i = 0; i < reps + 3; i++) {
        cudaEventRecord(e0);
        fwd53<<<groups, 64>>>(a, b, c, n, n, out_py);
        cudaEventRecord(e1); cudaEventSynchronize(e1);
        float ms; cudaEventElapsedTime(&ms, e0, e1); if (i >= 3) best = std::min(best, ms);
        cudaEventRecord(e0);
        copy4<<<132 * 16, 256>>>((const int4*)a, (int4*)b, N / 4);
        cudaEventRecord(e1); cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms, e0, e1); if (i >= 3) bestc = std::min(bestc, ms);
    }
    // Check the last run of the level (the copy kernel wrote b since: run the
    // level once more) against the host reference.
    fwd53<<<groups, 64>>>(a, b, c, n, n, out_py);
    std::vector<int> gb(N), gc((size_t)((n + 1) / 2) * ((n + 1) / 2));
    cudaMemcpy(gb.data(), b, N * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(gc.data(), c, gc.size() * 4, cudaMemcpyDeviceToHost);
    std::vector<int> ref = host;
    for (int x = 0; x < n; x++) lift_line(ref.data() + x, n, n);
    for (int y = 0; y < n; y++) lift_line(ref.data() + (size_t)y * n, 1, n);
    size_t bad = 0;
    for (int y = 0; y < n; y++)
        for (int x = 0; x < n; x++) {
            int my = mallat_host(y, n), mx = mallat_host(x, n);
            int got = ((y | x) & 1) == 0 ? gc[(size_t)my * ((n + 1) / 2) + mx] : gb[(size_t)my * n + mx];
            bad += got != ref[(size_t)y * n + x];
        }
    double bytes = 8.0 * N;
    printf("n %d out_py %d strips %d groups %d: level best %.4f ms (%.0f GB/s), copy %.4f ms (%.0f GB/s), %.1f%% of copy; "
           "%zu samples differ from the host reference; %s\n",
           n, out_py, total, groups, best, bytes / best / 1e6, bestc, bytes / bestc / 1e6, 100.0 * bestc / best, bad,
           cudaGetErrorString(cudaGetLastError()));
    return bad == 0 ? 0 : 1;
}
