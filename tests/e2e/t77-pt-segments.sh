# --jobs N on one Intel PT queue without time (issue 16): the queue is cut at its PSBs and
# the segments decode in parallel, each joined in order against the flow before it (taken
# where the state at its first block is the true one's, decoded again in order where not);
# where the fast walk gives up (here: the program's image gone), the queue is decoded again
# from its start as with one thread. Every output form is byte for byte --jobs 1's, exit
# code and stderr included, and --jobs 1's is main's one-thread decode (t73, golden sums).
. "$TOP/tests/e2e/lib.sh"

cat >calls.c <<'C'
/* one thread: calls, returns, branches and a recursion deep enough to cross PSBs */
#include <stdlib.h>
volatile unsigned long sink;
__attribute__((noinline)) static unsigned long deep(unsigned long d, unsigned long i)
{
	if (!d)
		return i & 7;
	if (i & 1)
		sink += d;
	return deep(d - 1, i * 3 + 1) + 1;
}
__attribute__((noinline)) static void leaf(unsigned long i) { sink += i % 13 ? i : 2 * i; }
int main(int argc, char **argv)
{
	unsigned long n = strtoul(argv[1], 0, 0);

	for (unsigned long i = 0; i < n; i++) {
		leaf(i);
		if (i % 97 == 0)
			sink += deep(40 + i % 23, i);
	}
	return 0;
}
C

forms='decode
-j decode
decode --branches
-j decode --branches
decode -F comm,tid,time,ip,sym,symoff,dso,addr,insncnt
-j decode --branches -F comm,tid,ip,sym,addr,offset
decode --format folded
report'

if [ "$(uname -m)" = x86_64 ] && command -v gcc >/dev/null && command -v qemu-x86_64 >/dev/null
then
	expect 'one queue, no time, many PSBs: every form the same with --jobs 1, 2, 4' '
		gcc -O1 -o calls calls.c &&
		tracectl record --pmu emulated -o pt.data -- ./calls 250000 2>/dev/null &&
		tracectl decode -i pt.data 2>&1 >/dev/null | grep -q " in 1 queues," &&
		[ "$(tracectl decode --packets -i pt.data 2>/dev/null | grep -c -w psb)" -ge 20 ] &&
		same_with_jobs pt.data
	'
	expect 'one queue, the program'"'"'s image gone (the queue decoded again): the same with --jobs 1, 2, 4' '
		cp calls calls.kept && rm calls &&
		tracectl decode -i pt.data 2>&1 >/dev/null | grep -q "image not found: .*/calls " &&
		same_with_jobs pt.data; rc=$?
		mv calls.kept calls && [ $rc = 0 ]
	'
	# perf writes a queue in pieces (one each time it drains the AUX ring), cut inside
	# packets: the segment that ends a buffer goes on into the next one to its first PSB
	# (pt_flow.h's tc_pt_flow_follow); that buffer's head is never a segment's own
	expect 'one queue in 8 KiB buffers: every form the same with --jobs 1, 2, 4; nothing skipped' '
		"${TC_TOOLS:-$TOP/build/obj/tools}/pd_rewrite" -s 8192 pt.data cut.data &&
		tracectl decode -i cut.data 2>&1 >/dev/null | grep -q " in 1 queues," &&
		! tracectl -j decode -i cut.data 2>/dev/null | grep "\"no_sync\"" &&
		same_with_jobs cut.data
	'
	expect 'one queue: --decoder=reference and --jobs 4 agree with --jobs 1' '
		tracectl -j decode --branches --jobs 4 -i pt.data >f4 2>/dev/null &&
		tracectl -j decode --branches --decoder=reference -i pt.data >r1 2>/dev/null &&
		cmp f4 r1
	'
else
	skip 'Intel PT segments on an emulated recording' 'needs x86-64, gcc and qemu-x86_64'
fi
