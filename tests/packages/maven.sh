#!/bin/sh
# tests/packages/maven.sh BUILD: the Maven artifact as a Java user gets it.
# Checks what `make java-install` put in the local repository (the jar as
# the module org.uniheap, its sources and javadoc jars, a POM with licence,
# SCM and developers), then builds tests/packages/maven, copied out of the
# checkout, offline against it (the jar's annotation processor makes the
# proxy), and runs its README example twice on the module path with
# --enable-native-access=org.uniheap against a heapd on a temporary heap:
# no warning about restricted methods, the second run sees the first's
# commit. JAVA25_HOME names the JDK 25 (the top Makefile finds it).
set -u
. "$(dirname "$0")/common.sh"

BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export JAVA_HOME="${JAVA25_HOME:?JAVA25_HOME names a JDK 25}"
REPO="${MAVEN_REPO:-$HOME/.m2/repository}/org/uniheap/uniheap/0.1.0"
JAR="$REPO/uniheap-0.1.0.jar"
APP="$TMP/app"

check "the jar, sources and javadoc jars and POM are in the local repository" \
	test -f "$JAR" -a -f "$REPO/uniheap-0.1.0-sources.jar" \
	-a -f "$REPO/uniheap-0.1.0-javadoc.jar" -a -f "$REPO/uniheap-0.1.0.pom"
check "the jar is the module org.uniheap, providing the annotation processor" \
	sh -c "'$JAVA_HOME/bin/jar' --describe-module --file '$JAR' >'$TMP/module' &&
		grep -q '^org.uniheap' '$TMP/module' && grep -q '^exports org.uniheap$' '$TMP/module' &&
		grep -q 'provides javax.annotation.processing.Processor with org.uniheap.processor.PersistentProcessor' '$TMP/module'"
check "the POM names a licence, SCM and developers" \
	sh -c "grep -q '<licenses>' '$REPO/uniheap-0.1.0.pom' && grep -q '<scm>' '$REPO/uniheap-0.1.0.pom' &&
		grep -q '<developers>' '$REPO/uniheap-0.1.0.pom'"
check "the sources jar holds module-info.java, the javadoc jar its page" \
	sh -c "unzip -l '$REPO/uniheap-0.1.0-sources.jar' | grep -q ' module-info.java$' &&
		unzip -l '$REPO/uniheap-0.1.0-javadoc.jar' | grep -q 'org.uniheap/module-summary.html'"

cp -r "$SRC/tests/packages/maven" "$APP"
check "a separate Maven project builds offline against the installed artifact" \
	sh -c "cd '$APP' && MAVEN_OPTS=--sun-misc-unsafe-memory-access=allow mvn -B -ntp -q -o compile"
check "the jar's annotation processor generated the proxy" \
	test -f "$APP/target/classes/org/example/tour/Point_Proxy.class"

check "heapd starts on a temporary heap" start_heapd "$BUILD/heapd" "$BUILD/heapctl"
# uniheap on the module path, the program on the class path (a program of
# its own module works the same, with requires org.uniheap). UNIHEAP_LIB is
# unset: the jar's own libuniheap is used.
tour() {
	env -u UNIHEAP_LIB "$JAVA_HOME/bin/java" --module-path "$JAR" --add-modules org.uniheap \
		--enable-native-access=org.uniheap -cp "$APP/target/classes" org.example.tour.Tour \
		>"$TMP/tour.out" 2>"$TMP/tour.err"
	rc=$?
	cat "$TMP/tour.out" "$TMP/tour.err"
	[ $rc -eq 0 ] && ! grep -q 'restricted method' "$TMP/tour.err" && grep -qx "$1" "$TMP/tour.out"
}
check "README tour on the module path, no native-access warning" tour "x=1 y=2"
check "README tour, second run sees the first's commit" tour "x=2 y=4"
summary
