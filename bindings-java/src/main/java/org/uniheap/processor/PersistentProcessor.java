package org.uniheap.processor;

import java.io.IOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import javax.annotation.processing.AbstractProcessor;
import javax.annotation.processing.RoundEnvironment;
import javax.annotation.processing.SupportedAnnotationTypes;
import javax.lang.model.SourceVersion;
import javax.lang.model.element.AnnotationMirror;
import javax.lang.model.element.Element;
import javax.lang.model.element.ElementKind;
import javax.lang.model.element.ExecutableElement;
import javax.lang.model.element.Modifier;
import javax.lang.model.element.PackageElement;
import javax.lang.model.element.TypeElement;
import javax.lang.model.type.ArrayType;
import javax.lang.model.type.DeclaredType;
import javax.lang.model.type.TypeKind;
import javax.lang.model.type.TypeMirror;
import javax.lang.model.util.ElementFilter;
import javax.tools.Diagnostic;

/**
 * Generates the proxy class of every {@code @org.uniheap.Persistent}
 * interface at compile time: {@code <Interface>_Proxy} in the same package
 * (nested interfaces: {@code Outer_Inner_Proxy}), a final subclass of
 * {@code org.uniheap.ProxyBase} whose getters read the mapped heap at
 * constant offsets. The offsets follow the heap format's layout rule
 * (schemas/FORMAT.md 3.3: declaration order, natural alignment, after the
 * 16-byte header); the runtime checks them against the heap's class table.
 *
 * <p>Since JDK 23 javac runs it only when asked: {@code -proc:full}, or
 * {@code <proc>full</proc>} (or {@code <annotationProcessorPaths>}) in
 * maven-compiler-plugin.
 */
@SupportedAnnotationTypes("org.uniheap.Persistent")
public final class PersistentProcessor extends AbstractProcessor {
    private static final String PERSISTENT = "org.uniheap.Persistent";
    private static final String POBJECT = "org.uniheap.PObject";
    private static final String INLINE = "org.uniheap.Inline";
    private static final Pattern FIELD_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");
    private static final Set<String> RESERVED = Set.of("heap", "ref", "className", "classId",
            "fieldNames", "fieldValues", "fieldMap", "getField", "setField", "as", "isLive", "equals", "hashCode", "toString",
            "getClass", "clone", "finalize", "notify", "notifyAll", "wait");
    private static final Map<String, Integer> COLLECTIONS = Map.of("org.uniheap.PMap", 8,
            "org.uniheap.PSortedMap", 11, "org.uniheap.PList", 6, "org.uniheap.PArray", 5);

    /** One field: its name, type code, Java type, size, and whether the
     * interface declares a setter. */
    private record Field(String name, int code, TypeMirror type, String target, boolean getter,
                         boolean setter, Element where, int capacity) {
        /** Bytes in the object (FORMAT.md 3.2): an inline field's length
         * word and capacity, else its type's size. */
        int size() {
            if (capacity > 0)
                return 4 + capacity;
            return switch (code) {
                case 1, 2 -> 1;
                case 3 -> 2;
                case 4, 6 -> 4;
                default -> 8;
            };
        }

        /** Its alignment (FORMAT.md 3.3): 4 for an inline field, else its size. */
        int align() {
            return capacity > 0 ? 4 : size();
        }
    }

    /** A field failed a rule: the processor reports it on the element. */
    private static final class Bad extends Exception {
        private static final long serialVersionUID = 1L;
        final transient Element where;

        Bad(Element where, String msg) {
            super(msg);
            this.where = where;
        }
    }

    @Override
    public SourceVersion getSupportedSourceVersion() {
        return SourceVersion.latestSupported();
    }

    @Override
    public boolean process(Set<? extends TypeElement> annotations, RoundEnvironment round) {
        TypeElement ann = processingEnv.getElementUtils().getTypeElement(PERSISTENT);
        if (ann == null)
            return false;
        for (Element e : round.getElementsAnnotatedWith(ann)) {
            try {
                TypeElement type = check(e);
                List<Field> fields = fields(type, new ArrayList<>());
                checkUnimplemented(type);
                write(type, fields);
            } catch (Bad b) {
                processingEnv.getMessager().printMessage(Diagnostic.Kind.ERROR, b.getMessage(), b.where);
            } catch (IOException io) {
                processingEnv.getMessager().printMessage(Diagnostic.Kind.ERROR,
                        "cannot write the proxy class: " + io.getMessage(), e);
            }
        }
        return true;
    }

    private TypeElement check(Element e) throws Bad {
        if (e.getKind() != ElementKind.INTERFACE)
            throw new Bad(e, "@Persistent applies to interfaces (extending org.uniheap.PObject), not to "
                    + e.getKind().toString().toLowerCase());
        TypeElement type = (TypeElement) e;
        TypeMirror pobject = processingEnv.getElementUtils().getTypeElement(POBJECT).asType();
        if (!processingEnv.getTypeUtils().isAssignable(type.asType(), pobject))
            throw new Bad(e, type.getSimpleName() + " must extend org.uniheap.PObject");
        if (!type.getTypeParameters().isEmpty())
            throw new Bad(e, "a persistent interface cannot have type parameters");
        for (Element x = type; x instanceof TypeElement; x = x.getEnclosingElement())
            if (x.getModifiers().contains(Modifier.PRIVATE))
                throw new Bad(e, "a persistent interface cannot be private (its proxy class is "
                        + "generated beside it)");
        String name = heapName(type);
        if (name.isEmpty())
            throw new Bad(e, "@Persistent needs the class's language-neutral heap name, e.g. "
                    + "@Persistent(\"app." + type.getSimpleName() + "\")");
        if (name.length() > 255)
            throw new Bad(e, "heap class names have at most 255 bytes");
        return type;
    }

    private static String heapName(TypeElement type) {
        for (var am : type.getAnnotationMirrors()) {
            if (!((TypeElement) am.getAnnotationType().asElement()).getQualifiedName().contentEquals(PERSISTENT))
                continue;
            for (var v : am.getElementValues().entrySet())
                if (v.getKey().getSimpleName().contentEquals("value"))
                    return String.valueOf(v.getValue().getValue());
        }
        return "";
    }

    private boolean isPersistent(TypeElement t) {
        for (var am : t.getAnnotationMirrors())
            if (((TypeElement) am.getAnnotationType().asElement()).getQualifiedName().contentEquals(PERSISTENT))
                return true;
        return false;
    }

    /** Fields in layout order: those of the persistent interfaces it extends
     * (in extends order), then its own, in the order first declared. */
    private List<Field> fields(TypeElement type, List<TypeElement> path) throws Bad {
        if (path.contains(type))
            throw new Bad(type, "cyclic inheritance");
        path.add(type);
        Map<String, Field> all = new LinkedHashMap<>();
        for (TypeMirror sup : type.getInterfaces()) {
            TypeElement s = (TypeElement) ((DeclaredType) sup).asElement();
            if (!isPersistent(s))
                continue;
            for (Field f : fields(s, path)) {
                Field had = all.putIfAbsent(f.name, f);
                if (had != null && had.where != f.where)
                    throw new Bad(type, "field '" + f.name + "' is inherited twice, from "
                            + had.where.getEnclosingElement() + " and " + f.where.getEnclosingElement());
            }
        }
        path.remove(type);
        Map<String, Field> own = new LinkedHashMap<>();
        for (ExecutableElement m : ElementFilter.methodsIn(type.getEnclosedElements())) {
            Set<Modifier> mods = m.getModifiers();
            if (mods.contains(Modifier.DEFAULT) || mods.contains(Modifier.STATIC) || mods.contains(Modifier.PRIVATE))
                continue;
            Field f = accessor(m);
            if (all.containsKey(f.name))
                throw new Bad(m, "field '" + f.name + "' is already declared by "
                        + all.get(f.name).where.getEnclosingElement());
            Field had = own.get(f.name);
            if (had == null) {
                own.put(f.name, f);
                continue;
            }
            if (!processingEnv.getTypeUtils().isSameType(had.type, f.type))
                throw new Bad(m, "field '" + f.name + "': getter and setter disagree on its type ("
                        + had.type + " vs " + f.type + ")");
            if (had.getter && f.getter || had.setter && f.setter)
                throw new Bad(m, "field '" + f.name + "' has two " + (f.setter ? "setters" : "getters"));
            if (had.capacity > 0 && f.capacity > 0 && had.capacity != f.capacity)
                throw new Bad(m, "field '" + f.name + "': getter and setter disagree on its @Inline "
                        + "capacity (" + had.capacity + " vs " + f.capacity + ")");
            Field in = had.capacity > 0 ? had : f;     // @Inline on either accessor
            own.put(f.name, new Field(f.name, in.code, f.type, f.target, true, true, had.where,
                    in.capacity));
        }
        for (Field f : own.values()) {
            if (!f.getter)
                throw new Bad(f.where, "field '" + f.name + "' has a setter but no getter "
                        + f.type + " " + f.name + "()");
            all.put(f.name, f);
        }
        return new ArrayList<>(all.values());
    }

    /** A getter {@code T name()} or a setter {@code void name(T v)}. */
    private Field accessor(ExecutableElement m) throws Bad {
        String name = m.getSimpleName().toString();
        boolean isVoid = m.getReturnType().getKind() == TypeKind.VOID;
        boolean getter = m.getParameters().isEmpty() && !isVoid;
        boolean setter = m.getParameters().size() == 1 && isVoid;
        if (!getter && !setter)
            throw new Bad(m, "'" + name + "': a persistent interface's abstract methods are fields: "
                    + "a getter T " + name + "() and a setter void " + name + "(T value); make other "
                    + "methods default methods");
        if (!m.getTypeParameters().isEmpty() || !m.getThrownTypes().isEmpty())
            throw new Bad(m, "'" + name + "': field accessors have no type parameters and throw nothing");
        if (RESERVED.contains(name))
            throw new Bad(m, "'" + name + "' is a method of PObject or Object: name the field otherwise");
        if (!FIELD_NAME.matcher(name).matches())
            throw new Bad(m, "field name '" + name + "' is not [A-Za-z_][A-Za-z0-9_]* of 1..63 characters");
        TypeMirror t = getter ? m.getReturnType() : m.getParameters().get(0).asType();
        int code;
        String target = null;
        switch (t.getKind()) {
            case BOOLEAN -> code = 1;
            case BYTE -> code = 2;
            case SHORT -> code = 3;
            case INT -> code = 4;
            case LONG -> code = 5;
            case FLOAT -> code = 6;
            case DOUBLE -> code = 7;
            case ARRAY -> {
                if (((ArrayType) t).getComponentType().getKind() != TypeKind.BYTE)
                    throw badType(m, name, t);
                code = 10;
            }
            case DECLARED -> {
                TypeElement te = (TypeElement) ((DeclaredType) t).asElement();
                String q = te.getQualifiedName().toString();
                if (q.equals("java.lang.String")) {
                    code = 9;
                } else if (q.equals(POBJECT)) {
                    code = 8;
                } else if (COLLECTIONS.containsKey(q) || isPersistent(te)) {
                    code = 8;
                    target = q;
                } else {
                    throw badType(m, name, t);
                }
            }
            default -> throw badType(m, name, t);
        }
        int capacity = inlineCapacity(m, name);
        if (capacity > 0) {
            if (code != 9 && code != 10)
                throw new Bad(m, "field '" + name + "': @Inline applies to String and byte[] fields");
            code = code == 9 ? 11 : 12;
        }
        return new Field(name, code, t, target, getter, setter, m, capacity);
    }

    /** The capacity of an {@code @Inline(n)} on m (1..65535), 0 without one. */
    private static int inlineCapacity(ExecutableElement m, String name) throws Bad {
        for (AnnotationMirror am : m.getAnnotationMirrors()) {
            if (!((TypeElement) am.getAnnotationType().asElement()).getQualifiedName()
                    .contentEquals(INLINE))
                continue;
            for (var e : am.getElementValues().entrySet()) {
                if (!e.getKey().getSimpleName().contentEquals("value"))
                    continue;
                int n = (Integer) e.getValue().getValue();
                if (n < 1 || n > 65535)
                    throw new Bad(m, "field '" + name + "': @Inline(" + n + "): the capacity is 1 "
                            + "to 65535 bytes");
                return n;
            }
        }
        return 0;
    }

    private static Bad badType(Element m, String name, TypeMirror t) {
        return new Bad(m, "field '" + name + "' has type " + t + ": persistent fields are boolean, "
                + "byte, short, int, long, float, double, String, byte[], PObject, a @Persistent "
                + "interface, PMap, PSortedMap, PList or PArray");
    }

    /* Abstract methods from non-persistent superinterfaces would have no
     * implementation in the proxy. */
    private void checkUnimplemented(TypeElement type) throws Bad {
        for (ExecutableElement m : ElementFilter.methodsIn(processingEnv.getElementUtils().getAllMembers(type))) {
            if (!m.getModifiers().contains(Modifier.ABSTRACT))
                continue;
            TypeElement owner = (TypeElement) m.getEnclosingElement();
            String q = owner.getQualifiedName().toString();
            if (q.equals(POBJECT) || q.equals("java.lang.Object") || isPersistent(owner))
                continue;
            throw new Bad(type, "method " + owner.getSimpleName() + "." + m.getSimpleName()
                    + " has no implementation: persistent interfaces may extend only PObject, other "
                    + "@Persistent interfaces and interfaces whose methods are all default");
        }
    }

    // ---- code generation ----

    private void write(TypeElement type, List<Field> fields) throws IOException {
        PackageElement pkg = processingEnv.getElementUtils().getPackageOf(type);
        String pkgName = pkg.isUnnamed() ? "" : pkg.getQualifiedName().toString();
        String binary = processingEnv.getElementUtils().getBinaryName(type).toString();
        String flat = (pkgName.isEmpty() ? binary : binary.substring(pkgName.length() + 1)).replace('$', '_');
        String cls = flat + "_Proxy";
        String iface = type.getQualifiedName().toString();

        int pos = 16;
        int[] offsets = new int[fields.size()];
        for (int i = 0; i < offsets.length; i++) {
            int align = fields.get(i).align();
            pos = (pos + align - 1) / align * align;
            offsets[i] = pos;
            pos += fields.get(i).size();
        }
        int payload = (pos + 7) / 8 * 8 - 16;

        StringBuilder src = new StringBuilder();
        if (!pkgName.isEmpty())
            src.append("package ").append(pkgName).append(";\n\n");
        src.append("/** Generated by the uniheap annotation processor from {@link ").append(iface)
                .append("}: do not edit. */\n")
                .append("@javax.annotation.processing.Generated(\"org.uniheap.processor.PersistentProcessor\")\n")
                .append("final class ").append(cls).append(" extends org.uniheap.ProxyBase implements ")
                .append(iface).append(" {\n");
        src.append("    static final org.uniheap.ProxyBase.Layout LAYOUT = org.uniheap.ProxyBase.declare(\n")
                .append("            ").append(iface).append(".class, ").append(literal(heapName(type)))
                .append(", ").append(cls).append("::new,\n")
                .append("            new String[] {");
        join(src, fields, f -> literal(f.name));
        src.append("},\n            new int[] {");
        join(src, fields, f -> String.valueOf(f.code));
        src.append("},\n            new Class<?>[] {");
        join(src, fields, f -> f.target == null ? "null" : f.target + ".class");
        src.append("},\n            new int[] {");
        for (int i = 0; i < offsets.length; i++)
            src.append(i > 0 ? ", " : "").append(offsets[i]);
        src.append("},\n            new int[] {");
        join(src, fields, f -> String.valueOf(f.capacity));
        src.append("}, ").append(payload).append(");\n\n");
        src.append("    private ").append(cls).append("(org.uniheap.ProxyBase.Init init) {\n")
                .append("        super(init);\n    }\n");
        for (int i = 0; i < fields.size(); i++)
            accessors(src, fields.get(i), i, offsets[i]);
        src.append("}\n");

        String file = pkgName.isEmpty() ? cls : pkgName + "." + cls;
        try (Writer w = processingEnv.getFiler().createSourceFile(file, type).openWriter()) {
            w.write(src.toString());
        }
    }

    private interface Text {
        String of(Field f);
    }

    private static void join(StringBuilder sb, List<Field> fields, Text t) {
        for (int i = 0; i < fields.size(); i++)
            sb.append(i > 0 ? ", " : "").append(t.of(fields.get(i)));
    }

    private static String literal(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\')
                sb.append('\\').append(c);
            else if (c < 0x20 || c > 0x7e)
                sb.append(String.format("\\u%04x", (int) c));
            else
                sb.append(c);
        }
        return sb.append('"').toString();
    }

    private static void accessors(StringBuilder src, Field f, int i, int off) {
        String t = f.type.toString();
        String kind = switch (f.code) {
            case 1 -> "Bool";
            case 2 -> "I8";
            case 3 -> "I16";
            case 4 -> "I32";
            case 5 -> "I64";
            case 6 -> "F32";
            case 7 -> "F64";
            case 9 -> "String";
            case 10 -> "Bytes";
            case 11 -> "InlineString";
            case 12 -> "InlineBytes";
            default -> "Ref";
        };
        src.append("\n    @Override\n");
        if (f.code == 8) {
            String erased = f.target == null ? "org.uniheap.PObject" : f.target;
            if (!t.equals(erased))
                src.append("    @SuppressWarnings(\"unchecked\")\n");
            src.append("    public ").append(t).append(' ').append(f.name).append("() {\n")
                    .append("        return (").append(t).append(") getRef(").append(off).append(", ")
                    .append(i).append(", ").append(erased).append(".class);\n    }\n");
        } else {
            src.append("    public ").append(t).append(' ').append(f.name).append("() {\n")
                    .append("        return get").append(kind).append('(').append(off).append(", ")
                    .append(i).append(");\n    }\n");
        }
        if (!f.setter)
            return;
        src.append("\n    @Override\n    public void ").append(f.name).append('(').append(t)
                .append(" value) {\n        set").append(kind).append('(').append(i)
                .append(", value);\n    }\n");
    }
}
