import sys, json, numpy as np
import rules as R
from rules import SETS, ACC, load

def ex(r):
    return json.load(open(f"res/{r['name']}_{r['variant']}_extra_2000_5.json"))

def gapT(which, c=1.0):
    def f(r, K):
        e = ex(r); lr = np.log(np.array(e['refW']))[:, :K-1]
        g = lr.mean(0) - np.log(np.array(e[which])[:K-1]); s = lr.std(0)*np.sqrt(1+1/lr.shape[0])
        for i in range(K-2):
            if g[i] >= g[i+1] - c*s[i+1]: return i+2
        return K
    return f
def median_of(*fs):
    def f(r, K): return int(round(np.median([g(r, K) for g in fs])))
    return f
def geomean_of(*fs):
    def f(r, K): return int(round(np.exp(np.mean([np.log(g(r, K)) for g in fs]))))
    return f

NEW = {
 'gap Tib B5 M2000 sub fit': gapT('datW'),
 'gap Tib B5 M2000 full-fit W': gapT('datWf'),
 'gap Tib B5 M2000 sub fit, 2se': gapT('datW', 2.0),
 'median(gapTib-norm, KL, NPMIxdiv)': median_of(R.gap_tib('norm', False), R.kl, R.npmi_div),
 'median(kneedle, stab, NPMIxdiv)': median_of(R.kneedle, R.stab_max, R.npmi_div),
 'geomean(sil max, stab max)': geomean_of(R.sil_max, R.stab_max),
 'geomean(sil max, CH max)': geomean_of(R.sil_max, R.ch_max),
 'geomean(sil, stab, NPMIxdiv)': geomean_of(R.sil_max, R.stab_max, R.npmi_div),
}
ALL = dict(R.RULES); ALL.update(NEW)

def table(rulesd, K, variants=('base','seed1','drop10')):
    out = []
    for nm, f in rulesd.items():
        per = []
        for s in SETS:
            ks = []
            for v in variants:
                try: r = load(s, v); ks.append((f(r, K), r))
                except FileNotFoundError: ks.append(None)
            per.append((s, ks))
        out.append((nm, per))
    return out

def summarize(out):
    lines = []
    for nm, per in out:
        within = vok = both = acc = same = tot = 0; cells = []
        for s, ks in per:
            k, r = ks[0]; kt = r['ktrue']; w = kt/1.5 <= k <= 1.5*kt; vr = r['V'][k-2]/r['V_true10']
            within += w; vok += vr >= 0.9; both += w and vr >= 0.9
            if s in ACC: acc += w and vr >= 0.9
            others = [x[0] for x in ks[1:] if x is not None]
            same += sum(o == k for o in others); tot += len(others)
            cells.append(f"{s}:{k}{'' if w else '*'}({vr:.2f})[{'/'.join(map(str, others))}]")
        lines.append((both, acc, nm, f"{nm:36s} within {within}/7 V>=0.9 {vok}/7 both {both}/7 acc {acc}/3 same-k {same}/{tot} | " + ' '.join(cells)))
    return lines

if __name__ == '__main__':
    K = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    for l in sorted(summarize(table(ALL, K)), key=lambda x: (-x[0], -x[1])): print(l[3])
