#!/usr/bin/env python3
# Where a process's CPU went, from a `perf record -p PID` profile (control-plane.sh
# PERF=1 takes one over the measured window): the share of each group of
# symbols (TLS, HTTP, JSON, the allocator, the kernel, the controller...).
# Release builds keep their symbols, so no debug build is needed; no call
# graphs (no frame pointers): each sample counts for the function it hit.
# Usage: python3 docs/load/controller-binary/profile.py perf.data
import re, subprocess, sys
from collections import Counter
out = subprocess.run(["perf","report","-i",sys.argv[1],"--no-children","-g","none","--sort","dso,symbol","--stdio"],capture_output=True,text=True).stdout
groups = [
 ("TLS (rustls, ring, AES-GCM)", r"rustls|\bring::|aesni|ghash|gcm|chacha|sha256|sha512|_x86_64_AES|aes_hw|bn_mul|p256|ecp_nistz"),
 ("HTTP (hyper, h2, http)", r"hyper|\bh2::|httparse|http::|http_body|tower"),
 ("JSON (serde_json)", r"serde_json|serde_core|serde::"),
 ("watches and client (kube)", r"kube_runtime|kube_client|kube_core"),
 ("compact text (aho-corasick)", r"aho_corasick|compact_text"),
 ("allocator (jemalloc)", r"_rjem|je_|do_rallocx|malloc|free\b|sdallocx"),
 ("memory copy/compare (libc)", r"memmove|memcmp|memset|memchr|memcpy|strlen"),
 ("tokio runtime, timers, mio", r"tokio|mio::|parking_lot|futex"),
 ("controller and core", r"hpa_controller|hpa_core|hpa_sim"),
 ("hash maps", r"hashbrown|sip::Hasher|hash_one|BuildHasher"),
 ("time (jiff, clock_gettime)", r"jiff|clock_gettime|vdso"),
 ("prometheus metrics", r"prometheus"),
]
tot=Counter(); kernel=0
for line in out.splitlines():
    m=re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.*?)\s*$", line)
    if not m: continue
    pct=float(m.group(1)); dso=m.group(2); kind=m.group(3); sym=m.group(4)
    if kind=='k': tot["kernel (syscalls, TCP loopback, scheduling)"]+=pct; continue
    for name,pat in groups:
        if re.search(pat, sym): tot[name]+=pct; break
    else: tot["other ("+dso+")"]+=pct
for k,v in tot.most_common(): print(f"{v:6.1f}%  {k}")
