# tracectl build. B=DIR puts all build output elsewhere (parallel work trees).
# `make deps` (root) installs what is needed; `make` builds; `make test` tests.
CC ?= gcc
ifeq ($(origin CC),default)
CC := gcc
endif
B := build
WARN := -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -pthread -I.
CFLAGS ?= -O2 -g
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo 0.1)

# lib/emulate/qemu_plugin/ is the QEMU plugin (a shared object of its own), not tracectl's.
LIB_SRC := $(shell find lib decoders -name '*.c' -not -path 'lib/emulate/qemu_plugin/*' | \
	LC_ALL=C sort)
CMD_SRC := $(wildcard cmd/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
TOOL_SRC := $(wildcard tests/tools/*.c)	# test-only programs the e2e tests run

# Objects per flavour: normal in build/obj, sanitizers in build/asan.
obj = $(patsubst %.c,$(B)/$(1)/%.o,$(2))

-include $(B)/config.mk

.PHONY: all deps test test-asan tsan check clean install bench test-vm test-vm-new
.SECONDARY:
all: tracectl $(B)/examples/threads $(B)/qemu_plugin/tracectl-qemu.so

# The TCG plugin qemu-x86_64 / qemu-aarch64 load with -plugin (record --pmu emulated).
$(B)/qemu_plugin/tracectl-qemu.so: $(wildcard lib/emulate/qemu_plugin/*.[ch]) $(B)/config.mk
	@mkdir -p $(dir $@)
	@echo '  CC      $@'
	@$(CC) $(WARN) $(CFLAGS) -shared -fPIC -fvisibility=hidden -pthread -o $@ \
		$(filter %.c,$^) $(CAPSTONE_CFLAGS) $(CAPSTONE_LIBS)

# The bundled example the README's main job records (record --pmu emulated).
$(B)/examples/%: examples/%.c
	@mkdir -p $(dir $@)
	@echo '  CC      $@'
	@$(CC) $(WARN) -O1 -g -pthread -o $@ $<

deps:
	./mk/deps.sh

$(B)/config.mk: mk/config.sh
	@mkdir -p $(B)
	@./mk/config.sh $@

define flavour
$(B)/$(1)/%.o: %.c $(B)/config.mk
	@mkdir -p $$(dir $$@)
	@echo '  CC      $$@'
	@$$(CC) $$(WARN) $$(CFLAGS) $(2) $$(DEP_CFLAGS) -DTRACECTL_VERSION='"$$(VERSION)"' -MMD -MP -c $$< -o $$@

$(B)/$(1)/tracectl: $(call obj,$(1),$(CMD_SRC) $(LIB_SRC))
	@echo '  LD      $$@'
	@$$(CC) $$(CFLAGS) $(2) -pthread -o $$@ $$^ $$(DEP_LIBS)

$(B)/$(1)/unit/%: $(B)/$(1)/tests/unit/%.o $(call obj,$(1),$(LIB_SRC))
	@mkdir -p $$(dir $$@)
	@echo '  LD      $$@'
	@$$(CC) $$(CFLAGS) $(2) -pthread -o $$@ $$^ $$(DEP_LIBS)

$(B)/$(1)/tools/%: $(B)/$(1)/tests/tools/%.o $(call obj,$(1),$(LIB_SRC))
	@mkdir -p $$(dir $$@)
	@echo '  LD      $$@'
	@$$(CC) $$(CFLAGS) $(2) -pthread -o $$@ $$^ $$(DEP_LIBS)

$(1)_UNITS := $(patsubst tests/unit/%.c,$(B)/$(1)/unit/%,$(UNIT_SRC))
$(1)_TOOLS := $(patsubst tests/tools/%.c,$(B)/$(1)/tools/%,$(TOOL_SRC))
endef

SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
TSAN := -fsanitize=thread -O1 -g
$(eval $(call flavour,obj,))
$(eval $(call flavour,asan,$(SAN)))
$(eval $(call flavour,tsan,$(TSAN)))

tracectl: $(B)/obj/tracectl
	cp $< $@

test: tracectl $(B)/qemu_plugin/tracectl-qemu.so $(obj_UNITS) $(obj_TOOLS)
	@TRACECTL=$(CURDIR)/$(B)/obj/tracectl UNITS="$(obj_UNITS)" TC_TOOLS=$(CURDIR)/$(B)/obj/tools \
	 ./tests/run.sh

test-asan: $(B)/asan/tracectl $(B)/qemu_plugin/tracectl-qemu.so $(asan_UNITS) $(asan_TOOLS)
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	 TRACECTL=$(CURDIR)/$(B)/asan/tracectl UNITS="$(asan_UNITS)" \
	 TC_TOOLS=$(CURDIR)/$(B)/asan/tools ./tests/run.sh

check: test test-asan

# ThreadSanitizer build (--jobs N), run by hand only (not in `make test` or CI), e.g.
# TC_TESTDATA=../shared/testdata $(B)/tsan/unit/test_cs_session, or tests/run.sh with
# TRACECTL=$(CURDIR)/$(B)/tsan/tracectl TC_TOOLS=$(CURDIR)/$(B)/tsan/tools. The libraries
# (OpenCSD, libipt, libelf, Capstone) are not instrumented.
tsan: $(B)/tsan/tracectl $(tsan_UNITS) $(tsan_TOOLS)

# The record loop on Debian 12's kernel under QEMU TCG with tests/vm/fake_aux.ko (AUX PMUs).
test-vm: tracectl
	tests/vm/run.sh

# Pause/resume triggers on a Linux 6.13+ kernel (Debian 13 backports) under QEMU TCG; root:
# mk/kernel-new.sh makes a Debian 13 chroot in build/vm-new that builds the module for it.
test-vm-new: tracectl
	tests/vm/run_new.sh

# Timings (not a test; see tests/bench/run.sh): snapshot decode against OpenCSD's
# trc_pkt_lister, Intel PT decode against perf script, and emulated recording speed (record --pmu emulated) for both formats.
bench: tracectl $(obj_TOOLS)
	@TRACECTL=$(CURDIR)/$(B)/obj/tracectl TC_TOOLS=$(CURDIR)/$(B)/obj/tools ./tests/bench/run.sh

clean:
	rm -rf $(B)/obj $(B)/asan $(B)/tsan $(B)/examples $(B)/qemu_plugin $(B)/config.mk tracectl

-include $(shell find $(B)/obj $(B)/asan $(B)/tsan -name '*.d' 2>/dev/null)

PREFIX ?= /usr/local
install: tracectl $(B)/qemu_plugin/tracectl-qemu.so
	install -D -m 755 tracectl $(DESTDIR)$(PREFIX)/bin/tracectl
	install -m 644 $(B)/qemu_plugin/tracectl-qemu.so $(DESTDIR)$(PREFIX)/bin/tracectl-qemu.so
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -D -m 644 completions/tracectl.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/tracectl
	install -D -m 644 completions/_tracectl $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_tracectl

# ---- libFuzzer targets (tests/fuzz/fuzz_*.c) ------------------------------------------
# `make fuzz` builds $(B)/fuzz/fuzz_NAME with clang's libFuzzer, ASan and UBSan, against
# the lib/ and decoders/ sources compiled the same way. `make fuzz-run` runs each
# target for FUZZ_SECONDS with the corpus $(B)/fuzz/corpus-NAME, seeded at run time from
# ../shared/testdata (TC_TESTDATA overrides); `make fuzz-smoke` runs each for
# FUZZ_SMOKE_SECONDS on a fresh corpus and fails if one crashes (CI). FUZZ=NAME runs one.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 600
FUZZ_SMOKE_SECONDS ?= 20
FUZZ_TESTDATA ?= $(if $(TC_TESTDATA),$(TC_TESTDATA),$(CURDIR)/../shared/testdata)
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES := $(if $(FUZZ),$(FUZZ),$(patsubst tests/fuzz/fuzz_%.c,%,$(FUZZ_SRC)))
FUZZ_BINS := $(patsubst %,$(B)/fuzz/fuzz_%,$(FUZZ_NAMES))

.PHONY: fuzz fuzz-run fuzz-smoke
fuzz: $(FUZZ_BINS)

$(B)/fuzz/obj/%.o: %.c $(B)/config.mk
	@mkdir -p $(dir $@)
	@echo '  FUZZCC  $@'
	@$(FUZZ_CC) $(WARN) $(FUZZ_CFLAGS) $(DEP_CFLAGS) -DTRACECTL_VERSION='"$(VERSION)"' \
		-MMD -MP -c $< -o $@

$(B)/fuzz/libtc.a: $(call obj,fuzz/obj,$(LIB_SRC))
	@rm -f $@
	@echo '  AR      $@'
	@$(AR) rcs $@ $^

$(B)/fuzz/fuzz_%: $(B)/fuzz/obj/tests/fuzz/fuzz_%.o $(B)/fuzz/libtc.a
	@echo '  LD      $@'
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $^ $(DEP_LIBS)

# fuzz_jobs's seeds are recordings made with tracectl (tests/fuzz/run.sh)
FUZZ_SEED_TOOLS := tracectl $(B)/qemu_plugin/tracectl-qemu.so $(B)/obj/tools/pd_rewrite

fuzz-run: $(FUZZ_BINS) $(FUZZ_SEED_TOOLS)
	@rc=0; for n in $(FUZZ_NAMES); do \
		./tests/fuzz/run.sh $(B)/fuzz $$n $(FUZZ_SECONDS) corpus-$$n "$(FUZZ_TESTDATA)" \
			|| rc=1; \
	done; exit $$rc

fuzz-smoke: $(FUZZ_BINS) $(FUZZ_SEED_TOOLS)
	@rc=0; for n in $(FUZZ_NAMES); do \
		rm -rf $(B)/fuzz/smoke-corpus-$$n; \
		FUZZ_SEED=$${FUZZ_SEED:-1} ./tests/fuzz/run.sh $(B)/fuzz $$n $(FUZZ_SMOKE_SECONDS) smoke-corpus-$$n \
			"$(FUZZ_TESTDATA)" || rc=1; \
	done; exit $$rc

-include $(shell find $(B)/fuzz -name '*.d' 2>/dev/null)
