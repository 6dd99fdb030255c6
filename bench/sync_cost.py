"""The cost of one durable audit append on a file system: write 700 bytes and fdatasync, 1,500
times, four ways (plain append; blocks reserved with fallocate KEEP_SIZE; fallocate extending the
size; writing over zeros already in the file), three rounds. Prints p50, p90 and the mean per
way.

    python3 bench/sync_cost.py DIR      # DIR on the file system under test (default: target/tmp)
"""
import ctypes
import os
import sys
import time

libc = ctypes.CDLL("libc.so.6", use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
FALLOC_FL_KEEP_SIZE = 1
LINE = b"x" * 699 + b"\n"
APPENDS = 1500
STEP = 4 << 20


def run(directory, mode):
    path = os.path.join(directory, "sync-cost-" + mode)
    if os.path.exists(path):
        os.unlink(path)
    flags = os.O_RDWR | os.O_CREAT | (0 if mode in ("zeroed", "fallocate") else os.O_APPEND)
    fd = os.open(path, flags, 0o600)
    if mode == "keepsize" and libc.fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, STEP) != 0:
        raise OSError(ctypes.get_errno(), "fallocate")
    if mode == "fallocate" and libc.fallocate(fd, 0, 0, STEP) != 0:
        raise OSError(ctypes.get_errno(), "fallocate")
    if mode == "zeroed":
        os.write(fd, b"\0" * STEP)
    os.fsync(fd)
    times = []
    offset = 0
    for _ in range(APPENDS):
        started = time.perf_counter()
        if mode in ("zeroed", "fallocate"):
            os.pwrite(fd, LINE, offset)
        else:
            os.write(fd, LINE)
        offset += len(LINE)
        os.fdatasync(fd)
        times.append(time.perf_counter() - started)
    os.close(fd)
    os.unlink(path)
    mean = sum(times) / len(times)
    times.sort()
    return times[len(times) // 2] * 1e6, times[int(len(times) * 0.9)] * 1e6, mean * 1e6


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else "target/tmp"
    os.makedirs(directory, exist_ok=True)
    for round_ in range(3):
        for mode in ("append", "keepsize", "fallocate", "zeroed"):
            p50, p90, mean = run(directory, mode)
            print(f"{round_} {mode} p50 {p50:.0f} µs p90 {p90:.0f} µs mean {mean:.0f} µs")


if __name__ == "__main__":
    main()
