# Thin wrapper over CMake: `make run` (the main job) and `make test` (the test suite).
# Both install missing Debian packages, configure and build first.
BUILD ?= build
JOBS  ?= $(shell nproc)

.PHONY: all deps configure build tool run demo test clean
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

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)
