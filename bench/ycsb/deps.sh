#!/usr/bin/env bash
# deps.sh -- what `make deps` installs for bench/ycsb beyond the Debian and
# pip packages the Makefile lists: the Node port's npm packages (exactly
# those of node/package-lock.json) and the Maven artifacts of java/ (the
# official YCSB client site.ycsb:core:0.17.0, lmdbjava, Chronicle Map, and
# the plugins the build uses), fetched once so that builds, tests and
# benchmark runs work offline afterwards. Idempotent: each step runs only
# when something is missing.
set -euo pipefail
cd "$(dirname "$0")"

JAVA_HOME=${YCSB_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "deps: bench/ycsb needs Node.js >= 20 with npm (node and npm are not on PATH)" >&2
	exit 1
fi
stamp=node/node_modules/.installed-from-lock
if [ ! -f "$stamp" ] || [ node/package-lock.json -nt "$stamp" ]; then
	echo "deps: npm install in bench/ycsb/node (as package-lock.json pins it)"
	# npm install follows the lock and leaves it unchanged: the lock lists
	# every platform's optional builds of native packages (lmdb's
	# msgpackr-extract), as npm writes them; a lock without them is
	# completed by every install, changing the tree.
	(cd node && npm install --no-audit --no-fund --loglevel=error)
	touch "$stamp"
else
	echo "deps: bench/ycsb/node packages present"
fi

if [ ! -x "$JAVA_HOME/bin/java" ]; then
	echo "deps: bench/ycsb needs JDK 25 at $JAVA_HOME (set YCSB_JAVA_HOME to another one)" >&2
	exit 1
fi
if ! command -v mvn >/dev/null; then
	echo "deps: bench/ycsb needs Maven (mvn is not on PATH)" >&2
	exit 1
fi
export JAVA_HOME
# Maven's own libraries call sun.misc.Unsafe; JDK 25 warns unless allowed.
export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
goals="dependency:resolve dependency:resolve-plugins"
if mvn -o -q -B -f java $goals >/dev/null 2>&1; then
	echo "deps: bench/ycsb/java Maven artifacts present"
else
	echo "deps: fetching the Maven artifacts of bench/ycsb/java"
	mvn -q -B -f java $goals
	# the package phase's own plugins (resources, compiler, jar, ...)
	mvn -q -B -f java -DskipTests package >/dev/null
fi
