# tracectl record --pmu emulated through QEMU follows processes as perf's inherit does: a
# guest fork forks qemu and the plugin, the child is traced under its own pid/tid, with
# FORK, COMM, MMAP2 and EXIT side-band of its own; an exec runs qemu and the plugin again on
# the new program (COMM with exec, its own MMAP2 records). The plugin's ground truth,
# tracectl decode and Debian's perf script must agree per thread.
. "$TOP/tests/e2e/lib.sh"

if [ "$(uname -m)" != x86_64 ] || ! command -v gcc >/dev/null ||
   ! command -v qemu-x86_64 >/dev/null; then
	skip 'processes under emulated Intel PT' 'needs x86-64, gcc and qemu-x86_64 (Debian: qemu-user)'
	exit 0
fi

# record NAME CMD...: NAME.data, NAME.truth; both decoders give the truth exactly
exact() {
	n=$1
	shift
	tracectl record --pmu emulated -o $n.data --ground-truth $n.truth -- "$@" \
		>$n.out 2>$n.err && cat $n.err &&
	by_tid $n.truth >$n.want && [ "$(wc -l <$n.want)" -gt 1000 ] &&
	tc_branches $n.data >$n.got && diff $n.want $n.got &&
	perf_branches $n.data >$n.pgot && diff $n.want $n.pgot && [ ! -s $n.data.perf-err ]
}
# tids NAME: the threads of the truth
tids() { cut -d" " -f1 $1.want | sort -u; }

cat >procs.c <<'EOF2'
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

static void *spin(void *arg)
{
	for (unsigned long i = 0; i < (unsigned long)arg; i++)
		sink += i % 7;
	return NULL;
}

static void wait_for(pid_t p, int want)
{
	int st;

	if (waitpid(p, &st, 0) != p || (want >= 0 ? !WIFEXITED(st) || WEXITSTATUS(st) != want :
					 !WIFSIGNALED(st) || WTERMSIG(st) != -want))
		exit(9);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0;
	pthread_t t;
	pid_t p, q;

	if (argc > 1 && argv[1][0] == 'x') {	/* exec: a failing one, then sh */
		char *env[] = { "FOO=bar", NULL };

		if (execl("/nonexistent/prog", "x", (char *)NULL) == 0 || !fork())
			return 8;
		wait(NULL);
		spin((void *)1000UL);
		execle("/bin/sh", "custom0", "-c", "echo $0 $FOO", (char *)NULL, env);
		return 7;
	}
	if (n) {	/* fork-heavy: n children at once, each a little work */
		for (int i = 0; i < n; i++)
			if (!fork()) {
				spin((void *)2000UL);
				_exit(i & 127);
			}
		while (wait(NULL) > 0)
			;
		return 0;
	}
	if (!(p = fork())) {	/* a child with a thread, and a grandchild */
		pthread_create(&t, NULL, spin, (void *)3000UL);
		if (!(q = fork())) {
			spin((void *)1000UL);
			_exit(4);
		}
		wait_for(q, 4);
		pthread_join(t, NULL);
		printf("child done\n");
		fflush(stdout);
		_exit(3);
	}
	wait_for(p, 3);
	if (!(p = vfork()))
		_exit(5);
	wait_for(p, 5);
	if (!(p = fork())) {	/* killed by a signal: no exit callback in its qemu */
		spin((void *)500UL);
		abort();
	}
	wait_for(p, -SIGABRT);
	spin((void *)2000UL);
	printf("parent done\n");
	return 0;
}
EOF2
gcc -O1 -g -pthread -o procs procs.c || echo "not ok $T: cannot build procs.c"

expect 'fork, vfork, a thread in a child, a grandchild, a child killed: each traced, exact' '
	exact procs ./procs && grep -q "^child done" procs.out &&
	grep -q "^parent done" procs.out &&
	[ "$(tids procs | wc -l)" = 6 ] && grep -q "6 threads" procs.err
'
expect 'side-band: FORK of each process from its parent, its own COMM and MMAP2, EXIT' '
	perf script -i procs.data --show-task-events --show-mmap-events 2>/dev/null >sb &&
	parent=$(sed -n "s/.*PERF_RECORD_COMM exec: procs:\([0-9]*\)\/.*/\1/p" sb) &&
	[ -n "$parent" ] &&
	[ "$(grep -c "PERF_RECORD_FORK([0-9]*:[0-9]*):($parent:$parent)" sb)" = 3 ] &&
	for c in $(sed -n "s/.*PERF_RECORD_FORK(\([0-9]*\):\1):($parent:$parent).*/\1/p" sb); do
		grep -q "PERF_RECORD_COMM: procs:$c/$c" sb &&
		grep -q "PERF_RECORD_MMAP2 $c/$c: .*r-xp .*/libc.so.6" sb &&
		grep -q "PERF_RECORD_EXIT($c:$c)" sb || exit 1
	done &&
	[ "$(grep -c "PERF_RECORD_FORK" sb)" = 5 ] && [ "$(grep -c "PERF_RECORD_EXIT" sb)" = 6 ]
'
expect 'each branch under its own pid/tid (perf script -F pid,tid)' '
	perf script -i procs.data --itrace=b -F pid,tid 2>/dev/null | sort -u >pt &&
	[ "$(wc -l <pt)" = 6 ] && [ "$(cut -d/ -f1 pt | sort -u | wc -l)" = 5 ]
'
expect 'sh -c "ls / ; true": the shell and its child, exact' '
	exact sh /bin/sh -c "ls / >/dev/null; true" && [ "$(tids sh | wc -l)" = 2 ]
'
expect 'fork-heavy: 40 children at once, all followed, exact' '
	exact many ./procs 40 && [ "$(tids many | wc -l)" = 41 ]
'
expect 'exec: sh -c "ls / ; exec /bin/true": ls and true traced under their pids, exact' '
	exact ex /bin/sh -c "ls / >/dev/null; exec /bin/true" && [ "$(tids ex | wc -l)" = 2 ] &&
	grep -q "4 threads" ex.err &&
	perf script -i ex.data --show-task-events --show-mmap-events 2>/dev/null >sb &&
	sh=$(sed -n "s/.*PERF_RECORD_COMM exec: dash:\([0-9]*\)\/.*/\1/p" sb) &&
	ls=$(sed -n "s/.*PERF_RECORD_FORK(\([0-9]*\):.*/\1/p" sb) &&
	grep -q "PERF_RECORD_COMM exec: ls:$ls/$ls" sb &&
	grep -q "PERF_RECORD_MMAP2 $ls/$ls: .*r-xp /usr/bin/ls$" sb &&
	grep -q "PERF_RECORD_COMM exec: true:$sh/$sh" sb &&
	grep -q "PERF_RECORD_MMAP2 $sh/$sh: .*r-xp /usr/bin/true$" sb &&
	perf script -i ex.data --itrace=b -F tid,ip,dso 2>/dev/null >b &&
	grep -q "^ *$ls .*(/usr/bin/ls)" b && grep -q "^ *$sh .*(/usr/bin/true)" b &&
	grep -q "^ *$ls .*(/usr/bin/dash)" b && grep -q "^ *$sh .*(/usr/bin/dash)" b
'
expect 'exec: a failing exec returns its error, argv[0] and the environment are the guest'"'"'s' '
	exact exv ./procs x && [ "$(cat exv.out)" = "custom0 bar" ] &&
	[ "$(tids exv | wc -l)" = 2 ] && grep -q "3 threads" exv.err
'
cat >script.sh <<'EOF2'
#!/bin/sh -e
echo script ran $0 $1
EOF2
chmod +x script.sh
expect 'exec of a script: its interpreter traced (named as the script), exact' '
	exact scr /bin/sh -c "./script.sh one; true" &&
	[ "$(cat scr.out)" = "script ran ./script.sh one" ] && grep -q "3 threads" scr.err &&
	perf script -i scr.data --show-task-events 2>/dev/null |
		grep -q "PERF_RECORD_COMM exec: script.sh:"
'
cat >dl.c <<'EOF2'
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
	static const char *const libs[][2] = { { "libz.so.1", "zlibVersion" },
		{ "libbz2.so.1", "BZ2_bzlibVersion" }, { "libz.so.1", "zlibVersion" } };

	for (int i = 0; i < 3; i++) {
		void *h = dlopen(libs[i][0], RTLD_NOW);
		const char *(*f)(void) = h ? (const char *(*)(void))dlsym(h, libs[i][1]) : NULL;

		if (!f)
			return 1;
		printf("%s\n", f());
		dlclose(h);
	}
	return 0;
}
EOF2
gcc -O1 -o dl dl.c || echo "not ok $T: cannot build dl.c"
expect 'dlopen/dlclose: each mapping as the plugin saw mmap (the code segment, its offset), exact' '
	exact dl ./dl && [ "$(wc -l <dl.out)" = 3 ] &&
	perf script -i dl.data --show-mmap-events 2>/dev/null >sb &&
	[ "$(grep -c "PERF_RECORD_MMAP2 .* @ 0x[1-9a-f][0-9a-f]* .*r-xp .*/libz.so" sb)" = 2 ] &&
	grep -q "PERF_RECORD_MMAP2 .* @ 0x[1-9a-f][0-9a-f]* .*r-xp .*/libbz2.so" sb &&
	perf report -i dl.data --itrace=b --stdio --sort dso 2>/dev/null | grep -q "% *libbz2.so"
'

# aarch64 (emulated ETM under qemu-aarch64): dynamic and PIE programs run with Debian's
# aarch64 ld.so and libraries (-L /usr/aarch64-linux-gnu); their MMAP2 records name those
# files; fork children are followed too.
if ! command -v qemu-aarch64 >/dev/null || ! command -v aarch64-linux-gnu-gcc >/dev/null ||
   [ ! -e /usr/aarch64-linux-gnu/lib/libc.so.6 ]; then
	skip 'dynamic aarch64 programs' 'needs qemu-aarch64 and gcc-aarch64-linux-gnu'
	exit 0
fi
# exact64 NAME CMD...: as exact (perf's arm64 unwinder warnings aside)
exact64() {
	n=$1
	shift
	tracectl record --pmu emulated -o $n.data --ground-truth $n.truth -- "$@" \
		>$n.out 2>$n.err && cat $n.err && grep -q "emulated ETMv4" $n.err &&
	by_tid $n.truth >$n.want && [ "$(wc -l <$n.want)" -gt 1000 ] &&
	tc_branches $n.data >$n.got && diff $n.want $n.got &&
	perf_branches $n.data >$n.pgot && diff $n.want $n.pgot
}
for pie in -pie -no-pie -static-pie; do
	aarch64-linux-gnu-gcc -O1 -pthread $pie -o t64$pie "$TOP/examples/threads.c" ||
		{ echo "not ok $T: cannot build threads.c for aarch64 $pie"; continue; }
	expect "aarch64 $pie threads: ld.so and libc traced, tracectl and perf give the truth" '
		exact64 t64'$pie' ./t64'$pie' && [ "$(tids t64'$pie' | wc -l)" = 4 ]
	'
done
expect 'aarch64 dynamic: MMAP2 of the program, ld.so and libc with their host paths' '
	perf script -i t64-pie.data --show-mmap-events 2>/dev/null >sb &&
	grep -q "PERF_RECORD_MMAP2 .*r-xp /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1$" sb &&
	grep -q "PERF_RECORD_MMAP2 .*r-xp /usr/aarch64-linux-gnu/lib/libc.so.6$" sb &&
	grep -q "PERF_RECORD_MMAP2 .*r-xp $PWD/t64-pie$" sb
'
aarch64-linux-gnu-gcc -O1 -pthread -o p64 procs.c || echo "not ok $T: cannot build procs.c for aarch64"
expect 'aarch64 dynamic fork, vfork, a thread in a child, a grandchild, a child killed: exact' '
	exact64 p64 ./p64 && grep -q "^parent done" p64.out && [ "$(tids p64 | wc -l)" = 6 ] &&
	perf script -i p64.data --itrace=b -F pid,tid 2>/dev/null | sort -u >pt &&
	[ "$(wc -l <pt)" = 6 ] && [ "$(cut -d/ -f1 pt | sort -u | wc -l)" = 5 ] &&
	perf script -i p64.data --show-task-events 2>/dev/null | grep -c "PERF_RECORD_FORK" |
		grep -qx 5
'
