package io.hopshive.spark;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/** A namenode's GETLOCALREPLICAS answer: the block files on this host that hold a whole file. */
final class LocalReplicas {
    /** One block: where it starts in the file, its length, its file and its checksum file. */
    static final class Block {
        final long offset;
        final long length;
        final String path;
        final String checksums;

        Block(long offset, long length, String path, String checksums) {
            this.offset = offset;
            this.length = length;
            this.path = path;
            this.checksums = checksums;
        }
    }

    final long length;
    final int bytesPerChecksum;
    final List<Block> blocks;

    private LocalReplicas(long length, int bytesPerChecksum, List<Block> blocks) {
        this.length = length;
        this.bytesPerChecksum = bytesPerChecksum;
        this.blocks = Collections.unmodifiableList(blocks);
    }

    /**
     * The answer, or null when the file is not all here (the namenode says so) or this
     * process cannot read one of the block files (another OS user's, say).
     */
    static LocalReplicas parse(InputStream answer) throws IOException {
        JsonNode found = new ObjectMapper().readTree(answer).path("LocalReplicas");
        if (!found.isObject()) {
            return null;
        }
        List<Block> blocks = new ArrayList<>();
        for (JsonNode block : found.path("blocks")) {
            Block parsed = new Block(block.path("offset").asLong(), block.path("length").asLong(),
                    block.path("path").asText(), block.path("checksums").asText());
            if (!Files.isReadable(Paths.get(parsed.path)) || !Files.isReadable(Paths.get(parsed.checksums))) {
                return null;
            }
            blocks.add(parsed);
        }
        int bytesPerChecksum = found.path("bytesPerChecksum").asInt(0);
        return bytesPerChecksum > 0 ? new LocalReplicas(found.path("length").asLong(), bytesPerChecksum, blocks) : null;
    }

    /** The index of the block holding byte {@code position} (0 <= position < length). */
    int blockAt(long position) {
        int low = 0;
        int high = blocks.size() - 1;
        while (low < high) {
            int middle = (low + high + 1) >>> 1;
            if (blocks.get(middle).offset <= position) {
                low = middle;
            } else {
                high = middle - 1;
            }
        }
        return low;
    }
}
