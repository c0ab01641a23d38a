"""tests/gpu/shim/verdicts.py: the PASS/FAIL lines of the GPU check scripts and their count (jax_check.py, dist_ranks.py)."""


class Verdicts:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, name, ok, detail=""):
        """Prints 'PASS: name (detail)' or 'FAIL: ...' and counts it; returns ok."""
        print("%s: %s%s" % ("PASS" if ok else "FAIL", name, " (%s)" % detail if detail else ""), flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        return ok

    def summary(self):
        """Prints 'N passed, M failed'; the exit status: 1 on any failure."""
        print("%d passed, %d failed" % (self.passed, self.failed))
        return 1 if self.failed else 0
