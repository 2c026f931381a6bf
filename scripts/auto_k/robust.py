import sys
from rules import *
K = int(sys.argv[1]) if len(sys.argv) > 1 else 20
for nm, f in RULES.items():
    line = []
    same = tot = 0
    for s in SETS:
        ks = []
        for v in ('base', 'seed1', 'drop10'):
            try: ks.append(f(load(s, v), K))
            except FileNotFoundError: ks.append(None)
        line.append(f"{s}:{'/'.join('-' if k is None else str(k) for k in ks)}")
        for k in ks[1:]:
            if k is not None:
                tot += 1; same += (k == ks[0])
    print(f"{nm:40s} same {same}/{tot} | " + ' '.join(line))
