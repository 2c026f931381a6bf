import sys, json, numpy as np
from sklearn.metrics import silhouette_samples
from sklearn.metrics.pairwise import euclidean_distances
name, variant = sys.argv[1], sys.argv[2]
X = np.load(f'data/{name}_X.npy'); seed = 1 if variant == 'seed1' else 0
if variant == 'drop10':
    keep = np.sort(np.random.default_rng(7).choice(len(X), int(0.9*len(X)), replace=False)); X = X[keep]
n = len(X); rng = np.random.default_rng(1000 + seed)
S = np.sort(rng.choice(n, min(n, 5000), replace=False))  # same sample as sweep.py
labels = np.load(f'res/{name}_{variant}_fits.npz')['labels']
DS = euclidean_distances(X[S])
out = dict(fneg=[], minc=[], fnegc=[], med=[], q25=[], macro=[])
for L in labels:
    l = L[S]; s = silhouette_samples(DS, l, metric='precomputed')
    cm = np.array([s[l == c].mean() if (l == c).any() else np.nan for c in range(L.max()+1)])
    sz = np.bincount(l, minlength=L.max()+1)
    out['fneg'].append(float((s < 0).mean())); out['minc'].append(float(np.nanmin(cm)))
    out['fnegc'].append(float(sz[cm < 0].sum()/len(l))); out['med'].append(float(np.median(s)))
    out['q25'].append(float(np.quantile(s, .25))); out['macro'].append(float(np.nanmean(cm)))
json.dump(out, open(f'res/{name}_{variant}_silx.json', 'w')); print(name, variant)
