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
# control-plane.sh also samples the control plane beside the controller
# (unix_s api_ticks api_rss_kB etcd_ticks etcd_rss_kB harness_ticks
# harness_rss_kB load1): their CPU over the same window, per sync.
import os
plane_file=os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])),'plane.txt')
if os.path.exists(plane_file):
    prow=[list(map(float,l.split())) for l in open(plane_file) if len(l.split())==8]
    pa=min(prow, key=lambda r: abs(r[0]-a[0])); pb=min(prow, key=lambda r: abs(r[0]-b[0]))
    inside=[r for r in prow if pa[0]<=r[0]<=pb[0]]
    parts=[]
    for name,i in (('kube-apiserver',1),('etcd',3),('hpa-harness (fake metrics server, fake node)',5)):
        c=(pb[i]-pa[i])/100
        parts.append(f"{name} {c:.1f} s CPU, {1000*c/syncs:.3f} ms/sync, peak RSS {max(r[i+1] for r in prow)/1024:.0f} MiB")
    print("; ".join(parts))
    print(f"load average (1 min) in the window: {min(r[7] for r in inside):.2f} to {max(r[7] for r in inside):.2f}")
# control-plane.sh keeps the API server's counters at the start and the end
# of the measured window: requests by verb and resource, watch events by
# kind, per sync.
start_file=os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])),'api-start.txt')
end_file=os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])),'api-end.txt')
if os.path.exists(start_file) and os.path.exists(end_file):
    import re
    from collections import Counter
    def counters(path):
        out=Counter()
        for line in open(path):
            m=re.match(r'(\w+)\{(.*)\} (\S+)$', line.strip())
            if not m: continue
            labels=dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
            if m.group(1)=='apiserver_request_total':
                key=('request', labels.get('verb',''), labels.get('group','') or 'core', labels.get('resource','')+('/'+labels['subresource'] if labels.get('subresource') else ''))
            else:
                key=(m.group(1).replace('apiserver_',''), labels.get('group','') or 'core', labels.get('resource','') or labels.get('kind',''))
            out[key]+=float(m.group(3))
        return out
    d=counters(end_file); d.subtract(counters(start_file))
    window=[int(l.split()[1]) for l in open(plane_file) if l.split() and l.split()[0] in ('window','window-end')]
    seconds=window[1]-window[0] if len(window)==2 else 60
    rate=syncs/(b[0]-a[0])
    print(f"the API server in the window ({seconds} s), per second and per sync at {rate:.1f} syncs/s:")
    requests=sorted(((k,v) for k,v in d.items() if k[0]=='request' and v>0), key=lambda kv:-kv[1])
    for key,v in requests[:12]:
        print(f"  {' '.join(key[1:])}: {v/seconds:.2f}/s, {v/seconds/rate:.4f} per sync")
    for metric,what in (('watch_events_total','watch events'),('watch_events_sizes_sum','watch event bytes')):
        rows=sorted(((k,v) for k,v in d.items() if k[0]==metric and v>0), key=lambda kv:-kv[1])
        top=', '.join(f"{k[2]} {v/seconds:.2f}/s" for k,v in rows[:3])
        print(f"  {what}: {sum(v for _,v in rows)/seconds:.2f}/s in all ({top}, ...)")
