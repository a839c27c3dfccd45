# The Java binding's part of the top Makefile (included by it).
#   make java        build the jar (bindings-java/target/uniheap-<v>.jar)
#   make java-test   run the JUnit tests (Surefire) against ./build
#   make java-bench  run the JMH benchmark (bench/java)
#   make java-install  the jar with its sources and javadoc jars (-P release)
#                    into the local Maven repository (~/.m2), without tests
# Maven runs on a JDK 25, found under /usr/lib/jvm (or JAVA25_HOME=...);
# make deps checks it is there and fetches every Maven plugin and
# dependency the build, the tests and the benchmark need, so that the
# other targets run offline (-o).

JAVA25_HOME ?= $(shell for d in /usr/lib/jvm/*; do \
	[ -x "$$d/bin/javac" ] && "$$d/bin/java" -version 2>&1 | \
	grep -q 'version "25' && { echo "$$d"; break; }; done)
# Maven 3.8 on JDK 25: allow its libraries' sun.misc.Unsafe use quietly.
MVN = JAVA_HOME=$(JAVA25_HOME) \
	MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow $(MAVEN_OPTS)" \
	mvn -B -ntp -Duniheap.build=$(abspath $(BUILD))
MVN_OFFLINE = $(MVN) -o

.PHONY: java java-deps java-test java-bench java-check-jdk java-install

java-check-jdk:
	@[ -n "$(JAVA25_HOME)" ] || { echo "java: no JDK 25 under /usr/lib/jvm" \
		"(install Temurin 25 there, or set JAVA25_HOME=...)" >&2; exit 1; }

java: java-check-jdk
	@$(MVN) -q -f bindings-java -DskipTests package

# dependency:go-offline fetches the plugins and dependencies of each
# project (surefire's JUnit provider and JMH's processor are declared as
# dependencies so that it sees them). The benchmark depends on the binding
# and on bench/ycsb/java (its uniheap DB's record class and the records'
# encoding): both are installed in the local repository first (without
# tests; bench/ycsb/java with -P uniheap, which needs the binding).
java-deps: java-check-jdk
	@echo "deps: JDK 25 at $(JAVA25_HOME); fetching Maven plugins and dependencies"
	@$(MVN) -q -f bindings-java -P release dependency:go-offline
	@$(MVN) -q -f bindings-java -DskipTests install
	@$(MVN) -q -f bench/ycsb/java -P uniheap -DskipTests install
	@$(MVN) -q -f bench/java dependency:go-offline

java-install: java-check-jdk
	@$(MVN_OFFLINE) -q -f bindings-java -P release -DskipTests install

java-test: java-check-jdk
	@$(MVN_OFFLINE) -f bindings-java -Duniheap.python=$(PY) test

java-bench: java-check-jdk
	@$(MVN_OFFLINE) -q -f bindings-java -DskipTests install
	@$(MVN_OFFLINE) -q -f bench/ycsb/java -P uniheap -DskipTests install
	@$(MVN_OFFLINE) -q -f bench/java package dependency:build-classpath \
		-Dmdep.outputFile=target/classpath.txt
	@JAVA_HOME=$(JAVA25_HOME) UNIHEAP_BUILD=$(abspath $(BUILD)) bench/java/run.sh
