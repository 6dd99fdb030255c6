#!/usr/bin/env python3
"""The gateway's allocations per call by where they are made, before and after, as a Markdown table.

Input: two heaptrack profiles of the load bench, folded by allocation count:

    heaptrack -o before LOAD --scenario max-age --clients 1 --calls 3000 --warmup 0 --audit /dev/shm/DIR
    heaptrack_print -f before.zst --flamegraph-cost-type allocations -F before.folded
    python3 bench/heaptrack_sites.py before.folded after.folded [BEFORE_NAME AFTER_NAME] [--calls N]

Stacks of the load generator, the demo upstream and the bench's final chain verification are
left out; every other stack is put in the first category whose frame it passes through (the
gateway's own call path), so that the table sums to the bench's "gateway allocs/call".
"""
import collections, re, sys

calls = 3000
if '--calls' in sys.argv:
    at = sys.argv.index('--calls')
    calls = int(sys.argv[at + 1])
    del sys.argv[at:at + 2]


def cats(path):
    c=collections.Counter()
    for line in open(path):
        stack,_,n=line.rstrip().rpartition(' ')
        n=int(n)
        if 'toolgate_testkit' in stack or 'load::client' in stack or 'ChainVerifier' in stack or 'verify_file' in stack: continue
        ws=[f for f in stack.split(';') if re.search(r'(toolgate|toolgate_mcp|jcs_digest)::',f)]
        if not ws: continue
        s=stack
        if ws[-1].startswith('toolgate::server::listen'): key='hyper server connection'
        elif 'Pool::connect' in ws[-1]: key='hyper client connection to the upstream, rustls'
        elif 'response_from' in s: key='upstream response read'
        elif 'Message::from_slice' in s:
            key='client request: strict Values (_meta, name, id, method)' if 'parse_strict' in s else 'client request: scans, RawJson'
        elif 'ChainHead::append' in s: key='audit chain append'
        elif 'call_members' in s or 'Entry::members' in s: key='audit entry members'
        elif 'of_carried' in s: key='arguments digest'
        elif 'stamp_stateless' in s: key='stateless stamp (resultType)'
        elif 'json_response' in s or 'bounded_body' in s: key='answer to the client'
        elif 'Transport::request' in s or 'client::headers' in s or 'to_bytes' in s or 'read_all' in s or 'post_unbounded' in s or 'exchange_with_status' in s: key='upstream request, headers, exchange'
        elif 'check_and_forward' in s: key='router check_and_forward (allowed record)'
        elif 'call_tool_unmeasured' in s or 'Router::call_tool' in s: key='router call_tool (base record)'
        elif 'dispatch' in s: key='dispatch (ToolCall)'
        else: key='other'
        c[key]+=n
    return c
a=cats(sys.argv[1]); b=cats(sys.argv[2])
keys = sorted(set(a) | set(b), key=lambda k: (-a.get(k, 0), k))
print(f'| where | {sys.argv[3] if len(sys.argv) > 3 else "before"} | {sys.argv[4] if len(sys.argv) > 4 else "after"} |'); print('|---|--:|--:|')
for k in keys:
    if k=='other': continue
    print(f"| {k} | {a.get(k,0)/calls:.0f} | {b.get(k,0)/calls:.0f} |")
print(f"| total (counted in the gateway's threads) | {sum(v for k,v in a.items() if k!='other')/calls:.0f} | {sum(v for k,v in b.items() if k!='other')/calls:.0f} |")
