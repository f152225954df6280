"""Helpers: parse gcc -S output, find functions and loops, extract loop bodies, run llvm-mca."""
import functools
import os
import re
import subprocess

INSN_RE = re.compile(r'^\t(?:\{vex\} )?([a-z][a-z0-9]*)(?:\s+(.*))?$')
LABEL_RE = re.compile(r'^([.\w$@]+):')

@functools.lru_cache(maxsize=None)
def read_lines(path):
    with open(path) as f:
        return f.read().split('\n')

@functools.lru_cache(maxsize=None)
def functions(path):
    """name -> (start_line, end_line) for each function in the .s file"""
    L = read_lines(path)
    res = {}
    cur = None
    for i, l in enumerate(L):
        m = re.match(r'^\t\.type\t([^,]+), @function', l)
        if m:
            cur = m.group(1); start = i
            continue
        m = re.match(r'^\t\.size\t([^,]+), \.-', l)
        if m and cur and m.group(1) == cur:
            res[cur] = (start, i)
            cur = None
    return res

def demangle(names):
    p = subprocess.run(['c++filt'], input='\n'.join(names), capture_output=True, text=True)
    return p.stdout.split('\n')[:len(names)]

def find_funcs(path, pattern):
    fs = functions(path)
    names = list(fs)
    dem = demangle(names)
    out = []
    for n, d in zip(names, dem):
        if re.search(pattern, d) or re.search(pattern, n):
            out.append((n, d))
    return out

def parse_body(path, a, b):
    """list of (lineno, kind, text): kind in insn/label"""
    L = read_lines(path)
    out = []
    for i in range(a, b + 1):
        l = L[i]
        m = LABEL_RE.match(l)
        if m:
            out.append((i, 'label', m.group(1)))
            continue
        m = INSN_RE.match(l)
        if m:
            out.append((i, 'insn', l.strip()))
    return out

def loops(path, func):
    a, b = functions(path)[func]
    body = parse_body(path, a, b)
    labpos = {t: i for (i, k, t) in body if k == 'label'}
    res = []
    for (i, k, t) in body:
        if k != 'insn':
            continue
        m = re.match(r'^(j[a-z]+)\s+(\.L\w+)$', t)
        if m and m.group(2) in labpos and labpos[m.group(2)] < i:
            rng = [t2 for (i2, k2, t2) in body if k2 == 'insn' and labpos[m.group(2)] <= i2 <= i]
            if any(x.startswith('ret') for x in rng):
                continue
            res.append((labpos[m.group(2)], i))
    # dedupe: same start label with several back branches -> keep largest
    best = {}
    for s, e in res:
        if s not in best or e > best[s]:
            best[s] = e
    return sorted(best.items())

def loop_insns(path, s, e):
    return [t for (i, k, t) in parse_body(path, s, e) if k == 'insn']

def loop_text(path, s, e):
    """Assembly text for llvm-mca: labels and instructions only."""
    out = []
    for (_i, k, t) in parse_body(path, s, e):
        out.append(t + ':' if k == 'label' else '\t' + t)
    return '\n'.join(out) + '\n'

def mnemonic(t):
    if t.startswith('{vex}'):
        t = t[5:].strip()
    return t.split()[0]

MCA = {v: f'llvm-mca-{v}' for v in ('22', '19', '16', '14')}  # on PATH (Debian's llvm-N packages)

@functools.lru_cache(maxsize=None)
def run_mca(sfile, mcpu, ver='22', iterations=200):
    cmd = ['nice', '-n', '19', MCA[ver], '-mtriple=x86_64-unknown-linux-gnu', f'-mcpu={mcpu}',
           f'-iterations={iterations}', sfile]
    p = subprocess.run(cmd, capture_output=True, text=True)
    out = p.stdout
    if p.returncode != 0:
        raise RuntimeError(p.stderr[:2000])
    def g(rx, cast=float):
        m = re.search(rx, out)
        return cast(m.group(1)) if m else None
    r = dict(iterations=g(r'Iterations:\s+(\d+)', int), insns=g(r'Instructions:\s+(\d+)', int),
             cycles=g(r'Total Cycles:\s+(\d+)', int), uops=g(r'Total uOps:\s+(\d+)', int),
             ipc=g(r'IPC:\s+([\d.]+)'), rthr=g(r'Block RThroughput:\s+([\d.]+)'))
    r['cyc_per_iter'] = r['cycles'] / r['iterations']
    r['warn'] = p.stderr.strip()[:300]
    r['out'] = out
    return r

@functools.lru_cache(maxsize=None)
def file_ids(path):
    """.file N "..." -> {N: basename}"""
    ids = {}
    for l in read_lines(path)[:20000]:
        m = re.match(r'^\t\.file (\d+) "([^"]*)"(?: "([^"]*)")?', l)
        if m:
            ids[int(m.group(1))] = os.path.basename(m.group(3) or m.group(2))
    return ids

def parse_body_loc(path, a, b):
    """list of (lineno, kind, text, (fileid, srcline)) with the .loc in force"""
    L = read_lines(path)
    out = []
    cur = (None, None)
    for i in range(a, b + 1):
        l = L[i]
        m = re.match(r'^\t\.loc (\d+) (\d+)', l)
        if m:
            cur = (int(m.group(1)), int(m.group(2)))
            continue
        m = LABEL_RE.match(l)
        if m:
            out.append((i, 'label', m.group(1), cur))
            continue
        m = INSN_RE.match(l)
        if m:
            out.append((i, 'insn', l.strip(), cur))
    return out

def loop_src_lines(path, s, e, basename):
    ids = [k for k, v in file_ids(path).items() if v == basename]
    return {loc[1] for (i, k, t, loc) in parse_body_loc(path, s, e) if k == 'insn' and loc[0] in ids}

def select_loop_by_line(path, func, basename, line):
    """smallest loop in func containing an instruction whose .loc is basename:line"""
    best = None
    for s, e in loops(path, func):
        if line in loop_src_lines(path, s, e, basename):
            if best is None or (e - s) < (best[1] - best[0]):
                best = (s, e)
    return best

def text_excluding(path, s, e, holes):
    """loop body text with the child ranges removed (labels inside holes dropped too)"""
    out = []
    for (i, k, t) in parse_body(path, s, e):
        if any(a <= i <= b for a, b in holes):
            continue
        out.append(t + ':' if k == 'label' else '\t' + t)
    return '\n'.join(out) + '\n'

def insns_excluding(path, s, e, holes):
    return [t for (i, k, t) in parse_body(path, s, e) if k == 'insn' and not any(a <= i <= b for a, b in holes)]
