"""Cycles per 32 weights of one weight row per activation row of llama.cpp's x86 kernels, by llvm-mca on the hot
loops gcc makes of each (README.md). ``python run.py [REGEX]``: the kernels whose ``type kernel`` matches, every build
and -mcpu of each; their rows replace the same rows of results.json, and cycles.csv is written from it."""
import csv
import json
import os
import re
import sys

import asmtools as A
import specs

HERE = os.path.dirname(os.path.abspath(__file__))
B = os.environ.get('OUT', os.path.join(HERE, 'build')) + '/'
ASM = os.path.join(HERE, 'asm') + '/'
MARCH = {'haswell': '-march=haswell', 'skx': '-march=skylake-avx512', 'clx': '-march=cascadelake', 'icx': '-march=icelake-server',
         'zn4': '-march=znver3+AVX512(F,CD,BW,DQ,VL,IFMA,VBMI,VBMI2,VNNI,BITALG,VPOPCNTDQ,BF16)+GFNI/VAES/VPCLMULQDQ (gcc12 has no znver4)',
         'zn3': '-march=znver3', 'adl': '-march=alderlake', 'base': '(none: baseline x86-64 SSE2, ggml-base)'}
MCPUS = {'haswell': ['haswell', 'broadwell', 'znver1', 'znver2', 'znver3'], 'zn3': ['znver3'], 'skx': ['skylake-avx512'],
         'clx': ['cascadelake'], 'icx': ['icelake-server', 'sapphirerapids', 'graniterapids'], 'zn4': ['znver4', 'znver5'],
         'adl': ['alderlake'], 'base': ['haswell', 'broadwell', 'skylake-avx512', 'cascadelake', 'icelake-server', 'sapphirerapids', 'alderlake', 'znver1', 'znver2', 'znver3', 'znver4']}
MULRE = re.compile(r'^(vpmadd|vpdpbusd|vpdpwssd|vpdpbssd|vfmadd|vfnmadd|vfmsub|vdpbf16|vpmulld)')

def mulcount(ins):
    return sum(1 for t in ins if MULRE.match(A.mnemonic(t)))

def innermost(ls):
    return [l for l in ls if not any(o != l and l[0] <= o[0] and o[1] <= l[1] for o in ls)]

def slug(s):
    return re.sub(r'[^A-Za-z0-9_.]+', '_', s).strip('_')

def zn12_fix(txt):
    out = []
    for l in txt.split('\n'):
        m = re.match(r'^\tvcvtph2ps\t(.*), %([xy]mm\d+)$', l)
        if m:
            src, dst = m.group(1), m.group(2)
            if dst.startswith('ymm') and src.startswith('%xmm'):
                src = '%y' + src[2:]
            l = '\tvcvtdq2ps\t%s, %%%s' % (src, dst)
        m = re.match(r'^\tvpmaskmov[dq]\t([^,]*\([^)]*\)), %([xy]mm\d+), (%[xy]mm\d+)$', l)
        if m:
            l = '\tvmovdqu\t%s, %s' % (m.group(1), m.group(3))
        out.append(l)
    return '\n'.join(out)

class Part:
    def __init__(self, name, path, s, e, holes, mult):
        self.name, self.path, self.s, self.e, self.holes, self.mult = name, path, s, e, holes, mult
    def insns(self):
        return A.insns_excluding(self.path, self.s, self.e, self.holes)
    def text(self):
        return A.text_excluding(self.path, self.s, self.e, self.holes)

def resolve(spec, build):
    """returns (func, list of Part) ; each Part = straight-line piece with multiplicity per outer iteration"""
    path = B + build + '/' + spec['file']
    fs = A.find_funcs(path, spec['func'])
    if not fs:
        raise LookupError('function not found: ' + spec['func'])
    # prefer non-clone unless only clones
    fs.sort(key=lambda x: ('clone' in x[1], len(x[0])))
    sel = spec['sel']
    if sel[0] in ('maxmul', 'innermost_largest'):
        best = None
        for f, _d in fs:
            ls = A.loops(path, f)
            for l in innermost(ls):
                ins = A.loop_insns(path, *l)
                key = (mulcount(ins), len(ins)) if sel[0] == 'maxmul' else (len(ins),)
                if best is None or key > best[0]:
                    best = (key, f, l)
        if best is None:
            raise LookupError('no loop')
        _, f, l = best
        return f, [Part('loop', path, l[0], l[1], [], 1.0)]
    if sel[0] == 'sum':
        f = fs[0][0]
        parts = []
        for line, trips in sel[2]:
            l = A.select_loop_by_line(path, f, sel[1], line)
            if l is None:
                raise LookupError('loop for line %d not found' % line)
            parts.append(Part('L%d' % line, path, l[0], l[1], [], trips))
        return f, parts
    if sel[0] == 'nest':
        base = sel[1]
        for f, _d in fs:
            top = A.select_loop_by_line(path, f, base, sel[2])
            if top:
                break
        else:
            raise LookupError('loop for line %d not found' % sel[2])
        parts = []
        def rec(loop, line, children, mult):
            holes = []
            for cl, trips, gc in children:
                c = A.select_loop_by_line(path, f, base, cl)
                if c is None or c == loop or not (loop[0] <= c[0] and c[1] <= loop[1]):
                    continue  # fully unrolled into parent (or not a child)
                holes.append(c)
                rec(c, cl, gc, mult * trips)
            parts.append(Part('L%d' % line, path, loop[0], loop[1], holes, mult))
        rec(top, sel[2], sel[3], 1.0)
        parts.reverse()
        return f, parts
    raise ValueError(sel)

def analyse(spec, build, mcpus, ver='22', save=True):
    f, parts = resolve(spec, build)
    res = []
    kid = slug(spec['type'] + '__' + spec['kernel'])
    files = []
    for p in parts:
        fn = ASM + build + '/' + kid + ('' if len(parts) == 1 else '.' + p.name) + '.s'
        if save:
            os.makedirs(os.path.dirname(fn), exist_ok=True)
            hdr = '# %s | %s | build %s (%s)\n# function: %s\n# source loop part %s, multiplicity %g per outer iteration; lines %d-%d of %s\n' % (
                spec['type'], spec['kernel'], build, MARCH[build], f, p.name, p.mult, p.s, p.e, p.path)
            with open(fn, 'w') as fh:
                fh.write(hdr + p.text())
        files.append(fn)
    fixed = set()
    for mcpu in mcpus:
        tot_c = tot_r = 0.0
        detail = []
        for p, fn in zip(parts, files):
            fn2 = fn
            if mcpu in ('znver1', 'znver2'):
                txt = open(fn).read()
                t2 = zn12_fix(txt)
                if t2 != txt:
                    fn2 = fn[:-2] + '.zn12fix.s'
                    open(fn2, 'w').write(t2)
                    fixed.add(mcpu)
            r = A.run_mca(fn2, mcpu, ver)
            tot_c += p.mult * r['cyc_per_iter']
            tot_r += p.mult * r['rthr']
            detail.append((p.name, p.mult, len(p.insns()), r['cyc_per_iter'], r['rthr']))
        units = (spec['w'] / 32.0) * (spec['rows'] if spec['rows'] else 1)
        nbr = sum(sum(1 for t in p.insns() if re.match(r'^j(?!mp)[a-z]+\s', t)) - 1 for p in parts)
        note = spec['note']
        if mcpu in fixed:
            note = (note + '; ' if note else '') + 'zn1/zn2: vcvtph2ps->vcvtdq2ps, vpmaskmov load->vmovdqu substituted (LLVM model gives them a 100-cycle placeholder latency)'
        if nbr > 0:
            note = (note + '; ' if note else '') + '%d internal conditional branch(es) in analysed code: all paths counted as executed' % nbr
        res.append(dict(type=spec['type'], kernel=spec['kernel'], build=build, march=MARCH[build], mcpu=mcpu,
                        w=spec['w'], rows=spec['rows'], cyc=tot_c, rthr=tot_r, per32=tot_c / units, per32_rthr=tot_r / units,
                        parts=detail, func=f, files=[os.path.relpath(x, HERE) for x in files], note=note,
                        ninsn=sum(p.mult * len(p.insns()) for p in parts), nmul=sum(p.mult * mulcount(p.insns()) for p in parts)))
    return res

MARCH_SHORT = {'haswell': 'haswell', 'skx': 'skylake-avx512', 'clx': 'cascadelake', 'icx': 'icelake-server', 'zn4': 'znver4*',
               'zn3': 'znver3', 'adl': 'alderlake', 'base': '(none)'}
COLS = ['type', 'kernel', 'build_march', 'mca_mcpu', 'weights_per_iter', 'act_rows_per_iter', 'cycles_per_iter_sim',
        'block_rthroughput', 'cycles_per_32w_per_row_sim', 'cycles_per_32w_per_row_rthr', 'insns_per_iter',
        'vec_mul_fma_per_iter', 'loop_parts', 'asm_files', 'notes']


def write_csv(rows, path):
    with open(path, 'w', newline='') as f:
        w = csv.writer(f, lineterminator='\n')
        w.writerow(COLS)
        for r in rows:
            w.writerow([r['type'], r['kernel'], MARCH_SHORT[r['build']], r['mcpu'], r['w'], r['rows'], '%.2f' % r['cyc'],
                        '%.2f' % r['rthr'], '%.3f' % r['per32'], '%.3f' % r['per32_rthr'], '%.0f' % r['ninsn'],
                        '%.0f' % r['nmul'],
                        ' + '.join('%s x%g (%d insns: %.2f cyc, rthr %.2f)' % tuple(p) for p in r['parts']),
                        ' '.join(r['files']), r['note']])


if __name__ == '__main__':
    out = []
    flt = sys.argv[1] if len(sys.argv) > 1 else ''
    for sp in specs.S:
        if flt and not re.search(flt, sp['type'] + ' ' + sp['kernel']):
            continue
        for b in sp['builds']:
            try:
                rs = analyse(sp, b, MCPUS[b])
            except Exception as ex:
                print('ERR', sp['type'], sp['kernel'], b, repr(ex)[:300]); continue
            for r in rs:
                out.append(r)
                print('%-6s %-55s %-7s %-15s w=%-5d r=%-2d per32w/row=%7.3f' % (
                    r['type'], r['kernel'][:55], r['build'], r['mcpu'], r['w'], r['rows'], r['per32']))
    path = os.path.join(HERE, 'results.json')
    key = lambda r: (r['type'], r['kernel'], r['build'], r['mcpu'])  # noqa: E731
    old = json.load(open(path)) if os.path.exists(path) else []
    new = {key(r): r for r in out}
    merged = [new.pop(key(r), r) for r in old] + list(new.values())
    for r in merged:
        r.pop('out', None)
    json.dump(merged, open(path, 'w'), indent=1)
    write_csv(merged, os.path.join(HERE, 'cycles.csv'))
