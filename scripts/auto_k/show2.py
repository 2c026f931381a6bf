import sys, json, numpy as np
from rules import load
for s in sys.argv[1:]:
    r = load(s, 'base'); e = json.load(open(f'res/{s}_base_extra_2000_5.json'))
    ks = np.arange(2, 31); lr = np.log(np.array(e['refW'])); mr = lr.mean(0); sd = lr.std(0)*np.sqrt(1+1/5)
    gs = mr - np.log(e['datW']); gf = mr - np.log(e['datWf'])
    lw = np.log(r['inertia'])
    print(s, 'ktrue', r['ktrue'])
    print(' k  V     gapSub gapFull  sd    dgapF   slopeD  slopeR  ratio  nest  ariN')
    for i,k in enumerate(ks):
        if 0 < i < len(ks)-1:
            sD = -(lw[i+1]-lw[i-1])/(np.log(k+1)-np.log(k-1)); sR = -(mr[i+1]-mr[i-1])/(np.log(k+1)-np.log(k-1))
        else: sD = sR = np.nan
        dg = gf[i]-gf[i-1] if i else np.nan
        nst = e['nest'][i] if i < len(e['nest']) else np.nan; an = e['ari_next'][i] if i < len(e['ari_next']) else np.nan
        print(f"{k:2d} {r['V'][i]:.3f} {gs[i]:.4f} {gf[i]:.4f} {sd[i]:.4f} {dg:.4f} {sD:.4f} {sR:.4f} {sD/sR:.2f} {nst:.3f} {an:.3f}")
