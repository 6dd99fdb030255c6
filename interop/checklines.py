"""One line per check, `pass WHAT` or `FAIL WHAT: WHY`, as run.sh counts them.

Shared by the *_check.py scripts (run with the script's own folder on sys.path, which Python
does for a script it is given by path).
"""

failures = 0


def report(ok: bool, what: str, why: str = "") -> None:
    """Prints one check's line and counts a failure."""
    global failures
    if ok:
        print(f"pass {what}", flush=True)
    else:
        failures += 1
        print(f"FAIL {what}: {why}", flush=True)


def exit_status() -> int:
    """0 when every check passed, 1 otherwise."""
    return 1 if failures else 0
