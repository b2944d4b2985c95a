"""tests/check/report_text.py - one line of `fxtrace report` for the check scripts
(devtools_compare.py, tracedat_compare.py).

LINE matches an event's line, "%16s-%-7d [%03d] ..... %5lu.%06lu: name: text": its groups are
the comm (16 columns, padded), the pid, the CPU, the time "seconds.microseconds" and the rest
("name: text").
"""
import re

LINE = re.compile(r"^(.{16})-(\d+) *\[(\d{3})\] \.{5} +(\d+\.\d{6}): (.*)$")
