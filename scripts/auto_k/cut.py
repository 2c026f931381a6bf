import numpy as np, json
from scipy.cluster.hierarchy import linkage, fcluster
from rules import SETS, load
res = {}
for kmax in (20, 30):
  for method in ('average', 'complete', 'single'):
    print('kmax', kmax, method)
    for h in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        row = []; both = 0; same = 0
        for s in SETS:
            kk = []
            for v in ('base', 'seed1', 'drop10'):
                try: F = np.load(f'res/{s}_{v}_fits.npz')
                except FileNotFoundError: kk.append(None); continue
                C = F[f'c{kmax}']; C = C / np.linalg.norm(C, axis=1, keepdims=True)
                Z = linkage(C, method, metric='cosine')
                kk.append(int(fcluster(Z, h, 'distance').max()))
            r = load(s, 'base'); k = max(kk[0], 2); kt = r['ktrue']
            ok = kt/1.5 <= k <= 1.5*kt and r['V'][k-2] >= 0.9*r['V_true10']
            both += ok
            row.append(f"{s}:{'/'.join(str(x) for x in kk)}{'' if ok else '*'}")
        print(f"  h={h}: both {both}/7  " + ' '.join(row))
