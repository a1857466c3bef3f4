#!/usr/bin/env python3
# CPU per sync and peak memory from run.sh's (or defaults.sh's) samples
# (unix_s cpu_ticks rss_kB hwm_kB reconciliations [user_ticks system_ticks]).
# By default from the second full pass of the HPAs (--hpas N, default
# 10,000) to the last sample;
# with --built W, over the 60 s that start W seconds after defaults.sh's
# "built" mark (the load's measured minute, to the nearest samples).
# Where run.sh marked the start of the load's deletion of its HPAs, the
# peak while they existed is given apart.
import sys
lines=[l.split() for l in open(sys.argv[1])]
rows=[list(map(int,l)) for l in lines if len(l) in (5,7)]
if '--built' in sys.argv:
    warmup=int(sys.argv[sys.argv.index('--built')+1])
    built=next(int(l[1]) for l in lines if l and l[0]=='built')
    start=built+warmup
    a=min(rows, key=lambda r: abs(r[0]-start))
    b=min(rows, key=lambda r: abs(r[0]-(start+60)))
    what=f"the measured minute ({b[0]-a[0]} s sampled)"
else:
    def first(n): return next(r for r in rows if r[4]>=n)
    top=max(r[4] for r in rows)
    hpas=int(sys.argv[sys.argv.index('--hpas')+1]) if '--hpas' in sys.argv else 10000
    a,b=first(2*hpas),first(top)
    what=f"from the 2nd to the last full pass: {b[0]-a[0]} s"
syncs=b[4]-a[4]; cpu=(b[1]-a[1])/100
peak=f"peak RSS {max(r[3] for r in rows)/1024:.0f} MiB"
# run.sh marks when the load starts deleting its HPAs (seen within 1 s):
# the peak while they all existed, and the peak with their deletion.
deleting=next((int(l[1]) for l in lines if l and l[0]=='deleting'), None)
before=[r for r in rows if deleting is not None and r[0] < deleting-1]
if before:
    peak=f"peak RSS {max(r[3] for r in before)/1024:.0f} MiB while the HPAs existed, {max(r[3] for r in rows)/1024:.0f} MiB with their deletion"
print(f"{what}, {syncs} syncs, {cpu:.1f} s CPU, {1000*cpu/syncs:.3f} ms CPU/sync; {peak}")
if len(a)==7 and len(b)==7:
    user,system=(b[5]-a[5])/100,(b[6]-a[6])/100
    print(f"of which user {1000*user/syncs:.3f} ms/sync, system (kernel) {1000*system/syncs:.3f} ms/sync")
