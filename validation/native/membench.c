/* roofline probe kernels: a core-clock counter and STREAM-style bandwidth kernels.
 *
 * Built at probe time with the system C compiler (cc -O3 -march=native -fopenmp), loaded with ctypes.
 *
 * clock_chain: a chain of dependent 64-bit integer multiplies (IMUL r64, r64). Its latency is 3 cycles on
 *   every Intel core since Nehalem and on every Zen (uops.info, IMUL_R64_R64), so cycles = 3 x multiplies,
 *   and that over the seconds is the core clock while the chain runs (one chain per thread, all threads at
 *   once: the clock with that many cores busy). Not an add chain: Golden Cove and later Intel cores fold
 *   `add reg, imm` at rename, and a chain of them ran at 2 to 4 adds per cycle on an Emerald Rapids guest
 *   (validation/results/emr-2vcpu-clock.txt).
 * read_bw / copy_bw / triad_bw: STREAM's kernels on float32 arrays split between the threads (OpenMP,
 *   static schedule, each thread touching its own part first so that its pages are local), repeated
 *   `reps` times; they return the best repetition's seconds. Bytes moved per element: read 4, copy 8,
 *   triad 12 (STREAM's convention: write-allocate traffic not counted).
 *
 * Thread counts go in num_threads clauses, never omp_set_num_threads: the process's OpenMP runtime may
 * be torch's, whose intra-op thread count (and Inductor's guards on it) must not change.
 */
#include <stddef.h>
#include <stdint.h>
#include <omp.h>

static double now(void) { return omp_get_wtime(); }

double clock_chain(uint64_t n, int threads) {
    double best = 0.0;
    double seconds[4096];
    const uint64_t m = n / 3 + 1; /* steps of 8 multiplies of 3 cycles, 24 cycles a step: about 8 n cycles in all */
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num();
        uint64_t x = (uint64_t)t + 3, one = 1;
#pragma omp barrier
        double t0 = now();
        for (uint64_t i = 0; i < m; i++) {
            __asm__ volatile(
                "imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0\n\t"
                "imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0\n\t"
                : "+r"(x) : "r"(one));
        }
        double t1 = now();
        if (t < 4096) seconds[t] = t1 - t0;
        __asm__ volatile("" : : "r"(x));
    }
    for (int t = 0; t < threads && t < 4096; t++) {
        double hz = 24.0 * (double)m / seconds[t];
        if (t == 0 || hz < best) best = hz; /* the slowest core: all of them reached at least this */
    }
    return best;
}

static void first_touch(float *a, size_t n, float v, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (size_t i = 0; i < n; i++) a[i] = v;
}

void init_arrays(float *a, float *b, float *c, size_t n, int threads) {
    first_touch(a, n, 1.0f, threads);
    first_touch(b, n, 2.0f, threads);
    first_touch(c, n, 0.5f, threads);
}

double read_bw(const float *a, size_t n, int reps, int threads, double *sink) {
    double best = 1e30, total = 0.0;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma omp parallel for schedule(static) reduction(+ : s0, s1, s2, s3) num_threads(threads)
        for (size_t i = 0; i < n; i += 4) {
            s0 += a[i];
            s1 += a[i + 1];
            s2 += a[i + 2];
            s3 += a[i + 3];
        }
        double t = now() - t0;
        total += s0 + s1 + s2 + s3;
        if (t < best) best = t;
    }
    *sink = total;
    return best;
}

double copy_bw(float *restrict b, const float *restrict a, size_t n, int reps, int threads) {
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
#pragma omp parallel for schedule(static) num_threads(threads)
        for (size_t i = 0; i < n; i++) b[i] = a[i];
        double t = now() - t0;
        if (t < best) best = t;
    }
    return best;
}

double triad_bw(float *restrict a, const float *restrict b, const float *restrict c, size_t n, int reps,
                int threads) {
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
#pragma omp parallel for schedule(static) num_threads(threads)
        for (size_t i = 0; i < n; i++) a[i] = b[i] + 0.5f * c[i];
        double t = now() - t0;
        if (t < best) best = t;
    }
    return best;
}
