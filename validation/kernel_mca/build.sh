#!/bin/bash
# Compile ggml-cpu kernel sources to assembly (-S) for several -march targets.
# Flags copied from vendor/llama.cpp/build/compile_commands.json with -march=native replaced.
set -e
L=${LLAMA_CPP:?set LLAMA_CPP to a llama.cpp checkout at 0c1e570 (llama-cpp-python 0.3.36 vendors it)}
S=$L/ggml/src
OUT=${OUT:-$(dirname "$0")/build}
DEFS="-DGGML_BACKEND_BUILD -DGGML_BACKEND_SHARED -DGGML_SCHED_MAX_COPIES=4 -DGGML_SHARED -DGGML_USE_CPU_REPACK -DGGML_USE_LLAMAFILE -DGGML_USE_OPENMP -D_GNU_SOURCE -D_XOPEN_SOURCE=600 -Dggml_cpu_EXPORTS"
INC="-I$S/.. -I$S/. -I$S/ggml-cpu -I$S/../include"
COMMON="-O3 -DNDEBUG -fPIC -fopenmp -g1 -fno-asynchronous-unwind-tables"
declare -A MARCH
MARCH[haswell]="-march=haswell"
MARCH[skx]="-march=skylake-avx512"
MARCH[clx]="-march=cascadelake"
MARCH[icx]="-march=icelake-server"
# gcc 12.2 has no -march=znver4: emulate = znver3 + the AVX-512 subsets Zen 4 has (what gcc 13 -march=znver4 adds)
MARCH[zn4]="-march=znver3 -mavx512f -mavx512cd -mavx512bw -mavx512dq -mavx512vl -mavx512ifma -mavx512vbmi -mavx512vbmi2 -mavx512vnni -mavx512bitalg -mavx512vpopcntdq -mavx512bf16 -mgfni -mvaes -mvpclmulqdq"
MARCH[zn3]="-march=znver3"
MARCH[adl]="-march=alderlake"
FILES="ggml-cpu/arch/x86/quants.c:c ggml-cpu/arch/x86/repack.cpp:cpp ggml-cpu/llamafile/sgemm.cpp:cpp ggml-cpu/tiled/tiled-kernel.cpp:cpp ggml-cpu/tiled/tiled.cpp:cpp ggml-cpu/vec.cpp:cpp ggml-cpu/ggml-cpu.c:c"
for t in ${TARGETS:-haswell skx clx icx zn4 zn3 adl}; do
  mkdir -p $OUT/$t
  for fe in $FILES; do
    f=${fe%%:*}; e=${fe##*:}; b=$(basename $f); b=${b%.*}
    if [ $e = c ]; then CC="gcc-12 -std=gnu11"; else CC="g++-12 -std=gnu++17"; fi
    [ -s $OUT/$t/$b.s ] && continue
    echo "$t $b"
    nice -n 19 $CC $DEFS $INC $COMMON ${MARCH[$t]} -S $S/$f -o $OUT/$t/$b.s 2> $OUT/$t/$b.err || echo "FAIL $t $b"
  done
done
# ggml-quants.c belongs to ggml-base, compiled WITHOUT any -march (baseline x86-64/SSE2) per compile_commands.json
mkdir -p $OUT/base
if [ ! -s $OUT/base/ggml-quants.s ]; then
  echo "base ggml-quants"
  nice -n 19 gcc-12 -std=gnu11 -DGGML_BUILD -DGGML_SCHED_MAX_COPIES=4 -DGGML_SHARED -DGGML_USE_OPENMP -D_GNU_SOURCE -D_XOPEN_SOURCE=600 -Dggml_base_EXPORTS -I$S/. -I$L/build/ggml/src -I$S/../include $COMMON -S $S/ggml-quants.c -o $OUT/base/ggml-quants.s 2> $OUT/base/ggml-quants.err || echo "FAIL base"
fi
