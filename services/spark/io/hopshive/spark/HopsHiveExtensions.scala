package io.hopshive.spark

import org.apache.spark.sql.{SparkSessionExtensions, SparkSessionExtensionsProvider}
import org.apache.spark.sql.hopshive.{MapJoinPruning, ScriptTransformGuard, TruncateKeepingDirectories}

/** HopsHive's Spark SQL extensions (`spark.sql.extensions`): TRUNCATE TABLE keeps the
 *  directories Hive metadata points to (see [[TruncateKeepingDirectories]]), and map-join
 *  partition pruning, off unless `spark.hopshive.mapJoinPruning.enabled` (see [[MapJoinPruning]]),
 *  and TRANSFORM refused unless `spark.hopshive.scriptTransform.enabled` (see [[ScriptTransformGuard]]). */
class HopsHiveExtensions extends SparkSessionExtensionsProvider {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    extensions.injectPostHocResolutionRule(_ => TruncateKeepingDirectories)
    extensions.injectPreCBORule(session => MapJoinPruning(session))
    extensions.injectCheckRule(session => ScriptTransformGuard(session))
  }
}
