import os
AUTOK = os.environ.get('AUTOK_DIR', '/tmp/autok')  # scratch folder: data/ and res/
import json, glob, sys
import numpy as np

SETS = ['ng4', 'ng8', 'ngtop6', 'ng20', 'thuc5', 'thuc10', 'arxiv5']
ACC = ['ng4', 'ng20', 'thuc10']

def load(name, variant):
    r = json.load(open(f'{AUTOK}/res/{name}_{variant}.json'))
    for key in list(r):
        if isinstance(r[key], list) and key not in ('ks', 'sizes'):
            r[key] = np.array(r[key], dtype=float)
    r['ks'] = np.array(r['ks'])
    return r

def sl(r, kmax, key):
    """values for k = 2..kmax"""
    m = r['ks'] <= kmax
    return r['ks'][m], r[key][..., m] if r[key].ndim > 1 else r[key][m]

def argmax_k(ks, v):
    return int(ks[int(np.nanargmax(v))])

# ---------------- rules: (r, kmax) -> k ----------------
def sil_max(r, K): return argmax_k(*sl(r, K, 'sil'))
def silcos_max(r, K): return argmax_k(*sl(r, K, 'sil_cos'))
def ch_max(r, K): return argmax_k(*sl(r, K, 'ch'))
def db_min(r, K):
    ks, v = sl(r, K, 'db'); return argmax_k(ks, -v)

def _gap(r, K, kind, full):
    ks, Wr = sl(r, K, 'refW_' + kind)
    lr = np.log(Wr)
    if full:
        _, W = sl(r, K, 'inertia'); ld = np.log(W / r['n'] * r['mref'])
    else:
        _, W = sl(r, K, 'datW_sub'); ld = np.log(W)
    g = lr.mean(0) - ld
    s = lr.std(0) * np.sqrt(1 + 1 / lr.shape[0])
    return ks, g, s
def gap_tib(kind, full):
    def f(r, K):
        ks, g, s = _gap(r, K, kind, full)
        for i in range(len(ks) - 1):
            if g[i] >= g[i + 1] - s[i + 1]:
                return int(ks[i])
        return int(ks[-1])
    return f
def gap_max(kind, full):
    def f(r, K):
        ks, g, s = _gap(r, K, kind, full); return argmax_k(ks, g)
    return f

def silgap(kind, which):
    def f(r, K):
        ks, rs = sl(r, K, 'refsil_' + kind)
        _, sd = sl(r, K, which)
        return argmax_k(ks, sd - rs.mean(0))
    return f
def silratio(kind):
    def f(r, K):
        ks, rs = sl(r, K, 'refsil_' + kind); _, sd = sl(r, K, 'sil')
        return argmax_k(ks, sd / rs.mean(0))
    return f

def kneedle(r, K):
    ks, W = sl(r, K, 'inertia')
    x = (ks - ks[0]) / (ks[-1] - ks[0]); yv = (W[0] - W) / (W[0] - W[-1])
    return argmax_k(ks, yv - x)

def _bic(r, K, pen):
    ks, W = sl(r, K, 'inertia'); n, d = r['n'], r['d']
    out = []
    for k, w in zip(ks, W):
        sizes = np.array(r['sizes'][k - 2], dtype=float)
        var = w / (d * (n - k))
        ll = (sizes * np.log(np.maximum(sizes, 1) / n)).sum() - n * d / 2 * np.log(2 * np.pi * var) - d * (n - k) / 2
        p = (k - 1) + k * d + 1
        out.append(ll - (p / 2 * np.log(n) if pen == 'bic' else p))
    return ks, np.array(out)
def bic(r, K): return argmax_k(*_bic(r, K, 'bic'))
def aic(r, K): return argmax_k(*_bic(r, K, 'aic'))

def hartigan(r, K):
    ks, W = sl(r, K, 'inertia'); n = r['n']
    for i in range(len(ks) - 1):
        if (W[i] / W[i + 1] - 1) * (n - ks[i] - 1) <= 10:
            return int(ks[i])
    return int(ks[-1])
def kl(r, K):
    ks, W = sl(r, K, 'inertia'); p = r['d']
    # need W_{k-1}: inertia at k=1 = n - |sum x|^2/n; approximate with total SS (unit rows): n - n*|mean|^2; not stored -> start at k=3
    diff = {ks[i]: (ks[i] - 1) ** (2 / p) * W[i - 1] - ks[i] ** (2 / p) * W[i] for i in range(1, len(ks))}
    best, bk = -1, int(ks[0])
    for k in ks[1:-1]:
        v = abs(diff[k] / diff[k + 1]) if diff[k + 1] != 0 else 0
        if v > best: best, bk = v, int(k)
    return bk

def ward_jump(src):
    def f(r, K):
        c = np.array(r[src])  # c[k-2] = cost k->k-1
        kk = np.arange(2, len(c) + 2)
        best, bk = -1, 2
        for k in range(2, min(K, len(c) + 1)):
            v = c[k - 2] / c[k - 1]
            if v > best: best, bk = v, k
        return bk
    return f

def ps_rule(th):
    def f(r, K):
        ks, v = sl(r, K, 'ps')
        ok = ks[v >= th]
        return int(ok.max()) if len(ok) else 2
    return f
def stab_max(r, K): return argmax_k(*sl(r, K, 'stab'))
def npmi_div(r, K):
    ks, a = sl(r, K, 'npmi'); _, b = sl(r, K, 'div'); return argmax_k(ks, a * b)
def npmi_max(r, K): return argmax_k(*sl(r, K, 'npmi'))

RULES = {
    'silhouette max (baseline)': sil_max,
    'silhouette cosine max': silcos_max,
    'Calinski-Harabasz max': ch_max,
    'Davies-Bouldin min': db_min,
    'gap Tibshirani (ref raw, sub fit)': gap_tib('raw', False),
    'gap Tibshirani (ref norm, sub fit)': gap_tib('norm', False),
    'gap Tibshirani (ref norm, full W)': gap_tib('norm', True),
    'gap max (ref norm, full W)': gap_max('norm', True),
    'gap max (ref raw, sub fit)': gap_max('raw', False),
    'silhouette gap (ref norm)': silgap('norm', 'sil'),
    'silhouette gap (ref raw)': silgap('raw', 'sil'),
    'silhouette gap (ref norm, same rows)': silgap('norm', 'datsil_sub'),
    'silhouette ratio (ref norm)': silratio('norm'),
    'kneedle on inertia': kneedle,
    'x-means BIC': bic,
    'AIC': aic,
    'Hartigan (<=10)': hartigan,
    'Krzanowski-Lai': kl,
    'Ward jump on k=30 centroids': ward_jump('ward30'),
    'Ward jump on k=20 centroids': ward_jump('ward20'),
    'prediction strength >=0.8': ps_rule(0.8),
    'prediction strength >=0.6': ps_rule(0.6),
    'stability ARI max': stab_max,
    'NPMI x diversity max': npmi_div,
    'NPMI max': npmi_max,
}

def evaluate(rule, K, sets=SETS, variant='base'):
    rows = []
    for s in sets:
        try:
            r = load(s, variant)
        except FileNotFoundError:
            continue
        k = rule(r, K); kt = r['ktrue']
        within = kt / 1.5 <= k <= kt * 1.5
        vr = r['V'][k - 2] / r['V_true10']
        rows.append(dict(set=s, ktrue=kt, k=k, within=within, vr=vr, vok=vr >= 0.9))
    return rows

if __name__ == '__main__':
    K = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    for nm, f in RULES.items():
        rows = evaluate(f, K)
        ks = ' '.join(f"{x['set']}:{x['k']}{'' if x['within'] else '*'}/{x['vr']:.2f}" for x in rows)
        print(f"{nm:40s} within {sum(x['within'] for x in rows)}/{len(rows)} Vok {sum(x['vok'] for x in rows)} both {sum(x['within'] and x['vok'] for x in rows)} | {ks}")
