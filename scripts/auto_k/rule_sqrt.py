"""The shipped rule (src/cluster/auto_k.rs) on the surrogate sweeps of sweep.py:
score(k) = silhouette(k) - 0.2 * |ln(k / k0)|, k0 = sqrt(n) / 10, over k = 2..20.
Prints, per variant, the sets where both conditions hold (k within 1.5x of the true number of
classes and V >= 0.9 V at the true k), those of the acceptance check, and each set's pick."""
import json, math, os
AUTOK = os.environ.get('AUTOK_DIR', '/tmp/autok')  # scratch folder: data/ and res/
SETS = ['ng4', 'ng8', 'ngtop6', 'ng20', 'thuc5', 'thuc10', 'arxiv5']
ACC = {'ng4', 'ng20', 'thuc10'}
for variant in ('base', 'seed1', 'drop10'):
    row, both, acc = [], 0, 0
    for s in SETS:
        r = json.load(open(f'{AUTOK}/res/{s}_{variant}.json'))
        k0 = math.sqrt(r['n']) / 10
        scored = [(sil - 0.2 * abs(math.log(k / k0)), -k) for k, sil in zip(r['ks'], r['sil']) if k <= 20]
        k = -max(scored)[1]
        v = r['V'][r['ks'].index(k)] / r['V_true10']
        ok = r['ktrue'] / 1.5 <= k <= 1.5 * r['ktrue'] and v >= 0.9
        both += ok
        acc += ok and s in ACC
        row.append(f"{s} {k}{'' if ok else ' (no)'} V x{v:.2f}")
    print(f"{variant}: both on {both}/7, acceptance {acc}/3; " + '; '.join(row))
