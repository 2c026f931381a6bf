#!/usr/bin/env python3
"""Automatic k for topicmap: build a labelled panel, collect topicmap's own k sweeps, score rules.

The shipped rule (src/cluster/auto_k/rule.rs) is `knee_floor`; `topicmap` is the binary's own pick. Python 3 with numpy only (no scikit-learn:
every number comes from topicmap itself). Three steps, each cached and restartable:

    auto_k_eval.py panel   --root R --corpora C            # R/sets/*.csv, the panel's CSVs
    auto_k_eval.py collect --root R --corpora C --bin B    # R/res/*.json, topicmap's sweeps and V
    auto_k_eval.py score   --root R [--hi 20] [--rules a,b]  # tables: chosen k, V ratio, pass/fail
    auto_k_eval.py curves  --root R SET [VARIANT]          # one set's silhouette and V by k

What is collected, per set and variant (base; seed1 = --set cluster.seed=1; drop = 7% of the
documents dropped, seeded):
  - sweep_SET_VAR.json: one `topicmap run` with k = "auto", k-min 2, k-max 30: k_selection.csv's
    per-k silhouette and inertia (two 20-pass k-means++ restarts per k on <= 10,000 rows,
    silhouette on a seeded sample of <= 5,000), and the document count;
  - fixed_SET_VAR.json: fixed-k runs for k = 2..30 with reduce.dims = 100 (key "k"), which give
    the very V an automatic run gets when it picks k (an automatic run sizes LSA for k-max, i.e.
    100 dims; checked identical), plus one fixed run at the true k with default dims (key
    "true:K"): V at the true k exactly as ../shared/checks/12-auto-k measures it.
Runs use --threads 1 and map.method = linear, charts off, CSV only (none of which touches the
clustering: checked identical V).

A rule maps a sweep (ks, silhouette, inertia, n) and a range (lo, hi) to k. The judge is the
check's: k within [true/1.5, 1.5 true] and V(k) >= 0.9 V(true k).
"""
import argparse
import csv
import json
import math
import os
import random
import shutil
import subprocess
import sys
import time

import numpy as np

csv.field_size_limit(1 << 30)

# ----------------------------------------------------------------------------------------------
# The panel
# ----------------------------------------------------------------------------------------------
NG = '20newsgroups/20news_bydate_clean.csv'
N10 = '20newsgroups/n10_1k.csv'
THUC = 'thucnews/thucnews_headlines_20k.csv'
ARXIV = 'arxiv/arxiv_daily_2025_2026.csv'
# 10kGNAD's test split (1,028 German news articles in 9 classes), class sizes: the held-back
# German set's shape, used for a 20NG stand-in (no German text is in the corpora).
GNAD_SIZES = [168, 168, 151, 141, 120, 102, 67, 57, 54]

# kind 'check': exactly the check's pipeline (corpus file, optional filter); 'subset': a CSV
# written by `panel` (per = documents per group, or a list). hold: held out while the rules'
# constants are chosen.
SETS = {
    'ng4': dict(kind='check', file=NG, text=['text'], label='label', truek=4,
                groups=['alt.atheism', 'talk.religion.misc', 'comp.graphics', 'sci.space']),
    'ng20': dict(kind='check', file=NG, text=['text'], label='label', truek=20),
    'n10_1k': dict(kind='check', file=N10, text=['text'], label='label', truek=10),
    'thuc10': dict(kind='check', file=THUC, text=['title'], label='category', truek=10, lang='chinese'),
    'ng9u_1k': dict(kind='subset', file=NG, text=['text'], label='label', per=GNAD_SIZES, hold=True,
                    groups=['comp.windows.x', 'rec.motorcycles', 'talk.politics.mideast', 'sci.electronics',
                            'rec.sport.baseball', 'alt.atheism', 'talk.politics.misc', 'comp.os.ms-windows.misc',
                            'sci.med']),
    'ng8_1k': dict(kind='subset', file=NG, text=['text'], label='label', per=125,
                   groups=['comp.sys.ibm.pc.hardware', 'rec.sport.baseball', 'sci.electronics', 'talk.politics.mideast',
                           'rec.motorcycles', 'comp.windows.x', 'talk.religion.misc', 'misc.forsale']),
    'ng12_1k': dict(kind='subset', file=NG, text=['text'], label='label', per=100,
                    groups=['alt.atheism', 'comp.graphics', 'comp.os.ms-windows.misc', 'comp.sys.mac.hardware',
                            'misc.forsale', 'rec.autos', 'rec.sport.hockey', 'sci.crypt', 'sci.med', 'sci.space',
                            'talk.politics.guns', 'talk.politics.mideast']),
    'ng6_900': dict(kind='subset', file=NG, text=['text'], label='label', per=150, hold=True,
                    groups=['comp.graphics', 'rec.autos', 'sci.med', 'soc.religion.christian', 'talk.politics.guns',
                            'sci.space']),
    'ng20_5k': dict(kind='subset', file=NG, text=['text'], label='label', per=250, truek=20),
    'thuc5_1k': dict(kind='subset', file=THUC, text=['title'], label='category', per=200, lang='chinese',
                     groups=['finance', 'education', 'sports', 'game', 'realty']),
    'thuc8_1k': dict(kind='subset', file=THUC, text=['title'], label='category', per=125, lang='chinese', hold=True,
                     groups=['stocks', 'society', 'politics', 'science', 'entertainment', 'sports', 'realty',
                             'education']),
    'thuc10_5k': dict(kind='subset', file=THUC, text=['title'], label='category', per=500, lang='chinese', truek=10),
    'arx6_1k': dict(kind='subset', file=ARXIV, text=['title', 'abstract'], label='primary_category', per=200,
                    groups=['cs.CV', 'cs.CL', 'cs.IT', 'cs.GR', 'cs.GT', 'cs.CE']),
    'arx6_6k': dict(kind='subset', file=ARXIV, text=['title', 'abstract'], label='primary_category', per=1000,
                    hold=True, groups=['cs.CV', 'cs.CL', 'cs.AI', 'cs.IT', 'cs.LG', 'cs.GR']),
}
for _d in SETS.values():
    _d.setdefault('truek', len(_d.get('groups', [])) or None)
CHECK_SETS = ['ng4', 'ng20', 'n10_1k', 'thuc10']
DROP = 0.07
VARIANTS = {'base': (None, []), 'seed1': (None, ['cluster.seed=1']), 'drop': ('_drop', [])}


def read_rows(path):
    with open(path, encoding='utf-8-sig', newline='') as f:
        r = csv.DictReader(f)
        return r.fieldnames, list(r)


def rows_of(name, corpora):
    """The documents of a set (for 'check' sets: what the check's pipeline reads)."""
    d = SETS[name]
    fields, rows = read_rows(os.path.join(corpora, d['file']))
    if d['kind'] == 'check':
        if 'groups' in d:
            rows = [r for r in rows if r[d['label']] in d['groups']]
        return fields, rows
    rng = random.Random(f"autok2-{name}")
    groups = d.get('groups') or sorted({r[d['label']] for r in rows})
    per = d['per'] if isinstance(d['per'], list) else [d['per']] * len(groups)
    out = []
    for g, m in zip(groups, per):
        pool = [r for r in rows if r[d['label']] == g and any(r[c].strip() for c in d['text'])]
        out += rng.sample(pool, min(m, len(pool)))
    rng.shuffle(out)
    return fields, out


def write_csv(path, fields, rows):
    with open(path, 'w', encoding='utf-8', newline='') as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def dropped(rows, frac, seed):
    rng = random.Random(seed)
    drop = set(rng.sample(range(len(rows)), int(round(frac * len(rows)))))
    return [r for i, r in enumerate(rows) if i not in drop]


def cmd_panel(a):
    os.makedirs(os.path.join(a.root, 'sets'), exist_ok=True)
    for name, d in SETS.items():
        fields, rows = rows_of(name, a.corpora)
        if d['kind'] == 'subset':
            write_csv(os.path.join(a.root, 'sets', f'{name}.csv'), fields, rows)
        write_csv(os.path.join(a.root, 'sets', f'{name}_drop.csv'), fields, dropped(rows, DROP, f'drop-{name}'))
        print(f'{name}: {len(rows)} rows, {d["truek"]} classes')


# ----------------------------------------------------------------------------------------------
# Running topicmap
# ----------------------------------------------------------------------------------------------
FAST = ['map.method=linear', 'charts.enabled=false', 'output.formats=["csv"]']


def pipeline_text(name, variant, root, corpora):
    """The pipeline as the check writes it: the input (and Chinese tokenizing), nothing else."""
    d = SETS[name]
    suffix = VARIANTS[variant][0]
    q = lambda xs: '[' + ', '.join(f'"{x}"' for x in xs) + ']'
    if suffix is None and d['kind'] == 'check':
        path, groups = os.path.join(corpora, d['file']), d.get('groups')
    else:
        path, groups = os.path.join(root, 'sets', f"{name}{suffix or ''}.csv"), None
    body = f'name = "{name}"\n[[input]]\npath = "{path}"\ntext = {q(d["text"])}\nlabel = "{d["label"]}"\n'
    if groups:
        body += f'filter = {{ column = "{d["label"]}", values = {q(groups)} }}\n'
    if d.get('lang') == 'chinese':
        body += '[tokenize]\nlanguage = "chinese"\n'
    return body


def run_topicmap(binary, toml_text, out, sets=()):
    """One `topicmap run` into a fresh folder (a folder holding a report would make topicmap
    keep its k); returns k_selection.csv, metrics.json, run.json and the wall time."""
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out + '.toml', 'w') as f:
        f.write(toml_text)
    cmd = [binary, '--threads', '1', 'run', out + '.toml', '--out', out, '--quiet']
    for s in list(sets) + FAST:
        cmd += ['--set', s]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    res = {'wall': time.time() - t0, 'cmd': ' '.join(cmd)}
    if p.returncode != 0:
        raise RuntimeError(f"{res['cmd']} failed: {p.stderr[-2000:]}")
    if os.path.exists(os.path.join(out, 'k_selection.csv')):
        with open(os.path.join(out, 'k_selection.csv'), encoding='utf-8-sig', newline='') as f:
            res['k_selection'] = list(csv.DictReader(f))
    for name in ('metrics', 'run'):
        pth = os.path.join(out, name + '.json')
        if os.path.exists(pth):
            res[name] = json.load(open(pth))
    shutil.rmtree(out)
    return res


def _find(obj, key):
    if isinstance(obj, dict):
        if isinstance(obj.get(key), int):
            return obj[key]
        for v in obj.values():
            f = _find(v, key)
            if f is not None:
                return f
    return None


def collect_sweep(a, name, variant):
    path = os.path.join(a.root, 'res', f'sweep_{name}_{variant}.json')
    if os.path.exists(path):
        return
    sets = ['cluster.k=auto', 'cluster.k-min=2', f'cluster.k-max={a.k_max}'] + VARIANTS[variant][1]
    r = run_topicmap(a.bin, pipeline_text(name, variant, a.root, a.corpora),
                     os.path.join(a.root, 'out', f'sweep_{name}_{variant}'), sets)
    tab = r['k_selection']
    rec = dict(name=name, variant=variant, truek=SETS[name]['truek'], n=r['metrics']['documents'],
               ks=[int(t['k']) for t in tab], sil=[float(t['silhouette']) for t in tab],
               inertia=[float(t['inertia']) for t in tab], wall=r['wall'], cmd=r['cmd'],
               chosen_topicmap=_find(r['run'], 'chosen'))
    json.dump(rec, open(path, 'w'))


def collect_fixed(a, name, variant, ks, dims100=True):
    path = os.path.join(a.root, 'res', f'fixed_{name}_{variant}.json')
    rec = json.load(open(path)) if os.path.exists(path) else {}
    for k in ks:
        key = str(k) if dims100 else f'true:{k}'
        if key in rec:
            continue
        sets = [f'cluster.k={k}'] + (['reduce.dims=100'] if dims100 else []) + VARIANTS[variant][1]
        r = run_topicmap(a.bin, pipeline_text(name, variant, a.root, a.corpora),
                         os.path.join(a.root, 'out', f'fixed_{name}_{variant}'), sets)
        rec[key] = dict(v=r['metrics'].get('v_measure'), metrics=r['metrics'], wall=r['wall'])
        json.dump(rec, open(path, 'w'))


def cmd_collect(a):
    os.makedirs(os.path.join(a.root, 'res'), exist_ok=True)
    names = a.sets.split(',') if a.sets else list(SETS)
    for variant in a.variants.split(','):
        for name in names:
            t = time.time()
            collect_sweep(a, name, variant)
            collect_fixed(a, name, variant, [SETS[name]['truek']], dims100=False)
            collect_fixed(a, name, variant, range(2, a.k_max + 1))
            print(f'{name} {variant}: {time.time() - t:.0f} s', flush=True)


# ----------------------------------------------------------------------------------------------
# Rules: (sweep, lo, hi[, previous]) -> k
# ----------------------------------------------------------------------------------------------
def _curve(sw, lo, hi, key='sil'):
    ks = np.array(sw['ks'])
    m = (ks >= lo) & (ks <= hi)
    return ks[m], np.array(sw[key], dtype=float)[m]


def _argmax_small(ks, score):
    """Highest finite score, ties to the smaller k."""
    best = None
    for k, s in zip(ks, score):
        if np.isfinite(s) and (best is None or s > best[1]):
            best = (int(k), s)
    return best[0]


def rule_current(sw, lo=2, hi=20, previous=None, w=0.2, k0=None):
    """Shipped (issue 38): silhouette - 0.2 |ln(k / k0)|, k0 = sqrt(n) / 10; previous k kept
    within 0.01 of the best score."""
    ks, s = _curve(sw, lo, hi)
    k0 = k0 or math.sqrt(sw['n']) / 10
    score = s - w * np.abs(np.log(ks / k0))
    best = _argmax_small(ks, score)
    if previous is not None and previous in ks and score[list(ks).index(previous)] >= score.max() - 0.01:
        return int(previous)
    return best


def rule_sil_max(sw, lo=2, hi=20, previous=None):
    ks, s = _curve(sw, lo, hi)
    return _argmax_small(ks, s)


def smooth3(s):
    """Mean of each value and its two neighbours (the end values repeated at the ends)."""
    p = np.pad(s, 1, mode='edge')
    return (p[:-2] + p[1:-1] + p[2:]) / 3


CLEAR = 0.25    # a silhouette this high at some k is a clear peak (text stays below 0.11)
LEVEL = 0.6     # the saturation level: share of the silhouette's rise over the range
FALL = 0.15     # an early fall this large (share of the rise after it) marks broad groups
WINDOW = 20     # the knee is read on k <= 20 whatever k-max is
KEEP = 0.1      # a previous k stays while it is within this share of the rise of the target
PEAK_DROP = 0.5 # an interior maximum the smoothed curve falls back from by this share of its rise


def knee_parts(sw, lo=2, hi=20, level=LEVEL, fall=FALL):
    """The recommended rule's intermediate values (see rule_knee). The curve is read on
    lo..min(hi, WINDOW), so a larger k-max does not move the knee (the floor and a clear peak
    may still use the whole range)."""
    ks, raw = _curve(sw, lo, min(hi, max(WINDOW, lo + 2)))
    s = smooth3(raw)
    m = int(np.argmin(s))                       # first k of the lowest smoothed silhouette
    after = s[m + 1:].max() - s[m] if m + 1 < len(s) else 0.0
    before = s[:m].max() - s[m] if m > 0 else 0.0
    span = s.max() - s.min()
    out = dict(ks=ks, raw=raw, s=s, m=m, before=before, after=after, span=span)
    kall, rall = _curve(sw, lo, hi)
    if rall.max() >= CLEAR:
        out.update(branch='clear', k=_argmax_small(kall, rall))
    elif span <= 0:
        out.update(branch='flat', k=int(ks[0]))
    elif m > 0 and after > 0 and before >= fall * after:
        # where the fall ends: the first k after the early peak within KEEP of the bottom
        peak = int(np.argmax(s[:m]))
        end = next(i for i in range(peak + 1, m + 1) if s[i] <= s[m] + KEEP * after)
        out.update(branch='fall', k=int(ks[end]), peak=peak)
    elif s.max() - s[int(np.argmax(s)):].min() >= PEAK_DROP * span:
        # an interior peak: the curve climbs, then falls back by half its rise or more
        out.update(branch='peak', k=int(ks[int(np.argmax(s))]), top=int(np.argmax(s)))
    else:
        thr = s.min() + level * span
        out.update(branch='knee', k=int(ks[np.argmax(s >= thr)]), thr=thr)
    return out


def rule_knee(sw, lo=2, hi=20, previous=None, level=LEVEL, fall=FALL, keep=KEEP):
    """The knee of the smoothed silhouette curve, without the floor (see rule_knee_floor)."""
    p = knee_parts(sw, lo, hi, level, fall)
    ks, s = p['ks'], p['s']
    if previous is None or previous not in ks or p['branch'] in ('clear', 'flat'):
        return p['k']
    i = list(ks).index(previous)
    if p['branch'] == 'knee':
        # kept while it lies between the first k reaching level - keep and level + keep
        first = lambda x: int(ks[np.argmax(s >= s.min() + min(x, 1.0) * p['span'])])
        return previous if first(level - keep) <= previous <= first(level + keep) else p['k']
    if p['branch'] == 'peak':
        # kept while its smoothed silhouette is within keep of the rise below the top
        return previous if s[p['top']] - s[i] <= keep * p['span'] else p['k']
    # fall: kept while it is still in the dip, after the early peak, within keep of its bottom
    peak = int(np.argmax(s[:p['m']]))
    return previous if i > peak and s[i] - s[p['m']] <= keep * p['after'] else p['k']


def rule_saturation(sw, lo=2, hi=20, previous=None, level=LEVEL):
    """The knee branch alone (no early-fall branch)."""
    return rule_knee(sw, lo, hi, fall=float('inf'), level=level)


def rule_flat_prior(sw, lo=2, hi=20, previous=None, w=0.02, b=0.25, kref=8.0):
    """Runner-up family: silhouette - w |ln(k / k0)|, k0 = kref (n / 5000)^b."""
    return rule_current(sw, lo, hi, previous, w=w, k0=kref * (sw['n'] / 5000) ** b)


RULES = {
    'current': rule_current,
    'sil_max': rule_sil_max,
    'knee': rule_knee,
    'saturation': rule_saturation,
    'flat_prior': rule_flat_prior,
}


# ----------------------------------------------------------------------------------------------
# Judging
# ----------------------------------------------------------------------------------------------
def load_all(root, variants=('base', 'seed1', 'drop')):
    data = {}
    for name in SETS:
        for v in variants:
            sp = os.path.join(root, 'res', f'sweep_{name}_{v}.json')
            fp = os.path.join(root, 'res', f'fixed_{name}_{v}.json')
            if not (os.path.exists(sp) and os.path.exists(fp)):
                continue
            sw, fx = json.load(open(sp)), json.load(open(fp))
            sw['V'] = {int(k): r['v'] for k, r in fx.items() if not k.startswith('true:')}
            t = fx.get(f"true:{sw['truek']}")
            sw['Vtrue'] = t['v'] if t else None
            sw['hold'] = bool(SETS[name].get('hold'))
            data[(name, v)] = sw
    return data


def judge(sw, k):
    tk = sw['truek']
    v = sw['V'].get(k)
    ratio = v / sw['Vtrue'] if (v is not None and sw['Vtrue']) else float('nan')
    within = tk / 1.5 <= k <= 1.5 * tk
    return dict(k=k, within=within, ratio=ratio, both=within and ratio >= 0.9)


def table(data, rule, hi=20, variants=('base', 'seed1', 'drop')):
    """Markdown rows: set, n, true k, then k / V ratio / verdict per variant."""
    lines = [f"| set | docs | true k | " + ' | '.join(f'{v}: k, V/V(true)' for v in variants) + ' |',
             '|---|---|---|' + '---|' * len(variants)]
    tot = {v: [0, 0] for v in variants}
    for name in SETS:
        cells = []
        base = data.get((name, 'base'))
        if not base:
            continue
        for v in variants:
            sw = data.get((name, v))
            if not sw:
                cells.append('–')
                continue
            j = judge(sw, rule(sw, 2, hi))
            tot[v][0] += j['both']
            tot[v][1] += 1
            mark = 'ok' if j['both'] else ('**k out**' if not j['within'] else '**V low**')
            cells.append(f"{j['k']}, {j['ratio']:.2f} {mark}")
        hold = ' (held out)' if SETS[name].get('hold') else ''
        chk = ' (check)' if name in CHECK_SETS else ''
        lines.append(f"| {name}{chk}{hold} | {base['n']:,} | {base['truek']} | " + ' | '.join(cells) + ' |')
    lines.append('| both conditions | | | ' + ' | '.join(f'{a}/{b}' for a, b in tot.values()) + ' |')
    return '\n'.join(lines)


def cmd_score(a):
    data = load_all(a.root)
    for name in (a.rules.split(',') if a.rules else RULES):
        print(f'\n### {name} (k = 2..{a.hi})\n')
        print(table(data, RULES[name], a.hi))


def cmd_curves(a):
    sw = load_all(a.root)[(a.set, a.variant)]
    p = knee_parts(sw, 2, a.hi)
    print(f"{a.set} {a.variant}: n {sw['n']}, true k {sw['truek']}, V(true) {sw['Vtrue']:.3f}; "
          f"knee rule: branch {p['branch']}, k {p['k']}")
    for i, k in enumerate(sw['ks']):
        sm = f"{p['s'][i]:.4f}" if i < len(p['s']) else ''
        print(f"{k:3d} sil {sw['sil'][i]:.4f} smoothed {sm:7s} V {sw['V'].get(k, float('nan')):.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    for n in ('panel', 'collect', 'score', 'curves', 'grid', 'keep', 'edges'):
        p = sub.add_parser(n)
        p.add_argument('--root', default=os.environ.get('AUTOK_DIR', '/tmp/autok'))
        p.add_argument('--corpora', default=os.environ.get('CORPORA', '../shared/corpora'))
        p.add_argument('--hi', type=int, default=20, help='top of the range the rules choose in')
        if n == 'collect':
            p.add_argument('--bin', required=True, help='the topicmap binary (a copy: not target/)')
            p.add_argument('--k-max', type=int, default=30)
            p.add_argument('--sets', default='')
            p.add_argument('--variants', default='base,seed1,drop')
        if n == 'score':
            p.add_argument('--rules', default='')
        if n == 'grid':
            p.add_argument('--top', type=int, default=15)
        if n == 'keep':
            p.add_argument('--rule', default='knee_floor')
        if n == 'curves':
            p.add_argument('set')
            p.add_argument('variant', nargs='?', default='base')
    a = ap.parse_args()
    dict(panel=cmd_panel, collect=cmd_collect, score=cmd_score, curves=cmd_curves, grid=cmd_grid,
         keep=cmd_keep, edges=cmd_edges)[a.cmd](a)



def rule_knee_res(sw, lo=2, hi=20, previous=None, combine='max', level=LEVEL, fall=FALL):
    """Variant: the shipped score with its resolution raised to the knee:
    score = silhouette - 0.2 |ln(k / k0)|, k0 = max(sqrt(n) / 10, knee)."""
    kk = knee_parts(sw, lo, hi, level, fall)['k']
    r = math.sqrt(sw['n']) / 10
    k0 = {'max': max(r, kk), 'knee': kk, 'geo': math.sqrt(r * kk)}[combine]
    return rule_current(sw, lo, hi, previous, k0=k0)


def rule_knee_floor(sw, lo=2, hi=20, previous=None, level=LEVEL, fall=FALL, keep=KEEP):
    """RECOMMENDED: rule_knee (knee or fall branch, with their keep-previous bands), never below
    floor(sqrt(n) / 10) topics (the floor capped at the top of the range); a clear peak
    (silhouette >= CLEAR) is taken as it is. In the knee branch the keep band's lower edge is
    at least the floor's."""
    p = knee_parts(sw, lo, hi, level, fall)
    if p['branch'] in ('clear', 'flat'):
        return p['k']
    floor_k = min(math.floor(math.sqrt(sw['n']) / 10), min(hi, max(sw['ks'])))
    if p['branch'] in ('fall', 'peak'):
        return int(max(rule_knee(sw, lo, hi, previous, level, fall, keep), floor_k))
    ks, s, span = p['ks'], p['s'], p['span']
    first = lambda x: int(ks[np.argmax(s >= s.min() + min(x, 1.0) * span)])
    if previous is not None and lo <= previous <= min(hi, max(sw['ks'])):
        if max(first(level - keep), floor_k) <= previous <= max(first(level + keep), floor_k):
            return int(previous)
    return int(max(p['k'], floor_k))


def rule_topicmap(sw, lo=2, hi=20, previous=None):
    """The binary's own pick in the collected sweep (its k-max is the sweep's, 30 by default):
    replaying rule_knee_floor at that range must give the same k (`score --rules
    topicmap,knee_floor --hi 30`)."""
    return sw['chosen_topicmap']


RULES['knee_res'] = rule_knee_res
RULES['knee_floor'] = rule_knee_floor
RULES['topicmap'] = rule_topicmap


def cmd_grid(a):
    """Choose LEVEL and FALL on the sets not held out (all variants), report the held-out ones."""
    data = load_all(a.root)
    rows = []
    for level in (0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8):
        for fall in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, float('inf')):
            fit = held = nfit = nheld = 0
            for (name, v), sw in data.items():
                ok = judge(sw, rule_knee_floor(sw, 2, a.hi, level=level, fall=fall))['both']
                if sw['hold']:
                    held += ok; nheld += 1
                else:
                    fit += ok; nfit += 1
            rows.append((fit, level, fall, held, nfit, nheld))
    rows.sort(key=lambda r: (-r[0], abs(r[1] - 0.6), r[2]))
    print('| level | fall | both, fitting sets | both, held-out sets |\n|---|---|---|---|')
    for fit, level, fall, held, nfit, nheld in rows[:a.top]:
        print(f'| {level} | {fall} | {fit}/{nfit} | {held}/{nheld} |')


def cmd_keep(a):
    """Scheduled rerun: the drop variant (7% fewer documents) run after the base, and the base
    (7.5% more) after the drop variant, each naming the other's k as the previous one."""
    data = load_all(a.root)
    rule = RULES[a.rule]
    print('| set | k base | k drop | drop after base | base after drop |\n|---|---|---|---|---|')
    for name in SETS:
        b, d = data.get((name, 'base')), data.get((name, 'drop'))
        if not (b and d):
            continue
        kb, kd = rule(b, 2, a.hi), rule(d, 2, a.hi)
        d2, b2 = rule(d, 2, a.hi, previous=kb), rule(b, 2, a.hi, previous=kd)
        print(f'| {name} | {kb} | {kd} | {d2}{" (kept)" if d2 == kb != kd else ""} | '
              f'{b2}{" (kept)" if b2 == kd != kb else ""} |')


def cmd_edges(a):
    """How often each rule picks the bottom (2) or the top of the range, for k-max 20 and 30."""
    data = load_all(a.root)
    for hi in (20, 30):
        for name, rule in RULES.items():
            ks = [rule(sw, 2, hi) for sw in data.values()]
            print(f'k-max {hi} {name:11s}: k=2 {sum(k == 2 for k in ks):2d}, k={hi} {sum(k == hi for k in ks):2d} '
                  f'of {len(ks)}; picks {sorted(ks)}')


if __name__ == '__main__':
    main()
