package io.hopshive.spark;

import java.io.IOException;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Emptying a table's or partition's directory without deleting it, nor any partition
 * directory ({@code key=value}) below it: in HopsHive, deleting one of those directories
 * deletes the metadata that points to it.
 */
public final class DirectoryContents {
    private DirectoryContents() {
    }

    /** Deletes everything below {@code dir} except partition directories, which are emptied too. */
    public static void clear(FileSystem fs, Path dir) throws IOException {
        for (FileStatus child : fs.listStatus(dir)) {
            if (child.isDirectory() && isPartitionDirectory(child.getPath().getName())) {
                clear(fs, child.getPath());
            } else if (!fs.delete(child.getPath(), true) && fs.exists(child.getPath())) {
                throw new IOException("cannot delete " + child.getPath());
            }
        }
    }

    private static boolean isPartitionDirectory(String name) {
        return name.indexOf('=') > 0 && !name.startsWith("_") && !name.startsWith(".");
    }
}
