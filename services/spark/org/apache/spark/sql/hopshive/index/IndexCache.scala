package org.apache.spark.sql.hopshive.index

/**
 * What queries read from index data, kept in the driver: a version directory is never
 * changed once committed (a rebuild writes a new one), so an entry keyed by the directories
 * it came from stays right until they are dropped.  Small and least-recently-used first out.
 */
object IndexCache {
  private val Capacity = 64
  private val entries = new java.util.LinkedHashMap[String, AnyRef](16, 0.75f, true) {
    override def removeEldestEntry(eldest: java.util.Map.Entry[String, AnyRef]): Boolean = size() > Capacity
  }

  def getOrCompute[T <: AnyRef](key: String)(compute: => T): T = {
    entries.synchronized(Option(entries.get(key))) match {
      case Some(value) => value.asInstanceOf[T]
      case None =>
        val value = compute
        entries.synchronized(entries.put(key, value))
        value
    }
  }

  /** Forget every entry read from any of `dataDirs`. */
  def forget(dataDirs: Seq[String]): Unit = entries.synchronized {
    entries.keySet().removeIf(key => dataDirs.exists(key.contains))
  }
}
