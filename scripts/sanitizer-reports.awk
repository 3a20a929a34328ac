# sanitizer-reports.awk -- prints every sanitizer report in a log and exits 1
# if there was one, 0 if not.
#
# A report starts at a line with one of the sanitizers' banners: ASan's,
# LSan's and TSan's "ERROR: <name>Sanitizer" / "WARNING: ThreadSanitizer",
# or UBSan's "runtime error:" (UBSan has no banner), and a sanitizer's own
# failure ("CHECK failed", TSan's "FATAL:"), which kills the process too.
# It ends at its "SUMMARY:" line, at the end of the test's output, or after
# `max` lines.
#
# Two kinds of input:
#   - ctest's Testing/Temporary/LastTest.log (-v ctest=1): each report is
#     named after the test whose output holds it ("N/M Test: NAME" opens a
#     test's part of the log, "<end of output>" closes it);
#   - any other log (-v what=LABEL): reports are named LABEL.
#
# Why scan instead of trusting exit codes: a LeakSanitizer report printed
# when a Criterion worker exits does not fail the test, a server's report
# lands in a log nobody reads, and some callers do not look at the exit
# status of what they started.

BEGIN {
	re = "ERROR: (Address|Leak|Thread|Memory|UndefinedBehavior)Sanitizer|" \
	    "WARNING: (Thread|Address)Sanitizer|runtime error:|" \
	    "(Thread|Address)Sanitizer: CHECK failed|FATAL: ThreadSanitizer"
	if (max == "")
		max = 80
	name = what
	found = 0
	inrep = 0
}

ctest && /^[0-9]+\/[0-9]+ Test: / {
	name = $3
	inrep = 0
	next
}

ctest && /^<end of output>$/ {
	if (inrep && shown > max)
		printf "#   ... %d more lines\n", shown - max
	inrep = 0
	next
}

!inrep && $0 ~ re {
	found++
	printf "### sanitizer report %d, from %s:\n", found, name
	inrep = 1
	shown = 0
}

inrep {
	shown++
	if (shown <= max)
		print "#   " $0
	if ($0 ~ /^SUMMARY: /) {
		if (shown > max)
			printf "#   ... %d more lines\n", shown - max
		inrep = 0
	}
}

END {
	if (inrep && shown > max)
		printf "#   ... %d more lines\n", shown - max
	exit found > 0
}
