/* The latency of a 256-bit FMA on this host, in core cycles: a chain of dependent vfmadd231ps against a
 * chain of dependent integer adds (one per cycle on every x86 core, as membench.c's clock_chain), eight
 * per loop iteration so the loop's own instructions hide beside them; and the same for vaddps.
 * What llama.cpp's chain rule rests on (platforms/stacks/llama.cpp.toml, path_rules): a dot product
 * that adds each 32-weight block into one accumulator retires one block per FMA latency.
 *
 * cc -O2 -mavx2 -mfma validation/results/zen5-2vcpu-fma-latency.c -o /tmp/fma-latency && /tmp/fma-latency
 */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

#define EIGHT(op) op "\n\t" op "\n\t" op "\n\t" op "\n\t" op "\n\t" op "\n\t" op "\n\t" op

int main(void) {
    __m256 a = _mm256_set1_ps(1.0000001f), b = _mm256_set1_ps(0.9999999f), acc = _mm256_setzero_ps(), s = a;
    const long n = 100000000L;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now();
        for (long i = 0; i < n; i++) __asm__ volatile(EIGHT("vfmadd231ps %1, %2, %0") : "+x"(acc) : "x"(a), "x"(b));
        double t1 = now();
        long x = 0;
        for (long i = 0; i < n; i++) __asm__ volatile(EIGHT("add $1, %0") : "+r"(x));
        double t2 = now();
        for (long i = 0; i < n; i++) __asm__ volatile(EIGHT("vaddps %1, %0, %0") : "+x"(s) : "x"(b));
        double t3 = now();
        double cycle = (t2 - t1) / (8.0 * n);
        printf("clock %.2f GHz: vfmadd231ps ymm latency %.2f cycles, vaddps ymm latency %.2f cycles\n",
               1e-9 / cycle, (t1 - t0) / (8.0 * n) / cycle, (t3 - t2) / (8.0 * n) / cycle);
    }
    return 0;
}
