"""How far a file system overlaps durable appends from several threads: each of N threads
writes 700 bytes (an audit entry's size) over zeros already in one file (at offsets handed out in turn) and fdatasyncs, for
two seconds. Prints the syncs per second, the time one sync takes its thread, and the CPU time
(user + system) the process spends per sync. One thread is the audit log's case at one client;
the gain from more threads bounds what overlapping groups could bring.

    python3 bench/sync_concurrency.py DIR [THREADS ...]   # default threads: 1 2 4
"""
import os
import resource
import sys
import threading
import time

LINE = b"x" * 699 + b"\n"
SECONDS = 2.0
ZEROS = 64 << 20


def run(directory, threads):
    path = os.path.join(directory, "sync-concurrency")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, b"\0" * ZEROS)
        os.fsync(fd)
        counts = [0] * threads
        lock = threading.Lock()
        next_offset = [0]
        full = []
        stop = time.perf_counter() + SECONDS

        def append(index):
            while time.perf_counter() < stop:
                with lock:
                    offset = next_offset[0]
                    next_offset[0] += len(LINE)
                if offset + len(LINE) > ZEROS:
                    full.append(offset)
                    return
                os.pwrite(fd, LINE, offset)
                os.fdatasync(fd)
                counts[index] += 1

        before = resource.getrusage(resource.RUSAGE_SELF)
        workers = [threading.Thread(target=append, args=(i,)) for i in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        after = resource.getrusage(resource.RUSAGE_SELF)
        if full:
            raise SystemExit(f"the {ZEROS >> 20} MiB of zeros filled up: raise ZEROS in {__file__}")
    finally:
        os.close(fd)
        os.unlink(path)
    syncs = sum(counts)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(
        f"{threads} thread(s): {syncs / SECONDS:,.0f} syncs/s, "
        f"{SECONDS / syncs * threads * 1e6:.0f} us per sync per thread, "
        f"{cpu / syncs * 1e6:.0f} us CPU per sync"
    )


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else "target/tmp"
    os.makedirs(directory, exist_ok=True)
    threads = [int(n) for n in sys.argv[2:]] or [1, 2, 4]
    for n in threads:
        run(directory, n)


if __name__ == "__main__":
    main()
