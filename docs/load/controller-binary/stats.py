#!/usr/bin/env python3
# CPU per sync and peak memory from run.sh's samples (unix_s cpu_ticks rss_kB hwm_kB reconciliations),
# from the second full pass of the HPAs to the last one. Usage: stats.py SAMPLES [HPAS, default 10000]
import sys
# samples: unix_s cpu_ticks rss_kB hwm_kB reconciliations [user_ticks system_ticks]
rows=[list(map(int,l.split())) for l in open(sys.argv[1]) if len(l.split()) in (5,7)]
def first(n): return next(r for r in rows if r[4]>=n)
top=max(r[4] for r in rows)
hpas=int(sys.argv[2]) if len(sys.argv)>2 else 10000
a,b=first(2*hpas),first(top)
syncs=b[4]-a[4]; cpu=(b[2-1]-a[1])/100; secs=b[0]-a[0]
print(f"from the 2nd to the last full pass: {secs} s, {syncs} syncs, {cpu:.1f} s CPU, {1000*cpu/syncs:.3f} ms CPU/sync; peak RSS {max(r[3] for r in rows)/1024:.0f} MiB")
if len(a)==7 and len(b)==7:
    user,system=(b[5]-a[5])/100,(b[6]-a[6])/100
    print(f"of which user {1000*user/syncs:.3f} ms/sync, system (kernel) {1000*system/syncs:.3f} ms/sync")
