"""The counting check of the Python tests (tests/python/test_*.py):
check(cond, what) counts a pass or prints the failure (and with
verbose = True each pass as 'ok: what' too); done() prints the closing
'N passed, N failed' line and exits 1 if anything failed."""
import sys

counts = {"passed": 0, "failed": 0}
verbose = False


def check(cond, what):
    if cond:
        counts["passed"] += 1
        if verbose:
            print("ok:", what)
    else:
        counts["failed"] += 1
        print("FAILED:", what)


def done():
    print(f"{counts['passed']} passed, {counts['failed']} failed")
    sys.exit(1 if counts["failed"] else 0)
