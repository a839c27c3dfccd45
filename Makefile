# uniheap: one entry point.
#   make          build everything (CMake + Ninja, in ./build; the Python
#                 extension in place in bindings-python/uniheap)
#   make test     install missing packages, build, run every test (ctest, pytest
#                 for the Python binding, pytest for tests/service, node --test
#                 for the Node binding, Surefire for the Java binding)
#   make test-asan  the C tests built with AddressSanitizer and UBSan (in
#                 ./build-asan), some shortened (see ASAN_SKIP)
#   make test-fuzz  the libFuzzer targets of tests/fuzz (clang, ./build-fuzz),
#                 a bounded number of runs each from the corpus in the repo
#   make python   build only the Python extension (pip install ./bindings-python
#                 installs it instead)
#   make node     build only the Node addon (bindings-node/build, and a
#                 stripped copy in bindings-node/prebuilds/ for npm pack)
#   make java     build only the Java binding's jar (bindings-java/java.mk)
#   make demo     build, then run the cross-language demo (scripts/demo.sh)
#   make bench    build, then run the C, Python, Node and Java benchmarks (bench/)
#   make ycsb     build, then run YCSB A-F from Java, Python and Node on
#                 uniheap and its peers (bench/ycsb/README.md; not in make test)
#   make install  build, then install into $(PREFIX) (default /usr/local;
#                 DESTDIR is honoured): programs, libuniheap, uniheap.h,
#                 pkg-config and CMake package files, man pages, systemd units
#   make deb      build, then the Debian package $(BUILD)/dist/uniheap_VERSION_ARCH.deb
#                 (CPack, packaging/deb.cmake)
#   make wheel    the Python wheel in $(BUILD)/dist (pip wheel ./bindings-python)
#   make test-packages  build the packages, then install and use each one as
#                 its users would (tests/packages/run.sh; needs root for dpkg)
#   make deps     install missing Debian, Python and npm packages (only if needed)
#   make clean    remove ./build and the in-place Python extension

BUILD ?= build
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo
CTEST_FLAGS ?= --output-on-failure -j2

DEB_PKGS := build-essential cmake ninja-build pkg-config libpmemobj-dev \
	libpmem2-dev libgrpc++-dev libprotobuf-dev protobuf-compiler \
	protobuf-compiler-grpc liblmdb-dev help2man systemd strace maven redis-server \
	clang libclang-rt-14-dev lintian

# sudo only when not already root.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

PY ?= python3
# Python packages the tests and benchmarks import: the import name, or
# import:package where the two differ (grpcio and its reflection client
# speak to heapd in tests/service; prometheus_client parses heapctl
# metrics there).
PY_PKGS := pytest lmdb setuptools grpc:grpcio grpc_reflection:grpcio-reflection \
	hdrh:hdrhistogram redis hiredis matplotlib sortedcontainers \
	prometheus_client:prometheus-client

# bench/ycsb runs Java on the JDK 25 the Java binding builds with (java.mk).
YCSB_JAVA_HOME ?= $(JAVA25_HOME)

PREFIX ?= /usr/local

# Node >= 20 (with its headers, /usr/include/node); npm packages of the
# Node binding's build, tests and benchmark come from its package-lock.json
# (npm install, which leaves the lock as it is: the lock lists every
# platform's optional build of lmdb's msgpackr-extract, as npm writes it;
# a lock without them is completed by every install, changing the tree).
NODE ?= node
NPM ?= npm
NODE_TESTS = bindings-node/test/*.test.js bench/ycsb/node/test/*.test.js

.PHONY: all deps test test-asan test-fuzz demo bench clean python node install ycsb ycsb-java \
	deb wheel test-packages

all: $(BUILD)/build.ninja
	cmake --build $(BUILD)
	@$(MAKE) --no-print-directory python
	@$(MAKE) --no-print-directory node
	@$(MAKE) --no-print-directory java

python: $(BUILD)/build.ninja
	cmake --build $(BUILD) --target uniheap
	cd bindings-python && UNIHEAP_BUILD=$(abspath $(BUILD)) \
		$(PY) -W ignore setup.py -q build_ext --inplace

node: $(BUILD)/build.ninja
	cmake --build $(BUILD) --target uniheap
	@UNIHEAP_BUILD=$(abspath $(BUILD)) $(NODE) bindings-node/scripts/build.js --prebuild

# make java, java-deps, java-test, java-bench (after all: the default goal).
include bindings-java/java.mk

# make ispn, ispn-deps, ispn-test: the Infinispan store (cluster/infinispan).
include cluster/infinispan/ispn.mk

# Configure once; later builds re-run cmake by themselves when a
# CMakeLists.txt or a globbed folder changes.
$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

# The C part only: the Python package installs with pip.
install: $(BUILD)/build.ninja
	cmake --build $(BUILD)
	cmake --install $(BUILD) --prefix $(PREFIX)

# The Debian package: every C target (CPack installs from this build),
# then cpack, then lintian's verdict (its tags fail the target: the ones
# that stay are explained in packaging/debian/lintian-overrides).
deb: $(BUILD)/build.ninja
	cmake --build $(BUILD)
	cd $(BUILD) && cpack -G DEB
	lintian --fail-on error,warning $(BUILD)/dist/uniheap_*.deb

# The wheel: the extension with libuniheap.so.0 beside it ($$ORIGIN rpath,
# as in the in-place build) and the .pyi stubs; built with the installed
# setuptools (no isolation: offline).
wheel: $(BUILD)/build.ninja
	cmake --build $(BUILD) --target uniheap
	UNIHEAP_BUILD=$(abspath $(BUILD)) $(PY) -m pip wheel -q --no-deps --no-build-isolation \
		-w $(BUILD)/dist ./bindings-python

# Each package installed and used as its users would (tests/packages):
# the .deb with dpkg, the wheel in a fresh venv, the npm tarball offline,
# the Maven artifact from the local repository.
test-packages: deb wheel node java-install
	@JAVA25_HOME=$(JAVA25_HOME) tests/packages/run.sh $(BUILD)

# Idempotent: apt-get runs only when a package is missing.
deps:
	@missing=""; \
	for p in $(DEB_PKGS); do \
		dpkg -s $$p 2>/dev/null | grep -q '^Status: install ok installed' || \
			missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "deps: installing$$missing"; \
		$(SUDO) apt-get update && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y \
			--no-install-recommends $$missing; \
	else \
		echo "deps: all build packages present"; \
	fi
	@missing=""; \
	for p in $(PY_PKGS); do \
		$(PY) -c "import $${p%%:*}" 2>/dev/null || missing="$$missing $${p#*:}"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "deps: pip installing$$missing"; \
		$(PY) -m pip install -q $$missing; \
	else \
		echo "deps: all Python packages present"; \
	fi
	@command -v $(NODE) >/dev/null || { echo "deps: Node.js >= 20 is missing (nodejs)"; exit 1; }
	@if [ ! -f bindings-node/node_modules/.package-lock.json ] || \
	    [ bindings-node/package-lock.json -nt bindings-node/node_modules/.package-lock.json ]; then \
		echo "deps: npm install (bindings-node, as package-lock.json pins it)"; \
		cd bindings-node && $(NPM) install --ignore-scripts --no-audit --no-fund --loglevel=error; \
	else \
		echo "deps: all npm packages present"; \
	fi
	@$(MAKE) --no-print-directory java-deps
	@$(MAKE) --no-print-directory ispn-deps
	@YCSB_JAVA_HOME=$(YCSB_JAVA_HOME) bench/ycsb/deps.sh

# Every runner always runs (each ends with its own summary); the exit
# status fails if any failed. scripts/cycles.py: no file-level circle of
# calls or includes in common/, libuniheap, heapd, the Python extension.
# tests/service: heapd as installed and run as
# a service (default socket, readiness, reflection, install, units).
# bench/ycsb: the YCSB ports' generator tests and a small end-to-end run;
# tests/demo: make demo on a temporary heap, every language's line present.
# tests/notify: a commit in each language wakes a waiter in each other one.
# tests/gc_model: C, Python, Node and Java processes share and re-link
# object graphs while GC cycles run back to back (UH_GC_MODEL_SECONDS).
# tests/grow: C, Python, Java and Node writers fill a 16 MiB heap that grows
# (to UH_GROW_TARGET, default 1G) while a reader of each language checks it,
# then again with heapd SIGKILLed.
# tests/xlang_maps: Python, Java and Node read each other's str/bytes values
# in one hash map, inline in their entries or objects, and replace them.
# ispn-test: the Infinispan store's contract tests and a three-JVM cluster.
test: deps all ycsb-java
	@$(PY) scripts/cycles.py --build $(BUILD); k=$$?; \
	ctest --test-dir $(BUILD) $(CTEST_FLAGS); c=$$?; \
	UNIHEAP_BUILD=$(abspath $(BUILD)) PYTHONPATH=bindings-python JAVA25_HOME=$(JAVA25_HOME) \
		$(PY) -m pytest bindings-python/tests -q -p no:cacheprovider; p=$$?; \
	UNIHEAP_BUILD=$(abspath $(BUILD)) JAVA25_HOME=$(JAVA25_HOME) \
		$(PY) -m pytest tests/service -q -p no:cacheprovider; s=$$?; \
	UNIHEAP_BUILD=$(abspath $(BUILD)) PYTHONPATH=bindings-python JAVA25_HOME=$(JAVA25_HOME) \
		$(PY) -m pytest bench/ycsb/python/tests tests/demo tests/notify tests/gc_model tests/grow \
		tests/xlang_maps -q \
		-p no:cacheprovider; y=$$?; \
	UNIHEAP_BUILD=$(abspath $(BUILD)) $(NODE) --test $(NODE_TESTS); n=$$?; \
	$(MAKE) --no-print-directory java-test; j=$$?; \
	$(MAKE) --no-print-directory ispn-test; i=$$?; \
	exit $$(( k || c || p || s || y || n || j || i ))

# The C tests under AddressSanitizer + UndefinedBehaviorSanitizer (every
# target but the protoc-generated code is instrumented; gRPC and protobuf
# are Debian's, uninstrumented). Left out: the campaigns that repeat the
# same commit, reap and recovery paths thousands of times with processes
# killed (crash_random, iso_kill, dt_*_crash, powerloss*): under the
# sanitizers they would take ~15 minutes, and those paths run here anyway
# in test_crash_enum (its first 12 crash points, live and frozen),
# test_client_death and test_damaged_heap (100 damaged heaps). Reports of
# every process (heapd included, which the tests stop without looking at
# its exit status) go to $(ASAN_BUILD)/reports: any report fails the run.
# SEGV/FPE/BUS are left to the default action: heapd's probe child is
# meant to die of them on a damaged file, and a test sees any other one.
# A report whose every line is LeakSanitizer's "Unable to get registers
# from thread N" is dropped: LSan could not stop a thread that was exiting
# while it checked the process at exit; that only takes roots away from
# the check (a leak it then reports still fails the run), it finds nothing.
# test_fork is left out: a forked child loads a second copy of libuniheap
# with dlmopen (ctlcopy.h), and a second ASan runtime refuses to start
# ("ASan runtime does not come first").
ASAN_BUILD ?= build-asan
ASAN_SKIP := ^(test_crash_random|test_iso_kill|test_dt_.*_crash|test_powerloss.*|test_fork)$$
ASAN_ENV := UH_CRASH_ENUM_MAX=12 UH_DAMAGE_CASES=100

test-asan: deps
	@[ -f $(ASAN_BUILD)/build.ninja ] || cmake -S . -B $(ASAN_BUILD) -G Ninja \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DUH_SANITIZE=address,undefined
	cmake --build $(ASAN_BUILD)
	@r=$(abspath $(ASAN_BUILD))/reports; rm -rf $$r && mkdir -p $$r; \
	ASAN_OPTIONS=log_path=$$r/asan:detect_leaks=1:handle_segv=0:handle_sigfpe=0:handle_sigbus=0 \
	UBSAN_OPTIONS=log_path=$$r/ubsan:print_stacktrace=1 \
	$(ASAN_ENV) ctest --test-dir $(ASAN_BUILD) $(CTEST_FLAGS) -E '$(ASAN_SKIP)'; c=$$?; \
	for f in $$r/*; do \
		[ -f "$$f" ] && ! grep -qv 'Unable to get registers from thread' "$$f" && rm -f "$$f"; \
	done; \
	if ls $$r/* >/dev/null 2>&1; then \
		echo "test-asan: sanitizer reports:"; cat $$r/*; exit 1; \
	fi; \
	echo "test-asan: no sanitizer report"; exit $$c

# libFuzzer targets (tests/fuzz): heapd's request handlers, and heapd's
# open path on heaps whose header, class table, arena directory and root
# map are patched. Each runs FUZZ_RUNS_<target> inputs (the corpus in
# tests/fuzz/corpus first; the run's new inputs stay in $(FUZZ_BUILD));
# a crash, a sanitizer report or a leak fails the run and leaves the
# input in $(FUZZ_BUILD). heap_header opens a pool per input (~10 ms).
FUZZ_BUILD ?= build-fuzz
FUZZ_TARGETS := heapd_requests heap_header
FUZZ_RUNS_heapd_requests ?= 20000
FUZZ_RUNS_heap_header ?= 300

test-fuzz: deps
	@[ -f $(FUZZ_BUILD)/build.ninja ] || CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) \
		-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUH_FUZZ=ON
	cmake --build $(FUZZ_BUILD) $(addprefix --target fuzz_,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do \
		w=$(FUZZ_BUILD)/corpus-$$t; mkdir -p $$w; \
		case $$t in heapd_requests) n=$(FUZZ_RUNS_heapd_requests);; \
			*) n=$(FUZZ_RUNS_heap_header);; esac; \
		echo "== fuzz_$$t: $$n runs"; \
		LSAN_OPTIONS=suppressions=$(abspath tests/fuzz/lsan.supp) \
		$(FUZZ_BUILD)/tests/fuzz/fuzz_$$t -runs=$$n -artifact_prefix=$(FUZZ_BUILD)/ \
			$$w tests/fuzz/corpus/$$t 2>$(FUZZ_BUILD)/fuzz_$$t.log; rc=$$?; \
		grep -E '^(#[0-9]+ +DONE|Done )' $(FUZZ_BUILD)/fuzz_$$t.log; \
		if [ $$rc -ne 0 ]; then tail -60 $(FUZZ_BUILD)/fuzz_$$t.log; \
			echo "test-fuzz: fuzz_$$t failed"; exit 1; fi; \
	done; echo "test-fuzz: no finding"

demo: deps all
	BUILD=$(BUILD) JAVA25_HOME=$(JAVA25_HOME) scripts/demo.sh

# Benchmarks are never part of `make test`. bench/c/run.sh, when present,
# knows how to run them; otherwise every built bench/c program runs once.
bench: deps all
	@if [ -x bench/c/run.sh ]; then \
		BUILD=$(BUILD) bench/c/run.sh; \
	elif [ -d $(BUILD)/bench/c ]; then \
		for b in $(BUILD)/bench/c/bench_*; do \
			[ -x "$$b" ] || continue; \
			echo "== $$b"; "$$b" || exit 1; \
		done; \
	else \
		echo "bench: no benchmarks (bench/c) in this tree"; \
	fi
	@echo "== bench/python/bench_py.py"
	@UNIHEAP_BUILD=$(abspath $(BUILD)) $(PY) bench/python/bench_py.py
	@echo "== bench/python/bytes_per_record.py (the YCSB table: uniheap against LMDB)"
	@UNIHEAP_BUILD=$(abspath $(BUILD)) $(PY) bench/python/bytes_per_record.py
	@echo "== bench/node/bench.js"
	@UNIHEAP_BUILD=$(abspath $(BUILD)) $(NODE) bench/node/bench.js
	@echo "== bench/java (JMH)"
	@$(MAKE) --no-print-directory java-bench
	@echo "== bench/notify/latency.py (wake-up latency across languages, and Redis pub/sub)"
	@UNIHEAP_BUILD=$(abspath $(BUILD)) $(PY) bench/notify/latency.py 5000
	@echo "== YCSB A-F from Python: uniheap, LMDB, in-process (20,000 records, memory class)"
	@UNIHEAP_BUILD=$(abspath $(BUILD)) YCSB_RECORDS=20000 YCSB_OPS=100000 YCSB_THREADS=1 \
		YCSB_LANGS=python YCSB_BACKENDS=uniheap,lmdb,memory YCSB_CLASSES=memory \
		YCSB_RESULTS=$(abspath results/ycsb-bench) PYTHONPATH=bench/ycsb $(PY) -m ycsbrun

# YCSB's site.ycsb.DB bindings (bench/ycsb/java) for the official client;
# the uniheap one uses the Java binding, installed in the local repository
# first (without its tests).
ycsb-java: java-check-jdk
	@$(MVN_OFFLINE) -q -f bindings-java -DskipTests install
	@$(MVN_OFFLINE) -q -f bench/ycsb/java -P uniheap package

# Benchmarks, never part of make test: YCSB_QUICK=1 for a run of a few
# minutes; YCSB_RECORDS, YCSB_OPS, YCSB_THREADS and more in
# bench/ycsb/ycsbrun/config.py.
ycsb: deps all ycsb-java
	UNIHEAP_BUILD=$(abspath $(BUILD)) YCSB_JAVA_HOME=$(YCSB_JAVA_HOME) \
		PYTHONPATH=bench/ycsb $(PY) -m ycsbrun

clean:
	rm -rf $(BUILD) bindings-python/build bindings-python/uniheap/_uniheap*.so \
		bindings-python/uniheap/libuniheap.so.0 bindings-node/build bindings-node/prebuilds \
		bindings-java/target \
		bench/java/target bench/ycsb/java/target
