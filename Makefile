# Thin wrapper over CMake: `make run` (the main job) and `make test` (the test suite).
# Both install missing Debian packages, configure and build first.
BUILD ?= build
JOBS  ?= $(shell nproc)

.PHONY: all deps configure build run demo test clean
all: build

deps:
	@scripts/deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The main job: a default measured attempt (tandem vs fcontext, AOT and JIT players),
# ending with the gate's verdict and the path of its report. Exit: the gate's (0 PASS,
# 3 FAIL, 1 INVALID or aborted).
run: build
	@$(BUILD)/tandem attempt

demo: build
	@$(BUILD)/tandem demo

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)
