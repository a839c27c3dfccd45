package org.uniheap;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Declares a persistent class: an interface extending {@link PObject}
 * whose abstract methods are its fields, a getter {@code T name()} and an
 * optional setter {@code void name(T value)} each. Fields are laid out in
 * the order their first method is declared, after the fields of the
 * persistent interfaces it extends.
 *
 * {@snippet :
 * @Persistent("bank.Account")
 * public interface Account extends PObject {
 *     String owner();
 *     void owner(String owner);
 *     long balance();
 *     void balance(long balance);
 *     default void deposit(long amount) { balance(balance() + amount); }
 * }
 * }
 *
 * <p>Field types: {@code boolean byte short int long float double},
 * {@link String}, {@code byte[]}, {@link PObject} (a reference to any
 * object), another persistent interface (a typed reference), and
 * {@link PMap}, {@link PSortedMap}, {@link PList}, {@link PArray}.
 *
 * <p>The uniheap annotation processor (in the uniheap jar) generates the
 * proxy class at compile time. Since JDK 23 javac runs processors found on
 * the class path only when asked: add {@code <proc>full</proc>} to the
 * maven-compiler-plugin configuration (or pass {@code -proc:full} to javac).
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target(ElementType.TYPE)
public @interface Persistent {
    /** The class's language-neutral name in the heap, e.g. {@code "bank.Account"}:
     * other processes and languages find the class by this name. */
    String value();
}
