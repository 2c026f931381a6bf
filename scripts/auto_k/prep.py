import os
AUTOK = os.environ.get('AUTOK_DIR', '/tmp/autok')  # scratch folder: data/ and res/
import csv, re, sys, time, json
import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer, ENGLISH_STOP_WORDS
from sklearn.decomposition import TruncatedSVD
from sklearn.preprocessing import Normalizer
import snowballstemmer

csv.field_size_limit(10**9)
C = os.environ.get('CORPORA', '../shared/corpora') + '/'
stem = snowballstemmer.stemmer('english')
WORD = re.compile(r"[a-z][a-z0-9']*[a-z0-9]|[a-z]")
_cache = {}

def en_tok(text):
    out = []
    for w in WORD.findall(text.lower()):
        w = w.replace("'", "")
        if len(w) < 2 or w in ENGLISH_STOP_WORDS:
            continue
        s = _cache.get(w)
        if s is None:
            s = _cache[w] = stem.stemWord(w)
        out.append(s)
    return out

ZH_STOP = set("的 了 是 在 和 与 及 或 也 都 就 而 被 把 对 为 从 将 让 向 这 那 之 其 于 中 上 下 个 等 着 又 还 我 你 他 她 它 们 有 无 不 没 吗 呢 吧 啊 一 图 组图 说 称 年 月 日".split())
PUNCT = re.compile(r"^[\W_]+$")

def zh_tok(text):
    import jieba
    out = []
    for w in jieba.lcut(text):
        w = w.strip().lower()
        if not w or PUNCT.match(w) or w in ZH_STOP:
            continue
        if w.isascii() and len(w) < 2:
            continue
        out.append(w)
    return out

def vectorize(name, docs, labels, tok):
    t = time.time()
    toks = [tok(d) for d in docs]
    tf = TfidfVectorizer(analyzer=lambda x: x, sublinear_tf=True, smooth_idf=True,
                         max_df=0.5, min_df=2, norm='l2')
    X = tf.fit_transform(toks)
    keep = np.asarray(X.getnnz(axis=1) > 0)
    X = X[keep]; labels = np.asarray(labels)[keep]
    toks = [t_ for t_, k in zip(toks, keep) if k]
    Z = TruncatedSVD(100, random_state=42).fit_transform(X)
    Z = Normalizer().fit_transform(Z).astype(np.float64)
    _, y = np.unique(labels, return_inverse=True)
    np.save(f'{AUTOK}/data/{name}_X.npy', Z)
    np.save(f'{AUTOK}/data/{name}_y.npy', y)
    # keep token lists (vocab ids) for coherence
    vocab = tf.vocabulary_
    ids = [np.array(sorted({vocab[w] for w in tt if w in vocab}), dtype=np.int32) for tt in toks]
    np.save(f'{AUTOK}/data/{name}_docs.npy', np.array(ids, dtype=object), allow_pickle=True)
    inv = [None] * len(vocab)
    for w, i in vocab.items(): inv[i] = w
    json.dump(inv, open(f'{AUTOK}/data/{name}_vocab.json', 'w'), ensure_ascii=False)
    print(name, Z.shape, X.shape[1], 'classes', len(set(y)), np.bincount(y).tolist(), f'{time.time()-t:.1f}s', flush=True)

rng = np.random.default_rng(0)

def read_ng():
    rows = []
    with open(C + '20newsgroups/20news_bydate_clean.csv', newline='', encoding='utf-8') as f:
        for r in csv.DictReader(f):
            if r['text'].strip():
                rows.append((r['text'], r['label']))
    return rows

which = sys.argv[1:] or ['ng', 'thuc', 'arxiv']
if 'ng' in which:
    ng = read_ng()
    print('20NG nonempty', len(ng))
    four = {'alt.atheism', 'talk.religion.misc', 'comp.graphics', 'sci.space'}
    sub = [r for r in ng if r[1] in four]
    vectorize('ng4', [r[0] for r in sub], [r[1] for r in sub], en_tok)
    eight = {'comp.graphics', 'rec.autos', 'rec.sport.hockey', 'sci.med', 'sci.space',
             'talk.politics.mideast', 'soc.religion.christian', 'misc.forsale'}
    sub = [r for r in ng if r[1] in eight]
    vectorize('ng8', [r[0] for r in sub], [r[1] for r in sub], en_tok)
    idx = rng.choice(len(ng), 8000, replace=False)
    sub = [ng[i] for i in idx]
    vectorize('ng20', [r[0] for r in sub], [r[1] for r in sub], en_tok)
    def top(l):
        t = l.split('.')[0]
        return 'religion' if t in ('alt', 'soc') else t
    idx = rng.choice(len(ng), 8000, replace=False)
    sub = [ng[i] for i in idx]
    vectorize('ngtop6', [r[0] for r in sub], [top(r[1]) for r in sub], en_tok)
if 'thuc' in which:
    import jieba; jieba.setLogLevel(60)
    rows = list(csv.DictReader(open(C + 'thucnews/thucnews_headlines_20k.csv', encoding='utf-8')))
    vectorize('thuc10', [r['title'] for r in rows], [r['category'] for r in rows], zh_tok)
    five = {'finance', 'education', 'sports', 'game', 'realty'}
    sub = [r for r in rows if r['category'] in five]
    vectorize('thuc5', [r['title'] for r in sub], [r['category'] for r in sub], zh_tok)
if 'arxiv' in which:
    rows = list(csv.DictReader(open(C + 'arxiv/arxiv_daily_2025_2026.csv', encoding='utf-8')))
    from collections import Counter
    cnt = Counter(r['primary_category'] for r in rows)
    top5 = {c for c, _ in cnt.most_common(5)}
    print('arxiv top5', cnt.most_common(5))
    sub = [r for r in rows if r['primary_category'] in top5]
    idx = rng.choice(len(sub), 15000, replace=False)
    sub = [sub[i] for i in idx]
    vectorize('arxiv5', [r['title'] + '. ' + r['abstract'] for r in sub], [r['primary_category'] for r in sub], en_tok)
