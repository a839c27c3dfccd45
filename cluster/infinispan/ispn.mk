# The Infinispan store's part of the top Makefile (included by it, after
# bindings-java/java.mk, whose JDK 25 selection and MVN it uses).
#   make ispn        build cluster/infinispan/target/uniheap-infinispan-<v>.jar
#   make ispn-test   its JUnit tests (store contract, three-node cluster) against ./build
#   make ispn-ycsb   YCSB on one node: uniheap store vs SoftIndexFileStore vs none
#                    (ISPN_YCSB_NODES=3: on three nodes; knobs in ycsb.sh)
#   make ispn-deps   (part of make deps) fetch what the module needs, so that
#                    the other targets run offline
# The module depends on the Java binding's jar from the local repository:
# each target installs it first (make java's jar, without its tests).
# ISPN_ENTRIES sets the cluster test's entry count (default 10000).

ISPN_ENTRIES ?= 10000

.PHONY: ispn ispn-deps ispn-test ispn-ycsb

ispn-deps: java-check-jdk
	@$(MVN) -q -f bindings-java -DskipTests install
	@$(MVN) -q -f cluster/infinispan dependency:go-offline
	@# go-offline leaves out versions that Maven's own resolution picks
	@# (wildfly-common 2.0.1 from an empty repository): build once online too,
	@# which resolves the compile and test class paths as the offline runs do.
	@$(MVN) -q -f cluster/infinispan -DskipTests package

ispn: java-check-jdk
	@$(MVN_OFFLINE) -q -f bindings-java -DskipTests install
	@$(MVN_OFFLINE) -q -f cluster/infinispan -DskipTests package

ispn-test: java-check-jdk
	@$(MVN_OFFLINE) -q -f bindings-java -DskipTests install
	@$(MVN_OFFLINE) -f cluster/infinispan -Dispn.entries=$(ISPN_ENTRIES) test

# YCSB A-D, F on one embedded node (or three: ISPN_YCSB_NODES=3): uniheap
# store vs SoftIndexFileStore vs no store (cluster/infinispan/ycsb.sh; a
# benchmark, not part of make test).
ispn-ycsb: java-check-jdk
	@$(MVN_OFFLINE) -q -f bindings-java -DskipTests install
	@$(MVN_OFFLINE) -q -f cluster/infinispan -DskipTests package dependency:build-classpath \
		-Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime
	@JAVA=$(JAVA25_HOME)/bin/java UNIHEAP_BUILD=$(abspath $(BUILD)) cluster/infinispan/ycsb.sh
