#!/usr/bin/env python3
"""Sums the fuzzing sessions that scripts/fuzz.sh appends to
fuzz/artifacts/stats.log: per target, the runs, the total time, the inputs
executed, the corpus inputs added, the slowest input and the peak RSS, as a
Markdown table for docs/fuzzing.md.

    scripts/fuzz-summary.py [STATS_LOG...]
"""
import re
import sys
from collections import OrderedDict

HEADER = re.compile(r"^\S+ (\S+) (\d+)s jobs=(\d+) exit=(\d+)")
STAT = re.compile(r"^stat::(\w+):\s+(\d+)")


def main(paths):
    totals = OrderedDict()
    current = None
    for path in paths:
        with open(path) as f:
            for line in f:
                m = HEADER.match(line)
                if m:
                    target, secs, jobs, status = m.group(1), *map(int, m.groups()[1:])
                    t = totals.setdefault(target, dict(runs=0, secs=0, execs=0, added=0,
                                                       slowest=0, rss=0, failed=0))
                    t["runs"] += 1
                    t["secs"] += secs * jobs
                    t["failed"] += status != 0
                    current = t
                    continue
                m = STAT.match(line)
                if m and current is not None:
                    key, value = m.group(1), int(m.group(2))
                    if key == "number_of_executed_units":
                        current["execs"] += value
                    elif key == "new_units_added":
                        current["added"] += value
                    elif key == "slowest_unit_time_sec":
                        current["slowest"] = max(current["slowest"], value)
                    elif key == "peak_rss_mb":
                        current["rss"] = max(current["rss"], value)
    print("| target | runs | time (min) | inputs executed | corpus added | slowest input (s) | peak RSS (MB) | findings |")
    print("|---|---|---|---|---|---|---|---|")
    for name, t in totals.items():
        print(f"| `{name}` | {t['runs']} | {t['secs'] / 60:.1f} | {t['execs']:,} | {t['added']:,} "
              f"| {t['slowest']} | {t['rss']} | {t['failed']} |")


if __name__ == "__main__":
    main(sys.argv[1:] or ["fuzz/artifacts/stats.log"])
