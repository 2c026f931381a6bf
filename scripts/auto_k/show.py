import sys, numpy as np
from rules import load, _gap
r = load(sys.argv[1], sys.argv[2] if len(sys.argv)>2 else 'base')
print(r['name'], 'n', r['n'], 'ktrue', r['ktrue'], 'Vtrue10 %.3f'%r['V_true10'])
ks=r['ks']; ksn, gn, sn = _gap(r, 30, 'norm', False); _, gr, sr = _gap(r, 30, 'raw', False)
w=np.array(r['ward30'])
print(' k     V   sil  silrefN silgapN  gapN   gapR  ps   stab  npmi  div  ward30  wjump')
for i,k in enumerate(ks):
    wj = w[k-2]/w[k-1] if k-1 < len(w) else np.nan
    print(f"{k:2d} {r['V'][i]:.3f} {r['sil'][i]:.3f} {r['refsil_norm'][:,i].mean():.3f} {r['sil'][i]-r['refsil_norm'][:,i].mean():.3f} {gn[i]:.3f} {gr[i]:.3f} {r['ps'][i]:.2f} {r['stab'][i]:.2f} {r['npmi'][i]:.3f} {r['div'][i]:.2f} {w[k-2]:.1f} {wj:.2f}")
