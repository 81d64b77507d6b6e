package org.apache.spark.sql.hopshive.index

import java.util.concurrent.ConcurrentHashMap

import scala.collection.mutable

import org.apache.spark.TaskContext
import org.apache.spark.unsafe.types.UTF8String

/**
 * The files a build task has read, numbered in the order it met them: the compact and bitmap builds sort
 * rows carrying a file's number instead of its path (a path is most of a row's bytes: the sort
 * spilled at 20M rows), and turns numbers back into files after the sort, in the same task.
 * Forgotten when the task ends.
 */
private[index] class TaskFiles {
  private val paths = mutable.ArrayBuffer.empty[UTF8String]
  private val numbers = mutable.HashMap.empty[UTF8String, Int]
  private var last: UTF8String = _
  private var lastNumber = -1

  /** The number of a file (rows come file by file, so mostly the last one). */
  def number(path: UTF8String): Int = {
    if (last == null || path != last) {
      last = path.copy()
      lastNumber = numbers.getOrElseUpdate(last, { paths += last; paths.length - 1 })
    }
    lastNumber
  }

  def path(number: Int): UTF8String = paths(number)
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
