# Thin wrapper over CMake: `make run` (the main job) and `make test` (the test suite).
# Both install missing Debian packages, configure and build first.
BUILD ?= build
ASAN_BUILD ?= $(BUILD)-asan
JOBS  ?= $(shell nproc)

.PHONY: all deps configure build tool run demo test test-asan install package clean
all: build

deps:
	@scripts/deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

# Everything, test binaries included (three sanitizer variants of each runtime test).
build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Only what an attempt or the demo runs: the tandem command and the player shell (with the
# backends they link); no test binary.
tool: configure
	@cmake --build $(BUILD) -j $(JOBS) --target tandem tandem-player

# The main job: a default measured attempt (tandem vs fcontext, AOT and JIT players),
# ending with the gate's verdict and the path of its report. Exit: the gate's (0 PASS,
# 3 FAIL, 1 INVALID or aborted).
run: tool
	@$(BUILD)/tandem attempt

demo: tool
	@$(BUILD)/tandem demo

# The whole suite, then the tools' tests (label tools: the verbs, the hostile suite) once
# more with the tools and the player built under ASan+UBSan in $(ASAN_BUILD) (the fuzz
# targets, sanitized already, are not run twice). Exit non-zero if either part failed.
test: build
	@rc=0; (cd $(BUILD) && ctest --output-on-failure -j $(JOBS)) || rc=1; \
	$(MAKE) --no-print-directory test-asan || rc=1; exit $$rc

test-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Release -DTD_SANITIZE_TOOLS=ON -DTANDEM_SANITIZERS=OFF >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS) --target tandem tandem-player tl_testtool test_opt
	@cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) -L tools -E fuzz

# A relocatable install into PREFIX (cmake/TandemInstall.cmake; DESTDIR honoured): the two
# programs, Tandem's data under PREFIX/share/tandem, man pages, bash completion, the subject
# ABI header and its pkg-config file. Only what the install needs is built.
PREFIX ?= /usr/local
install: configure
	@cmake --build $(BUILD) -j $(JOBS) --target tandem tandem-player tandem_docs
	@cmake --install $(BUILD) --prefix $(PREFIX)

# The Debian package (CPack DEB): $(BUILD)/package/tandem_<version>_<arch>.deb, installing
# under /usr; its Depends are the Debian packages the tools need at run time.
package: configure
	@cmake --build $(BUILD) -j $(JOBS) --target tandem tandem-player tandem_docs
	@cd $(BUILD) && cpack -G DEB -B package >/dev/null && ls "$$PWD"/package/*.deb

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
