"""Extra curves from saved fits: bigger gap reference, data sub-fit W with restarts, nestedness, dendrograms.
usage: extra.py NAME VARIANT M B"""
import os
AUTOK = os.environ.get('AUTOK_DIR', '/tmp/autok')  # scratch folder: data/ and res/
import sys, json, time
import numpy as np
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score
from scipy.cluster.hierarchy import linkage

name, variant, M, B = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
D = AUTOK + '/data/'
X = np.load(D + f'{name}_X.npy')
seed = 1 if variant == 'seed1' else 0
if variant == 'drop10':
    keep = np.sort(np.random.default_rng(7).choice(len(X), int(0.9 * len(X)), replace=False)); X = X[keep]
n, d = X.shape
F = np.load(f'{AUTOK}/res/{name}_{variant}_fits.npz')
labels = F['labels']; ks = list(range(2, 31))
rng = np.random.default_rng(777 + seed)
R = np.sort(rng.choice(n, min(n, M), replace=False)); XR = X[R]
T = {}
t0 = time.time()
datW = np.array([KMeans(k, n_init=1, random_state=seed).fit(XR).inertia_ for k in ks])
# inertia of the full-data fit's assignment restricted to the subsample rows (no new fit)
datWf = []
for j, k in enumerate(ks):
    C = F[f'c{k}']; L = labels[j][R]
    datWf.append(float(((XR - C[L]) ** 2).sum()))
T['dat'] = time.time() - t0
t0 = time.time()
refW = np.zeros((B, len(ks)))
for b in range(B):
    rb = np.random.default_rng(5000 + b + 100 * seed)
    Z = np.column_stack([rb.permutation(XR[:, c]) for c in range(d)])
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    for j, k in enumerate(ks):
        refW[b, j] = KMeans(k, n_init=1, random_state=seed).fit(Z).inertia_
T['ref'] = time.time() - t0
# nestedness between consecutive k of the sweep
nest, ari_next = [], []
for j in range(len(ks) - 1):
    a, b = labels[j], labels[j + 1]
    ct = np.zeros((ks[j], ks[j + 1])); np.add.at(ct, (a, b), 1)
    nest.append(float(ct.max(0).sum() / n)); ari_next.append(float(adjusted_rand_score(a, b)))
# dendrogram heights on k=30 centroids (average cosine, ward weighted by size via repeated?)
C30 = F['c30']; C30n = C30 / np.linalg.norm(C30, axis=1, keepdims=True)
avg = linkage(C30n, 'average', metric='cosine')[:, 2].tolist()
cen = linkage(C30n, 'centroid')[:, 2].tolist()
json.dump(dict(M=M, B=B, datW=datW.tolist(), datWf=datWf, refW=refW.tolist(), nest=nest, ari_next=ari_next,
               avg30=avg, T=T), open(f'{AUTOK}/res/{name}_{variant}_extra_{M}_{B}.json', 'w'))
print(name, variant, M, B, T, flush=True)
