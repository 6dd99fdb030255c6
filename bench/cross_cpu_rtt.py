"""What one wake-up across CPUs costs on this machine: a 1-byte TCP ping-pong over loopback
between two processes, pinned to the same CPU and to two different CPUs, and unpinned.

A gateway puts two more hand-offs between processes on every call (client -> gateway ->
upstream and back); this says what each costs before any work is done.

    python3 bench/cross_cpu_rtt.py [ROUNDS]      # default 2 rounds of 20,000 round trips each

On a VM guest idling with cpuidle-haltpoll, the two-CPU figure is mostly the halted vCPU's wake:
/sys/module/haltpoll/parameters/guest_halt_poll_ns decides it (BENCHMARKS.md, issue 16, tenth
session).
"""
import os
import socket
import subprocess
import sys
import time

TRIPS = 20000
WARMUP = 2000


def serve(port):
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(1)
    print("ready", flush=True)
    connection, _ = listener.accept()
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while True:
        data = connection.recv(64)
        if not data:
            return
        connection.sendall(data)


def measure(port):
    connection = socket.create_connection(("127.0.0.1", port))
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    times = []
    for _ in range(TRIPS):
        started = time.perf_counter()
        connection.sendall(b"x")
        connection.recv(64)
        times.append(time.perf_counter() - started)
    connection.close()
    times = sorted(times[WARMUP:])
    return times[len(times) // 2] * 1e6, times[len(times) * 9 // 10] * 1e6


def pinned(cpu):
    return ["taskset", "-c", str(cpu)] if cpu is not None else []


def run(label, server_cpu, client_cpu, port):
    server = subprocess.Popen(
        pinned(server_cpu) + [sys.executable, __file__, "--serve", str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    server.stdout.readline()
    if client_cpu is not None:
        os.sched_setaffinity(0, {client_cpu})
    else:
        os.sched_setaffinity(0, range(os.cpu_count()))
    p50, p90 = measure(port)
    server.wait(timeout=10)
    print(f"{label:10} round trip p50 {p50:.1f} µs p90 {p90:.1f} µs")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        serve(int(sys.argv[2]))
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    if os.cpu_count() < 2:
        sys.exit("error: needs at least two CPUs to compare the same CPU with two")
    port = 47100
    for number in range(1, rounds + 1):
        print(f"round {number}")
        for label, server_cpu, client_cpu in (
            ("same CPU", 0, 0),
            ("two CPUs", 1, 0),
            ("unpinned", None, None),
        ):
            port += 1
            run(label, server_cpu, client_cpu, port)


if __name__ == "__main__":
    main()
