# tracectl build. B=DIR puts all build output elsewhere (parallel work trees).
# `make deps` (root) installs what is needed; `make` builds; `make test` tests.
CC ?= gcc
ifeq ($(origin CC),default)
CC := gcc
endif
B := build
WARN := -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -I.
CFLAGS ?= -O2 -g
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo 0.1)

LIB_SRC := $(wildcard lib/*.c) $(wildcard decoders/*.c) $(wildcard out/*.c)
CMD_SRC := $(wildcard cmd/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)

# Objects per flavour: normal in build/obj, sanitizers in build/asan.
obj = $(patsubst %.c,$(B)/$(1)/%.o,$(2))

-include $(B)/config.mk

.PHONY: all deps test test-asan check clean install
.SECONDARY:
all: tracectl

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
	@$$(CC) $$(CFLAGS) $(2) -o $$@ $$^ $$(DEP_LIBS)

$(B)/$(1)/unit/%: $(B)/$(1)/tests/unit/%.o $(call obj,$(1),$(LIB_SRC))
	@mkdir -p $$(dir $$@)
	@echo '  LD      $$@'
	@$$(CC) $$(CFLAGS) $(2) -o $$@ $$^ $$(DEP_LIBS)

$(1)_UNITS := $(patsubst tests/unit/%.c,$(B)/$(1)/unit/%,$(UNIT_SRC))
endef

SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
$(eval $(call flavour,obj,))
$(eval $(call flavour,asan,$(SAN)))

tracectl: $(B)/obj/tracectl
	cp $< $@

test: tracectl $(obj_UNITS)
	@TRACECTL=$(CURDIR)/$(B)/obj/tracectl UNITS="$(obj_UNITS)" ./tests/run.sh

test-asan: $(B)/asan/tracectl $(asan_UNITS)
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	 TRACECTL=$(CURDIR)/$(B)/asan/tracectl UNITS="$(asan_UNITS)" ./tests/run.sh

check: test test-asan

clean:
	rm -rf $(B)/obj $(B)/asan $(B)/config.mk tracectl

-include $(shell find $(B)/obj $(B)/asan -name '*.d' 2>/dev/null)

PREFIX ?= /usr/local
install: tracectl
	install -D -m 755 tracectl $(DESTDIR)$(PREFIX)/bin/tracectl
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -D -m 644 completions/tracectl.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/tracectl
	install -D -m 644 completions/_tracectl $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_tracectl
