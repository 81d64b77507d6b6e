package io.hopshive.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.OutputCommitter;
import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage;
import org.apache.spark.internal.io.HadoopMapReduceCommitProtocol;
import org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol;

import scala.Tuple2;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark's file commit protocol, changed so that overwriting data never deletes a directory
 * that Hive metadata may point to.
 *
 * <p>In HopsHive a table's, partition's or database's metadata has a foreign key to its
 * directory's inode: deleting the directory deletes the metadata (the thesis's Table 3.1).
 * Spark implements INSERT OVERWRITE by deleting the table or partition directory and writing
 * a new one, which would drop the very table it overwrites.  This protocol replaces the
 * contents instead: files and hidden or non-partition directories go, the directory itself
 * and its partition directories ({@code key=value}) stay, emptied.  The rows a query sees
 * afterwards are the same as with Spark's protocol.
 *
 * <p>Enabled with {@code spark.sql.sources.commitProtocolClass} (the {@code spark} role
 * writes it into spark-defaults.conf).
 */
public class KeepDirectoriesCommitProtocol extends SQLHadoopMapReduceCommitProtocol {
    private static final long serialVersionUID = 1L;

    private final String path;
    private final boolean dynamicPartitionOverwrite;

    public KeepDirectoriesCommitProtocol(String jobId, String path, boolean dynamicPartitionOverwrite) {
        super(jobId, path, dynamicPartitionOverwrite);
        this.path = path;
        this.dynamicPartitionOverwrite = dynamicPartitionOverwrite;
    }

    /** Static INSERT OVERWRITE: empty the table or partition directory instead of deleting it. */
    @Override
    public boolean deleteWithJob(FileSystem fs, Path target, boolean recursive) {
        try {
            if (!fs.getFileStatus(target).isDirectory()) {
                return fs.delete(target, recursive);
            }
            DirectoryContents.clear(fs, target);
            return true;
        } catch (IOException e) {
            throw new UncheckedIOException("emptying " + target + " for an overwrite failed", e);
        }
    }

    /**
     * Dynamic partition overwrite: Spark deletes each written partition's directory and renames
     * the staged one into its place; here the staged files move into the emptied directory.
     */
    @Override
    public void commitJob(JobContext job, Seq<TaskCommitMessage> taskCommits) {
        if (!dynamicPartitionOverwrite) {
            super.commitJob(job, taskCommits);
            return;
        }
        try {
            hadoopCommitter().commitJob(job);  // task output -> the staging directory
            Path staging = stagingDir();
            FileSystem fs = staging.getFileSystem(job.getConfiguration());
            Map<String, String> absoluteFiles = new HashMap<>();
            Set<String> partitions = new LinkedHashSet<>();
            for (TaskCommitMessage message : CollectionConverters.asJava(taskCommits)) {
                @SuppressWarnings("unchecked")
                Tuple2<scala.collection.immutable.Map<String, String>, scala.collection.immutable.Set<String>> files =
                        (Tuple2<scala.collection.immutable.Map<String, String>, scala.collection.immutable.Set<String>>)
                                message.obj();
                absoluteFiles.putAll(CollectionConverters.asJava(files._1()));
                partitions.addAll(CollectionConverters.asJava(files._2()));
            }
            // Partitions with custom locations: their files were staged under absolute names.
            Set<Path> absoluteDirs = new LinkedHashSet<>();
            for (String destination : absoluteFiles.values()) {
                absoluteDirs.add(new Path(destination).getParent());
            }
            for (Path dir : absoluteDirs) {
                replaceable(fs, dir);
            }
            for (Map.Entry<String, String> file : absoluteFiles.entrySet()) {
                rename(fs, new Path(file.getKey()), new Path(file.getValue()));
            }
            for (String partition : partitions) {
                Path target = new Path(path, partition);
                replaceable(fs, target);
                for (FileStatus staged : fs.listStatus(new Path(staging, partition))) {
                    rename(fs, staged.getPath(), new Path(target, staged.getPath().getName()));
                }
            }
            fs.delete(staging, true);
        } catch (IOException e) {
            throw new UncheckedIOException("committing the dynamic partition overwrite of " + path + " failed", e);
        }
    }

    /** An existing directory emptied, or a new one created. */
    private static void replaceable(FileSystem fs, Path dir) throws IOException {
        if (fs.exists(dir)) {
            DirectoryContents.clear(fs, dir);
        } else if (!fs.mkdirs(dir)) {
            throw new IOException("cannot create directory " + dir);
        }
    }

    private static void rename(FileSystem fs, Path source, Path destination) throws IOException {
        if (!fs.rename(source, destination)) {
            throw new IOException("cannot move " + source + " to " + destination);
        }
    }

    /** Spark keeps the job's Hadoop committer private; the dynamic commit needs it. */
    private OutputCommitter hadoopCommitter() {
        try {
            Field field = HadoopMapReduceCommitProtocol.class.getDeclaredField("committer");
            field.setAccessible(true);
            return (OutputCommitter) field.get(this);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("this Spark version's HadoopMapReduceCommitProtocol has no "
                    + "'committer' field; KeepDirectoriesCommitProtocol supports Spark 4.x", e);
        }
    }
}
