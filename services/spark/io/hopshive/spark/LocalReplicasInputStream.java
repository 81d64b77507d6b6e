package io.hopshive.spark;

import java.io.EOFException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.zip.CRC32C;

import org.apache.hadoop.fs.ChecksumException;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSInputStream;

/**
 * A file read straight from the block files a namenode on this host holds (short-circuit
 * reads): each 64 KiB chunk is checked against its stored CRC32C before any of it is
 * returned, as the namenode checks what it streams.  A block file that is gone, unreadable,
 * short or corrupt hands the stream over, at the position reached, to the WebHDFS stream the
 * fallback opens (the namenode then reads, reports and skips the bad replica).
 */
final class LocalReplicasInputStream extends FSInputStream {
    /** Opens the WebHDFS stream of the same file. */
    interface Fallback {
        FSDataInputStream open() throws IOException;
    }

    private final LocalReplicas replicas;
    private final Fallback fallback;
    private final RandomAccessFile[] files;
    private final byte[][] checksums;
    private final byte[] chunk;
    private final CRC32C crc = new CRC32C();
    private long pos;
    private long chunkStart = -1;
    private int chunkLength;
    private FSDataInputStream remote;
    private boolean closed;

    LocalReplicasInputStream(LocalReplicas replicas, Fallback fallback) {
        this.replicas = replicas;
        this.fallback = fallback;
        this.files = new RandomAccessFile[replicas.blocks.size()];
        this.checksums = new byte[replicas.blocks.size()][];
        this.chunk = new byte[replicas.bytesPerChecksum];
    }

    @Override
    public synchronized int read(byte[] buffer, int offset, int length) throws IOException {
        if (closed) {
            throw new IOException("stream closed");
        }
        if (length == 0) {
            return 0;
        }
        if (pos >= replicas.length) {
            return -1;
        }
        if (remote == null) {
            try {
                loadChunk();
            } catch (IOException exc) {
                remote = fallback.open();
                remote.seek(pos);
            }
        }
        if (remote != null) {
            int read = remote.read(buffer, offset, length);
            if (read > 0) {
                pos += read;
            }
            return read;
        }
        int from = (int) (pos - chunkStart);
        int count = Math.min(length, chunkLength - from);
        System.arraycopy(chunk, from, buffer, offset, count);
        pos += count;
        return count;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int read = read(one, 0, 1);
        return read < 0 ? -1 : one[0] & 0xff;
    }

    /** Makes the chunk holding {@code pos} the current one, read and checked. */
    private void loadChunk() throws IOException {
        if (chunkStart >= 0 && pos >= chunkStart && pos < chunkStart + chunkLength) {
            return;
        }
        int index = replicas.blockAt(pos);
        LocalReplicas.Block block = replicas.blocks.get(index);
        long within = (pos - block.offset) / chunk.length;
        int length = (int) Math.min(chunk.length, block.length - within * chunk.length);
        RandomAccessFile file = file(index);
        file.seek(within * chunk.length);
        file.readFully(chunk, 0, length);
        byte[] stored = checksums(index);
        int at = (int) within * 4;
        if (stored.length < at + 4) {
            throw new ChecksumException("no checksum for " + block.path + " at " + within * chunk.length, pos);
        }
        crc.reset();
        crc.update(chunk, 0, length);
        if ((int) crc.getValue() != ByteBuffer.wrap(stored, at, 4).getInt()) {
            throw new ChecksumException(block.path + " fails its checksum at byte " + within * chunk.length, pos);
        }
        chunkStart = block.offset + within * chunk.length;
        chunkLength = length;
    }

    private RandomAccessFile file(int index) throws IOException {
        if (files[index] == null) {
            files[index] = new RandomAccessFile(replicas.blocks.get(index).path, "r");
        }
        return files[index];
    }

    private byte[] checksums(int index) throws IOException {
        if (checksums[index] == null) {
            checksums[index] = Files.readAllBytes(Paths.get(replicas.blocks.get(index).checksums));
        }
        return checksums[index];
    }

    @Override
    public synchronized void seek(long target) throws IOException {
        if (target < 0 || target > replicas.length) {
            throw new EOFException("cannot seek to " + target + " in a file of " + replicas.length + " bytes");
        }
        pos = target;
        if (remote != null) {
            remote.seek(target);
        }
    }

    @Override
    public synchronized long getPos() {
        return pos;
    }

    @Override
    public boolean seekToNewSource(long target) {
        return false;
    }

    @Override
    public synchronized int available() {
        return (int) Math.min(Integer.MAX_VALUE, replicas.length - pos);
    }

    @Override
    public synchronized void close() throws IOException {
        closed = true;
        for (RandomAccessFile file : files) {
            if (file != null) {
                file.close();
            }
        }
        if (remote != null) {
            remote.close();
        }
    }
}
