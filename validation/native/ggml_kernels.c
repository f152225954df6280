/* The cycles llama.cpp's own CPU kernels take on this core: one MUL_MAT of an N x K weight of a GGML type over M
 * activation rows, run through ggml's CPU backend as llama.cpp runs it (the weights in the CPU's first extra buffer
 * type, the repacking one, where it takes the type; else in plain host memory), timed over repeated graph
 * computes with the weights small enough to stay in the caches, so that the time is the kernel's compute.
 *
 * Built against the headers and libraries llama-cpp-python installs (validation/kernel_cycles.py compiles it):
 *   cc -O2 ggml_kernels.c -I<site-packages>/include -L<llama_cpp>/lib -lggml -lggml-base -lggml-cpu
 * Usage: ggml_kernels TYPE N K M THREADS REPS REPACK(0|1) CALLS
 * One graph holds CALLS MUL_MATs of the same weights (the graph's own overhead spread over them).
 * Prints one line: type m n k threads buffer seconds_per_call (the median of REPS graphs after a warm-up, over CALLS). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp(const void * a, const void * b) {
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

int main(int argc, char ** argv) {
    if (argc != 9) {
        fprintf(stderr, "usage: %s TYPE N K M THREADS REPS REPACK CALLS\n", argv[0]);
        return 2;
    }
    const char * tname = argv[1];
    const int64_t n = atoll(argv[2]), k = atoll(argv[3]), m = atoll(argv[4]);
    const int threads = atoi(argv[5]), reps = atoi(argv[6]), repack = atoi(argv[7]), calls = atoi(argv[8]);
    enum ggml_type type = GGML_TYPE_COUNT;
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const char * name = ggml_type_name((enum ggml_type) t);
        if (name && strcmp(name, tname) == 0) { type = (enum ggml_type) t; break; }
    }
    if (type == GGML_TYPE_COUNT) { fprintf(stderr, "unknown type %s\n", tname); return 2; }

    ggml_backend_dev_t dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    ggml_backend_t be = ggml_backend_dev_init(dev, NULL);
    ggml_backend_cpu_set_n_threads(be, threads);
    ggml_backend_buffer_type_t wbuft = ggml_backend_dev_buffer_type(dev);
    if (repack) {
        ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
        ggml_backend_dev_get_extra_bufts_t get = (ggml_backend_dev_get_extra_bufts_t)
            ggml_backend_reg_get_proc_address(reg, "ggml_backend_dev_get_extra_bufts");
        ggml_backend_buffer_type_t * extra = get ? get(dev) : NULL;
        for (; extra && *extra; extra++) {  /* the repacking buffer, not AMX's */
            if (strstr(ggml_backend_buft_name(*extra), "REPACK")) { wbuft = *extra; break; }
        }
    }

    struct ggml_init_params wp = { 4 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * wctx = ggml_init(wp);
    struct ggml_tensor * w = ggml_new_tensor_2d(wctx, type, k, n);
    ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors_from_buft(wctx, wbuft);
    if (!wbuf) { fprintf(stderr, "could not allocate the weights\n"); return 1; }
    float * src = malloc(sizeof(float) * n * k);
    srand(1);
    for (int64_t i = 0; i < n * k; i++) src[i] = (float) rand() / RAND_MAX - 0.5f;
    size_t bytes = ggml_row_size(type, k) * n;
    void * q = malloc(bytes);
    /* the i-quants that need an importance matrix (iq1_s, iq1_m, iq2_xxs, iq2_xs) get a flat one: it changes which
       grid points are chosen, not the kernel that reads them */
    float * imatrix = NULL;
    if (ggml_quantize_requires_imatrix(type)) {
        imatrix = malloc(sizeof(float) * k);
        for (int64_t i = 0; i < k; i++) imatrix[i] = 1.0f;
    }
    ggml_quantize_chunk(type, src, q, 0, n, k, imatrix);
    free(imatrix);
    ggml_backend_tensor_set(w, q, 0, bytes);  /* a repacking buffer interleaves the rows here */

    struct ggml_init_params gp = { (4 * calls + 16) * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * gctx = ggml_init(gp);
    struct ggml_cgraph * g = ggml_new_graph(gctx);
    struct ggml_tensor ** xs_t = malloc(sizeof(*xs_t) * calls);
    for (int c = 0; c < calls; c++) {
        xs_t[c] = ggml_new_tensor_2d(gctx, GGML_TYPE_F32, k, m);
        ggml_set_input(xs_t[c]);
        struct ggml_tensor * y = ggml_mul_mat(gctx, w, xs_t[c]);
        ggml_set_output(y);
        ggml_build_forward_expand(g, y);
    }
    ggml_gallocr_t alloc = ggml_gallocr_new(ggml_backend_get_default_buffer_type(be));
    ggml_gallocr_alloc_graph(alloc, g);
    float * xs = malloc(sizeof(float) * m * k);
    for (int64_t i = 0; i < m * k; i++) xs[i] = (float) rand() / RAND_MAX - 0.5f;
    for (int c = 0; c < calls; c++) ggml_backend_tensor_set(xs_t[c], xs, 0, sizeof(float) * m * k);

    for (int i = 0; i < 3; i++) ggml_backend_graph_compute(be, g);
    double * t = malloc(sizeof(double) * reps);
    for (int i = 0; i < reps; i++) {
        double t0 = now();
        ggml_backend_graph_compute(be, g);
        t[i] = now() - t0;
    }
    qsort(t, reps, sizeof(double), cmp);
    printf("%s %lld %lld %lld %d %s %.9e\n", tname, (long long) m, (long long) n, (long long) k, threads,
           ggml_backend_buft_name(wbuft), t[reps / 2] / calls);
    return 0;
}
