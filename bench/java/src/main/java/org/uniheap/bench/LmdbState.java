package org.uniheap.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

import org.lmdbjava.Dbi;
import org.lmdbjava.DbiFlags;
import org.lmdbjava.Env;
import org.lmdbjava.EnvFlags;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The lmdbjava side of a benchmark: one database in an environment kept in
 * $UNIHEAP_BENCH_DIR (else /tmp), across forks. A benchmark's LMDB state
 * extends it, opens it in its setup and fills it when it is new.
 */
public abstract class LmdbState {
    Env<ByteBuffer> env;
    Dbi<ByteBuffer> db;

    /** Opens database name of the environment in folder, with flags;
     *  true when the folder did not exist before (the database is empty). */
    boolean open(String folder, String name, EnvFlags... flags) throws IOException {
        Path dir = Path.of(System.getenv().getOrDefault("UNIHEAP_BENCH_DIR", "/tmp"), folder);
        boolean fresh = !Files.exists(dir);
        Files.createDirectories(dir);
        env = Env.create().setMapSize(1L << 30).setMaxDbs(1).setMaxReaders(16).open(dir.toFile(), flags);
        db = env.openDbi(name, DbiFlags.MDB_CREATE);
        return fresh;
    }

    @TearDown(Level.Trial)
    public void teardown() {
        env.close();
    }
}
