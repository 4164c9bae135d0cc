package dev.sealbox.client;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * A file written whole or not at all: the bytes go to a temporary file beside the
 * target (same directory, so the rename stays on one file system; mode 0600), which
 * commit() flushes to disk (fsync), renames over the target and makes durable (fsync
 * of the directory). close() without commit() deletes it and leaves the target as
 * it was.
 */
final class AtomicFile implements AutoCloseable {
  private final Path target;
  private final Path temporary;
  private final FileChannel channel;
  private final OutputStream out;
  private boolean committed;

  AtomicFile(Path target) throws IOException {
    this.target = target.toAbsolutePath();
    Path dir = this.target.getParent();
    this.temporary = Files.createTempFile(dir, "." + this.target.getFileName() + ".", ".partial",
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    this.channel = FileChannel.open(temporary, StandardOpenOption.WRITE);
    this.out = Channels.newOutputStream(channel);
  }

  /** Where to write (unbuffered: wrap it, and flush before commit). */
  OutputStream stream() {
    return out;
  }

  /** Starts again from nothing (for a retried attempt). */
  void truncate() throws IOException {
    channel.truncate(0);
    channel.position(0);
  }

  void commit() throws IOException {
    channel.force(true);
    channel.close();
    Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
    committed = true;
    try (FileChannel dir = FileChannel.open(target.getParent(), StandardOpenOption.READ)) {
      dir.force(true);
    }
  }

  @Override
  public void close() throws IOException {
    if (!committed) {
      channel.close();
      Files.deleteIfExists(temporary);
    }
  }
}
