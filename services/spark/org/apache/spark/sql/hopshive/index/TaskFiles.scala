package org.apache.spark.sql.hopshive.index

import java.net.URI
import java.util.concurrent.ConcurrentHashMap

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, Nondeterministic, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{DataType, IntegerType}
import org.apache.spark.unsafe.types.UTF8String

/**
 * The files a build task has read, numbered in the order it met them: the compact and bitmap builds sort
 * rows carrying a file's number instead of its path (a path is most of a row's bytes: the sort
 * spilled at 20M rows), and turns numbers back into files after the sort, in the same task.
 * Also the row groups of each file, as the footer the task's scan read says
 * ([[RowGroupsParquetFileFormat]]): the handlers do not read a footer again.  The scan and the
 * handlers run in the task's thread.  Forgotten when the task ends.
 */
private[index] class TaskFiles {
  private val paths = mutable.ArrayBuffer.empty[UTF8String]
  private val numbers = mutable.HashMap.empty[UTF8String, Int]
  private var last: UTF8String = _
  private var lastNumber = -1
  private val footers = mutable.HashMap.empty[String, Array[RowGroup]]     // by Path.toString
  private val groups = mutable.ArrayBuffer.empty[FileRowGroups]           // by number, when first asked for

  /** The number of a file (rows come file by file, so mostly the last one). */
  def number(path: UTF8String): Int = {
    if (last == null || path != last) {
      last = path.copy()
      lastNumber = numbers.getOrElseUpdate(last, { paths += last; paths.length - 1 })
    }
    lastNumber
  }

  def path(number: Int): UTF8String = paths(number)

  /** The row groups of (a split of) `file`, from the footer the scan read; None: it did not say. */
  def scanned(file: Path, read: Option[Array[RowGroup]]): Unit = read.foreach { found =>
    val known = footers.getOrElse(file.toString, Array.empty[RowGroup])   // another split's
    footers(file.toString) = (known ++ found.filterNot(g => known.exists(_.offset == g.offset))).sortBy(_.firstRow)
  }

  /** The row groups of file `number`: those its scan read, else (a file Spark's own reader read) from its footer. */
  def rowGroups(number: Int, conf: => Configuration): FileRowGroups = {
    while (groups.length <= number) groups += null
    if (groups(number) == null) {
      val file = new Path(new URI(paths(number).toString))     // `_metadata.file_path` is a URI
      groups(number) = FileRowGroups(UTF8String.fromString(file.toString),
        footers.getOrElse(file.toString, RowGroups.read(conf, file)))
    }
    groups(number)
  }
}

private[index] object TaskFiles {
  private val byTask = new ConcurrentHashMap[Long, TaskFiles]()

  /** The files of the running task. */
  def current(): TaskFiles = {
    val task = TaskContext.get()
    byTask.computeIfAbsent(task.taskAttemptId(), { id =>
      task.addTaskCompletionListener[Unit](_ => byTask.remove(id))
      new TaskFiles
    })
  }
}

/** The number in its task ([[TaskFiles.number]]) of the file a path names (`_metadata.file_path`). */
private[index] case class FileNumber(child: Expression) extends UnaryExpression with Nondeterministic {
  override def dataType: DataType = IntegerType
  override def nullable: Boolean = false
  @transient private var files: TaskFiles = _

  override protected def initializeInternal(partitionIndex: Int): Unit = files = TaskFiles.current()
  override protected def evalInternal(input: InternalRow): Any = files.number(child.eval(input).asInstanceOf[UTF8String])

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val files = ctx.addMutableState(classOf[TaskFiles].getName, "taskFiles", forceInline = true)
    ctx.addPartitionInitializationStatement(s"$files = ${classOf[TaskFiles].getName}.current();")
    val path = child.genCode(ctx)
    ev.copy(code = code"""
      ${path.code}
      final int ${ev.value} = $files.number(${path.value});""", isNull = FalseLiteral)
  }

  override protected def withNewChildInternal(newChild: Expression): FileNumber = copy(child = newChild)
}
