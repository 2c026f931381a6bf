"""Sweep k=2..KMAX on one set/variant; save per-k curves of many criteria.
usage: sweep.py NAME VARIANT   (VARIANT: base | seed1 | drop10)
"""
import os
AUTOK = os.environ.get('AUTOK_DIR', '/tmp/autok')  # scratch folder: data/ and res/
import os, sys, time, json
import numpy as np
from sklearn.cluster import KMeans
from sklearn.metrics import (silhouette_samples, calinski_harabasz_score,
                             davies_bouldin_score, v_measure_score, adjusted_rand_score)
from sklearn.metrics.pairwise import euclidean_distances

name, variant = sys.argv[1], sys.argv[2]
KMIN, KMAX = 2, 30
D = AUTOK + '/data/'
X = np.load(D + f'{name}_X.npy'); y = np.load(D + f'{name}_y.npy')
docs = np.load(D + f'{name}_docs.npy', allow_pickle=True)
seed = 1 if variant == 'seed1' else 0
if variant == 'drop10':
    keep = np.sort(np.random.default_rng(7).choice(len(X), int(0.9 * len(X)), replace=False))
    X, y, docs = X[keep], y[keep], docs[keep]
n, d = X.shape
ktrue = len(np.unique(y))
rng = np.random.default_rng(1000 + seed)
T = {}
def tick(key, t0):
    T[key] = T.get(key, 0.0) + time.time() - t0

def km(Z, k, n_init, rs):
    return KMeans(k, n_init=n_init, random_state=rs, algorithm='lloyd', max_iter=300, tol=1e-4).fit(Z)

# reference cost: one k-means fit (1 restart) at true k on the full set
t0 = time.time(); km(X, ktrue, 1, seed); T['one_fit'] = time.time() - t0
t0 = time.time(); V_true10 = v_measure_score(y, km(X, ktrue, 10, seed).labels_); T['fit10'] = time.time() - t0

ks = list(range(KMIN, KMAX + 1))
inertia, V, ARI, labels, cents, sizes = [], [], [], [], [], []
t0 = time.time()
for k in ks:
    m = km(X, k, 2, seed)
    inertia.append(float(m.inertia_)); labels.append(m.labels_.astype(np.int16))
    cents.append(m.cluster_centers_); sizes.append(np.bincount(m.labels_, minlength=k))
T['sweep'] = time.time() - t0
for L in labels:
    V.append(float(v_measure_score(y, L))); ARI.append(float(adjusted_rand_score(y, L)))

# silhouette on a fixed sample of 5000 rows (euclidean on unit vectors, and cosine)
S = np.sort(rng.choice(n, min(n, 5000), replace=False))
t0 = time.time()
DS = euclidean_distances(X[S], squared=False)
sil, sil_cos = [], []
for L in labels:
    sil.append(float(silhouette_samples(DS, L[S], metric='precomputed').mean()))
tick('sil', t0)
t0 = time.time()
DC = 1.0 - X[S] @ X[S].T; np.clip(DC, 0, None, out=DC); np.fill_diagonal(DC, 0)
for L in labels:
    sil_cos.append(float(silhouette_samples(DC, L[S], metric='precomputed').mean()))
tick('sil_cos', t0)
del DC
t0 = time.time(); ch = [float(calinski_harabasz_score(X, L)) for L in labels]; tick('ch', t0)
t0 = time.time(); db = [float(davies_bouldin_score(X, L)) for L in labels]; tick('db', t0)

# ---- null reference: permute each column independently (subsample m rows), B refs ----
B, MREF = 3, 1000
R = np.sort(rng.choice(n, min(n, MREF), replace=False))
XR = X[R]
refW = {'raw': np.zeros((B, len(ks))), 'norm': np.zeros((B, len(ks)))}
refsil = {'raw': np.zeros((B, len(ks))), 'norm': np.zeros((B, len(ks)))}
datW_sub = np.zeros(len(ks))   # data inertia on the same subsample (fresh fit, 1 restart)
datsil_sub = np.zeros(len(ks))
t0 = time.time()
for j, k in enumerate(ks):
    m = km(XR, k, 1, seed)
    datW_sub[j] = m.inertia_
tick('gap_datasub', t0)
for kind in ('raw', 'norm'):
    t0 = time.time()
    for b in range(B):
        rb = np.random.default_rng(50 + b + 100 * seed)
        Z = np.column_stack([rb.permutation(XR[:, c]) for c in range(d)])
        if kind == 'norm':
            Z = Z / np.linalg.norm(Z, axis=1, keepdims=True)
        DZ = euclidean_distances(Z)
        for j, k in enumerate(ks):
            m = km(Z, k, 1, seed)
            refW[kind][b, j] = m.inertia_
            refsil[kind][b, j] = silhouette_samples(DZ, m.labels_, metric='precomputed').mean()
    tick('ref_' + kind, t0)
# silhouette of the full-data labelling restricted to the reference subsample rows (for silgap at same n)
DR = euclidean_distances(XR)
for j, L in enumerate(labels):
    datsil_sub[j] = silhouette_samples(DR, L[R], metric='precomputed').mean() if len(np.unique(L[R])) > 1 else 0

# ---- prediction strength & stability on two halves (each up to 2500 rows) ----
t0 = time.time()
perm = rng.permutation(n); h = min(n // 2, 2500)
A, Bh = perm[:h], perm[h:2 * h]
E = perm[:min(n, 3000)]  # eval set for stability
ps, stab = [], []
for k in ks:
    ma = km(X[A], k, 1, seed); mb = km(X[Bh], k, 1, seed + 1)
    # prediction strength: cluster B by its own fit; co-membership under A's centroids
    lb = mb.labels_; la_on_b = ma.predict(X[Bh])
    vals = []
    for c in range(k):
        idx = np.where(lb == c)[0]
        nc = len(idx)
        if nc < 2:
            continue
        cnt = np.bincount(la_on_b[idx], minlength=k)
        vals.append((cnt * (cnt - 1)).sum() / (nc * (nc - 1)))
    ps.append(float(min(vals)) if vals else 0.0)
    stab.append(float(adjusted_rand_score(ma.predict(X[E]), mb.predict(X[E]))))
tick('halves', t0)

# ---- Ward merges of the centroids of the k=KMAX and k=20 sweeps ----
def ward_merges(C, s):
    C = [c.copy() for c in C]; s = [float(v) for v in s]; alive = list(range(len(C)))
    costs = {}  # costs[k] = cost of going from k clusters to k-1
    while len(alive) > 1:
        best = None
        for i in range(len(alive)):
            for j in range(i + 1, len(alive)):
                a, b = alive[i], alive[j]
                c = s[a] * s[b] / (s[a] + s[b]) * float(((C[a] - C[b]) ** 2).sum())
                if best is None or c < best[0]:
                    best = (c, a, b)
        c, a, b = best
        costs[len(alive)] = c
        C[a] = (s[a] * C[a] + s[b] * C[b]) / (s[a] + s[b]); s[a] += s[b]
        alive.remove(b)
    return [costs[k] for k in range(2, len(C) + 1)]
t0 = time.time()
ward30 = ward_merges(cents[-1], sizes[-1]); ward20 = ward_merges(cents[ks.index(20)], sizes[ks.index(20)])
tick('ward', t0)

# ---- topic coherence (NPMI of top-10 c-TF-IDF words, doc co-occurrence on <=5000 docs) x diversity ----
t0 = time.time()
vocab_n = max((int(a.max()) for a in docs if len(a)), default=0) + 1
from scipy.sparse import csr_matrix
indptr = np.cumsum([0] + [len(a) for a in docs]); ind = np.concatenate(docs)
M = csr_matrix((np.ones(len(ind), dtype=np.float32), ind, indptr), shape=(len(docs), vocab_n))
Ms = M[S]
df_all = np.asarray(Ms.sum(0)).ravel()
ns = Ms.shape[0]
npmi, div = [], []
for k, L in zip(ks, labels):
    # c-TF-IDF (BERTopic): tf_{t,c} * log(1 + avg_words_per_class / f_t)
    onehot = csr_matrix((np.ones(n), (L, np.arange(n))), shape=(k, n))
    tfc = np.asarray((onehot @ M).todense())
    ft = tfc.sum(0) + 1e-9
    avg = tfc.sum() / k
    ctf = (tfc / np.maximum(tfc.sum(1, keepdims=True), 1)) * np.log1p(avg / ft)
    tops = np.argsort(-ctf, axis=1)[:, :10]
    allw = np.unique(tops)
    sub = Ms[:, allw].T.tocsr()
    co = np.asarray((sub @ sub.T).todense())
    p = df_all[allw] / ns
    pos = {w: i for i, w in enumerate(allw)}
    sc = []
    for c in range(k):
        ii = [pos[w] for w in tops[c]]
        vals = []
        for a in range(10):
            for b in range(a + 1, 10):
                pab = co[ii[a], ii[b]] / ns
                pa, pb = p[ii[a]], p[ii[b]]
                if pab <= 0 or pa <= 0 or pb <= 0:
                    vals.append(-1.0)
                else:
                    vals.append(np.log(pab / (pa * pb)) / -np.log(pab) if pab < 1 else 1.0)
        sc.append(np.mean(vals))
    npmi.append(float(np.average(sc, weights=np.bincount(L, minlength=k))))
    div.append(float(len(allw) / (10 * k)))
tick('npmi', t0)

out = dict(name=name, variant=variant, n=n, d=d, ktrue=ktrue, ks=ks, V=V, ARI=ARI, V_true10=float(V_true10),
           inertia=inertia, sil=sil, sil_cos=sil_cos, ch=ch, db=db,
           datW_sub=datW_sub.tolist(), datsil_sub=datsil_sub.tolist(), mref=len(R),
           refW_raw=refW['raw'].tolist(), refW_norm=refW['norm'].tolist(),
           refsil_raw=refsil['raw'].tolist(), refsil_norm=refsil['norm'].tolist(),
           ps=ps, stab=stab, ward30=ward30, ward20=ward20, npmi=npmi, div=div,
           sizes=[s.tolist() for s in sizes], T=T)
os.makedirs(AUTOK + '/res', exist_ok=True)
json.dump(out, open(f'{AUTOK}/res/{name}_{variant}.json', 'w'))
np.savez_compressed(f'{AUTOK}/res/{name}_{variant}_fits.npz', labels=np.array(labels),
                    **{f'c{k}': c for k, c in zip(ks, cents)})
print(name, variant, 'n', n, 'ktrue', ktrue, 'Vtrue10 %.3f' % V_true10, {k: round(v, 1) for k, v in T.items()}, flush=True)
