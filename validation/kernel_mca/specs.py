# Kernel specs. w = weights (or activation elements for quantize kernels) processed per iteration of the
# analysed loop, summed over all weight rows; rows = activation rows per iteration (0 = weight-only work).
# sel: ('maxmul',) innermost loop with the most vector multiply/FMA instructions
#      ('nest', basename, for_line, [(child_for_line, trips, [grandchildren...]), ...])
AVX2_BUILDS = ['haswell', 'zn3', 'adl']
AVX512_BUILDS = ['skx', 'clx', 'icx', 'zn4']
ALL_BUILDS = AVX2_BUILDS + AVX512_BUILDS

S = []
def add(type_, kernel, file, func, sel, w, rows, builds=ALL_BUILDS, note=''):
    S.append(dict(type=type_, kernel=kernel, file=file, func=func, sel=sel, w=w, rows=rows, builds=builds, note=note))

# ---- vec_dot (quants.c): same AVX2 source on every build; VNNI builds use 256-bit vpdpbusd in mul_sum_us8_pairs_float
for t, f, w in [('q8_0', 'ggml_vec_dot_q8_0_q8_0', 32), ('q4_0', 'ggml_vec_dot_q4_0_q8_0', 32),
                ('q4_1', 'ggml_vec_dot_q4_1_q8_1', 32), ('q5_0', 'ggml_vec_dot_q5_0_q8_0', 32),
                ('q5_1', 'ggml_vec_dot_q5_1_q8_1', 32), ('iq4_nl', 'ggml_vec_dot_iq4_nl_q8_0', 64),
                ('mxfp4', 'ggml_vec_dot_mxfp4_q8_0', 64),
                ('q2_K', 'ggml_vec_dot_q2_K_q8_K', 256), ('q3_K', 'ggml_vec_dot_q3_K_q8_K', 256),
                ('q4_K', 'ggml_vec_dot_q4_K_q8_K', 256), ('q5_K', 'ggml_vec_dot_q5_K_q8_K', 256),
                ('q6_K', 'ggml_vec_dot_q6_K_q8_K', 256), ('iq4_xs', 'ggml_vec_dot_iq4_xs_q8_K', 256)]:
    add(t, 'vec_dot', 'quants.s', '^' + f + '$', ('maxmul',), w, 1)
# f16 / bf16 vec_dot (vec.cpp). AVX2: GGML_F16_STEP=32; AVX-512: 64. bf16: AVX2 & AVX512F 32/iter, AVX512BF16 64/iter
add('f16', 'vec_dot', 'vec.s', '^ggml_vec_dot_f16$', ('maxmul',), 32, 1, AVX2_BUILDS)
add('f16', 'vec_dot', 'vec.s', '^ggml_vec_dot_f16$', ('maxmul',), 64, 1, AVX512_BUILDS)
add('bf16', 'vec_dot', 'vec.s', '^ggml_vec_dot_bf16$', ('maxmul',), 32, 1, AVX2_BUILDS + ['skx', 'clx', 'icx'])
add('bf16', 'vec_dot', 'vec.s', '^ggml_vec_dot_bf16$', ('maxmul',), 64, 1, ['zn4'], 'AVX512_BF16 vdpbf16ps path')

# ---- activation quantization (per activation element)
add('act', 'quantize_row_q8_0', 'quants.s', '^quantize_row_q8_0$', ('maxmul',), 32, 1)
add('act', 'quantize_mat_q8_0_4x8 (repack, 4 rows)', 'repack.s', '^ggml_quantize_mat_q8_0_4x8$', ('nest', 'repack.cpp', 190, [(191, 4, []), (226, 4, [])]), 128, 1)
add('act', 'quantize_mat_q8_K_4x8 (repack, 4 rows)', 'repack.s', '^ggml_quantize_mat_q8_K_4x8$', ('nest', 'repack.cpp', 302, [(303, 4, [(333, 7, [])]), (393, 32, []), (434, 4, [(457, 3, []), (484, 3, [])])]), 1024, 1)

# ---- repack (CPU_REPACK extra buffer) kernels
add('q4_0', 'repack gemv q4_0_8x8 (1 row x 8 cols)', 'repack.s', r'gemv_q4_b32_8x8_q8_0_lut_avx<block<4, 8>', ('nest', 'repack.cpp', 559, []), 256, 1, note='same code as iq4_nl_8x8 (identical template instantiation folded by gcc)')
add('iq4_nl', 'repack gemv iq4_nl_8x8 (1 row x 8 cols)', 'repack.s', r'gemv_q4_b32_8x8_q8_0_lut_avx<block<4, 8>', ('nest', 'repack.cpp', 559, []), 256, 1, note='same code as q4_0_8x8')
add('mxfp4', 'repack gemv mxfp4_8x8 (1 row x 8 cols)', 'repack.s', r'^ggml_gemv_mxfp4_8x8_q8_0$', ('nest', 'repack.cpp', 559, []), 256, 1)
add('q4_K', 'repack gemv q4_K_8x8 (1 row x 8 cols)', 'repack.s', r'^ggml_gemv_q4_K_8x8_q8_K$', ('nest', 'repack.cpp', 1520, [(1538, 4, [])]), 2048, 1)
add('q2_K', 'repack gemv q2_K_8x8 (1 row x 8 cols)', 'repack.s', r'^ggml_gemv_q2_K_8x8_q8_K$', ('nest', 'repack.cpp', 1769, []), 2048, 1, AVX512_BUILDS)
for t, fn in [('q4_0', r'gemm_q4_b32_8x8_q8_0_lut_avx<block<4, 8>'), ('iq4_nl', r'gemm_q4_b32_8x8_q8_0_lut_avx<block<4, 8>'),
              ('mxfp4', r'gemm_q4_b32_8x8_q8_0_lut_avx<block_mxfp4x8>')]:
    add(t, 'repack gemm %s_8x8 16 rows x 16 cols (AVX-512)' % t, 'repack.s', fn, ('nest', 'repack.cpp', 692, [(788, 4, [])]), 512, 16, AVX512_BUILDS)
    add(t, 'repack gemm %s_8x8 4 rows x 16 cols (AVX-512)' % t, 'repack.s', fn, ('nest', 'repack.cpp', 902, []), 512, 4, AVX512_BUILDS)
    add(t, 'repack gemm %s_8x8 16 rows x 8 cols (AVX2)' % t, 'repack.s', fn, ('nest', 'repack.cpp', 1119, [(1191, 4, [])]), 256, 16)
    add(t, 'repack gemm %s_8x8 4 rows x 8 cols (AVX2)' % t, 'repack.s', fn, ('nest', 'repack.cpp', 1289, []), 256, 4)
add('q4_K', 'repack gemm q4_K_8x8 16 rows x 16 cols (AVX-512)', 'repack.s', r'^ggml_gemm_q4_K_8x8_q8_K$', ('nest', 'repack.cpp', 2109, [(2117, 4, [(2275, 4, [])])]), 4096, 16, AVX512_BUILDS)
add('q4_K', 'repack gemm q4_K_8x8 4 rows x 16 cols (AVX-512)', 'repack.s', r'^ggml_gemm_q4_K_8x8_q8_K$', ('nest', 'repack.cpp', 2472, [(2480, 4, [])]), 4096, 4, AVX512_BUILDS)
add('q4_K', 'repack gemm q4_K_8x8 16 rows x 8 cols (AVX2)', 'repack.s', r'^ggml_gemm_q4_K_8x8_q8_K$', ('nest', 'repack.cpp', 2844, [(2853, 4, [(2989, 4, [])])]), 2048, 16)
add('q4_K', 'repack gemm q4_K_8x8 4 rows x 8 cols (AVX2)', 'repack.s', r'^ggml_gemm_q4_K_8x8_q8_K$', ('nest', 'repack.cpp', 3177, [(3186, 4, [])]), 2048, 4)
add('q2_K', 'repack gemm q2_K_8x8 16 rows x 16 cols (AVX-512)', 'repack.s', r'^ggml_gemm_q2_K_8x8_q8_K$', ('nest', 'repack.cpp', 3605, [(3613, 2, [(3869, 4, [])])]), 4096, 16, AVX512_BUILDS)
add('q2_K', 'repack gemm q2_K_8x8 4 rows x 16 cols (AVX-512)', 'repack.s', r'^ggml_gemm_q2_K_8x8_q8_K$', ('nest', 'repack.cpp', 4338, [(4346, 2, [])]), 4096, 4, AVX512_BUILDS)
add('q2_K', 'repack gemm q2_K_8x8 16 rows x 8 cols (AVX2 code, leftover cols)', 'repack.s', r'^ggml_gemm_q2_K_8x8_q8_K$', ('nest', 'repack.cpp', 5079, [(5087, 2, [(5327, 4, [])])]), 2048, 16, AVX512_BUILDS)
add('q2_K', 'repack gemm q2_K_8x8 4 rows x 8 cols (AVX2 code, leftover cols)', 'repack.s', r'^ggml_gemm_q2_K_8x8_q8_K$', ('nest', 'repack.cpp', 5753, [(5761, 2, [])]), 2048, 4, AVX512_BUILDS)

# ---- llamafile tinyBLAS_Q0_AVX gemm4xN<RN>: 4 weight rows x RN activation rows per k-block (32)
for t, blk in [('q8_0', 'block_q8_0, block_q8_0'), ('q4_0', 'block_q4_0, block_q8_0'), ('q5_0', 'block_q5_0, block_q8_0'), ('iq4_nl', 'block_iq4_nl, block_q8_0')]:
    for rn in (1, 2):
        add(t, 'tinyBLAS_Q0 gemm4xN<%d>' % rn, 'sgemm.s', r'tinyBLAS_Q0_AVX<%s, float>::gemm4xN<%d>' % (blk, rn), ('maxmul',), 128, rn)
    for rn in (3, 4):
        add(t, 'tinyBLAS_Q0 gemm4xN<%d>' % rn, 'sgemm.s', r'tinyBLAS_Q0_AVX<%s, float>::gemm4xN<%d>' % (blk, rn), ('maxmul',), 128, rn, AVX512_BUILDS)

# ---- tiled k-quant matmul (tiled-kernel.cpp / tiled.cpp)
TILED = [('q4_K', '32, true, 0', 'false', 'block_q4_K'), ('q5_K', '32, true, 0', 'false', 'block_q5_K'),
         ('q6_K', '16, false, 32', 'true', 'block_q6_K'), ('q3_K', '16, false, 4', 'true', 'block_q3_K'),
         ('q2_K', '16, true, 0', 'false', 'block_q2_K'), ('iq4_xs', '32, false, 128', 'false', 'block_iq4_xs'),
         # the i-quants (tiled_matmul_dispatch at tiled.cpp lines 1182-1195): int8 grids with an activation bias
         ('iq2_xxs', '32, false, 128', 'true', 'block_iq2_xxs'), ('iq2_xs', '16, false, 128', 'true', 'block_iq2_xs'),
         ('iq2_s', '16, false, 128', 'true', 'block_iq2_s'), ('iq3_xxs', '32, false, 128', 'true', 'block_iq3_xxs'),
         ('iq3_s', '32, false, 128', 'true', 'block_iq3_s'), ('iq1_s', '32, false, 128', 'true', 'block_iq1_s'),
         ('iq1_m', '16, false, 128', 'true', 'block_iq1_m')]
# an i-quant's unpacking: per weight row (the r loop), its sub-block loop (tiled.cpp at 0c1e570, lines of each
# tiled_unpack_src0), whose grid lookups of 4 (l) gcc unrolls
IQ_UNPACK = {'iq2_xxs': ('nest', 'tiled.cpp', 292, [(303, 8, [])]), 'iq2_xs': ('nest', 'tiled.cpp', 325, [(334, 8, [])]),
             'iq2_s': ('nest', 'tiled.cpp', 357, [(367, 8, [])]), 'iq3_xxs': ('nest', 'tiled.cpp', 390, [(401, 8, [])]),
             'iq3_s': ('nest', 'tiled.cpp', 425, [(435, 4, [])]), 'iq1_s': ('nest', 'tiled.cpp', 465, [(473, 8, [])]),
             'iq1_m': ('nest', 'tiled.cpp', 497, [(510, 8, [])])}
for t, targs, actb, blk in TILED:
    sub = int(targs.split(',')[0])
    for nk, path in [(1, 'M>16 standard'), (0, 'M<=16 narrow')]:
        # AVX2 microtile: loop over g (8 act rows) containing the s loop (8 iterations of 32 weights)
        add(t, 'tiled microtile AVX2 NK=%d (%s): 1 wrow x 256 x 8 act rows' % (nk, path), 'tiled-kernel.s',
            r'tiled_run_microtile_avx2<%s, %d, %s>' % (targs, nk, actb), ('nest', 'tiled-kernel.cpp', 266, [(281, 8, [])]) if sub == 32 else ('nest', 'tiled-kernel.cpp', 266, [(323, 8, [])]),
            256, 8, AVX2_BUILDS + ['skx'])
        add(t, 'tiled microtile VNNI-512 8x16 NK=%d (%s): 8 wrows x 256 x 16 act rows (s loop x%d, SUBBLK=%d)' % (nk, path, 256 // sub, sub), 'tiled-kernel.s',
            r'tiled_run_micro_vnni_8x16<%s, %d>' % (targs, nk), ('sum', 'tiled-kernel.cpp', [(128, 256 // sub)] + ([(172, 256 // sub)] if 'true' in targs else [])), 8 * 256, 16, ['clx', 'icx', 'zn4'])
    add(t, 'tiled unpack_src0 (1 wrow x 256, weight only)', 'tiled.s', r'tiled_unpack_src0\(%s const\*.*\[clone \.part\.0\]$' % blk,
        IQ_UNPACK[t] if t in IQ_UNPACK else ('innermost_largest',), 256, 0)

# tiled: per-weight-row bias correction (only for ACTBIAS types q6_K, q3_K; runs on all builds incl. VNNI ones)
add('q6_K', 'tiled repack_src0<16> corr (1 wrow x 256, weight only)', 'tiled-kernel.s', r'tiled_repack_src0<16>', ('maxmul',), 256, 0, note='ACTBIAS types only (q6_K, q3_K)')
add('q3_K', 'tiled repack_src0<16> corr (1 wrow x 256, weight only)', 'tiled-kernel.s', r'tiled_repack_src0<16>', ('maxmul',), 256, 0, note='ACTBIAS types only (q6_K, q3_K)')
# the i-quants are ACTBIAS types too: the correction at their sub-block size (tiled_repack_src0<SUBBLK>, tiled.cpp line 804)
for t, sub in [('iq2_xxs', 32), ('iq2_xs', 16), ('iq2_s', 16), ('iq3_xxs', 32), ('iq3_s', 32), ('iq1_s', 32), ('iq1_m', 16)]:
    add(t, 'tiled repack_src0<%d> corr (1 wrow x 256, weight only)' % sub, 'tiled-kernel.s', r'tiled_repack_src0<%d>' % sub,
        ('maxmul',), 256, 0, note='ACTBIAS types only')
# tiled: activation side (per activation element, amortised over the weight rows of a window)
add('act', 'tiled repack_src1 VNNI transpose (16 act rows x 64 k per iter)', 'tiled-kernel.s', r'^tiled_repack_src1', ('innermost_largest',), 1024, 1, ['clx', 'icx', 'zn4'])
add('act', 'tiled repack_src1 AVX2 +128 bias xor (32 act elems per iter; ACTBIAS types)', 'tiled-kernel.s', r'^tiled_repack_src1', ('innermost_largest',), 32, 1, AVX2_BUILDS + ['skx'])
# activation quantisation used by vec_dot / tiled for k-quants: quantize_row_q8_K -> quantize_row_q8_K_ref in ggml-base (no -march)
add('act', 'quantize_row_q8_K (ggml-base ref, SSE2)', 'ggml-quants.s', r'^quantize_row_q8_K_ref$', ('nest', 'ggml-quants.c', 2772, [(2776, 256, []), (2792, 16, [])]), 256, 1, ['base'],
    note='amax loop has a data-dependent branch (mispredictions not modelled)')

# llamafile tinyBLAS (float path) for f16 / bf16 weights: used for M >= 2 (gemm_bloc<4, RN>: 4 weight rows x RN act rows x KN k per iter)
for rn in (2, 3):
    add('f16', 'tinyBLAS f16 gemm_bloc<4,%d> (KN=8)' % rn, 'sgemm.s', r'tinyBLAS<8, float __vector\(8\), float __vector\(8\), unsigned short, unsigned short, float>::gemm_bloc<4, %d>' % rn, ('maxmul',), 32, rn, AVX2_BUILDS)
    add('bf16', 'tinyBLAS bf16 gemm_bloc<4,%d> (KN=8)' % rn, 'sgemm.s', r'tinyBLAS<8, float __vector\(8\), float __vector\(8\), ggml_bf16_t, ggml_bf16_t, float>::gemm_bloc<4, %d>' % rn, ('maxmul',), 32, rn, AVX2_BUILDS)
for rn in (2, 3, 4, 5, 6):
    add('f16', 'tinyBLAS f16 gemm_bloc<4,%d> (KN=16)' % rn, 'sgemm.s', r'tinyBLAS<16, float __vector\(16\), float __vector\(16\), unsigned short, unsigned short, float>::gemm_bloc<4, %d>' % rn, ('maxmul',), 64, rn, AVX512_BUILDS)
    add('bf16', 'tinyBLAS bf16 gemm_bloc<4,%d> (KN=16, AVX512F)' % rn, 'sgemm.s', r'tinyBLAS<16, float __vector\(16\), float __vector\(16\), ggml_bf16_t, ggml_bf16_t, float>::gemm_bloc<4, %d>' % rn, ('maxmul',), 64, rn, ['skx', 'clx', 'icx'])
    add('bf16', 'tinyBLAS bf16 gemm_bloc<4,%d> (KN=32, AVX512_BF16)' % rn, 'sgemm.s', r'tinyBLAS<32, float __vector\(16\), short __vector\(32\), ggml_bf16_t, ggml_bf16_t, float>::gemm_bloc<4, %d>' % rn, ('maxmul',), 128, rn, ['zn4'])

# ---- i-quants (quants.c at 0c1e570, AVX2 path on every build): the super-block loop (256 weights) and its inner
# loop over pairs (or quads) of 32-weight sub-blocks
for t, outer, inner, trips in [('iq2_xxs', 2681, 2687, 4), ('iq2_xs', 2827, 2839, 2), ('iq2_s', 3107, 3120, 4),
                               ('iq3_xxs', 3280, 3287, 4), ('iq3_s', 3421, 3429, 4), ('iq1_s', 3611, 3619, 4),
                               ('iq1_m', 3739, 3758, 4)]:
    add(t, 'vec_dot', 'quants.s', '^ggml_vec_dot_%s_q8_K$' % t, ('nest', 'quants.c', outer, [(inner, trips, [])]), 256, 1)
